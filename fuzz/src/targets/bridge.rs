//! The A2A v0.3 ⇄ v1.0 translation (`hub::bridge`): the input is one
//! JSON value, given to every entry point — params and results of every
//! method both ways, events and cards both ways, and `version_of_card`.
//!
//! Properties beyond "no panic" (what `bridge/tests.rs` holds the module
//! to, over arbitrary input instead of its table):
//! - every refusal's path starts at its root (`params`, `result`,
//!   `event`, `card`; `method` for `ListTasks`, which v0.3 lacks), and
//!   its `Display` starts with that path;
//! - what one direction produces, the other direction takes without
//!   panicking (and any refusal of it still names a path under the root).
//!
//! No round-trip identity is asserted: the module documents its lossy
//! constructs (`bridge::LOSSY`), so none is promised.

use hub::bridge::{self, BridgeError, Method};
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::Value;

use crate::gen;
use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "bridge",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &[],
};

const DICTIONARY: &[&str] = &[
    "\"kind\"",
    "\"task\"",
    "\"message\"",
    "\"status-update\"",
    "\"artifact-update\"",
    "\"parts\"",
    "\"role\"",
    "\"ROLE_UNSPECIFIED\"",
    "\"file\"",
    "\"bytes\"",
    "\"state\"",
    "\"supportedInterfaces\"",
    "\"securitySchemes\"",
    "\"oauth2\"",
    "null",
    "[]",
    "{}",
    "18446744073709551616",
    "-1",
    ",",
];

const KEYS: &[&str] = &[
    "kind",
    "message",
    "messageId",
    "role",
    "parts",
    "text",
    "data",
    "file",
    "bytes",
    "uri",
    "raw",
    "url",
    "name",
    "mimeType",
    "mediaType",
    "filename",
    "metadata",
    "taskId",
    "contextId",
    "id",
    "status",
    "state",
    "timestamp",
    "artifacts",
    "artifact",
    "artifactId",
    "history",
    "historyLength",
    "configuration",
    "blocking",
    "returnImmediately",
    "acceptedOutputModes",
    "pushNotificationConfig",
    "taskPushNotificationConfig",
    "pushNotificationConfigId",
    "authentication",
    "schemes",
    "scheme",
    "credentials",
    "token",
    "task",
    "statusUpdate",
    "artifactUpdate",
    "final",
    "append",
    "lastChunk",
    "configs",
    "supportedInterfaces",
    "additionalInterfaces",
    "protocolBinding",
    "protocolVersion",
    "preferredTransport",
    "transport",
    "capabilities",
    "streaming",
    "securitySchemes",
    "security",
    "securityRequirements",
    "type",
    "flows",
    "authorizationCode",
    "clientCredentials",
    "deviceCode",
    "skills",
    "signatures",
    "supportsAuthenticatedExtendedCard",
    "extensions",
    "tenant",
];

const WORDS: &[&str] = &[
    "task",
    "message",
    "status-update",
    "artifact-update",
    "text",
    "data",
    "file",
    "user",
    "agent",
    "ROLE_USER",
    "ROLE_AGENT",
    "ROLE_UNSPECIFIED",
    "completed",
    "working",
    "unknown",
    "input-required",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_WORKING",
    "TASK_STATE_UNSPECIFIED",
    "JSONRPC",
    "HTTP+JSON",
    "GRPC",
    "0.3.0",
    "0.3",
    "1.0",
    "http",
    "apiKey",
    "oauth2",
    "openIdConnect",
    "mutualTLS",
    "Bearer",
    "http://127.0.0.1:8080/a2a/orders",
    "t1",
    "m1",
];

/// The entry points, by name: what a success class lists.
type Entry = (
    String,
    fn(Method, Value) -> Result<Value, BridgeError>,
    &'static str,
);

fn entries() -> Vec<(Entry, Entry)> {
    let mut out: Vec<(Entry, Entry)> = Vec::new();
    for method in Method::ALL {
        out.push((
            (
                format!("params_to_v1 {method:?}"),
                bridge::params_to_v1,
                "params",
            ),
            (
                format!("params_to_v03 {method:?}"),
                bridge::params_to_v03,
                "params",
            ),
        ));
        out.push((
            (
                format!("result_to_v1 {method:?}"),
                bridge::result_to_v1,
                "result",
            ),
            (
                format!("result_to_v03 {method:?}"),
                bridge::result_to_v03,
                "result",
            ),
        ));
    }
    out
}

fn event_to_v1(_: Method, v: Value) -> Result<Value, BridgeError> {
    bridge::event_to_v1(v)
}
fn event_to_v03(_: Method, v: Value) -> Result<Value, BridgeError> {
    bridge::event_to_v03(v)
}
fn card_to_v1(_: Method, v: Value) -> Result<Value, BridgeError> {
    bridge::card_to_v1(v)
}
fn card_to_v03(_: Method, v: Value) -> Result<Value, BridgeError> {
    bridge::card_to_v03(v)
}

/// `error` names a path under `root` (or `method`, for `ListTasks`,
/// which v0.3 has no method for), and says it first.
fn names_path(error: &BridgeError, root: &str, what: &str) -> Result<(), Broken> {
    let text = error.to_string();
    let under =
        error.path().starts_with(root) || (error.path() == "method" && what.contains("ListTasks"));
    if !under || !text.starts_with(error.path()) {
        return Err(format!(
            "{what}: error {text:?} does not name a path under {root}"
        ));
    }
    Ok(())
}

fn run(input: &[u8]) -> Result<Class, Broken> {
    let Ok(value) = serde_json::from_slice::<Value>(input) else {
        return Ok("not json".into());
    };
    let _ = bridge::version_of_card(&value);
    let mut pairs = entries();
    let card_pairs: [(Entry, Entry); 2] = [
        (
            ("event_to_v1".into(), event_to_v1, "event"),
            ("event_to_v03".into(), event_to_v03, "event"),
        ),
        (
            ("card_to_v1".into(), card_to_v1, "card"),
            ("card_to_v03".into(), card_to_v03, "card"),
        ),
    ];
    pairs.extend(card_pairs);
    let mut translated = Vec::new();
    for (index, (a, b)) in pairs.iter().enumerate() {
        // Each direction, then the other direction on what it produced.
        for (first, second) in [(a, b), (b, a)] {
            let method = Method::ALL[(index / 2).min(Method::ALL.len() - 1)];
            match (first.1)(method, value.clone()) {
                Err(e) => names_path(&e, first.2, &first.0)?,
                Ok(out) => {
                    translated.push(first.0.clone());
                    if first.0 == "card_to_v1" {
                        let _ = bridge::version_of_card(&out);
                    }
                    if let Err(e) = (second.1)(method, out) {
                        names_path(&e, second.2, &format!("{} after {}", second.0, first.0))?;
                    }
                }
            }
        }
    }
    Ok(if translated.is_empty() {
        "refused everywhere".into()
    } else {
        format!("translated by {}", translated.join(", "))
    })
}

/// Seeds with subtrees replaced by A2A-shaped JSON, and A2A-shaped JSON.
fn generate(seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        3 => gen::seed_variants(seeds, gen::parse_json, KEYS, WORDS).prop_map(|v| gen::to_json(&v)),
        1 => gen::json_bytes(KEYS, WORDS, 5),
    ]
    .boxed()
}
