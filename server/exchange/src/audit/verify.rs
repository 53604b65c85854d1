//! Verifying chains: every link recomputed in seq order, every checkpoint's
//! signature checked and its hash compared with the chain at its seq; the
//! first broken link named.
//!
//! The walk ([`Walker`]) is the same for a store ([`verify_store`]) and an
//! export directory (`audit::export`'s `verify_dir`): it is given each
//! record's seq, digest, stored `prev_hash` and stored hash, in seq order,
//! and the chain's checkpoints. For each record it expects
//! `hash = link(previous hash, digest)`. When that fails it tells *what*
//! broke from the stored values:
//!
//! - the record's own `link(prev_hash, digest)` is not its hash either:
//!   **content changed** (its content, or its stored hash, was edited);
//! - its own link holds but `prev_hash` is not the previous record's hash:
//!   **row missing** — the record is intact and links to a record the
//!   chain no longer holds (deleted), or a record was moved;
//! - the link from the previous record holds but `prev_hash` reads
//!   otherwise: **prev_hash does not link** (that column was edited).
//!
//! A checkpoint is checked when the walk reaches its seq: its signature
//! against the keys given, and its hash against the link there. A
//! checkpoint whose seq has no record marks a missing row; so does a
//! chain head (`audit_chain_head`) naming a record the walk did not meet.
//! Rows without a hash before a chain's first link were written before
//! the chain existed: counted, not verified. After it, such a row was
//! inserted outside the chain.

use std::collections::VecDeque;
use std::fmt;

use jsonwebtoken::jwk::JwkSet;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::chain::{self, ChainHash, Content, Head, GENESIS};
use super::checkpoint::{self, Checkpoint};
use super::AuditError;
use crate::db::Store;

/// What is wrong at a broken link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The record no longer hashes to its stored hash.
    ContentChanged,
    /// The record cannot be read as a trail record (a value of the wrong
    /// type, a member missing).
    ContentUnreadable(String),
    /// The stored `prev_hash` is not the previous record's hash, though the
    /// record still links to that one.
    PrevHashDoesNotLink {
        stored: ChainHash,
        previous: ChainHash,
    },
    /// The record is intact and links to a record that is not there.
    RowMissing {
        /// The seq of the previous record present (`None`: the chain's
        /// first records are missing).
        after: Option<i64>,
    },
    /// A row without a hash after the chain began.
    Unchained,
    /// A stored hash is not 64 hex digits.
    Unreadable(&'static str),
    /// Records out of seq order (an export only: a store reads in order).
    OutOfOrder { previous: i64 },
    /// A checkpoint's signature does not verify.
    CheckpointSignature(String),
    /// A checkpoint signs another hash than the chain's at its seq.
    CheckpointMismatch { signed: String, chain: ChainHash },
    /// A checkpoint names a seq the chain holds no record at.
    CheckpointWithoutRecord,
    /// The chain head names a record the chain does not hold, or another
    /// hash than the chain's there.
    HeadMismatch { head: Head },
    /// Records after the last checkpoint (an export must be covered).
    NotCovered { last_checkpoint: Option<i64> },
    /// An export's anchor is not a checkpoint it holds.
    Anchor(String),
    /// An export holds fewer records than its manifest says.
    Incomplete(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::ContentChanged => f.write_str(
                "content changed: the record's content no longer hashes to its stored hash",
            ),
            Problem::ContentUnreadable(why) => write!(f, "content changed: {why}"),
            Problem::PrevHashDoesNotLink { stored, previous } => write!(
                f,
                "prev_hash does not link: it reads {stored}, the previous record's hash is \
                 {previous}"
            ),
            Problem::RowMissing { after: Some(seq) } => write!(
                f,
                "row missing (a gap in the chain): this record is intact but links to a record \
                 that is not there; the previous record present is seq {seq}"
            ),
            Problem::RowMissing { after: None } => f.write_str(
                "row missing (a gap in the chain): this record is intact but links to a record \
                 that is not there; the chain's first records are missing",
            ),
            Problem::Unchained => f.write_str(
                "a row without a hash inside the chain: it was inserted outside the chain",
            ),
            Problem::Unreadable(what) => write!(f, "content changed: its {what} is not a hash"),
            Problem::OutOfOrder { previous } => {
                write!(f, "records out of order: this one follows seq {previous}")
            }
            Problem::CheckpointSignature(why) => write!(f, "checkpoint signature invalid: {why}"),
            Problem::CheckpointMismatch { signed, chain } => write!(
                f,
                "checkpoint does not match the chain: it signs {}, the chain's hash here is \
                 {chain}",
                crate::text::clip(signed, 64)
            ),
            Problem::CheckpointWithoutRecord => f.write_str(
                "row missing (a gap in the chain): a checkpoint signs the record at this seq, \
                 and the chain does not hold it",
            ),
            Problem::HeadMismatch { head } => write!(
                f,
                "row missing at the end of the chain: its head names seq {} with hash {}, \
                 which the chain does not hold",
                head.seq, head.hash
            ),
            Problem::NotCovered {
                last_checkpoint: Some(seq),
            } => write!(
                f,
                "not covered: the records after seq {seq} (the last checkpoint) are signed by \
                 no checkpoint"
            ),
            Problem::NotCovered {
                last_checkpoint: None,
            } => f.write_str("not covered: no checkpoint signs these records"),
            Problem::Anchor(why) => write!(f, "the export's anchor: {why}"),
            Problem::Incomplete(why) => write!(f, "the export is incomplete: {why}"),
        }
    }
}

/// The first broken link of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The chain.
    pub system: String,
    /// Where: the record's seq (a checkpoint's, for a checkpoint).
    pub seq: i64,
    /// The request id of the record at that seq, when there is one.
    pub request_id: Option<String>,
    /// What is wrong.
    pub problem: Problem,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chain `{}` is broken at seq {}", self.system, self.seq)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request id {})", crate::text::clip(id, 128))?;
        }
        write!(f, ": {}", self.problem)
    }
}

/// What the walk of one intact chain found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainReport {
    /// The chain.
    pub system: String,
    /// Chained records verified.
    pub records: u64,
    /// Rows written before the chain began (not verified).
    pub unchained_before: u64,
    /// The first and last verified seq.
    pub first_seq: Option<i64>,
    pub last_seq: Option<i64>,
    /// Checkpoints verified (signature and link).
    pub checkpoints: u64,
    /// The seq the last verified checkpoint covers.
    pub last_checkpoint: Option<i64>,
    /// Records after the last checkpoint.
    pub uncovered: u64,
}

impl fmt::Display for ChainReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "chain `{}`: {} records", self.system, self.records)?;
        if let (Some(a), Some(b)) = (self.first_seq, self.last_seq) {
            write!(f, " (seq {a}–{b})")?;
        }
        if self.unchained_before > 0 {
            write!(
                f,
                ", after {} unchained rows written before the chain began",
                self.unchained_before
            )?;
        }
        match self.last_checkpoint {
            None => f.write_str("; no checkpoint (its chain alone is verified)"),
            Some(seq) => {
                write!(
                    f,
                    "; {} checkpoints verified, the last covering seq {seq}",
                    self.checkpoints
                )?;
                if self.uncovered > 0 {
                    write!(
                        f,
                        " ({} records after it, not yet checkpointed)",
                        self.uncovered
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// What [`verify_store`] found: the chains verified, and the first broken
/// link if any (the walk stops there).
#[derive(Debug, Clone, Default)]
pub struct Verification {
    pub chains: Vec<ChainReport>,
    pub broken: Option<Broken>,
}

impl Verification {
    /// Records verified over every chain.
    pub fn records(&self) -> u64 {
        self.chains.iter().map(|c| c.records).sum()
    }

    /// Checkpoints verified over every chain.
    pub fn checkpoints(&self) -> u64 {
        self.chains.iter().map(|c| c.checkpoints).sum()
    }
}

/// One record as the walk sees it.
pub(crate) struct Entry<'a> {
    pub seq: i64,
    pub request_id: Option<&'a str>,
    /// Its content's digest, or why there is none.
    pub digest: Result<ChainHash, String>,
    /// Stored `prev_hash` and hash; `None` when absent (a row written
    /// before the chain), `Some(None)` when unreadable.
    pub prev_hash: Option<Option<ChainHash>>,
    pub hash: Option<Option<ChainHash>>,
}

/// The walk of one chain (module doc).
pub(crate) struct Walker<'k> {
    keys: &'k JwkSet,
    prev: ChainHash,
    prev_seq: Option<i64>,
    pending: VecDeque<Checkpoint>,
    head: Option<Head>,
    head_seen: bool,
    report: ChainReport,
}

impl<'k> Walker<'k> {
    /// A walk of `system`'s chain from `start` (the link before its first
    /// record: [`GENESIS`], or an anchor checkpoint's hash at `start_seq`),
    /// checking `checkpoints` (sorted by seq) and, for a store, its `head`.
    pub fn new(
        system: &str,
        keys: &'k JwkSet,
        start: ChainHash,
        start_seq: Option<i64>,
        checkpoints: Vec<Checkpoint>,
        head: Option<Head>,
    ) -> Self {
        Self {
            keys,
            prev: start,
            prev_seq: start_seq,
            pending: checkpoints.into(),
            head: head.filter(|h| h.seq > 0),
            head_seen: false,
            report: ChainReport {
                system: system.to_string(),
                ..ChainReport::default()
            },
        }
    }

    /// Counts a row written before the chain began.
    pub fn unchained_before(&mut self) {
        self.report.unchained_before += 1;
    }

    /// Whether the walk has met a chained record yet.
    pub fn started(&self) -> bool {
        self.report.records > 0
    }

    fn broken(&self, seq: i64, request_id: Option<&str>, problem: Problem) -> Box<Broken> {
        Box::new(Broken {
            system: self.report.system.clone(),
            seq,
            request_id: request_id.map(str::to_string),
            problem,
        })
    }

    /// A checkpoint's signature.
    fn signed(&self, c: &Checkpoint, request_id: Option<&str>) -> Result<(), Box<Broken>> {
        c.verify_signature(self.keys)
            .map(|_| ())
            .map_err(|why| self.broken(c.seq, request_id, Problem::CheckpointSignature(why)))
    }

    /// Checkpoints before `seq`: none has a record (the walk is past them).
    fn passed(&mut self, seq: i64) -> Result<(), Box<Broken>> {
        match self.pending.front().filter(|c| c.seq < seq) {
            Some(c) => {
                self.signed(c, None)?;
                Err(self.broken(c.seq, None, Problem::CheckpointWithoutRecord))
            }
            None => Ok(()),
        }
    }

    /// The next record, in seq order.
    pub fn step(&mut self, e: Entry<'_>) -> Result<(), Box<Broken>> {
        self.passed(e.seq)?;
        let at = |problem| self.broken(e.seq, e.request_id, problem);
        if let Some(previous) = self.prev_seq.filter(|p| *p >= e.seq) {
            return Err(at(Problem::OutOfOrder { previous }));
        }
        let (prev_hash, hash) = match (e.prev_hash, e.hash) {
            (None, None) => return Err(at(Problem::Unchained)),
            (Some(Some(p)), Some(Some(h))) => (p, h),
            (_, None | Some(None)) => return Err(at(Problem::Unreadable("hash"))),
            (None | Some(None), _) => return Err(at(Problem::Unreadable("prev_hash"))),
        };
        let digest = match e.digest {
            Ok(d) => d,
            Err(why) => return Err(at(Problem::ContentUnreadable(why))),
        };
        if chain::link(&self.prev, &digest) == hash {
            if prev_hash != self.prev {
                return Err(at(Problem::PrevHashDoesNotLink {
                    stored: prev_hash,
                    previous: self.prev,
                }));
            }
        } else if chain::link(&prev_hash, &digest) == hash {
            return Err(at(Problem::RowMissing {
                after: self.prev_seq,
            }));
        } else {
            return Err(at(Problem::ContentChanged));
        }
        self.prev = hash;
        self.prev_seq = Some(e.seq);
        self.report.records += 1;
        self.report.uncovered += 1;
        self.report.first_seq.get_or_insert(e.seq);
        self.report.last_seq = Some(e.seq);
        if let Some(head) = self.head.filter(|h| h.seq == e.seq) {
            if head.hash != hash {
                return Err(self.broken(e.seq, e.request_id, Problem::HeadMismatch { head }));
            }
            self.head_seen = true;
        }
        while let Some(c) = self.pending.front().filter(|c| c.seq == e.seq) {
            self.signed(c, e.request_id)?;
            if ChainHash::parse(&c.hash) != Some(hash) {
                let signed = c.hash.clone();
                return Err(self.broken(
                    e.seq,
                    e.request_id,
                    Problem::CheckpointMismatch {
                        signed,
                        chain: hash,
                    },
                ));
            }
            self.report.checkpoints += 1;
            self.report.last_checkpoint = Some(e.seq);
            self.report.uncovered = 0;
            self.pending.pop_front();
        }
        Ok(())
    }

    /// The end of the chain: checkpoints beyond its last record, or a head
    /// it did not meet, mark missing rows.
    pub fn finish(mut self) -> Result<ChainReport, Box<Broken>> {
        self.passed(i64::MAX)?;
        if let Some(c) = self.pending.front() {
            self.signed(c, None)?;
            return Err(self.broken(c.seq, None, Problem::CheckpointWithoutRecord));
        }
        if let (Some(head), false) = (self.head, self.head_seen) {
            return Err(self.broken(head.seq, None, Problem::HeadMismatch { head }));
        }
        Ok(self.report)
    }
}

/// Rows a page of the walk reads.
const PAGE: i64 = 1000;

/// Verifies every chain of `store` (or `system`'s only), checkpoints
/// against `keys`; stops at the first broken link.
pub async fn verify_store(
    store: &Store,
    system: Option<&str>,
    keys: &JwkSet,
) -> Result<Verification, AuditError> {
    if !store.has_table("audit_chain_head").await? {
        return Err(AuditError::NotChained);
    }
    let systems: Vec<String> = match system {
        Some(s) => vec![s.to_string()],
        None => {
            sqlx::query_scalar(
                "SELECT system FROM audit_trail UNION SELECT system FROM audit_chain_head
                 UNION SELECT system FROM audit_checkpoints ORDER BY 1",
            )
            .fetch_all(store.pool())
            .await?
        }
    };
    let mut out = Verification::default();
    for system in systems {
        match verify_chain(store, &system, keys).await? {
            Ok(report) => out.chains.push(report),
            Err(broken) => {
                out.broken = Some(broken);
                break;
            }
        }
    }
    Ok(out)
}

/// One chain of the store (the head read first: records appended while
/// the walk runs come after it).
async fn verify_chain(
    store: &Store,
    system: &str,
    keys: &JwkSet,
) -> Result<Result<ChainReport, Broken>, AuditError> {
    let head = chain::head(store, system).await?;
    let checkpoints = checkpoint::list(store, system, i64::MIN, i64::MAX).await?;
    let mut walker = Walker::new(system, keys, GENESIS, None, checkpoints, head);
    let mut after = i64::MIN;
    loop {
        let rows = sqlx::query(
            "SELECT seq, system, role, at, caller, provider, capability, request_id, trace_id,
                    outcome, reason, duration_ms, detail, prev_hash, hash
             FROM audit_trail WHERE system = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(system)
        .bind(after)
        .bind(PAGE)
        .fetch_all(store.pool())
        .await?;
        let Some(last) = rows.last() else { break };
        after = last.try_get("seq")?;
        for row in &rows {
            let seq: i64 = row.try_get("seq")?;
            let (prev_hash, hash) = (stored_hash(row, "prev_hash"), stored_hash(row, "hash"));
            if hash.is_none() && prev_hash.is_none() && !walker.started() {
                walker.unchained_before();
                continue;
            }
            let request_id: Option<String> = row.try_get("request_id").ok();
            let entry = Entry {
                seq,
                request_id: request_id.as_deref(),
                digest: row_digest(row),
                prev_hash,
                hash,
            };
            if let Err(broken) = walker.step(entry) {
                return Ok(Err(*broken));
            }
        }
        if i64::try_from(rows.len()).unwrap_or(PAGE) < PAGE {
            break;
        }
    }
    Ok(walker.finish().map_err(|b| *b))
}

/// A stored hash column: `None` when NULL, `Some(None)` when it holds
/// something other than a hash.
fn stored_hash(row: &AnyRow, column: &str) -> Option<Option<ChainHash>> {
    match row.try_get::<Option<String>, _>(column) {
        Ok(None) => None,
        Ok(Some(h)) => Some(ChainHash::parse(&h)),
        Err(_) => Some(None),
    }
}

/// A stored row's content as the JSON object an export shows (the members
/// of [`Content`]), or why it cannot be read.
pub(crate) fn row_record(row: &AnyRow) -> Result<serde_json::Value, String> {
    let mut out = serde_json::Map::new();
    for name in [
        "system",
        "role",
        "at",
        "caller",
        "provider",
        "capability",
        "request_id",
        "trace_id",
        "outcome",
        "detail",
    ] {
        let value: String = row
            .try_get(name)
            .map_err(|_| format!("its {name} is not text"))?;
        out.insert(name.into(), value.into());
    }
    let reason: Option<String> = row
        .try_get("reason")
        .map_err(|_| "its reason is not text".to_string())?;
    out.insert(
        "reason".into(),
        reason.map_or(serde_json::Value::Null, Into::into),
    );
    let duration_ms: i64 = row
        .try_get("duration_ms")
        .map_err(|_| "its duration_ms is not an integer".to_string())?;
    out.insert("duration_ms".into(), duration_ms.into());
    Ok(serde_json::Value::Object(out))
}

/// The digest of a record's JSON content, or why it has none.
pub(crate) fn record_digest(record: &serde_json::Value) -> Result<ChainHash, String> {
    Content::from_json(record)
        .ok_or_else(|| {
            "it is not a trail record (a member is missing or of another type)".to_string()
        })?
        .digest()
        .map_err(|e| e.to_string())
}

/// The digest of a stored row's content, or why it cannot be read.
fn row_digest(row: &AnyRow) -> Result<ChainHash, String> {
    record_digest(&row_record(row)?)
}
