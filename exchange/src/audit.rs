//! Append-only audit trails.
//!
//! The hub and every peer keep their own trail in their own store. A
//! record names who called which capability of whom, with the request id,
//! the trace id, the outcome and timings. It never holds a token or any of
//! the payload: the trail must be safe to read by anyone who may read logs.
//! The trace id joins the separate trails into one interaction
//! ([`rebuild`]).
//!
//! **Group commit** (the hub's hot path). Every call writes a
//! record, so the trail is on every call's path. [`AuditTrail::append`]
//! hands its record to the trail's one writer task and waits until that
//! task has committed it: the writer takes every record waiting at that
//! moment (up to [`MAX_BATCH`]) and inserts them with one multi-row
//! `INSERT` (statements of [`ROWS_PER_STATEMENT`] rows in one transaction
//! for a larger batch), one commit. The writer remembers the chain's last
//! link from its own last commit, so a batch is one statement and one
//! round trip to the store, not a transaction of five (`BEGIN`, take the
//! head, insert, move the head, `COMMIT`): the store checks the link and
//! moves the head itself ([`chain`]). So a call is answered only once its record
//! is in the database — a crash of the process (kill -9 included) loses no
//! record of an answered call — while concurrent calls share one commit
//! instead of queueing for SQLite's write lock one by one (and sleeping in
//! its busy handler). The store's durability is its engine's: a SQLite
//! file (`crate::db::Store::open`: WAL, `synchronous = NORMAL`) keeps a
//! committed transaction through a process crash, an OS crash or power
//! loss may roll back the last ones before a checkpoint; PostgreSQL keeps
//! it through both.
//!
//! The writer keeps one connection of the pool while records keep coming
//! (it hands it back after [`WRITER_IDLE`] without any): its page cache
//! and its prepared statements stay warm, where a connection taken from
//! the pool for each batch would find its cache invalidated by the last
//! writer on another connection and read the pages again. A pool of one
//! connection (an in-memory store) is not held: its other users would
//! wait for it.
//!
//! The table is `crate::db::SCHEMA`'s (migrations `1_audit_trail.sql`,
//! `3_audit_chain.sql`): append-only is enforced by the store (triggers),
//! not by care; what the store cannot enforce against someone who owns the
//! file, the chain makes evident.
//!
//! **Tamper evidence**, in rooms of its own:
//!
//! | module | what it decides |
//! |---|---|
//! | [`chain`] | what a record's hash covers, and how appends take the chain's head so each record links to the one before |
//! | [`checkpoint`] | signed checkpoints of a chain's head and count (detached JWS) |
//! | [`anchor`] | checkpoints appended to a file outside the store: what shows a chain cut short |
//! | [`verify`] | walking a chain: links, checkpoints, the first broken link |
//! | [`export`] | a counterparty's segment of the chain, and verifying it without the store |

pub mod anchor;
pub mod chain;
pub mod checkpoint;
pub mod export;
pub mod verify;

#[cfg(test)]
#[path = "audit/chain_tests.rs"]
mod chain_tests;

use crate::db::Store;
use crate::reason::ReasonCode;
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::pool::PoolConnection;
use sqlx::{Any, Connection, Row};
use tokio::sync::{mpsc, oneshot};

/// Most records one commit of the writer holds (16 bound values each,
/// far below either engine's limit on a statement's parameters).
pub const MAX_BATCH: usize = 128;

/// Rows of one `INSERT`: a batch is written as statements of this many
/// rows and one for the rest, so a connection prepares at most this many
/// statement shapes and keeps them cached (sqlx keeps 100 per
/// connection). Large enough that a batch under load is one statement,
/// one handoff to the connection's thread (a transaction of several costs
/// one handoff each, plus `BEGIN` and `COMMIT`); small enough to bind
/// cheaply (binding a value looks its parameter up in a list: a statement
/// of n parameters costs n² to bind, so one statement for a whole batch of
/// [`MAX_BATCH`] costs more than its parse saves).
pub const ROWS_PER_STATEMENT: usize = 64;

/// How long the writer keeps its connection without a record to write.
pub const WRITER_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

/// How many records may wait for the writer before `append` waits to
/// queue its own (back-pressure instead of unbounded memory).
const QUEUE: usize = 4096;

/// Which side of a call wrote a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The system that started the call.
    Caller,
    /// The hub, between caller and responder.
    Hub,
    /// The system that answered.
    Responder,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Caller => "caller",
            Role::Hub => "hub",
            Role::Responder => "responder",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        match s {
            "caller" => Some(Role::Caller),
            "hub" => Some(Role::Hub),
            "responder" => Some(Role::Responder),
            _ => None,
        }
    }
}

/// What became of the call, from the writer's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Answered within the contract.
    Connected,
    /// Answered from the idempotency store: the responder was not called.
    Replayed,
    /// Failed with a reason code.
    NotConnected,
    /// The responder ran the skill (responder side only).
    Executed,
    /// The responder refused the request (bad input, auth).
    Refused,
}

impl Outcome {
    /// The wire spelling (`not_connected`), as stored and as drawers show it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Connected => "connected",
            Outcome::Replayed => "replayed",
            Outcome::NotConnected => "not_connected",
            Outcome::Executed => "executed",
            Outcome::Refused => "refused",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        match s {
            "connected" => Some(Outcome::Connected),
            "replayed" => Some(Outcome::Replayed),
            "not_connected" => Some(Outcome::NotConnected),
            "executed" => Some(Outcome::Executed),
            "refused" => Some(Outcome::Refused),
            _ => None,
        }
    }
}

/// One line of a trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Whose trail this is (`hub`, `vendorcorp`, ...).
    pub system: String,
    pub role: Role,
    /// RFC 3339 UTC with milliseconds.
    pub at: String,
    pub caller: String,
    pub provider: String,
    pub capability: String,
    pub request_id: String,
    pub trace_id: String,
    pub outcome: Outcome,
    pub reason: Option<ReasonCode>,
    pub duration_ms: u64,
    /// Operator detail: never a token, never payload data.
    pub detail: String,
}

/// Errors reading or writing a trail.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("audit store: {0}")]
    Store(#[from] sqlx::Error),
    #[error("audit store holds an unreadable row: {0}")]
    Corrupt(String),
    #[error("the audit trail's writer stopped before committing the record")]
    WriterStopped,
    #[error(transparent)]
    Canonical(#[from] chain::CanonicalError),
    #[error("signing a checkpoint: {0}")]
    Sign(#[from] crate::jws::SignError),
    #[error("this store's trail has no chain (it predates migration 3 of the exchange's schema)")]
    NotChained,
}

impl AuditError {
    /// Whether the store is away for now (a restart, a broken
    /// connection): trying again shortly may commit the record.
    pub fn is_unavailable(&self) -> bool {
        match self {
            AuditError::Store(e) => crate::db::is_unavailable(e),
            AuditError::Corrupt(_)
            | AuditError::WriterStopped
            | AuditError::Canonical(_)
            | AuditError::Sign(_)
            | AuditError::NotChained => false,
        }
    }
}

/// A system's own trail.
#[derive(Clone)]
pub struct AuditTrail {
    store: Store,
    system: String,
    /// The writer task's queue (`None` for a read-only trail: its
    /// appends write directly).
    writer: Option<mpsc::Sender<Pending>>,
}

impl std::fmt::Debug for AuditTrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditTrail")
            .field("system", &self.system)
            .field("writer", &self.writer.is_some())
            .finish_non_exhaustive()
    }
}

/// A record waiting for the writer, and who waits for its commit.
struct Pending {
    record: AuditRecord,
    receipt: Option<Stamp>,
    committed: oneshot::Sender<Result<(), AuditError>>,
}

/// A signed receipt kept in the row of the record it is the receipt of
/// (`receipt_id`, `receipt`: not hashed, as `seq` is not; the receipt
/// names the record's digest instead), so keeping it costs the record's
/// commit nothing more ([`crate::receipt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The receipt's id.
    pub id: String,
    /// The compact JWS.
    pub jws: String,
    /// The digest of the record it is the receipt of, as the receipt
    /// names it: the writer links the record with it instead of
    /// computing it again.
    pub record: chain::ChainHash,
}

/// A receipt as its trail keeps it: who may see it, and the receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptReceipt {
    /// The exchange's caller.
    pub caller: String,
    /// The exchange's provider.
    pub provider: String,
    /// The receipt's id.
    pub id: String,
    /// The compact JWS.
    pub jws: String,
}

impl AuditTrail {
    /// The trail inside `store` (migrated: `crate::db::SCHEMA`), with its
    /// writer task.
    pub fn open(store: Store, system: impl Into<String>) -> Self {
        let (writer, queue) = mpsc::channel(QUEUE);
        tokio::spawn(write_batches(store.clone(), queue));
        Self {
            store,
            system: system.into(),
            writer: Some(writer),
        }
    }

    /// Reads an existing trail without a writer: what the rebuild command
    /// and tests use on another process's store.
    pub fn read_only(store: Store, system: impl Into<String>) -> Self {
        Self {
            store,
            system: system.into(),
            writer: None,
        }
    }

    /// The system this trail belongs to.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// The store it lives in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Appends one record and returns once it is committed (with the
    /// other records waiting at the same moment: see the module doc).
    /// `record.system` is overwritten with the trail's owner: a trail only
    /// ever speaks for itself.
    pub async fn append(&self, record: AuditRecord) -> Result<(), AuditError> {
        self.append_receipted(record, None).await
    }

    /// [`AuditTrail::append`] of a record with the receipt issued for it,
    /// if any, kept in the record's row. The receipt's `record` digest is
    /// the one the record is linked with, so it must be this record's,
    /// `system` already the trail's owner (a wrong one breaks the chain,
    /// and verification names the row).
    pub async fn append_receipted(
        &self,
        mut record: AuditRecord,
        receipt: Option<Stamp>,
    ) -> Result<(), AuditError> {
        record.system.clone_from(&self.system);
        let Some(writer) = &self.writer else {
            return insert(&self.store, [(&record, receipt.as_ref())]).await;
        };
        let (committed, done) = oneshot::channel();
        let pending = Pending {
            record,
            receipt,
            committed,
        };
        match writer.send(pending).await {
            Ok(()) => done.await.unwrap_or(Err(AuditError::WriterStopped)),
            // The writer is gone (its runtime is shutting down): write
            // this one directly rather than lose it.
            Err(mpsc::error::SendError(p)) => {
                insert(&self.store, [(&p.record, p.receipt.as_ref())]).await
            }
        }
    }

    /// The receipt `id`, if this trail keeps it.
    pub async fn receipt(&self, id: &str) -> Result<Option<KeptReceipt>, AuditError> {
        Ok(self
            .receipts("WHERE receipt_id = $1", id)
            .await?
            .into_iter()
            .next())
    }

    /// The receipts of the exchanges of one request id, oldest first.
    pub async fn receipts_of_request(
        &self,
        request_id: &str,
    ) -> Result<Vec<KeptReceipt>, AuditError> {
        self.receipts(
            "WHERE request_id = $1 AND receipt_id IS NOT NULL ORDER BY seq",
            request_id,
        )
        .await
    }

    async fn receipts(&self, filter: &str, value: &str) -> Result<Vec<KeptReceipt>, AuditError> {
        let sql = format!("SELECT caller, provider, receipt_id, receipt FROM audit_trail {filter}");
        let rows = sqlx::query(&sql)
            .bind(value)
            .fetch_all(self.store.pool())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(KeptReceipt {
                    caller: row.try_get(0)?,
                    provider: row.try_get(1)?,
                    id: row.try_get(2)?,
                    jws: row.try_get(3)?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(AuditError::from)
    }

    /// Every record of one trace, oldest first.
    pub async fn by_trace(&self, trace_id: &str) -> Result<Vec<AuditRecord>, AuditError> {
        read_rows(
            &self.store,
            "WHERE trace_id = $1 ORDER BY seq",
            Some(trace_id),
            None,
        )
        .await
    }

    /// The latest `limit` records, newest first (drawers show these).
    pub async fn recent(&self, limit: u32) -> Result<Vec<AuditRecord>, AuditError> {
        read_rows(&self.store, "ORDER BY seq DESC LIMIT $1", None, Some(limit)).await
    }

    /// The latest `limit` records where `system` was the caller or the
    /// provider, newest first (a node's drawer shows these).
    pub async fn recent_involving(
        &self,
        system: &str,
        limit: u32,
    ) -> Result<Vec<AuditRecord>, AuditError> {
        let sql = "SELECT system, role, at, caller, provider, capability, request_id, trace_id,
                outcome, reason, duration_ms, detail FROM audit_trail
             WHERE caller = $1 OR provider = $1 ORDER BY seq DESC LIMIT $2";
        let rows = sqlx::query(sql)
            .bind(system)
            .bind(i64::from(limit))
            .fetch_all(self.store.pool())
            .await?;
        rows.iter().map(read_row).collect()
    }

    /// How many records of `outcome` this trail holds for a request id: the
    /// idempotency tests count executions with it.
    pub async fn count(&self, request_id: &str, outcome: Outcome) -> Result<u64, AuditError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM audit_trail WHERE request_id = $1 AND outcome = $2",
        )
        .bind(request_id)
        .bind(outcome.as_str())
        .fetch_one(self.store.pool())
        .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

/// The writer task: every record waiting (up to [`MAX_BATCH`]) in one
/// commit, then each waiter told. It remembers the link its last commit
/// left, so a batch is usually one statement linked from it
/// ([`chain::append_known`]); when someone else appended meanwhile, the
/// store refuses that and the batch takes the head instead. A batch the
/// store refuses otherwise is retried record by record on a fresh
/// connection, so one bad record (or a broken connection) cannot fail the
/// others. Ends when every [`AuditTrail`] holding its queue is gone.
async fn write_batches(store: Store, mut queue: mpsc::Receiver<Pending>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let holds = store.pool().options().get_max_connections() > 1;
    let mut held: Option<PoolConnection<Any>> = None;
    let mut tip: Option<chain::ChainHash> = None;
    loop {
        let received = if held.is_some() {
            match tokio::time::timeout(WRITER_IDLE, queue.recv_many(&mut batch, MAX_BATCH)).await {
                Ok(n) => n,
                Err(_) => {
                    held = None;
                    continue;
                }
            }
        } else {
            queue.recv_many(&mut batch, MAX_BATCH).await
        };
        if received == 0 {
            return;
        }
        let written = match held.take() {
            Some(conn) => Ok(conn),
            None => store.pool().acquire().await,
        };
        let records: Vec<chain::Appended<'_>> = batch
            .iter()
            .map(|p| (&p.record, p.receipt.as_ref()))
            .collect();
        let written = match written {
            Ok(mut conn) => {
                let r = write_batch(&mut conn, &records, tip).await;
                match r {
                    Ok(_) if holds => held = Some(conn),
                    Ok(_) => {}
                    // It may be the connection that failed: not reused.
                    Err(_) => conn.close_on_drop(),
                }
                r
            }
            Err(e) => Err(e),
        };
        tip = written.as_ref().ok().copied().flatten();
        match written {
            Ok(_) => {
                for p in batch.drain(..) {
                    let _ = p.committed.send(Ok(()));
                }
            }
            Err(_) => {
                for p in batch.drain(..) {
                    let one = insert(&store, [(&p.record, p.receipt.as_ref())]).await;
                    let _ = p.committed.send(one);
                }
            }
        }
    }
}

/// `records` (the writer's: all of its trail's chain) in one commit on
/// `conn`: linked from `tip` if the writer knows its chain's head, else
/// (or if the head moved) in one transaction that takes the head first
/// ([`chain`]). Returns the chain's new last link.
async fn write_batch(
    conn: &mut sqlx::AnyConnection,
    records: &[chain::Appended<'_>],
    tip: Option<chain::ChainHash>,
) -> Result<Option<chain::ChainHash>, sqlx::Error> {
    if let Some(known) = tip {
        match chain::append_known(conn, records, known).await {
            Ok(last) => return Ok(Some(last)),
            Err(e) if chain::head_moved(&e) => {}
            Err(e) => return Err(e),
        }
    }
    let mut tx = conn.begin().await?;
    let tips = chain::append_on(&mut tx, records).await?;
    tx.commit().await?;
    Ok(match tips.as_slice() {
        [(_, last)] => Some(*last),
        _ => None,
    })
}

/// `records` in one transaction of their own, on a connection of the pool.
async fn insert<'a>(
    store: &Store,
    records: impl IntoIterator<Item = chain::Appended<'a>>,
) -> Result<(), AuditError> {
    let records: Vec<chain::Appended<'a>> = records.into_iter().collect();
    let mut tx = store.pool().begin().await?;
    chain::append_on(&mut tx, &records).await?;
    tx.commit().await?;
    Ok(())
}

/// Appends `records` to their chains inside a transaction the caller holds
/// open on `conn` and commits: a record that must commit with the change it
/// records (an inbox decision). The chain's head stays taken until that
/// commit.
pub(crate) async fn insert_on<'a>(
    conn: &mut sqlx::AnyConnection,
    records: impl IntoIterator<Item = &'a AuditRecord>,
) -> Result<(), sqlx::Error> {
    let records: Vec<chain::Appended<'a>> = records.into_iter().map(|r| (r, None)).collect();
    chain::append_on(conn, &records).await.map(drop)
}

async fn read_rows(
    store: &Store,
    tail: &str,
    trace_id: Option<&str>,
    limit: Option<u32>,
) -> Result<Vec<AuditRecord>, AuditError> {
    let sql = format!(
        "SELECT system, role, at, caller, provider, capability, request_id, trace_id, outcome,
                reason, duration_ms, detail FROM audit_trail {tail}"
    );
    let mut query = sqlx::query(&sql);
    if let Some(t) = trace_id {
        query = query.bind(t);
    }
    if let Some(l) = limit {
        query = query.bind(i64::from(l));
    }
    let rows = query.fetch_all(store.pool()).await?;
    rows.iter().map(read_row).collect()
}

pub(crate) fn read_row(row: &AnyRow) -> Result<AuditRecord, AuditError> {
    let role: String = row.try_get("role")?;
    let outcome: String = row.try_get("outcome")?;
    let reason: Option<String> = row.try_get("reason")?;
    let reason = match reason {
        Some(r) => Some(
            serde_json::from_value(serde_json::Value::String(r.clone()))
                .map_err(|_| AuditError::Corrupt(format!("reason {r:?}")))?,
        ),
        None => None,
    };
    Ok(AuditRecord {
        system: row.try_get("system")?,
        role: Role::parse(&role).ok_or_else(|| AuditError::Corrupt(format!("role {role:?}")))?,
        at: row.try_get("at")?,
        caller: row.try_get("caller")?,
        provider: row.try_get("provider")?,
        capability: row.try_get("capability")?,
        request_id: row.try_get("request_id")?,
        trace_id: row.try_get("trace_id")?,
        outcome: Outcome::parse(&outcome)
            .ok_or_else(|| AuditError::Corrupt(format!("outcome {outcome:?}")))?,
        reason,
        duration_ms: u64::try_from(row.try_get::<i64, _>("duration_ms")?).unwrap_or(0),
        detail: row.try_get("detail")?,
    })
}

/// The current time as the trails write it (RFC 3339, UTC, milliseconds).
/// A call writes it several times within one millisecond (its audit
/// record, the inspector, the edge's last call): each thread keeps the
/// last millisecond it formatted and reuses the text.
pub fn now() -> String {
    use std::cell::RefCell;
    thread_local! {
        static LAST: RefCell<(i64, String)> = const { RefCell::new((i64::MIN, String::new())) };
    }
    let at = chrono::Utc::now();
    let ms = at.timestamp_millis();
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != ms {
            *last = (ms, at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
        }
        last.1.clone()
    })
}

/// Rebuilds one interaction from several independent trails: every record
/// of `trace_id` in each, merged in time order (ties keep trail order).
pub async fn rebuild(
    trails: &[AuditTrail],
    trace_id: &str,
) -> Result<Vec<AuditRecord>, AuditError> {
    let mut all = Vec::new();
    for trail in trails {
        all.extend(trail.by_trace(trace_id).await?);
    }
    all.sort_by(|a, b| a.at.cmp(&b.at));
    Ok(all)
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
