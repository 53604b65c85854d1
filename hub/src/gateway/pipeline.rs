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
//! part (`Forwarder`, `Replay`, `TaskSubmit`; a turn is a forward that
//! `Turns` also records). This file is the only `impl Gateway`: each
//! door's method below is the order in which it hands the call from part
//! to part, and nothing else.
//!
//! DESIGN.md §1 in this file: every refusal is a [`NotConnected`] with one
//! reason code, never a panic or an early hang-up, and every call, refused
//! or not, reaches `finish` and leaves its audit record — but for a call
//! the door refused whose credential named nobody, which is counted and
//! summarised instead (`strangers`).

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use rmcp::model::{JsonObject, Tool};
use serde_json::Value;
use tokio::time::Instant;

use super::acceptance::Screened;
use super::admission::{Admission, Door};
use super::answer::ProviderReply;
use super::call::{Call, Conversation, Done, Handled, Incoming, Input};
use super::client::Providers;
use super::forward::{Forwarder, Leg};
use super::mcp::{McpAnswer, McpIncoming, Planes};
use super::negotiation::Turns;
use super::receipt::Issuer;
use super::record::{Finished, Recorder, Shown, ShownInput};
use super::replay::Replay;
use super::strangers::Front;
use super::task_submit::TaskSubmit;
use super::tasks::{refusal_reason, TaskHandled, TaskIncoming, TaskOp, TaskOps};
use super::{Gateway, GatewayError, Wiring, CONNECT_TIMEOUT, MAX_IDLE_PER_PROVIDER};
use crate::auth::{AuthContext, Unidentified};
use crate::dataplane::within;
use crate::registry::model::CapabilityKind;
use crate::registry::{Loaded, Route};
use crate::store::idempotency::IdempotencyKey;
use exchange::acceptance::Pending;
use exchange::envelope::{Envelope, REQUEST_ID_HEADER, TRACEPARENT_HEADER};
use exchange::negotiator::{NegotiationError, Outcome, Want};
use exchange::reason::{CallResult, NotConnected, ReasonCode};
use exchange::telemetry;
use exchange::wire::MCP_QUERY_TOOL;
use tracing::Instrument;

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

impl Gateway {
    /// A gateway of the parts `wiring` names: the forward, the replay and
    /// the task submission share one pooled client for providers (going
    /// out by the wiring's egress and TLS), the MCP planes one session
    /// each.
    pub fn new(wiring: Wiring) -> Result<Self, GatewayError> {
        let Wiring {
            registry,
            board,
            identity,
            traffic,
            audit,
            idempotency,
            owners,
            records,
            negotiations,
            cluster,
            quotas,
            egress,
            provider_tls,
            keys,
            push,
        } = wiring;
        let providers = Providers::new(
            CONNECT_TIMEOUT,
            MAX_IDLE_PER_PROVIDER,
            provider_tls.as_ref(),
            &egress,
        );
        let forwarder = Arc::new(Forwarder::new(providers, board.clone()));
        let tasks = Arc::new(TaskOps::new(
            owners.clone(),
            records.clone(),
            forwarder.clone(),
            push,
        ));
        let receipts = Issuer::new(keys, identity.clone(), board.clone());
        Ok(Self {
            registry,
            admission: Admission::new(identity, quotas),
            replay: Replay::new(idempotency, cluster.clone(), forwarder.clone()),
            submit: TaskSubmit::new(
                records,
                owners.clone(),
                cluster,
                forwarder.clone(),
                tasks.clone(),
            ),
            tasks,
            forwarder,
            turns: Turns::new(negotiations, board),
            planes: Planes::new(crate::dataplane::Sessions::new(&egress)?),
            recorder: Recorder::new(audit, receipts, owners, traffic),
        })
    }

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
                    receipt: None,
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
                status: passed.finished.status,
                envelope: call.envelope,
                result: passed.finished.result,
                reply: passed.finished.reply,
                provider_code: passed.provider_code,
                retry_after: passed.retry_after,
                receipt: passed.finished.receipt,
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
                .finished
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
        let (sent, shown, request) = match &input {
            Input::Parsed(v) => (
                negotiates.as_ref().map(|_| v.clone()),
                shown_input(&call.registry, &call.capability, v),
                exchange::receipt::digest(v).ok(),
            ),
            _ => (None, ShownInput::None, None),
        };
        let done = match self.admission.admit(call, &door, input) {
            Ok(input) => self.dispatch(call, input).await,
            Err(refused) => refused,
        };
        let provider_code = done.provider_code;
        let retry_after = done.result.as_ref().err().and_then(|nc| nc.retry_after);
        let finished = self
            .recorder
            .finish(
                call,
                done,
                Shown {
                    request,
                    ..Shown::message(shown)
                },
            )
            .await;
        if let (Some(data_capability), Some(sent)) = (negotiates, sent) {
            self.turns
                .record(
                    call,
                    data_capability,
                    sent,
                    finished.reply.as_ref(),
                    &finished.result,
                )
                .await;
        }
        Passed {
            finished,
            provider_code,
            retry_after,
        }
    }

    /// A message the hub answers itself, without forwarding it (a text
    /// message to a provider whose skills all take data: the answer is
    /// `result`, the provider's skills): the version check and the auth
    /// chain as for any call, and one audit record under `capability`.
    pub async fn answer_here(&self, incoming: Incoming, result: Value) -> Handled {
        let call = self.call_of(&incoming);
        let done =
            match self
                .admission
                .outside(&call, &incoming.peer, &incoming.headers, incoming.front)
            {
                Ok(()) => Done::answered(result, "answered by the hub, not forwarded"),
                Err(nc) => Done::fail(nc),
            };
        let finished = self
            .recorder
            .finish(&call, done, Shown::answered_here())
            .await;
        Handled {
            status: finished.status,
            envelope: call.envelope,
            result: finished.result,
            reply: finished.reply,
            provider_code: None,
            retry_after: None,
            receipt: finished.receipt,
        }
    }

    /// Route, input contract, quota, plan, execute.
    async fn dispatch(&self, call: &Call, input: Value) -> Done {
        let route = match self.admission.route(call, &input) {
            Ok(route) => route,
            Err(nc) => return Done::fail(nc),
        };
        if call.task.criteria.is_some() && route.capability.kind != CapabilityKind::Task {
            return Done::refused(
                StatusCode::BAD_REQUEST,
                NotConnected::new(
                    ReasonCode::NotPermitted,
                    format!(
                        "{}: acceptance criteria apply to a task, and {} is answered at once",
                        call.capability, call.capability
                    ),
                ),
            );
        }
        // Admitted: counted against the edge's limits, or refused before
        // it is forwarded.
        if let Err(nc) = self.admission.within_quota(call).await {
            return Done::refused(StatusCode::TOO_MANY_REQUESTS, nc);
        }
        let leg = Leg {
            call,
            route,
            deadline: Instant::now() + Duration::from_millis(route.deadline_ms),
            task: None,
        };
        match Plan::of(call, &route) {
            Plan::Forward => Done::forwarded(self.forwarder.forward_checked(&leg, input).await),
            Plan::Consult(key) => self.replay.at_most_once(&key, &leg, input).await,
            Plan::Task { cap_ms } => {
                let done = self.submit.submit_task(&leg, input, cap_ms).await;
                self.screen_submission(&leg, done).await
            }
        }
    }

    /// A submission answered with a result that awaits acceptance: checked
    /// before its requester sees it, like a `GetTask` answer.
    async fn screen_submission(&self, leg: &Leg<'_>, mut done: Done) -> Done {
        let Ok(answered) = &mut done.result else {
            return done;
        };
        let Some(task) = answered.reply.as_ref().and_then(ProviderReply::task) else {
            return done;
        };
        if !matches!(Pending::of_status(&task.status), Ok(Some(_))) {
            return done;
        }
        let Ok(value) = serde_json::to_value(task) else {
            return done;
        };
        let rpc = TaskOps::rpc(leg.call, leg.route.system);
        let screened = self
            .tasks
            .screen(&rpc, &leg.call.registry.contracts, value)
            .await;
        if screened.note.is_empty() {
            return done;
        }
        match screened.result.map(serde_json::from_value::<a2a::Task>) {
            Ok(Ok(task)) => {
                answered.reply = Some(ProviderReply::Typed(a2a::SendMessageResponse::Task(task)));
                answered.result = Value::Null;
                done.note = screened.note;
                done
            }
            Ok(Err(e)) => Done::fail(super::answer::peer_error(format!(
                "{}'s answer to the hub's rejection is not a task: {e}",
                leg.route.system.id
            ))),
            Err(refusal) => Done::fail(refusal_reason(
                &leg.call.caller,
                &leg.route.system.id,
                refusal,
            )),
        }
    }

    /// One task operation from outside (`GetTask`, `CancelTask`,
    /// `ListTasks`): version, auth chain, provider known, the caller's own
    /// tasks only, forward, one audit record.
    pub async fn task(&self, incoming: TaskIncoming) -> TaskHandled {
        let call = Call::new(
            incoming
                .registry
                .clone()
                .unwrap_or_else(|| self.registry.snapshot()),
            &incoming.caller,
            &incoming.provider,
            incoming.op.audit_name(),
            Envelope::from_headers(&incoming.headers),
        );
        let provider = call.provider.as_str();
        let Screened { result, note } = match self
            .admission
            .outside(&call, &incoming.peer, &incoming.headers, Front::A2a)
            .and_then(|()| call.registry.provider(provider))
        {
            Err(nc) => Screened {
                result: Err(super::TaskRefusal::NotConnected(nc)),
                note: String::new(),
            },
            Ok(system) => {
                let rpc = TaskOps::rpc(&call, system);
                let contracts = &call.registry.contracts;
                match &incoming.op {
                    TaskOp::Decide(asked) => self.tasks.decide(&rpc, asked, contracts).await,
                    // A result that awaits acceptance is checked before
                    // its requester reads it.
                    op @ TaskOp::Get(_) => match self.tasks.task_op(&rpc, op).await {
                        Ok(v) => self.tasks.screen(&rpc, contracts, v).await,
                        Err(refusal) => Screened {
                            result: Err(refusal),
                            note: String::new(),
                        },
                    },
                    op => Screened {
                        result: self.tasks.task_op(&rpc, op).await,
                        note: String::new(),
                    },
                }
            }
        };
        let done = match &result {
            Ok(v) => Done::answered(v.clone(), note),
            Err(refusal) => Done::fail(refusal_reason(&call.caller, provider, refusal.clone())),
        };
        let about = self.tasks.about(provider, &incoming.op, &result).await;
        let finished = self
            .recorder
            .finish(
                &call,
                done,
                Shown {
                    method: incoming.op.audit_name(),
                    request: None,
                    input: ShownInput::None,
                    capability: about.as_deref(),
                    answer_checked: false,
                },
            )
            .await;
        TaskHandled {
            envelope: call.envelope,
            result,
            receipt: finished.receipt,
        }
    }

    /// `tools/list` of `incoming.provider`'s data plane, for this caller:
    /// auth chain and rule as for a call, nothing recorded (a listing
    /// reads no data).
    pub async fn mcp_list_tools(&self, incoming: &McpIncoming) -> Result<Vec<Tool>, NotConnected> {
        let call = self.mcp_call(incoming);
        let (system, _) =
            self.admission
                .plane(&call, &incoming.peer, &incoming.headers, &Value::Null)?;
        let deadline = call.registry.topology.hub.default_deadline_ms;
        let client = self.planes.client(&call, system, deadline).await?;
        let tools = within(deadline, &system.id, client.list_all_tools()).await;
        let _ = client.cancel().await;
        tools
    }

    /// The call value of an MCP request: audited under the data-share the
    /// provider's plane serves (the query tool's name when it has none:
    /// the call is refused, and its record still names what was asked).
    fn mcp_call(&self, incoming: &McpIncoming) -> Call {
        let registry = self.registry.snapshot();
        let capability = registry
            .topology
            .system(&incoming.provider)
            .and_then(|s| s.data_plane.as_ref())
            .map(|p| p.capability.clone())
            .unwrap_or_else(|| MCP_QUERY_TOOL.to_string());
        Call::new(
            registry,
            &incoming.caller,
            &incoming.provider,
            &capability,
            Envelope::from_headers(&incoming.headers),
        )
    }

    /// `tools/call` of `incoming.provider`'s data plane: the whole pipeline
    /// and one audit record under the data-share the plane serves; one
    /// `gateway.mcp` span when traces are exported, parented on the
    /// caller's traceparent (the data plane gets the next hop's).
    pub async fn mcp_call_tool(
        &self,
        incoming: &McpIncoming,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (McpAnswer, Envelope) {
        let span = telemetry::mcp_span(&incoming.caller, &incoming.provider, name);
        if span.is_disabled() {
            return self.mcp_call_tool_in(incoming, name, arguments).await;
        }
        let mut incoming = incoming.clone();
        telemetry::continue_trace(&span, &mut incoming.headers);
        let (answer, envelope) = self
            .mcp_call_tool_in(&incoming, name, arguments)
            .instrument(span.clone())
            .await;
        telemetry::record(&span, "request_id", &envelope.request_id);
        match &answer {
            McpAnswer::Tool(_) => telemetry::record_outcome(&span, "connected"),
            McpAnswer::NotConnected(nc) => telemetry::record_refusal(&span, nc.reason.as_str()),
        }
        (answer, envelope)
    }

    async fn mcp_call_tool_in(
        &self,
        incoming: &McpIncoming,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (McpAnswer, Envelope) {
        let call = self.mcp_call(incoming);
        let input = arguments.clone().map(Value::Object).unwrap_or(Value::Null);
        // Admitted, then counted against the data-share's quota (a
        // listing is not a call and is not counted).
        let admitted = match self
            .admission
            .plane(&call, &incoming.peer, &incoming.headers, &input)
        {
            Ok(target) => self.admission.within_quota(&call).await.map(|()| target),
            Err(nc) => Err(nc),
        };
        let (answer, note) = match admitted {
            Err(nc) => (McpAnswer::NotConnected(nc), String::new()),
            Ok((system, deadline_ms)) => {
                self.planes
                    .forward(&call, system, deadline_ms, name, arguments)
                    .await
            }
        };
        let done = match &answer {
            McpAnswer::Tool(result) => Done::answered(receipted_tool_result(result), note),
            McpAnswer::NotConnected(nc) => Done::fail(nc.clone()),
        };
        let finished = self
            .recorder
            .finish(
                &call,
                done,
                Shown {
                    method: "tools/call",
                    request: exchange::receipt::digest(&input).ok(),
                    input: ShownInput::None,
                    capability: None,
                    answer_checked: false,
                },
            )
            .await;
        let answer = match (answer, finished.receipt) {
            (McpAnswer::Tool(mut result), Some(stamp)) => {
                result.meta.get_or_insert_with(Default::default).insert(
                    exchange::receipt::EXTENSION_URI.into(),
                    exchange::receipt::metadata_entry(&stamp.id, &stamp.jws),
                );
                McpAnswer::Tool(result)
            }
            (answer, _) => answer,
        };
        (answer, call.envelope)
    }

    /// The hub negotiates its own contract for `data_capability` of
    /// `provider` (for its drawer queries), through `negotiation`, in a new
    /// `contextId`: each message a call as the hub, through this pipeline.
    pub async fn negotiate_for_hub(
        &self,
        provider: &str,
        negotiation: &str,
        want: &Want,
    ) -> Result<Outcome, NegotiationError> {
        self.turns
            .negotiate_as_hub(
                &self.registry,
                provider,
                negotiation,
                want,
                |call, input| self.call_as_hub(call, input),
            )
            .await
    }

    /// The auth chain a call meets, for a request that is not a call (a
    /// provider's extended card): the same layers, the same refusals.
    pub fn authenticate(&self, cx: &AuthContext<'_>) -> Result<(), NotConnected> {
        self.admission.authenticate(cx)
    }

    /// Counts a stranger's call refused with `reason` by a door that
    /// refuses before the pipeline (the MCP front's token check): on
    /// `/metrics`, and into the interval's summary.
    pub fn count_unidentified(
        &self,
        front: Front,
        credential: Unidentified,
        from: Option<std::net::IpAddr>,
        reason: ReasonCode,
    ) {
        self.recorder
            .count_unidentified(front, credential, from, reason);
    }

    /// Writes the strangers' summary row every `every`, and once more when
    /// `stopping` completes.
    pub fn spawn_stranger_summaries(
        &self,
        every: Duration,
        stopping: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        self.recorder.spawn_summaries(every, stopping)
    }
}

/// What one pass came to, for the door.
struct Passed {
    finished: Finished,
    /// The provider's own A2A error code, when it refused the request.
    provider_code: Option<i64>,
    /// Seconds until a call refused over a quota may be sent again.
    retry_after: Option<u64>,
}

/// An MCP tool result as its receipt's `answer` digests it: without
/// `_meta` (where the receipt itself goes, beside the provider's own
/// entries) and `resultType` (written or dropped by protocol revision).
fn receipted_tool_result(result: &rmcp::model::CallToolResult) -> Value {
    let mut value = serde_json::to_value(result).unwrap_or(Value::Null);
    if let Some(fields) = value.as_object_mut() {
        fields.remove("_meta");
        fields.remove("resultType");
    }
    value
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
