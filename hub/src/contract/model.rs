//! Data contracts in the topology file (DESIGN.md §2, "data contract"):
//! per capability, which fields of its answer may reach a browser, how each
//! is redacted, and which are free text from the peer (`untrusted`).
//!
//! ```yaml
//! capabilities:
//!   - id: budget.consult
//!     response_schema: { ... }
//!     contract:
//!       fields:
//!         department: keep
//!         budget: { round: -3 }             # to the nearest thousand
//!         spent: { bucket: [0, 50000, 100000] }  # "50,000–100,000"
//!         owner_email: { mask: email }      # "a***@example.com"
//!         owner_phone: mask                 # "•••"
//!         internal_note: drop               # listed to say it is dropped
//!         proposed_actions[].action_type: keep
//!       untrusted:          # a block list: `x[]` breaks a flow list
//!         - answer
//!         - proposed_actions[].rationale
//! ```
//!
//! * A **path** is a dot path into the answer; `name[]` steps into the items
//!   of an array (`groups[].key`). Every path must exist in the capability's
//!   `response_schema` (through `properties` and `items`).
//! * A **rule** applies to a scalar field: `keep`, `mask` (fixed `•••`),
//!   `{ mask: email }` (first letter and domain), `{ round: N }` (N
//!   decimals; negative N rounds to tens, hundreds, ...), `{ bucket:
//!   [edges] }` (the value becomes the label of its range), `drop`. Only
//!   `drop` may name an object or array (and then nothing under it may be
//!   listed). `round` and `bucket` need a numeric field, `{ mask: email }`
//!   a string field.
//! * **Anything not listed is dropped**: the whitelist is the contract. A
//!   capability without a `contract` block sends nothing to a browser.
//! * `untrusted` lists free-text fields (string fields). They are kept, as
//!   untrusted text: data, never instructions (see `exchange::untrusted`).
//!
//! This module is the model as written; the rules are checked and compiled
//! when the topology loads ([`super::rules`]), each problem located at its
//! file, line and field like every other topology error, and applied on
//! the way to a browser by `crate::redaction`.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// One capability's data contract, as written in the topology file.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataContract {
    /// Path → rule. Paths not listed are dropped.
    #[serde(default)]
    pub fields: BTreeMap<String, FieldRule>,
    /// Free-text fields: kept, as untrusted text.
    #[serde(default)]
    pub untrusted: Vec<String>,
}

/// What happens to one field on its way to a browser.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldRule {
    /// Passed as is.
    Keep,
    /// Replaced so the value cannot be read back.
    Mask(MaskStyle),
    /// Rounded to this many decimals (negative: to tens, hundreds, ...).
    Round(i32),
    /// Replaced by the label of its range between these ascending edges.
    Bucket(Vec<f64>),
    /// Removed (the same as not listing it; says so explicitly).
    Drop,
}

/// How a masked value is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskStyle {
    /// `•••`, whatever the value.
    Fixed,
    /// `a***@example.com`: the first character and the domain of an email
    /// address (`•••` when the value is not one).
    Email,
}

/// The one sentence that says what a rule may be.
pub const RULE_FORMS: &str =
    "a rule is one of: keep, mask, { mask: email }, { round: N }, { bucket: [edges...] }, drop";

impl FieldRule {
    /// Reads a rule from its YAML form (a word or a one-key map).
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::String(word) => match word.as_str() {
                "keep" => Ok(FieldRule::Keep),
                "mask" => Ok(FieldRule::Mask(MaskStyle::Fixed)),
                "drop" => Ok(FieldRule::Drop),
                "round" => Err("`round` needs its decimals: { round: 2 }".into()),
                "bucket" => Err("`bucket` needs its edges: { bucket: [0, 1000, 10000] }".into()),
                other => Err(format!("unknown rule `{}`; {RULE_FORMS}", short(other))),
            },
            Value::Object(m) if m.len() == 1 => {
                let Some((name, arg)) = m.iter().next() else {
                    return Err(RULE_FORMS.into());
                };
                match name.as_str() {
                    "round" => {
                        let n = arg
                            .as_i64()
                            .filter(|n| (-9..=9).contains(n))
                            .and_then(|n| i32::try_from(n).ok())
                            .ok_or("`round` takes a whole number of decimals from -9 to 9")?;
                        Ok(FieldRule::Round(n))
                    }
                    "bucket" => {
                        let edges: Vec<f64> = arg
                            .as_array()
                            .and_then(|a| a.iter().map(Value::as_f64).collect())
                            .ok_or("`bucket` takes a list of numbers: { bucket: [0, 1000] }")?;
                        if edges.is_empty() || edges.len() > 64 {
                            return Err("`bucket` needs 1 to 64 edges".into());
                        }
                        if edges.iter().any(|e| !e.is_finite())
                            || edges.windows(2).any(|w| w[0] >= w[1])
                        {
                            return Err(
                                "`bucket` edges must be finite and strictly ascending".into()
                            );
                        }
                        Ok(FieldRule::Bucket(edges))
                    }
                    "mask" => match arg.as_str() {
                        Some("fixed") => Ok(FieldRule::Mask(MaskStyle::Fixed)),
                        Some("email") => Ok(FieldRule::Mask(MaskStyle::Email)),
                        _ => Err("`mask` takes `fixed` or `email`: { mask: email }".into()),
                    },
                    other => Err(format!("unknown rule `{}`; {RULE_FORMS}", short(other))),
                }
            }
            _ => Err(RULE_FORMS.into()),
        }
    }

    fn to_value(&self) -> Value {
        match self {
            FieldRule::Keep => Value::from("keep"),
            FieldRule::Mask(MaskStyle::Fixed) => Value::from("mask"),
            FieldRule::Mask(MaskStyle::Email) => serde_json::json!({"mask": "email"}),
            FieldRule::Round(n) => serde_json::json!({ "round": n }),
            FieldRule::Bucket(edges) => serde_json::json!({ "bucket": edges }),
            FieldRule::Drop => Value::from("drop"),
        }
    }
}

/// A name as an error message may repeat it.
fn short(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(40).collect()
}

/// A rule's written forms, as [`FieldRule::from_value`] reads them: the
/// bounds an editor can check (decimals from -9 to 9, 1 to 64 edges);
/// that edges ascend is the loader's to say.
impl schemars::JsonSchema for FieldRule {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FieldRule".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": RULE_FORMS,
            "oneOf": [
                {"enum": ["keep", "mask", "drop"]},
                {
                    "type": "object",
                    "properties": {"mask": {"enum": ["fixed", "email"]}},
                    "required": ["mask"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {"round": {"type": "integer", "minimum": -9, "maximum": 9}},
                    "required": ["round"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {
                        "bucket": {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 64}
                    },
                    "required": ["bucket"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl<'de> Deserialize<'de> for FieldRule {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        FieldRule::from_value(&v).map_err(D::Error::custom)
    }
}

impl Serialize for FieldRule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(yaml: &str) -> Result<FieldRule, String> {
        serde_yaml_ng::from_str::<FieldRule>(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn every_rule_form_parses_and_round_trips() {
        for (text, want) in [
            ("keep", FieldRule::Keep),
            ("mask", FieldRule::Mask(MaskStyle::Fixed)),
            ("{mask: fixed}", FieldRule::Mask(MaskStyle::Fixed)),
            ("{mask: email}", FieldRule::Mask(MaskStyle::Email)),
            ("{round: 2}", FieldRule::Round(2)),
            ("{round: -3}", FieldRule::Round(-3)),
            (
                "{bucket: [0, 1000, 10000.5]}",
                FieldRule::Bucket(vec![0.0, 1000.0, 10000.5]),
            ),
            ("drop", FieldRule::Drop),
        ] {
            let got = rule(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got, want, "{text}");
            let back = serde_yaml_ng::to_string(&got).unwrap_or_default();
            assert_eq!(rule(&back).ok(), Some(want), "{text} → {back}");
        }
    }

    #[test]
    fn bad_rules_say_what_a_rule_may_be() {
        for (text, needle) in [
            ("kep", "unknown rule `kep`; a rule is one of"),
            ("round", "needs its decimals"),
            ("bucket", "needs its edges"),
            ("{round: 1.5}", "whole number"),
            ("{round: 12}", "from -9 to 9"),
            ("{bucket: []}", "1 to 64 edges"),
            ("{bucket: [3, 2]}", "strictly ascending"),
            ("{bucket: [1, x]}", "list of numbers"),
            ("{mask: sha256}", "`fixed` or `email`"),
            ("{hash: 1}", "unknown rule `hash`"),
            ("{round: 1, keep: 1}", "a rule is one of"),
            ("[keep]", "a rule is one of"),
        ] {
            let err = rule(text).expect_err(text);
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
