//! The contract field paths of the topology file (`contract::path`): the
//! input is a path (`groups[].key`), parsed and located in a response
//! schema like the topology's `orders.query` one.
//!
//! Properties beyond "no panic":
//! - a refusal of `parse` starts with the path (clipped to 80 characters)
//!   in backquotes, one of `locate` with the path as given;
//! - a parsed path is not empty, starts with a property, and renders back
//!   to exactly the input (`Prop` names joined by `.`, `[]` per `Items`:
//!   the grammar `parse` documents);
//! - `locate` succeeds only on a path `parse` accepts, with the same steps.

use hub::contract::path::{locate, parse, Step};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::{json, Value};
use std::sync::OnceLock;

use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "contract_path",
    run,
    generate,
    dictionary: &[
        "[]", ".", "groups", "key", "value", "-", "_", "[", "]", "..", "`", "é",
    ],
    repo_seeds: &[],
};

/// A response schema with nested objects and arrays (the shape of
/// `orders.query`'s in config/topology.yaml, and of a typed union).
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        json!({
            "type": "object",
            "properties": {
                "table": {"type": "string"},
                "row_count": {"type": "integer"},
                "aggregate": {"type": "object", "properties": {
                    "op": {"type": "string"}, "column": {"type": ["string", "null"]}}},
                "groups": {"type": "array", "items": {"type": "object", "properties": {
                    "key": {"type": ["string", "number", "null"]},
                    "value": {"type": "number"},
                    "count": {"type": "integer"}}}},
                "matrix": {"type": ["array", "null"], "items": {"type": "array",
                    "items": {"type": "object", "properties": {"x-1_y": {"type": "number"}}}}},
                "broken": {"type": "array", "items": true}
            }
        })
    })
}

fn render(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Prop(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Step::Items => out.push_str("[]"),
        }
    }
    out
}

/// `message` is not empty and starts with `quoted` path in backquotes.
fn refusal_ok(quoted: &str, message: &str, what: &str) -> Result<(), Broken> {
    let quoted = format!("`{quoted}`");
    if message.trim().is_empty() || !message.starts_with(&quoted) {
        return Err(format!(
            "{what} refusal {message:?} does not start with {quoted:?}"
        ));
    }
    Ok(())
}

fn run(input: &[u8]) -> Result<Class, Broken> {
    let path = match super::text(input) {
        Ok(text) => text,
        Err(class) => return Ok(class),
    };
    let parsed = parse(path);
    let located = locate(schema(), path);
    match (&parsed, &located) {
        (Err(e), Err(l)) => {
            refusal_ok(&exchange::text::clip(path, 80), e, "parse")?;
            if e != l {
                return Err(format!(
                    "locate refused {path:?} otherwise than parse: {l:?}"
                ));
            }
            Ok("not a path".into())
        }
        (Err(e), Ok(_)) => Err(format!("locate accepted {path:?}, parse refused it: {e}")),
        (Ok(steps), located) => {
            if !matches!(steps.first(), Some(Step::Prop(_))) {
                return Err(format!("{path:?} parsed to {steps:?}"));
            }
            let again = render(steps);
            if again != path {
                return Err(format!(
                    "{path:?} parsed to {steps:?}, which renders as {again:?}"
                ));
            }
            match located {
                Ok((same, _)) if same != steps => Err(format!(
                    "locate read {path:?} as {same:?}, parse as {steps:?}"
                )),
                Ok(_) => Ok("located".into()),
                Err(l) => {
                    refusal_ok(path, l, "locate")?;
                    Ok(format!(
                        "not in the schema: {}",
                        crate::first_words(l.rsplit(':').next().unwrap_or(""), 3)
                    ))
                }
            }
        }
    }
}

/// Paths of names that exist in the schema, and of near-names.
fn generate(_seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    let name = prop_oneof![
        4 => proptest::sample::select(vec!["groups", "key", "value", "count", "aggregate", "op",
            "column", "table", "row_count", "matrix", "x-1_y", "broken", "items", "properties"])
            .prop_map(str::to_string),
        1 => "[a-zA-Z0-9_-]{0,6}",
        1 => any::<String>(),
    ];
    let part = (name, 0usize..3).prop_map(|(n, arrays)| format!("{n}{}", "[]".repeat(arrays)));
    proptest::collection::vec(part, 0..5)
        .prop_map(|parts| parts.join(".").into_bytes())
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_real_paths() {
        assert_eq!(run(b"groups[].key"), Ok("located".to_string()));
        assert_eq!(run(b"a..b"), Ok("not a path".to_string()));
        assert!(run(b"groups[].nope").is_ok_and(|c| c.starts_with("not in the schema")));
        assert!(run(b"table[]").is_ok_and(|c| c.starts_with("not in the schema")));
    }
}
