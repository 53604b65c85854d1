//! An approval inbox (DESIGN.md §1 rule 3, §2 "proposed action").
//!
//! A consult answer may carry proposed actions. The system that asked keeps
//! them in its own inbox, pending, with the trace id of the call that
//! produced them: a peer in its own store when the peer asked, the hub in
//! the hub's database when the hub asked (a canvas drawer's consult).
//! Nothing runs a proposal as given: approving records who decided and
//! when and, in the same transaction, lets the receiver's own code
//! ([`LocalEffects`], implemented by each receiver next to
//! its own store) perform its own local write. An
//! approval the receiver cannot perform is refused and stays pending;
//! rejecting writes nothing but the decision.

use std::sync::Arc;

use crate::actions::{ActionError, LocalAction, NotExecutable};
use crate::db::Store;
use crate::text::clip;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::AnyConnection;
use sqlx::Row;

/// Where an inbox entry stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for a human.
    Pending,
    /// A human approved it (nothing ran).
    Approved,
    /// A human rejected it.
    Rejected,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Rejected => "rejected",
        }
    }
    fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Status::Pending),
            "approved" => Some(Status::Approved),
            "rejected" => Some(Status::Rejected),
            _ => None,
        }
    }
}

/// A proposed action as a consult answer carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposedAction {
    /// What to do (`set_budget`).
    pub action_type: String,
    /// What to do it to (`marketing`).
    pub target: String,
    #[serde(default)]
    /// Arguments (`{"amount": 150000}`).
    pub parameters: Value,
    #[serde(default)]
    /// Why, in the proposer's words (untrusted text).
    pub rationale: String,
}

/// One entry of the inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxEntry {
    /// Local id, for approve/reject.
    pub id: i64,
    /// RFC 3339 UTC.
    pub received_at: String,
    /// Trace of the consult that proposed it.
    pub trace_id: String,
    /// The request id of the consult that proposed it (dedupe key).
    pub request_id: String,
    /// The system whose answer proposed it.
    pub from_system: String,
    /// The consult capability that answered.
    pub capability: String,
    /// What to do (`set_budget`).
    pub action_type: String,
    /// What to do it to.
    pub target: String,
    /// Arguments of the action.
    pub parameters: Value,
    /// Untrusted text from another system: show it, never act on it.
    pub rationale: String,
    /// Pending until a human decides.
    pub status: Status,
    /// Who decided.
    pub decided_by: Option<String>,
    /// When (RFC 3339 UTC).
    pub decided_at: Option<String>,
    /// The local write the approval performed (approved entries only).
    pub effect: Option<String>,
}

/// Errors of the inbox.
#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    #[error("inbox store: {0}")]
    /// The store failed.
    Store(#[from] sqlx::Error),
    #[error("no inbox entry {0}")]
    /// No such entry.
    NotFound(i64),
    #[error("inbox entry {id} is already {status:?}; it cannot become {wanted:?}")]
    /// The entry was already decided the other way.
    AlreadyDecided {
        /// The entry.
        id: i64,
        /// Its decision.
        status: Status,
        /// The decision asked for.
        wanted: Status,
    },
    #[error("inbox entry {0} holds an unreadable row")]
    /// A stored row cannot be read back.
    Corrupt(i64),
    #[error("a decision needs the name of who decided")]
    /// The decider's name is empty.
    NoDecider,
    #[error("inbox entry {id} cannot be approved here: {why}")]
    /// The receiver cannot perform this proposal; it stays pending.
    NotExecutable {
        /// The entry.
        id: i64,
        /// What this receiver cannot do.
        why: NotExecutable,
    },
}

/// The answer to a decision: the entry as it now stands, and whether this
/// call took the decision (`false`: it had already been taken the same way,
/// so nothing was written and nothing needs recording again).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decided {
    /// The entry after the decision.
    #[serde(flatten)]
    pub entry: InboxEntry,
    /// True only for the call that changed the entry.
    pub decided_now: bool,
}

/// Makes the trail line of a decision from the decided entry
/// ([`Inbox::approve_noted`], [`Inbox::reject_noted`]); the line's
/// `system` is written as given.
pub type DecisionNote<'a> = &'a (dyn Fn(&InboxEntry) -> crate::audit::AuditRecord + Send + Sync);

/// Where the call that proposed an action came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin<'a> {
    /// Trace of the call.
    pub trace_id: &'a str,
    /// Request id of the call.
    pub request_id: &'a str,
    /// The provider that answered.
    pub from_system: &'a str,
    /// The capability that answered.
    pub capability: &'a str,
}

/// The inbox table inside the receiver's own store, with the local
/// actions an approval may perform there.
#[derive(Debug, Clone)]
pub struct Inbox {
    store: Store,
    effects: Arc<dyn LocalEffects>,
}

impl Inbox {
    /// The inbox inside `store` (migrated: `crate::db::SCHEMA`);
    /// `effects` is what this receiver's own code does with an approved
    /// proposal.
    pub fn open(store: Store, effects: Arc<dyn LocalEffects>) -> Self {
        Self { store, effects }
    }

    /// Stores the proposals of one answer as pending. A replayed answer
    /// (same provider and request id) adds nothing twice. Returns the ids
    /// of the entries, new or existing.
    pub async fn add_pending(
        &self,
        origin: &Origin<'_>,
        actions: &[ProposedAction],
    ) -> Result<Vec<i64>, InboxError> {
        let mut ids = Vec::with_capacity(actions.len());
        for (position, a) in actions.iter().enumerate() {
            let position = i64::try_from(position).unwrap_or(i64::MAX);
            sqlx::query(
                "INSERT INTO approval_inbox (received_at, trace_id, request_id, position,
                    from_system, capability, action_type, target, parameters_json, rationale, status)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending')
                 ON CONFLICT (from_system, request_id, position) DO NOTHING",
            )
            .bind(crate::audit::now())
            .bind(origin.trace_id)
            .bind(origin.request_id)
            .bind(position)
            .bind(origin.from_system)
            .bind(origin.capability)
            .bind(&a.action_type)
            .bind(&a.target)
            .bind(a.parameters.to_string())
            .bind(&a.rationale)
            .execute(self.store.pool())
            .await?;
            let id: i64 = sqlx::query_scalar(
                "SELECT id FROM approval_inbox
                 WHERE from_system = $1 AND request_id = $2 AND position = $3",
            )
            .bind(origin.from_system)
            .bind(origin.request_id)
            .bind(position)
            .fetch_one(self.store.pool())
            .await?;
            ids.push(id);
        }
        Ok(ids)
    }

    /// The store this inbox lives in (the receiver's own).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// How many entries wait for a decision.
    pub async fn pending_count(&self) -> Result<u64, InboxError> {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM approval_inbox WHERE status = 'pending'")
                .fetch_one(self.store.pool())
                .await?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// How many proposals a human decided, per (from system, capability):
    /// `(from_system, capability, approved, rejected)`. The human
    /// interventions of the hub's metrics (DESIGN.md §6), read from the
    /// store.
    pub async fn decision_counts(&self) -> Result<Vec<(String, String, u64, u64)>, InboxError> {
        let rows: Vec<(String, String, i64, i64)> = sqlx::query_as(
            "SELECT from_system, capability,
                    COUNT(CASE WHEN status = 'approved' THEN 1 END),
                    COUNT(CASE WHEN status = 'rejected' THEN 1 END)
             FROM approval_inbox GROUP BY from_system, capability",
        )
        .fetch_all(self.store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(s, c, a, r)| {
                (
                    s,
                    c,
                    u64::try_from(a).unwrap_or(0),
                    u64::try_from(r).unwrap_or(0),
                )
            })
            .collect())
    }

    /// Entries, newest first, optionally only those in `status`.
    pub async fn list(&self, status: Option<Status>) -> Result<Vec<InboxEntry>, InboxError> {
        let rows = match status {
            Some(s) => {
                sqlx::query(&format!("{SELECT} WHERE status = $1 ORDER BY id DESC"))
                    .bind(s.as_str())
                    .fetch_all(self.store.pool())
                    .await?
            }
            None => {
                sqlx::query(&format!("{SELECT} ORDER BY id DESC"))
                    .fetch_all(self.store.pool())
                    .await?
            }
        };
        rows.iter().map(read_entry).collect()
    }

    /// One entry.
    pub async fn get(&self, id: i64) -> Result<InboxEntry, InboxError> {
        let row = sqlx::query(&format!("{SELECT} WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.store.pool())
            .await?
            .ok_or(InboxError::NotFound(id))?;
        read_entry(&row)
    }

    /// Approves a pending entry and performs the receiver's own local
    /// write, in one transaction: either both happen or neither. Approving
    /// an approved entry again is a no-op that returns it unchanged (first
    /// decider, time and write stay); approving a rejected one is an
    /// error; a proposal this receiver cannot perform is refused and stays
    /// pending.
    pub async fn approve(&self, id: i64, by: &str) -> Result<Decided, InboxError> {
        self.approve_noted(id, by, None).await
    }

    /// [`Inbox::approve`], and, when this call decides, the line `note`
    /// makes of the decided entry appended to the trail in the same
    /// transaction: a process killed after the decision cannot leave it
    /// without its record (a retry finds it decided and writes nothing).
    pub async fn approve_noted(
        &self,
        id: i64,
        by: &str,
        note: Option<DecisionNote<'_>>,
    ) -> Result<Decided, InboxError> {
        let by = by.trim();
        if by.is_empty() {
            return Err(InboxError::NoDecider);
        }
        let current = self.get(id).await?;
        let mut decided_now = false;
        if current.status == Status::Pending {
            let action = self
                .effects
                .check(&current)
                .map_err(|why| InboxError::NotExecutable { id, why })?;
            let at = crate::audit::now();
            let mut tx = self.store.pool().begin().await?;
            // Conditional: two concurrent deciders cannot both win.
            let won = sqlx::query(
                "UPDATE approval_inbox SET status = 'approved', decided_by = $1, decided_at = $2
                 WHERE id = $3 AND status = 'pending'",
            )
            .bind(by)
            .bind(&at)
            .bind(id)
            .execute(&mut *tx)
            .await?
            .rows_affected()
                == 1;
            if won {
                let effect = self
                    .effects
                    .apply(&mut tx, action, &current, by, &at)
                    .await
                    .map_err(|e| match e {
                        ActionError::NotExecutable(why) => InboxError::NotExecutable { id, why },
                        ActionError::Store(e) => InboxError::Store(e),
                    })?;
                sqlx::query(
                    "INSERT INTO inbox_effects (inbox_id, applied_at, effect) VALUES ($1, $2, $3)",
                )
                .bind(id)
                .bind(&at)
                .bind(&effect)
                .execute(&mut *tx)
                .await?;
                if let Some(note) = note {
                    let decided = InboxEntry {
                        status: Status::Approved,
                        decided_by: Some(by.to_string()),
                        decided_at: Some(at.clone()),
                        effect: Some(effect),
                        ..current.clone()
                    };
                    crate::audit::insert_on(&mut tx, [&note(&decided)]).await?;
                }
                tx.commit().await?;
            }
            decided_now = won;
        }
        self.expect(id, Status::Approved, decided_now).await
    }

    /// Rejects a pending entry: records the decision, writes nothing else.
    /// Idempotent like [`Inbox::approve`].
    pub async fn reject(&self, id: i64, by: &str) -> Result<Decided, InboxError> {
        self.reject_noted(id, by, None).await
    }

    /// [`Inbox::reject`] with its trail line in the same transaction, like
    /// [`Inbox::approve_noted`].
    pub async fn reject_noted(
        &self,
        id: i64,
        by: &str,
        note: Option<DecisionNote<'_>>,
    ) -> Result<Decided, InboxError> {
        let by = by.trim();
        if by.is_empty() {
            return Err(InboxError::NoDecider);
        }
        // Read before the transaction: a one-connection store (memory)
        // could not read beside it.
        let current = self.get(id).await?;
        let at = crate::audit::now();
        let mut tx = self.store.pool().begin().await?;
        let won = sqlx::query(
            "UPDATE approval_inbox SET status = 'rejected', decided_by = $1, decided_at = $2
             WHERE id = $3 AND status = 'pending'",
        )
        .bind(by)
        .bind(&at)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if let (true, Some(note)) = (won, note) {
            let decided = InboxEntry {
                status: Status::Rejected,
                decided_by: Some(by.to_string()),
                decided_at: Some(at),
                ..current
            };
            crate::audit::insert_on(&mut tx, [&note(&decided)]).await?;
        }
        tx.commit().await?;
        self.expect(id, Status::Rejected, won).await
    }

    /// The entry, if it ended in `wanted`; otherwise who decided first.
    async fn expect(
        &self,
        id: i64,
        wanted: Status,
        decided_now: bool,
    ) -> Result<Decided, InboxError> {
        let entry = self.get(id).await?;
        if entry.status == wanted {
            Ok(Decided { entry, decided_now })
        } else {
            Err(InboxError::AlreadyDecided {
                id,
                status: entry.status,
                wanted,
            })
        }
    }
}

const SELECT: &str =
    "SELECT id, received_at, trace_id, request_id, from_system, capability, action_type,
    target, parameters_json, rationale, status, decided_by, decided_at, effect
    FROM approval_inbox LEFT JOIN inbox_effects ON inbox_effects.inbox_id = approval_inbox.id";

fn read_entry(row: &AnyRow) -> Result<InboxEntry, InboxError> {
    let id: i64 = row.try_get("id")?;
    let status: String = row.try_get("status")?;
    let params: String = row.try_get("parameters_json")?;
    Ok(InboxEntry {
        id,
        received_at: row.try_get("received_at")?,
        trace_id: row.try_get("trace_id")?,
        request_id: row.try_get("request_id")?,
        from_system: row.try_get("from_system")?,
        capability: row.try_get("capability")?,
        action_type: row.try_get("action_type")?,
        target: row.try_get("target")?,
        parameters: serde_json::from_str(&params).map_err(|_| InboxError::Corrupt(id))?,
        rationale: row.try_get("rationale")?,
        status: Status::parse(&status).ok_or(InboxError::Corrupt(id))?,
        decided_by: row.try_get("decided_by")?,
        decided_at: row.try_get("decided_at")?,
        effect: row.try_get("effect")?,
    })
}

/// The proposed actions inside a consult result, skipping malformed ones
/// (they are another system's output: never trusted to be well-formed).
pub fn proposed_actions(result: &Value) -> Vec<ProposedAction> {
    result
        .get("proposed_actions")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|a| serde_json::from_value::<ProposedAction>(a.clone()).ok())
                .filter(|a| {
                    !a.action_type.is_empty() && a.action_type.len() <= 64 && a.target.len() <= 128
                })
                .take(20)
                .collect()
        })
        .unwrap_or_default()
}

/// A receiver's own local actions: which store it writes and how. The
/// inbox calls it inside the transaction that records an approval, so the
/// decision and the write happen together or not at all.
#[async_trait::async_trait]
pub trait LocalEffects: Send + Sync + std::fmt::Debug {
    /// Who this receiver is, in messages (`the hub`, `this system`).
    fn receiver(&self) -> &'static str;

    /// Checks that `entry` could run here, without running it: approval
    /// is refused up front for what this receiver cannot do.
    fn check(&self, entry: &InboxEntry) -> Result<LocalAction, NotExecutable> {
        LocalAction::parse(
            &entry.action_type,
            &entry.target,
            &entry.parameters,
            self.receiver(),
        )
    }

    /// Performs `action` (what [`Self::check`] made of the approved
    /// `entry`) on this receiver's own store, inside the caller's
    /// transaction; returns a one-line description of the write for the
    /// inbox and the audit trail. The tables it writes are the receiver's
    /// own schema's.
    async fn apply(
        &self,
        conn: &mut AnyConnection,
        action: LocalAction,
        entry: &InboxEntry,
        approved_by: &str,
        approved_at: &str,
    ) -> Result<String, ActionError>;
}

/// A receiver with no local actions: every approval is refused, naming
/// the action type (the entry stays pending; reject it instead).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLocalActions;

impl NoLocalActions {
    fn refuse(entry: &InboxEntry) -> NotExecutable {
        NotExecutable::UnknownAction {
            receiver: "this system",
            action_type: clip(&entry.action_type, 64),
        }
    }
}

#[async_trait::async_trait]
impl LocalEffects for NoLocalActions {
    fn receiver(&self) -> &'static str {
        "this system"
    }

    fn check(&self, entry: &InboxEntry) -> Result<LocalAction, NotExecutable> {
        Err(Self::refuse(entry))
    }

    async fn apply(
        &self,
        _conn: &mut AnyConnection,
        _action: LocalAction,
        entry: &InboxEntry,
        _approved_by: &str,
        _approved_at: &str,
    ) -> Result<String, ActionError> {
        // `check` refuses every action here; said again, not assumed.
        Err(Self::refuse(entry).into())
    }
}

#[cfg(test)]
#[path = "inbox_tests.rs"]
mod tests;
