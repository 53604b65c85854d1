//! This peer as a caller: one capability call through the hub's A2A
//! surface.
//!
//! A peer never calls another peer directly (DESIGN.md §4, "peer to peer"):
//! it sends one A2A v1.0 `SendMessage` (JSON-RPC) to the provider's surface
//! on the hub, `{hub_url}/a2a/{provider}`, with its own token and the
//! envelope (the request id is also the message id), one data part
//! `{"capability", "input"}` ([`exchange::wire`]), and reads the answer
//! into exactly one labelled result: the capability result of the
//! provider's Message or Task, or the reason code of the A2A error's
//! `ErrorInfo`. When the hub itself cannot be reached or answers nonsense,
//! [`call_via_hub`] still returns a `not_connected` result (rule 1: a failed
//! call never crashes or hangs the caller), so benchmarks and tests can use
//! it without special cases.

use crate::hub_credentials::Bearer;
use a2a::{SendMessageRequest, SendMessageResponse};
use exchange::audit::{AuditRecord, AuditTrail, Outcome, Role};
use exchange::envelope::{
    TraceParent, CALLER_HEADER, CURRENT_VERSION, REQUEST_ID_HEADER, TRACEPARENT_HEADER,
    VERSION_HEADER,
};
use exchange::inbox::{proposed_actions, Inbox, Origin};
use exchange::reason::{CallResult, ReasonCode};
use exchange::telemetry;
use exchange::wire;
use serde_json::Value;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// Default deadline of one call to the hub, above the hub's own per-call
/// deadlines so the hub's `TIMEOUT` arrives before ours.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// One call to make.
#[derive(Debug, Clone)]
pub struct HubCall {
    /// `http://127.0.0.1:3000`.
    pub hub_url: String,
    /// This peer's own bearer token, static or from its OpenID provider
    /// (the hub authenticates callers with it).
    pub bearer: Bearer,
    /// This peer's system id (`X-Caller-System`).
    pub caller: String,
    /// The providing system's id.
    pub provider: String,
    /// The capability id (`orders.query`).
    pub capability: String,
    /// The capability input, sent as the message's data part.
    pub input: Value,
    /// Also the idempotency key of a consult.
    pub request_id: String,
    /// The caller's span; the trace id runs through hub and responder.
    pub traceparent: TraceParent,
    /// Give up on the hub after this long.
    pub timeout: Duration,
    /// The A2A conversation the message belongs to (a negotiation's
    /// `contextId`); `None` starts a new one.
    pub context_id: Option<String>,
}

/// The hub's answer (or our own `not_connected` when there was none).
#[derive(Debug, Clone)]
pub struct HubAnswer {
    /// HTTP status of the hub's answer; `None` when none arrived.
    pub http_status: Option<u16>,
    /// The one labelled result.
    pub result: CallResult,
    /// The JSON to show: the labelled result, serialised.
    pub body: Value,
    /// How long the call took, for the caller's trail.
    pub elapsed: Duration,
}

impl HubAnswer {
    /// Whether the call connected.
    pub fn connected(&self) -> bool {
        matches!(self.result, CallResult::Connected { .. })
    }
}

/// A client tuned for loopback calls to the hub (pooled, no proxy lookup),
/// presenting nothing but the bearer token: a plain-HTTP hub's. A hub
/// behind TLS takes [`HubCredentials::http_client`](crate::hub_credentials::HubCredentials::http_client).
pub fn http_client() -> reqwest::Client {
    crate::hub_credentials::client_builder()
        .build()
        .unwrap_or_else(|_| reqwest::Client::new())
}

/// The URL of a provider's A2A surface (JSON-RPC) on the hub.
pub fn surface_url(hub_url: &str, provider: &str) -> String {
    format!("{}/a2a/{provider}", hub_url.trim_end_matches('/'))
}

/// Makes one call through the hub. Never fails: transport problems become
/// `not_connected` (`AUTH_REJECTED` when no access token could be had from
/// this peer's OpenID provider, `PEER_UNREACHABLE` when the hub cannot be reached,
/// `TIMEOUT` past `call.timeout`, `PEER_ERROR` when the hub's answer is not
/// an A2A answer).
///
/// When traces are exported the call is one `peer.call` span, a child of
/// `call.traceparent`, and the traceparent sent names that span (same trace
/// id); otherwise `call.traceparent` goes as it is.
pub async fn call_via_hub(client: &reqwest::Client, call: &HubCall) -> HubAnswer {
    let span = telemetry::call_span(
        &call.caller,
        &call.provider,
        &call.capability,
        &call.request_id,
    );
    telemetry::parent_on(&span, &call.traceparent);
    let sent = telemetry::traceparent_of(&span, &call.traceparent)
        .unwrap_or_else(|| call.traceparent.clone());
    let answer = send(client, call, &sent).instrument(span.clone()).await;
    telemetry::record_result(&span, &answer.result);
    answer
}

async fn send(client: &reqwest::Client, call: &HubCall, traceparent: &TraceParent) -> HubAnswer {
    let started = Instant::now();
    let mut message = wire::call_message(&call.capability, call.input.clone());
    message.message_id.clone_from(&call.request_id);
    message.context_id.clone_from(&call.context_id);
    let params = SendMessageRequest {
        message,
        configuration: None,
        metadata: None,
        tenant: None,
    };
    let params = serde_json::to_value(params).unwrap_or(Value::Null);
    let refused = |reason: ReasonCode, detail: String| CallResult::NotConnected {
        trace_id: call.traceparent.trace_id.clone(),
        request_id: call.request_id.clone(),
        reason,
        detail,
    };
    let answer = |result: CallResult, status: Option<u16>| HubAnswer {
        http_status: status,
        body: serde_json::to_value(&result).unwrap_or(Value::Null),
        result,
        elapsed: started.elapsed(),
    };
    // No token, no call: the hub would refuse it anyway.
    let token = match call.bearer.token().await {
        Ok(token) => token,
        Err(e) => return answer(refused(ReasonCode::AuthRejected, e.to_string()), None),
    };
    let sent = client
        .post(surface_url(&call.hub_url, &call.provider))
        .timeout(call.timeout)
        .bearer_auth(token.expose())
        .header(CALLER_HEADER, &call.caller)
        .header(VERSION_HEADER, CURRENT_VERSION)
        .header(REQUEST_ID_HEADER, &call.request_id)
        .header(TRACEPARENT_HEADER, traceparent.to_header())
        .json(&wire::jsonrpc_request(
            &call.request_id,
            wire::SEND_MESSAGE_METHOD,
            &params,
        ))
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            return answer(
                refused(
                    ReasonCode::Timeout,
                    format!(
                        "the hub did not answer within {} ms",
                        call.timeout.as_millis()
                    ),
                ),
                None,
            )
        }
        Err(e) => {
            return answer(
                refused(
                    ReasonCode::PeerUnreachable,
                    format!(
                        "the hub at {} cannot be reached: {}",
                        call.hub_url,
                        exchange::http::root_cause(&e)
                    ),
                ),
                None,
            )
        }
    };
    let status = resp.status().as_u16();
    let body: Value = match resp.json().await {
        Ok(b) => b,
        Err(e) if e.is_timeout() => {
            return answer(
                refused(
                    ReasonCode::Timeout,
                    format!(
                        "the hub's answer did not complete within {} ms",
                        call.timeout.as_millis()
                    ),
                ),
                Some(status),
            )
        }
        Err(_) => {
            return answer(
                refused(
                    ReasonCode::PeerError,
                    format!("the hub answered HTTP {status} without a JSON body"),
                ),
                Some(status),
            )
        }
    };
    answer(read_answer(call, status, &body), Some(status))
}

/// The labelled result of the hub's JSON-RPC answer: the capability
/// result of a `SendMessage` result, or the reason code of an error
/// (`PEER_ERROR` for an error without one, or for an answer that is
/// neither).
fn read_answer(call: &HubCall, status: u16, body: &Value) -> CallResult {
    let (trace_id, request_id) = (call.traceparent.trace_id.clone(), call.request_id.clone());
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)");
        return CallResult::NotConnected {
            trace_id,
            request_id,
            reason: wire::error_reason(error).unwrap_or(ReasonCode::PeerError),
            detail: exchange::text::clip(message, 300),
        };
    }
    let parsed = body
        .get("result")
        .cloned()
        .ok_or_else(|| format!("the hub answered HTTP {status} with no JSON-RPC result"))
        .and_then(|r| {
            serde_json::from_value::<SendMessageResponse>(r)
                .map_err(|e| format!("the hub's answer is not an A2A answer: {e}"))
        });
    let replayed = |response: &SendMessageResponse| {
        let metadata = match response {
            SendMessageResponse::Message(m) => m.metadata.as_ref(),
            SendMessageResponse::Task(t) => t.metadata.as_ref(),
        };
        metadata
            .and_then(|m| m.get(wire::REPLAYED_METADATA_KEY))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    match parsed.and_then(|response| {
        wire::parse_answer(&response)
            .map(|result| (result, replayed(&response)))
            .map_err(|e| e.to_string())
    }) {
        Ok((result, replayed)) => CallResult::Connected {
            trace_id,
            request_id,
            replayed,
            result,
        },
        Err(detail) => CallResult::NotConnected {
            trace_id,
            request_id,
            reason: ReasonCode::PeerError,
            detail,
        },
    }
}

/// Makes the call and keeps this peer's side of the story: one Caller
/// record in its own trail, and any proposed actions of a connected
/// consult answer stored pending in its inbox (ids returned).
pub async fn call_and_record(
    client: &reqwest::Client,
    call: &HubCall,
    trail: &AuditTrail,
    inbox: &Inbox,
) -> anyhow::Result<(HubAnswer, Vec<i64>)> {
    // The caller's record carries the time the call started, so a rebuilt
    // interaction reads caller → responder → hub → caller in time order.
    let at = exchange::audit::now();
    let answer = call_via_hub(client, call).await;
    let (outcome, reason, detail) = match &answer.result {
        CallResult::Connected { replayed: true, .. } => (Outcome::Replayed, None, String::new()),
        CallResult::Connected { .. } => (Outcome::Connected, None, String::new()),
        CallResult::NotConnected { reason, .. } => (
            Outcome::NotConnected,
            Some(*reason),
            reason.as_str().to_string(),
        ),
    };
    trail
        .append(AuditRecord {
            system: call.caller.clone(),
            role: Role::Caller,
            at,
            caller: call.caller.clone(),
            provider: call.provider.clone(),
            capability: call.capability.clone(),
            request_id: call.request_id.clone(),
            trace_id: call.traceparent.trace_id.clone(),
            outcome,
            reason,
            duration_ms: u64::try_from(answer.elapsed.as_millis()).unwrap_or(u64::MAX),
            detail,
        })
        .await?;
    let mut ids = Vec::new();
    if let CallResult::Connected { result, .. } = &answer.result {
        let actions = proposed_actions(result);
        if !actions.is_empty() {
            let origin = Origin {
                trace_id: &call.traceparent.trace_id,
                request_id: &call.request_id,
                from_system: &call.provider,
                capability: &call.capability,
            };
            ids = inbox.add_pending(&origin, &actions).await?;
        }
    }
    Ok((answer, ids))
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
