//! Structure-aware inputs: the strategies targets draw well-formed (or
//! nearly) documents from, so that generated input gets past the first
//! syntax check into the code that judges fields. Arbitrary JSON whose
//! keys and strings come mostly from a target's vocabulary; the same as
//! YAML; a seed's JSON with one subtree replaced.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Number, Value};

/// A string: mostly a word of `words`, sometimes anything.
pub fn word(words: &'static [&'static str]) -> BoxedStrategy<String> {
    if words.is_empty() {
        return any::<String>().boxed();
    }
    prop_oneof![
        6 => any::<Index>().prop_map(move |i| i.get(words).to_string()),
        1 => any::<String>(),
        1 => "[a-z_]{0,12}",
    ]
    .boxed()
}

/// A JSON scalar; strings from `words`.
pub fn scalar(words: &'static [&'static str]) -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        2 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        5 => word(words).prop_map(Value::String),
    ]
    .boxed()
}

/// Arbitrary JSON up to `depth` levels deep: keys from `keys`, strings from
/// `words`.
pub fn json(
    keys: &'static [&'static str],
    words: &'static [&'static str],
    depth: u32,
) -> BoxedStrategy<Value> {
    scalar(words)
        .prop_recursive(depth, 64, 6, move |inner| {
            prop_oneof![
                1 => vec(inner.clone(), 0..5).prop_map(Value::Array),
                3 => btree_map(word(keys), inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect::<Map<String, Value>>())),
            ]
        })
        .boxed()
}

/// [`json`] as bytes (compact, or pretty).
pub fn json_bytes(
    keys: &'static [&'static str],
    words: &'static [&'static str],
    depth: u32,
) -> BoxedStrategy<Vec<u8>> {
    (json(keys, words, depth), any::<bool>())
        .prop_map(|(v, pretty)| {
            let text = if pretty {
                serde_json::to_vec_pretty(&v)
            } else {
                serde_json::to_vec(&v)
            };
            text.unwrap_or_default()
        })
        .boxed()
}

/// [`json`] as a YAML document.
pub fn yaml_bytes(
    keys: &'static [&'static str],
    words: &'static [&'static str],
    depth: u32,
) -> BoxedStrategy<Vec<u8>> {
    json(keys, words, depth)
        .prop_map(|v| {
            serde_yaml_ng::to_string(&v)
                .unwrap_or_default()
                .into_bytes()
        })
        .boxed()
}

/// `seed` with one node (chosen by `at`, in document order) replaced by
/// `with`.
pub fn replace_node(seed: &Value, at: &Index, with: Value) -> Value {
    let count = count_nodes(seed);
    let mut target = at.index(count);
    let mut copy = seed.clone();
    replace_nth(&mut copy, &mut target, with);
    copy
}

fn count_nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// Replaces the `n`th node; true once done.
fn replace_nth(v: &mut Value, n: &mut usize, with: Value) -> bool {
    if *n == 0 {
        *v = with;
        return true;
    }
    *n -= 1;
    let children: Vec<&mut Value> = match v {
        Value::Array(items) => items.iter_mut().collect(),
        Value::Object(map) => map.values_mut().collect(),
        _ => return false,
    };
    let mut with = Some(with);
    for child in children {
        let size = count_nodes(child);
        if *n < size {
            return with.take().is_some_and(|w| replace_nth(child, n, w));
        }
        *n -= size;
    }
    false
}

/// The seeds that parse (`parse`: JSON or YAML) with one or two nodes
/// replaced by arbitrary JSON of the vocabulary: the structure-aware
/// mutation. Arbitrary JSON when no seed parses.
pub fn seed_variants(
    seeds: &[Vec<u8>],
    parse: fn(&[u8]) -> Option<Value>,
    keys: &'static [&'static str],
    words: &'static [&'static str],
) -> BoxedStrategy<Value> {
    let parsed: Vec<Value> = seeds.iter().filter_map(|s| parse(s)).collect();
    if parsed.is_empty() {
        return json(keys, words, 4);
    }
    (
        any::<Index>(),
        vec((any::<Index>(), json(keys, words, 3)), 1..3),
    )
        .prop_map(move |(seed, edits)| {
            let mut value = seed.get(&parsed).clone();
            for (at, with) in edits {
                value = replace_node(&value, &at, with);
            }
            value
        })
        .boxed()
}

/// `bytes` as JSON, if they are.
pub fn parse_json(bytes: &[u8]) -> Option<Value> {
    serde_json::from_slice(bytes).ok()
}

/// `bytes` as a YAML document, read into JSON values, if they are.
pub fn parse_yaml(bytes: &[u8]) -> Option<Value> {
    serde_yaml_ng::from_slice(bytes).ok()
}

/// A JSON value as compact JSON bytes.
pub fn to_json(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_default()
}

/// A JSON value as a YAML document.
pub fn to_yaml(value: &Value) -> Vec<u8> {
    serde_yaml_ng::to_string(value)
        .unwrap_or_default()
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_node_can_be_replaced() {
        let seed = json!({"a": [1, {"b": 2}], "c": null});
        let count = count_nodes(&seed);
        assert_eq!(count, 6);
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..count {
            let mut v = seed.clone();
            let mut n = i;
            assert!(replace_nth(&mut v, &mut n, json!("X")), "node {i}");
            seen.insert(v.to_string());
        }
        assert_eq!(seen.len(), count);
    }
}
