//! A2A-surface helpers for the integration tests (JSON-RPC calls to
//! `POST /a2a/{provider}`): a request builder like [`super::GatewayCall`],
//! the answer with accessors for the JSON-RPC result or error and its
//! `google.rpc.ErrorInfo`, a fresh W3C `traceparent`, and a count of the
//! hub's audit records (to prove a refused request wrote nothing).

use super::Stack;
use serde_json::{json, Value as Json};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// `ErrorInfo.domain` of the nine reason codes (a refused or failed call).
pub const EXCHANGE_DOMAIN: &str = "wall-street.exchange";
/// `ErrorInfo.domain` of A2A's own protocol errors.
pub const PROTOCOL_DOMAIN: &str = "a2a-protocol.org";
/// The `@type` of an `ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The JSON-RPC / A2A codes the surface answers with
/// (`hub/src/surface/errors.rs`, module `code`).
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    pub const INVALID_AGENT_RESPONSE: i64 = -32006;
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
    pub const AUTH_REJECTED: i64 = -32010;
    pub const IP_NOT_ALLOWED: i64 = -32011;
    pub const NOT_PERMITTED: i64 = -32012;
    pub const UNKNOWN_PEER: i64 = -32013;
    pub const PEER_UNREACHABLE: i64 = -32014;
    pub const TIMEOUT: i64 = -32015;
}

/// A unique suffix for ids (message ids, JSON-RPC ids) within a test run.
pub fn unique() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{nanos:x}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The params of a `SendMessage` submitting Helpdesk's `ticket.triage`
/// task under `message_id` (its idempotency key), answered when accepted
/// (`immediately`) or when done, with an optional deadline.
pub fn triage(message_id: &str, input: Json, immediately: bool, deadline: Option<String>) -> Json {
    let mut p = json!({
        "message": {
            "messageId": message_id,
            "role": "ROLE_USER",
            "parts": [{ "data": { "capability": "ticket.triage", "input": input } }],
        },
        "configuration": { "returnImmediately": immediately },
    });
    if let Some(d) = deadline {
        p["message"]["metadata"] = json!({ "deadline": d });
    }
    p
}

/// A fresh root `traceparent` (W3C trace context, version 00, sampled) and
/// its 32-hex trace id.
pub fn traceparent() -> (String, String) {
    let trace_id = format!("{:032x}", rand::random::<u128>() | 1);
    let span_id = format!("{:016x}", rand::random::<u64>() | 1);
    (format!("00-{trace_id}-{span_id}-01"), trace_id)
}

/// Whether `s` is a W3C trace id: 32 lowercase hex digits.
pub fn is_trace_id(s: &str) -> bool {
    s.len() == 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `SendMessage` params (A2A v1.0) whose one data part names `capability`
/// and carries `input`, under a fresh `messageId`.
pub fn send_message_params(capability: &str, input: Json) -> Json {
    json!({
        "message": {
            "messageId": format!("msg-{}", unique()),
            "role": "ROLE_USER",
            "parts": [{ "data": { "capability": capability, "input": input } }],
        }
    })
}

impl Stack {
    /// A JSON-RPC request to `provider`'s A2A surface as `caller`: its real
    /// bearer token, `A2A-Version: 1.0`, no `X-Caller-System` (the token
    /// names the caller), from 127.0.0.1, method `SendMessage` with empty
    /// params until [`A2aCall::data`] or [`A2aCall::params`] says otherwise.
    pub fn a2a(&self, caller: &str, provider: &str) -> A2aCall {
        A2aCall {
            url: format!("{}/a2a/{provider}", self.hub_url()),
            headers: vec![
                (
                    "authorization".into(),
                    format!("Bearer {}", self.token(caller)),
                ),
                ("a2a-version".into(), "1.0".into()),
            ],
            id: json!(format!("rpc-{}", unique())),
            method: "SendMessage".into(),
            params: json!({}),
            raw: None,
            local_address: None,
            timeout: Duration::from_secs(30),
        }
    }

    /// How many records the hub's audit trail holds (its `audit_trail`
    /// table, read from the hub's store).
    pub async fn hub_audit_count(&self) -> u64 {
        let store = self.hub_store().await;
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_trail")
            .fetch_one(store.pool())
            .await
            .expect("count the hub's audit records");
        store.close().await;
        u64::try_from(n).expect("a row count is not negative")
    }

    /// Every token this stack's systems hold (to check none leaks).
    pub fn all_tokens(&self) -> Vec<String> {
        self.tokens.values().cloned().collect()
    }
}

/// One JSON-RPC request to the A2A surface under construction.
pub struct A2aCall {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub id: Json,
    pub method: String,
    pub params: Json,
    /// A body sent as is instead of the JSON-RPC request, with its content type.
    pub raw: Option<(Vec<u8>, String)>,
    pub local_address: Option<std::net::IpAddr>,
    pub timeout: Duration,
}

impl A2aCall {
    /// Sets (replacing) a header; names are lowercase.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let name = name.to_ascii_lowercase();
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value.to_string()));
        self
    }
    /// Drops a header.
    pub fn without_header(mut self, name: &str) -> Self {
        let name = name.to_ascii_lowercase();
        self.headers.retain(|(n, _)| *n != name);
        self
    }
    /// The JSON-RPC method (default `SendMessage`).
    pub fn method(mut self, method: &str) -> Self {
        self.method = method.to_string();
        self
    }
    /// The JSON-RPC id (default a fresh string).
    pub fn id(mut self, id: Json) -> Self {
        self.id = id;
        self
    }
    /// The JSON-RPC params as given.
    pub fn params(mut self, params: Json) -> Self {
        self.params = params;
        self
    }
    /// `SendMessage` params with one data part `{capability, input}` and a
    /// fresh message id.
    pub fn data(self, capability: &str, input: Json) -> Self {
        self.params(send_message_params(capability, input))
    }
    /// Sends `body` as is, with `Content-Type: content_type`, instead of
    /// the JSON-RPC request.
    pub fn raw_body(mut self, body: impl Into<Vec<u8>>, content_type: &str) -> Self {
        self.raw = Some((body.into(), content_type.to_string()));
        self
    }
    /// Connects from this local address (e.g. `127.0.0.2`, loopback but
    /// outside an allowlist of `127.0.0.1/32`).
    pub fn source_ip(mut self, ip: &str) -> Self {
        self.local_address = Some(ip.parse().expect("a literal IP address"));
        self
    }
    /// A `traceparent` header to send (see [`traceparent`]).
    pub fn traceparent(self, value: &str) -> Self {
        self.header("traceparent", value)
    }
    /// How long the client waits for the whole answer (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The JSON-RPC request body this call sends (unless a raw body is set).
    pub fn envelope(&self) -> Json {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "method": self.method,
            "params": self.params,
        })
    }

    /// Sends the request; panics if the hub does not answer, or answers
    /// something that is not JSON (the status and text in the message).
    pub async fn send(self) -> A2aAnswer {
        let mut builder = reqwest::Client::builder().timeout(self.timeout);
        if let Some(ip) = self.local_address {
            builder = builder.local_address(ip);
        }
        let client = builder.build().expect("an HTTP client");
        let req = match &self.raw {
            Some((body, content_type)) => client
                .post(&self.url)
                .header("content-type", content_type.as_str())
                .body(body.clone()),
            None => client.post(&self.url).json(&self.envelope()),
        };
        let req = self
            .headers
            .iter()
            .fold(req, |req, (n, v)| req.header(n.as_str(), v.as_str()));
        let started = Instant::now();
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {}: the hub did not answer: {e}", self.url));
        let status = resp.status().as_u16();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let traceparent = header("traceparent");
        let www_authenticate = header("www-authenticate");
        let content_type = header("content-type");
        let text = resp
            .text()
            .await
            .unwrap_or_else(|e| panic!("POST {}: the answer was cut off: {e}", self.url));
        let elapsed = started.elapsed();
        let json: Json = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "POST {}: HTTP {status} ({content_type:?}) is not JSON ({e}): {text}",
                self.url
            )
        });
        A2aAnswer {
            status,
            json,
            text,
            elapsed,
            traceparent,
            www_authenticate,
            content_type,
        }
    }
}

impl A2aCall {
    /// Sends the request and reads the answer as a server-sent event
    /// stream: each event's `data` as JSON, in order (panics if the answer
    /// is not `text/event-stream`).
    pub async fn send_stream(self) -> Vec<Json> {
        let client = reqwest::Client::builder()
            .timeout(self.timeout)
            .build()
            .expect("an HTTP client");
        let req = client.post(&self.url).json(&self.envelope());
        let req = self
            .headers
            .iter()
            .fold(req, |req, (n, v)| req.header(n.as_str(), v.as_str()));
        let resp = req
            .send()
            .await
            .unwrap_or_else(|e| panic!("POST {}: the hub did not answer: {e}", self.url));
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let text = resp.text().await.expect("the stream ends");
        assert!(
            content_type.starts_with("text/event-stream"),
            "not a stream ({content_type}): {text}"
        );
        sse_events(&text)
    }
}

/// The `data` of each event of a server-sent event stream, as JSON, in
/// order (panics on an event that is not JSON).
pub fn sse_events(text: &str) -> Vec<Json> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap_or_else(|e| panic!("event {d}: {e}")))
        .collect()
}

/// What the surface answered, and how long it took.
#[derive(Debug)]
pub struct A2aAnswer {
    pub status: u16,
    pub json: Json,
    /// The body as received (for leak checks).
    pub text: String,
    pub elapsed: Duration,
    /// The answer's `traceparent` header.
    pub traceparent: Option<String>,
    /// The answer's `WWW-Authenticate` header.
    pub www_authenticate: Option<String>,
    /// The answer's `Content-Type` header.
    pub content_type: Option<String>,
}

impl A2aAnswer {
    /// The JSON-RPC error object (panics with the body if there is none).
    pub fn error(&self) -> &Json {
        assert_eq!(
            self.json["jsonrpc"], "2.0",
            "not JSON-RPC 2.0: {}",
            self.json
        );
        let error = &self.json["error"];
        assert!(
            error.is_object() && self.json.get("result").is_none(),
            "expected a JSON-RPC error, got {}",
            self.json
        );
        error
    }
    /// The error's first `google.rpc.ErrorInfo`: the reason code's for a
    /// call, A2A's for a protocol error. A second detail may only be A2A's
    /// own `ErrorInfo` for an A2A error code (panics with the body
    /// otherwise).
    pub fn error_info(&self) -> &Json {
        let data = self.error()["data"]
            .as_array()
            .unwrap_or_else(|| panic!("error.data is not a list: {}", self.json));
        assert!(
            matches!(data.len(), 1 | 2),
            "expected one or two details: {}",
            self.json
        );
        if let Some(second) = data.get(1) {
            assert_eq!(
                (second["@type"].as_str(), second["domain"].as_str()),
                (Some(ERROR_INFO_TYPE), Some("a2a-protocol.org")),
                "the second detail is A2A's ErrorInfo: {}",
                self.json
            );
        }
        let info = &data[0];
        assert_eq!(
            info["@type"], ERROR_INFO_TYPE,
            "not an ErrorInfo: {}",
            self.json
        );
        info
    }
    /// `ErrorInfo.reason` of the error.
    pub fn reason(&self) -> &str {
        self.error_info()["reason"]
            .as_str()
            .unwrap_or_else(|| panic!("ErrorInfo without a reason: {}", self.json))
    }
    /// `ErrorInfo.domain` of the error.
    pub fn domain(&self) -> &str {
        self.error_info()["domain"]
            .as_str()
            .unwrap_or_else(|| panic!("ErrorInfo without a domain: {}", self.json))
    }
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        self.error()["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("error without an integer code: {}", self.json))
    }
    /// The JSON-RPC error message.
    pub fn message(&self) -> &str {
        self.error()["message"]
            .as_str()
            .unwrap_or_else(|| panic!("error without a message: {}", self.json))
    }
    /// `ErrorInfo.metadata.traceId` of the error.
    pub fn trace_id(&self) -> &str {
        self.error_info()["metadata"]["traceId"]
            .as_str()
            .unwrap_or_else(|| panic!("ErrorInfo without metadata.traceId: {}", self.json))
    }
    /// `ErrorInfo.metadata.requestId` of the error.
    pub fn request_id(&self) -> &str {
        self.error_info()["metadata"]["requestId"]
            .as_str()
            .unwrap_or_else(|| panic!("ErrorInfo without metadata.requestId: {}", self.json))
    }
    /// The trace id of the answer's `traceparent` header.
    pub fn echoed_trace_id(&self) -> &str {
        self.traceparent
            .as_deref()
            .and_then(|t| t.split('-').nth(1))
            .unwrap_or_else(|| panic!("no traceparent on the answer: {self:?}"))
    }
    /// The JSON-RPC id of the answer.
    pub fn id(&self) -> &Json {
        &self.json["id"]
    }
    /// The JSON-RPC result (panics with the body if the answer is an error).
    pub fn result(&self) -> &Json {
        assert_eq!(
            self.json["jsonrpc"], "2.0",
            "not JSON-RPC 2.0: {}",
            self.json
        );
        assert!(
            self.json.get("error").is_none() && self.json.get("result").is_some(),
            "expected a JSON-RPC result, got HTTP {}: {}",
            self.status,
            self.json
        );
        &self.json["result"]
    }
}
