//! Data contracts (DESIGN.md §2 "data contract"): per capability, what its
//! input and its answer must be, and what of the answer a browser may see.
//!
//! One module, one home for the concept:
//!
//! | module | what it holds |
//! |---|---|
//! | [`model`] | the `contract:` block as written in the topology file (rules, untrusted fields) |
//! | [`path`] | a field path of an answer (`groups[].key`) and the schema node it leads to |
//! | [`rules`] | the contract compiled against the response schema: the whitelist tree |
//! | [`schema`] | the compiled JSON Schemas (input and response) and their violations |
//!
//! Everything is compiled once, when the topology loads ([`Contracts::compile`]),
//! with every problem reported at its location in the file; the registry holds
//! the compiled [`Contracts`] next to the topology and swaps both together. The
//! gateway checks inputs and answers with them; `crate::redaction` only
//! applies the compiled rules.

pub mod model;
pub mod path;
pub mod rules;
pub mod schema;

use std::collections::HashMap;
use std::sync::Arc;

use exchange::located::Seg;
use jsonschema::Validator;
use serde_json::Value;

use model::DataContract;
pub use rules::Rules;
pub use schema::{input_grants, SchemaError, SchemaViolation};

/// [`Contract::digest`] of `spec`.
fn terms_digest(spec: &Spec<'_>) -> String {
    let terms = serde_json::json!({
        "response_schema": spec.response_schema,
        "input_schema": spec.input_schema,
        "contract": spec.contract,
    });
    // Every JSON value has a canonical form; a schema read from YAML is one.
    exchange::receipt::digest(&terms).unwrap_or_default()
}

/// One capability's compiled contract: the response schema every answer
/// must satisfy, the input schema a caller's input must satisfy (if any),
/// and the whitelist/redaction rules applied on the way to a browser.
#[derive(Debug)]
pub struct Contract {
    response: Validator,
    input: Option<Validator>,
    /// The input schema as written, for [`Contract::shown_input`].
    input_schema: Option<Value>,
    rules: Rules,
    /// The digest of the terms as written ([`Contract::digest`]).
    digest: String,
}

/// What one capability's entry in the topology file says about its
/// contract: the parts this module compiles (the registry owns the rest of
/// the entry).
#[derive(Debug, Clone, Copy)]
pub struct Spec<'a> {
    /// JSON Schema every answer must satisfy.
    pub response_schema: &'a Value,
    /// JSON Schema a caller's input must satisfy, if any.
    pub input_schema: Option<&'a Value>,
    /// What of an answer may reach a browser, if anything.
    pub contract: Option<&'a DataContract>,
}

/// A problem compiling one capability's contract, located relative to the
/// capability (`response_schema`, `contract.fields.budget`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where, below the capability's own entry.
    pub path: Vec<Seg<'static>>,
    /// What is wrong.
    pub message: String,
}

impl Contract {
    /// A contract of `schema` alone (draft auto-detected, meta-schema
    /// checked): no input schema, the empty whitelist (nothing of an answer
    /// reaches a browser).
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        Ok(Self {
            response: schema::compile("response_schema", schema)?,
            input: None,
            input_schema: None,
            rules: Rules::default(),
            digest: terms_digest(&Spec {
                response_schema: schema,
                input_schema: None,
                contract: None,
            }),
        })
    }

    /// Compiles a capability's schemas and its data contract, reporting
    /// every problem found.
    pub fn for_capability(cap: Spec<'_>) -> Result<Self, Vec<Problem>> {
        let schema_problem = |e: SchemaError| Problem {
            path: vec![Seg::key(e.field)],
            message: e.to_string(),
        };
        let response =
            schema::compile("response_schema", cap.response_schema).map_err(schema_problem);
        let input = cap
            .input_schema
            .map(|s| schema::compile("input_schema", s).map_err(schema_problem))
            .transpose();
        let rules = match cap.contract {
            None => Ok(Rules::default()),
            Some(dc) => Rules::compile(dc, cap.response_schema).map_err(|issues| {
                issues
                    .into_iter()
                    .map(|i| {
                        let mut path = vec![Seg::key("contract")];
                        path.extend(i.path);
                        Problem {
                            path,
                            message: i.message,
                        }
                    })
                    .collect::<Vec<_>>()
            }),
        };
        match (response, input, rules) {
            (Ok(response), Ok(input), Ok(rules)) => Ok(Self {
                response,
                input,
                input_schema: cap.input_schema.cloned(),
                rules,
                digest: terms_digest(&cap),
            }),
            (response, input, rules) => Err(response
                .err()
                .into_iter()
                .chain(input.err())
                .chain(rules.err().into_iter().flatten())
                .collect()),
        }
    }

    /// SHA-256 (hex) of the contract's terms as written: the RFC 8785 form
    /// of `{"response_schema", "input_schema", "contract"}` (the last two
    /// `null` when absent). What a receipt names as the contract a call ran
    /// under: equal terms, equal digest, whichever file they came from.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The whitelist and redaction rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Checks one answer; the first violation found is reported.
    pub fn check(&self, answer: &Value) -> Result<(), SchemaViolation> {
        schema::first_violation(&self.response, answer)
    }

    /// Checks a caller's input against the capability's input schema, if
    /// it has one; the first violation found is reported.
    pub fn check_input(&self, input: &Value) -> Result<(), SchemaViolation> {
        match &self.input {
            None => Ok(()),
            Some(v) => schema::first_violation(v, input),
        }
    }
}

impl Contract {
    /// What of a caller's input an operator's browser may see (the
    /// envelope inspector): only an input inside the input schema, and of
    /// it only the properties the schema names, at every level. No input
    /// schema: nothing.
    pub fn shown_input(&self, input: &Value) -> Option<Value> {
        let schema = self.input_schema.as_ref()?;
        self.check_input(input).ok()?;
        Some(keep_named(schema, input))
    }
}

/// `value` cut down to the properties `schema` names (objects), item by
/// item (arrays); a scalar as it is.
fn keep_named(schema: &Value, value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            Value::Object(
                map.iter()
                    .filter_map(|(k, v)| {
                        props
                            .and_then(|p| p.get(k))
                            .map(|sub| (k.clone(), keep_named(sub, v)))
                    })
                    .collect(),
            )
        }
        Value::Array(items) => {
            let sub = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(items.iter().map(|v| keep_named(sub, v)).collect())
        }
        scalar => scalar.clone(),
    }
}

/// Every capability's contract, compiled, keyed by capability id. Built
/// together with a topology and swapped together with it.
#[derive(Debug, Default, Clone)]
pub struct Contracts {
    by_capability: HashMap<String, Arc<Contract>>,
}

impl Contracts {
    /// Compiles every capability's contract, given as `(id, spec)` in file
    /// order; the error lists every problem with the position of its
    /// capability in that order (the loader turns it into
    /// `capabilities[1].contract.fields.budget`).
    pub fn compile<'a>(
        capabilities: impl IntoIterator<Item = (&'a str, Spec<'a>)>,
    ) -> Result<Self, Vec<(usize, Problem)>> {
        let mut by_capability = HashMap::new();
        let mut errors = Vec::new();
        for (i, (id, spec)) in capabilities.into_iter().enumerate() {
            match Contract::for_capability(spec) {
                Ok(c) => {
                    by_capability.insert(id.to_string(), Arc::new(c));
                }
                Err(problems) => errors.extend(problems.into_iter().map(|p| (i, p))),
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

    /// The contract of a capability, borrowed for as long as this
    /// generation is held.
    pub fn of(&self, capability: &str) -> Option<&Contract> {
        self.by_capability.get(capability).map(|c| &**c)
    }
}

#[cfg(test)]
mod tests;
