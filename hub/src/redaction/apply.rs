//! Applying a compiled contract to a peer's answer (DESIGN.md §2 "data
//! contract"): keep what the whitelist lists, redact each leaf by its rule
//! (mask, round, bucket), turn free text into [`Untrusted`], drop the rest.
//!
//! The rules were compiled and checked when the topology loaded
//! (`crate::contract::rules`); here they are only applied, and applying
//! never fails: a value of an unexpected shape is dropped.

use std::collections::BTreeMap;

use app::format::format_number;
use exchange::text::clip;
use exchange::untrusted::Untrusted;
use serde_json::{Number, Value};

use super::Data;
use crate::contract::model::MaskStyle;
use crate::contract::rules::{Leaf, Node};
use crate::contract::Rules;

/// What a masked value becomes (and the mask of a non-email under
/// `{ mask: email }`).
pub const MASK: &str = "•••";

/// Applies the whitelist of `rules` to a (schema-valid) answer from
/// system `from`.
pub fn apply_rules(rules: &Rules, value: &Value, from: &str) -> Data {
    apply(rules.root(), value, from).unwrap_or_else(|| Data::Map(BTreeMap::new()))
}

fn apply(node: &Node, value: &Value, from: &str) -> Option<Data> {
    if let Some(leaf) = &node.leaf {
        return apply_leaf(leaf, value, from);
    }
    match value {
        Value::Null => Some(Data::Null),
        Value::Object(m) if !node.props.is_empty() => Some(Data::Map(
            node.props
                .iter()
                .filter_map(|(k, n)| Some((k.clone(), apply(n, m.get(k)?, from)?)))
                .collect(),
        )),
        Value::Array(items) => {
            let n = node.items.as_deref()?;
            Some(Data::List(
                items.iter().filter_map(|v| apply(n, v, from)).collect(),
            ))
        }
        _ => None,
    }
}

fn apply_leaf(leaf: &Leaf, value: &Value, from: &str) -> Option<Data> {
    if matches!(value, Value::Object(_) | Value::Array(_)) {
        return None;
    }
    if value.is_null() {
        return Some(Data::Null);
    }
    Some(match leaf {
        Leaf::Keep => match value {
            Value::Bool(b) => Data::Bool(*b),
            Value::Number(n) => Data::Number(n.clone()),
            Value::String(s) => Data::Text(s.clone()),
            _ => return None,
        },
        Leaf::Mask(MaskStyle::Fixed) => Data::Text(MASK.to_string()),
        Leaf::Mask(MaskStyle::Email) => Data::Text(match value {
            Value::String(s) => mask_email(s),
            _ => MASK.to_string(),
        }),
        Leaf::Round(n) => Data::Number(round(value.as_f64()?, *n)?),
        Leaf::Bucket(edges) => Data::Text(bucket(value.as_f64()?, edges)),
        Leaf::Untrusted => Data::Untrusted(Untrusted::new(value.as_str()?, from)),
    })
}

/// `alice@example.com` → `a***@example.com`; not an address → `•••`.
pub fn mask_email(s: &str) -> String {
    match s.rsplit_once('@') {
        Some((local, domain)) if !domain.is_empty() && !domain.contains(char::is_whitespace) => {
            let first: String = local.chars().take(1).filter(|c| !c.is_control()).collect();
            format!("{first}***@{}", clip(domain, 100))
        }
        _ => MASK.to_string(),
    }
}

/// `v` rounded to `decimals` (negative: to tens, hundreds, ...). Whole
/// results are integers on the wire.
pub(crate) fn round(v: f64, decimals: i32) -> Option<Number> {
    if !v.is_finite() {
        return None;
    }
    let r = if decimals >= 0 {
        let f = 10f64.powi(decimals);
        (v * f).round() / f
    } else {
        let f = 10f64.powi(-decimals);
        (v / f).round() * f
    };
    if r.fract() == 0.0 && r.abs() < 9.0e15 {
        // Exact: |r| < 2^53.
        #[allow(clippy::cast_possible_truncation)]
        return Some(Number::from(r as i64));
    }
    Number::from_f64(r)
}

/// The label of the range `v` falls in: `< 0`, `0–50,000`, `≥ 100,000`.
/// Ranges include their lower edge.
pub(crate) fn bucket(v: f64, edges: &[f64]) -> String {
    let Some(first) = edges.first() else {
        return MASK.to_string();
    };
    if v < *first {
        return format!("< {}", format_number(*first));
    }
    for w in edges.windows(2) {
        if v >= w[0] && v < w[1] {
            return format!("{}–{}", format_number(w[0]), format_number(w[1]));
        }
    }
    format!("≥ {}", format_number(*edges.last().unwrap_or(first)))
}
