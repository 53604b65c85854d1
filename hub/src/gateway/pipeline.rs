//! The exchange pipeline every door shares (DESIGN.md §4, "Peer to peer";
//! the order of its steps is in the [module doc](super)).
//!
//! One pass, in one place:
//!
//! ```text
//! Incoming ──admit──▶ Call ──route──▶ Route ──Plan::of──▶ Plan ──execute──▶ Done ──finish──▶ CallResult
//!  (door)   version,   (one registry   registry::route:    forward │ consult   (answer or     audit record,
//!           auth chain  generation)    UNKNOWN_PEER /      │ task │ turn      refusal)       traffic
//!                                      NOT_PERMITTED,
//!                                      input contract,
//!                                      quota (429)
//! ```
//!
//! A door's only job is to turn its request into an [`Incoming`] and the
//! [`Handled`] it gets back into its own wire shape. Two doors lead in:
//! [`Gateway::run`] (and [`Gateway::handle`], the same on the caller's
//! task) for callers from outside — version, auth chain, then everything
//! else — and [`Gateway::call`] for the hub's own callers, trusted
//! in-process: no IP or token layers, everything else the same. Both meet
//! in [`Gateway::pass`], so a rule or a contract cannot be enforced on one
//! door and forgotten on the other.
//!
//! What differs between a plain forward, an at-most-once consult, a task
//! submission and a negotiation turn is one [`Plan`], decided here from
//! the capability's kind and the envelope; each is executed by its own
//! file (`forward`, `replay`, `task_submit`, `negotiation`).
//!
//! DESIGN.md §1 in this file: every refusal is a [`NotConnected`] with one
//! reason code, never a panic or an early hang-up, and every call, refused
//! or not, reaches `finish` and leaves its audit record — but for a call
//! the door refused whose credential named nobody, which is counted and
//! summarised instead (`strangers`).

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use tokio::time::Instant;

use super::answer::ProviderReply;
use super::call::{Answered, Call, Conversation, Done, Handled, Incoming, Input};
use super::forward::Leg;
use super::observe::{Shown, ShownInput};
use super::strangers::{Front, Stranger};
use super::Gateway;
use crate::auth::{AuthContext, Target};
use crate::net::listen::Peer;
use crate::quotas::Edge;
use crate::registry::model::CapabilityKind;
use crate::registry::{Loaded, Route};
use crate::store::idempotency::IdempotencyKey;
use exchange::audit::{AuditError, AuditRecord, Outcome, Role};
use exchange::db::retry_while_unavailable;
use exchange::envelope::{Envelope, REQUEST_ID_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{CallResult, NotConnected, ReasonCode};
use exchange::telemetry;
use exchange::text::clip;
use tracing::Instrument;

/// How long a call's audit record is tried while the store is away,
/// before the call is refused for want of it.
const AUDIT_GRACE: Duration = Duration::from_secs(5);

/// How a routed call runs: one enum decides, one file executes each.
pub(super) enum Plan {
    /// A data-share, a negotiation turn, or a consult the caller gave no
    /// request id of its own: one forward (`forward`).
    Forward,
    /// A consult under the caller's own request id: at most one execution
    /// (`replay`).
    Consult(IdempotencyKey),
    /// A task submission under the caller's key, its deadline capped at
    /// `cap_ms` (`task_submit`).
    Task {
        /// The capability's `task_deadline_ms` (else its deadline).
        cap_ms: u64,
    },
}

impl Plan {
    /// The plan of `call` along `route`.
    fn of(call: &Call, route: &Route<'_>) -> Self {
        match route.capability.kind {
            CapabilityKind::Task => Plan::Task {
                cap_ms: route
                    .capability
                    .task_deadline_ms
                    .unwrap_or(route.deadline_ms),
            },
            CapabilityKind::Consult if call.envelope.request_id_from_caller => {
                Plan::Consult(IdempotencyKey {
                    caller: call.caller.clone(),
                    provider: call.provider.clone(),
                    capability: call.capability.clone(),
                    request_id: call.envelope.request_id.clone(),
                })
            }
            _ => Plan::Forward,
        }
    }
}

/// How a call reached the pipeline.
enum Door<'a> {
    /// From outside, by `front`: the auth chain runs on these.
    Outside {
        peer: &'a Peer,
        headers: &'a HeaderMap,
        front: Front,
    },
    /// The hub's own callers, in-process.
    Hub,
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
                    retry_after: None,
                }
            }
        }
    }

    /// A call from a peer: the whole pipeline, auth included, on the
    /// caller's task.
    pub async fn handle(&self, mut incoming: Incoming) -> Handled {
        let span =
            telemetry::gateway_span(&incoming.caller, &incoming.provider, &incoming.capability);
        telemetry::continue_trace(&span, &mut incoming.headers);
        let handled = async move {
            let mut call = self.call_of(&incoming);
            call.conversation = Conversation {
                context_id: incoming.context_id.take(),
                task_id: incoming.task_id.take(),
            };
            call.task = std::mem::take(&mut incoming.task);
            let door = Door::Outside {
                peer: &incoming.peer,
                headers: &incoming.headers,
                front: incoming.front,
            };
            let passed = self.pass(&call, door, incoming.input).await;
            Handled {
                status: passed.status,
                envelope: call.envelope,
                result: passed.result,
                reply: passed.reply,
                provider_code: passed.provider_code,
                retry_after: passed.retry_after,
            }
        }
        .instrument(span.clone())
        .await;
        telemetry::record_result(&span, &handled.result);
        handled
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
        let call = Call::new(
            self.registry.snapshot(),
            caller,
            provider,
            capability,
            envelope,
        );
        self.call_as_hub(call, input).await
    }

    /// [`Gateway::call`] of a call value already made (a negotiation's
    /// turn carries its `contextId`).
    pub(super) async fn call_as_hub(&self, call: Call, input: Value) -> CallResult {
        let span = telemetry::gateway_span(&call.caller, &call.provider, &call.capability);
        telemetry::parent_on(&span, &call.envelope.trace);
        let result = async {
            self.pass(&call, Door::Hub, Input::Parsed(input))
                .await
                .result
        }
        .instrument(span.clone())
        .await;
        telemetry::record_result(&span, &result);
        result
    }

    /// The call value of an incoming request, under the registry
    /// generation its door read (else the current one).
    fn call_of(&self, incoming: &Incoming) -> Call {
        let registry = incoming
            .registry
            .clone()
            .unwrap_or_else(|| self.registry.snapshot());
        Call::new(
            registry,
            &incoming.caller,
            &incoming.provider,
            &incoming.capability,
            Envelope::from_headers(&incoming.headers),
        )
    }

    /// One pass: admit, route, plan, execute, finish, and the negotiation
    /// record of a turn.
    async fn pass(&self, call: &Call, door: Door<'_>, input: Input) -> Passed {
        // What a negotiation turn writes to the record, and what the
        // inspector may show: read before the input moves on.
        let negotiates = call.negotiates();
        let (sent, shown) = match &input {
            Input::Parsed(v) => (
                negotiates.as_ref().map(|_| v.clone()),
                shown_input(&call.registry, &call.capability, v),
            ),
            _ => (None, ShownInput::None),
        };
        let done = match self.admit(call, &door, input) {
            Ok(input) => self.dispatch(call, input).await,
            Err(refused) => refused,
        };
        let provider_code = done.provider_code;
        let retry_after = done.result.as_ref().err().and_then(|nc| nc.retry_after);
        let (status, result, reply) = self.finish(call, done, Shown::message(shown)).await;
        if let (Some(data_capability), Some(sent)) = (negotiates, sent) {
            self.record_turn(call, data_capability, sent, reply.as_ref(), &result)
                .await;
        }
        Passed {
            status,
            result,
            reply,
            provider_code,
            retry_after,
        }
    }

    /// The door: an unreadable request is refused first, then the version,
    /// the auth chain (callers from outside), and a request without a
    /// valid input. A call from outside refused here whose credential
    /// names no system is marked a stranger's.
    // The error is the refusal the caller gets, on a path that ends the
    // call: boxing it would only move it.
    #[allow(clippy::result_large_err)]
    fn admit(&self, call: &Call, door: &Door<'_>, input: Input) -> Result<Value, Done> {
        let admitted = self.admit_checks(call, door, input);
        if let (
            Err(_),
            Door::Outside {
                peer,
                headers,
                front,
            },
        ) = (&admitted, door)
        {
            if let Err(credential) = crate::auth::presented(headers, &call.registry, &self.identity)
            {
                let _ = call.stranger.set(Stranger {
                    front: *front,
                    credential,
                    from: peer.addr.map(|a| a.ip()),
                });
            }
        }
        admitted
    }

    /// [`Gateway::admit`]'s checks, in order.
    #[allow(clippy::result_large_err)]
    fn admit_checks(&self, call: &Call, door: &Door<'_>, input: Input) -> Result<Value, Done> {
        let input = match input {
            Input::Unreadable { status, why } => return Err(Done::refused(status, why)),
            Input::Invalid { status, why } => Err(Done::refused(status, why)),
            Input::Parsed(input) => Ok(input),
        };
        if !call.envelope.version_supported() {
            return Err(Done::fail(version_unsupported(&call.envelope)));
        }
        if let Door::Outside { peer, headers, .. } = door {
            self.auth
                .check(&AuthContext {
                    caller: &call.caller,
                    peer,
                    headers,
                    registry: &call.registry,
                    identity: &self.identity,
                    target: Some(Target {
                        provider: &call.provider,
                        capability: &call.capability,
                    }),
                })
                .map_err(Done::fail)?;
        }
        input
    }

    /// The door for a request that is not a capability call (a task
    /// operation, an MCP request, a message the hub answers itself), come
    /// in by `front`: version and auth chain as for a call.
    pub(super) fn admit_outside(
        &self,
        call: &Call,
        peer: &Peer,
        headers: &HeaderMap,
        front: Front,
    ) -> Result<(), NotConnected> {
        let door = Door::Outside {
            peer,
            headers,
            front,
        };
        match self.admit(call, &door, Input::Parsed(Value::Null)) {
            Ok(_) => Ok(()),
            Err(done) => Err(done
                .result
                .err()
                .unwrap_or_else(|| NotConnected::new(ReasonCode::PeerError, "refused"))),
        }
    }

    /// A message the hub answers itself, without forwarding it (a text
    /// message to a provider whose skills all take data: the answer is
    /// `result`, the provider's skills): the version check and the auth
    /// chain as for any call, and one audit record under `capability`.
    pub async fn answer_here(&self, incoming: Incoming, result: Value) -> Handled {
        let call = self.call_of(&incoming);
        let done =
            match self.admit_outside(&call, &incoming.peer, &incoming.headers, incoming.front) {
                Ok(()) => Done::answered(result, "answered by the hub, not forwarded"),
                Err(nc) => Done::fail(nc),
            };
        let (status, result, reply) = self.finish(&call, done, Shown::answered_here()).await;
        Handled {
            status,
            envelope: call.envelope,
            result,
            reply,
            provider_code: None,
            retry_after: None,
        }
    }

    /// Route, input contract, plan, execute.
    async fn dispatch(&self, call: &Call, input: Value) -> Done {
        let route = match call
            .registry
            .route(&call.caller, &call.provider, &call.capability)
        {
            Ok(route) => route,
            Err(nc) => return Done::fail(nc),
        };
        // The hub's half of the grant: an input outside the capability's
        // input schema (a column nobody granted) never leaves the hub.
        if let Some(v) = route.contract.and_then(|c| c.check_input(&input).err()) {
            return Done::fail(NotConnected::new(
                ReasonCode::NotPermitted,
                format!(
                    "{}: the input is outside the contract at {}: {}",
                    call.capability, v.pointer, v.problem
                ),
            ));
        }
        // Admitted: counted against the edge's limits, or refused before
        // it is forwarded.
        if let Err(nc) = self.within_quota(call).await {
            return Done::refused(StatusCode::TOO_MANY_REQUESTS, nc);
        }
        let leg = Leg {
            call,
            route,
            deadline: Instant::now() + Duration::from_millis(route.deadline_ms),
            task: None,
        };
        match Plan::of(call, &route) {
            Plan::Forward => Done::forwarded(self.forward_checked(&leg, input).await),
            Plan::Consult(key) => self.at_most_once(&key, &leg, input).await,
            Plan::Task { cap_ms } => self.submit_task(&leg, input, cap_ms).await,
        }
    }

    /// The quota of an admitted call (its rule's rate limit and daily
    /// quota, `crate::quotas`): counted, or refused with `NOT_PERMITTED`
    /// and when to retry. A rule without limits asks no store.
    pub(super) async fn within_quota(&self, call: &Call) -> Result<(), NotConnected> {
        let Some(quotas) = &self.quotas else {
            return Ok(());
        };
        let Some(limits) =
            call.registry
                .topology
                .limits(&call.caller, &call.capability, &call.provider)
        else {
            return Ok(());
        };
        let edge = Edge {
            consumer: &call.caller,
            provider: &call.provider,
            capability: &call.capability,
        };
        quotas
            .admit(edge, limits)
            .await
            .map_err(|over| over.refusal(edge))
    }

    /// Builds the result, writes the audit record, answers the status (and
    /// the provider's A2A answer, when there is one).
    pub(super) async fn finish(
        &self,
        call: &Call,
        done: Done,
        shown: Shown<'_>,
    ) -> (StatusCode, CallResult, Option<ProviderReply>) {
        let envelope = &call.envelope;
        let trace_id = envelope.trace.trace_id.clone();
        let request_id = envelope.request_id.clone();
        if let Some(task) = done
            .result
            .as_ref()
            .ok()
            .and_then(|a| a.reply.as_ref())
            .and_then(ProviderReply::task)
        {
            if let Err(e) = self
                .tasks
                .record(&call.provider, &task.id, &call.caller, &call.capability)
                .await
            {
                tracing::warn!(error = %e, "could not record a task's owner");
            }
        }
        let (status, result, reply, outcome, reason, detail) = match done.result {
            Ok(Answered {
                result: value,
                replayed,
                reply,
            }) => (
                StatusCode::OK,
                CallResult::Connected {
                    trace_id,
                    request_id,
                    replayed,
                    result: value,
                },
                reply,
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
                None,
                Outcome::NotConnected,
                Some(nc.reason),
                nc.detail,
            ),
        };
        let record = AuditRecord {
            system: String::new(),
            role: Role::Hub,
            at: exchange::audit::now(),
            caller: clip(&call.caller, 64),
            provider: clip(&call.provider, 64),
            capability: clip(&call.capability, 64),
            request_id: envelope.request_id.clone(),
            trace_id: envelope.trace.trace_id.clone(),
            outcome,
            reason,
            duration_ms: u64::try_from(call.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            detail,
        };
        // No call is answered as done unless its record is committed: a
        // store that is away (a PostgreSQL restart) is waited out for a
        // while; a record that still cannot be written turns the answer
        // into a refusal (the provider may have run it: the caller knows
        // as much as it would after a timeout, never less). A stranger's
        // refusal is counted into the interval's summary instead.
        let appended = match (call.stranger.get(), reason) {
            (Some(s), Some(reason)) => {
                self.count_unidentified(s.front, s.credential, s.from, reason);
                Ok(())
            }
            _ => {
                let until = Instant::now() + AUDIT_GRACE;
                retry_while_unavailable(until, AuditError::is_unavailable, || {
                    self.audit.append(record.clone())
                })
                .await
            }
        };
        let (status, result, reply) = match appended {
            Ok(()) => (status, result, reply),
            Err(e) => {
                tracing::error!(error = %e, "could not append to the hub's audit trail");
                match result {
                    CallResult::Connected {
                        trace_id,
                        request_id,
                        ..
                    } => (
                        StatusCode::BAD_GATEWAY,
                        CallResult::NotConnected {
                            trace_id,
                            request_id,
                            reason: ReasonCode::PeerError,
                            detail: "the hub could not record this call in its audit trail; \
                                     it is not acknowledged"
                                .into(),
                        },
                        None,
                    ),
                    refused => (status, refused, None),
                }
            }
        };
        self.observe(call, status, &result, reply.as_ref(), shown);
        (status, result, reply)
    }
}

/// What one pass came to, for the door.
struct Passed {
    status: StatusCode,
    result: CallResult,
    reply: Option<ProviderReply>,
    /// The provider's own A2A error code, when it refused the request.
    provider_code: Option<i64>,
    /// Seconds until a call refused over a quota may be sent again.
    retry_after: Option<u64>,
}

/// What of `input`, an input to `capability`, the inspector may show:
/// only an input inside the capability's input schema, cut to the
/// properties it names.
fn shown_input(registry: &Loaded, capability: &str, input: &Value) -> ShownInput {
    match registry
        .contracts
        .of(capability)
        .and_then(|c| c.shown_input(input))
    {
        Some(kept) => ShownInput::Shown(kept),
        None => ShownInput::Hidden,
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
