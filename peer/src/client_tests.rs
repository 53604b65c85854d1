//! `peer call` against a fake hub: the envelope it sends, the inbox it
//! fills, and a hub that answers not-connected or not at all.

use super::*;
use crate::Token;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn call(hub_url: String) -> HubCall {
    HubCall {
        hub_url,
        bearer: Token::new("buyer-token").into(),
        caller: "buyercorp".into(),
        provider: "vendorcorp".into(),
        capability: "budget.consult".into(),
        input: json!({"question": "raise marketing budget to 150000"}),
        request_id: "req-7".into(),
        traceparent: TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .unwrap(),
        timeout: Duration::from_secs(5),
        context_id: None,
    }
}

/// A stand-in hub gateway that records the headers it saw.
async fn fake_hub(answer: Value, status: u16) -> (String, Arc<Mutex<Option<HeaderMap>>>) {
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    let app = Router::new().route(
        "/a2a/{provider}",
        post(move |headers: HeaderMap, Json(_body): Json<Value>| {
            let answer = answer.clone();
            let s = s.clone();
            async move {
                *s.lock().unwrap() = Some(headers);
                (
                    axum::http::StatusCode::from_u16(status).unwrap(),
                    Json(answer),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), seen)
}

async fn store() -> (AuditTrail, Inbox) {
    let store = exchange::db::memory().await.unwrap();
    (
        AuditTrail::open(store.clone(), "buyercorp"),
        Inbox::open(store, std::sync::Arc::new(exchange::inbox::NoLocalActions)),
    )
}

#[tokio::test]
async fn connected_call_sends_the_envelope_and_fills_the_inbox() {
    let (url, seen) = fake_hub(
        json!({"jsonrpc": "2.0", "id": "req-7", "result": {"message": {
            "messageId": "a-1", "role": "ROLE_AGENT", "parts": [{"data":
                {"department": "marketing", "proposed_actions": [
                   {"action_type": "set_budget", "target": "marketing", "parameters": {"amount": 150000.0}, "rationale": "r"}]}}]}}}),
        200,
    )
    .await;
    let (trail, inbox) = store().await;
    let (answer, ids) = call_and_record(&http_client(), &call(url), &trail, &inbox)
        .await
        .unwrap();
    assert!(answer.connected());
    assert_eq!(ids.len(), 1);
    let h = seen.lock().unwrap().clone().unwrap();
    assert_eq!(h["authorization"], "Bearer buyer-token");
    assert_eq!(h["x-caller-system"], "buyercorp");
    assert_eq!(h["a2a-version"], "1.0");
    assert_eq!(h["x-request-id"], "req-7");
    assert!(h["traceparent"]
        .to_str()
        .unwrap()
        .contains("4bf92f3577b34da6a3ce929d0e0e4736"));
    let rec = trail
        .by_trace("4bf92f3577b34da6a3ce929d0e0e4736")
        .await
        .unwrap();
    assert_eq!(rec.len(), 1);
    assert_eq!(
        (rec[0].role, rec[0].outcome),
        (Role::Caller, Outcome::Connected)
    );
    assert_eq!(inbox.list(None).await.unwrap()[0].from_system, "vendorcorp");
}

#[tokio::test]
async fn not_connected_and_unreachable_hub() {
    let (url, _) = fake_hub(
        json!({"jsonrpc": "2.0", "id": "req-7", "error": {"code": -32015, "message": "deadline 2000ms",
            "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TIMEOUT",
                      "domain": "wall-street.exchange", "metadata": {"traceId": "t"}}]}}),
        504,
    )
    .await;
    let (trail, inbox) = store().await;
    let (answer, _) = call_and_record(&http_client(), &call(url), &trail, &inbox)
        .await
        .unwrap();
    assert!(matches!(
        answer.result,
        CallResult::NotConnected {
            reason: ReasonCode::Timeout,
            ..
        }
    ));
    assert_eq!(answer.http_status, Some(504));

    // Nothing listens on this port (bound then dropped).
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let answer = call_via_hub(&http_client(), &call(format!("http://{addr}"))).await;
    assert!(matches!(
        answer.result,
        CallResult::NotConnected {
            reason: ReasonCode::PeerUnreachable,
            ..
        }
    ));
    assert_eq!(answer.body["status"], "not_connected");
    assert_eq!(answer.body["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");

    let (url, _) = fake_hub(json!({"hello": "world"}), 200).await;
    let answer = call_via_hub(&http_client(), &call(url)).await;
    assert!(matches!(
        answer.result,
        CallResult::NotConnected {
            reason: ReasonCode::PeerError,
            ..
        }
    ));
}

#[test]
fn the_hubs_a2a_answers_read_as_labelled_results() {
    let c = call("http://unused".into());
    let data = json!({"department": "marketing"});
    let replayed = json!({"jsonrpc": "2.0", "id": "req-7", "result": {"message": {
        "messageId": "a", "role": "ROLE_AGENT", "metadata": {"replayed": true},
        "parts": [{"data": data}]}}});
    assert!(matches!(
        read_answer(&c, 200, &replayed),
        CallResult::Connected { replayed: true, ref result, .. } if *result == data
    ));
    let task = json!({"jsonrpc": "2.0", "id": "req-7", "result": {"task": {
        "id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"data": data}]}]}}});
    assert!(matches!(
        read_answer(&c, 200, &task),
        CallResult::Connected { replayed: false, ref result, .. } if *result == data
    ));
    let no_info =
        json!({"jsonrpc": "2.0", "id": "req-7", "error": {"code": -32601, "message": "no method"}});
    assert!(matches!(
        read_answer(&c, 200, &no_info),
        CallResult::NotConnected { reason: ReasonCode::PeerError, ref detail, .. } if detail == "no method"
    ));
    for garbage in [
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"result": {"nope": 1}}),
    ] {
        assert!(matches!(
            read_answer(&c, 200, &garbage),
            CallResult::NotConnected {
                reason: ReasonCode::PeerError,
                ..
            }
        ));
    }
}
