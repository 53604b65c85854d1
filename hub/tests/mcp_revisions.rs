//! MCP's 2026-07-28 revision through the hub's MCP front, beside
//! 2025-11-25 (NOTES "Data contracts", "MCP revisions"), with plain HTTP so
//! every header and `_meta` key is the test's own: no `initialize`,
//! `server/discover`, `resultType` on every result, the `Mcp-Method` /
//! `Mcp-Name` headers checked against the body before anything is
//! forwarded, versions refused cleanly, the trace carried in `_meta`, and
//! the data owner's four refusals reaching the client as tool errors.
//! (A client as published on the new revision, fastmcp, is in
//! `outside_clients.rs`.)

mod common;

use common::{PeerSpec, Stack};
use serde_json::{json, Value};
use std::time::Duration;

const NEW: &str = "2026-07-28";

/// The self-contained request metadata of the new revision.
fn meta(version: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-revisions-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// One JSON-RPC request to `/mcp/vendorcorp`: `method`, `params` (given
/// the new revision's `_meta` unless they carry one), the standard headers
/// for that method unless `headers` replaces them (an empty value leaves
/// the header out); status and body.
async fn mcp(
    stack: &Stack,
    token: Option<&str>,
    method: &str,
    mut params: Value,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(NEW);
    }
    let name = params["name"].as_str().map(str::to_string);
    let mut standard = vec![
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", NEW),
        ("mcp-method", method),
    ];
    if let Some(name) = &name {
        standard.push(("mcp-name", name.as_str()));
    }
    let mut req = reqwest::Client::new()
        .post(format!("{}/mcp/vendorcorp", stack.hub_url()))
        .timeout(Duration::from_secs(15));
    for (k, v) in &standard {
        // A header the caller gives replaces the standard one.
        if !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)) {
            req = req.header(*k, *v);
        }
    }
    for (k, v) in headers.iter().filter(|(_, v)| !v.is_empty()) {
        req = req.header(*k, *v);
    }
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
        .send()
        .await
        .expect("the hub answers");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, body)
}

fn call(arguments: Value) -> Value {
    json!({"name": "query_records", "arguments": arguments})
}

/// The refusal word a tool error starts with.
fn refusal(body: &Value) -> String {
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert_eq!(body["result"]["resultType"], "complete", "{body}");
    body["result"]["content"][0]["text"]
        .as_str()
        .and_then(|t| t.split(':').next())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_2026_07_28_client_needs_no_initialize_and_meets_the_same_rules() {
    let mut stack =
        Stack::start_without_contracts(["vendorcorp", "buyercorp"].map(PeerSpec::stock).to_vec())
            .await;
    let buyer = stack.token("buyercorp");
    let token = Some(buyer.as_str());

    let (status, discover) = mcp(&stack, token, "server/discover", json!({}), &[]).await;
    assert_eq!(status, 200, "{discover}");
    let versions = discover["result"]["supportedVersions"].to_string();
    assert!(
        versions.contains(NEW) && versions.contains("2025-11-25"),
        "{discover}"
    );
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "wall-street-hub",
        "{discover}"
    );
    assert_eq!(discover["result"]["resultType"], "complete", "{discover}");

    let (_, tools) = mcp(&stack, token, "tools/list", json!({}), &[]).await;
    assert_eq!(
        tools["result"]["tools"][0]["name"], "query_records",
        "{tools}"
    );
    assert_eq!(tools["result"]["resultType"], "complete", "{tools}");

    // The data owner's refusals, verbatim, as tool errors: no contract yet.
    let avg = json!({"aggregate": {"op": "avg", "column": "order_value"}, "group_by": "region"});
    let (_, body) = mcp(&stack, token, "tools/call", call(avg.clone()), &[]).await;
    assert_eq!(refusal(&body), "NO_CONTRACT");

    stack
        .negotiate_orders("buyercorp", "vendorcorp", &["region", "order_value"])
        .await;
    // Granted, complete, with the trace the request's `_meta` carried.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let mut traced_call = call(avg.clone());
    traced_call["_meta"] = meta(NEW);
    traced_call["_meta"]["traceparent"] = json!(format!("00-{trace_id}-00f067aa0ba902b7-01"));
    let (_, granted) = mcp(&stack, token, "tools/call", traced_call, &[]).await;
    assert_eq!(granted["result"]["isError"], false, "{granted}");
    assert_eq!(granted["result"]["resultType"], "complete", "{granted}");
    assert_eq!(
        granted["result"]["structuredContent"]["row_count"].as_f64(),
        Some(624.0),
        "{granted}"
    );
    let traced: Vec<(String,)> = sqlx::query_as(
        "SELECT detail FROM audit_trail WHERE trace_id = $1 AND capability = 'orders.query'",
    )
    .bind(trace_id)
    .fetch_all(stack.hub_store().await.pool())
    .await
    .expect("trail");
    assert_eq!(
        traced.len(),
        1,
        "the call's record carries the _meta trace: {traced:?}"
    );

    let (_, body) = mcp(
        &stack,
        token,
        "tools/call",
        call(json!({"aggregate": {"op": "count"}, "group_by": "product"})),
        &[],
    )
    .await;
    assert_eq!(refusal(&body), "SCOPE_DENIED");

    // A column the hub's input schema allows but the dataset lacks: the
    // data owner's UNKNOWN_COLUMN (the hub's schema is widened to let it
    // through, as a registry that drifted from the dataset would).
    for cap in stack.topology_mut()["capabilities"]
        .as_sequence_mut()
        .expect("capabilities")
    {
        if cap["id"] == "orders.query" {
            cap["input_schema"]["properties"]["group_by"]["enum"]
                .as_sequence_mut()
                .expect("an enum")
                .push(serde_yaml_ng::Value::from("discount"));
        }
    }
    stack.write_topology();
    let mut word = String::new();
    for _ in 0..100 {
        let (_, body) = mcp(
            &stack,
            token,
            "tools/call",
            call(json!({"aggregate": {"op": "count"}, "group_by": "discount"})),
            &[],
        )
        .await;
        if body["result"].is_object() {
            word = refusal(&body);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(word, "UNKNOWN_COLUMN");

    // An expired contract.
    let peer = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        stack.peer_db("vendorcorp").display()
    ))
    .await
    .expect("the provider's file");
    sqlx::query("UPDATE contracts SET expires_at = '2020-01-01T00:00:00+00:00'")
        .execute(&peer)
        .await
        .expect("expire");
    let (_, body) = mcp(&stack, token, "tools/call", call(avg), &[]).await;
    assert_eq!(refusal(&body), "CONTRACT_EXPIRED");
}

#[tokio::test]
async fn headers_that_disagree_and_versions_the_hub_does_not_speak_are_refused_before_anything_is_forwarded(
) {
    let stack = Stack::start(["vendorcorp", "buyercorp"].map(PeerSpec::stock).to_vec()).await;
    let buyer = stack.token("buyercorp");
    let token = Some(buyer.as_str());
    let avg = json!({"aggregate": {"op": "avg", "column": "order_value"}, "group_by": "region"});
    // Warm: one granted call, so the counts below start from a working edge.
    let (_, ok) = mcp(&stack, token, "tools/call", call(avg.clone()), &[]).await;
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    let before = stack.hub_audit_count().await;

    for (why, headers) in [
        (
            "Mcp-Method names another method",
            vec![("Mcp-Method", "tools/list")],
        ),
        (
            "Mcp-Name names another tool",
            vec![("Mcp-Name", "drop_tables")],
        ),
        (
            "an unknown version",
            vec![("MCP-Protocol-Version", "2099-01-01")],
        ),
    ] {
        let (status, body) = mcp(&stack, token, "tools/call", call(avg.clone()), &headers).await;
        assert_eq!(status, 400, "{why}: {body}");
        assert!(body["error"].is_object(), "{why}: {body}");
    }
    // An unknown version in `_meta` only (the header says the new one).
    let mut unknown_meta = call(avg.clone());
    unknown_meta["_meta"] = meta("2099-01-01");
    let (status, body) = mcp(&stack, token, "tools/call", unknown_meta, &[]).await;
    assert!(
        status >= 400 || body["error"].is_object(),
        "an unknown _meta version: {status} {body}"
    );
    // A 2026-07-28 request (its `_meta` says so) without the
    // `MCP-Protocol-Version` header, and one with the header but no version
    // in `_meta`: both refused. (A request that names no revision anywhere
    // is 2025-03-26, as the specification says.)
    for (header, meta_version) in [("", NEW), (NEW, "")] {
        let mut params = call(avg.clone());
        params["_meta"] = meta(meta_version);
        if meta_version.is_empty() {
            params["_meta"]
                .as_object_mut()
                .map(|m| m.remove("io.modelcontextprotocol/protocolVersion"));
        }
        let (status, body) = mcp(
            &stack,
            token,
            "tools/call",
            params,
            &[("mcp-protocol-version", header)],
        )
        .await;
        assert!(
            body["error"].is_object() && body.get("result").is_none(),
            "header {header:?}, _meta version {meta_version:?}: {status} {body}"
        );
    }
    // No token: 401 before any MCP is read, the reason in the JSON-RPC
    // error's data.
    let (status, body) = mcp(&stack, None, "tools/call", call(avg.clone()), &[]).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["data"]["reason"], "AUTH_REJECTED", "{body}");
    // A provider without a data plane: 404 with its reason.
    let resp = reqwest::Client::new()
        .post(format!("{}/mcp/buyercorp", stack.hub_url()))
        .bearer_auth(&buyer)
        .header("Accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .expect("the hub answers");
    assert_eq!(resp.status().as_u16(), 404);
    let body: Value = resp.json().await.unwrap_or_default();
    assert_eq!(body["error"]["data"]["reason"], "UNKNOWN_PEER", "{body}");

    // None of them reached the gateway: no record, nothing at the provider.
    assert_eq!(
        stack.hub_audit_count().await,
        before,
        "a refused request left a record"
    );
}
