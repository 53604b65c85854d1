//! The built-in skills a reference peer can provide: the aggregate query
//! over its own table ([`query`], the `table_query` data-share), budget
//! consults ([`budget`]), ticket classification ([`tickets`]) and ticket
//! triage, the task-style skill ([`triage`]: what the task decides; the
//! executor runs its lifecycle).
//!
//! Deterministic rules, no LLM (DESIGN.md §5: the default deployment has
//! none), so every answer can be checked against the data. A skill never
//! writes: cross-system calls are read-only (DESIGN.md §1 rule 3); a consult
//! may only *propose* actions. A read of the dataset always goes through
//! the contract gate first ([`crate::contracts::read`]).

pub mod budget;
pub mod query;
pub mod tickets;
pub mod triage;

use serde_json::{Map, Value};

/// What a skill answered: the result (the capability's contract) and a
/// one-line rendering for generic A2A clients.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillOutput {
    /// The capability's result (its contract).
    pub result: Value,
    /// One line for generic A2A clients.
    pub text: String,
}

/// Why a skill did not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SkillError {
    /// The caller's input is wrong. `message` goes back to the caller and
    /// names exactly what is wrong; `code` is a payload-free label safe for
    /// the audit trail.
    #[error("{message}")]
    InvalidParams {
        /// For the caller: names the field and value.
        message: String,
        /// For the trail: a fixed label such as `unknown_column`.
        code: &'static str,
    },
    /// The peer itself failed (store error). Logged, not detailed to callers.
    #[error("internal: {0}")]
    Internal(String),
}

impl SkillError {
    /// Shorthand for a caller error.
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        SkillError::InvalidParams {
            message: message.into(),
            code,
        }
    }
}

impl From<sqlx::Error> for SkillError {
    fn from(e: sqlx::Error) -> Self {
        SkillError::Internal(e.to_string())
    }
}

/// The input as an object whose keys are all in `allowed`: an unknown key
/// is a caller mistake worth naming (a typo would otherwise be ignored).
pub fn object_with<'v>(
    input: &'v Value,
    allowed: &[&str],
) -> Result<&'v Map<String, Value>, SkillError> {
    let obj = input.as_object().ok_or_else(|| {
        SkillError::invalid(
            "input_not_object",
            format!(
                "input must be a JSON object with fields: {}",
                allowed.join(", ")
            ),
        )
    })?;
    if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(SkillError::invalid(
            "unknown_field",
            format!("unknown field {k:?}; known fields: {}", allowed.join(", ")),
        ));
    }
    Ok(obj)
}

/// An optional string field; present but not a string is an error naming it.
pub fn opt_str<'v>(
    obj: &'v Map<String, Value>,
    field: &str,
) -> Result<Option<&'v str>, SkillError> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(other) => Err(SkillError::invalid(
            "wrong_type",
            format!("field `{field}` must be a string, got {}", json_type(other)),
        )),
    }
}

pub use exchange::text::json_type;

/// Rounds to cents: every number a skill reports has two decimals at most.
pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// A JSON number from an f64 (null for the impossible NaN/inf).
pub fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// `1234567.5` → `1,234,567.50`: numbers in answer sentences.
pub fn money(v: f64) -> String {
    let neg = v < 0.0;
    let cents = (v.abs() * 100.0).round() as u64;
    let (whole, frac) = (cents / 100, cents % 100);
    let digits = whole.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{}{out}.{frac:02}", if neg { "-" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_formats_thousands() {
        assert_eq!(money(1234567.5), "1,234,567.50");
        assert_eq!(money(0.0), "0.00");
        assert_eq!(money(-1000.0), "-1,000.00");
        assert_eq!(money(999.999), "1,000.00");
    }
}
