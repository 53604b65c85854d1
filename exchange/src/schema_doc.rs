//! A configuration file's reference page, written from its JSON Schema.
//!
//! The hub's topology file and the reference peer's config each have a
//! schema generated from the types their loaders read (`hub schema`,
//! `peer schema`). [`markdown`] turns such a schema into the page the
//! manual prints: one section for the file's top level and one per named
//! type (`$defs`), each a table of fields — name, type, whether it is
//! required or its default, and the type's own documentation. So the
//! reference says what the loader accepts, and a test keeps the published
//! page equal to what the code writes.
//!
//! Only the schema forms the generated schemas use are read: objects with
//! `properties`, `$ref`, arrays, maps (`additionalProperties`), nullable
//! values (`anyOf` with `null`, or a `type` list), enums (`enum`, or
//! `oneOf` of `const`s with descriptions), and other `oneOf`s as
//! alternatives.

use serde_json::Value;

/// The reference page of the file whose schema is `schema`: `title` as its
/// heading, `intro` (Markdown) under it, then the top level and every
/// named type in alphabetical order.
pub fn markdown(schema: &Value, title: &str, intro: &str) -> String {
    let mut out = format!("# {title}\n\n{}\n\n", intro.trim());
    out.push_str(&section("The top level", schema));
    if let Some(defs) = schema.get("$defs").and_then(Value::as_object) {
        let mut names: Vec<&String> = defs.keys().collect();
        names.sort();
        for name in names {
            out.push_str(&section(&format!("`{name}`"), &defs[name.as_str()]));
        }
    }
    out
}

/// One type's section: its documentation, then its fields or its forms.
fn section(heading: &str, schema: &Value) -> String {
    let mut out = format!("## {heading}\n\n");
    if let Some(text) = schema.get("description").and_then(Value::as_str) {
        out.push_str(&paragraph(text));
        out.push_str("\n\n");
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        out.push_str("| field | type | required / default | what it is |\n|---|---|---|---|\n");
        for (name, field) in props {
            let need = if required.contains(&name.as_str()) {
                "required".to_string()
            } else {
                match field.get("default") {
                    Some(d) => format!("default `{}`", cell(&d.to_string())),
                    None => "optional".to_string(),
                }
            };
            let text = field
                .get("description")
                .and_then(Value::as_str)
                .map(|t| cell(&paragraph(t)))
                .unwrap_or_default();
            out.push_str(&format!(
                "| `{name}` | {} | {need} | {text} |\n",
                cell(&type_of(field))
            ));
        }
        if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
            out.push_str("\nNo other field is accepted.\n");
        }
    } else if let Some(forms) = forms(schema) {
        out.push_str("One of:\n\n");
        for (form, text) in forms {
            match text {
                Some(text) => out.push_str(&format!("- {form}: {}\n", paragraph(&text))),
                None => out.push_str(&format!("- {form}\n")),
            }
        }
    } else {
        out.push_str(&format!("A {}.\n", type_of(schema)));
    }
    out.push('\n');
    out
}

/// The forms of an enum or a `oneOf`, each with its documentation.
fn forms(schema: &Value) -> Option<Vec<(String, Option<String>)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.iter().map(|v| (format!("`{v}`"), None)).collect());
    }
    let alternatives = schema.get("oneOf").and_then(Value::as_array)?;
    let mut out = Vec::new();
    for alt in alternatives {
        let text = alt
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string);
        match (alt.get("const"), alt.get("enum").and_then(Value::as_array)) {
            (Some(c), _) => out.push((format!("`{c}`"), text)),
            (None, Some(values)) => {
                for v in values {
                    out.push((format!("`{v}`"), text.clone()));
                }
            }
            (None, None) => out.push((type_of(alt), text)),
        }
    }
    Some(out)
}

/// A field's type in words, a named type as a link to its section.
fn type_of(schema: &Value) -> String {
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        return format!("[`{name}`](#{})", name.to_ascii_lowercase());
    }
    if let Some(alts) = schema.get("anyOf").and_then(Value::as_array) {
        let (nulls, others): (Vec<&Value>, Vec<&Value>) = alts
            .iter()
            .partition(|a| a.get("type").and_then(Value::as_str) == Some("null"));
        let words: Vec<String> = others.iter().map(|a| type_of(a)).collect();
        let words = words.join(" or ");
        return if nulls.is_empty() {
            words
        } else {
            format!("{words}, or null")
        };
    }
    if schema.get("oneOf").is_some() || schema.get("enum").is_some() {
        if let Some(forms) = forms(schema) {
            let names: Vec<String> = forms.into_iter().map(|(f, _)| f).collect();
            return format!("one of {}", names.join(", "));
        }
    }
    if let Some(c) = schema.get("const") {
        return format!("`{c}`");
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let nullable = types.contains(&"null");
    let base = types.iter().find(|t| **t != "null").copied();
    let word = match base {
        Some("array") => format!(
            "list of {}",
            schema.get("items").map_or("values".to_string(), type_of)
        ),
        Some("object") => match schema.get("additionalProperties") {
            Some(v @ Value::Object(_)) => format!("map of name to {}", type_of(v)),
            _ => "object".to_string(),
        },
        Some("integer") => match (
            schema.get("minimum").and_then(Value::as_i64),
            schema.get("maximum").and_then(Value::as_i64),
        ) {
            (Some(lo), Some(hi)) => format!("integer {lo}..={hi}"),
            (Some(0), None) => "integer ≥ 0".to_string(),
            _ => "integer".to_string(),
        },
        Some(other) => other.to_string(),
        None => "any value".to_string(),
    };
    if nullable {
        format!("{word}, or null")
    } else {
        word
    }
}

/// Documentation text as one paragraph: lines joined, blank lines kept as
/// a space.
fn paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text fit for a table cell: no pipe breaks the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_becomes_sections_of_fields_and_forms() {
        let schema = json!({
            "title": "T",
            "type": "object",
            "additionalProperties": false,
            "required": ["systems"],
            "properties": {
                "systems": {"type": "array", "items": {"$ref": "#/$defs/System"},
                            "description": "Every\nsystem."},
                "limit": {"anyOf": [{"$ref": "#/$defs/Limit"}, {"type": "null"}]},
                "port": {"type": "integer", "minimum": 0, "default": 80},
                "cards": {"$ref": "#/$defs/Cards", "default": "listed"},
            },
            "$defs": {
                "System": {"type": "object", "properties": {"id": {"type": "string"}},
                           "required": ["id"], "description": "One | system."},
                "Limit": {"type": "object", "properties": {}},
                "Cards": {"oneOf": [
                    {"const": "listed", "type": "string", "description": "Public."},
                    {"const": "hidden", "type": "string"},
                ]},
            },
        });
        let page = markdown(&schema, "The file", "Intro.");
        assert!(page.starts_with("# The file\n\nIntro.\n\n## The top level\n"));
        assert!(
            page.contains("| `systems` | list of [`System`](#system) | required | Every system. |")
        );
        assert!(page.contains("| `limit` | [`Limit`](#limit), or null | optional |  |"));
        assert!(page.contains("| `port` | integer ≥ 0 | default `80` |"));
        assert!(page.contains("| `cards` | [`Cards`](#cards) | default `\"listed\"` |"));
        assert!(page.contains("No other field is accepted."));
        assert!(page.contains("## `System`\n\nOne | system.\n"));
        assert!(page.contains("- `\"listed\"`: Public.\n- `\"hidden\"`\n"));
        // Named types follow the top level in alphabetical order.
        let at = |s: &str| page.find(s).expect(s);
        assert!(at("## `Cards`") < at("## `Limit`") && at("## `Limit`") < at("## `System`"));
    }
}
