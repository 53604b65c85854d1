//! The hub's record of every task it forwarded (DESIGN.md §2 "task", §6):
//! state changes are recorded by the server, not claimed by a model.
//!
//! One row per submission of a `task` capability, keyed by the caller's
//! idempotency key (its `X-Request-Id`, which is the A2A `messageId`):
//! caller, provider, capability, the provider's task id once it is known,
//! the state, the deadline and the timings. "Unfinished tasks" is a query
//! ([`TaskRecords::unfinished`]), and the rows live in the hub's store, so
//! a restart loses none and every replica sees the same rows.
//!
//! The key is what makes a retry safe. `UNIQUE (caller, idempotency_key)`
//! is enforced by the database, not by a lock in this process: of two
//! submissions with one key, exactly one [`claim`](TaskRecords::claim)
//! inserts the row and forwards; the other reads the row and follows the
//! state machine in `gateway::task_submit` (documented in NOTES.md,
//! "Tasks, metrics and traces").
//!
//! A row being forwarded names the hub process forwarding it
//! (`claimed_by`, its instance id). A process that dies mid-forward will
//! never learn the answer: its rows are `unknown` once anyone sees that it
//! is gone ([`TaskRecords::orphan`], called at start-up for every dead
//! claimer and by a retry that finds one).

use exchange::db::Store;
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

/// Why the task table could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("task record store: {0}")]
pub struct TaskRecordsError(#[from] sqlx::Error);

impl TaskRecordsError {
    /// The store is away for now: worth trying again shortly
    /// ([`exchange::db::is_unavailable`]).
    pub fn is_unavailable(&self) -> bool {
        exchange::db::is_unavailable(&self.0)
    }
}

/// Where a submission stands, as the hub knows it. The first two are the
/// hub's own; the rest are the provider's A2A task states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordState {
    /// A hub process is forwarding it now; nobody knows yet whether the
    /// provider accepted it.
    Submitting,
    /// The forward ended without an answer that says (a timeout, a dropped
    /// connection, a hub that stopped midway): the provider may or may
    /// not hold a task. The next retry asks before it resubmits.
    Unknown,
    /// The provider's task states.
    Submitted,
    Working,
    InputRequired,
    AuthRequired,
    Completed,
    Failed,
    Canceled,
    Rejected,
}

impl RecordState {
    /// Every state, in lifecycle order.
    pub const ALL: [RecordState; 10] = [
        RecordState::Submitting,
        RecordState::Unknown,
        RecordState::Submitted,
        RecordState::Working,
        RecordState::InputRequired,
        RecordState::AuthRequired,
        RecordState::Completed,
        RecordState::Failed,
        RecordState::Canceled,
        RecordState::Rejected,
    ];

    /// The stored (and metric label) name.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordState::Submitting => "submitting",
            RecordState::Unknown => "unknown",
            RecordState::Submitted => "submitted",
            RecordState::Working => "working",
            RecordState::InputRequired => "input_required",
            RecordState::AuthRequired => "auth_required",
            RecordState::Completed => "completed",
            RecordState::Failed => "failed",
            RecordState::Canceled => "canceled",
            RecordState::Rejected => "rejected",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// A final state: nothing will change it any more.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            RecordState::Completed
                | RecordState::Failed
                | RecordState::Canceled
                | RecordState::Rejected
        )
    }

    /// The state of an A2A task status.
    pub fn of_task(state: &a2a::TaskState) -> Self {
        use a2a::TaskState as S;
        match state {
            S::Submitted => RecordState::Submitted,
            S::Working => RecordState::Working,
            S::InputRequired => RecordState::InputRequired,
            S::AuthRequired => RecordState::AuthRequired,
            S::Completed => RecordState::Completed,
            S::Failed => RecordState::Failed,
            S::Canceled => RecordState::Canceled,
            S::Rejected => RecordState::Rejected,
            // An unspecified state says nothing new.
            _ => RecordState::Unknown,
        }
    }
}

/// One submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRecord {
    pub caller: String,
    pub idempotency_key: String,
    pub provider: String,
    pub capability: String,
    /// Digest of the input it was submitted with
    /// ([`input_digest`](crate::store::idempotency::input_digest)).
    pub input_digest: String,
    /// The provider's task id, once an answer named it.
    pub task_id: Option<String>,
    pub state: RecordState,
    /// The deadline the task runs under (RFC 3339).
    pub deadline: String,
    pub created_at: String,
    pub updated_at: String,
    /// When it reached a final state.
    pub finished_at: Option<String>,
    /// How many times a submission with this key came in after the first.
    pub retries: u32,
    /// The hub process forwarding it while `submitting` (its instance id).
    pub claimed_by: Option<String>,
}

/// What a [`claim`](TaskRecords::claim) found.
#[derive(Debug, Clone, PartialEq)]
// Returned once per submission and matched at once, never stored: the
// row is not worth a box.
#[allow(clippy::large_enum_variant)]
pub enum Claim {
    /// This submission inserted the row: it forwards.
    New,
    /// The key was used before: the row as it stands (its retry counted).
    Existing(TaskRecord),
}

/// The submission to claim a key for.
#[derive(Debug, Clone)]
pub struct Submission<'a> {
    pub caller: &'a str,
    pub idempotency_key: &'a str,
    pub provider: &'a str,
    pub capability: &'a str,
    pub input_digest: &'a str,
    pub deadline: &'a str,
}

/// The task table, inside the hub's database.
#[derive(Debug, Clone)]
pub struct TaskRecords {
    store: Store,
    /// This hub process's instance id: the claimer of what it forwards.
    me: String,
}

const COLUMNS: &str = "caller, idempotency_key, provider, capability, input_digest, task_id, \
                       state, deadline, created_at, updated_at, finished_at, retries, claimed_by";

impl TaskRecords {
    /// The table in the hub's (migrated) database, for the hub process
    /// `me` (its instance id).
    pub fn new(store: Store, me: impl Into<String>) -> Self {
        Self {
            store,
            me: me.into(),
        }
    }

    /// The processes named by rows still `submitting` (`None`: a row from
    /// before claimers were recorded).
    pub async fn submitters(&self) -> Result<Vec<Option<String>>, TaskRecordsError> {
        Ok(
            sqlx::query_scalar("SELECT DISTINCT claimed_by FROM tasks WHERE state = 'submitting'")
                .fetch_all(self.store.pool())
                .await?,
        )
    }

    /// Every row `dead` (a process that is gone) was forwarding is
    /// `unknown` now: nobody will learn its answer. Returns how many.
    pub async fn orphan(&self, dead: Option<&str>) -> Result<u64, TaskRecordsError> {
        let done = match dead {
            Some(d) => sqlx::query(
                "UPDATE tasks SET state = 'unknown', updated_at = $1
                 WHERE state = 'submitting' AND claimed_by = $2",
            )
            .bind(exchange::audit::now())
            .bind(d),
            None => sqlx::query(
                "UPDATE tasks SET state = 'unknown', updated_at = $1
                 WHERE state = 'submitting' AND claimed_by IS NULL",
            )
            .bind(exchange::audit::now()),
        };
        Ok(done.execute(self.store.pool()).await?.rows_affected())
    }

    /// Claims the key for a submission: inserts the row (`submitting`) if
    /// the key is new — the database's unique constraint decides between
    /// two concurrent claims — or counts a retry and returns the row.
    pub async fn claim(&self, s: &Submission<'_>) -> Result<Claim, TaskRecordsError> {
        let now = exchange::audit::now();
        let inserted = sqlx::query(
            "INSERT INTO tasks (caller, idempotency_key, provider, capability, input_digest,
                                state, deadline, created_at, updated_at, claimed_by)
             VALUES ($1, $2, $3, $4, $5, 'submitting', $6, $7, $7, $8)
             ON CONFLICT (caller, idempotency_key) DO NOTHING",
        )
        .bind(s.caller)
        .bind(s.idempotency_key)
        .bind(s.provider)
        .bind(s.capability)
        .bind(s.input_digest)
        .bind(s.deadline)
        .bind(&now)
        .bind(&self.me)
        .execute(self.store.pool())
        .await?
        .rows_affected();
        if inserted == 1 {
            return Ok(Claim::New);
        }
        sqlx::query(
            "UPDATE tasks SET retries = retries + 1 WHERE caller = $1 AND idempotency_key = $2",
        )
        .bind(s.caller)
        .bind(s.idempotency_key)
        .execute(self.store.pool())
        .await?;
        match self.get(s.caller, s.idempotency_key).await? {
            Some(row) => Ok(Claim::Existing(row)),
            // Deleted between the two statements (its forward was refused
            // and freed the key): claim again.
            None => Box::pin(self.claim(s)).await,
        }
    }

    /// The row of a key.
    pub async fn get(
        &self,
        caller: &str,
        key: &str,
    ) -> Result<Option<TaskRecord>, TaskRecordsError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM tasks WHERE caller = $1 AND idempotency_key = $2"
        ))
        .bind(caller)
        .bind(key)
        .fetch_optional(self.store.pool())
        .await?;
        row.map(|r| read_row(&r)).transpose()
    }

    /// Moves an `unknown` row back to `submitting`, if it still is
    /// `unknown`: true for the one caller that wins (it resubmits).
    pub async fn retake(&self, caller: &str, key: &str) -> Result<bool, TaskRecordsError> {
        let n = sqlx::query(
            "UPDATE tasks SET state = 'submitting', updated_at = $1, claimed_by = $2
             WHERE caller = $3 AND idempotency_key = $4 AND state = 'unknown'",
        )
        .bind(exchange::audit::now())
        .bind(&self.me)
        .bind(caller)
        .bind(key)
        .execute(self.store.pool())
        .await?
        .rows_affected();
        Ok(n == 1)
    }

    /// Records what the provider said about the key's task: its id and
    /// state. A final state is kept (a late answer cannot revive a task).
    pub async fn accepted(
        &self,
        caller: &str,
        key: &str,
        task_id: &str,
        state: RecordState,
    ) -> Result<(), TaskRecordsError> {
        let now = exchange::audit::now();
        let finished = state.is_final().then(|| now.clone());
        sqlx::query(
            "UPDATE tasks SET task_id = $1, state = $2, updated_at = $3,
                    finished_at = COALESCE(finished_at, $4)
             WHERE caller = $5 AND idempotency_key = $6
               AND state NOT IN ('completed', 'failed', 'canceled', 'rejected')",
        )
        .bind(task_id)
        .bind(state.as_str())
        .bind(&now)
        .bind(finished)
        .bind(caller)
        .bind(key)
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// The provider answered the key's submission with a message, not a
    /// task: it is done (`completed`, no task id) and is never resubmitted.
    pub async fn answered(&self, caller: &str, key: &str) -> Result<(), TaskRecordsError> {
        self.settle(caller, key, RecordState::Completed).await
    }

    /// The forward of the key ended without saying whether the provider
    /// holds a task.
    pub async fn unknown(&self, caller: &str, key: &str) -> Result<(), TaskRecordsError> {
        self.settle(caller, key, RecordState::Unknown).await
    }

    /// A submission this process was forwarding (`submitting`) ends in
    /// `state`, with no task id.
    async fn settle(
        &self,
        caller: &str,
        key: &str,
        state: RecordState,
    ) -> Result<(), TaskRecordsError> {
        let now = exchange::audit::now();
        let finished = state.is_final().then(|| now.clone());
        sqlx::query(
            "UPDATE tasks SET state = $1, updated_at = $2, finished_at = $3
             WHERE caller = $4 AND idempotency_key = $5 AND state = 'submitting'
               AND claimed_by = $6",
        )
        .bind(state.as_str())
        .bind(&now)
        .bind(finished)
        .bind(caller)
        .bind(key)
        .bind(&self.me)
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// The provider certainly holds no task for the key (it refused the
    /// submission): the key is free again.
    pub async fn release(&self, caller: &str, key: &str) -> Result<(), TaskRecordsError> {
        sqlx::query(
            "DELETE FROM tasks WHERE caller = $1 AND idempotency_key = $2 AND task_id IS NULL",
        )
        .bind(caller)
        .bind(key)
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// Records a task's state as a task operation's answer reported it.
    pub async fn observe(
        &self,
        provider: &str,
        task_id: &str,
        state: RecordState,
    ) -> Result<(), TaskRecordsError> {
        let now = exchange::audit::now();
        let finished = state.is_final().then(|| now.clone());
        sqlx::query(
            "UPDATE tasks SET state = $1, updated_at = $2, finished_at = COALESCE(finished_at, $3)
             WHERE provider = $4 AND task_id = $5
               AND state NOT IN ('completed', 'failed', 'canceled', 'rejected')",
        )
        .bind(state.as_str())
        .bind(&now)
        .bind(finished)
        .bind(provider)
        .bind(task_id)
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// The capability a provider's task was submitted for.
    pub async fn capability_of(
        &self,
        provider: &str,
        task_id: &str,
    ) -> Result<Option<(String, String)>, TaskRecordsError> {
        let row = sqlx::query(
            "SELECT caller, capability FROM tasks WHERE provider = $1 AND task_id = $2 LIMIT 1",
        )
        .bind(provider)
        .bind(task_id)
        .fetch_optional(self.store.pool())
        .await?;
        row.map(|r| Ok((r.try_get("caller")?, r.try_get("capability")?)))
            .transpose()
    }

    /// Every row not in a final state, oldest first.
    pub async fn unfinished(&self) -> Result<Vec<TaskRecord>, TaskRecordsError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM tasks
             WHERE state NOT IN ('completed', 'failed', 'canceled', 'rejected')
             ORDER BY created_at"
        ))
        .fetch_all(self.store.pool())
        .await?;
        rows.iter().map(read_row).collect()
    }

    /// How many rows per (caller, provider, capability, state): what
    /// `/metrics` and the drawers count.
    pub async fn counts(
        &self,
    ) -> Result<Vec<(String, String, String, RecordState, u64)>, TaskRecordsError> {
        let rows = sqlx::query(
            "SELECT caller, provider, capability, state, COUNT(*) AS n FROM tasks
             GROUP BY caller, provider, capability, state",
        )
        .fetch_all(self.store.pool())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let state: String = r.try_get("state")?;
            let n: i64 = r.try_get("n")?;
            if let Some(state) = RecordState::parse(&state) {
                out.push((
                    r.try_get("caller")?,
                    r.try_get("provider")?,
                    r.try_get("capability")?,
                    state,
                    u64::try_from(n).unwrap_or(0),
                ));
            }
        }
        Ok(out)
    }
}

fn read_row(r: &AnyRow) -> Result<TaskRecord, TaskRecordsError> {
    let state: String = r.try_get("state")?;
    let retries: i64 = r.try_get("retries")?;
    Ok(TaskRecord {
        caller: r.try_get("caller")?,
        idempotency_key: r.try_get("idempotency_key")?,
        provider: r.try_get("provider")?,
        capability: r.try_get("capability")?,
        input_digest: r.try_get("input_digest")?,
        task_id: r.try_get("task_id")?,
        // A state this build does not know is treated as not knowing.
        state: RecordState::parse(&state).unwrap_or(RecordState::Unknown),
        deadline: r.try_get("deadline")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
        finished_at: r.try_get("finished_at")?,
        retries: u32::try_from(retries).unwrap_or(u32::MAX),
        claimed_by: r.try_get("claimed_by")?,
    })
}

#[cfg(test)]
#[path = "task_records_tests.rs"]
mod tests;
