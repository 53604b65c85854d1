//! Quotas per edge (`hub/src/quotas.rs`): a rule's `rate_limit` and
//! `daily_quota`, enforced by the real hub on real peers, through
//! `/gateway/v1` and the A2A bindings, and across two replicas behind
//! nginx on one PostgreSQL database.
//!
//! Covered: the call over a limit is refused `NOT_PERMITTED` with HTTP
//! 429, `Retry-After` and `retryAfter`, before it is forwarded (the
//! provider's own trail shows only the admitted calls); each consumer has
//! its own count; the next window admits again; a daily quota's
//! `retryAfter` reaches at most the next UTC midnight, and an MCP
//! `tools/call` counts against the data-share it reads; two replicas share
//! one count.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::a2a::send_message_params;
use common::{GatewayCall, Stack};
use serde_json::{json, Value};

const COUNT_BY_REGION: &str = r#"{"aggregate":{"op":"count"},"group_by":"region"}"#;

fn count_by_region() -> Value {
    serde_json::from_str(COUNT_BY_REGION).expect("json")
}

/// Now, in Unix seconds (fractional).
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Waits until a fixed window of `seconds` has just begun, unless at
/// least `need` seconds of the current one are left: the calls that follow
/// all land in one window.
async fn within_one_window(seconds: u64, need: f64) {
    let into = unix_now() % seconds as f64;
    if seconds as f64 - into < need {
        let wait = seconds as f64 - into + 0.05;
        tokio::time::sleep(Duration::from_secs_f64(wait)).await;
    }
}

/// What the hub answered a request, with the `Retry-After` header.
#[derive(Debug)]
struct Reply {
    status: u16,
    retry_after: Option<u64>,
    json: Value,
}

/// Sends a `/gateway/v1` call, keeping the headers `GatewayCall::send`
/// does not.
async fn send(call: GatewayCall) -> Reply {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let mut req = client.post(&call.url).json(&call.body);
    for (n, v) in &call.headers {
        req = req.header(n.as_str(), v.as_str());
    }
    reply(req.send().await.expect("the hub answers every call")).await
}

async fn reply(resp: reqwest::Response) -> Reply {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    let json = resp.json().await.expect("the hub answers JSON");
    Reply {
        status,
        retry_after,
        json,
    }
}

/// BuyerCorp's `orders.query` of VendorCorp through `/gateway/v1`, at
/// the stack's hub (or balancer).
async fn buyer_query(stack: &Stack) -> Reply {
    send(
        stack
            .call("buyercorp", "vendorcorp", "orders.query")
            .body(count_by_region()),
    )
    .await
}

/// The same call as a `message:send` of the A2A HTTP+JSON binding.
async fn buyer_rest_query(stack: &Stack) -> Reply {
    let resp = reqwest::Client::new()
        .post(format!(
            "{}/a2a/vendorcorp/rest/message:send",
            stack.hub_url()
        ))
        .bearer_auth(stack.token("buyercorp"))
        .header("a2a-version", "1.0")
        .json(&send_message_params("orders.query", count_by_region()))
        .send()
        .await
        .expect("the hub answers");
    reply(resp).await
}

/// Sets `limits` (`rate_limit`, `daily_quota`) on the rule of VendorCorp's
/// `orders.query` and waits until every hub process has reloaded it.
async fn limit_orders(stack: &mut Stack, limits: Value, replicas: usize) {
    let before = reloads(stack, replicas);
    {
        let rules = stack.topology_mut()["rules"]
            .as_sequence_mut()
            .expect("rules");
        let rule = rules
            .iter_mut()
            .find(|r| r["capability"].as_str() == Some("orders.query"))
            .expect("the orders.query rule");
        let m = rule.as_mapping_mut().expect("a rule is a mapping");
        for (k, v) in limits.as_object().expect("limits").clone() {
            m.insert(
                serde_yaml_ng::Value::from(k),
                serde_yaml_ng::to_value(v).expect("yaml"),
            );
        }
    }
    stack.write_topology();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let now = reloads(stack, replicas);
        if now.iter().zip(&before).all(|(n, b)| n > b) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the hub did not reload the topology:\n{}",
            stack.hub_log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How often each hub process has logged a topology reload.
fn reloads(stack: &Stack, replicas: usize) -> Vec<usize> {
    let logs: Vec<String> = if replicas > 1 {
        (0..replicas)
            .map(|i| std::fs::read_to_string(stack.replica_log(i)).unwrap_or_default())
            .collect()
    } else {
        vec![stack.hub_log()]
    };
    logs.iter()
        .map(|log| log.matches("topology reloaded").count())
        .collect()
}

/// BuyerCorp's `orders.query` calls in VendorCorp's own trail.
async fn executed_for_buyer(stack: &Stack) -> usize {
    let trail = common::trail(&stack.peer_db("vendorcorp"), "vendorcorp").await;
    trail
        .recent(10_000)
        .await
        .expect("vendorcorp's trail")
        .iter()
        .filter(|r| r.caller == "buyercorp" && r.capability == "orders.query")
        .count()
}

/// Asserts that `r` is a refusal over a quota, answered as 429 with a
/// `Retry-After` equal to the JSON's `retryAfter`; that value.
fn refused_over_quota(r: &Reply, what: &str) -> u64 {
    assert_eq!(r.status, 429, "{what}: {r:?}");
    assert_eq!(r.json["status"], "not_connected", "{what}: {r:?}");
    assert_eq!(r.json["reason"], "NOT_PERMITTED", "{what}: {r:?}");
    let seconds = r.json["retryAfter"]
        .as_u64()
        .unwrap_or_else(|| panic!("{what}: no integer retryAfter: {r:?}"));
    assert_eq!(r.retry_after, Some(seconds), "{what}: {r:?}");
    assert!(seconds >= 1, "{what}: {r:?}");
    seconds
}

#[tokio::test]
async fn a_rate_limit_refuses_the_call_over_it_before_forwarding() {
    let mut stack = Stack::demo().await;
    limit_orders(
        &mut stack,
        json!({"rate_limit": {"calls": 5, "seconds": 3}}),
        1,
    )
    .await;
    let ui = stack.ui().await;
    let ui = &ui;
    let hub_query = || async move {
        let path = "/api/edges/buyercorp-%3Evendorcorp:orders.query/query";
        let body = json!({"op": "count", "column": null, "group_by": null});
        let (status, text) = ui.send(reqwest::Method::POST, path, &body).await;
        assert_eq!(status, 200, "{text}");
        let view: Value = serde_json::from_str(&text).expect("a query view");
        assert_eq!(
            view["outcome"]["status"], "connected",
            "the hub's own count is its own: {view}"
        );
    };
    let executed_before = executed_for_buyer(&stack).await;

    within_one_window(3, 2.5).await;
    let started = Instant::now();
    for i in 0..4 {
        let r = buyer_query(&stack).await;
        assert_eq!(
            (r.status, &r.json["status"]),
            (200, &json!("connected")),
            "call {i}: {r:?}"
        );
    }
    // Another consumer of the same rule counts apart: neither uses up the
    // other's calls.
    hub_query().await;
    let fifth = buyer_query(&stack).await;
    assert_eq!(fifth.json["status"], "connected", "{fifth:?}");

    let sixth = buyer_query(&stack).await;
    let within = started.elapsed();
    let seconds = refused_over_quota(&sixth, "the sixth call");
    assert!(seconds <= 3, "{sixth:?}");
    let detail = sixth.json["detail"].as_str().unwrap_or_default();
    assert!(
        detail.starts_with(
            "over the rate limit of 5 calls per 3 s for orders.query at vendorcorp; retry after"
        ),
        "{detail}"
    );
    // The A2A HTTP+JSON binding is refused the same way, with the reason
    // code and retryAfter in its ErrorInfo.
    let rest = buyer_rest_query(&stack).await;
    assert_eq!(rest.status, 429, "{rest:?}");
    assert!(rest.retry_after.is_some_and(|s| s <= 3), "{rest:?}");
    let info = &rest.json["error"]["details"][0];
    assert_eq!(info["reason"], "NOT_PERMITTED", "{rest:?}");
    assert_eq!(
        info["metadata"]["retryAfter"],
        json!(rest.retry_after.map(|s| s.to_string())),
        "{rest:?}"
    );
    assert_eq!(
        rest.json["error"]["status"], "RESOURCE_EXHAUSTED",
        "{rest:?}"
    );
    hub_query().await;
    assert!(
        within < Duration::from_millis(2_900),
        "the calls spread over two windows ({within:?}): the machine is too slow for this test"
    );

    // Nothing refused reached VendorCorp.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(executed_for_buyer(&stack).await - executed_before, 5);
    // The hub's trail records the refusals like any other.
    let hub = stack.hub_trail().await;
    let refusals = hub
        .recent(50)
        .await
        .expect("hub trail")
        .into_iter()
        .filter(|r| r.caller == "buyercorp" && r.detail.starts_with("over the rate limit"))
        .count();
    assert_eq!(refusals, 2, "the gateway's and the binding's refusals");

    // After the window, calls connect again.
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let again = buyer_query(&stack).await;
    assert_eq!(again.json["status"], "connected", "{again:?}");
    let again = buyer_rest_query(&stack).await;
    assert_eq!(again.status, 200, "{again:?}");
}

#[tokio::test]
async fn a_daily_quota_refuses_until_the_next_utc_midnight() {
    let mut stack = Stack::demo().await;
    limit_orders(&mut stack, json!({"daily_quota": 3}), 1).await;
    // Not across a midnight.
    within_one_window(86_400, 60.0).await;
    for i in 0..2 {
        let r = buyer_query(&stack).await;
        assert_eq!(r.json["status"], "connected", "call {i}: {r:?}");
    }
    // An MCP `tools/call` of VendorCorp's data plane is a call of the
    // data-share it serves: the third of the day.
    let mcp = buyer_mcp_query(&stack).await;
    assert!(
        mcp["result"].is_object() && mcp["result"]["isError"] != true,
        "{mcp}"
    );
    let to_midnight = 86_400.0 - unix_now() % 86_400.0;
    let fourth = buyer_query(&stack).await;
    let seconds = refused_over_quota(&fourth, "the fourth call");
    assert!(
        seconds as f64 <= to_midnight.ceil() && seconds as f64 >= to_midnight - 5.0,
        "retryAfter {seconds} s, {to_midnight} s to midnight: {fourth:?}"
    );
    let detail = fourth.json["detail"].as_str().unwrap_or_default();
    assert!(
        detail.starts_with(
            "over the daily quota of 3 calls (per UTC day) for orders.query at vendorcorp"
        ),
        "{detail}"
    );
    // JSON-RPC answers the refusal in its error, HTTP 200 as for every
    // JSON-RPC error, with retryAfter in the ErrorInfo.
    let rpc = stack
        .a2a("buyercorp", "vendorcorp")
        .data("orders.query", count_by_region())
        .send()
        .await;
    assert_eq!(rpc.status, 200, "{}", rpc.json);
    assert_eq!(rpc.reason(), "NOT_PERMITTED", "{}", rpc.json);
    let info = rpc.error_info();
    let after: u64 = info["metadata"]["retryAfter"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no retryAfter: {}", rpc.json));
    assert!(after as f64 <= to_midnight.ceil(), "{}", rpc.json);
    // The MCP door is refused too, with the reason code and the detail.
    let mcp = buyer_mcp_query(&stack).await;
    assert_eq!(mcp["error"]["data"]["reason"], "NOT_PERMITTED", "{mcp}");
    assert!(
        mcp["error"]["data"]["retryAfter"]
            .as_u64()
            .is_some_and(|s| s > 0),
        "{mcp}"
    );
    assert!(
        mcp["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("over the daily quota of 3 calls")),
        "{mcp}"
    );
}

/// BuyerCorp's `query_records` of VendorCorp's data plane through the
/// hub's MCP front (one stateless JSON-RPC POST): the answer's body.
async fn buyer_mcp_query(stack: &Stack) -> Value {
    stack.mcp_query("buyercorp", count_by_region()).await.body
}

#[tokio::test]
async fn two_replicas_share_one_count() {
    let mut stack = Stack::start_replicas(2, &[]).await;
    limit_orders(
        &mut stack,
        json!({"rate_limit": {"calls": 6, "seconds": 30}}),
        2,
    )
    .await;
    within_one_window(30, 15.0).await;
    let replies = futures::future::join_all((0..12).map(|_| buyer_query(&stack))).await;
    let connected = replies
        .iter()
        .filter(|r| r.json["status"] == "connected")
        .count();
    assert_eq!(connected, 6, "{replies:#?}");
    for r in replies.iter().filter(|r| r.json["status"] != "connected") {
        refused_over_quota(r, "a call over the shared limit");
    }
    // Each replica, asked directly, reads the same count.
    for i in 0..2 {
        let mut call = stack
            .call("buyercorp", "vendorcorp", "orders.query")
            .body(count_by_region());
        call.url = call.url.replace(&stack.hub_url(), &stack.replica_url(i));
        let r = send(call).await;
        refused_over_quota(&r, &format!("replica {i}"));
    }
}
