//! The A2A gateway: how one system's call reaches another (DESIGN.md §4,
//! "Peer to peer").
//!
//! `POST /gateway/v1/{provider}/{capability}` with the capability input as
//! the JSON body. In order: envelope (version) → auth chain → provider
//! known → rule check → consult replay from the idempotency store →
//! forward with the envelope under the capability's deadline → response
//! contract → store the consult answer → answer. Every outcome is one
//! [`CallResult`]: `connected` or `not_connected` with one reason code, and
//! every call leaves one record in the hub's audit trail.
//!
//! Robustness rules (DESIGN.md §1): nothing here panics on peer input, no
//! call outlives its deadline, and no lock is held across a wait on a peer,
//! so one slow or dead peer cannot delay calls to the others.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{SendMessageRequest, SendMessageResponse};
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::auth::{token_for, AuthChain, AuthContext};
use crate::idempotency::{IdempotencyKey, IdempotencyStore};
use crate::prober::StatusBoard;
use crate::registry::model::{CapabilityKind, System};
use crate::registry::Registry;
use exchange::audit::{AuditRecord, AuditTrail, Outcome, Role};
use exchange::envelope::{Envelope, CALLER_HEADER, REQUEST_ID_HEADER, TRACEPARENT_HEADER};
use exchange::http::{read_limited, transport_failure};
use exchange::reason::{CallResult, NotConnected, ReasonCode};
use exchange::text::clip;
use exchange::wire;

/// Largest request body the gateway accepts from a caller.
pub const MAX_REQUEST_BODY: usize = 1024 * 1024;
/// Largest answer the gateway reads from a provider.
pub const MAX_ANSWER_BODY: usize = 4 * 1024 * 1024;
/// How much of a peer's error message reaches the caller.
pub const MAX_PEER_DETAIL: usize = 300;
/// Connect timeout of the shared client: never more than a deadline, and
/// the per-call deadline bounds everything anyway.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(1000);

/// The gateway: shared by the HTTP handler and the hub's own callers.
pub struct Gateway {
    registry: Arc<Registry>,
    board: Arc<StatusBoard>,
    idempotency: IdempotencyStore,
    audit: AuditTrail,
    auth: AuthChain,
    client: reqwest::Client,
    /// One async lock per consult key currently running, so a duplicate
    /// that arrives while the first is in flight waits for its answer
    /// instead of executing the consult a second time. The map's own lock
    /// is only held to look the entry up, never across an await.
    in_flight: Mutex<HashMap<IdempotencyKey, Arc<tokio::sync::Mutex<()>>>>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// Why the gateway could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The HTTP client could not be configured.
    #[error("building the gateway's HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// What the HTTP layer hands the gateway about one incoming call.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// The TCP peer, for the IP allowlist.
    pub peer_addr: Option<SocketAddr>,
    /// Request headers (envelope, caller, token).
    pub headers: HeaderMap,
    /// `{provider}` of the path.
    pub provider: String,
    /// `{capability}` of the path.
    pub capability: String,
    /// The raw body: the capability input.
    pub body: Bytes,
}

/// What happened, before it is turned into a [`CallResult`].
struct Done {
    result: Result<(Value, bool), NotConnected>,
    /// Extra operator detail for the audit trail (e.g. replay origin).
    note: String,
    /// HTTP status override (a malformed request body is the caller's fault).
    status: Option<StatusCode>,
}

impl Done {
    fn fail(nc: NotConnected) -> Self {
        Self {
            result: Err(nc),
            note: String::new(),
            status: None,
        }
    }
}

impl Gateway {
    /// A gateway over the given registry, status board and hub stores, with
    /// the standard auth chain and one pooled HTTP client for all peers.
    pub fn new(
        registry: Arc<Registry>,
        board: Arc<StatusBoard>,
        idempotency: IdempotencyStore,
        audit: AuditTrail,
    ) -> Result<Self, GatewayError> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(CONNECT_TIMEOUT)
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(32)
            .tcp_nodelay(true)
            .build()?;
        Ok(Self {
            registry,
            board,
            idempotency,
            audit,
            auth: AuthChain::standard(),
            client,
            in_flight: Mutex::new(HashMap::new()),
        })
    }

    /// The audit trail this gateway writes (the hub's).
    pub fn audit(&self) -> &AuditTrail {
        &self.audit
    }

    /// A call from a peer over HTTP: the whole pipeline, auth included.
    /// Returns the HTTP status along with the result.
    pub async fn handle(&self, incoming: Incoming) -> (StatusCode, Envelope, CallResult) {
        let started = Instant::now();
        let envelope = Envelope::from_headers(&incoming.headers);
        let caller = incoming
            .headers
            .get(CALLER_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .unwrap_or_default()
            .to_string();
        let done = self.authenticated(&caller, &incoming, &envelope).await;
        let (status, result) = self
            .finish(
                &caller,
                &incoming.provider,
                &incoming.capability,
                &envelope,
                started,
                done,
            )
            .await;
        (status, envelope, result)
    }

    async fn authenticated(&self, caller: &str, incoming: &Incoming, envelope: &Envelope) -> Done {
        if !envelope.version_supported() {
            return Done::fail(version_unsupported(envelope));
        }
        let loaded = self.registry.snapshot();
        let cx = AuthContext {
            caller,
            peer_addr: incoming.peer_addr,
            headers: &incoming.headers,
            topology: &loaded.topology,
        };
        if let Err(nc) = self.auth.check(&cx) {
            return Done::fail(nc);
        }
        let input: Value = if incoming.body.iter().all(u8::is_ascii_whitespace) {
            json!({})
        } else {
            match serde_json::from_slice(&incoming.body) {
                Ok(v) => v,
                Err(e) => {
                    return Done {
                        status: Some(StatusCode::BAD_REQUEST),
                        ..Done::fail(NotConnected::new(
                            ReasonCode::PeerError,
                            format!("the caller's request body is not JSON: {e}"),
                        ))
                    }
                }
            }
        };
        self.dispatch(
            caller,
            &incoming.provider,
            &incoming.capability,
            input,
            envelope,
        )
        .await
    }

    /// A call by a trusted in-process caller (the hub's own agents and the
    /// BFF, `caller` = the hub id): no IP or token layers, everything else
    /// as for a peer, including the rule check and the audit record.
    pub async fn call(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
        input: Value,
        envelope: Envelope,
    ) -> CallResult {
        let started = Instant::now();
        let done = if envelope.version_supported() {
            self.dispatch(caller, provider, capability, input, &envelope)
                .await
        } else {
            Done::fail(version_unsupported(&envelope))
        };
        self.finish(caller, provider, capability, &envelope, started, done)
            .await
            .1
    }

    /// Registry checks, replay, forward, contract, store.
    async fn dispatch(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
        input: Value,
        envelope: &Envelope,
    ) -> Done {
        let loaded = self.registry.snapshot();
        let topology = &loaded.topology;
        let Some(system) = topology.system(provider) else {
            return Done::fail(NotConnected::new(
                ReasonCode::UnknownPeer,
                format!("no system `{}` in the registry", clip(provider, 64)),
            ));
        };
        let Some(cap) = topology.capability(capability) else {
            return Done::fail(NotConnected::new(
                ReasonCode::NotPermitted,
                format!("no capability `{}` in the registry", clip(capability, 64)),
            ));
        };
        if !topology.permits(caller, capability, provider) {
            return Done::fail(NotConnected::new(
                ReasonCode::NotPermitted,
                format!("no rule lets {caller} use {capability} of {provider}"),
            ));
        }
        let deadline_ms = topology.deadline_ms(capability);
        let deadline = Instant::now() + Duration::from_millis(deadline_ms);
        let contract = loaded.contracts.get(capability);
        // The hub's half of the grant: an input outside the capability's
        // input schema (a column nobody granted) never leaves the hub.
        if let Some(v) = contract
            .as_deref()
            .and_then(|c| c.check_input(&input).err())
        {
            return Done::fail(NotConnected::new(
                ReasonCode::NotPermitted,
                format!(
                    "{capability}: the input is outside the contract at {}: {}",
                    v.pointer, v.problem
                ),
            ));
        }
        let kind = cap.kind;
        let system = system.clone();
        drop(loaded);

        let key = (kind == CapabilityKind::Consult && envelope.request_id_from_caller).then(|| {
            IdempotencyKey {
                caller: caller.to_string(),
                provider: provider.to_string(),
                capability: capability.to_string(),
                request_id: envelope.request_id.clone(),
            }
        });
        let Some(key) = key else {
            let result = self
                .forward_checked(
                    &system,
                    caller,
                    capability,
                    input,
                    envelope,
                    deadline,
                    deadline_ms,
                    contract.as_deref(),
                )
                .await;
            return Done {
                result: result.map(|v| (v, false)),
                note: String::new(),
                status: None,
            };
        };

        // A consult with the caller's request id: at most one execution,
        // and only ever for the input the id was first used with.
        let digest = crate::idempotency::input_digest(&input);
        if let Some(done) = self.replay(&key, &digest).await {
            return done;
        }
        let slot = self.slot(&key);
        let Ok(_guard) = tokio::time::timeout_at(deadline, slot.lock.lock()).await else {
            return Done::fail(NotConnected::new(
                ReasonCode::Timeout,
                format!("an identical consult is still running after {deadline_ms} ms"),
            ));
        };
        if let Some(done) = self.replay(&key, &digest).await {
            return done;
        }
        let result = self
            .forward_checked(
                &system,
                caller,
                capability,
                input,
                envelope,
                deadline,
                deadline_ms,
                contract.as_deref(),
            )
            .await;
        if let Ok(answer) = &result {
            if let Err(e) = self
                .idempotency
                .put(&key, &digest, answer, &envelope.trace.trace_id)
                .await
            {
                tracing::warn!(error = %e, "could not store a consult answer for replay");
            }
        }
        Done {
            result: result.map(|v| (v, false)),
            note: String::new(),
            status: None,
        }
    }

    /// The stored answer for `key` if it was given for this input; a
    /// refusal (409) if the key was first used with another input.
    async fn replay(&self, key: &IdempotencyKey, digest: &str) -> Option<Done> {
        match self.idempotency.get(key).await {
            Ok(Some(stored)) if stored.input_digest.as_deref().is_some_and(|d| d != digest) => {
                Some(Done {
                    result: Err(NotConnected::new(
                        ReasonCode::PeerError,
                        format!(
                            "X-Request-Id {} was first used with a different input for {}; \
                             a retry must repeat the same input, a new request needs a new id",
                            clip(&key.request_id, 64),
                            key.capability
                        ),
                    )),
                    note: format!(
                        "request id reused with another input (first trace {})",
                        stored.trace_id
                    ),
                    status: Some(StatusCode::CONFLICT),
                })
            }
            Ok(Some(stored)) => Some(Done {
                result: Ok((stored.answer, true)),
                note: format!("replay of trace {}", stored.trace_id),
                status: None,
            }),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "idempotency lookup failed; executing");
                None
            }
        }
    }

    fn slot(&self, key: &IdempotencyKey) -> Slot<'_> {
        let lock = match self.in_flight.lock() {
            Ok(mut map) => map.entry(key.clone()).or_default().clone(),
            // A poisoned map only loses de-duplication of concurrent
            // duplicates; the stored-answer check still applies.
            Err(_) => Arc::default(),
        };
        Slot {
            map: &self.in_flight,
            key: key.clone(),
            lock,
        }
    }

    /// Forwards, then checks the answer against the contract, and feeds
    /// the provider's status on the board.
    #[allow(clippy::too_many_arguments)]
    async fn forward_checked(
        &self,
        system: &System,
        caller: &str,
        capability: &str,
        input: Value,
        envelope: &Envelope,
        deadline: Instant,
        deadline_ms: u64,
        contract: Option<&crate::contract::Contract>,
    ) -> Result<Value, NotConnected> {
        let result = self
            .forward(
                system,
                caller,
                capability,
                input,
                envelope,
                deadline,
                deadline_ms,
            )
            .await
            .and_then(|answer| match contract {
                None => Ok(answer),
                Some(c) => c.check(&answer).map(|()| answer).map_err(|v| {
                    Failure::provider(NotConnected::new(
                        ReasonCode::SchemaInvalid,
                        format!("{capability}: {v}"),
                    ))
                }),
            });
        match result {
            Ok(answer) => {
                self.board.record_call(&system.id, Ok(()));
                Ok(answer)
            }
            Err(failure) => {
                if failure.provider_fault {
                    self.board.record_call(&system.id, Err(failure.nc.clone()));
                }
                Err(failure.nc)
            }
        }
    }

    /// One A2A `SendMessage` to the provider, bounded by `deadline` from
    /// the first byte sent to the last byte read.
    #[allow(clippy::too_many_arguments)]
    async fn forward(
        &self,
        system: &System,
        caller: &str,
        capability: &str,
        input: Value,
        envelope: &Envelope,
        deadline: Instant,
        deadline_ms: u64,
    ) -> Result<Value, Failure> {
        let id = system.id.as_str();
        let Some(token) = token_for(system) else {
            // The hub's own configuration, not the provider's health.
            return Err(Failure {
                nc: NotConnected::new(
                    ReasonCode::AuthRejected,
                    format!("the hub holds no token for {id}"),
                ),
                provider_fault: false,
            });
        };
        let params = SendMessageRequest {
            message: wire::call_message(capability, input),
            configuration: None,
            metadata: None,
            tenant: None,
        };
        let body = json!({
            "jsonrpc": "2.0",
            "id": envelope.request_id,
            "method": wire::SEND_MESSAGE_METHOD,
            "params": params,
        });
        let url = format!(
            "{}{}",
            system.base_url.trim_end_matches('/'),
            wire::A2A_JSONRPC_PATH
        );
        let mut request = self
            .client
            .post(url)
            .bearer_auth(token)
            .header(CALLER_HEADER, caller)
            .json(&body);
        for (name, value) in envelope.forward_headers() {
            request = request.header(name, value);
        }
        let exchange = async {
            let resp = request.send().await?;
            let status = resp.status();
            let body = read_limited(resp, MAX_ANSWER_BODY).await?;
            Ok::<_, reqwest::Error>((status, body))
        };
        let (status, body) = match tokio::time::timeout_at(deadline, exchange).await {
            Err(_) => {
                return Err(Failure::provider(NotConnected::new(
                    ReasonCode::Timeout,
                    format!("{id} did not answer within {deadline_ms} ms"),
                )))
            }
            Ok(Err(e)) => return Err(Failure::provider(transport_failure(id, &e))),
            Ok(Ok(x)) => x,
        };
        let Some(body) = body else {
            return Err(Failure::provider(peer_error(format!(
                "{id}'s answer is larger than 4 MiB"
            ))));
        };
        interpret_answer(id, status, &body)
    }
}

/// A failed forward, and whether it says anything about the provider's
/// health. A peer refusing the caller's input (JSON-RPC "invalid params")
/// is working as it should: the call fails, the provider is not degraded.
struct Failure {
    nc: NotConnected,
    provider_fault: bool,
}

impl Failure {
    fn provider(nc: NotConnected) -> Self {
        Self {
            nc,
            provider_fault: true,
        }
    }
}

/// JSON-RPC codes that blame the request, not the responder.
const CALLER_FAULT_CODES: [i64; 2] = [-32600, -32602];

/// Turns a provider's HTTP answer into the capability result or a
/// `PEER_ERROR` whose detail is the peer's own message, clipped.
fn interpret_answer(id: &str, status: reqwest::StatusCode, body: &[u8]) -> Result<Value, Failure> {
    let fail = |message: String| Failure::provider(peer_error(message));
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let rpc_error = parsed
        .as_ref()
        .and_then(|v| v.get("error"))
        .filter(|e| !e.is_null())
        .map(|e| {
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string());
            let code = e.get("code").and_then(Value::as_i64);
            (message, code)
        });
    if !status.is_success() {
        let message = rpc_error
            .map(|(m, _)| m)
            .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
        return Err(fail(format!("HTTP {}: {message}", status.as_u16())));
    }
    let Some(parsed) = parsed else {
        return Err(fail(format!("{id}'s answer is not JSON")));
    };
    if let Some((message, code)) = rpc_error {
        return Err(Failure {
            nc: peer_error(message),
            provider_fault: !code.is_some_and(|c| CALLER_FAULT_CODES.contains(&c)),
        });
    }
    let Some(result) = parsed.get("result").filter(|r| !r.is_null()) else {
        return Err(fail(format!("{id}'s JSON-RPC answer has no result")));
    };
    let response: SendMessageResponse = serde_json::from_value(result.clone()).map_err(|e| {
        fail(format!(
            "{id}'s answer is not an A2A SendMessage response: {e}"
        ))
    })?;
    wire::parse_answer(&response).map_err(|e| fail(format!("{id}'s answer: {e}")))
}

fn peer_error(message: String) -> NotConnected {
    NotConnected::new(ReasonCode::PeerError, clip(&message, MAX_PEER_DETAIL))
}

fn version_unsupported(envelope: &Envelope) -> NotConnected {
    NotConnected::new(
        ReasonCode::VersionUnsupported,
        format!(
            "A2A version {} is not supported (supported: {})",
            clip(&envelope.version, 32),
            exchange::envelope::SUPPORTED_VERSIONS.join(", ")
        ),
    )
}

impl Gateway {
    /// Builds the result, writes the audit record, answers the status.
    async fn finish(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
        envelope: &Envelope,
        started: Instant,
        done: Done,
    ) -> (StatusCode, CallResult) {
        let trace_id = envelope.trace.trace_id.clone();
        let request_id = envelope.request_id.clone();
        let (status, result, outcome, reason, detail) = match done.result {
            Ok((value, replayed)) => (
                StatusCode::OK,
                CallResult::Connected {
                    trace_id,
                    request_id,
                    replayed,
                    result: value,
                },
                if replayed {
                    Outcome::Replayed
                } else {
                    Outcome::Connected
                },
                None,
                done.note,
            ),
            Err(nc) => (
                done.status.unwrap_or_else(|| {
                    StatusCode::from_u16(nc.reason.http_status()).unwrap_or(StatusCode::BAD_GATEWAY)
                }),
                CallResult::NotConnected {
                    trace_id,
                    request_id,
                    reason: nc.reason,
                    detail: nc.detail.clone(),
                },
                Outcome::NotConnected,
                Some(nc.reason),
                nc.detail,
            ),
        };
        let record = AuditRecord {
            system: String::new(),
            role: Role::Hub,
            at: exchange::audit::now(),
            caller: clip(caller, 64),
            provider: clip(provider, 64),
            capability: clip(capability, 64),
            request_id: envelope.request_id.clone(),
            trace_id: envelope.trace.trace_id.clone(),
            outcome,
            reason,
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            detail,
        };
        if let Err(e) = self.audit.append(record).await {
            tracing::warn!(error = %e, "could not append to the hub's audit trail");
        }
        (status, result)
    }
}

/// An entry of the in-flight map; removes itself when the last user of the
/// key is done, even if the call was cancelled midway.
struct Slot<'a> {
    map: &'a Mutex<HashMap<IdempotencyKey, Arc<tokio::sync::Mutex<()>>>>,
    key: IdempotencyKey,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Ok(mut map) = self.map.lock() {
            // Two holders left: the map and this slot. Nobody else can
            // clone it without taking the map lock we hold.
            if Arc::strong_count(&self.lock) == 2 {
                map.remove(&self.key);
            }
        }
    }
}

/// `POST /gateway/v1/{provider}/{capability}`.
///
/// The pipeline runs on its own task: a caller that hangs up cannot cut a
/// call short between forwarding and recording it, and a bug cannot take
/// the connection's task down with it.
pub async fn handler(
    State(gateway): State<Arc<Gateway>>,
    Path((provider, capability)): Path<(String, String)>,
    request: Request,
) -> Response {
    let peer_addr = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ci| ci.0);
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_REQUEST_BODY).await {
        Ok(b) => b,
        Err(_) => {
            let envelope = Envelope::from_headers(&parts.headers);
            let caller = parts
                .headers
                .get(CALLER_HEADER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let done = Done {
                status: Some(StatusCode::PAYLOAD_TOO_LARGE),
                ..Done::fail(NotConnected::new(
                    ReasonCode::PeerError,
                    "request body unreadable or larger than 1 MiB",
                ))
            };
            let (status, result) = gateway
                .finish(
                    caller,
                    &provider,
                    &capability,
                    &envelope,
                    Instant::now(),
                    done,
                )
                .await;
            return respond(status, &envelope, result);
        }
    };
    let incoming = Incoming {
        peer_addr,
        headers: parts.headers.clone(),
        provider,
        capability,
        body,
    };
    let task = tokio::spawn(async move { gateway.handle(incoming).await });
    match task.await {
        Ok((status, envelope, result)) => respond(status, &envelope, result),
        Err(e) => {
            tracing::error!(error = %e, "gateway task failed");
            let envelope = Envelope::from_headers(&parts.headers);
            respond(
                StatusCode::INTERNAL_SERVER_ERROR,
                &envelope,
                CallResult::NotConnected {
                    trace_id: envelope.trace.trace_id.clone(),
                    request_id: envelope.request_id.clone(),
                    reason: ReasonCode::PeerError,
                    detail: "internal gateway error".into(),
                },
            )
        }
    }
}

/// The HTTP answer: the JSON result, plus the envelope echoed as headers
/// (same trace-id, the hub's span; the request id).
fn respond(status: StatusCode, envelope: &Envelope, result: CallResult) -> Response {
    let mut response = (status, Json(result)).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&envelope.trace.child().to_header()) {
        headers.insert(TRACEPARENT_HEADER, v);
    }
    if let Ok(v) = HeaderValue::from_str(&envelope.request_id) {
        headers.insert(REQUEST_ID_HEADER, v);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventBus;
    use crate::prober::PeerStatus;
    use axum::routing::post;
    use axum::Router;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::net::TcpListener;

    /// What the fake provider saw of the last call.
    #[derive(Default)]
    struct Seen {
        calls: AtomicUsize,
        headers: Mutex<Option<HeaderMap>>,
    }

    /// How the fake provider answers.
    #[derive(Clone, Copy)]
    enum Mode {
        Good,
        Slow,
        BadSchema,
        RpcError,
        InvalidParams,
        Http500,
    }

    fn good_orders() -> Value {
        json!({"table": "orders", "aggregate": {"op": "count", "column": "order_value"},
               "group_by": null, "groups": [{"key": null, "value": 3, "count": 3}], "row_count": 3})
    }

    fn good_budget() -> Value {
        json!({"department": "it", "budget": 10.0, "spent": 4.0, "remaining": 6.0,
               "answer": "fine", "proposed_actions": []})
    }

    async fn fake_provider(mode: Mode, seen: Arc<Seen>) -> u16 {
        let app = Router::new().route(
            wire::A2A_JSONRPC_PATH,
            post(move |headers: HeaderMap, Json(req): Json<Value>| {
                let seen = seen.clone();
                async move {
                    seen.calls.fetch_add(1, Ordering::SeqCst);
                    if let Ok(mut h) = seen.headers.lock() {
                        *h = Some(headers);
                    }
                    let capability = req["params"]["message"]["parts"][0]["data"]["capability"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let result = if capability == "budget.consult" {
                        json!({"department": "it", "budget": 10.0, "spent": 4.0, "remaining": 6.0,
                               "answer": format!("call {}", seen.calls.load(Ordering::SeqCst)),
                               "proposed_actions": []})
                    } else {
                        good_orders()
                    };
                    let answer = |result: Value| {
                        let msg = wire::answer_message(result, None);
                        json!({"jsonrpc": "2.0", "id": req["id"],
                               "result": SendMessageResponse::Message(msg)})
                    };
                    match mode {
                        Mode::Good => (StatusCode::OK, Json(answer(result))),
                        Mode::Slow => {
                            tokio::time::sleep(Duration::from_secs(5)).await;
                            (StatusCode::OK, Json(answer(result)))
                        }
                        Mode::BadSchema => {
                            let mut r = good_orders();
                            r["groups"][0]["count"] = json!("three");
                            (StatusCode::OK, Json(answer(r)))
                        }
                        Mode::RpcError => (
                            StatusCode::OK,
                            Json(json!({"jsonrpc": "2.0", "id": req["id"],
                                "error": {"code": -32000, "message": "x".repeat(1000)}})),
                        ),
                        Mode::InvalidParams => (
                            StatusCode::OK,
                            Json(json!({"jsonrpc": "2.0", "id": req["id"],
                                "error": {"code": -32602, "message": "unknown column \"colour\""}})),
                        ),
                        Mode::Http500 => (
                            StatusCode::INTERNAL_SERVER_ERROR,
                            Json(json!({"oops": true})),
                        ),
                    }
                }
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        port
    }

    struct Fixture {
        gateway: Arc<Gateway>,
        board: Arc<StatusBoard>,
        _dir: tempfile::TempDir,
    }

    impl Fixture {
        /// One call with a fresh root envelope.
        async fn call(
            &self,
            caller: &str,
            provider: &str,
            capability: &str,
            input: Value,
        ) -> CallResult {
            self.gateway
                .call(caller, provider, capability, input, Envelope::new_root())
                .await
        }
    }

    /// A gateway whose vendorcorp and buyercorp point at `port`, with a
    /// deadline of `deadline_ms` and per-test token env vars.
    async fn fixture(port: u16, deadline_ms: u64, tag: &str) -> Fixture {
        let text = include_str!("../../config/topology.yaml")
            .replace("http://127.0.0.1:3101", &format!("http://127.0.0.1:{port}"))
            .replace("http://127.0.0.1:3102", &format!("http://127.0.0.1:{port}"))
            .replace("deadline_ms: 2000", &format!("deadline_ms: {deadline_ms}"))
            .replace("WS_TOKEN_", &format!("WS_TEST_GW_{tag}_"));
        for sys in ["VENDORCORP", "BUYERCORP", "HELPDESK"] {
            std::env::set_var(format!("WS_TEST_GW_{tag}_{sys}"), format!("tok-{sys}"));
        }
        let loaded = crate::registry::load::load_str("t.yaml", &text).expect("valid");
        let bus = EventBus::new();
        let registry = Arc::new(Registry::with_loaded("t.yaml", loaded, bus.clone()));
        let board = Arc::new(StatusBoard::new(bus));
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = exchange::db::open(&dir.path().join("hub.db"))
            .await
            .expect("db");
        let idem = IdempotencyStore::open(pool.clone()).await.expect("idem");
        let audit = AuditTrail::open(pool, "hub").await.expect("audit");
        let gateway = Arc::new(Gateway::new(registry, board.clone(), idem, audit).expect("gw"));
        Fixture {
            gateway,
            board,
            _dir: dir,
        }
    }

    fn reason(r: &CallResult) -> Option<ReasonCode> {
        match r {
            CallResult::NotConnected { reason, .. } => Some(*reason),
            CallResult::Connected { .. } => None,
        }
    }

    fn detail(r: &CallResult) -> String {
        match r {
            CallResult::NotConnected { detail, .. } => detail.clone(),
            CallResult::Connected { .. } => String::new(),
        }
    }

    #[tokio::test]
    async fn forwarding_keeps_the_trace_id_and_sends_the_envelope() {
        let seen = Arc::new(Seen::default());
        let port = fake_provider(Mode::Good, seen.clone()).await;
        let f = fixture(port, 2000, "TRACE").await;
        let env = Envelope::new_root();
        let result = f
            .gateway
            .call("hub", "vendorcorp", "orders.query", json!({}), env.clone())
            .await;
        match &result {
            CallResult::Connected {
                trace_id,
                result,
                replayed,
                ..
            } => {
                assert_eq!(trace_id, &env.trace.trace_id);
                assert_eq!(result, &good_orders());
                assert!(!replayed);
            }
            other => panic!("{other:?}"),
        }
        let headers = seen
            .headers
            .lock()
            .ok()
            .and_then(|h| h.clone())
            .expect("called");
        let tp = headers
            .get(TRACEPARENT_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(exchange::envelope::TraceParent::parse)
            .expect("traceparent forwarded");
        assert_eq!(tp.trace_id, env.trace.trace_id, "same trace id");
        assert_ne!(tp.span_id, env.trace.span_id, "new span");
        let h = |n: &str| {
            headers
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        assert_eq!(h("authorization").as_deref(), Some("Bearer tok-VENDORCORP"));
        assert_eq!(h(CALLER_HEADER).as_deref(), Some("hub"));
        assert_eq!(h(REQUEST_ID_HEADER), Some(env.request_id.clone()));
        assert_eq!(h("a2a-version").as_deref(), Some("1.0"));
        assert_eq!(f.board.status("vendorcorp"), PeerStatus::Healthy);
        let trail = f
            .gateway
            .audit()
            .by_trace(&env.trace.trace_id)
            .await
            .expect("trail");
        assert_eq!(trail.len(), 1);
        assert_eq!(trail[0].outcome, Outcome::Connected);
        assert_eq!(trail[0].role, Role::Hub);
    }

    #[tokio::test]
    async fn a_slow_provider_times_out_at_the_deadline() {
        let port = fake_provider(Mode::Slow, Arc::default()).await;
        let f = fixture(port, 300, "SLOW").await;
        let started = std::time::Instant::now();
        let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
        let took = started.elapsed();
        assert_eq!(reason(&r), Some(ReasonCode::Timeout), "{r:?}");
        assert!(
            took >= Duration::from_millis(290) && took < Duration::from_millis(1500),
            "{took:?}"
        );
        assert_eq!(
            f.board.status("vendorcorp").reason(),
            Some(ReasonCode::Timeout)
        );
    }

    #[tokio::test]
    async fn contract_breach_names_the_pointer() {
        let port = fake_provider(Mode::BadSchema, Arc::default()).await;
        let f = fixture(port, 2000, "SCHEMA").await;
        let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
        assert_eq!(reason(&r), Some(ReasonCode::SchemaInvalid), "{r:?}");
        assert!(detail(&r).contains("/groups/0/count"), "{}", detail(&r));
        assert!(!detail(&r).contains("three"), "no payload in details");
    }

    #[tokio::test]
    async fn peer_errors_are_clipped_and_non_2xx_is_peer_error() {
        let port = fake_provider(Mode::RpcError, Arc::default()).await;
        let f = fixture(port, 2000, "RPCERR").await;
        let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
        assert_eq!(reason(&r), Some(ReasonCode::PeerError));
        assert!(
            detail(&r).chars().count() <= MAX_PEER_DETAIL + 1,
            "{}",
            detail(&r).len()
        );

        let port = fake_provider(Mode::Http500, Arc::default()).await;
        let f = fixture(port, 2000, "HTTP500").await;
        let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
        assert_eq!(reason(&r), Some(ReasonCode::PeerError));
        assert!(detail(&r).starts_with("HTTP 500"), "{}", detail(&r));
        assert_eq!(
            f.board.status("vendorcorp").reason(),
            Some(ReasonCode::PeerError)
        );
    }

    #[tokio::test]
    async fn refused_input_is_a_peer_error_that_does_not_degrade_the_provider() {
        let port = fake_provider(Mode::InvalidParams, Arc::default()).await;
        let f = fixture(port, 2000, "PARAMS").await;
        f.board.record_probe("vendorcorp", Ok(()));
        let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
        assert_eq!(reason(&r), Some(ReasonCode::PeerError));
        assert!(detail(&r).contains("colour"), "{}", detail(&r));
        assert_eq!(f.board.status("vendorcorp"), PeerStatus::Healthy);
    }

    #[tokio::test]
    async fn refused_connection_is_unreachable_and_rules_are_enforced() {
        // Bind then drop: a port nobody listens on.
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
            l.local_addr().expect("addr").port()
        };
        let f = fixture(port, 2000, "REFUSED").await;
        let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
        assert_eq!(reason(&r), Some(ReasonCode::PeerUnreachable), "{r:?}");
        assert!(
            !detail(&r).contains("127.0.0.1"),
            "no URLs in details: {}",
            detail(&r)
        );

        let r = f
            .call("helpdesk", "vendorcorp", "orders.query", json!({}))
            .await;
        assert_eq!(reason(&r), Some(ReasonCode::NotPermitted));
        let r = f.call("hub", "nobody", "orders.query", json!({})).await;
        assert_eq!(reason(&r), Some(ReasonCode::UnknownPeer));
        let r = f
            .call("hub", "vendorcorp", "orders.delete", json!({}))
            .await;
        assert_eq!(reason(&r), Some(ReasonCode::NotPermitted));
    }

    #[tokio::test]
    async fn a_repeated_consult_is_replayed_not_executed() {
        let seen = Arc::new(Seen::default());
        let port = fake_provider(Mode::Good, seen.clone()).await;
        let f = fixture(port, 2000, "IDEM").await;
        let mut env = Envelope::new_root();
        env.request_id = "consult-1".into();
        env.request_id_from_caller = true;
        let first = f
            .gateway
            .call("hub", "buyercorp", "budget.consult", json!({}), env.clone())
            .await;
        let (a, b) = tokio::join!(
            f.gateway
                .call("hub", "buyercorp", "budget.consult", json!({}), env.clone()),
            f.gateway
                .call("hub", "buyercorp", "budget.consult", json!({}), env.clone()),
        );
        assert_eq!(seen.calls.load(Ordering::SeqCst), 1, "executed once");
        for r in [&a, &b] {
            match (r, &first) {
                (
                    CallResult::Connected {
                        replayed: true,
                        result,
                        ..
                    },
                    CallResult::Connected {
                        replayed: false,
                        result: original,
                        ..
                    },
                ) => assert_eq!(result, original),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            f.gateway
                .audit()
                .count("consult-1", Outcome::Replayed)
                .await
                .expect("count"),
            2
        );
        // A data-share is never replayed, even with a caller request id.
        let q1 = f
            .gateway
            .call("hub", "vendorcorp", "orders.query", json!({}), env.clone())
            .await;
        assert!(matches!(
            q1,
            CallResult::Connected {
                replayed: false,
                ..
            }
        ));
        assert_eq!(seen.calls.load(Ordering::SeqCst), 2);
        assert_eq!(good_budget()["answer"], "fine");

        // The same id with another input: refused, not answered with the
        // first input's answer, and nothing executes.
        let other = f
            .gateway
            .call(
                "hub",
                "buyercorp",
                "budget.consult",
                json!({"question": "something else"}),
                env.clone(),
            )
            .await;
        assert_eq!(reason(&other), Some(ReasonCode::PeerError), "{other:?}");
        assert!(detail(&other).contains("first used with a different input"));
        assert_eq!(seen.calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn http_pipeline_checks_version_and_auth_before_anything() {
        let seen = Arc::new(Seen::default());
        let port = fake_provider(Mode::Good, seen.clone()).await;
        let f = fixture(port, 2000, "HTTP").await;
        let incoming = |headers: &[(&'static str, &str)], ip: &str| {
            let mut h = HeaderMap::new();
            for (k, v) in headers {
                if let Ok(v) = HeaderValue::from_str(v) {
                    h.insert(*k, v);
                }
            }
            Incoming {
                peer_addr: format!("{ip}:5000").parse().ok(),
                headers: h,
                provider: "vendorcorp".into(),
                capability: "orders.query".into(),
                body: Bytes::from_static(b"{}"),
            }
        };
        let good = [
            ("x-caller-system", "buyercorp"),
            ("authorization", "Bearer tok-BUYERCORP"),
        ];
        let (status, _, r) = f.gateway.handle(incoming(&good, "127.0.0.1")).await;
        assert_eq!(status, StatusCode::OK, "{r:?}");
        let (status, _, r) = f
            .gateway
            .handle(incoming(
                &[good[0], good[1], ("a2a-version", "0.3")],
                "127.0.0.1",
            ))
            .await;
        assert_eq!(
            (status.as_u16(), reason(&r)),
            (400, Some(ReasonCode::VersionUnsupported))
        );
        let (status, _, r) = f.gateway.handle(incoming(&good, "10.9.9.9")).await;
        assert_eq!(
            (status.as_u16(), reason(&r)),
            (403, Some(ReasonCode::IpNotAllowed))
        );
        let (status, _, r) = f
            .gateway
            .handle(incoming(
                &[good[0], ("authorization", "Bearer nope")],
                "127.0.0.1",
            ))
            .await;
        assert_eq!(
            (status.as_u16(), reason(&r)),
            (401, Some(ReasonCode::AuthRejected))
        );
        assert_eq!(
            seen.calls.load(Ordering::SeqCst),
            1,
            "refused calls are never forwarded"
        );
    }
}
