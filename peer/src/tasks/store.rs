//! The task bookkeeping of a peer ([`Tasks`]), which the executor and its
//! handler's task store share: the bounded store of A2A tasks, the work
//! that runs now and where it stands (`Life`), the idempotency keys and
//! the peer's trail.
//!
//! It also decides the one outcome of a task: [`PeerTaskStore`] wraps the
//! task store and decides `begin_cancel` against the work's own state,
//! under the lock the work ends under ([`super::lifecycle`]), so a cancel
//! and a finishing task never both win.

use super::bounded::BoundedTaskStore;
use super::keys::TaskKeys;
use a2a::{A2AError, ListTasksRequest, ListTasksResponse, Task};
use a2a_server::task_store::TaskVersion;
use a2a_server::TaskStore;
use async_trait::async_trait;
use exchange::audit::{AuditRecord, AuditTrail, Outcome, Role};
use exchange::reason::ReasonCode;
use exchange::telemetry;
use sqlx::SqlitePool;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How long a finished task's bookkeeping outlives its work, at most: the
/// answer stream normally drops it as soon as the end is stored.
const ENDED_GRACE: Duration = Duration::from_secs(60);

/// What the executor and its task store share.
pub struct Tasks {
    pub(super) store: BoundedTaskStore,
    running: std::sync::Mutex<HashMap<String, Arc<Running>>>,
    pub(super) keys: TaskKeys,
    /// The results that wait for the requester's decision.
    pub(super) waiting: Waiting,
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
            waiting: Default::default(),
            trail,
            system,
        }
    }

    pub(super) fn running(&self, task_id: &str) -> Option<Arc<Running>> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(task_id)
            .cloned()
    }

    pub(super) fn register(&self, task_id: &str, run: Arc<Running>) {
        let mut map = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        // Entries leave when their answer stream is dropped; this only
        // bounds what a stream that is never dropped could leave behind.
        map.retain(|_, r| r.started.elapsed() < ENDED_GRACE + r.life_span);
        map.insert(task_id.to_string(), run);
    }

    pub(super) fn deregister(&self, task_id: &str) -> Option<Arc<Running>> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(task_id)
    }

    /// Appends one line about a task to the peer's trail; a trail that
    /// cannot be written is logged, never a reason to fail the task.
    pub(super) async fn note(
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

/// The results that wait for a decision: task id → the attempt parked.
#[derive(Default)]
pub struct Waiting(tokio::sync::Mutex<HashMap<String, u32>>);

impl Waiting {
    /// Takes `task_id`'s wait if `attempt` is the one parked: true for
    /// exactly one taker.
    pub(super) async fn take(&self, task_id: &str, attempt: u32) -> bool {
        let mut map = self.0.lock().await;
        if map.get(task_id) == Some(&attempt) {
            map.remove(task_id);
            true
        } else {
            false
        }
    }

    pub(super) async fn put(&self, task_id: &str, attempt: u32) {
        self.0.lock().await.insert(task_id.to_string(), attempt);
    }
}

/// Who submitted a task, as its trail lines name them.
#[derive(Debug, Clone)]
pub(super) struct Submitter {
    pub(super) caller: String,
    pub(super) capability: String,
    pub(super) request_id: String,
    pub(super) trace_id: String,
    pub(super) started: Instant,
}

/// A task whose work runs.
pub(super) struct Running {
    pub(super) life: tokio::sync::Mutex<Life>,
    pub(super) stop: watch::Sender<Stop>,
    pub(super) submitter: Submitter,
    pub(super) started: Instant,
    /// From acceptance to the deadline: how long the work may run.
    pub(super) life_span: Duration,
}

/// Where a running task's work stands; changed under its lock only, so a
/// cancel and the work's end cannot both happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Life {
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
pub(super) enum Stop {
    /// Carry on.
    Run,
    /// Canceled: stop, the trail has the line already.
    Cancel,
    /// Nobody reads the events any more: stop and say so.
    Abandon,
}

#[cfg(test)]
mod waiting_tests {
    use super::Waiting;

    #[tokio::test]
    async fn a_wait_is_taken_once_and_only_for_its_attempt() {
        let w = Waiting::default();
        w.put("t", 2).await;
        assert!(!w.take("t", 1).await, "an older attempt");
        assert!(w.take("t", 2).await);
        assert!(!w.take("t", 2).await, "taken already");
        assert!(!w.take("u", 1).await, "never parked");
    }
}
