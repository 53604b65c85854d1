//! Results the requester accepts ([`exchange::acceptance`]), at the
//! provider: a task submitted with criteria does not complete when its
//! work is done. Its result artifact is emitted and the task parks in
//! `input-required`, flagged pending with its window and attempt
//! ([`park`]). Then exactly one of three things ends the wait:
//!
//! * **accept** (a message on the task with the decision): `completed`;
//! * **reject** with a reason and feedback: `working`, the work runs again
//!   and its new result parks as the next attempt; or `failed` when the
//!   reject says `retry: false` or the rejections allowed are used up;
//! * **the window closes** ([`expire`]): `failed`, "acceptance window
//!   closed".
//!
//! Which one wins is decided under one lock, against the attempt the peer
//! itself parked ([`Waiting`]): a decision and the window's timer cannot
//! both end the same result, and a decision for a result that no longer
//! waits is refused. Each of them writes one line to the peer's trail
//! (payload-free: the reason and the feedback's length, never its text).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use a2a::{
    A2AError, Artifact, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use a2a_server::{ExecutorContext, TaskStore};
use chrono::Utc;
use exchange::acceptance::{self, Action, Criteria, Decision, Pending, DECISION_KEY};
use exchange::audit::Outcome;
use exchange::envelope::Envelope;
use exchange::reason::ReasonCode;
use exchange::wire;
use futures::stream::BoxStream;
use serde_json::Value;
use tokio::sync::mpsc;

use super::shape::{status_message, CALLER_KEY, DEADLINE_KEY, RESULT_ARTIFACT};
use super::store::{Submitter, Tasks};
use crate::incoming::{caller_of, envelope_headers};
use crate::skills::triage;
use crate::PeerState;

/// A task whose result is to park: who submitted it, where it is.
pub(super) struct Parking<'a> {
    pub(super) tasks: &'a Arc<Tasks>,
    pub(super) task_id: &'a str,
    pub(super) context_id: &'a str,
    pub(super) who: &'a Submitter,
    pub(super) criteria: &'a Criteria,
}

/// Emits `result` as attempt `attempt`'s artifact and parks the task
/// pending acceptance (`send` takes the events, in order), then starts
/// the window's timer.
pub(super) async fn park(
    at: &Parking<'_>,
    attempt: u32,
    result: Value,
    text: &str,
    send: &(dyn Fn(StreamResponse) + Sync),
) {
    let pending = Pending {
        attempt,
        accept_by: Utc::now()
            + chrono::Duration::from_std(at.criteria.timeout()).unwrap_or_default(),
    };
    at.tasks
        .note(
            at.who,
            Outcome::Connected,
            None,
            format!(
                "task {} result {attempt} awaits the requester's acceptance until {}",
                at.task_id,
                pending.accept_by.to_rfc3339()
            ),
        )
        .await;
    at.tasks.waiting.put(at.task_id, attempt).await;
    let mut artifact_meta = HashMap::new();
    artifact_meta.insert(acceptance::ATTEMPT_KEY.to_string(), Value::from(attempt));
    send(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: at.task_id.to_string(),
        context_id: at.context_id.to_string(),
        artifact: Artifact {
            artifact_id: a2a::new_artifact_id(),
            name: Some(RESULT_ARTIFACT.into()),
            description: None,
            parts: vec![Part::data(result)],
            metadata: Some(artifact_meta),
            extensions: Some(vec![acceptance::EXTENSION_URI.to_string()]),
        },
        append: None,
        last_chunk: Some(true),
        metadata: None,
    }));
    let mut message = status_message(
        at.task_id,
        at.context_id,
        format!(
            "{text} — result {attempt} awaits your acceptance until {} (accept, or reject with \
             a reason and feedback)",
            pending
                .accept_by
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
    );
    pending.flag(&mut message);
    send(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: at.task_id.to_string(),
        context_id: at.context_id.to_string(),
        status: TaskStatus {
            state: TaskState::InputRequired,
            message: Some(message),
            timestamp: Some(Utc::now()),
        },
        metadata: None,
    }));
    tokio::spawn(expire(
        at.tasks.clone(),
        at.task_id.to_string(),
        at.who.clone(),
        pending,
    ));
}

/// The window's timer: at `pending.accept_by`, a result still waiting
/// fails the task.
async fn expire(tasks: Arc<Tasks>, task_id: String, who: Submitter, pending: Pending) {
    let wait = (pending.accept_by - Utc::now())
        .to_std()
        .unwrap_or_default();
    tokio::time::sleep(wait).await;
    if !tasks.waiting.take(&task_id, pending.attempt).await {
        return;
    }
    let closed = pending
        .accept_by
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut task = match tasks.store.get(&task_id).await {
        Ok(Some(task)) => task,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(error = %e, task = %task_id, "could not read an expired task");
            return;
        }
    };
    // A task that ended otherwise while it waited (a cancel) keeps its end.
    if !matches!(Pending::of_status(&task.status), Ok(Some(p)) if p.attempt == pending.attempt) {
        return;
    }
    tasks
        .note(
            &who,
            Outcome::NotConnected,
            Some(ReasonCode::Timeout),
            format!(
                "task {task_id} failed: acceptance window closed at {closed}, result {} neither \
                 accepted nor rejected",
                pending.attempt
            ),
        )
        .await;
    task.status = TaskStatus {
        state: TaskState::Failed,
        message: Some(status_message(
            &task_id,
            &task.context_id,
            format!(
                "acceptance window closed at {closed}: result {} was neither accepted nor \
                 rejected",
                pending.attempt
            ),
        )),
        timestamp: Some(Utc::now()),
    };
    if let Err(e) = tasks.store.update(task).await {
        tracing::warn!(error = %e, task = %task_id, "could not fail an expired task");
    }
}

/// The stream answering a decision on a task, or `None` when the message
/// carries no decision (then it is an ordinary call).
pub fn decision_stream(
    state: &Arc<PeerState>,
    tasks: &Arc<Tasks>,
    ctx: &ExecutorContext,
) -> Option<BoxStream<'static, Result<StreamResponse, A2AError>>> {
    let message = ctx.message.as_ref()?;
    if !message
        .metadata
        .as_ref()
        .is_some_and(|m| m.contains_key(DECISION_KEY))
    {
        return None;
    }
    let asked = Asked {
        caller: caller_of(&ctx.service_params),
        envelope: Envelope::from_headers(&envelope_headers(&ctx.service_params)),
        task_id: ctx.task_id.clone(),
        decision: Decision::from_metadata(message.metadata.as_ref()),
        feedback: acceptance::feedback_text(&message.parts),
    };
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(decide(state.clone(), tasks.clone(), asked, tx));
    Some(Box::pin(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|e| (e, rx))
    })))
}

/// What a decision message brought.
struct Asked {
    caller: String,
    envelope: Envelope,
    task_id: String,
    decision: Result<Option<Decision>, acceptance::AcceptanceError>,
    feedback: String,
}

type Tx = mpsc::UnboundedSender<Result<StreamResponse, A2AError>>;

async fn decide(state: Arc<PeerState>, tasks: Arc<Tasks>, asked: Asked, tx: Tx) {
    let fail = |e: A2AError| {
        let _ = tx.send(Err(e));
    };
    let decision = match asked.decision {
        Ok(Some(d)) => d,
        Ok(None) => return fail(A2AError::invalid_params("no decision")),
        Err(e) => return fail(A2AError::invalid_params(e.to_string())),
    };
    let task = match tasks.store.get(&asked.task_id).await {
        Ok(Some(t)) => t,
        Ok(None) => return fail(A2AError::task_not_found(&asked.task_id)),
        Err(e) => return fail(e),
    };
    let meta = task.metadata.clone().unwrap_or_default();
    // Only the requester decides: another caller is told what a task that
    // does not exist tells it.
    if meta.get(CALLER_KEY).and_then(Value::as_str) != Some(asked.caller.as_str()) {
        return fail(A2AError::task_not_found(&asked.task_id));
    }
    let pending = match Pending::of_status(&task.status) {
        Ok(Some(p)) => p,
        Ok(None) | Err(_) => {
            return fail(A2AError::invalid_params(format!(
                "task {} is not awaiting acceptance (it is {:?})",
                asked.task_id, task.status.state
            )))
        }
    };
    if Utc::now() > pending.accept_by {
        return fail(A2AError::invalid_params(format!(
            "the acceptance window of task {} closed at {}",
            asked.task_id,
            pending.accept_by.to_rfc3339()
        )));
    }
    if !tasks.waiting.take(&asked.task_id, pending.attempt).await {
        return fail(A2AError::invalid_params(format!(
            "task {}'s result {} no longer awaits a decision",
            asked.task_id, pending.attempt
        )));
    }
    let criteria = Criteria::from_metadata(Some(&meta))
        .ok()
        .flatten()
        .unwrap_or_default()
        .bounded();
    let who = Submitter {
        caller: asked.caller.clone(),
        capability: task_capability(&task).unwrap_or_default(),
        request_id: asked.envelope.request_id.clone(),
        trace_id: asked.envelope.trace.trace_id.clone(),
        started: Instant::now(),
    };
    let status = |state: TaskState, text: String| {
        let _ = tx.send(Ok(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            status: TaskStatus {
                state,
                message: Some(status_message(&task.id, &task.context_id, text)),
                timestamp: Some(Utc::now()),
            },
            metadata: None,
        })));
    };
    let n = pending.attempt;
    let reason = decision.reason.map_or("OTHER", |r| r.as_str());
    if decision.action == Action::Accept {
        tasks
            .note(
                &who,
                Outcome::Connected,
                None,
                format!(
                    "task {} completed: result {n} accepted by the requester",
                    task.id
                ),
            )
            .await;
        return status(
            TaskState::Completed,
            format!("result {n} accepted by the requester"),
        );
    }
    let feedback = format!("feedback of {} characters", asked.feedback.chars().count());
    if !decision.retry() || n > criteria.max_rejections() {
        let why = if decision.retry() {
            format!(
                "the {} rejections allowed are used up",
                criteria.max_rejections()
            )
        } else {
            "the requester asked for no other result".to_string()
        };
        tasks
            .note(
                &who,
                Outcome::NotConnected,
                None,
                format!(
                    "task {} failed: result {n} rejected by the requester ({reason}, {feedback}); {why}",
                    task.id
                ),
            )
            .await;
        return status(
            TaskState::Failed,
            format!("result {n} rejected by the requester ({reason}); {why}"),
        );
    }
    tasks
        .note(
            &who,
            Outcome::Connected,
            None,
            format!(
                "task {} result {n} rejected by the requester ({reason}, {feedback}); working on \
                 result {}",
                task.id,
                n + 1
            ),
        )
        .await;
    status(
        TaskState::Working,
        format!(
            "result {n} rejected ({reason}): working on result {}",
            n + 1
        ),
    );
    match revise(&state, &task).await {
        Ok((result, text)) => {
            let send = |e: StreamResponse| {
                let _ = tx.send(Ok(e));
            };
            let at = Parking {
                tasks: &tasks,
                task_id: &task.id,
                context_id: &task.context_id,
                who: &who,
                criteria: &criteria,
            };
            park(&at, n + 1, result, &text, &send).await;
        }
        Err(why) => {
            tasks
                .note(
                    &who,
                    Outcome::NotConnected,
                    None,
                    format!("task {} failed: {why}", task.id),
                )
                .await;
            status(TaskState::Failed, why);
        }
    }
}

/// The capability a task was submitted for (its first message).
fn task_capability(task: &Task) -> Option<String> {
    let first = task.history.as_ref()?.first()?;
    wire::parse_call(first).ok().map(|(c, _)| c)
}

/// The work again, for a new result: the same input, within the task's
/// deadline. The reference triage is deterministic: the new result is the
/// same triage, told apart by its artifact's attempt.
async fn revise(state: &PeerState, task: &Task) -> Result<(Value, String), String> {
    let deadline = task
        .metadata
        .as_ref()
        .and_then(|m| m.get(DEADLINE_KEY))
        .and_then(Value::as_str)
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
        .map(|d| d.with_timezone(&Utc));
    let first = task
        .history
        .as_ref()
        .and_then(|h| h.first())
        .ok_or("the task's first message is no longer held")?;
    let (capability, input) = wire::parse_call(first).map_err(|e| e.to_string())?;
    let input = triage::parse_input(&input).map_err(|e| e.to_string())?;
    let work = Duration::from_millis(
        input
            .work_ms
            .or_else(|| state.config.skill(&capability).map(|s| s.work_ms()))
            .unwrap_or(0),
    );
    if let Some(d) = deadline {
        if Utc::now() + chrono::Duration::from_std(work).unwrap_or_default() > d {
            return Err(format!(
                "deadline {} passes before another result could be ready",
                d.to_rfc3339()
            ));
        }
    }
    tokio::time::sleep(work).await;
    let ticket = triage::find_ticket(&state.pool, &input.ticket_id)
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "reading the tickets");
            "the peer failed to read its tickets; see its log".to_string()
        })?
        .ok_or_else(|| format!("unknown ticket {}", input.ticket_id))?;
    let out = triage::triage(&ticket);
    Ok((out.result, out.text))
}
