//! The provider's leg of a call (DESIGN.md §4, "Peer to peer": "forward
//! with envelope → response schema check"): one A2A `SendMessage` to the
//! provider under the capability's deadline, its answer checked against
//! the response contract, and what the call says about the provider's
//! health fed to the status board (DESIGN.md §2, "degraded").
//!
//! This is the only place the gateway waits on a peer, so it is where the
//! robustness rules of DESIGN.md §1 bite: the deadline bounds everything
//! from the first byte sent to the last byte read, the answer is read up to
//! [`MAX_ANSWER_BODY`] and no further, and no lock is held here.
//!
//! What the bytes that come back *mean* is in the sibling `answer`: that is
//! pure (status and bytes in, result or reason code out) and knows nothing
//! of clients, tokens or deadlines, while this file does the I/O and
//! nothing else.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use http_body_util::Full;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::time::Instant;

pub(super) use super::answer::Reply;
use super::answer::{interpret_answer, peer_error};
pub(super) use super::answer::{Blame, Failure};
use super::call::{Answered, Call, Done, TaskSend, DEADLINE_KEY};
use super::client::Providers;
use crate::bridge::{self, Method};
use crate::health::StatusBoard;
use crate::registry::model::System;
use crate::registry::Route;
use a2a::{SendMessageConfiguration, SendMessageRequest};
use exchange::envelope::{A2aVersion, Envelope, CALLER_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::telemetry;
use exchange::wire;
use tracing::Instrument;

/// Largest answer the gateway reads from a provider.
pub const MAX_ANSWER_BODY: usize = 4 * 1024 * 1024;

/// Everything about one forward but the input: the call, the route the
/// registry gave it, when it gives up, and how a task is submitted.
pub(super) struct Leg<'a> {
    /// The call (caller, envelope, conversation, registry generation).
    pub(super) call: &'a Call,
    /// The provider, capability, deadline and contract, of the call's
    /// generation.
    pub(super) route: Route<'a>,
    /// When the call gives up.
    pub(super) deadline: Instant,
    /// For a `task` capability: how to submit it (the answer may then be
    /// a task that is not finished yet).
    pub(super) task: Option<&'a TaskSend>,
}

impl<'a> Leg<'a> {
    /// The JSON-RPC call to the provider this leg makes.
    pub(super) fn rpc(&self) -> Rpc<'a> {
        Rpc {
            system: self.route.system,
            token: self.call.registry.tokens.of(&self.route.system.id),
            caller: &self.call.caller,
            envelope: &self.call.envelope,
            deadline: self.deadline,
            deadline_ms: self.route.deadline_ms,
        }
    }
}

impl Done {
    /// The outcome of a forward that ran (not a replay). A provider that
    /// refused the caller's input (JSON-RPC invalid params) is the
    /// caller's fault: answered with 400, not 502.
    pub(super) fn forwarded(result: Result<Reply, Failure>) -> Self {
        let (status, provider_code) = match &result {
            Err(f) if f.blame == Blame::Caller => (Some(http::StatusCode::BAD_REQUEST), f.code),
            _ => (None, None),
        };
        Self {
            result: result
                .map(|r| Answered {
                    result: r.result,
                    replayed: false,
                    reply: Some(r.response),
                })
                .map_err(|f| f.nc),
            note: String::new(),
            status,
            provider_code,
        }
    }
}

/// Whether `answer` is a task whose result awaits its requester's
/// acceptance.
fn awaits_acceptance(answer: &Reply) -> bool {
    answer.response.task().is_some_and(|t| {
        matches!(
            exchange::acceptance::Pending::of_status(&t.status),
            Ok(Some(_))
        )
    })
}

/// The provider's leg, and what it reads: the pooled client the hub goes
/// out by, and the status board (each provider's A2A version and card,
/// and where every call's outcome is told).
pub(super) struct Forwarder {
    providers: Providers,
    board: Arc<StatusBoard>,
}

impl Forwarder {
    /// A forwarder going out by `providers`, telling `board`.
    pub(super) fn new(providers: Providers, board: Arc<StatusBoard>) -> Self {
        Self { providers, board }
    }

    /// Tells the status board what a call to `system` came to: an answer,
    /// or a failure the provider is to blame for (the hub's own or the
    /// caller's fault says nothing of the provider's health).
    pub(super) fn heard(&self, system: &str, outcome: Result<(), &Failure>) {
        match outcome {
            Ok(()) => self.board.record_call(system, Ok(())),
            Err(f) if f.blame == Blame::Provider => {
                self.board.record_call(system, Err(f.nc.clone()));
            }
            Err(_) => {}
        }
    }

    /// Forwards, then checks the answer against the contract, and feeds
    /// the provider's status on the board.
    pub(super) async fn forward_checked(
        &self,
        leg: &Leg<'_>,
        input: Value,
    ) -> Result<Reply, Failure> {
        let result = self
            .forward(leg, input)
            .await
            .and_then(|answer| match leg.route.contract {
                None => Ok(answer),
                // A task that has no result yet has nothing to check; one
                // whose result awaits acceptance is checked by the
                // acceptance gate, which rejects it for the requester.
                Some(_) if leg.task.is_some() && answer.result.is_null() => Ok(answer),
                Some(_) if awaits_acceptance(&answer) => Ok(answer),
                Some(c) => c.check(&answer.result).map(|()| answer).map_err(|v| {
                    Failure::provider(NotConnected::new(
                        ReasonCode::SchemaInvalid,
                        format!("{}: {v}", leg.call.capability),
                    ))
                }),
            });
        self.heard(&leg.route.system.id, result.as_ref().map(|_| ()));
        result
    }

    /// One A2A `SendMessage` to the provider, bounded by the deadline from
    /// the first byte sent to the last byte read: the `gateway.forward`
    /// span when traces are exported (the provider's span is its child).
    async fn forward(&self, leg: &Leg<'_>, input: Value) -> Result<Reply, Failure> {
        let span = telemetry::forward_span(
            &leg.call.caller,
            &leg.route.system.id,
            &leg.call.capability,
            &leg.call.envelope.request_id,
        );
        let result = self.send(leg, input).instrument(span.clone()).await;
        match &result {
            Ok(_) => telemetry::record_outcome(&span, "connected"),
            Err(f) => telemetry::record_refusal(&span, f.nc.reason.as_str()),
        }
        result
    }

    async fn send(&self, leg: &Leg<'_>, input: Value) -> Result<Reply, Failure> {
        let Leg { call, task, .. } = *leg;
        // The envelope's request id is the message id: a caller on the A2A
        // surface chose it (its `messageId`), and the provider sees the
        // same id in the header and in the message.
        let mut message = wire::call_message(&call.capability, input);
        message.message_id.clone_from(&call.envelope.request_id);
        message.context_id.clone_from(&call.conversation.context_id);
        message.task_id.clone_from(&call.conversation.task_id);
        let configuration = task.map(|t| {
            let metadata = message.metadata.get_or_insert_with(Default::default);
            metadata.insert(DEADLINE_KEY.to_string(), Value::String(t.deadline.clone()));
            if let Some(criteria) = &t.criteria {
                metadata.insert(
                    exchange::acceptance::CRITERIA_KEY.to_string(),
                    criteria.to_value(),
                );
                message.extensions = Some(vec![exchange::acceptance::EXTENSION_URI.to_string()]);
            }
            SendMessageConfiguration {
                accepted_output_modes: None,
                task_push_notification_config: None,
                history_length: None,
                return_immediately: Some(t.return_immediately),
            }
        });
        let params = SendMessageRequest {
            message,
            configuration,
            metadata: None,
            tenant: None,
        };
        let rpc = leg.rpc();
        let system = rpc.system;
        let (status, body) = self.rpc(&rpc, Method::SendMessage, &params).await?;
        interpret_answer(&system.id, status, &body, task.is_some())
    }

    /// One JSON-RPC call to a provider: its token, the envelope's headers
    /// with a new span, in the A2A version the provider's card declares
    /// (a v0.3 provider gets the request translated, and its answer comes
    /// back translated to v1.0), bounded by the deadline from the first
    /// byte sent to the last byte read, the answer read up to
    /// [`MAX_ANSWER_BODY`]. Returns the HTTP status and the (v1.0) body.
    pub(super) async fn rpc(
        &self,
        rpc: &Rpc<'_>,
        method: Method,
        params: impl Serialize,
    ) -> Result<(http::StatusCode, Vec<u8>), Failure> {
        let Rpc {
            system,
            token,
            caller,
            envelope,
            deadline,
            deadline_ms,
        } = *rpc;
        let id = system.id.as_str();
        let Some(token) = token else {
            // The hub's own configuration, not the provider's health.
            return Err(Failure {
                nc: NotConnected::new(
                    ReasonCode::AuthRejected,
                    format!("the hub holds no token for {id}"),
                ),
                blame: Blame::Hub,
                code: None,
            });
        };
        let version = self.board.version(id);
        let encoding =
            |e: serde_json::Error| Failure::provider(peer_error(format!("encoding the call: {e}")));
        let no_method = || {
            Failure::provider(peer_error(format!(
                "{id} speaks A2A {} and has no method for {method:?}",
                version.as_str()
            )))
        };
        // v1.0, the hot path: the typed params straight to bytes, no JSON
        // tree in between.
        let body = match version {
            A2aVersion::V1_0 => {
                let name = method.name(A2aVersion::V1_0).ok_or_else(no_method)?;
                serde_json::to_vec(&wire::jsonrpc_request(&envelope.request_id, name, &params))
                    .map_err(encoding)?
            }
            A2aVersion::V0_3 => {
                let params = serde_json::to_value(&params).map_err(encoding)?;
                let params = bridge::params_to_v03(method, params).map_err(|e| {
                    Failure::provider(peer_error(format!(
                        "{id} speaks A2A v0.3 and this call has no v0.3 form: {e}"
                    )))
                })?;
                let name = method.name(A2aVersion::V0_3).ok_or_else(no_method)?;
                serde_json::to_vec(&wire::jsonrpc_request(&envelope.request_id, name, &params))
                    .map_err(encoding)?
            }
        };
        // Where the provider's card says it listens (under its registered
        // base URL), else where every reference peer does.
        let url = self
            .board
            .card(id)
            .and_then(|c| c.jsonrpc_url(&system.base_url))
            .unwrap_or_else(|| {
                format!(
                    "{}{}",
                    system.base_url.trim_end_matches('/'),
                    wire::A2A_JSONRPC_PATH
                )
            });
        let Some(uri) = self.providers.uri(&url) else {
            return Err(Failure {
                nc: peer_error(format!("{id}'s A2A URL is not a URL")),
                blame: Blame::Hub,
                code: None,
            });
        };
        let Some(authorization) = bearer(token) else {
            // The hub's own configuration, as a missing token is.
            return Err(Failure {
                nc: NotConnected::new(
                    ReasonCode::AuthRejected,
                    format!("the hub's token for {id} is not a valid HTTP header value"),
                ),
                blame: Blame::Hub,
                code: None,
            });
        };
        let mut request = http::Request::post(uri)
            .header(AUTHORIZATION, authorization)
            .header(HeaderName::from_static(CALLER_HEADER), caller)
            .header(CONTENT_TYPE, "application/json");
        for (name, value) in envelope.forward_headers(version) {
            // Traces exported: the new span id is the forward span's, so
            // the provider's span is its child (same trace id either way).
            let value = match name {
                TRACEPARENT_HEADER => {
                    telemetry::next_hop(&envelope.trace).map_or(value, |hop| hop.to_header())
                }
                _ => value,
            };
            request = request.header(HeaderName::from_static(name), value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| Failure {
                nc: peer_error(format!("the call to {id} has a header HTTP refuses: {e}")),
                blame: Blame::Hub,
                code: None,
            })?;
        let exchange = self.providers.send(id, request, MAX_ANSWER_BODY);
        let (status, body) = match tokio::time::timeout_at(deadline, exchange).await {
            Err(_) => {
                return Err(Failure::provider(NotConnected::new(
                    ReasonCode::Timeout,
                    format!("{id} did not answer within {deadline_ms} ms"),
                )))
            }
            Ok(Err(nc)) => return Err(Failure::provider(nc)),
            Ok(Ok(x)) => x,
        };
        let Some(body) = body else {
            return Err(Failure::provider(peer_error(format!(
                "{id}'s answer is larger than 4 MiB"
            ))));
        };
        match version {
            A2aVersion::V1_0 => Ok((status, body)),
            A2aVersion::V0_3 => Ok((status, answer_to_v1(method, body))),
        }
    }
}

/// `Bearer <token>`, marked sensitive (never logged by the HTTP stack);
/// `None` for a token HTTP refuses as a header value.
fn bearer(token: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// Everything about one JSON-RPC call to a provider but the method.
#[derive(Clone, Copy)]
pub(super) struct Rpc<'a> {
    /// The provider.
    pub(super) system: &'a System,
    /// The hub's own token for the provider (of the call's registry
    /// generation); `None` when the hub holds none.
    pub(super) token: Option<&'a str>,
    /// The calling system (sent on as `X-Caller-System`).
    pub(super) caller: &'a str,
    /// The envelope of the call; its headers go on with a new span.
    pub(super) envelope: &'a Envelope,
    /// When the call gives up.
    pub(super) deadline: Instant,
    /// The same deadline as the registry states it, for the detail.
    pub(super) deadline_ms: u64,
}

/// A v0.3 provider's JSON-RPC answer in v1.0 shape: the `result`
/// translated, an `error` as it is (both versions share error objects).
/// A body that is not a JSON-RPC answer is left alone for the reader to
/// refuse, and a result the bridge cannot translate becomes an error
/// object saying why.
fn answer_to_v1(method: Method, body: Vec<u8>) -> Vec<u8> {
    let Ok(mut answer) = serde_json::from_slice::<Value>(&body) else {
        return body;
    };
    let Some(result) = answer.get_mut("result").map(Value::take) else {
        return body;
    };
    match bridge::result_to_v1(method, result) {
        Ok(v1) => answer["result"] = v1,
        Err(e) => {
            answer["error"] = json!({
                "code": -32006,
                "message": format!("the v0.3 answer has no v1.0 form: {e}"),
            });
        }
    }
    serde_json::to_vec(&answer).unwrap_or(body)
}
