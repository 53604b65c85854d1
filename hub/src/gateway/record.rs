//! Recording a finished exchange (step 10 of the [pipeline](super)): the
//! audit record committed before the answer leaves, the task's owner, and
//! what the traffic learns (DESIGN.md §6 metrics; the envelope inspector).
//!
//! [`Recorder::finish`] runs once per exchange, refused or not. The
//! payload is passed through the redaction layer *here*, before anything
//! is kept: the inspector stores only what a browser may see (the input
//! only when the capability's input schema bounds it; the answer only as
//! the contract redacts it), never the raw answer. A call refused at the
//! door whose credential named nobody is counted into the strangers'
//! summary instead of a record of its own.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::Value;
use tokio::time::Instant;

use super::answer::ProviderReply;
use super::call::{Answered, Call, Done};
use super::receipt::{Crossed, Issuer};
use super::strangers::{Front, Stranger, Strangers};
use crate::auth::Unidentified;
use crate::redaction;
use crate::store::task_owners::TaskOwners;
use crate::traffic::{Exchange, Payload, Traffic};
use a2a::{SendMessageResponse, Task};
use app::dto::TrafficOutcome;
use exchange::audit::{AuditError, AuditRecord, AuditTrail, Outcome, Role, Stamp};
use exchange::db::retry_while_unavailable;
use exchange::reason::{CallResult, ReasonCode};
use exchange::text::clip;

/// How long a call's audit record is tried while the store is away,
/// before the call is refused for want of it.
const AUDIT_GRACE: Duration = Duration::from_secs(5);

/// Where finished exchanges are recorded: the hub's audit trail (with
/// each one's receipt), the task owners' table, the traffic, and the
/// strangers' window.
#[derive(Clone)]
pub(super) struct Recorder {
    audit: AuditTrail,
    receipts: Issuer,
    owners: TaskOwners,
    traffic: Arc<Traffic>,
    strangers: Arc<Strangers>,
}

/// How a call ended, recorded: what its door answers with.
pub(super) struct Finished {
    pub(super) status: StatusCode,
    pub(super) result: CallResult,
    /// The provider's A2A answer, when there is one.
    pub(super) reply: Option<ProviderReply>,
    /// The receipt issued for it (none for a stranger's call, or one that
    /// could not be signed).
    pub(super) receipt: Option<Stamp>,
}

/// What the traffic and the receipt learn about a call beyond its audit
/// record.
#[derive(Debug, Clone)]
pub(crate) struct Shown<'a> {
    /// The A2A method (or `tools/call`).
    pub(crate) method: &'static str,
    /// The digest of the input as forwarded ([`exchange::receipt::digest`]),
    /// for the receipt.
    pub(crate) request: Option<String>,
    /// What of the capability input the inspector may show (only an input
    /// inside the capability's input schema).
    pub(crate) input: ShownInput,
    /// The capability the exchange is about when the audit record names
    /// something else (a task operation: the task's capability).
    pub(crate) capability: Option<&'a str>,
    /// Whether the answer was checked against the capability's response
    /// contract on this call (a forwarded `SendMessage`: the forward
    /// checks every answer), so redaction need not check it again.
    pub(crate) answer_checked: bool,
}

/// The inspector's view of a call's input, cut when the call arrives so
/// the input itself need not be kept (cloned) until the call ends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ShownInput {
    /// The call carried no input.
    None,
    /// It did, and no input schema lets any of it be shown.
    Hidden,
    /// What may be shown of it.
    Shown(Value),
}

impl<'a> Shown<'a> {
    /// A forwarded `SendMessage` whose input the inspector sees as
    /// `input` (its answer, if any, passed the response contract).
    pub(crate) fn message(input: ShownInput) -> Self {
        Self {
            method: "SendMessage",
            request: None,
            input,
            capability: None,
            answer_checked: true,
        }
    }

    /// A `SendMessage` the hub answered itself: nothing was checked.
    pub(crate) fn answered_here() -> Self {
        Self {
            answer_checked: false,
            ..Self::message(ShownInput::None)
        }
    }
}

impl Recorder {
    /// Records into `audit`, `owners` and `traffic`.
    pub(super) fn new(
        audit: AuditTrail,
        receipts: Issuer,
        owners: TaskOwners,
        traffic: Arc<Traffic>,
    ) -> Self {
        Self {
            audit,
            receipts,
            owners,
            traffic,
            strangers: Arc::default(),
        }
    }

    /// Builds the result, writes the audit record with its receipt,
    /// answers the status (and the provider's A2A answer, when there is
    /// one).
    pub(super) async fn finish(&self, call: &Call, done: Done, shown: Shown<'_>) -> Finished {
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
                .owners
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
        // The task it created or read: the provider's A2A answer, or a
        // task operation's result.
        let mut task: Option<Task> = match (&reply, &result) {
            (Some(reply), _) if reply.task().is_some() => reply.task().cloned(),
            (None, CallResult::Connected { result, .. }) if shown.capability.is_some() => {
                serde_json::from_value(result.clone()).ok()
            }
            _ => None,
        };
        let record = AuditRecord {
            system: self.audit.system().to_string(),
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
        let mut receipt = None;
        let appended = match (call.stranger.get(), reason) {
            (Some(s), Some(reason)) => {
                self.count_unidentified(s.front, s.credential, s.from, reason);
                Ok(())
            }
            _ => {
                let answer = match &result {
                    CallResult::Connected { result, .. } => Some(result),
                    CallResult::NotConnected { .. } => None,
                };
                let crossed = Crossed {
                    request: shown.request.clone(),
                    answer,
                    task: task.as_ref(),
                    provider_signature: reply
                        .as_ref()
                        .and_then(|r| r.metadata_str(exchange::receipt::ANSWER_SIGNATURE_KEY)),
                };
                receipt = self.receipts.issue(call, &record, shown.method, &crossed);
                let until = Instant::now() + AUDIT_GRACE;
                retry_while_unavailable(until, AuditError::is_unavailable, || {
                    self.audit.append_receipted(record.clone(), receipt.clone())
                })
                .await
            }
        };
        // A call not recorded is refused: no receipt, no task learnt.
        if appended.is_err() {
            receipt = None;
            task = None;
        }
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
        self.observe(call, status, &result, task, shown);
        Finished {
            status,
            result,
            reply,
            receipt,
        }
    }

    /// Hands one finished exchange to the traffic (`task`: the task it
    /// created or read).
    fn observe(
        &self,
        call: &Call,
        status: StatusCode,
        result: &CallResult,
        task: Option<Task>,
        shown: Shown<'_>,
    ) {
        let capability = shown.capability.unwrap_or(&call.capability);
        let provider = call.provider.as_str();
        let loaded = &call.registry;
        let (outcome, reason, retry) = match result {
            CallResult::Connected { replayed, .. } => (
                if *replayed {
                    TrafficOutcome::Replayed
                } else {
                    TrafficOutcome::Connected
                },
                None,
                *replayed,
            ),
            CallResult::NotConnected { reason, .. } => {
                (TrafficOutcome::NotConnected, Some(*reason), false)
            }
        };
        let task_state = task.as_ref().map(|t| {
            (
                t.id.clone(),
                crate::store::task_records::RecordState::of_task(&t.status.state)
                    .as_str()
                    .to_string(),
            )
        });
        // What the inspector may show, worked out only for an exchange it
        // keeps (the traffic samples a busy edge): the redaction is most of
        // what observing a call costs.
        let payload = || {
            let contract = loaded.contracts.of(capability);
            let mut notes = Vec::new();
            let request = match shown.input {
                ShownInput::Shown(kept) => Some(kept),
                ShownInput::Hidden => {
                    notes.push("input not shown: no input schema names it");
                    None
                }
                ShownInput::None => None,
            };
            // The capability result: for a task operation, the task's
            // artifact.
            let artifact;
            let answer = match (result, &task) {
                (CallResult::Connected { .. }, Some(t)) if shown.capability.is_some() => {
                    artifact =
                        exchange::wire::parse_answer(&SendMessageResponse::Task(t.clone())).ok();
                    artifact.as_ref()
                }
                (CallResult::Connected { result, .. }, _) if !result.is_null() => Some(result),
                _ => None,
            };
            let response = match (answer, contract) {
                (None, _) => None,
                (Some(answer), Some(c)) if shown.answer_checked => {
                    Some(redaction::view::inspector_payload(redaction::redact_valid(
                        c, answer, provider,
                    )))
                }
                (Some(answer), Some(c)) => match redaction::redact(c, answer, provider) {
                    Ok(redacted) => Some(redaction::view::inspector_payload(redacted)),
                    Err(_) => {
                        notes.push("answer not shown: it breaks the contract");
                        None
                    }
                },
                (Some(_), None) => {
                    notes.push("answer not shown: no contract lets any of it reach a browser");
                    None
                }
            };
            Payload {
                request,
                response,
                note: (!notes.is_empty()).then(|| notes.join("; ")),
            }
        };
        self.traffic.observe(
            &loaded.topology,
            Exchange {
                caller: &call.caller,
                provider,
                capability,
                method: shown.method,
                envelope: &call.envelope,
                http_status: status.as_u16(),
                outcome,
                reason,
                duration: call.started.elapsed(),
                retry,
                task: task_state,
            },
            payload,
        );
    }

    /// Counts a stranger's call refused with `reason`: on `/metrics`, and
    /// into the interval's summary. For the pipeline's door, and for a
    /// door that refuses before the pipeline (the MCP front's token check).
    pub(super) fn count_unidentified(
        &self,
        front: Front,
        credential: Unidentified,
        from: Option<IpAddr>,
        reason: ReasonCode,
    ) {
        let stranger = Stranger {
            front,
            credential,
            from: from.map(|ip| ip.to_canonical()),
        };
        self.strangers.note(&stranger, reason);
        self.traffic.prometheus().refused_unidentified(
            stranger.front.as_str(),
            reason.as_str(),
            stranger.credential.as_str(),
        );
    }

    /// Writes the strangers' summary row every `every`, and once more when
    /// `stopping` completes. A row that cannot be written is logged; its
    /// calls stay counted on `/metrics`.
    pub(super) fn spawn_summaries(
        &self,
        every: Duration,
        stopping: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let recorder = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            tokio::pin!(stopping);
            loop {
                let last = tokio::select! {
                    _ = tick.tick() => false,
                    () = &mut stopping => true,
                };
                recorder.write_summary().await;
                if last {
                    break;
                }
            }
        })
    }

    /// Appends the window's summary row, if it counted anybody.
    pub(super) async fn write_summary(&self) {
        let Some(record) = self.strangers.take() else {
            return;
        };
        if let Err(e) = self.audit.append(record).await {
            tracing::warn!(error = %e, "could not write the summary of unidentified calls");
        }
    }
}
