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
//!
//! **Counts.** The walk counts the chain's records. A checkpoint that
//! signs a count (every one since migration 4) must sign the number of
//! records up to its seq, and the head must hold the number up to its
//! own: a deleted row shows even where the links were rewritten around it
//! and seq numbers skip anyway.
//!
//! **What the store alone cannot show.** The chain's last rows deleted
//! together with the head (or the head moved back) and the checkpoints
//! after them leave a shorter chain that agrees with itself. Checkpoints
//! kept outside the store ([`super::anchor`], `hub trail verify
//! --anchor`) close that: each is checked like a stored one at its seq
//! (signature, hash, count, and that the store still holds it), and one
//! beyond the chain's last record names the truncation.

use std::collections::VecDeque;
use std::fmt;

use jsonwebtoken::jwk::JwkSet;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::anchor::Anchored;
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
    /// A checkpoint signs another number of records up to its seq than
    /// the chain holds.
    CheckpointCount { signed: u64, chain: u64 },
    /// The chain head counts another number of records than the chain
    /// holds up to it.
    HeadCount { head: i64, chain: u64 },
    /// A checkpoint of the anchor (held outside the store) does not hold
    /// for the store's chain.
    Anchored {
        /// The hash it signs.
        hash: String,
        /// The records it counts, when it signs a count.
        count: Option<u64>,
        /// What is wrong.
        problem: AnchorProblem,
    },
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

/// What an anchored checkpoint found in the store's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchorProblem {
    /// The chain ends before its seq: truncated.
    Beyond {
        /// The chain's last record (`None`: the store holds none).
        last_seq: Option<i64>,
        /// How many records the store's chain holds.
        records: u64,
    },
    /// The chain goes on past its seq but holds no record there.
    NoRecord,
    /// The chain's hash at its seq differs.
    HashDiffers { chain: ChainHash },
    /// The chain holds another number of records up to its seq.
    CountDiffers { chain: u64 },
    /// The chain agrees, but the store no longer holds this checkpoint.
    NotStored,
    /// Its signature does not verify.
    Signature(String),
}

impl fmt::Display for AnchorProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnchorProblem::Beyond {
                last_seq: Some(last),
                records,
            } => write!(
                f,
                "truncated: the store's chain ends at seq {last} after {records} records, \
                 before the anchored checkpoint"
            ),
            AnchorProblem::Beyond { last_seq: None, .. } => {
                f.write_str("truncated: the store holds no record of this chain")
            }
            AnchorProblem::NoRecord => f.write_str(
                "row missing: the store's chain holds no record at the anchored checkpoint's seq",
            ),
            AnchorProblem::HashDiffers { chain } => {
                write!(f, "hash differs: the store's chain has {chain} here")
            }
            AnchorProblem::CountDiffers { chain } => write!(
                f,
                "count short: the store's chain holds {chain} records up to this seq"
            ),
            AnchorProblem::NotStored => f.write_str(
                "checkpoint missing: the store no longer holds this checkpoint (deleted)",
            ),
            AnchorProblem::Signature(why) => write!(f, "its signature is invalid: {why}"),
        }
    }
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
            Problem::CheckpointCount { signed, chain } => write!(
                f,
                "count differs: the checkpoint signs {signed} records up to this seq, the \
                 chain holds {chain} (rows missing)"
            ),
            Problem::HeadCount { head, chain } => write!(
                f,
                "count differs: the chain head counts {head} records, the chain holds {chain} \
                 up to it (rows missing)"
            ),
            Problem::Anchored {
                hash,
                count,
                problem,
            } => {
                write!(
                    f,
                    "the anchored checkpoint (hash {}",
                    crate::text::clip(hash, 64)
                )?;
                if let Some(n) = count {
                    write!(f, ", {n} records")?;
                }
                write!(f, ") does not hold: {problem}")
            }
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
    /// Checkpoints of an anchor held outside the store that the chain met.
    pub anchored: u64,
    /// The seq the newest of them covers.
    pub last_anchored: Option<i64>,
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
        }?;
        if let Some(seq) = self.last_anchored {
            write!(
                f,
                "; {} anchored checkpoints held, the newest at seq {seq}",
                self.anchored
            )?;
        }
        Ok(())
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
    /// Checkpoints of an anchor held outside the store.
    anchored: VecDeque<Checkpoint>,
    /// How many records the chain held before the walk's first one
    /// (`None`: not known yet; the first checkpoint that signs a count
    /// tells it).
    count_before: Option<u64>,
    head: Option<Head>,
    head_seen: bool,
    report: ChainReport,
}

impl<'k> Walker<'k> {
    /// A walk of `system`'s chain from `start` (the link before its first
    /// record: [`GENESIS`], or an anchor checkpoint's hash at `start_seq`),
    /// `start_count` records before it when known, checking `checkpoints`
    /// (sorted by seq) and, for a store, its `head`.
    pub fn new(
        system: &str,
        keys: &'k JwkSet,
        start: (ChainHash, Option<i64>, Option<u64>),
        checkpoints: Vec<Checkpoint>,
        head: Option<Head>,
    ) -> Self {
        let (start, start_seq, start_count) = start;
        Self {
            keys,
            prev: start,
            prev_seq: start_seq,
            pending: checkpoints.into(),
            anchored: VecDeque::new(),
            count_before: start_count,
            head: head.filter(|h| h.seq > 0),
            head_seen: false,
            report: ChainReport {
                system: system.to_string(),
                ..ChainReport::default()
            },
        }
    }

    /// Checks `anchored` (sorted by seq) too: checkpoints held outside
    /// the store, each of which the chain must reach and agree with.
    pub fn with_anchored(mut self, anchored: Vec<Checkpoint>) -> Self {
        self.anchored = anchored.into();
        self
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

    /// An anchored checkpoint's problem, at its seq.
    fn anchor_broken(
        &self,
        c: &Checkpoint,
        request_id: Option<&str>,
        problem: AnchorProblem,
    ) -> Box<Broken> {
        self.broken(
            c.seq,
            request_id,
            Problem::Anchored {
                hash: c.hash.clone(),
                count: c.count,
                problem,
            },
        )
    }

    /// An anchored checkpoint's signature.
    fn anchor_signed(&self, c: &Checkpoint, request_id: Option<&str>) -> Result<(), Box<Broken>> {
        c.verify_signature(self.keys)
            .map(|_| ())
            .map_err(|why| self.anchor_broken(c, request_id, AnchorProblem::Signature(why)))
    }

    /// Checkpoints before `seq`: none has a record (the walk is past them).
    fn passed(&mut self, seq: i64) -> Result<(), Box<Broken>> {
        if let Some(c) = self.pending.front().filter(|c| c.seq < seq) {
            self.signed(c, None)?;
            return Err(self.broken(c.seq, None, Problem::CheckpointWithoutRecord));
        }
        if let Some(c) = self.anchored.front().filter(|c| c.seq < seq) {
            self.anchor_signed(c, None)?;
            return Err(self.anchor_broken(c, None, AnchorProblem::NoRecord));
        }
        Ok(())
    }

    /// The records the chain holds up to the one just walked, when known.
    fn count_here(&self) -> Option<u64> {
        self.count_before.map(|n| n + self.report.records)
    }

    /// Checks a count signed at the record just walked: the count the
    /// chain holds there, or, while the walk does not know it yet (an
    /// export anchored at a checkpoint without a count), takes it as given.
    fn counted(&mut self, signed: u64) -> Result<(), u64> {
        match self.count_here() {
            Some(here) if here == signed => Ok(()),
            Some(here) => Err(here),
            None => match signed.checked_sub(self.report.records) {
                Some(before) => {
                    self.count_before = Some(before);
                    Ok(())
                }
                None => Err(self.report.records),
            },
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
            if let Some(chain) = self
                .count_here()
                .filter(|n| i64::try_from(*n) != Ok(head.count))
            {
                return Err(self.broken(
                    e.seq,
                    e.request_id,
                    Problem::HeadCount {
                        head: head.count,
                        chain,
                    },
                ));
            }
            self.head_seen = true;
        }
        let mut stored_here = false;
        while let Some(c) = self.pending.front().filter(|c| c.seq == e.seq).cloned() {
            self.signed(&c, e.request_id)?;
            if ChainHash::parse(&c.hash) != Some(hash) {
                return Err(self.broken(
                    e.seq,
                    e.request_id,
                    Problem::CheckpointMismatch {
                        signed: c.hash.clone(),
                        chain: hash,
                    },
                ));
            }
            if let Some(signed) = c.count {
                if let Err(chain) = self.counted(signed) {
                    return Err(self.broken(
                        e.seq,
                        e.request_id,
                        Problem::CheckpointCount { signed, chain },
                    ));
                }
            }
            stored_here = true;
            self.report.checkpoints += 1;
            self.report.last_checkpoint = Some(e.seq);
            self.report.uncovered = 0;
            self.pending.pop_front();
        }
        while let Some(c) = self.anchored.front().filter(|c| c.seq == e.seq).cloned() {
            self.anchor_signed(&c, e.request_id)?;
            if ChainHash::parse(&c.hash) != Some(hash) {
                let problem = AnchorProblem::HashDiffers { chain: hash };
                return Err(self.anchor_broken(&c, e.request_id, problem));
            }
            if let Some(signed) = c.count {
                if let Err(chain) = self.counted(signed) {
                    let problem = AnchorProblem::CountDiffers { chain };
                    return Err(self.anchor_broken(&c, e.request_id, problem));
                }
            }
            if !stored_here {
                return Err(self.anchor_broken(&c, e.request_id, AnchorProblem::NotStored));
            }
            self.report.anchored += 1;
            self.report.last_anchored = Some(e.seq);
            self.anchored.pop_front();
        }
        Ok(())
    }

    /// The end of the chain: checkpoints beyond its last record, or a head
    /// it did not meet, mark missing rows; an anchored checkpoint beyond
    /// it, a truncated chain.
    pub fn finish(self) -> Result<ChainReport, Box<Broken>> {
        if let Some(c) = self.pending.front() {
            self.signed(c, None)?;
            return Err(self.broken(c.seq, None, Problem::CheckpointWithoutRecord));
        }
        if let (Some(head), false) = (self.head, self.head_seen) {
            return Err(self.broken(head.seq, None, Problem::HeadMismatch { head }));
        }
        // Every anchored checkpoint left is past the last record (one
        // before it would have been met or passed): named at the newest.
        if let Some(c) = self.anchored.back() {
            self.anchor_signed(c, None)?;
            let problem = AnchorProblem::Beyond {
                last_seq: self.report.last_seq,
                records: self.count_here().unwrap_or(self.report.records),
            };
            return Err(self.anchor_broken(c, None, problem));
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
    verify_store_anchored(store, system, keys, None).await
}

/// [`verify_store`], with the checkpoints of an `anchor` held outside the
/// store checked too (module doc): a chain the anchor names and the store
/// does not hold is walked as empty, and so named as truncated.
pub async fn verify_store_anchored(
    store: &Store,
    system: Option<&str>,
    keys: &JwkSet,
    anchor: Option<&Anchored>,
) -> Result<Verification, AuditError> {
    if !store.has_table("audit_chain_head").await? {
        return Err(AuditError::NotChained);
    }
    let systems: Vec<String> = match system {
        Some(s) => vec![s.to_string()],
        None => {
            let mut all: Vec<String> = sqlx::query_scalar(
                "SELECT system FROM audit_trail UNION SELECT system FROM audit_chain_head
                 UNION SELECT system FROM audit_checkpoints ORDER BY 1",
            )
            .fetch_all(store.pool())
            .await?;
            all.extend(anchor.map(Anchored::systems).unwrap_or_default());
            all.sort();
            all.dedup();
            all
        }
    };
    let mut out = Verification::default();
    for system in systems {
        let anchored = anchor.map(|a| a.of(&system)).unwrap_or_default();
        match verify_chain(store, &system, keys, anchored).await? {
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
    anchored: Vec<Checkpoint>,
) -> Result<Result<ChainReport, Broken>, AuditError> {
    let head = chain::head(store, system).await?;
    let checkpoints = checkpoint::list(store, system, i64::MIN, i64::MAX).await?;
    let mut walker = Walker::new(system, keys, (GENESIS, None, Some(0)), checkpoints, head)
        .with_anchored(anchored);
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
