//! Results the requester accepts, through the hub ([`exchange::acceptance`];
//! the provider's side is the reference peer's `tasks::acceptance`).
//!
//! The hub is the gate between the two companies, so three things are
//! decided here:
//!
//! * **The criteria travel with the submission.** A caller's
//!   `{EXT}/criteria` are read at the door ([`Criteria::from_metadata`]:
//!   a bad value is refused naming the key), their `artifactSchema`
//!   compiled, and forwarded on the message the hub builds for the
//!   provider; on a capability that is not a task they are refused.
//! * **The contract is checked before the requester is asked**
//!   ([`TaskOps::screen`]). A task that passes through the hub pending
//!   acceptance (a `GetTask` answer, a decision's answer) has its result
//!   checked against the capability's response schema and the
//!   requester's `artifactSchema` and `requiredArtifacts`. A result that
//!   fails is rejected by the hub on the requester's behalf
//!   (`SCHEMA_MISMATCH` or `MISSING_ARTIFACT`, retry, the violation as
//!   feedback), so the requester only ever sees results that meet them.
//! * **A decision is the requester's own, on time** ([`TaskOps::decide`]).
//!   Only the task's owner decides (another caller is told the task does
//!   not exist, before anything is forwarded); the hub reads the task
//!   fresh from the provider and refuses a decision on a task that does
//!   not await one (invalid params) or whose window has closed
//!   (`NOT_PERMITTED`); an accept of a result that fails the contract is
//!   refused and the result rejected for the requester. What reaches the
//!   provider is a message the hub builds: the decision, the feedback's
//!   parts, the task and context ids — nothing else the caller sent.
//!
//! Every decision, the requester's or the hub's, is one record in the
//! hub's trail (capability `acceptance.accept` / `acceptance.reject`) with
//! its receipt, and one line in the provider's.

use a2a::{Message, Part, PartContent, Role, SendMessageConfiguration, SendMessageRequest, Task};
use chrono::Utc;
use exchange::acceptance::{
    whole, Action, Criteria, Decision, Pending, RejectReason, ATTEMPT_KEY, CRITERIA_KEY,
    EXTENSION_URI,
};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;
use serde_json::Value;

use super::forward::Rpc;
use super::tasks::{TaskOp, TaskOps, TaskRefusal};
use crate::contract::{schema, Contracts};
use a2a::GetTaskRequest;

/// The most feedback text forwarded, in characters.
const MAX_FEEDBACK: usize = 4000;

/// Reads a caller's criteria for a submission of `capability`: none, or
/// criteria whose `artifactSchema` compiles; `Err` names what is wrong.
pub fn criteria_of(
    metadata: Option<&exchange::acceptance::Metadata>,
) -> Result<Option<Criteria>, String> {
    let criteria = Criteria::from_metadata(metadata).map_err(|e| e.to_string())?;
    if let Some(s) = criteria.as_ref().and_then(|c| c.artifact_schema.as_ref()) {
        schema::compile("artifactSchema", s)
            .map_err(|e| format!("metadata `{CRITERIA_KEY}`: artifactSchema: {e}"))?;
    }
    Ok(criteria)
}

/// Why a pending result does not meet its criteria.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unmet {
    pub(super) reason: RejectReason,
    pub(super) why: String,
}

/// The first way attempt `attempt`'s result in `task` fails the contract
/// of `capability` or the requester's criteria.
pub(super) fn unmet(
    task: &Task,
    attempt: u32,
    capability: &str,
    contracts: &Contracts,
    criteria: &Criteria,
) -> Option<Unmet> {
    let artifacts = task.artifacts.as_deref().unwrap_or_default();
    for name in &criteria.required_artifacts {
        if !artifacts.iter().any(|a| a.name.as_deref() == Some(name)) {
            return Some(Unmet {
                reason: RejectReason::MissingArtifact,
                why: format!(
                    "result {attempt} has no artifact named `{}`",
                    clip(name, 100)
                ),
            });
        }
    }
    // The artifacts of this attempt (a provider that marks none: all).
    let of_attempt = |a: &&a2a::Artifact| {
        a.metadata
            .as_ref()
            .and_then(|m| m.get(ATTEMPT_KEY))
            .and_then(whole)
            .is_none_or(|n| n == u64::from(attempt))
    };
    let data: Vec<&Value> = artifacts
        .iter()
        .filter(of_attempt)
        .flat_map(|a| a.parts.iter())
        .filter_map(|p| match &p.content {
            PartContent::Data(v) => Some(v),
            _ => None,
        })
        .collect();
    if data.is_empty() {
        return Some(Unmet {
            reason: RejectReason::MissingArtifact,
            why: format!("result {attempt} carries no data to check"),
        });
    }
    let own = criteria
        .artifact_schema
        .as_ref()
        .and_then(|s| schema::compile("artifactSchema", s).ok());
    for value in data {
        if let Some(contract) = contracts.of(capability) {
            if let Err(v) = contract.check(value) {
                return Some(Unmet {
                    reason: RejectReason::SchemaMismatch,
                    why: format!("result {attempt} breaks the contract of {capability}: {v}"),
                });
            }
        }
        if let Some(validator) = &own {
            if let Err(v) = schema::first_violation(validator, value) {
                return Some(Unmet {
                    reason: RejectReason::SchemaMismatch,
                    why: format!("result {attempt} breaks the requester's artifactSchema: {v}"),
                });
            }
        }
    }
    None
}

/// A screened task answer: the task as the caller gets it, and what the
/// hub decided on the caller's behalf (for the operation's record).
pub(super) struct Screened {
    pub(super) result: Result<Value, TaskRefusal>,
    pub(super) note: String,
}

impl TaskOps {
    /// Checks a pending result in `answer` before its requester sees it;
    /// one that fails is rejected for the requester and the provider's
    /// answer to that rejection is what passes on.
    pub(super) async fn screen(
        &self,
        rpc: &Rpc<'_>,
        contracts: &Contracts,
        answer: Value,
    ) -> Screened {
        let pass = |answer: Value| Screened {
            result: Ok(answer),
            note: String::new(),
        };
        // Nearly every answer is not pending: told apart without reading
        // the task.
        if answer.pointer("/status/state").and_then(Value::as_str)
            != Some("TASK_STATE_INPUT_REQUIRED")
        {
            return pass(answer);
        }
        let Ok(task) = serde_json::from_value::<Task>(answer.clone()) else {
            return pass(answer);
        };
        let Ok(Some(pending)) = Pending::of_status(&task.status) else {
            return pass(answer);
        };
        let Some(unmet) = self.unmet_in(rpc, &task, pending, contracts).await else {
            return pass(answer);
        };
        self.reject_for_requester(rpc, &task, pending, unmet).await
    }

    /// What in `task`'s pending result fails its criteria, if anything.
    async fn unmet_in(
        &self,
        rpc: &Rpc<'_>,
        task: &Task,
        pending: Pending,
        contracts: &Contracts,
    ) -> Option<Unmet> {
        let criteria = Criteria::from_metadata(task.metadata.as_ref())
            .ok()
            .flatten()
            .unwrap_or_default();
        let capability = self
            .capability_of(&rpc.system.id, &task.id)
            .await
            .unwrap_or_default();
        unmet(task, pending.attempt, &capability, contracts, &criteria)
    }

    /// The hub's reject of a result that fails its criteria.
    async fn reject_for_requester(
        &self,
        rpc: &Rpc<'_>,
        task: &Task,
        pending: Pending,
        unmet: Unmet,
    ) -> Screened {
        let decision = Decision::reject(unmet.reason, true);
        let text = format!(
            "rejected by the Wall Street hub before the requester saw it: {}",
            unmet.why
        );
        let op = TaskOp::Decide(Box::new(decision_request(
            task,
            decision,
            vec![Part::text(text)],
            true,
        )));
        let note = format!(
            "the hub rejected result {} of task {} for {} ({}, retry): {}",
            pending.attempt,
            clip(&task.id, 64),
            rpc.caller,
            unmet.reason.as_str(),
            unmet.why
        );
        tracing::info!(task = %task.id, caller = %rpc.caller, %note, "acceptance");
        Screened {
            result: self.ask(rpc, &op).await,
            note,
        }
    }

    /// The requester's decision on its task's pending result: checked,
    /// then forwarded as a message the hub builds.
    pub(super) async fn decide(
        &self,
        rpc: &Rpc<'_>,
        asked: &SendMessageRequest,
        contracts: &Contracts,
    ) -> Screened {
        match self.checked_decision(rpc, asked, contracts).await {
            Ok(screened) => screened,
            Err(refusal) => Screened {
                result: Err(refusal),
                note: String::new(),
            },
        }
    }

    async fn checked_decision(
        &self,
        rpc: &Rpc<'_>,
        asked: &SendMessageRequest,
        contracts: &Contracts,
    ) -> Result<Screened, TaskRefusal> {
        let decision = Decision::from_metadata(asked.message.metadata.as_ref())
            .map_err(|e| TaskRefusal::InvalidParams(e.to_string()))?
            .ok_or_else(|| TaskRefusal::InvalidParams("the message carries no decision".into()))?;
        let Some(id) = asked.message.task_id.as_deref() else {
            return Err(TaskRefusal::InvalidParams(
                "a decision names the task it decides (message.taskId)".into(),
            ));
        };
        self.check_owner(rpc, id).await?;
        let now = self
            .ask(
                rpc,
                &TaskOp::Get(GetTaskRequest {
                    id: id.to_string(),
                    history_length: Some(0),
                    tenant: None,
                }),
            )
            .await?;
        let task: Task = serde_json::from_value(now).map_err(|e| {
            TaskRefusal::NotConnected(super::answer::peer_error(format!(
                "{}'s task is not an A2A task: {}",
                rpc.system.id,
                clip(&e.to_string(), 200)
            )))
        })?;
        let pending = match Pending::of_status(&task.status) {
            Ok(Some(p)) => p,
            Ok(None) => {
                return Err(TaskRefusal::InvalidParams(format!(
                    "task {} does not await acceptance: it is {}",
                    clip(id, 64),
                    crate::store::task_records::RecordState::of_task(&task.status.state).as_str()
                )))
            }
            Err(e) => {
                return Err(TaskRefusal::NotConnected(super::answer::peer_error(
                    e.to_string(),
                )))
            }
        };
        if Utc::now() > pending.accept_by {
            return Err(TaskRefusal::NotConnected(NotConnected::new(
                ReasonCode::NotPermitted,
                format!(
                    "the acceptance window of task {} closed at {}: result {} can no longer be \
                     decided",
                    clip(id, 64),
                    pending
                        .accept_by
                        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                    pending.attempt
                ),
            )));
        }
        if decision.action == Action::Accept {
            if let Some(unmet) = self.unmet_in(rpc, &task, pending, contracts).await {
                let why = unmet.why.clone();
                let screened = self.reject_for_requester(rpc, &task, pending, unmet).await;
                tracing::info!(note = %screened.note, "an accept refused");
                return Err(TaskRefusal::InvalidParams(format!(
                    "{why}: the hub does not accept it for you and has asked {} for another \
                     result",
                    rpc.system.id
                )));
            }
        }
        let feedback = feedback_parts(&asked.message.parts);
        let chars = exchange::acceptance::feedback_text(&feedback)
            .chars()
            .count();
        let return_immediately = asked
            .configuration
            .as_ref()
            .and_then(|c| c.return_immediately)
            .unwrap_or(false);
        let mut forwarded = decision_request(&task, decision, feedback, return_immediately);
        forwarded
            .message
            .message_id
            .clone_from(&asked.message.message_id);
        let answer = self.ask(rpc, &TaskOp::Decide(Box::new(forwarded))).await?;
        let mut note = format!(
            "task {} result {}: {} by {}",
            clip(id, 64),
            pending.attempt,
            decision.describe(),
            rpc.caller
        );
        if decision.action == Action::Reject {
            note.push_str(&format!(", feedback of {chars} characters"));
        }
        // A new result the provider answered with is screened in turn.
        let screened = self.screen(rpc, contracts, answer).await;
        if !screened.note.is_empty() {
            note.push_str("; then ");
            note.push_str(&screened.note);
        }
        Ok(Screened {
            result: screened.result,
            note,
        })
    }
}

/// The message the hub sends the provider for `decision` on `task`.
fn decision_request(
    task: &Task,
    decision: Decision,
    parts: Vec<Part>,
    return_immediately: bool,
) -> SendMessageRequest {
    let mut message = Message::new(Role::User, parts);
    message.task_id = Some(task.id.clone());
    message.context_id = Some(task.context_id.clone());
    message.metadata = Some(decision.metadata());
    message.extensions = Some(vec![EXTENSION_URI.to_string()]);
    SendMessageRequest {
        message,
        configuration: Some(SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: None,
            history_length: Some(0),
            return_immediately: Some(return_immediately),
        }),
        metadata: None,
        tenant: None,
    }
}

/// The feedback a decision forwards: its text parts (clipped together to
/// [`MAX_FEEDBACK`] characters) and data parts; files stay with the hub.
fn feedback_parts(parts: &[Part]) -> Vec<Part> {
    let mut left = MAX_FEEDBACK;
    parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Text(t) if left > 0 => {
                let kept: String = t.chars().take(left).collect();
                left = left.saturating_sub(kept.chars().count());
                Some(Part::text(kept))
            }
            PartContent::Data(v) => Some(Part::data(v.clone())),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
#[path = "acceptance_tests.rs"]
mod tests;
