//! The hub fronts MCP like it fronts A2A (NOTES.md, "Data contracts and
//! the data plane"), real processes: the hub, VendorCorp's agent and its MCP
//! data plane (`peer mcp`, a process of its own), and MCP clients this
//! project did not write (the Python `mcp` 2.x SDK) or that it only uses
//! (rmcp's client).
//!
//! - `tools/list` and `tools/call` through `/mcp/vendorcorp` with the
//!   caller's own token; the provider's refusal passes through verbatim as
//!   a tool error, a granted answer carries the aggregate;
//! - the hub's rule and input schema apply (its half of the grant);
//! - a dead data plane is a transport error with a reason code, by the
//!   deadline, never a hang, and distinct from a refusal; a restart
//!   restores service;
//! - no token, no MCP: 401.

mod common;

use common::{repo, PeerSpec, Stack};
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs the official Python MCP SDK against the hub as `caller`.
fn python_mcp(stack: &Stack, caller: &str, calls: &[Value]) -> Value {
    let python = repo().join(".tools/venv-mcp/bin/python");
    assert!(
        python.exists(),
        "{} missing: run scripts/setup",
        python.display()
    );
    let out = Command::new(python)
        .arg(repo().join("hub/tests/clients/mcp_hub_client.py"))
        .arg(format!("{}/mcp/vendorcorp", stack.hub_url()))
        .arg(stack.token(caller))
        .args(calls.iter().map(Value::to_string))
        .output()
        .expect("run the Python mcp client");
    assert!(
        out.status.success(),
        "python mcp failed:\n{}\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        stack.hub_log()
    );
    serde_json::from_slice(&out.stdout).expect("JSON from the client")
}

/// One `tools/call` through the hub with a plain JSON-RPC POST (the
/// stateless server needs no session), as `caller`.
async fn raw_call(stack: &Stack, caller: &str, args: Value) -> (u16, Value, Duration) {
    let answer = stack.mcp_query(caller, args).await;
    (answer.status, answer.body, answer.elapsed)
}

#[tokio::test]
async fn an_independent_mcp_client_gets_a_refusal_and_a_granted_answer_through_the_hub() {
    let stack =
        Stack::start_without_contracts(["vendorcorp", "buyercorp"].map(PeerSpec::stock).to_vec())
            .await;
    let avg = json!({"aggregate": {"op": "avg", "column": "order_value"}, "group_by": "region"});
    // Before a contract: the provider's refusal, verbatim, as a tool error.
    let before = python_mcp(&stack, "buyercorp", std::slice::from_ref(&avg));
    assert_eq!(before["server"], "wall-street-hub", "{before}");
    let tools = before["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 1, "{before}");
    assert_eq!(tools[0]["name"], "query_records");
    assert_eq!(
        tools[0]["input_keys"],
        json!(["aggregate", "filters", "group_by"])
    );
    assert_eq!(before["calls"][0]["is_error"], true, "{before}");
    assert!(
        before["calls"][0]["text"]
            .as_str()
            .unwrap_or("")
            .starts_with("NO_CONTRACT: "),
        "{before}"
    );

    stack
        .negotiate_orders("buyercorp", "vendorcorp", &["region", "order_value"])
        .await;
    let after = python_mcp(
        &stack,
        "buyercorp",
        &[
            avg.clone(),
            json!({"aggregate": {"op": "count"}, "group_by": "order_date"}),
        ],
    );
    let granted = &after["calls"][0];
    assert_eq!(granted["is_error"], false, "{after}");
    assert_eq!(
        granted["structured"]["row_count"].as_f64(),
        Some(624.0),
        "{after}"
    );
    assert_eq!(
        granted["structured"]["groups"].as_array().map(Vec::len),
        Some(4),
        "{after}"
    );
    let denied = &after["calls"][1];
    assert_eq!(denied["is_error"], true, "{after}");
    let words = denied["text"].as_str().unwrap_or("");
    assert!(
        words.starts_with("SCOPE_DENIED: [\"order_date\"] was not granted by contract c-"),
        "{words}"
    );
    assert!(
        words.contains("Granted columns: {\"order_value\", \"region\"}"),
        "{words}"
    );

    // The hub's half: a column outside the capability's input schema never
    // reaches the provider, and is the hub's refusal (an MCP error with the
    // reason code), not a tool result.
    let hub_said_no = python_mcp(
        &stack,
        "buyercorp",
        &[json!({"group_by": "customer_email"})],
    );
    let e = &hub_said_no["calls"][0]["mcp_error"];
    assert_eq!(e["data"]["reason"], "NOT_PERMITTED", "{hub_said_no}");
    // No rule: Helpdesk may not read orders.
    let (_, body, _) = raw_call(&stack, "helpdesk", avg.clone()).await;
    assert_eq!(body["error"]["data"]["reason"], "NOT_PERMITTED", "{body}");
    // No token: 401 before any MCP is read.
    let resp = reqwest::Client::new()
        .post(format!("{}/mcp/vendorcorp", stack.hub_url()))
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .expect("hub answers");
    assert_eq!(resp.status().as_u16(), 401);
    // Every call left a record in the hub's trail under orders.query.
    let store = stack.hub_store().await;
    let details: Vec<(String,)> = sqlx::query_as(
        "SELECT detail FROM audit_trail WHERE capability = 'orders.query' AND caller = 'buyercorp' ORDER BY seq",
    )
    .fetch_all(store.pool())
    .await
    .expect("trail");
    let details: Vec<&str> = details.iter().map(|d| d.0.as_str()).collect();
    assert!(
        details.contains(&"mcp tools/call refused by the provider: NO_CONTRACT"),
        "{details:?}"
    );
    assert!(
        details.contains(&"mcp tools/call refused by the provider: SCOPE_DENIED"),
        "{details:?}"
    );
    assert!(details.contains(&"mcp tools/call"), "{details:?}");

    // The calls share one session with the data plane, and each still
    // reaches it with its own envelope: every request id the hub recorded
    // for a forwarded call is in the data owner's trail, as its caller.
    let forwarded: Vec<(String,)> = sqlx::query_as(
        "SELECT request_id FROM audit_trail WHERE capability = 'orders.query' \
         AND caller = 'buyercorp' AND detail LIKE 'mcp tools/call%'",
    )
    .fetch_all(store.pool())
    .await
    .expect("trail");
    let ids: std::collections::BTreeSet<String> = forwarded.into_iter().map(|r| r.0).collect();
    assert!(ids.len() >= 3, "one request id per call: {ids:?}");
    let plane = exchange::db::Store::open_read_only(&stack.peer_db("vendorcorp"))
        .await
        .expect("the peer's store");
    let seen: Vec<(String, String)> =
        sqlx::query_as("SELECT request_id, caller FROM audit_trail WHERE role = 'responder'")
            .fetch_all(plane.pool())
            .await
            .expect("the peer's trail");
    for id in &ids {
        assert!(
            seen.iter().any(|(r, c)| r == id && c == "buyercorp"),
            "{id} did not reach the data plane as BuyerCorp's: {seen:?}"
        );
    }
}

#[tokio::test]
async fn a_dead_data_plane_is_a_transport_error_by_the_deadline_and_a_restart_restores_it() {
    let mut stack = Stack::start(["vendorcorp", "buyercorp"].map(PeerSpec::stock).to_vec()).await;
    let count = json!({"aggregate": {"op": "count"}, "group_by": "region"});
    let (status, body, _) = raw_call(&stack, "buyercorp", count.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(
        body["result"]["structuredContent"]["row_count"].as_f64(),
        Some(624.0),
        "{body}"
    );

    stack.kill_plane("vendorcorp");
    let (_, body, took) = raw_call(&stack, "buyercorp", count.clone()).await;
    // A transport failure: an MCP error with its reason, not a tool result.
    assert!(body.get("result").is_none(), "{body}");
    assert_eq!(
        body["error"]["data"]["reason"], "PEER_UNREACHABLE",
        "{body}"
    );
    assert!(
        took < Duration::from_millis(2_500),
        "ended by the deadline (2 s), took {took:?}"
    );
    // The agent itself is still up: A2A still answers the same caller.
    let a2a = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(count.clone())
        .send()
        .await;
    assert_eq!(a2a.json["status"], "connected", "{:?}", a2a.json);

    // The prober's identity check (a real tools/list answered by this
    // build) greys out the datasource the plane serves, not the agent.
    let ui = stack.ui().await;
    let datasource = "vendorcorp/datasource/orders-db";
    let (plane, agent) = wait_status(&ui, datasource, "degraded").await;
    assert_eq!(plane["reason"], "PEER_UNREACHABLE", "{plane}");
    assert_eq!(agent["status"], "healthy", "{agent}");

    stack.start_plane("vendorcorp").await;
    let (_, body, _) = raw_call(&stack, "buyercorp", count).await;
    assert_eq!(
        body["result"]["structuredContent"]["row_count"].as_f64(),
        Some(624.0),
        "{body}"
    );
    wait_status(&ui, datasource, "healthy").await;
}

/// Waits until node `id` of the canvas's topology has `status`; answers it
/// and its system's node.
async fn wait_status(ui: &common::UiClient, id: &str, status: &str) -> (Value, Value) {
    let started = Instant::now();
    loop {
        let view = ui.get_json("/api/topology").await;
        let nodes = view["nodes"].as_array().cloned().unwrap_or_default();
        let node = nodes
            .iter()
            .find(|n| n["id"] == id)
            .cloned()
            .unwrap_or(Value::Null);
        let system = nodes
            .iter()
            .find(|n| n["id"] == node["system"])
            .cloned()
            .unwrap_or(Value::Null);
        if node["status"] == status {
            return (node, system);
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{id} never became {status}: {node}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
