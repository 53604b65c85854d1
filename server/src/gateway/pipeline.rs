//! The exchange pipeline that every binding shares (DESIGN.md §4, "Peer to
//! peer"; the order of its steps is in the [module doc](super)).
//!
//! A binding's only job is to turn its request into an [`Incoming`]: who
//! calls (the `X-Caller-System` claim), from which address, with which
//! headers (envelope and token), for which provider and capability, and
//! the capability input, or why the request carries no usable input. It
//! hands that to [`Gateway::run`] and turns the [`CallResult`] it gets back
//! into its own wire shape. Nothing here knows how the request was read:
//! no axum extractor, no body, no route (`HeaderMap` and `StatusCode` are
//! the plain `http` types every binding has). A second binding (the A2A
//! JSON-RPC surface) therefore adds a parser and a response writer, not a
//! pipeline.
//!
//! Two doors lead in. [`Gateway::run`] (and [`Gateway::handle`], the same
//! on the caller's task) is for callers from outside: version, auth chain,
//! then everything else. [`Gateway::call`] is for the hub's own callers,
//! who are trusted in-process: no IP or token layers, everything else the
//! same. Both meet in `dispatch` (registry, rule, contracts, replay,
//! forward) and `finish` (the [`CallResult`] and the audit record), so a
//! rule or a contract cannot be enforced on one door and forgotten on the
//! other.
//!
//! DESIGN.md §1 in this file: every refusal is a [`NotConnected`] with one
//! reason code, never a panic or an early hang-up, and every call, refused
//! or not, reaches `finish` and leaves its audit record.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use tokio::time::Instant;

use super::forward::{Blame, Failure, Leg, Reply};
pub(super) use super::observe::{Shown, ShownInput};
use super::task_submit::TaskAsk;
use super::{replay, Gateway};
use crate::auth::AuthContext;
use crate::registry::model::CapabilityKind;
use a2a::SendMessageResponse;
use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::envelope::{Envelope, CALLER_HEADER, REQUEST_ID_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{CallResult, NotConnected, ReasonCode};
use exchange::telemetry;
use exchange::text::clip;
use tracing::Instrument;

/// What a binding hands the pipeline about one incoming call.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// The calling system as it claims to be (`X-Caller-System`); the
    /// auth chain verifies the claim.
    pub caller: String,
    /// The TCP peer, for the IP allowlist.
    pub peer_addr: Option<SocketAddr>,
    /// Request headers (envelope, caller, token).
    pub headers: HeaderMap,
    /// The providing system the call is for.
    pub provider: String,
    /// The capability called.
    pub capability: String,
    /// The capability input, or why there is none.
    pub input: Input,
    /// The A2A conversation the call belongs to (`contextId`), passed on
    /// to the provider; `None` lets the provider start one.
    pub context_id: Option<String>,
    /// The provider task the message continues (`taskId`), already
    /// checked to be the caller's by the binding.
    pub task_id: Option<String>,
    /// For a `task` capability: return at once or wait, and the caller's
    /// deadline.
    pub task: TaskAsk,
}

impl Incoming {
    /// An incoming call whose caller is the `X-Caller-System` header
    /// (trimmed; empty if absent or not text).
    pub fn new(
        peer_addr: Option<SocketAddr>,
        headers: HeaderMap,
        provider: String,
        capability: String,
        input: Input,
    ) -> Self {
        let caller = headers
            .get(CALLER_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .unwrap_or_default()
            .to_string();
        Self {
            caller,
            peer_addr,
            headers,
            provider,
            capability,
            input,
            context_id: None,
            task_id: None,
            task: TaskAsk::default(),
        }
    }
}

/// The capability input as the binding read it. The two failures differ in
/// *when* the pipeline reports them, and each carries the status the
/// binding wants to answer with.
#[derive(Debug, Clone)]
pub enum Input {
    /// The input.
    Parsed(Value),
    /// The request was read but is not a valid input (say, a body that is
    /// not JSON). Reported once version and auth chain have passed: the
    /// caller is known by then, and a stranger learns nothing more than
    /// its refusal.
    Invalid {
        /// The status to answer with (the caller's fault: a 4xx).
        status: StatusCode,
        /// The reason code and detail.
        why: NotConnected,
    },
    /// The request could not be read at all (too large, cut off). Reported
    /// at once, before version and auth chain: only the audit record is
    /// written.
    Unreadable {
        /// The status to answer with.
        status: StatusCode,
        /// The reason code and detail.
        why: NotConnected,
    },
}

/// Where in an A2A conversation a message belongs: passed on to the
/// provider as the message's `contextId` and `taskId`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Conversation<'a> {
    pub(super) context_id: Option<&'a str>,
    pub(super) task_id: Option<&'a str>,
}

/// What a binding gets back from [`Gateway::run`].
#[derive(Debug)]
pub struct Handled {
    /// The HTTP status the pipeline chose.
    pub status: StatusCode,
    /// The call's envelope, for the answer's headers.
    pub envelope: Envelope,
    /// The one labelled result.
    pub result: CallResult,
    /// The provider's own A2A answer when the call was forwarded (not
    /// refused, not replayed): a binding that speaks A2A passes its
    /// Message or Task on; the capability result in `result` was read
    /// from it and checked against the contract.
    pub reply: Option<SendMessageResponse>,
    /// When the provider refused the caller's request with an A2A error
    /// (say, a message to a task that has ended): its code, which an A2A
    /// binding answers with instead of a generic invalid-params.
    pub provider_code: Option<i64>,
}

/// A successful call: the result, whether it came from the replay store,
/// and the provider's A2A answer it was read from (none for a replay).
pub(super) struct Answered {
    pub(super) result: Value,
    pub(super) replayed: bool,
    pub(super) reply: Option<SendMessageResponse>,
}

/// What happened, before it is turned into a [`CallResult`].
pub(super) struct Done {
    pub(super) result: Result<Answered, NotConnected>,
    /// Extra operator detail for the audit trail (e.g. replay origin).
    pub(super) note: String,
    /// HTTP status override (a malformed request body is the caller's fault).
    pub(super) status: Option<StatusCode>,
    /// The code of the provider's own refusal of the caller's request
    /// (one of [`CALLER_FAULT_CODES`](super::answer::CALLER_FAULT_CODES)),
    /// for a binding that speaks A2A to pass on.
    pub(super) provider_code: Option<i64>,
}

impl Done {
    pub(super) fn fail(nc: NotConnected) -> Self {
        Self {
            result: Err(nc),
            note: String::new(),
            status: None,
            provider_code: None,
        }
    }

    /// A refusal answered with `status` instead of the reason code's own.
    pub(super) fn refused(status: StatusCode, nc: NotConnected) -> Self {
        Self {
            status: Some(status),
            ..Self::fail(nc)
        }
    }

    /// The outcome of a forward that ran (not a replay). A provider that
    /// refused the caller's input (JSON-RPC invalid params) is the
    /// caller's fault: answered with 400, not 502.
    pub(super) fn forwarded(result: Result<Reply, Failure>) -> Self {
        let (status, provider_code) = match &result {
            Err(f) if f.blame == Blame::Caller => (Some(StatusCode::BAD_REQUEST), f.code),
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

impl Gateway {
    /// The entry every binding calls: [`Gateway::handle`] on a task of its
    /// own, so a caller that hangs up cannot cut a call short between
    /// forwarding and recording it, and a bug cannot take the connection's
    /// task down with it (it becomes a `PEER_ERROR` answered with 500).
    pub async fn run(self: Arc<Self>, incoming: Incoming) -> Handled {
        // What the answer to a failed task needs of the envelope: its
        // request id and trace, not a copy of every header.
        let mut headers = HeaderMap::new();
        for name in [REQUEST_ID_HEADER, TRACEPARENT_HEADER] {
            if let Some(v) = incoming.headers.get(name) {
                headers.insert(name, v.clone());
            }
        }
        // Boxed: the pipeline's future is large, and tokio moves a task's
        // future several times while spawning it; a box moves as a pointer.
        match tokio::spawn(Box::pin(async move { self.handle(incoming).await })).await {
            Ok(handled) => handled,
            Err(e) => {
                tracing::error!(error = %e, "gateway task failed");
                let envelope = Envelope::from_headers(&headers);
                let result = CallResult::NotConnected {
                    trace_id: envelope.trace.trace_id.clone(),
                    request_id: envelope.request_id.clone(),
                    reason: ReasonCode::PeerError,
                    detail: "internal gateway error".into(),
                };
                Handled {
                    status: StatusCode::INTERNAL_SERVER_ERROR,
                    envelope,
                    result,
                    reply: None,
                    provider_code: None,
                }
            }
        }
    }

    /// A call from a peer: the whole pipeline, auth included, on the
    /// caller's task. Returns the HTTP status and the envelope (for the
    /// answer's headers) along with the result.
    pub async fn handle(&self, mut incoming: Incoming) -> Handled {
        let span =
            telemetry::gateway_span(&incoming.caller, &incoming.provider, &incoming.capability);
        telemetry::continue_trace(&span, &mut incoming.headers);
        let handled = async move {
            let started = Instant::now();
            let envelope = Envelope::from_headers(&incoming.headers);
            let input = incoming.input;
            let negotiated = self.negotiated(&incoming.capability);
            let sent = match (&negotiated, &input) {
                (Some(_), Input::Parsed(v)) => Some(v.clone()),
                _ => None,
            };
            let (caller, provider, capability) =
                (&incoming.caller, &incoming.provider, &incoming.capability);
            let shown_input = match &input {
                Input::Parsed(v) => self.shown_input(capability, v),
                _ => ShownInput::None,
            };
            let done = match self.admit(
                caller,
                incoming.peer_addr,
                &incoming.headers,
                &envelope,
                input,
            ) {
                Ok(input) => {
                    self.dispatch(
                        caller,
                        provider,
                        capability,
                        input,
                        &envelope,
                        Conversation {
                            context_id: incoming.context_id.as_deref(),
                            task_id: incoming.task_id.as_deref(),
                        },
                        &incoming.task,
                    )
                    .await
                }
                Err(refused) => refused,
            };
            let provider_code = done.provider_code;
            let (status, result, reply) = self
                .finish(
                    caller,
                    provider,
                    capability,
                    &envelope,
                    started,
                    done,
                    Shown::message(shown_input),
                )
                .await;
            if let (Some(data_capability), Some(sent)) = (negotiated, sent) {
                self.record_turn(
                    caller,
                    provider,
                    capability,
                    data_capability,
                    sent,
                    incoming.context_id.as_deref(),
                    reply.as_ref(),
                    &result,
                )
                .await;
            }
            Handled {
                status,
                envelope,
                result,
                reply,
                provider_code,
            }
        }
        .instrument(span.clone())
        .await;
        telemetry::record_result(&span, &handled.result);
        handled
    }

    /// The door for callers from outside: an unreadable request is refused
    /// first, then the version, the auth chain, and a request without a
    /// valid input.
    // The error is the refusal the caller gets, on a path that ends the
    // call: boxing it would only move it.
    #[allow(clippy::result_large_err)]
    pub(super) fn admit(
        &self,
        caller: &str,
        peer_addr: Option<SocketAddr>,
        headers: &HeaderMap,
        envelope: &Envelope,
        input: Input,
    ) -> Result<Value, Done> {
        let input = match input {
            Input::Unreadable { status, why } => return Err(Done::refused(status, why)),
            Input::Invalid { status, why } => Err(Done::refused(status, why)),
            Input::Parsed(input) => Ok(input),
        };
        if !envelope.version_supported() {
            return Err(Done::fail(version_unsupported(envelope)));
        }
        let loaded = self.registry.snapshot();
        let cx = AuthContext {
            caller,
            peer_addr,
            headers,
            topology: &loaded.topology,
        };
        self.auth.check(&cx).map_err(Done::fail)?;
        input
    }

    /// A message the hub answers itself, without forwarding it (a text
    /// message to a provider whose skills all take data: the answer is
    /// `result`, the provider's skills): the version check and the auth
    /// chain as for any call, and one audit record under `capability`.
    pub async fn answer_here(&self, incoming: Incoming, result: Value) -> Handled {
        let started = Instant::now();
        let envelope = Envelope::from_headers(&incoming.headers);
        let done = match self.admit(
            &incoming.caller,
            incoming.peer_addr,
            &incoming.headers,
            &envelope,
            Input::Parsed(Value::Null),
        ) {
            Ok(_) => Done {
                result: Ok(Answered {
                    result,
                    replayed: false,
                    reply: None,
                }),
                note: "answered by the hub, not forwarded".into(),
                status: None,
                provider_code: None,
            },
            Err(refused) => refused,
        };
        let (status, result, reply) = self
            .finish(
                &incoming.caller,
                &incoming.provider,
                &incoming.capability,
                &envelope,
                started,
                done,
                Shown::message(ShownInput::None),
            )
            .await;
        Handled {
            status,
            envelope,
            result,
            reply,
            provider_code: None,
        }
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
        self.call_in(
            caller,
            provider,
            capability,
            input,
            envelope,
            Conversation::default(),
        )
        .await
    }

    /// [`Gateway::call`] within an A2A conversation (a negotiation's
    /// `contextId`).
    pub(super) async fn call_in(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
        input: Value,
        envelope: Envelope,
        conversation: Conversation<'_>,
    ) -> CallResult {
        let span = telemetry::gateway_span(caller, provider, capability);
        telemetry::parent_on(&span, &envelope.trace);
        let result = async move {
            let started = Instant::now();
            let negotiated = self.negotiated(capability);
            let sent = negotiated.as_ref().map(|_| input.clone());
            let shown_input = self.shown_input(capability, &input);
            let done = if envelope.version_supported() {
                self.dispatch(
                    caller,
                    provider,
                    capability,
                    input,
                    &envelope,
                    conversation,
                    &TaskAsk::default(),
                )
                .await
            } else {
                Done::fail(version_unsupported(&envelope))
            };
            let (_, result, reply) = self
                .finish(
                    caller,
                    provider,
                    capability,
                    &envelope,
                    started,
                    done,
                    Shown::message(shown_input),
                )
                .await;
            if let (Some(data_capability), Some(sent)) = (negotiated, sent) {
                self.record_turn(
                    caller,
                    provider,
                    capability,
                    data_capability,
                    sent,
                    conversation.context_id,
                    reply.as_ref(),
                    &result,
                )
                .await;
            }
            result
        }
        .instrument(span.clone())
        .await;
        telemetry::record_result(&span, &result);
        result
    }

    /// Registry checks, replay, forward, contract, store.
    async fn dispatch(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
        input: Value,
        envelope: &Envelope,
        conversation: Conversation<'_>,
        ask: &TaskAsk,
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
        let task_cap_ms = cap.task_deadline_ms.unwrap_or(deadline_ms);
        let system = system.clone();
        drop(loaded);

        let leg = Leg {
            system: &system,
            caller,
            capability,
            envelope,
            deadline,
            deadline_ms,
            contract: contract.as_deref(),
            conversation,
            task: None,
        };
        if kind == CapabilityKind::Task {
            return self.submit_task(&leg, input, ask, task_cap_ms).await;
        }
        match replay::key(kind, caller, provider, capability, envelope) {
            None => Done::forwarded(self.forward_checked(&leg, input).await),
            Some(key) => self.at_most_once(&key, &leg, input).await,
        }
    }

    /// Builds the result, writes the audit record, answers the status (and
    /// the provider's A2A answer, when there is one).
    pub(super) async fn finish(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
        envelope: &Envelope,
        started: Instant,
        done: Done,
        shown: Shown<'_>,
    ) -> (StatusCode, CallResult, Option<SendMessageResponse>) {
        let trace_id = envelope.trace.trace_id.clone();
        let request_id = envelope.request_id.clone();
        if let Ok(Answered {
            reply: Some(SendMessageResponse::Task(task)),
            ..
        }) = &done.result
        {
            if let Err(e) = self
                .tasks
                .record(provider, &task.id, caller, capability)
                .await
            {
                tracing::warn!(error = %e, "could not record a task's owner");
            }
        }
        let mut reply = None;
        let (status, result, outcome, reason, detail) = match done.result {
            Ok(Answered {
                result: value,
                replayed,
                reply: a2a,
            }) => (
                StatusCode::OK,
                {
                    reply = a2a;
                    CallResult::Connected {
                        trace_id,
                        request_id,
                        replayed,
                        result: value,
                    }
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
        self.observe(
            caller,
            provider,
            capability,
            envelope,
            started,
            status,
            &result,
            reply.as_ref(),
            shown,
        );
        (status, result, reply)
    }
}

/// The refusal of a call whose declared A2A version this build does not
/// speak.
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
