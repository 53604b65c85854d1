//! A field path of a data contract (DESIGN.md §2 "data contract"): the
//! one type for "which field of an answer" — `groups[].key` is the property
//! `groups`, then its array's items, then their property `key`.
//!
//! Paths are written as dot paths in the topology file; [`parse`] reads
//! them and [`locate`] finds the schema node one leads to, with a message
//! naming the first step that does not exist. (A *location in the file*,
//! where an error is reported, is another thing: `exchange::located::Seg`.)

use serde_json::Value;

use exchange::text::clip;

/// One step of a contract path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Into the property of this name.
    Prop(String),
    /// Into the items of an array (`[]`).
    Items,
}

/// Parses `groups[].key` into steps.
pub fn parse(path: &str) -> Result<Vec<Step>, String> {
    let bad = || {
        format!(
            "`{}` is not a field path: names of a-z, A-Z, 0-9, `_`, `-` joined by `.`, with `[]` after an array (`groups[].key`)",
            clip(path, 80)
        )
    };
    if path.is_empty() {
        return Err(bad());
    }
    let mut steps = Vec::new();
    for part in path.split('.') {
        let mut name = part;
        let mut arrays = 0;
        while let Some(rest) = name.strip_suffix("[]") {
            name = rest;
            arrays += 1;
        }
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(bad());
        }
        steps.push(Step::Prop(name.to_string()));
        steps.extend(std::iter::repeat_n(Step::Items, arrays));
    }
    Ok(steps)
}

/// `path` parsed and found in `schema`: its steps and the schema node it
/// leads to (through `properties` and array `items`).
pub fn locate<'s>(schema: &'s Value, path: &str) -> Result<(Vec<Step>, &'s Value), String> {
    let steps = parse(path)?;
    let node = resolve(schema, &steps, path)?;
    Ok((steps, node))
}

fn resolve<'s>(schema: &'s Value, steps: &[Step], shown: &str) -> Result<&'s Value, String> {
    let mut node = schema;
    let mut so_far = String::new();
    for step in steps {
        match step {
            Step::Prop(name) => {
                let next = node.get("properties").and_then(|p| p.get(name.as_str()));
                let Some(next) = next else {
                    let under = if so_far.is_empty() {
                        "the response".to_string()
                    } else {
                        format!("`{so_far}`")
                    };
                    return Err(format!(
                        "`{shown}` is not in the response schema: {under} has no property `{name}`"
                    ));
                };
                if !so_far.is_empty() {
                    so_far.push('.');
                }
                so_far.push_str(name);
                node = next;
            }
            Step::Items => {
                let is_array = match node.get("type") {
                    Some(Value::String(t)) => t == "array",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                    _ => false,
                };
                let Some(items) = node.get("items").filter(|i| is_array && i.is_object()) else {
                    return Err(format!(
                        "`{shown}` is not in the response schema: `{so_far}` is not an array with `items`"
                    ));
                };
                so_far.push_str("[]");
                node = items;
            }
        }
    }
    Ok(node)
}
