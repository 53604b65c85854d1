//! The nine reason codes on the hub's A2A surface (`POST /a2a/{provider}`,
//! JSON-RPC, A2A v1.0), each produced by its real cause against real
//! processes on loopback, as `reason_codes.rs` does for `/gateway/v1`:
//! every refusal is a JSON-RPC error with the reason's code, one
//! `google.rpc.ErrorInfo` (reason, domain `wall-street.exchange`, the
//! caller's trace id) and an audit record, answered by its deadline — but
//! a call whose credential names no system, which has no row of its own
//! (it is counted into the trail's summary of unidentified calls,
//! `tests/unidentified_calls.rs`).
//!
//! Then the requests that never become a call: malformed JSON-RPC is a
//! clean protocol error (domain `a2a-protocol.org`), answered at once,
//! with nothing written to the audit trail.

mod common;

use common::a2a::{code, traceparent, A2aAnswer, A2aCall, EXCHANGE_DOMAIN, PROTOCOL_DOMAIN};
use common::{Faults, PeerSpec, Stack};
use serde_json::{json, Value};
use std::time::Duration;

/// Capability deadline in config/topology.yaml plus scheduling slack.
const DEADLINE: Duration = Duration::from_millis(2_000);
const SLACK: Duration = Duration::from_millis(1_500);

/// How long a malformed request may take to be answered.
const PROMPTLY: Duration = Duration::from_secs(3);

/// Rows of vendorcorp's orders dataset (config/peers).
const ORDER_ROWS: f64 = 624.0;

fn count_orders() -> Value {
    json!({ "aggregate": { "op": "count" } })
}

/// Sends `call` with a fresh `traceparent`; the answer and the trace id sent.
async fn traced(call: A2aCall) -> (A2aAnswer, String) {
    let (header, trace_id) = traceparent();
    (call.traceparent(&header).send().await, trace_id)
}

/// A refused or failed call as the surface must answer it: HTTP 200 (401
/// for `AUTH_REJECTED`), the JSON-RPC `code`, one ErrorInfo with `reason`
/// in the exchange's domain and the trace id the caller sent, by the
/// deadline, with no token of anyone in the body; and the hub's audit
/// trail holds the refusal under that trace id.
async fn assert_refused(
    stack: &Stack,
    a: &A2aAnswer,
    sent_trace: &str,
    reason: &str,
    rpc_code: i64,
) {
    assert_refusal(stack, a, sent_trace, reason, rpc_code);
    let records = hub_records(stack, sent_trace).await;
    assert!(
        records
            .iter()
            .any(|r| r.reason.map(|r| r.as_str()) == Some(reason)),
        "no {reason} audit record for trace {sent_trace}: {records:?}"
    );
}

/// The hub's audit records of trace `trace_id`.
async fn hub_records(stack: &Stack, trace_id: &str) -> Vec<exchange::audit::AuditRecord> {
    stack
        .hub_trail()
        .await
        .by_trace(trace_id)
        .await
        .expect("read the hub's trail")
}

/// No audit record of its own under `trace_id`: a call whose credential
/// names no system is counted and summarised instead (`gateway::strangers`).
async fn assert_no_row_of_its_own(stack: &Stack, trace_id: &str) {
    let records = hub_records(stack, trace_id).await;
    assert!(
        records.is_empty(),
        "a stranger's call has a row of its own: {records:?}"
    );
}

/// [`assert_refused`] without the audit record: the answer only.
fn assert_refusal(stack: &Stack, a: &A2aAnswer, sent_trace: &str, reason: &str, rpc_code: i64) {
    assert_eq!(a.reason(), reason, "{}", a.json);
    assert_eq!(a.code(), rpc_code, "{}", a.json);
    assert_eq!(a.domain(), EXCHANGE_DOMAIN, "{}", a.json);
    let want_status = if reason == "AUTH_REJECTED" { 401 } else { 200 };
    assert_eq!(a.status, want_status, "{}", a.json);
    assert!(
        common::a2a::is_trace_id(a.trace_id()),
        "traceId is not 32 hex: {}",
        a.json
    );
    assert_eq!(
        a.trace_id(),
        sent_trace,
        "the caller's trace was not kept: {}",
        a.json
    );
    assert!(
        a.elapsed < DEADLINE + SLACK,
        "answered after {:?}, past the deadline: {}",
        a.elapsed,
        a.json
    );
    assert_no_token(stack, a);
}

/// The JSON-RPC error of an answer without what differs per request (the
/// ErrorInfo's trace and request id): what two refusals must share to say
/// the same thing.
fn without_ids(a: &A2aAnswer) -> Value {
    let mut error = a.error().clone();
    if let Some(info) = error["data"][0].as_object_mut() {
        info.remove("metadata");
    }
    error
}

/// No token any system of the stack holds appears in the answer.
fn assert_no_token(stack: &Stack, a: &A2aAnswer) {
    for token in stack.all_tokens() {
        assert!(
            !a.text.contains(&token),
            "a token leaked into the answer: {}",
            a.text
        );
    }
}

/// The result of a successful `orders.query` count: the provider's
/// Message with the row count in its data part (a JSON number, which the
/// peer writes as `624.0`).
fn row_count(a: &A2aAnswer) -> f64 {
    let result = a.result();
    result["message"]["parts"][0]["data"]["row_count"]
        .as_f64()
        .unwrap_or_else(|| panic!("no row_count in result.message.parts[0].data: {result}"))
}

#[tokio::test]
async fn a2a_send_message_counts_orders_and_echoes_the_trace() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let call = stack
        .a2a("buyercorp", "vendorcorp")
        .data("orders.query", count_orders());
    let id = call.id.clone();
    let (a, trace) = traced(call).await;
    assert_eq!(a.status, 200, "{}", a.json);
    assert_eq!(row_count(&a), ORDER_ROWS, "{}", a.json);
    assert_eq!(
        a.id(),
        &id,
        "the answer's id is not the request's: {}",
        a.json
    );
    assert_eq!(
        a.echoed_trace_id(),
        trace,
        "the answer left the caller's trace"
    );
    assert_no_token(&stack, &a);
    // The same call with `X-Caller-System` naming the token's own system is
    // the same call.
    let (named, _) = traced(
        stack
            .a2a("buyercorp", "vendorcorp")
            .header("x-caller-system", "buyercorp")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_eq!(row_count(&named), ORDER_ROWS, "{}", named.json);
}

#[tokio::test]
async fn a2a_auth_rejected_for_a_wrong_token_and_the_same_for_every_provider_path() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let wrong = |provider: &str| {
        stack
            .a2a("buyercorp", provider)
            .header("authorization", "Bearer not-the-token")
            .data("orders.query", count_orders())
    };
    let (known, trace) = traced(wrong("vendorcorp")).await;
    assert_refusal(&stack, &known, &trace, "AUTH_REJECTED", code::AUTH_REJECTED);
    assert_no_row_of_its_own(&stack, &trace).await;
    // The challenge names where a token is got (RFC 9728), for the path
    // the caller asked: it tells nothing the caller did not send.
    let challenge = |provider: &str, presented: bool| {
        let mut c = format!(
            r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/a2a/{provider}""#,
            stack.hub_url()
        );
        if presented {
            c.push_str(r#", error="invalid_token""#);
        }
        c
    };
    assert_eq!(
        known.www_authenticate.as_deref(),
        Some(challenge("vendorcorp", true).as_str()),
        "a 401 without its Bearer challenge"
    );
    // A provider that does not exist answers exactly the same: a caller
    // who is not authenticated learns nothing about what exists.
    let (unknown, trace) = traced(wrong("nosuchcorp")).await;
    assert_refusal(
        &stack,
        &unknown,
        &trace,
        "AUTH_REJECTED",
        code::AUTH_REJECTED,
    );
    assert_no_row_of_its_own(&stack, &trace).await;
    assert_eq!(
        unknown.www_authenticate.as_deref(),
        Some(challenge("nosuchcorp", true).as_str())
    );
    assert_eq!(
        without_ids(&unknown),
        without_ids(&known),
        "the answer tells providers apart"
    );
    // Without any token, the same again, for both paths.
    for provider in ["vendorcorp", "nosuchcorp"] {
        let (none, trace) = traced(
            stack
                .a2a("buyercorp", provider)
                .without_header("authorization")
                .data("orders.query", count_orders()),
        )
        .await;
        assert_refusal(&stack, &none, &trace, "AUTH_REJECTED", code::AUTH_REJECTED);
        assert_no_row_of_its_own(&stack, &trace).await;
        assert_eq!(
            none.www_authenticate.as_deref(),
            Some(challenge(provider, false).as_str())
        );
        assert_eq!(without_ids(&none), without_ids(&known), "{provider}");
    }
    // Another system's token with this caller's name does not work either:
    // tokens are per caller, and a sent X-Caller-System must match.
    let (other, trace) = traced(
        stack
            .a2a("helpdesk", "vendorcorp")
            .header("x-caller-system", "buyercorp")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_refused(&stack, &other, &trace, "AUTH_REJECTED", code::AUTH_REJECTED).await;
    assert!(
        !other.text.contains(&stack.token("helpdesk")),
        "a token leaked into the answer: {}",
        other.text
    );
}

#[tokio::test]
async fn a2a_ip_not_allowed_from_an_address_outside_the_allowlist() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    // buyercorp's allowlist is 127.0.0.1/32; 127.0.0.2 is loopback too, but not on it.
    let (a, trace) = traced(
        stack
            .a2a("buyercorp", "vendorcorp")
            .source_ip("127.0.0.2")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_refused(&stack, &a, &trace, "IP_NOT_ALLOWED", code::IP_NOT_ALLOWED).await;
    // The same call from an allowed address connects: the IP was the only cause.
    let (ok, _) = traced(
        stack
            .a2a("buyercorp", "vendorcorp")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_eq!(row_count(&ok), ORDER_ROWS, "{}", ok.json);
}

#[tokio::test]
async fn a2a_not_permitted_without_a_rule() {
    let stack = Stack::start(vec![PeerSpec::stock("buyercorp")]).await;
    // vendorcorp exists, but no rule lets it consult buyercorp's budget.
    let (a, trace) = traced(stack.a2a("vendorcorp", "buyercorp").data(
        "budget.consult",
        json!({ "question": "what is the marketing budget?" }),
    ))
    .await;
    assert_refused(&stack, &a, &trace, "NOT_PERMITTED", code::NOT_PERMITTED).await;
}

#[tokio::test]
async fn a2a_unknown_peer_for_a_provider_not_in_the_registry() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let (a, trace) = traced(
        stack
            .a2a("buyercorp", "nosuchcorp")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_refused(&stack, &a, &trace, "UNKNOWN_PEER", code::UNKNOWN_PEER).await;
}

#[tokio::test]
async fn a2a_peer_unreachable_when_the_peer_process_is_killed() {
    let mut stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let count = |stack: &Stack| {
        stack
            .a2a("buyercorp", "vendorcorp")
            .data("orders.query", count_orders())
    };
    let (ok, _) = traced(count(&stack)).await;
    assert_eq!(row_count(&ok), ORDER_ROWS, "{}", ok.json);
    stack.kill_peer("vendorcorp");
    let (a, trace) = traced(count(&stack)).await;
    assert_refused(
        &stack,
        &a,
        &trace,
        "PEER_UNREACHABLE",
        code::PEER_UNREACHABLE,
    )
    .await;
    // It comes back: the same call connects once the process is restarted.
    stack.start_peer("vendorcorp").await;
    let (again, _) = traced(count(&stack)).await;
    assert_eq!(row_count(&again), ORDER_ROWS, "{}", again.json);
}

#[tokio::test]
async fn a2a_timeout_when_a_peer_stalls_past_the_deadline_and_others_are_not_delayed() {
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
    let slow = traced(
        stack
            .a2a("buyercorp", "stallcorp")
            .data("orders.query", count_orders()),
    );
    let fast = async {
        // Starts while the slow call is in flight.
        tokio::time::sleep(Duration::from_millis(200)).await;
        traced(
            stack
                .a2a("buyercorp", "vendorcorp")
                .data("orders.query", count_orders()),
        )
        .await
    };
    let ((slow, trace), (fast, _)) = tokio::join!(slow, fast);
    assert_refused(&stack, &slow, &trace, "TIMEOUT", code::TIMEOUT).await;
    assert!(
        slow.elapsed >= DEADLINE - Duration::from_millis(100),
        "gave up early: {:?}",
        slow.elapsed
    );
    assert_eq!(row_count(&fast), ORDER_ROWS, "{}", fast.json);
    assert!(
        fast.elapsed < Duration::from_millis(1_500),
        "a stalled peer delayed a call between other peers: {:?}",
        fast.elapsed
    );
}

#[tokio::test]
async fn a2a_version_unsupported_for_an_unknown_a2a_version() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let (a, trace) = traced(
        stack
            .a2a("buyercorp", "vendorcorp")
            .header("a2a-version", "2.0")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_refused(
        &stack,
        &a,
        &trace,
        "VERSION_UNSUPPORTED",
        code::VERSION_NOT_SUPPORTED,
    )
    .await;
    // The legacy header spelling is read too.
    let (legacy, trace) = traced(
        stack
            .a2a("buyercorp", "vendorcorp")
            .without_header("a2a-version")
            .header("x-a2a-version", "9.9")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_refused(
        &stack,
        &legacy,
        &trace,
        "VERSION_UNSUPPORTED",
        code::VERSION_NOT_SUPPORTED,
    )
    .await;
    let (legacy_ok, _) = traced(
        stack
            .a2a("buyercorp", "vendorcorp")
            .without_header("a2a-version")
            .header("x-a2a-version", "1.0")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_eq!(row_count(&legacy_ok), ORDER_ROWS, "{}", legacy_ok.json);
    // A task operation in an unknown version is refused the same way, by
    // the binding itself (it never becomes a call, so no audit record is
    // asserted here).
    let (task, trace) = traced(
        stack
            .a2a("buyercorp", "vendorcorp")
            .header("a2a-version", "2.0")
            .method("GetTask")
            .params(json!({ "id": "no-such-task" })),
    )
    .await;
    assert_refusal(
        &stack,
        &task,
        &trace,
        "VERSION_UNSUPPORTED",
        code::VERSION_NOT_SUPPORTED,
    );
}

#[tokio::test]
async fn a2a_schema_invalid_when_a_peer_answer_breaks_the_contract() {
    let stack = Stack::start(vec![PeerSpec::clone_of(
        "liarcorp",
        "vendorcorp",
        Faults {
            break_schema: true,
            ..Faults::default()
        },
    )])
    .await;
    let (a, trace) = traced(
        stack
            .a2a("buyercorp", "liarcorp")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_refused(
        &stack,
        &a,
        &trace,
        "SCHEMA_INVALID",
        code::INVALID_AGENT_RESPONSE,
    )
    .await;
    assert!(
        a.json.get("result").is_none(),
        "a broken answer was passed through: {}",
        a.json
    );
}

#[tokio::test]
async fn a2a_peer_error_when_a_peer_returns_an_error() {
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
    let (a, trace) = traced(
        stack
            .a2a("buyercorp", "brokencorp")
            .data("orders.query", count_orders()),
    )
    .await;
    assert_refused(&stack, &a, &trace, "PEER_ERROR", code::INTERNAL_ERROR).await;
}

#[tokio::test]
async fn a2a_peer_error_as_invalid_params_when_the_provider_refuses_the_input() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    // Input the contract allows but the peer refuses (a sum over a text
    // column; the peer answers JSON-RPC -32602) is a peer error too, as
    // the caller's invalid params, and its message names what was wrong.
    let (bad, trace) = traced(stack.a2a("buyercorp", "vendorcorp").data(
        "orders.query",
        json!({ "aggregate": { "op": "sum", "column": "region" } }),
    ))
    .await;
    assert_refused(&stack, &bad, &trace, "PEER_ERROR", code::INVALID_PARAMS).await;
    assert!(bad.message().contains("\"region\" is TEXT"), "{}", bad.json);
}

/// One malformed request and how the surface must answer it.
struct Malformed {
    what: &'static str,
    call: A2aCall,
    http: u16,
    rpc_code: i64,
    reason: &'static str,
    /// The id the answer carries (`null` where the request's could not be read).
    id: Value,
}

#[tokio::test]
async fn a2a_malformed_requests_are_clean_protocol_errors_and_write_nothing() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let base = || stack.a2a("buyercorp", "vendorcorp");
    let send = json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": common::a2a::send_message_params("orders.query", count_orders()),
    });
    let json_body = |v: &Value| v.to_string().into_bytes();
    let mut without_id = send.clone();
    without_id
        .as_object_mut()
        .expect("a request is an object")
        .remove("id");
    let mut wrong_version = send.clone();
    wrong_version["jsonrpc"] = json!("1.0");
    wrong_version["id"] = json!(7);
    // Over 1 MiB, otherwise a good request: the size alone is the fault.
    let mut oversized = send.clone();
    oversized["params"]["message"]["parts"][0]["data"]["input"]["padding"] =
        json!("x".repeat(1024 * 1024 + 16));
    let cases = vec![
        Malformed {
            what: "not JSON",
            call: base().raw_body(&b"{not json"[..], "application/json"),
            http: 200,
            rpc_code: code::PARSE_ERROR,
            reason: "PARSE_ERROR",
            id: Value::Null,
        },
        Malformed {
            what: "an empty body",
            call: base().raw_body(Vec::new(), "application/json"),
            http: 200,
            rpc_code: code::PARSE_ERROR,
            reason: "PARSE_ERROR",
            id: Value::Null,
        },
        Malformed {
            what: "a batch",
            call: base().raw_body(json_body(&json!([send.clone()])), "application/json"),
            http: 200,
            rpc_code: code::INVALID_REQUEST,
            reason: "INVALID_REQUEST",
            id: Value::Null,
        },
        Malformed {
            what: "a notification (no id)",
            call: base().raw_body(json_body(&without_id), "application/json"),
            http: 200,
            rpc_code: code::INVALID_REQUEST,
            reason: "INVALID_REQUEST",
            id: Value::Null,
        },
        Malformed {
            what: "jsonrpc 1.0",
            call: base().raw_body(json_body(&wrong_version), "application/json"),
            http: 200,
            rpc_code: code::INVALID_REQUEST,
            reason: "INVALID_REQUEST",
            id: json!(7),
        },
        Malformed {
            what: "an unknown method",
            call: base()
                .id(json!("m-1"))
                .method("NoSuchMethod")
                .data("orders.query", count_orders()),
            http: 200,
            rpc_code: code::METHOD_NOT_FOUND,
            reason: "METHOD_NOT_FOUND",
            id: json!("m-1"),
        },
        Malformed {
            what: "a v1.0 method name without the version header (a 0.3 request)",
            call: base()
                .id(json!("m-2"))
                .without_header("a2a-version")
                .data("orders.query", count_orders()),
            http: 200,
            rpc_code: code::METHOD_NOT_FOUND,
            reason: "METHOD_NOT_FOUND",
            id: json!("m-2"),
        },
        Malformed {
            what: "params not an object",
            call: base().id(json!(3)).params(json!([1, 2])),
            http: 200,
            rpc_code: code::INVALID_PARAMS,
            reason: "INVALID_PARAMS",
            id: json!(3),
        },
        Malformed {
            what: "params of the wrong shape",
            call: base().id(json!(4)).params(json!({ "message": 5 })),
            http: 200,
            rpc_code: code::INVALID_PARAMS,
            reason: "INVALID_PARAMS",
            id: json!(4),
        },
        Malformed {
            what: "a message without parts or id",
            call: base()
                .id(json!(5))
                .params(json!({ "message": { "role": "ROLE_USER" } })),
            http: 200,
            rpc_code: code::INVALID_PARAMS,
            reason: "INVALID_PARAMS",
            id: json!(5),
        },
        Malformed {
            what: "a body over 1 MiB",
            call: base().raw_body(json_body(&oversized), "application/json"),
            http: 413,
            rpc_code: code::INVALID_REQUEST,
            reason: "INVALID_REQUEST",
            id: Value::Null,
        },
        Malformed {
            what: "Content-Type text/plain",
            call: base().raw_body(json_body(&send), "text/plain"),
            http: 415,
            rpc_code: code::CONTENT_TYPE_NOT_SUPPORTED,
            reason: "CONTENT_TYPE_NOT_SUPPORTED",
            id: Value::Null,
        },
    ];
    let before = stack.hub_audit_count().await;
    for case in cases {
        let (a, trace) = traced(case.call.timeout(Duration::from_secs(10))).await;
        let what = case.what;
        assert_eq!(a.status, case.http, "{what}: {}", a.json);
        assert_eq!(a.code(), case.rpc_code, "{what}: {}", a.json);
        assert_eq!(a.reason(), case.reason, "{what}: {}", a.json);
        assert_eq!(a.domain(), PROTOCOL_DOMAIN, "{what}: {}", a.json);
        assert_eq!(a.id(), &case.id, "{what}: {}", a.json);
        assert_eq!(a.trace_id(), trace, "{what}: {}", a.json);
        assert!(
            a.elapsed < PROMPTLY,
            "{what}: answered after {:?}",
            a.elapsed
        );
        assert!(
            a.content_type
                .as_deref()
                .is_some_and(|c| c.starts_with("application/json")),
            "{what}: answered {:?}",
            a.content_type
        );
        assert_no_token(&stack, &a);
    }
    assert_eq!(
        stack.hub_audit_count().await,
        before,
        "a malformed request wrote an audit record"
    );
    // The hub still answers a good call, and that one is written: the count
    // above is the live trail.
    let (ok, _) = traced(base().data("orders.query", count_orders())).await;
    assert_eq!(row_count(&ok), ORDER_ROWS, "{}", ok.json);
    assert_eq!(stack.hub_audit_count().await, before + 1);
}
