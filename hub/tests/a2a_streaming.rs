//! Streaming through the hub's A2A surface (A2A v1.0 §3.1.2, §3.1.6): a
//! provider that does not stream is still reachable by `SendStreamingMessage`
//! (its answer is the stream's one event, after the same checks as a
//! `SendMessage`), over JSON-RPC in v1.0 and v0.3 and over HTTP+JSON, and a
//! subscription to a task that has ended is `UnsupportedOperationError`.

mod common;

use common::a2a::{send_message_params, sse_events};
use common::{PeerSpec, Stack};
use serde_json::json;

#[tokio::test]
async fn a_streaming_message_is_one_event_after_the_same_checks() {
    let stack = Stack::demo().await;
    let count = json!({"aggregate": {"op": "count"}});

    // v1.0 JSON-RPC: one event, a JSON-RPC response wrapping the Message.
    let events = stack
        .a2a("buyercorp", "vendorcorp")
        .method("SendStreamingMessage")
        .params(send_message_params("orders.query", count.clone()))
        .send_stream()
        .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["jsonrpc"], "2.0");
    assert_eq!(
        events[0]["result"]["message"]["parts"][0]["data"]["row_count"].as_f64(),
        Some(624.0),
        "{events:?}"
    );

    // A refusal is a plain JSON-RPC error, not a stream.
    let refused = stack
        .a2a("buyercorp", "vendorcorp")
        .method("SendStreamingMessage")
        .params(send_message_params(
            "orders.query",
            json!({"aggregate": {"op": "sum", "column": "customer_email"}}),
        ))
        .send()
        .await;
    assert_eq!(refused.reason(), "NOT_PERMITTED", "{}", refused.json);

    // v0.3 (no A2A-Version header): `message/stream`, the event in v0.3 shape.
    let v03 = stack
        .a2a("buyercorp", "vendorcorp")
        .without_header("a2a-version")
        .method("message/stream")
        .params(
            json!({"message": {"kind": "message", "messageId": "m-03", "role": "user",
            "parts": [{"kind": "data", "data": {"capability": "orders.query", "input": count}}]}}),
        )
        .send_stream()
        .await;
    assert_eq!(v03.len(), 1, "{v03:?}");
    assert_eq!(v03[0]["result"]["kind"], "message", "{v03:?}");
    assert_eq!(v03[0]["result"]["role"], "agent");
    assert_eq!(v03[0]["result"]["parts"][0]["kind"], "data");

    // HTTP+JSON: `message:stream`, the StreamResponse itself per event.
    let client = reqwest::Client::new();
    let text = client
        .post(format!(
            "{}/a2a/vendorcorp/rest/message:stream",
            stack.hub_url()
        ))
        .bearer_auth(stack.token("buyercorp"))
        .header("a2a-version", "1.0")
        .json(&send_message_params(
            "orders.query",
            json!({"aggregate": {"op": "count"}}),
        ))
        .send()
        .await
        .expect("the hub answers")
        .text()
        .await
        .expect("the stream ends");
    let data = sse_events(&text);
    assert_eq!(data.len(), 1, "{text}");
    assert!(
        data[0]["message"]["parts"][0]["data"]["row_count"].is_number(),
        "{text}"
    );
}

#[tokio::test]
async fn subscribing_to_a_task_that_has_ended_is_unsupported() {
    let stack = Stack::start(vec![
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    let task = stack
        .a2a("buyercorp", "helpdesk")
        .data("ticket.classify", json!({"ticket_id": "T-1003"}))
        .send()
        .await;
    let id = task.result()["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string();
    assert_eq!(
        task.result()["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let sub = stack
        .a2a("buyercorp", "helpdesk")
        .method("SubscribeToTask")
        .params(json!({"id": id}))
        .send()
        .await;
    assert_eq!(sub.code(), -32004, "{}", sub.json);
    // Another caller's subscription to it: the task does not exist for it.
    let other = stack
        .a2a("helpdesk", "helpdesk")
        .method("SubscribeToTask")
        .params(json!({"id": id}))
        .send()
        .await;
    assert_eq!(other.code(), -32001, "{}", other.json);
}
