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
mod tests {
    use super::*;
    use serde_json::json;

    fn known() -> BTreeSet<String> {
        [
            "region",
            "order_date",
            "order_value",
            "order_id",
            "customer_email",
        ]
        .map(String::from)
        .into()
    }

    fn good() -> Value {
        json!({"from": "consumer", "intent": "propose",
               "scope": {"columns": ["region", "order_date", "order_value", "order_id"],
                         "purpose": "average order value by region for Q3", "retention_days": 30},
               "rationale": "The question needs region, date and value."})
    }

    fn with(path: &[&str], v: Option<Value>) -> Value {
        let mut m = good();
        let (last, parents) = path.split_last().expect("a path");
        let mut at = &mut m;
        for p in parents {
            at = &mut at[*p];
        }
        match v {
            Some(v) => at[*last] = v,
            None => {
                at.as_object_mut().expect("object").remove(*last);
            }
        }
        m
    }

    #[test]
    fn a_valid_message_reads_and_round_trips() {
        let m = validate(&good(), Some(Party::Consumer), Some(&known())).expect("valid");
        assert_eq!((m.from, m.intent), (Party::Consumer, Intent::Propose));
        assert_eq!(m.scope.retention_days, 30);
        let back = serde_json::to_value(&m).expect("serialises");
        assert_eq!(back, good());
        assert_eq!(
            parse_text(&format!("  {}\n", good()), None, None).expect("text"),
            m
        );
        // An A2A data part carries 30 as the double 30.0; 30.5 is no count
        // of days.
        let mut doubled = good();
        doubled["scope"]["retention_days"] = serde_json::json!(30.0);
        assert_eq!(
            validate(&doubled, None, None)
                .expect("30.0")
                .scope
                .retention_days,
            30
        );
        doubled["scope"]["retention_days"] = serde_json::json!(30.5);
        assert!(validate(&doubled, None, None).is_err());
    }

    #[test]
    fn every_departure_from_the_schema_names_the_key_and_the_allowed_set() {
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "extra key",
                with(&["urgency"], Some(json!("high"))),
                r#"unexpected key(s) ["urgency"] in the message; allowed: ["from", "intent", "scope", "rationale"]"#,
            ),
            (
                "missing key",
                with(&["rationale"], None),
                r#"missing key(s) ["rationale"] in the message; required: ["from", "intent", "scope", "rationale"]"#,
            ),
            (
                "extra scope key",
                with(&["scope", "rows"], Some(json!(10))),
                r#"unexpected key(s) ["rows"] in scope; allowed: ["columns", "purpose", "retention_days"]"#,
            ),
            (
                "missing scope key",
                with(&["scope", "purpose"], None),
                r#"missing key(s) ["purpose"] in scope; required: ["columns", "purpose", "retention_days"]"#,
            ),
            (
                "unknown intent",
                with(&["intent"], Some(json!("demand"))),
                r#"intent: "demand" is not one of ["propose", "counter", "accept", "reject", "request"]"#,
            ),
            (
                "unknown party",
                with(&["from"], Some(json!("buyer"))),
                r#"from: "buyer" is not one of ["consumer", "provider"]"#,
            ),
            (
                "intent not a string",
                with(&["intent"], Some(json!(1))),
                "intent: expected a string, got a number",
            ),
            (
                "scope not an object",
                with(&["scope"], Some(json!([]))),
                "scope: expected an object, got a list",
            ),
            (
                "empty columns",
                with(&["scope", "columns"], Some(json!([]))),
                "scope.columns: expected a non-empty list of distinct column names, got []",
            ),
            (
                "repeated column",
                with(&["scope", "columns"], Some(json!(["region", "region"]))),
                "scope.columns: expected a non-empty list of distinct column names",
            ),
            (
                "retention as text",
                with(&["scope", "retention_days"], Some(json!("30"))),
                "scope.retention_days: expected a whole number of days from 1 to 3650, got \"30\"",
            ),
            (
                "retention zero",
                with(&["scope", "retention_days"], Some(json!(0))),
                "scope.retention_days: expected a whole number of days",
            ),
            (
                "empty rationale",
                with(&["rationale"], Some(json!("  "))),
                "rationale: expected a non-empty string",
            ),
            (
                "unknown column",
                with(
                    &["scope", "columns"],
                    Some(json!(["region", "avg_order_value"])),
                ),
                r#"column(s) ["avg_order_value"] are not in the dataset schema ["customer_email", "order_date", "order_id", "order_value", "region"]"#,
            ),
            (
                "not an object",
                json!(["propose"]),
                "not a single JSON object: a list",
            ),
        ];
        for (name, message, want) in cases {
            let e = validate(&message, None, Some(&known())).expect_err(name);
            assert!(e.to_string().contains(want), "{name}: {e}");
        }
    }

    #[test]
    fn a_card_publishes_its_negotiable_schema_as_column_tags() {
        let card = serde_json::json!({"skills": [
            {"id": "orders.query", "tags": ["data-share", "column:nope"]},
            {"id": "orders.negotiate", "tags": ["negotiation", "column:region", "column:", "column:order_id"]},
        ]});
        let cols = columns_on_card(&card, "orders.negotiate");
        assert_eq!(cols.into_iter().collect::<Vec<_>>(), ["order_id", "region"]);
        assert!(columns_on_card(&card, "shipments.negotiate").is_empty());
        assert!(columns_on_card(&serde_json::json!({}), "orders.negotiate").is_empty());
    }

    #[test]
    fn a_reply_may_not_speak_for_the_other_party() {
        let e = validate(&good(), Some(Party::Provider), None).expect_err("wrong party");
        assert_eq!(
            e.to_string(),
            r#"expected "from": "provider", got "consumer" (a reply may not speak for the other party)"#
        );
        assert_eq!(Party::Consumer.other(), Party::Provider);
    }

    #[test]
    fn text_must_be_exactly_one_object() {
        for text in [
            "Sure! Here it is: {\"from\": \"consumer\"}",
            "```json\n{}\n```",
            "",
            "{\"from\": \"consumer\"} {\"from\": \"provider\"}",
        ] {
            assert!(
                matches!(
                    parse_text(text, None, None),
                    Err(SchemaError::NotAnObject(_))
                ),
                "{text:?}"
            );
        }
    }
}
