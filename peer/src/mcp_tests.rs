//! The MCP data plane over plain HTTP: health, auth, the tool list and each
//! decision of a `query_records` call against the caller's contract.

use super::*;
use crate::contracts::Contract;
use chrono::{Duration, Utc};
use exchange::negotiation::Scope;

const TOKEN: &str = "test-token-vendorcorp";

const VENDOR: &str = r#"
system: vendorcorp
name: VendorCorp
listen: 127.0.0.1:0
token_env: WS_TOKEN_VENDORCORP
hub_url: http://127.0.0.1:3000
database: unused.db
dataset: { kind: orders, seed: 42, rows: 624 }
skills:
  - { capability: orders.query, kind: data-share, handler: table_query, table: orders,
      negotiable_columns: [region, order_date, order_value, product] }
mcp: { listen: 127.0.0.1:3111, capability: orders.query }
"#;

struct Fixture {
    plane: RunningPlane,
    state: Arc<PeerState>,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

async fn start_plane() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = PeerConfig::parse(VENDOR, "test.yaml").unwrap();
    let state = Arc::new(
        PeerState::open(config, Token::new(TOKEN), &dir.path().join("peer.db"))
            .await
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plane = start(state.clone(), listener).unwrap();
    Fixture {
        plane,
        state,
        http: reqwest::Client::new(),
        _dir: dir,
    }
}

/// One MCP JSON-RPC POST the way a plain HTTP client sends it.
async fn post(f: &Fixture, token: Option<&str>, caller: &str, body: Value) -> (u16, Value) {
    let mut req = f
        .http
        .post(format!("{}{MCP_PATH}", f.plane.base_url()))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("x-caller-system", caller)
        .header("x-request-id", "req-mcp-1")
        .header(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        .json(&body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn call(arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": TOOL_NAME, "arguments": arguments}})
}

async fn grant(state: &PeerState, consumer: &str, expires_in: Duration) -> String {
    let now = Utc::now();
    let id = format!("c-{consumer:0>12}")
        .chars()
        .take(14)
        .collect::<String>();
    state
        .contracts
        .grant(&Contract {
            id: id.clone(),
            capability: "orders.query".into(),
            provider: "vendorcorp".into(),
            consumer: consumer.into(),
            scope: Scope {
                columns: vec!["region".into(), "order_value".into()],
                purpose: "average order value by region".into(),
                retention_days: 30,
            },
            context_id: format!("ctx-{consumer}"),
            granted_at: now - Duration::days(1),
            expires_at: now + expires_in,
        })
        .await
        .unwrap();
    id
}

#[tokio::test]
async fn health_auth_list_and_each_decision_over_plain_http() {
    let f = start_plane().await;
    let health: Value = f
        .http
        .get(format!("http://{}/health", f.plane.addr))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        health,
        json!({"service": "wall-street-peer", "system": "vendorcorp", "name": "VendorCorp",
               "version": VERSION, "plane": "mcp"})
    );

    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let (status, body) = post(&f, None, "buyercorp", list.clone()).await;
    assert_eq!(status, 401, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no bearer token"));
    let (status, body) = post(&f, Some("nope"), "buyercorp", list.clone()).await;
    assert_eq!(status, 401, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("wrong bearer token"));

    let (status, body) = post(&f, Some(TOKEN), "buyercorp", list).await;
    assert_eq!(status, 200, "{body}");
    let tool = &body["result"]["tools"][0];
    assert_eq!(tool["name"], TOOL_NAME);
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    let schema = &tool["inputSchema"];
    assert_eq!(
        schema["properties"]["aggregate"]["properties"]["op"]["enum"][2],
        "avg"
    );
    assert_eq!(
        schema["properties"]["filters"]["items"]["properties"]["op"]["enum"][6],
        "in"
    );
    // Names, never values.
    let dump = schema.to_string();
    assert!(
        dump.contains("order_value") && !dump.contains("EMEA"),
        "{dump}"
    );

    let avg = json!({"aggregate": {"op": "avg", "column": "order_value"}, "group_by": "region"});
    let (_, body) = post(&f, Some(TOKEN), "buyercorp", call(avg.clone())).await;
    assert_eq!(body["result"]["isError"], true, "{body}");
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("NO_CONTRACT: "), "{text}");

    let contract = grant(&f.state, "buyercorp", Duration::days(29)).await;
    let (_, body) = post(&f, Some(TOKEN), "buyercorp", call(avg.clone())).await;
    assert_eq!(body["result"]["isError"], false, "{body}");
    assert_eq!(body["result"]["structuredContent"]["row_count"], 624);
    assert_eq!(
        body["result"]["structuredContent"]["groups"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert!(body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("avg(order_value) of orders by region over 624 rows"));

    // Granted columns, a wrong query: the caller's mistake, as a tool error.
    let (_, body) = post(
        &f,
        Some(TOKEN),
        "buyercorp",
        call(json!({"aggregate": {"op": "sum", "column": "region"}})),
    )
    .await;
    assert_eq!(body["result"]["isError"], true, "{body}");
    assert!(body["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("needs a numeric column"));

    // Expired: refused, however the scope fits.
    grant(&f.state, "logistics", -Duration::seconds(1)).await;
    let (_, body) = post(&f, Some(TOKEN), "logistics", call(avg)).await;
    let text = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("CONTRACT_EXPIRED: "), "{text}");

    // An unknown tool is a JSON-RPC error.
    let (_, body) = post(
        &f,
        Some(TOKEN),
        "buyercorp",
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "drop_table"}}),
    )
    .await;
    assert_eq!(body["error"]["code"], -32602, "{body}");

    let records = f
        .state
        .trail
        .by_trace("4bf92f3577b34da6a3ce929d0e0e4736")
        .await
        .unwrap();
    assert_eq!(records.len(), 5, "{records:#?}");
    assert!(records
        .iter()
        .all(|r| r.role == Role::Responder && r.request_id == "req-mcp-1"));
    assert_eq!(records[0].outcome, Outcome::Refused);
    assert!(
        records[0]
            .detail
            .starts_with("refused NO_CONTRACT contract none rows_read 0"),
        "{}",
        records[0].detail
    );
    assert_eq!(records[1].outcome, Outcome::Executed);
    assert_eq!(
        records[1].detail,
        format!("granted contract {contract} rows_read 624; plane mcp tool query_records")
    );
    assert_eq!(records[1].caller, "buyercorp");
    assert_eq!(records[1].capability, "orders.query");
    assert!(
        records[2].detail.contains("rows_read 0"),
        "{}",
        records[2].detail
    );
    assert!(
        records[3]
            .detail
            .starts_with("refused CONTRACT_EXPIRED contract c-"),
        "{}",
        records[3].detail
    );
    assert_eq!(records[4].capability, "unknown");
    assert!(!serde_json::to_string(&records)
        .unwrap()
        .contains("drop_table"));
    f.plane.stop().await.unwrap();
}

#[test]
fn caller_is_a_system_id_or_unknown() {
    let mut h = HeaderMap::new();
    assert_eq!(caller_of(&h), "unknown");
    h.insert(CALLER_HEADER, "buyercorp".parse().unwrap());
    assert_eq!(caller_of(&h), "buyercorp");
    h.insert(CALLER_HEADER, "Robert'); DROP".parse().unwrap());
    assert_eq!(caller_of(&h), "unknown");
}
