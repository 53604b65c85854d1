//! The negotiation message (DESIGN.md §2, "capability"):
//! what a consumer's and a provider's agents send each other, over A2A,
//! while they agree a data contract — and the one validator both sides run
//! on every message they receive.
//!
//! A message is one JSON object with exactly four keys:
//!
//! ```json
//! {"from": "consumer", "intent": "propose",
//!  "scope": {"columns": ["region", "order_value"], "purpose": "average order value by region",
//!            "retention_days": 30},
//!  "rationale": "one sentence"}
//! ```
//!
//! The validator is strict on purpose: a best-effort negotiation can end in
//! a contract nobody agreed to. An extra key, a missing key, a wrong type,
//! an unknown intent, a reply that speaks for the other party
//! (`expect_from`), a column the provider's published schema does not have
//! — each is a [`SchemaError`] that names the key and what is allowed. What
//! a side does with an error (one corrective retry, then a protocol error)
//! is the agent's; what a provider grants is its policy's. Neither is here.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The keys of a message, exactly.
pub const TOP_LEVEL_KEYS: [&str; 4] = ["from", "intent", "scope", "rationale"];
/// The keys of a scope, exactly.
pub const SCOPE_KEYS: [&str; 3] = ["columns", "purpose", "retention_days"];
/// The longest retention anyone may ask for; a provider's policy caps it
/// lower.
pub const MAX_RETENTION_DAYS: u64 = 3650;

/// How a provider's card publishes one negotiable column: a tag
/// `column:<name>` on its negotiation skill (names only, never values).
pub const COLUMN_TAG_PREFIX: &str = "column:";

/// The negotiable schema a card's negotiation skill publishes: the column
/// names in its tags.
pub fn columns_from_tags<'a>(tags: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    tags.into_iter()
        .filter_map(|t| t.strip_prefix(COLUMN_TAG_PREFIX))
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect()
}

/// The negotiable schema of skill `negotiation` on an agent card (JSON, as
/// served): empty when the card has no such skill or it publishes none.
pub fn columns_on_card(card: &Value, negotiation: &str) -> BTreeSet<String> {
    let tags: Vec<String> = card["skills"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == negotiation)
        .and_then(|s| s["tags"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect();
    columns_from_tags(&tags)
}

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Party {
    /// The side that wants the data.
    Consumer,
    /// The side that owns it.
    Provider,
}

impl Party {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Party::Consumer => "consumer",
            Party::Provider => "provider",
        }
    }

    /// The other side.
    pub fn other(self) -> Party {
        match self {
            Party::Consumer => Party::Provider,
            Party::Provider => Party::Consumer,
        }
    }

    const ALL: [Party; 2] = [Party::Consumer, Party::Provider];
}

impl std::fmt::Display for Party {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a message does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// A first scope, from the consumer.
    Propose,
    /// Another scope, in answer to one.
    Counter,
    /// Agreement to the other side's last scope.
    Accept,
    /// No agreement.
    Reject,
    /// Asks the other side for something (its schema, a reason).
    Request,
}

impl Intent {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Propose => "propose",
            Intent::Counter => "counter",
            Intent::Accept => "accept",
            Intent::Reject => "reject",
            Intent::Request => "request",
        }
    }

    const ALL: [Intent; 5] = [
        Intent::Propose,
        Intent::Counter,
        Intent::Accept,
        Intent::Reject,
        Intent::Request,
    ];
}

/// What is being agreed: which columns, for what, for how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// Column names, each once.
    pub columns: Vec<String>,
    /// What the data is for, in the consumer's words.
    pub purpose: String,
    /// How long the consumer may keep what it reads.
    pub retention_days: u64,
}

/// One negotiation message, valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NegotiationMessage {
    /// Who speaks.
    pub from: Party,
    /// What it does.
    pub intent: Intent,
    /// The scope it proposes, counters, accepts or rejects.
    pub scope: Scope,
    /// One sentence why.
    pub rationale: String,
}

/// Why a message is not a valid negotiation message. Each names the key
/// and what is allowed, so a corrective request can quote it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// Not one JSON object.
    #[error("not a single JSON object: {0}")]
    NotAnObject(String),
    /// Keys outside the allowed set.
    #[error("unexpected key(s) {keys:?} in {at}; allowed: {allowed:?}")]
    UnexpectedKeys {
        at: &'static str,
        keys: Vec<String>,
        allowed: Vec<&'static str>,
    },
    /// A key that must be there is not.
    #[error("missing key(s) {keys:?} in {at}; required: {required:?}")]
    MissingKeys {
        at: &'static str,
        keys: Vec<&'static str>,
        required: Vec<&'static str>,
    },
    /// A value of the wrong type or out of range.
    #[error("{key}: expected {expected}, got {got}")]
    WrongType {
        key: &'static str,
        expected: &'static str,
        got: String,
    },
    /// A value outside its set.
    #[error("{key}: {value:?} is not one of {allowed:?}")]
    UnknownValue {
        key: &'static str,
        value: String,
        allowed: Vec<&'static str>,
    },
    /// A reply speaking for the other party.
    #[error(
        "expected \"from\": \"{expected}\", got \"{got}\" (a reply may not speak for the other party)"
    )]
    WrongParty { expected: Party, got: Party },
    /// Columns the provider's published schema does not have.
    #[error("column(s) {unknown:?} are not in the dataset schema {known:?}")]
    UnknownColumns {
        unknown: Vec<String>,
        known: Vec<String>,
    },
}

/// Reads a message that arrived as text: the whole text (trimmed) must be
/// one JSON object — no prose around it, no code fence.
pub fn parse_text(
    text: &str,
    expect_from: Option<Party>,
    known_columns: Option<&BTreeSet<String>>,
) -> Result<NegotiationMessage, SchemaError> {
    let value: Value = serde_json::from_str(text.trim())
        .map_err(|e| SchemaError::NotAnObject(crate::text::clip(&e.to_string(), 120)))?;
    validate(&value, expect_from, known_columns)
}

/// Validates a received message: shape, types, intents, the speaker
/// (`expect_from`: who must have sent it), and the columns against the
/// provider's published schema (`known_columns`).
pub fn validate(
    value: &Value,
    expect_from: Option<Party>,
    known_columns: Option<&BTreeSet<String>>,
) -> Result<NegotiationMessage, SchemaError> {
    let obj = value
        .as_object()
        .ok_or_else(|| SchemaError::NotAnObject(kind_of(value).to_string()))?;
    exact_keys(obj, "the message", &TOP_LEVEL_KEYS)?;
    let from = one_of("from", &obj["from"], &Party::ALL, Party::as_str)?;
    if let Some(expected) = expect_from {
        if from != expected {
            return Err(SchemaError::WrongParty {
                expected,
                got: from,
            });
        }
    }
    let intent = one_of("intent", &obj["intent"], &Intent::ALL, Intent::as_str)?;
    let scope = obj["scope"]
        .as_object()
        .ok_or_else(|| SchemaError::WrongType {
            key: "scope",
            expected: "an object",
            got: kind_of(&obj["scope"]).into(),
        })?;
    exact_keys(scope, "scope", &SCOPE_KEYS)?;
    let columns = string_list("scope.columns", &scope["columns"])?;
    let purpose = non_empty_string("scope.purpose", &scope["purpose"])?;
    // A2A data parts carry numbers as protobuf doubles: 30.0 is 30 days.
    let retention_days = whole_number(&scope["retention_days"])
        .filter(|d| (1..=MAX_RETENTION_DAYS).contains(d))
        .ok_or_else(|| SchemaError::WrongType {
            key: "scope.retention_days",
            expected: "a whole number of days from 1 to 3650",
            got: crate::text::clip(&scope["retention_days"].to_string(), 40),
        })?;
    let rationale = non_empty_string("rationale", &obj["rationale"])?;
    if let Some(known) = known_columns {
        let unknown: Vec<String> = columns
            .iter()
            .filter(|c| !known.contains(*c))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(SchemaError::UnknownColumns {
                unknown,
                known: known.iter().cloned().collect(),
            });
        }
    }
    Ok(NegotiationMessage {
        from,
        intent,
        scope: Scope {
            columns,
            purpose,
            retention_days,
        },
        rationale,
    })
}

/// A whole, non-negative number, written as an integer or as a double
/// without a fraction.
fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0 && *f < 1.0e15)
            .map(|f| f as u64)
    })
}

fn exact_keys(
    obj: &Map<String, Value>,
    at: &'static str,
    allowed: &[&'static str],
) -> Result<(), SchemaError> {
    let mut extra: Vec<String> = obj
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .cloned()
        .collect();
    if !extra.is_empty() {
        extra.sort();
        return Err(SchemaError::UnexpectedKeys {
            at,
            keys: extra,
            allowed: allowed.to_vec(),
        });
    }
    let missing: Vec<&'static str> = allowed
        .iter()
        .filter(|k| !obj.contains_key(**k))
        .copied()
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(SchemaError::MissingKeys {
            at,
            keys: missing,
            required: allowed.to_vec(),
        })
    }
}

fn one_of<T: Copy>(
    key: &'static str,
    value: &Value,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, SchemaError> {
    let allowed: Vec<&'static str> = all.iter().map(|t| name(*t)).collect();
    let Some(s) = value.as_str() else {
        return Err(SchemaError::WrongType {
            key,
            expected: "a string",
            got: kind_of(value).into(),
        });
    };
    all.iter()
        .copied()
        .find(|t| name(*t) == s)
        .ok_or_else(|| SchemaError::UnknownValue {
            key,
            value: crate::text::clip(s, 40),
            allowed,
        })
}

fn string_list(key: &'static str, value: &Value) -> Result<Vec<String>, SchemaError> {
    let wrong = || SchemaError::WrongType {
        key,
        expected: "a non-empty list of distinct column names",
        got: crate::text::clip(&value.to_string(), 80),
    };
    let list = value
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(wrong)?;
    let mut out: Vec<String> = Vec::with_capacity(list.len());
    for item in list {
        let s = item.as_str().filter(|s| !s.is_empty()).ok_or_else(wrong)?;
        if out.iter().any(|c| c == s) {
            return Err(wrong());
        }
        out.push(s.to_string());
    }
    Ok(out)
}

fn non_empty_string(key: &'static str, value: &Value) -> Result<String, SchemaError> {
    value
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| SchemaError::WrongType {
            key,
            expected: "a non-empty string",
            got: kind_of(value).into(),
        })
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
#[path = "negotiation_tests.rs"]
mod tests;
