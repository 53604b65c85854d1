//! The JSON-RPC request of the A2A surface (`POST /a2a/{provider}`): the
//! body goes to `surface::jsonrpc::parse_request`, the method name it
//! reads to `bridge::Method::from_name` in both dialects, and the params of
//! a v0.3 method on through `bridge::params_to_v1` — the road a 0.3
//! caller's body takes before the exchange pipeline.
//!
//! Properties beyond "no panic":
//! - a refusal has a message, and a JSON-RPC error code of the reserved
//!   range (-32768..=-32000); the id it answers with is a string, a number
//!   or null;
//! - an accepted request has such an id, and object params;
//! - a method name known in a dialect is that method's name there
//!   (`Method::name` inverts `from_name`);
//! - a translation refusal's path starts at `params`.

use std::sync::LazyLock;

use hub::bridge::{params_to_v1, Dialect, Method};
use hub::surface::jsonrpc::parse_request;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::{json, Value};

use crate::gen;
use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "jsonrpc",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &[],
};

const DICTIONARY: &[&str] = &[
    "\"jsonrpc\"",
    "\"2.0\"",
    "\"id\"",
    "\"method\"",
    "\"params\"",
    "\"message/send\"",
    "\"SendMessage\"",
    "\"tasks/get\"",
    "\"message\"",
    "\"parts\"",
    "null",
    "[]",
    "{}",
    ",",
    ":",
    "1e999",
    "-0",
    "\"\\u0000\"",
];

const KEYS: &[&str] = &[
    "jsonrpc",
    "id",
    "method",
    "params",
    "message",
    "messageId",
    "role",
    "parts",
    "kind",
    "text",
    "data",
    "configuration",
    "blocking",
    "historyLength",
    "metadata",
    "taskId",
    "contextId",
];

/// Values worth trying besides the method names.
const OTHER_WORDS: &[&str] = &[
    "2.0",
    "user",
    "agent",
    "ROLE_USER",
    "text",
    "data",
    "m1",
    "t1",
];

/// Every method name of both dialects (from the bridge's own table, so a
/// new method is fuzzed without being listed here), then [`OTHER_WORDS`].
static WORDS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    Method::ALL
        .iter()
        .flat_map(|m| [m.name(Dialect::V0_3), m.name(Dialect::V1_0)])
        .flatten()
        .chain(OTHER_WORDS.iter().copied())
        .collect()
});

fn run(input: &[u8]) -> Result<Class, Broken> {
    let is_id = |id: &Value| matches!(id, Value::String(_) | Value::Number(_) | Value::Null);
    match parse_request(input) {
        Err((id, error)) => {
            if !is_id(&id) {
                return Err(format!("refusal answers with id {id}"));
            }
            if error.message.trim().is_empty() {
                return Err("a refusal without a message".into());
            }
            if !(-32768..=-32000).contains(&error.code) {
                return Err(format!(
                    "refusal code {} outside JSON-RPC's range",
                    error.code
                ));
            }
            Ok(format!(
                "refused {} {}",
                error.code,
                crate::first_words(&error.message, 3)
            ))
        }
        Ok(request) => {
            if !is_id(&request.id) {
                return Err(format!("accepted id {}", request.id));
            }
            if !request.params.is_object() {
                return Err(format!("accepted params {}", request.params));
            }
            let mut class = String::from("accepted");
            for dialect in [Dialect::V1_0, Dialect::V0_3] {
                let Some(method) = Method::from_name(dialect, &request.method) else {
                    continue;
                };
                if method.name(dialect) != Some(request.method.as_str()) {
                    return Err(format!("{:?} is not named {:?}", method, request.method));
                }
                class.push_str(&format!(" {dialect:?}"));
                if dialect == Dialect::V0_3 {
                    match params_to_v1(method, request.params.clone()) {
                        Ok(_) => class.push_str(" translated"),
                        Err(e) if !e.path().starts_with("params") => {
                            return Err(format!("translation error path {:?}", e.path()))
                        }
                        Err(_) => class.push_str(" untranslated"),
                    }
                }
            }
            Ok(class)
        }
    }
}

/// Requests of both dialects with arbitrary parts, and arbitrary JSON.
fn generate(seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    let method = gen::word(&WORDS);
    let request = (
        method,
        gen::json(KEYS, &WORDS, 4),
        prop_oneof![
            Just(json!(1)),
            Just(json!("r1")),
            Just(Value::Null),
            gen::scalar(&WORDS)
        ],
    )
        .prop_map(|(method, params, id)| {
            gen::to_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        });
    prop_oneof![
        3 => gen::seed_variants(seeds, gen::parse_json, KEYS, &WORDS).prop_map(|v| gen::to_json(&v)),
        2 => request,
        1 => gen::json_bytes(KEYS, &WORDS, 3),
    ]
    .boxed()
}
