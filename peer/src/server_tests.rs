//! The HTTP face over a real listener: health, the agent card, the bearer
//! check, `SendMessage` answered, refused and broken by the faults.

use super::*;
use crate::config::PeerConfig;
use a2a::AgentCard;
use exchange::audit::Outcome;
use serde_json::Value;

const TOKEN: &str = "test-token-vendorcorp";

fn config(text: &str) -> PeerConfig {
    PeerConfig::parse(text, "test.yaml").unwrap()
}

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
agents: [ {id: data-steward, name: "Data Steward"} ]
"#;

const BUYER: &str = r#"
system: buyercorp
name: BuyerCorp
listen: 127.0.0.1:0
token_env: WS_TOKEN_BUYERCORP
hub_url: http://127.0.0.1:3000
database: unused.db
dataset: { kind: budgets, seed: 7 }
skills:
  - { capability: budget.consult, kind: consult, handler: budget_consult }
"#;

struct Fixture {
    peer: RunningPeer,
    state: Arc<PeerState>,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

async fn start_peer(text: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let state = Arc::new(
        PeerState::open(config(text), Token::new(TOKEN), &dir.path().join("peer.db"))
            .await
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = start(state.clone(), listener).unwrap();
    Fixture {
        peer,
        state,
        http: reqwest::Client::new(),
        _dir: dir,
    }
}

fn rpc(parts: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m-1", "role": "ROLE_USER", "parts": parts}}
    })
}

const TRACE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

async fn post(f: &Fixture, token: Option<&str>, body: &Value) -> (u16, Value) {
    let mut req = f
        .http
        .post(format!("{}/a2a", f.peer.base_url()))
        .header("A2A-Version", "1.0")
        .header("X-Request-Id", "req-42")
        .header("X-Caller-System", "hub")
        .header("traceparent", TRACE)
        .json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

#[tokio::test]
async fn health_card_and_a_real_send_message() {
    let f = start_peer(VENDOR).await;
    let base = f.peer.base_url();

    let get_health = || async {
        f.http
            .get(format!("{base}/health"))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    };
    let mut health = get_health().await;
    let first = health["health_checks"].as_u64().expect("a count");
    assert_eq!(
        get_health().await["health_checks"].as_u64(),
        Some(first + 1),
        "every check is counted"
    );
    health.as_object_mut().unwrap().remove("health_checks");
    assert_eq!(
        health,
        json!({"service": "wall-street-peer", "system": "vendorcorp", "name": "VendorCorp", "version": VERSION})
    );

    let card: Value = f
        .http
        .get(format!("{base}{CARD_PATH}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["name"], "VendorCorp");
    assert_eq!(card["provider"]["organization"], "VendorCorp");
    assert_eq!(card["capabilities"]["streaming"], false);
    assert_eq!(card["supportedInterfaces"][0]["url"], format!("{base}/a2a"));
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(card["skills"][0]["id"], "orders.query");
    assert!(card["skills"][0]["tags"]
        .as_array()
        .unwrap()
        .contains(&json!("data-share")));
    assert_eq!(
        card["defaultInputModes"],
        json!(["application/json", "text/plain"])
    );
    let parsed: AgentCard = serde_json::from_value(card).unwrap();
    assert_eq!(parsed.skills.len(), 1);

    let call = rpc(json!([{"data": {"capability": "orders.query",
        "input": {"aggregate": {"op": "count"}, "group_by": "region"}}}]));

    // Without the token, with a wrong one: 401, and no skill ran.
    let (status, body) = post(&f, None, &call).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], -32000);
    let (status, _) = post(&f, Some("wrong-token"), &call).await;
    assert_eq!(status, 401);

    // No contract yet: refused in the provider's words, no row read.
    let (_, body) = post(&f, Some(TOKEN), &call).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("NO_CONTRACT: "));
    let contract = crate::contracts::policy::grant(
        exchange::negotiation::Scope {
            columns: vec!["region".into()],
            purpose: "counting orders by region".into(),
            retention_days: 30,
        },
        "orders.query",
        "vendorcorp",
        "hub",
        "ctx-test",
        chrono::Utc::now(),
    );
    f.state.contracts.grant(&contract).await.unwrap();

    let (status, body) = post(&f, Some(TOKEN), &call).await;
    assert_eq!(status, 200, "{body}");
    let msg = &body["result"]["message"];
    assert_eq!(msg["role"], "ROLE_AGENT", "a Message, not a Task: {body}");
    let result = &msg["parts"][0]["data"];
    assert_eq!(result["table"], "orders");
    // Numbers cross the wire as protobuf doubles.
    assert_eq!(result["row_count"].as_f64(), Some(624.0));
    assert_eq!(result["groups"].as_array().unwrap().len(), 4);
    assert!(msg["parts"][1]["text"]
        .as_str()
        .unwrap()
        .starts_with("count(*) of orders by region"));
    let send: a2a::SendMessageResponse = serde_json::from_value(body["result"].clone()).unwrap();
    assert_eq!(
        exchange::wire::parse_answer(&send).unwrap()["table"],
        "orders"
    );

    // Bad input: invalid params naming the column.
    let bad = rpc(json!([{"data": {"capability": "orders.query",
        "input": {"aggregate": {"op": "sum", "column": "colour"}}}}]));
    let (_, body) = post(&f, Some(TOKEN), &bad).await;
    assert_eq!(body["error"]["code"], -32602, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("UNKNOWN_COLUMN: [\"colour\"] is not a column of the dataset"));

    let unknown = rpc(json!([{"data": {"capability": "weather.query", "input": {}}}]));
    let (_, body) = post(&f, Some(TOKEN), &unknown).await;
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown capability \"weather.query\"; vendorcorp provides: orders.query"));

    // A text-only message to a data-share-only peer gets help.
    let (_, body) = post(
        &f,
        Some(TOKEN),
        &rpc(json!([{"text": "hello, what can you do?"}])),
    )
    .await;
    let text = body["result"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("orders.query") && text.contains("sample data part"),
        "{text}"
    );

    // The trail: one record per call, trace id carried, no payload.
    let records = f
        .state
        .trail
        .by_trace("4bf92f3577b34da6a3ce929d0e0e4736")
        .await
        .unwrap();
    assert_eq!(records.len(), 7, "{records:#?}");
    assert!(records
        .iter()
        .all(|r| r.role == Role::Responder && r.request_id == "req-42"));
    assert_eq!(
        records
            .iter()
            .filter(|r| r.outcome == Outcome::Executed)
            .count(),
        2
    );
    assert_eq!(records[2].caller, "hub");
    assert_eq!(records[2].capability, "orders.query");
    assert_eq!(records[0].detail, "auth: no bearer token");
    // Each read names its contract and how many rows it read.
    assert_eq!(
        records[2].detail,
        "refused NO_CONTRACT contract none rows_read 0"
    );
    assert_eq!(
        records[3].detail,
        format!(
            "granted contract {} rows_read 624; a2a-version 1.0",
            contract.id
        )
    );
    assert_eq!(
        records[4].detail,
        format!(
            "refused UNKNOWN_COLUMN contract {} rows_read 0",
            contract.id
        )
    );
    assert_eq!(records[5].capability, "unknown");
    let dump = serde_json::to_string(&records).unwrap();
    assert!(!dump.contains(TOKEN) && !dump.contains("wrong-token") && !dump.contains("colour"));

    f.peer.stop().await.unwrap();
}

#[tokio::test]
async fn a_part_of_a_media_type_no_skill_takes_is_content_type_not_supported() {
    let f = start_peer(BUYER).await;
    let (_, body) = post(
        &f,
        Some(TOKEN),
        &rpc(json!([{"raw": "dGNr", "mediaType": "application/x-unsupported"}])),
    )
    .await;
    assert_eq!(body["error"]["code"], -32005, "{body}");
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("application/x-unsupported")));
    // JSON with parameters is still JSON.
    let (_, body) = post(
        &f,
        Some(TOKEN),
        &rpc(
            json!([{"data": {"capability": "budget.consult", "input": {"question": "marketing?"}},
                     "mediaType": "application/json; charset=utf-8"}]),
        ),
    )
    .await;
    assert!(body["result"]["message"].is_object(), "{body}");
    f.peer.stop().await.unwrap();
}

#[tokio::test]
async fn consult_by_text_and_faults() {
    let f = start_peer(BUYER).await;
    let (_, body) = post(
        &f,
        Some(TOKEN),
        &rpc(json!([{"text": "raise marketing budget to 150000"}])),
    )
    .await;
    let data = &body["result"]["message"]["parts"][0]["data"];
    assert_eq!(data["department"], "marketing", "{body}");
    assert_eq!(
        data["proposed_actions"][0]["parameters"]["amount"].as_f64(),
        Some(150000.0)
    );
    f.peer.stop().await.unwrap();

    let failing = start_peer(&format!("{BUYER}faults: {{ fail: true }}\n")).await;
    let call = rpc(
        json!([{"data": {"capability": "budget.consult", "input": {"question": "marketing?"}}}]),
    );
    let (_, body) = post(&failing, Some(TOKEN), &call).await;
    assert_eq!(body["error"]["code"], -32603);
    assert_eq!(body["error"]["message"], "injected failure");
    failing.peer.stop().await.unwrap();

    let broken = start_peer(&format!(
        "{BUYER}faults: {{ break_schema: true, stall_ms: 150 }}\n"
    ))
    .await;
    let t0 = std::time::Instant::now();
    let (_, body) = post(&broken, Some(TOKEN), &call).await;
    assert!(
        t0.elapsed() >= std::time::Duration::from_millis(150),
        "stalled"
    );
    assert_eq!(
        body["result"]["message"]["parts"][0]["data"],
        json!({"unexpected": true})
    );
    broken.peer.stop().await.unwrap();
}
