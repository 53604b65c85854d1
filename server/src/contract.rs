//! Response contracts: the JSON Schema every answer of a capability must
//! satisfy (DESIGN.md §2, "data contract").
//!
//! Schemas come from the topology file and are compiled once per load, so a
//! call pays only for validation. A violation is reported as the JSON
//! pointer of the failing value and the schema keyword it broke, never the
//! value itself: the detail ends up in audit trails, which hold no payload.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, Validator};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

use crate::redaction::Rules;
use crate::registry::model::{Capability, Topology};

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

/// One capability's compiled contract: the response schema every answer
/// must satisfy, and the whitelist/redaction rules applied on the way to a
/// browser (`crate::redaction`).
#[derive(Debug)]
pub struct Contract {
    validator: Validator,
    input: Option<Validator>,
    rules: Rules,
}

impl Contract {
    /// Compiles `schema` (draft auto-detected, meta-schema checked), so an
    /// invalid schema is caught when the topology loads, not at call time.
    /// The whitelist is empty: nothing of an answer reaches a browser.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        jsonschema::validator_for(schema)
            .map(|validator| Self {
                validator,
                input: None,
                rules: Rules::default(),
            })
            .map_err(|e| schema_error("response_schema", e))
    }

    /// Compiles a capability's schema and its data contract. A contract
    /// that does not compile is reported by the topology loader
    /// (`registry::data_contract::check`), which then rejects the file; here
    /// it falls back to the empty whitelist, never to "pass everything".
    pub fn for_capability(cap: &Capability) -> Result<Self, SchemaError> {
        let mut c = Self::compile(&cap.response_schema)?;
        if let Some(input) = &cap.input_schema {
            c.input = Some(
                jsonschema::validator_for(input).map_err(|e| schema_error("input_schema", e))?,
            );
        }
        if let Some(dc) = &cap.contract {
            c.rules = Rules::compile(dc, &cap.response_schema).unwrap_or_default();
        }
        Ok(c)
    }

    /// The whitelist and redaction rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Checks one answer; the first violation found is reported.
    pub fn check(&self, answer: &Value) -> Result<(), SchemaViolation> {
        first_violation(&self.validator, answer)
    }

    /// Checks a caller's input against the capability's input schema, if
    /// it has one; the first violation found is reported.
    pub fn check_input(&self, input: &Value) -> Result<(), SchemaViolation> {
        match &self.input {
            None => Ok(()),
            Some(v) => first_violation(v, input),
        }
    }
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
fn first_violation(validator: &Validator, value: &Value) -> Result<(), SchemaViolation> {
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

/// Every capability's contract, compiled, keyed by capability id. Built
/// together with a topology and swapped together with it.
#[derive(Debug, Default, Clone)]
pub struct Contracts {
    by_capability: HashMap<String, Arc<Contract>>,
}

impl Contracts {
    /// Compiles every capability's schema; the error lists each capability
    /// index whose schema failed, so the loader can point at its line.
    pub fn compile(topology: &Topology) -> Result<Self, Vec<(usize, SchemaError)>> {
        let mut by_capability = HashMap::new();
        let mut errors = Vec::new();
        for (i, cap) in topology.capabilities.iter().enumerate() {
            match Contract::for_capability(cap) {
                Ok(c) => {
                    by_capability.insert(cap.id.clone(), Arc::new(c));
                }
                Err(e) => errors.push((i, e)),
            }
        }
        if errors.is_empty() {
            Ok(Self { by_capability })
        } else {
            Err(errors)
        }
    }

    /// The contract of `capability`, if it exists.
    pub fn get(&self, capability: &str) -> Option<Arc<Contract>> {
        self.by_capability.get(capability).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract() -> Contract {
        Contract::compile(&json!({
            "type": "object",
            "required": ["groups"],
            "properties": {"groups": {"type": "array", "items": {
                "type": "object", "properties": {"count": {"type": "integer"}}}}}
        }))
        .expect("schema compiles")
    }

    #[test]
    fn violation_names_the_pointer_and_not_the_value() {
        let err = contract()
            .check(&json!({"groups": [{"count": 1}, {"count": "secret-ish"}]}))
            .expect_err("must fail");
        assert_eq!(err.pointer, "/groups/1/count");
        assert_eq!(err.keyword, "type");
        assert!(!err.to_string().contains("secret-ish"), "{err}");
    }

    #[test]
    fn missing_field_is_reported_at_the_root() {
        let err = contract().check(&json!({})).expect_err("must fail");
        assert_eq!(err.pointer, "/");
        assert_eq!(err.keyword, "required");
        assert!(err.problem.contains("groups"));
    }

    #[test]
    fn input_grants_list_the_string_enums_by_path() {
        let schema = json!({"type": "object", "properties": {
            "aggregate": {"properties": {"column": {"enum": ["order_value", "*", null]}}},
            "group_by": {"enum": ["region", "product", null]},
            "filters": {"type": "array", "items": {"properties": {"column": {"enum": ["region"]}}}}
        }});
        let mut grants = input_grants(&schema);
        grants.sort();
        assert_eq!(
            grants,
            vec![
                ("aggregate.column".into(), vec!["order_value".into()]),
                ("filters[].column".into(), vec!["region".into()]),
                ("group_by".into(), vec!["region".into(), "product".into()]),
            ]
        );
        assert!(input_grants(&json!({"type": "object"})).is_empty());
    }

    #[test]
    fn valid_answer_passes_and_bad_schema_is_refused() {
        assert!(contract().check(&json!({"groups": []})).is_ok());
        assert!(Contract::compile(&json!({"type": "no-such-type"})).is_err());
    }
}
