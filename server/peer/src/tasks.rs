//! Task skills as real A2A tasks (DESIGN.md §2 "task", §6 "task
//! lifecycle"; seed `004`, the task contract): what the executor runs when
//! a call names a `task` skill (`ticket.triage`).
//!
//! The handler (`a2a-server`'s `DefaultRequestHandler`) creates the task,
//! honours `configuration.returnImmediately`, keeps the task for `GetTask`
//! and `ListTasks` and routes `CancelTask` to the executor. This module
//! decides everything else:
//!
//! * **Lifecycle.** The execute stream yields the Task `submitted`, a
//!   status update `working`, and when the work is done an artifact update
//!   (artifact `result`, one data part: the result) and the status
//!   `completed`. `failed`: an unknown ticket, or the deadline passed
//!   before the work finished (the status message says "deadline passed").
//!   `rejected`: the input, the deadline or the messageId is not valid (the
//!   status message names what). `canceled`: `CancelTask` stopped the work.
//!   A blocking `SendMessage` gets the final task; with `returnImmediately`
//!   the submitted one.
//! * **Task metadata**: `{"idempotencyKey": <messageId>, "caller":
//!   <X-Caller-System>, "deadline": <RFC 3339 UTC>}`, so a caller finds
//!   its task by key with `ListTasks` (keys are per caller).
//! * **Deadline**: the message's metadata `deadline` (the request's
//!   metadata as a fallback), capped at submission + the skill's
//!   `max_deadline_ms`; absent, the cap ([`triage::deadline`]).
//! * **Idempotency at the provider.** The message's `messageId` is the key,
//!   per caller (`X-Caller-System`), in the `task_keys` table of the peer's
//!   own SQLite file, `UNIQUE(caller, message_id)`, bound to the input's
//!   digest. A second submission with the key answers the first task's
//!   current snapshot from the task store (a terminal one ends the stream)
//!   and never runs the work again; the second submission's own task is
//!   marked rejected with metadata `duplicateOf`. The same key with another
//!   input is rejected. A key whose task the store no longer holds (the
//!   peer restarted) fails the new task and runs nothing.
//! * **Trail** (the peer's own, one line each, payload-free): `task <id>
//!   accepted` (outcome connected), `task <id> duplicate submission, not
//!   executed again` (replayed), `task <id> executed` (executed: exactly
//!   one per execution, when the work starts), and at the end `task <id>
//!   completed` (connected), `failed` (not_connected), `canceled`
//!   (not_connected) or `rejected` (refused).
//! * **One outcome.** A cancel and a finishing task race for the same task.
//!   [`PeerTaskStore`] wraps the task store and decides `begin_cancel`
//!   against the work's own state, so exactly one wins: a cancel after the
//!   work has decided its end is `TaskNotCancelable`, and work that was
//!   canceled never reports an end.
//! * **Fault `accept_stall_ms`**: the task is accepted (in the store with
//!   its metadata, findable by key) and its work starts, but the
//!   `SendMessage` answer is held back that long.

use crate::config::SkillKind;
use crate::executor::{caller_of, envelope_headers};
use crate::skills::triage::{self, Deadline};
use crate::skills::SkillError;
use crate::task_store::BoundedTaskStore;
use crate::PeerState;
use a2a::{
    A2AError, Artifact, ListTasksRequest, ListTasksResponse, Message, Part, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use a2a_server::task_store::TaskVersion;
use a2a_server::{ExecutorContext, TaskStore};
use async_trait::async_trait;
use exchange::audit::{AuditRecord, AuditTrail, Outcome, Role};
use exchange::envelope::Envelope;
use exchange::reason::ReasonCode;
use exchange::telemetry;
use exchange::wire;
use futures::stream::BoxStream;
use serde_json::{json, Value};
use sqlx::SqlitePool;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tracing::Instrument;

/// Task metadata key: the messageId the task was submitted under.
pub const IDEMPOTENCY_KEY: &str = "idempotencyKey";
/// Task metadata key: the caller (`X-Caller-System`) the key belongs to.
pub const CALLER_KEY: &str = "caller";
/// Task metadata key: when the task fails if unfinished (RFC 3339 UTC).
pub const DEADLINE_KEY: &str = "deadline";
/// Task metadata key of a duplicate submission's own (rejected) task: the
/// task that answered it.
pub const DUPLICATE_OF_KEY: &str = "duplicateOf";
/// Message (or request) metadata key a caller sets its deadline with.
pub const DEADLINE_METADATA: &str = "deadline";
/// The name of a task's result artifact.
pub const RESULT_ARTIFACT: &str = "result";
/// The longest messageId kept as a key.
const MAX_KEY_LEN: usize = 256;
/// How long a finished task's bookkeeping outlives its work, at most: the
/// answer stream normally drops it as soon as the end is stored.
const ENDED_GRACE: Duration = Duration::from_secs(60);

/// What the executor and its task store share.
pub struct Tasks {
    store: BoundedTaskStore,
    running: std::sync::Mutex<HashMap<String, Arc<Running>>>,
    keys: TaskKeys,
    trail: AuditTrail,
    system: String,
}

impl Tasks {
    /// The task bookkeeping of a peer: its own task store, keys in `pool`,
    /// lines in `trail`.
    pub fn new(pool: SqlitePool, trail: AuditTrail, system: String) -> Self {
        Self {
            store: BoundedTaskStore::default(),
            running: std::sync::Mutex::new(HashMap::new()),
            keys: TaskKeys::new(pool),
            trail,
            system,
        }
    }

    fn running(&self, task_id: &str) -> Option<Arc<Running>> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(task_id)
            .cloned()
    }

    fn register(&self, task_id: &str, run: Arc<Running>) {
        let mut map = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        // Entries leave when their answer stream is dropped; this only
        // bounds what a stream that is never dropped could leave behind.
        map.retain(|_, r| r.started.elapsed() < ENDED_GRACE + r.life_span);
        map.insert(task_id.to_string(), run);
    }

    fn deregister(&self, task_id: &str) -> Option<Arc<Running>> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(task_id)
    }

    /// Appends one line about a task to the peer's trail; a trail that
    /// cannot be written is logged, never a reason to fail the task.
    async fn note(
        &self,
        who: &Submitter,
        outcome: Outcome,
        reason: Option<ReasonCode>,
        detail: String,
    ) {
        tracing::info!(
            capability = %who.capability,
            caller = %who.caller,
            request_id = %who.request_id,
            trace_id = %who.trace_id,
            outcome = outcome.as_str(),
            %detail,
            "task"
        );
        let record = AuditRecord {
            system: self.system.clone(),
            role: Role::Responder,
            at: exchange::audit::now(),
            caller: who.caller.clone(),
            provider: self.system.clone(),
            capability: who.capability.clone(),
            request_id: who.request_id.clone(),
            trace_id: who.trace_id.clone(),
            outcome,
            reason,
            duration_ms: u64::try_from(who.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            detail,
        };
        if let Err(e) = self.trail.append(record).await {
            tracing::error!(error = %e, "could not append to the audit trail");
        }
        // The work's span ends with its last line's outcome.
        telemetry::record_outcome(&tracing::Span::current(), outcome.as_str());
    }
}

/// The task store a peer's handler is built with: its tasks, plus the
/// cancel decision of the module doc.
pub struct PeerTaskStore(pub(crate) Arc<Tasks>);

#[async_trait]
impl TaskStore for PeerTaskStore {
    async fn create(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.0.store.create(task).await
    }

    async fn update(&self, task: Task) -> Result<TaskVersion, A2AError> {
        self.0.store.update(task).await
    }

    async fn get(&self, task_id: &str) -> Result<Option<Task>, A2AError> {
        self.0.store.get(task_id).await
    }

    async fn list(&self, req: &ListTasksRequest) -> Result<ListTasksResponse, A2AError> {
        self.0.store.list(req).await
    }

    /// A running task is canceled only while its work has not decided an
    /// end; the work is stopped and the trail says so before the handler
    /// answers. Any other task is the store's to decide.
    async fn begin_cancel(&self, task_id: &str) -> Result<Task, A2AError> {
        let Some(run) = self.0.running(task_id) else {
            return self.0.store.begin_cancel(task_id).await;
        };
        let mut life = run.life.lock().await;
        match *life {
            Life::Working => {
                let task = self.0.store.begin_cancel(task_id).await?;
                *life = Life::Canceled;
                run.stop.send_replace(Stop::Cancel);
                self.0
                    .note(
                        &run.submitter,
                        Outcome::NotConnected,
                        None,
                        format!("task {task_id} canceled"),
                    )
                    .await;
                Ok(task)
            }
            Life::Ending => Err(A2AError::task_not_cancelable(task_id)),
            Life::Canceled | Life::Abandoned => self.0.store.begin_cancel(task_id).await,
        }
    }
}

/// Who submitted a task, as its trail lines name them.
#[derive(Debug, Clone)]
struct Submitter {
    caller: String,
    capability: String,
    request_id: String,
    trace_id: String,
    started: Instant,
}

/// A task whose work runs.
struct Running {
    life: tokio::sync::Mutex<Life>,
    stop: watch::Sender<Stop>,
    submitter: Submitter,
    started: Instant,
    /// From acceptance to the deadline: how long the work may run.
    life_span: Duration,
}

/// Where a running task's work stands; changed under its lock only, so a
/// cancel and the work's end cannot both happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    /// Working (or about to): a cancel may stop it.
    Working,
    /// The work decided its end (completed or failed); the end's events
    /// are on their way to the store.
    Ending,
    /// A cancel won.
    Canceled,
    /// Its answer stream was dropped before the work ended.
    Abandoned,
}

/// What the work is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Carry on.
    Run,
    /// Canceled: stop, the trail has the line already.
    Cancel,
    /// Nobody reads the events any more: stop and say so.
    Abandon,
}

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
    accept(work, deadline, work_time, &input.ticket_id, metadata).await;
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

/// Accepts the task and runs its work to an end.
async fn accept(
    work: &Work,
    deadline: Deadline,
    work_time: Duration,
    ticket_id: &str,
    metadata: Metadata,
) {
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
            end(work, &run, TaskState::Completed, None, out.text, "completed", Some(out.result))
                .await
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

/// The cancel stream of any task: its canceled status. A task skill's work
/// was stopped already by [`PeerTaskStore::begin_cancel`] (the handler
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

/// An agent status message about task `task_id`.
pub fn status_message(task_id: &str, context_id: &str, text: String) -> Message {
    let mut m = Message::new(a2a::Role::Agent, vec![Part::text(text)]);
    m.task_id = Some(task_id.to_string());
    m.context_id = Some(context_id.to_string());
    m
}

/// The digest a key is bound to: SHA-256 (hex) of the input as canonical
/// JSON, as the hub binds its keys.
pub use exchange::wire::input_digest;

/// What a key was when a submission claimed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// First use: the submission's own task holds it now.
    New,
    /// Used before, by `task_id`.
    Existing {
        /// The task the key's first submission started.
        task_id: String,
        /// Whether that submission had the same input.
        same_input: bool,
    },
}

/// The provider's idempotency keys: one row per (caller, messageId), the
/// task it started and its input's digest, in the peer's own SQLite file.
/// The unique constraint decides a race between two submissions.
pub struct TaskKeys {
    pool: SqlitePool,
    ready: tokio::sync::OnceCell<()>,
}

impl TaskKeys {
    /// Keys in `pool` (the table is created on first use).
    pub fn new(pool: SqlitePool) -> Self {
        Self {
            pool,
            ready: tokio::sync::OnceCell::new(),
        }
    }

    async fn ensure_table(&self) -> Result<(), sqlx::Error> {
        self.ready
            .get_or_try_init(|| async {
                sqlx::query(
                    "CREATE TABLE IF NOT EXISTS task_keys (
                        caller TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
                        input_sha256 TEXT NOT NULL, created_at TEXT NOT NULL,
                        UNIQUE(caller, message_id))",
                )
                .execute(&self.pool)
                .await
                .map(|_| ())
            })
            .await
            .map(|_| ())
    }

    /// Claims `message_id` of `caller` for `task_id` unless it was claimed
    /// before.
    pub async fn claim(
        &self,
        caller: &str,
        message_id: &str,
        task_id: &str,
        input_sha256: &str,
    ) -> Result<Claim, sqlx::Error> {
        self.ensure_table().await?;
        sqlx::query(
            "INSERT INTO task_keys (caller, message_id, task_id, input_sha256, created_at)
             VALUES (?, ?, ?, ?, ?) ON CONFLICT(caller, message_id) DO NOTHING",
        )
        .bind(caller)
        .bind(message_id)
        .bind(task_id)
        .bind(input_sha256)
        .bind(exchange::audit::now())
        .execute(&self.pool)
        .await?;
        let (first, digest): (String, String) = sqlx::query_as(
            "SELECT task_id, input_sha256 FROM task_keys WHERE caller = ? AND message_id = ?",
        )
        .bind(caller)
        .bind(message_id)
        .fetch_one(&self.pool)
        .await?;
        Ok(if first == task_id {
            Claim::New
        } else {
            Claim::Existing {
                task_id: first,
                same_input: digest == input_sha256,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_key_is_claimed_once_per_caller() {
        let keys = TaskKeys::new(exchange::db::memory_sqlite().await.unwrap());
        let a = input_digest(&json!({"ticket_id": "T-1003"}));
        let b = input_digest(&json!({"ticket_id": "T-1004"}));
        assert_eq!(
            keys.claim("buyercorp", "m1", "t1", &a).await.unwrap(),
            Claim::New
        );
        assert_eq!(
            keys.claim("buyercorp", "m1", "t2", &a).await.unwrap(),
            Claim::Existing {
                task_id: "t1".into(),
                same_input: true
            }
        );
        assert_eq!(
            keys.claim("buyercorp", "m1", "t3", &b).await.unwrap(),
            Claim::Existing {
                task_id: "t1".into(),
                same_input: false
            }
        );
        // Another caller's key is another key.
        assert_eq!(keys.claim("hub", "m1", "t4", &a).await.unwrap(), Claim::New);
        assert_eq!(
            keys.claim("buyercorp", "m2", "t5", &a).await.unwrap(),
            Claim::New
        );
    }

    #[test]
    fn the_digest_ignores_key_order_only() {
        assert_eq!(
            input_digest(&json!({"a": 1, "b": {"c": [1, 2], "d": null}})),
            input_digest(&json!({"b": {"d": null, "c": [1, 2]}, "a": 1}))
        );
        assert_ne!(
            input_digest(&json!({"b": {"c": [2, 1]}})),
            input_digest(&json!({"b": {"c": [1, 2]}}))
        );
        assert_eq!(input_digest(&json!({})).len(), 64);
    }
}
