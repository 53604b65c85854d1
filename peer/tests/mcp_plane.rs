//! The MCP data plane as real processes (the data plane is an MCP server,
//! not a function; the provider refuses out-of-contract calls in code,
//! before any row is read).
//!
//! Each test starts `peer serve` and `peer mcp` for a VendorCorp config on
//! free ports over one SQLite file in a temp dir, grants a contract the way
//! the hub would (A2A negotiation messages to `/a2a` with the peer's token
//! and `X-Caller-System: buyercorp`), and talks to `/mcp` with the official
//! rmcp client over Streamable HTTP, the way the hub's MCP front does:
//! bearer token, `X-Caller-System`, the envelope headers, timeouts.

use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{json, Value};
use sqlx::Row;
use std::collections::{BTreeMap, HashMap};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "mcp-plane-test-token";
const TOKEN_ENV: &str = "WS_TOKEN_MCPTEST";
const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// A child process killed when the test lets go of it (a failing test
/// leaves nothing running).
struct Proc {
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `peer serve` and `peer mcp` of one VendorCorp over one SQLite file.
struct Vendor {
    dir: tempfile::TempDir,
    config: PathBuf,
    database: PathBuf,
    a2a_port: u16,
    mcp_port: u16,
    serve: Proc,
    mcp: Proc,
    http: reqwest::Client,
}

impl Vendor {
    async fn start() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let (a2a_port, mcp_port) = (free_port(), free_port());
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/peers/vendorcorp.yaml");
        let mut cfg: serde_yaml_ng::Value = serde_yaml_ng::from_str(
            &std::fs::read_to_string(shipped).expect("read vendorcorp.yaml"),
        )
        .expect("yaml");
        let database = dir.path().join("vendorcorp.db");
        let m = cfg.as_mapping_mut().expect("a mapping");
        let s = |v: &str| serde_yaml_ng::Value::String(v.to_string());
        m.insert(s("listen"), s(&format!("127.0.0.1:{a2a_port}")));
        m.insert(s("token_env"), s(TOKEN_ENV));
        m.insert(s("database"), s(&database.display().to_string()));
        let mcp = m
            .get_mut(s("mcp"))
            .and_then(serde_yaml_ng::Value::as_mapping_mut)
            .expect("the shipped vendorcorp.yaml has an mcp section");
        mcp.insert(s("listen"), s(&format!("127.0.0.1:{mcp_port}")));
        let config = dir.path().join("vendorcorp.yaml");
        std::fs::write(&config, serde_yaml_ng::to_string(&cfg).expect("yaml"))
            .expect("write config");

        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .expect("client");
        let serve = spawn(dir.path(), &config, &database, "serve", None);
        wait_healthy(&http, a2a_port, &serve).await;
        let mcp = spawn(dir.path(), &config, &database, "mcp", None);
        wait_healthy(&http, mcp_port, &mcp).await;
        Vendor {
            dir,
            config,
            database,
            a2a_port,
            mcp_port,
            serve,
            mcp,
            http,
        }
    }

    fn mcp_url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.mcp_port)
    }

    /// Restarts `peer mcp` on the same port (`--listen`, to exercise the
    /// override too).
    async fn restart_mcp(&mut self) {
        self.mcp.kill();
        let listen = format!("127.0.0.1:{}", self.mcp_port);
        self.mcp = spawn(
            self.dir.path(),
            &self.config,
            &self.database,
            "mcp",
            Some(&listen),
        );
        wait_healthy(&self.http, self.mcp_port, &self.mcp).await;
    }

    /// One A2A negotiation turn as the hub sends it: the peer's token,
    /// the consumer it authenticated, the same contextId every turn.
    async fn negotiate(&self, context_id: &str, input: Value) -> Value {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {
                "messageId": uuid::Uuid::new_v4().to_string(),
                "role": "ROLE_USER",
                "contextId": context_id,
                "parts": [{"data": {"capability": "orders.negotiate", "input": input}}],
            }}
        });
        let resp = self
            .http
            .post(format!("http://127.0.0.1:{}/a2a", self.a2a_port))
            .bearer_auth(TOKEN)
            .header("A2A-Version", "1.0")
            .header("X-Caller-System", "buyercorp")
            .header("X-Request-Id", uuid::Uuid::new_v4().to_string())
            .json(&body)
            .send()
            .await
            .expect("negotiation message");
        let answer: Value = resp.json().await.expect("JSON-RPC answer");
        assert!(
            answer.get("error").is_none(),
            "negotiation turn refused: {answer}"
        );
        answer["result"]["message"]["parts"][0]["data"].clone()
    }

    /// Negotiates buyercorp's contract for orders.query: propose, the
    /// provider counters without order_id, accept the counter. Returns the
    /// grant.
    async fn grant_buyercorp(&self) -> Value {
        let ctx = format!("ctx-{}", uuid::Uuid::new_v4());
        let first = self
            .negotiate(
                &ctx,
                json!({"from": "consumer", "intent": "propose",
                   "scope": {"columns": ["region", "order_date", "order_value", "order_id"],
                             "purpose": "average order value by region for Q3 2025",
                             "retention_days": 30},
                   "rationale": "order values by region and date answer the question; order ids tie them together"}),
            )
            .await;
        let counter = &first["reply"];
        assert_eq!(counter["intent"], "counter", "{first}");
        assert!(first["grant"].is_null(), "{first}");
        let columns: Vec<&str> = counter["scope"]["columns"]
            .as_array()
            .expect("counter columns")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!columns.contains(&"order_id"), "{counter}");
        let scope = json!({
            "columns": columns,
            "purpose": counter["scope"]["purpose"],
            // Numbers cross A2A as doubles.
            "retention_days": counter["scope"]["retention_days"].as_f64().expect("retention") as u64,
        });
        let second = self
            .negotiate(
                &ctx,
                json!({"from": "consumer", "intent": "accept", "scope": scope,
                       "rationale": "the counter answers the question"}),
            )
            .await;
        assert_eq!(second["reply"]["intent"], "accept", "{second}");
        let grant = second["grant"].clone();
        assert!(
            grant["contract_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("c-")),
            "{second}"
        );
        grant
    }

    /// A read-only pool on the peer's file, for independent checks.
    async fn pool(&self) -> sqlx::SqlitePool {
        exchange::db::open_sqlite(&self.database)
            .await
            .expect("open the peer's store")
    }
}

fn spawn(dir: &Path, config: &Path, database: &Path, command: &str, listen: Option<&str>) -> Proc {
    let log = dir.join(format!("{command}-{}.log", uuid::Uuid::new_v4()));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_peer"));
    cmd.arg(command)
        .arg("--config")
        .arg(config)
        .arg("--database")
        .arg(database)
        .env(TOKEN_ENV, TOKEN)
        .env_remove("PEER_LISTEN")
        .env_remove("PEER_MCP_LISTEN")
        .env_remove("PEER_DATABASE")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log file"));
    if let Some(l) = listen {
        cmd.arg("--listen").arg(l);
    }
    Proc {
        child: cmd.spawn().expect("spawn peer"),
        log,
    }
}

async fn wait_healthy(http: &reqwest::Client, port: u16, proc: &Proc) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = http
            .get(format!("http://127.0.0.1:{port}/health"))
            .send()
            .await
        {
            if r.status().is_success() {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "port {port} never became healthy:\n{}",
            proc.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

type Client = RunningService<RoleClient, ()>;

/// An rmcp client over Streamable HTTP as the hub builds one: the peer's
/// bearer token, the consumer and the envelope as custom headers, a
/// reqwest client with connect and request timeouts.
async fn connect(
    url: &str,
    token: Option<&str>,
    caller: &str,
    request_id: &str,
) -> Result<Client, ClientInitializeError> {
    let mut headers = HashMap::new();
    for (name, value) in [
        ("x-caller-system", caller.to_string()),
        ("x-request-id", request_id.to_string()),
        ("traceparent", format!("00-{TRACE_ID}-b7ad6b7169203331-01")),
        ("a2a-version", "1.0".to_string()),
    ] {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(&value).expect("header value"),
        );
    }
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(headers);
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    let http = reqwest13::Client::builder()
        .connect_timeout(Duration::from_secs(2))
        .timeout(Duration::from_secs(10))
        .build()
        .expect("reqwest client");
    let transport = StreamableHttpClientTransport::with_client(http, config);
    tokio::time::timeout(Duration::from_secs(15), ().serve(transport))
        .await
        .expect("initialize must not hang")
}

fn args(v: Value) -> JsonObject {
    v.as_object().cloned().expect("arguments are an object")
}

async fn call(client: &Client, arguments: Value) -> Result<CallToolResult, ServiceError> {
    tokio::time::timeout(
        Duration::from_secs(15),
        client
            .call_tool(CallToolRequestParams::new("query_records").with_arguments(args(arguments))),
    )
    .await
    .expect("tools/call must not hang")
}

/// One call on a fresh client (its own request id): the result.
async fn call_as(v: &Vendor, caller: &str, request_id: &str, arguments: Value) -> CallToolResult {
    let client = connect(&v.mcp_url(), Some(TOKEN), caller, request_id)
        .await
        .expect("initialize");
    let result = call(&client, arguments)
        .await
        .expect("a tool result, not a JSON-RPC error");
    let _ = client.cancel().await;
    result
}

fn text(r: &CallToolResult) -> &str {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.as_str())
        .unwrap_or("")
}

/// The provider's trail records of `request_id`: (outcome, caller,
/// capability, detail).
async fn trail(pool: &sqlx::SqlitePool, request_id: &str) -> Vec<(String, String, String, String)> {
    sqlx::query(
        "SELECT outcome, caller, capability, detail FROM audit_trail
         WHERE system = 'vendorcorp' AND role = 'responder' AND request_id = ? ORDER BY seq",
    )
    .bind(request_id)
    .fetch_all(pool)
    .await
    .expect("read the trail")
    .iter()
    .map(|r| {
        (
            r.get::<String, _>("outcome"),
            r.get::<String, _>("caller"),
            r.get::<String, _>("capability"),
            r.get::<String, _>("detail"),
        )
    })
    .collect()
}

/// The one trail record of a refused call: it read no row and names the
/// contract it was decided against.
async fn assert_refused_read_nothing(
    pool: &sqlx::SqlitePool,
    request_id: &str,
    code: &str,
    contract: &str,
) {
    let records = trail(pool, request_id).await;
    assert_eq!(records.len(), 1, "{records:?}");
    let (outcome, _, capability, detail) = &records[0];
    assert_eq!(outcome, "refused", "{records:?}");
    assert_eq!(capability, "orders.query");
    assert_eq!(
        detail,
        &format!("refused {code} contract {contract} rows_read 0; plane mcp tool query_records")
    );
}

#[tokio::test]
async fn every_call_is_decided_against_the_negotiated_contract() {
    let v = Vendor::start().await;
    let pool = v.pool().await;
    let grant = v.grant_buyercorp().await;
    let contract = grant["contract_id"]
        .as_str()
        .expect("contract id")
        .to_string();

    // tools/list: one tool with its input schema; initialize named the build.
    let client = connect(&v.mcp_url(), Some(TOKEN), "buyercorp", "req-list")
        .await
        .expect("initialize");
    let info = client.peer_info().expect("server info");
    let server = info.server_info.clone().expect("serverInfo");
    assert_eq!(server.name, exchange::health::PEER_SERVICE);
    assert_eq!(server.version, peer::VERSION);
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1, "{tools:?}");
    let tool = &tools[0];
    assert_eq!(tool.name, "query_records");
    assert!(
        tool.description
            .as_deref()
            .is_some_and(|d| d.contains("negotiated data contract")),
        "{tool:?}"
    );
    let schema = serde_json::to_value(tool.input_schema.as_ref()).expect("schema");
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["aggregate"]["properties"]["op"]["enum"],
        json!(["count", "sum", "avg", "min", "max"])
    );
    assert_eq!(
        schema["properties"]["filters"]["items"]["properties"]["op"]["enum"],
        json!(["eq", "ne", "lt", "lte", "gt", "gte", "in"])
    );
    assert!(schema["properties"]["group_by"].is_object(), "{schema}");
    // Column names are public; no value of any column is in the schema.
    let dump = schema.to_string();
    assert!(dump.contains("order_value"), "{dump}");
    for value in ["EMEA", "APAC", "@", "2025-"] {
        assert!(!dump.contains(value), "{value} in {dump}");
    }
    let _ = client.cancel().await;

    let q3_avg_by_region = json!({
        "aggregate": {"op": "avg", "column": "order_value"},
        "filters": [{"column": "order_date", "op": "gte", "value": "2025-07-01"},
                    {"column": "order_date", "op": "lte", "value": "2025-09-30"}],
        "group_by": "region",
    });

    // No contract: `hub` never negotiated one.
    let r = call_as(&v, "hub", "req-no-contract", q3_avg_by_region.clone()).await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert!(text(&r).starts_with("NO_CONTRACT: "), "{}", text(&r));
    assert_refused_read_nothing(&pool, "req-no-contract", "NO_CONTRACT", "none").await;

    // A column the dataset does not have.
    let r = call_as(
        &v,
        "buyercorp",
        "req-unknown",
        json!({"aggregate": {"op": "sum", "column": "colour"}}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert!(text(&r).starts_with("UNKNOWN_COLUMN: "), "{}", text(&r));
    assert_refused_read_nothing(&pool, "req-unknown", "UNKNOWN_COLUMN", &contract).await;

    // A real column the contract does not grant: the provider's words,
    // naming the grant and the purpose of record.
    let r = call_as(
        &v,
        "buyercorp",
        "req-denied",
        json!({"aggregate": {"op": "count", "column": "customer_email"}, "group_by": "region"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let words = text(&r);
    assert!(words.starts_with("SCOPE_DENIED: "), "{words}");
    assert!(
        words.contains("customer_email") && words.contains(&contract),
        "{words}"
    );
    for granted in ["region", "order_date", "order_value"] {
        assert!(words.contains(granted), "{granted} in {words}");
    }
    assert!(
        words.contains("average order value by region for Q3 2025"),
        "{words}"
    );
    assert!(r.structured_content.is_none(), "{r:?}");
    assert_refused_read_nothing(&pool, "req-denied", "SCOPE_DENIED", &contract).await;

    // Within the contract: the answer equals an independent recomputation
    // from the rows themselves.
    let r = call_as(&v, "buyercorp", "req-granted", q3_avg_by_region.clone()).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let result = r.structured_content.clone().expect("structured content");
    assert!(
        text(&r).starts_with("avg(order_value) of orders by region over "),
        "{}",
        text(&r)
    );
    let rows = sqlx::query("SELECT region, order_date, order_value FROM orders")
        .fetch_all(&pool)
        .await
        .expect("rows");
    let mut by_region: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    for row in &rows {
        let date: String = row.get("order_date");
        if date.as_str() >= "2025-07-01" && date.as_str() <= "2025-09-30" {
            let e = by_region.entry(row.get("region")).or_default();
            e.0 += row.get::<f64, _>("order_value");
            e.1 += 1;
        }
    }
    let expected_rows: u64 = by_region.values().map(|(_, n)| n).sum();
    assert!(expected_rows > 0 && expected_rows < rows.len() as u64);
    assert_eq!(
        result["row_count"].as_u64(),
        Some(expected_rows),
        "{result}"
    );
    let groups = result["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), by_region.len(), "{result}");
    for g in groups {
        let key = g["key"].as_str().expect("region key");
        let (sum, n) = by_region[key];
        let mean = sum / n as f64;
        let got = g["value"].as_f64().expect("value");
        assert!((got - mean).abs() < 0.006, "{key}: {got} vs {mean}");
        assert_eq!(g["count"].as_u64(), Some(n), "{key}");
    }
    let records = trail(&pool, "req-granted").await;
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].0, "executed");
    assert_eq!(records[0].1, "buyercorp");
    assert_eq!(
        records[0].3,
        format!(
            "granted contract {contract} rows_read {expected_rows}; plane mcp tool query_records"
        )
    );

    // An expired contract, written straight into the provider's store.
    let now = chrono::Utc::now();
    sqlx::query(
        "INSERT INTO contracts (id, capability, provider, consumer, scope, context_id, granted_at, expires_at)
         VALUES (?, 'orders.query', 'vendorcorp', 'logistics', ?, 'ctx-expired', ?, ?)",
    )
    .bind("c-0000000e0001")
    .bind(
        json!({"columns": ["region", "order_value"], "purpose": "last year's numbers",
               "retention_days": 30})
        .to_string(),
    )
    .bind((now - chrono::Duration::days(31)).to_rfc3339())
    .bind((now - chrono::Duration::days(1)).to_rfc3339())
    .execute(&pool)
    .await
    .expect("insert an expired contract");
    let r = call_as(
        &v,
        "logistics",
        "req-expired",
        json!({"aggregate": {"op": "avg", "column": "order_value"}, "group_by": "region"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert!(
        text(&r).starts_with("CONTRACT_EXPIRED: c-0000000e0001 expired at"),
        "{}",
        text(&r)
    );
    assert_refused_read_nothing(&pool, "req-expired", "CONTRACT_EXPIRED", "c-0000000e0001").await;

    // `peer trail` shows the same records (the operator's view).
    let out = Command::new(env!("CARGO_BIN_EXE_peer"))
        .args(["trail", "--config"])
        .arg(&v.config)
        .arg("--database")
        .arg(&v.database)
        .args(["--trace-id", TRACE_ID])
        .output()
        .expect("peer trail");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records: Value = serde_json::from_slice(&out.stdout).expect("trail JSON");
    let details: Vec<&str> = records
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|r| r["detail"].as_str())
        .collect();
    assert_eq!(
        details.iter().filter(|d| d.contains("plane mcp")).count(),
        5,
        "{details:?}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(TOKEN));
}

#[tokio::test]
async fn only_the_token_holder_gets_in_and_health_names_the_plane() {
    let v = Vendor::start().await;
    let pool = v.pool().await;

    // Plain HTTP: 401 with a JSON body naming the problem.
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    for (token, problem) in [
        (None, "no bearer token"),
        (Some("not-the-token"), "wrong bearer token"),
    ] {
        let mut req = v
            .http
            .post(v.mcp_url())
            .header("accept", "application/json, text/event-stream")
            .header("x-request-id", "req-unauthorized")
            .json(&list);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.expect("answer");
        assert_eq!(resp.status().as_u16(), 401);
        let body: Value = resp.json().await.expect("a JSON body");
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.contains(problem), "{body}");
        assert!(!body.to_string().contains(TOKEN));
    }
    // The rmcp client: initialize fails, nothing reaches a tool.
    for token in [None, Some("not-the-token")] {
        let Err(refused) = connect(&v.mcp_url(), token, "buyercorp", "req-unauthorized").await
        else {
            panic!("initialize without the token must fail");
        };
        // The 401's `WWW-Authenticate: Bearer` tells the client why.
        assert_eq!(refused.auth_challenge(), Some("Bearer"), "{refused:?}");
    }
    assert!(trail(&pool, "req-unauthorized").await.is_empty());

    // Health: the peer's identity, and which plane answered.
    let get = |port: u16| {
        let http = v.http.clone();
        async move {
            http.get(format!("http://127.0.0.1:{port}/health"))
                .send()
                .await
                .expect("health")
                .json::<Value>()
                .await
                .expect("health JSON")
        }
    };
    let mcp = get(v.mcp_port).await;
    assert_eq!(
        mcp,
        json!({"service": "wall-street-peer", "system": "vendorcorp", "name": "VendorCorp",
               "version": peer::VERSION, "plane": "mcp"})
    );
    let a2a = get(v.a2a_port).await;
    assert_eq!(a2a["service"], mcp["service"]);
    assert_eq!(a2a["system"], mcp["system"]);
    assert!(a2a.get("plane").is_none(), "{a2a}");

    // The body is bounded: a huge request never reaches the handler.
    let huge = "x".repeat(256 * 1024);
    let resp = v
        .http
        .post(v.mcp_url())
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"pad\":\"{huge}\"}}"
        ))
        .send()
        .await
        .expect("answer");
    assert_eq!(resp.status().as_u16(), 413);
}

#[tokio::test]
async fn killing_the_plane_fails_calls_fast_and_a_restart_restores_them() {
    let mut v = Vendor::start().await;
    v.grant_buyercorp().await;
    let count = json!({"aggregate": {"op": "count"}, "group_by": "region"});
    let client = connect(&v.mcp_url(), Some(TOKEN), "buyercorp", "req-before-kill")
        .await
        .expect("initialize");
    let r = call(&client, count.clone()).await.expect("answered");
    assert_eq!(r.is_error, Some(false), "{r:?}");

    v.mcp.kill();
    let t0 = Instant::now();
    let failed = call(&client, count.clone()).await;
    let took = t0.elapsed();
    match &failed {
        Err(ServiceError::TransportSend(_) | ServiceError::TransportClosed) => {}
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert!(took < Duration::from_secs(5), "failed only after {took:?}");
    let refused = connect(&v.mcp_url(), Some(TOKEN), "buyercorp", "req-while-dead").await;
    assert!(
        matches!(
            refused,
            Err(ClientInitializeError::TransportError { .. }
                | ClientInitializeError::ConnectionClosed(_))
        ),
        "{refused:?}"
    );
    let _ = client.cancel().await;
    // The A2A server is its own process: still up.
    wait_healthy(&v.http, v.a2a_port, &v.serve).await;

    v.restart_mcp().await;
    let r = call_as(&v, "buyercorp", "req-after-restart", count).await;
    assert_eq!(r.is_error, Some(false), "{r:?}");
    assert_eq!(r.structured_content.expect("structured")["row_count"], 624);
}
