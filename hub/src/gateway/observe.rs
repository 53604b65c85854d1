//! What the gateway tells [`Traffic`](crate::traffic) about each finished
//! exchange (DESIGN.md §6 metrics; the envelope inspector).
//!
//! Called once per exchange from `finish`, next to the audit record. The
//! payload is passed through the redaction layer *here*, before anything
//! is kept: the inspector stores only what a browser may see (the input
//! only when the capability's input schema bounds it; the answer only as
//! the contract redacts it), never the raw answer.

use axum::http::StatusCode;
use serde_json::Value;

use super::answer::ProviderReply;
use super::call::Call;
use super::Gateway;
use crate::redaction;
use crate::traffic::Exchange;
use a2a::{SendMessageResponse, Task};
use app::dto::TrafficOutcome;
use exchange::reason::CallResult;

/// What the traffic learns about a call beyond its audit record.
#[derive(Debug, Clone)]
pub(crate) struct Shown<'a> {
    /// The A2A method (or `tools/call`).
    pub(crate) method: &'static str,
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

impl Gateway {
    /// Hands one finished exchange to the traffic.
    pub(super) fn observe(
        &self,
        call: &Call,
        status: StatusCode,
        result: &CallResult,
        reply: Option<&ProviderReply>,
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
        // The task it created or read: the provider's A2A answer, or a
        // task operation's result.
        let task: Option<Task> = match (reply, result) {
            (Some(reply), _) if reply.task().is_some() => reply.task().cloned(),
            (None, CallResult::Connected { result, .. }) if shown.capability.is_some() => {
                serde_json::from_value(result.clone()).ok()
            }
            _ => None,
        };
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
        // The capability result: for a task operation, the task's artifact.
        let artifact;
        let answer = match (result, &task) {
            (CallResult::Connected { .. }, Some(t)) if shown.capability.is_some() => {
                artifact = exchange::wire::parse_answer(&SendMessageResponse::Task(t.clone())).ok();
                artifact.as_ref()
            }
            (CallResult::Connected { result, .. }, _) if !result.is_null() => Some(result),
            _ => None,
        };
        let response = match (answer, contract) {
            (None, _) => None,
            (Some(answer), Some(c)) if shown.answer_checked => Some(
                redaction::view::inspector_payload(redaction::redact_valid(c, answer, provider)),
            ),
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
                task: task.map(|t| {
                    (
                        t.id.clone(),
                        crate::store::task_records::RecordState::of_task(&t.status.state)
                            .as_str()
                            .to_string(),
                    )
                }),
                request,
                response,
                payload_note: (!notes.is_empty()).then(|| notes.join("; ")),
            },
        );
    }
}
