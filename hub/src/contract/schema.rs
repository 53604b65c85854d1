//! JSON Schema in a contract (DESIGN.md §2 "data contract"): the schemas a
//! capability's input and answer must satisfy.
//!
//! Schemas are compiled once per topology load, so a call pays only for
//! validation. A violation is reported as the JSON pointer of the failing
//! value and the schema keyword it broke, never the value itself: the
//! detail ends up in audit trails, which hold no payload.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, Validator};
use serde_json::Value;

/// A schema that does not compile (reported by the topology loader).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid JSON Schema at {schema_pointer}: {message}")]
pub struct SchemaError {
    /// Which schema of the capability: `response_schema` or `input_schema`.
    pub field: &'static str,
    /// Where in the schema the problem is (JSON pointer, `/` for the root).
    pub schema_pointer: String,
    /// What is wrong.
    pub message: String,
}

/// How an answer broke its contract: enough for an operator to find the
/// field, nothing of the answer's data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("answer breaks the contract at {pointer}: {problem}")]
pub struct SchemaViolation {
    /// JSON pointer of the failing value in the answer (`/` for the root).
    pub pointer: String,
    /// The schema keyword that failed (`type`, `required`, `enum`, ...).
    pub keyword: String,
    /// A payload-free description of the failure.
    pub problem: String,
}

/// Compiles one schema of a capability (`field` says which, for messages).
pub fn compile(field: &'static str, schema: &Value) -> Result<Validator, SchemaError> {
    jsonschema::validator_for(schema).map_err(|e| schema_error(field, e))
}

fn schema_error(field: &'static str, e: jsonschema::ValidationError<'_>) -> SchemaError {
    SchemaError {
        field,
        schema_pointer: pointer_or_root(e.instance_path.as_str()),
        message: e.to_string(),
    }
}

/// The first way `value` breaks `validator`, payload-free: an enum names
/// the schema's options (the contract's words), never the value.
pub fn first_violation(validator: &Validator, value: &Value) -> Result<(), SchemaViolation> {
    // Every call checks at least two values: `is_valid` builds no error
    // objects, so a value that passes (nearly every one) costs less.
    if validator.is_valid(value) {
        return Ok(());
    }
    match validator.iter_errors(value).next() {
        None => Ok(()),
        Some(err) => {
            let keyword = err
                .schema_path
                .as_str()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
            let problem = match &err.kind {
                ValidationErrorKind::Required { property } => {
                    format!("missing required property {property}")
                }
                ValidationErrorKind::Type { kind } => {
                    let expected = match kind {
                        TypeKind::Single(t) => t.to_string(),
                        TypeKind::Multiple(set) => format!("{set:?}"),
                    };
                    format!(
                        "expected {expected}, got {}",
                        JsonType::from(err.instance.as_ref())
                    )
                }
                ValidationErrorKind::Enum { options } => {
                    format!("not one of the allowed values {options}")
                }
                _ => format!("fails `{keyword}`"),
            };
            Err(SchemaViolation {
                pointer: pointer_or_root(err.instance_path.as_str()),
                keyword,
                problem,
            })
        }
    }
}

/// The string enums of an input schema, by dot path (`group_by`,
/// `aggregate.column`, `filters[].column`): what a caller may name. Only
/// `properties` and array `items` are followed; `null` and `*` are left
/// out (they name no column).
pub fn input_grants(schema: &Value) -> Vec<(String, Vec<String>)> {
    fn walk(node: &Value, path: String, out: &mut Vec<(String, Vec<String>)>) {
        if let Some(values) = node.get("enum").and_then(Value::as_array) {
            let allowed: Vec<String> = values
                .iter()
                .filter_map(Value::as_str)
                .filter(|v| *v != "*")
                .map(str::to_string)
                .collect();
            if !allowed.is_empty() && !path.is_empty() {
                out.push((path.clone(), allowed));
            }
        }
        if let Some(props) = node.get("properties").and_then(Value::as_object) {
            for (name, sub) in props {
                let p = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                walk(sub, p, out);
            }
        }
        if let Some(items) = node.get("items") {
            walk(items, format!("{path}[]"), out);
        }
    }
    let mut out = Vec::new();
    walk(schema, String::new(), &mut out);
    out
}

fn pointer_or_root(p: &str) -> String {
    if p.is_empty() {
        "/".to_string()
    } else {
        p.to_string()
    }
}
