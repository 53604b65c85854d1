//! Each of the nine reason codes, produced by a real cause against real
//! processes on loopback. Every call must end by its deadline: the hub
//! answers `not_connected` with the reason; it never hangs or crashes.

mod common;

use common::{Faults, PeerSpec, Stack};
use serde_json::json;
use std::time::Duration;

/// Capability deadline in config/topology.yaml plus scheduling slack.
const DEADLINE: Duration = Duration::from_millis(2_000);
const SLACK: Duration = Duration::from_millis(1_500);

fn count_orders() -> serde_json::Value {
    json!({ "aggregate": { "op": "count" } })
}

fn assert_by_deadline(a: &common::Answer) {
    assert!(
        a.elapsed < DEADLINE + SLACK,
        "answered after {:?}, past the deadline: {}",
        a.elapsed,
        a.json
    );
    assert!(
        a.json["trace_id"].as_str().is_some_and(|t| t.len() == 32),
        "trace id in {}",
        a.json
    );
}

#[tokio::test]
async fn auth_rejected_for_a_wrong_token() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let a = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .header("authorization", "Bearer not-the-token")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "AUTH_REJECTED");
    assert_eq!(a.status, 401);
    assert_by_deadline(&a);
    // Another system's token does not work either: tokens are per caller.
    let a = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .header(
            "authorization",
            &format!("Bearer {}", stack.token("helpdesk")),
        )
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "AUTH_REJECTED");
    let body = a.json.to_string();
    assert!(
        !body.contains(&stack.token("helpdesk")),
        "a token leaked into the answer: {body}"
    );
}

#[tokio::test]
async fn ip_not_allowed_from_an_address_outside_the_allowlist() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    // buyercorp's allowlist is 127.0.0.1/32; 127.0.0.2 is loopback too, but not on it.
    let a = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .source_ip("127.0.0.2")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "IP_NOT_ALLOWED");
    assert_by_deadline(&a);
    // The same call from an allowed address connects: the IP was the only cause.
    let ok = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(count_orders())
        .send()
        .await;
    assert!(
        ok.result()["row_count"].as_f64().is_some_and(|n| n > 0.0),
        "{}",
        ok.json
    );
}

#[tokio::test]
async fn not_permitted_without_a_rule() {
    let stack = Stack::start(vec![PeerSpec::stock("buyercorp")]).await;
    // vendorcorp exists, but no rule lets it consult buyercorp's budget.
    let a = stack
        .call("vendorcorp", "buyercorp", "budget.consult")
        .body(json!({ "question": "what is the marketing budget?" }))
        .send()
        .await;
    assert_eq!(a.reason(), "NOT_PERMITTED");
    assert_eq!(a.status, 403);
    assert_by_deadline(&a);
}

#[tokio::test]
async fn unknown_peer_for_a_provider_not_in_the_registry() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let a = stack
        .call("buyercorp", "nosuchcorp", "orders.query")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "UNKNOWN_PEER");
    assert_eq!(a.status, 404);
    assert_by_deadline(&a);
}

#[tokio::test]
async fn peer_unreachable_when_the_peer_process_is_killed() {
    let mut stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let ok = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(count_orders())
        .send()
        .await;
    ok.result();
    stack.kill_peer("vendorcorp");
    let a = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "PEER_UNREACHABLE");
    assert_by_deadline(&a);
    // It comes back: the same call connects once the process is restarted.
    stack.start_peer("vendorcorp").await;
    let again = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(count_orders())
        .send()
        .await;
    again.result();
}

#[tokio::test]
async fn timeout_when_a_peer_stalls_past_the_deadline_and_others_are_not_delayed() {
    let stack = Stack::start(vec![
        PeerSpec::clone_of(
            "stallcorp",
            "vendorcorp",
            Faults {
                stall_ms: 10_000,
                ..Faults::default()
            },
        ),
        PeerSpec::stock("vendorcorp"),
    ])
    .await;
    let slow = stack
        .call("buyercorp", "stallcorp", "orders.query")
        .body(count_orders())
        .send();
    let fast = async {
        // Starts while the slow call is in flight.
        tokio::time::sleep(Duration::from_millis(200)).await;
        stack
            .call("buyercorp", "vendorcorp", "orders.query")
            .body(count_orders())
            .send()
            .await
    };
    let (slow, fast) = tokio::join!(slow, fast);
    assert_eq!(slow.reason(), "TIMEOUT");
    assert_eq!(slow.status, 504);
    assert!(
        slow.elapsed >= DEADLINE - Duration::from_millis(100),
        "gave up early: {:?}",
        slow.elapsed
    );
    assert_by_deadline(&slow);
    fast.result();
    assert!(
        fast.elapsed < Duration::from_millis(1_500),
        "a stalled peer delayed a call between other peers: {:?}",
        fast.elapsed
    );
}

#[tokio::test]
async fn version_unsupported_for_an_unknown_a2a_version() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let a = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .header("a2a-version", "0.2")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "VERSION_UNSUPPORTED");
    assert_eq!(a.status, 400);
    assert_by_deadline(&a);
    // The legacy header spelling is read too.
    let legacy = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .without_header("a2a-version")
        .header("x-a2a-version", "9.9")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(legacy.reason(), "VERSION_UNSUPPORTED");
    let legacy_ok = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .without_header("a2a-version")
        .header("x-a2a-version", "1.0")
        .body(count_orders())
        .send()
        .await;
    legacy_ok.result();
}

#[tokio::test]
async fn schema_invalid_when_a_peer_answer_breaks_the_contract() {
    let stack = Stack::start(vec![PeerSpec::clone_of(
        "liarcorp",
        "vendorcorp",
        Faults {
            break_schema: true,
            ..Faults::default()
        },
    )])
    .await;
    let a = stack
        .call("buyercorp", "liarcorp", "orders.query")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "SCHEMA_INVALID");
    assert_eq!(a.status, 502);
    assert!(
        a.json.get("result").is_none(),
        "a broken answer was passed through: {}",
        a.json
    );
    assert_by_deadline(&a);
}

#[tokio::test]
async fn peer_error_when_a_peer_returns_an_error() {
    let stack = Stack::start(vec![
        PeerSpec::clone_of(
            "brokencorp",
            "vendorcorp",
            Faults {
                fail: true,
                ..Faults::default()
            },
        ),
        PeerSpec::stock("vendorcorp"),
    ])
    .await;
    let a = stack
        .call("buyercorp", "brokencorp", "orders.query")
        .body(count_orders())
        .send()
        .await;
    assert_eq!(a.reason(), "PEER_ERROR");
    assert_by_deadline(&a);
    // Input the contract allows but the peer refuses (a sum over a text
    // column) is a peer error too, and its detail names what was wrong.
    let bad = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(json!({ "aggregate": { "op": "sum", "column": "region" } }))
        .send()
        .await;
    assert_eq!(bad.reason(), "PEER_ERROR");
    assert!(
        bad.json["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("\"region\" is TEXT"),
        "{}",
        bad.json
    );
}
