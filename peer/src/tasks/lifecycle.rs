//! One task call from its key to its end (the lifecycle of the module
//! doc of [`super`]): the execute stream of a task skill's call, the work
//! on its own tokio task, the events of each state (`submitted`,
//! `working`, the result artifact, `completed` | `failed` | `rejected`),
//! the deadline, a duplicate submission's answer, and the cancel stream.

use super::acceptance::{park, Parking};
use super::keys::{input_digest, Claim, MAX_KEY_LEN};
use super::shape::{
    status_message, CALLER_KEY, DEADLINE_KEY, DEADLINE_METADATA, DUPLICATE_OF_KEY, IDEMPOTENCY_KEY,
    RESULT_ARTIFACT,
};
use super::store::{Life, Running, Stop, Submitter, Tasks};
use crate::config::SkillKind;
use crate::incoming::{caller_of, envelope_headers};
use crate::skills::triage::{self, Deadline};
use crate::skills::SkillError;
use crate::PeerState;
use a2a::{
    A2AError, Artifact, Message, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::{ExecutorContext, TaskStore};
use exchange::acceptance::{self, Criteria};
use exchange::audit::Outcome;
use exchange::envelope::Envelope;
use exchange::reason::ReasonCode;
use exchange::telemetry;
use exchange::wire;
use futures::stream::BoxStream;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tracing::Instrument;

/// What the work sends to the answer stream.
enum Out {
    /// Hold the next event back this long (fault `accept_stall_ms`).
    Hold(Duration),
    /// An event for the handler (boxed: events are large, holds small).
    Event(Box<Result<StreamResponse, A2AError>>),
}

/// The capability of `ctx`'s call if it names a task skill of this peer.
pub fn task_capability(state: &PeerState, ctx: &ExecutorContext) -> Option<String> {
    let message = ctx.message.as_ref()?;
    if wire::unaccepted_media_type(message).is_some() {
        return None;
    }
    let (capability, _) = wire::parse_call(message).ok()?;
    let skill = state.config.skill(&capability)?;
    (skill.kind == SkillKind::Task).then_some(capability)
}

/// The execute stream of a task call: the work runs on its own tokio task
/// (the answer may be held back, the work is not) and sends its events
/// here. Dropping the stream tells the work nobody listens any more.
pub fn task_stream(
    state: Arc<PeerState>,
    tasks: Arc<Tasks>,
    capability: String,
    ctx: ExecutorContext,
) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    let (tx, rx) = mpsc::unbounded_channel();
    let guard = Deregister {
        tasks: tasks.clone(),
        task_id: ctx.task_id.clone(),
    };
    // The work's own `peer.execute` span (when traces are exported),
    // parented on the call's traceparent like a message-answered call's.
    let mut headers = envelope_headers(&ctx.service_params);
    let span = telemetry::execute_span(&caller_of(&ctx.service_params), &state.config.system);
    telemetry::continue_trace(&span, &mut headers);
    telemetry::record(&span, "capability", &capability);
    tokio::spawn(run(state, tasks, capability, ctx, headers, tx).instrument(span));
    Box::pin(futures::stream::unfold(
        (rx, guard),
        |(mut rx, guard)| async move {
            loop {
                match rx.recv().await? {
                    Out::Hold(d) => tokio::time::sleep(d).await,
                    Out::Event(e) => return Some((*e, (rx, guard))),
                }
            }
        },
    ))
}

/// Removes a task's bookkeeping when its answer stream goes (after the
/// handler stored the end, or when it stopped listening).
struct Deregister {
    tasks: Arc<Tasks>,
    task_id: String,
}

impl Drop for Deregister {
    fn drop(&mut self) {
        if let Some(run) = self.tasks.deregister(&self.task_id) {
            run.stop.send_if_modified(|s| {
                let abandon = *s == Stop::Run;
                if abandon {
                    *s = Stop::Abandon;
                }
                abandon
            });
        }
    }
}

/// One task call, from its key to its end.
struct Work {
    state: Arc<PeerState>,
    tasks: Arc<Tasks>,
    task_id: String,
    context_id: String,
    message: Message,
    who: Submitter,
    version: String,
    tx: mpsc::UnboundedSender<Out>,
}

impl Work {
    fn send(&self, event: StreamResponse) {
        // A closed channel means the handler stopped listening: the
        // Deregister guard has told the work already.
        let _ = self.tx.send(Out::Event(Box::new(Ok(event))));
    }

    fn task(&self, state: TaskState, text: Option<String>, metadata: Metadata) -> Task {
        Task {
            id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus {
                state,
                message: text.map(|t| status_message(&self.task_id, &self.context_id, t)),
                timestamp: Some(chrono::Utc::now()),
            },
            artifacts: None,
            history: Some(vec![self.message.clone()]),
            metadata: Some(metadata),
        }
    }

    fn status(&self, state: TaskState, text: String) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus {
                state,
                message: Some(status_message(&self.task_id, &self.context_id, text)),
                timestamp: Some(chrono::Utc::now()),
            },
            metadata: None,
        })
    }

    /// Rejects the task: `message` for the caller, `code` for the trail.
    async fn reject(&self, message: String, code: &str, metadata: Metadata) {
        self.tasks
            .note(
                &self.who,
                Outcome::Refused,
                None,
                format!("task {} rejected: invalid params: {code}", self.task_id),
            )
            .await;
        self.send(StreamResponse::Task(self.task(
            TaskState::Rejected,
            Some(message),
            metadata,
        )));
    }
}

type Metadata = HashMap<String, Value>;

async fn run(
    state: Arc<PeerState>,
    tasks: Arc<Tasks>,
    capability: String,
    ctx: ExecutorContext,
    headers: axum::http::HeaderMap,
    tx: mpsc::UnboundedSender<Out>,
) {
    let env = Envelope::from_headers(&headers);
    telemetry::record(&tracing::Span::current(), "request_id", &env.request_id);
    let who = Submitter {
        caller: caller_of(&ctx.service_params),
        capability,
        request_id: env.request_id.clone(),
        trace_id: env.trace.trace_id.clone(),
        started: Instant::now(),
    };
    let Some(message) = ctx.message.clone() else {
        return;
    };
    let work = Work {
        state,
        tasks,
        task_id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        message,
        who,
        version: env
            .version
            .chars()
            .filter(char::is_ascii_graphic)
            .take(16)
            .collect(),
        tx,
    };
    let faults = &work.state.config.faults;
    if faults.stall_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.stall_ms)).await;
    }
    if faults.fail {
        work.tasks
            .note(
                &work.who,
                Outcome::Refused,
                None,
                "injected failure (faults.fail)".into(),
            )
            .await;
        let _ = work.tx.send(Out::Event(Box::new(Err(A2AError::internal(
            "injected failure",
        )))));
        return;
    }
    submit(&work, ctx.metadata.as_ref()).await;
}

/// The key, then the input, then the work.
async fn submit(work: &Work, request_metadata: Option<&Metadata>) {
    let task_id = &work.task_id;
    let key = work.message.message_id.clone();
    let mut metadata = Metadata::new();
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return work
            .reject(
                format!(
                    "the message needs a messageId of 1 to {MAX_KEY_LEN} characters: it is this \
                     task's idempotency key"
                ),
                "bad_message_id",
                metadata,
            )
            .await;
    }
    metadata.insert(IDEMPOTENCY_KEY.into(), Value::String(key.clone()));
    // Keys are per caller: the caller is stamped beside the key, so a
    // caller looking for its key's task cannot take another's.
    metadata.insert(CALLER_KEY.into(), Value::String(work.who.caller.clone()));
    let input = match wire::parse_call(&work.message) {
        Ok((_, input)) => input,
        Err(e) => return work.reject(e.to_string(), "no_capability", metadata).await,
    };
    let claim = work
        .tasks
        .keys
        .claim(&work.who.caller, &key, task_id, &input_digest(&input))
        .await;
    match claim {
        Err(e) => {
            tracing::error!(error = %e, "task keys");
            work.tasks
                .note(
                    &work.who,
                    Outcome::Refused,
                    None,
                    format!("task {task_id} not accepted: internal error (task keys)"),
                )
                .await;
            let _ = work.tx.send(Out::Event(Box::new(Err(A2AError::internal(
                "the peer failed to record the task; see its log",
            )))));
            return;
        }
        Ok(Claim::Existing {
            task_id: first,
            same_input: false,
        }) => {
            // The key stays the first task's: this one does not carry it,
            // so a caller looking a key up finds exactly one task.
            return work
                .reject(
                    format!(
                        "messageId {key:?} was first used with a different input (task {first}); \
                         a retry repeats the same input, a new question needs a new messageId"
                    ),
                    "key_reused",
                    Metadata::new(),
                )
                .await;
        }
        Ok(Claim::Existing {
            task_id: first,
            same_input: true,
        }) => return duplicate(work, &first).await,
        Ok(Claim::New) => {}
    }

    let Some(skill) = work.state.config.skill(&work.who.capability) else {
        return;
    };
    let requested = work
        .message
        .metadata
        .as_ref()
        .and_then(|m| m.get(DEADLINE_METADATA))
        .or_else(|| request_metadata.and_then(|m| m.get(DEADLINE_METADATA)));
    let deadline = match triage::deadline(requested, chrono::Utc::now(), skill.max_deadline_ms()) {
        Ok(d) => d,
        Err(e) => return work.reject(e.to_string(), "bad_deadline", metadata).await,
    };
    metadata.insert(DEADLINE_KEY.into(), Value::String(deadline.to_rfc3339()));
    // Criteria ask for the requester's acceptance before the task
    // completes ([`super::acceptance`]); the task keeps them.
    let criteria = match Criteria::from_metadata(work.message.metadata.as_ref()) {
        Ok(c) => c,
        Err(e) => return work.reject(e.to_string(), "bad_criteria", metadata).await,
    };
    if let Some(c) = &criteria {
        metadata.insert(acceptance::CRITERIA_KEY.into(), c.to_value());
    }
    let input = match triage::parse_input(&input) {
        Ok(i) => i,
        Err(SkillError::InvalidParams { message, code }) => {
            return work.reject(message, code, metadata).await
        }
        Err(SkillError::Internal(detail)) => {
            tracing::error!(%detail, "triage input");
            return work
                .reject(
                    "the peer failed to read the input".into(),
                    "internal",
                    metadata,
                )
                .await;
        }
    };
    let work_time = Duration::from_millis(input.work_ms.unwrap_or(skill.work_ms()));
    let plan = Plan {
        deadline,
        work_time,
        ticket_id: input.ticket_id,
        criteria,
    };
    accept(work, plan, metadata).await;
}

/// A second submission under a key: the first task's current snapshot,
/// never a second execution.
async fn duplicate(work: &Work, first: &str) {
    let mut own = Metadata::new();
    own.insert(DUPLICATE_OF_KEY.into(), Value::String(first.to_string()));
    match work.tasks.store.get(first).await {
        Ok(Some(existing)) => {
            work.tasks
                .note(
                    &work.who,
                    Outcome::Replayed,
                    None,
                    format!(
                        "task {first} duplicate submission, not executed again (answered for \
                         task {})",
                        work.task_id
                    ),
                )
                .await;
            // The second submission's own task is not left `submitted`
            // forever: it says which task answered it.
            let mine = work.task(
                TaskState::Rejected,
                Some(format!(
                    "duplicate submission of messageId {:?}: answered with task {first}, not \
                     executed again",
                    work.message.message_id
                )),
                own,
            );
            if let Err(e) = work.tasks.store.update(mine).await {
                tracing::warn!(error = %e, task = %work.task_id, "could not mark a duplicate's task");
            }
            work.send(StreamResponse::Task(existing));
        }
        Ok(None) => {
            work.tasks
                .note(
                    &work.who,
                    Outcome::Replayed,
                    None,
                    format!(
                        "task {first} duplicate submission, not executed again; task {first} is \
                         no longer held (restart or eviction), task {} failed",
                        work.task_id
                    ),
                )
                .await;
            work.send(StreamResponse::Task(work.task(
                TaskState::Failed,
                Some(format!(
                    "messageId {:?} submitted task {first}, which this peer no longer holds (it \
                     restarted or evicted it); not executed again: send a new messageId to run \
                     it again",
                    work.message.message_id
                )),
                own,
            )));
        }
        Err(e) => {
            tracing::error!(error = %e, "task store");
            let _ = work.tx.send(Out::Event(Box::new(Err(A2AError::internal(
                "the peer failed to read its tasks; see its log",
            )))));
        }
    }
}

/// What an accepted task's work is to do.
struct Plan {
    deadline: Deadline,
    work_time: Duration,
    ticket_id: String,
    /// The requester's acceptance criteria, when the result must wait for
    /// its decision.
    criteria: Option<Criteria>,
}

/// Accepts the task and runs its work to an end.
async fn accept(work: &Work, plan: Plan, metadata: Metadata) {
    let Plan {
        deadline,
        work_time,
        ticket_id,
        criteria,
    } = plan;
    let ticket_id = ticket_id.as_str();
    let task_id = &work.task_id;
    let until_deadline = |d: &Deadline| (d.at - chrono::Utc::now()).to_std().unwrap_or_default();
    let (stop, mut stopped) = watch::channel(Stop::Run);
    let run = Arc::new(Running {
        life: tokio::sync::Mutex::new(Life::Working),
        stop,
        submitter: work.who.clone(),
        started: Instant::now(),
        life_span: until_deadline(&deadline),
    });
    work.tasks.register(task_id, run.clone());
    work.tasks
        .note(
            &work.who,
            Outcome::Connected,
            None,
            format!(
                "task {task_id} accepted; deadline {}{}; work {} ms; a2a-version {}",
                deadline.to_rfc3339(),
                if deadline.capped { " (capped)" } else { "" },
                work_time.as_millis(),
                work.version
            ),
        )
        .await;
    let submitted = work.task(TaskState::Submitted, None, metadata);
    let stall = work.state.config.faults.accept_stall_ms;
    if stall > 0 {
        // Findable by key while the answer is held back.
        if let Err(e) = work.tasks.store.update(submitted.clone()).await {
            tracing::warn!(error = %e, task = %task_id, "could not store the accepted task early");
        }
        let _ = work.tx.send(Out::Hold(Duration::from_millis(stall)));
    }
    work.send(StreamResponse::Task(submitted));

    if until_deadline(&deadline).is_zero() {
        return end(
            work,
            &run,
            TaskState::Failed,
            Some(ReasonCode::Timeout),
            "deadline passed before the work started".into(),
            "failed: deadline passed before the work started",
            None,
        )
        .await;
    }
    if *stopped.borrow() != Stop::Run {
        return stopped_early(work, &run).await;
    }
    work.tasks
        .note(
            &work.who,
            Outcome::Executed,
            None,
            format!("task {task_id} executed"),
        )
        .await;
    work.send(work.status(TaskState::Working, format!("triaging {ticket_id}")));
    let ticket = match triage::find_ticket(&work.state.pool, ticket_id).await {
        Ok(Some(t)) => t,
        Ok(None) => {
            return end(
                work,
                &run,
                TaskState::Failed,
                None,
                format!("unknown ticket {ticket_id}: this helpdesk holds no such ticket"),
                "failed: unknown ticket",
                None,
            )
            .await
        }
        Err(e) => {
            tracing::error!(error = %e, "reading the tickets");
            return end(
                work,
                &run,
                TaskState::Failed,
                Some(ReasonCode::PeerError),
                "the peer failed to read its tickets; see its log".into(),
                "failed: internal error",
                None,
            )
            .await;
        }
    };
    tokio::select! {
        biased;
        // (The watch's read guard is dropped before anything else locks.)
        () = async { let _ = stopped.wait_for(|s| *s != Stop::Run).await; } => {
            stopped_early(work, &run).await
        }
        () = tokio::time::sleep(until_deadline(&deadline)) => {
            end(
                work,
                &run,
                TaskState::Failed,
                Some(ReasonCode::Timeout),
                format!(
                    "deadline passed: the work needed {} ms and the deadline {} came first",
                    work_time.as_millis(),
                    deadline.to_rfc3339()
                ),
                "failed: deadline passed",
                None,
            )
            .await
        }
        () = tokio::time::sleep(work_time) => {
            let mut out = triage::triage(&ticket);
            if work.state.config.faults.break_schema {
                out.result = json!({"unexpected": true});
                out.text = "this answer breaks the contract on purpose (faults.break_schema)".into();
            }
            match &criteria {
                None => {
                    end(work, &run, TaskState::Completed, None, out.text, "completed", Some(out.result))
                        .await
                }
                Some(criteria) => park_first(work, &run, criteria, out.result, &out.text).await,
            }
        }
    }
}

/// The work stopped before it ended: a cancel (whose line is written) or
/// an answer stream nobody reads any more.
async fn stopped_early(work: &Work, run: &Running) {
    let mut life = run.life.lock().await;
    if *life == Life::Working {
        *life = Life::Abandoned;
        drop(life);
        work.tasks
            .note(
                &work.who,
                Outcome::NotConnected,
                Some(ReasonCode::PeerError),
                format!(
                    "task {} failed: its answer stream closed before the work ended",
                    work.task_id
                ),
            )
            .await;
    }
}

/// Ends the work in `state` unless a cancel won: the trail line
/// (`task <id> <trail>`), then the result artifact (if any) and the final
/// status with `text`.
async fn end(
    work: &Work,
    run: &Running,
    state: TaskState,
    reason: Option<ReasonCode>,
    text: String,
    trail: &str,
    result: Option<Value>,
) {
    {
        let mut life = run.life.lock().await;
        if *life != Life::Working {
            return;
        }
        *life = Life::Ending;
    }
    let outcome = if state == TaskState::Completed {
        Outcome::Connected
    } else {
        Outcome::NotConnected
    };
    work.tasks
        .note(
            &work.who,
            outcome,
            reason,
            format!("task {} {trail}", work.task_id),
        )
        .await;
    if let Some(result) = result {
        work.send(StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: work.task_id.clone(),
            context_id: work.context_id.clone(),
            artifact: Artifact {
                artifact_id: a2a::new_artifact_id(),
                name: Some(RESULT_ARTIFACT.into()),
                description: None,
                parts: vec![Part::data(result)],
                metadata: None,
                extensions: None,
            },
            append: None,
            last_chunk: Some(true),
            metadata: None,
        }));
    }
    work.send(work.status(state, text));
}

/// The work's first result, parked for the requester's acceptance
/// instead of completing the task, unless a cancel won.
async fn park_first(work: &Work, run: &Running, criteria: &Criteria, result: Value, text: &str) {
    {
        let mut life = run.life.lock().await;
        if *life != Life::Working {
            return;
        }
        *life = Life::Ending;
    }
    let at = Parking {
        tasks: &work.tasks,
        task_id: &work.task_id,
        context_id: &work.context_id,
        who: &work.who,
        criteria,
    };
    park(&at, 1, result, text, &|e| work.send(e)).await;
}

/// The cancel stream of any task: its canceled status. A task skill's work
/// was stopped already by [`PeerTaskStore::begin_cancel`](super::PeerTaskStore::begin_cancel) (the handler
/// calls it first), so its status says so; a message-answered call's
/// bookkeeping task has nothing to stop.
pub fn cancel_stream(ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
    let ours = ctx
        .stored_task
        .as_ref()
        .and_then(|t| t.metadata.as_ref())
        .is_some_and(|m| m.contains_key(IDEMPOTENCY_KEY));
    let message = ours.then(|| {
        status_message(
            &ctx.task_id,
            &ctx.context_id,
            "canceled at the caller's request; the work was stopped".into(),
        )
    });
    let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        status: TaskStatus {
            state: TaskState::Canceled,
            message,
            timestamp: None,
        },
        metadata: None,
    });
    Box::pin(futures::stream::once(async move { Ok(event) }))
}
