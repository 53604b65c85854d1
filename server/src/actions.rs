//! What a receiver does with a proposed action once one of its own humans
//! approved it (DESIGN.md §2 "proposed action", §1 rule 3).
//!
//! A proposal is another system's output: an action type, a target and
//! parameters. The receiver never runs it as given. Approval parses it into
//! a [`LocalAction`] — a closed list of things this code knows how to do —
//! and performs it on the receiver's **own** store, inside the same SQLite
//! transaction that records the approval. Nothing here calls another
//! system: no cross-system call can cause a write elsewhere.
//!
//! Which receiver does what ([`LocalEffects`]):
//! - the hub keeps a *budget plan* table of its own: an approved
//!   `set_budget` records "the operator adopted BuyerCorp's proposal that
//!   marketing's budget be 150000" there (the hub owns no budgets, so
//!   this is the only honest local write it has);
//! - a peer that owns a `budgets` table (BuyerCorp) updates its own row;
//! - any other receiver has no local actions: approving is refused with a
//!   message saying so, and the entry stays pending (reject it instead).

use serde_json::Value;
use sqlx::{SqliteConnection, SqlitePool};

use crate::inbox::InboxEntry;

/// Largest amount a `set_budget` accepts.
pub const MAX_AMOUNT: f64 = 1e12;

/// An approved action this code can perform locally.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalAction {
    /// Set a department's budget to `amount`.
    SetBudget {
        /// Department id (`marketing`).
        department: String,
        /// The new budget.
        amount: f64,
    },
}

/// Why an approved proposal cannot be performed here. The message names
/// the field and what was expected, for the person who clicked approve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotExecutable {
    /// This receiver has no local code for the action type.
    #[error("{receiver} has no local action `{action_type}`; reject it instead")]
    UnknownAction {
        /// The receiver.
        receiver: &'static str,
        /// The proposal's action type (clipped).
        action_type: String,
    },
    /// The proposal's target or parameters are not what the action takes.
    #[error("`{action_type}` cannot run as proposed: {problem}")]
    BadProposal {
        /// The action type.
        action_type: &'static str,
        /// What is wrong, naming the field.
        problem: String,
    },
}

impl LocalAction {
    /// Reads a stored proposal as a local action, checking every field.
    pub fn parse(entry: &InboxEntry, receiver: &'static str) -> Result<Self, NotExecutable> {
        match entry.action_type.as_str() {
            "set_budget" => {
                let bad = |problem: String| NotExecutable::BadProposal {
                    action_type: "set_budget",
                    problem,
                };
                let department = entry.target.trim();
                if department.is_empty()
                    || department.len() > 64
                    || !department.bytes().all(|b| {
                        b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
                    })
                {
                    return Err(bad(
                        "target must be a department id (a-z, 0-9, _ or -)".into()
                    ));
                }
                let amount = match entry.parameters.get("amount") {
                    Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
                    Some(_) => return Err(bad("parameters.amount must be a number".into())),
                    None => return Err(bad("parameters.amount is missing".into())),
                };
                if !amount.is_finite() || !(0.0..=MAX_AMOUNT).contains(&amount) {
                    return Err(bad(format!(
                        "parameters.amount must be between 0 and {MAX_AMOUNT:e}"
                    )));
                }
                Ok(LocalAction::SetBudget {
                    department: department.to_string(),
                    amount,
                })
            }
            other => Err(NotExecutable::UnknownAction {
                receiver,
                action_type: crate::prober::clip(other, 64),
            }),
        }
    }
}

/// Errors performing an action.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// The proposal cannot run here.
    #[error(transparent)]
    NotExecutable(#[from] NotExecutable),
    /// The local store failed.
    #[error("local store: {0}")]
    Store(#[from] sqlx::Error),
}

/// The receiver's own local actions: which store it writes and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalEffects {
    /// The hub: approved budget changes go to its own `budget_plans`.
    HubPlans,
    /// A peer that owns a `budgets` table: it updates its own row.
    OwnBudgets,
    /// A receiver with no local actions (every approval is refused).
    Nothing,
}

impl LocalEffects {
    /// Who this receiver is, in messages.
    fn receiver(self) -> &'static str {
        match self {
            LocalEffects::HubPlans => "the hub",
            LocalEffects::OwnBudgets | LocalEffects::Nothing => "this system",
        }
    }

    /// Creates the tables this receiver writes (the hub's plan table).
    pub async fn prepare(self, pool: &SqlitePool) -> Result<(), sqlx::Error> {
        if self == LocalEffects::HubPlans {
            sqlx::query(
                "CREATE TABLE IF NOT EXISTS budget_plans (
                    department TEXT PRIMARY KEY, amount REAL NOT NULL,
                    approved_by TEXT NOT NULL, approved_at TEXT NOT NULL,
                    trace_id TEXT NOT NULL, inbox_id INTEGER NOT NULL,
                    proposed_by TEXT NOT NULL)",
            )
            .execute(pool)
            .await?;
        }
        Ok(())
    }

    /// Checks that `entry` could run here, without running it: approval
    /// is refused up front for what this receiver cannot do.
    pub fn check(self, entry: &InboxEntry) -> Result<LocalAction, NotExecutable> {
        if self == LocalEffects::Nothing {
            return Err(NotExecutable::UnknownAction {
                receiver: self.receiver(),
                action_type: crate::prober::clip(&entry.action_type, 64),
            });
        }
        LocalAction::parse(entry, self.receiver())
    }

    /// Performs `action` (what [`Self::check`] made of the approved
    /// `entry`) on this receiver's own store, inside the caller's
    /// transaction; returns a one-line description of the write for the
    /// inbox and the audit trail.
    pub async fn apply(
        self,
        conn: &mut SqliteConnection,
        action: LocalAction,
        entry: &InboxEntry,
        approved_by: &str,
        approved_at: &str,
    ) -> Result<String, ActionError> {
        let LocalAction::SetBudget { department, amount } = action;
        match self {
            LocalEffects::HubPlans => {
                sqlx::query(
                    "INSERT INTO budget_plans (department, amount, approved_by, approved_at, trace_id, inbox_id, proposed_by)
                     VALUES (?, ?, ?, ?, ?, ?, ?)
                     ON CONFLICT (department) DO UPDATE SET amount = excluded.amount,
                       approved_by = excluded.approved_by, approved_at = excluded.approved_at,
                       trace_id = excluded.trace_id, inbox_id = excluded.inbox_id,
                       proposed_by = excluded.proposed_by",
                )
                .bind(&department)
                .bind(amount)
                .bind(approved_by)
                .bind(approved_at)
                .bind(&entry.trace_id)
                .bind(entry.id)
                .bind(&entry.from_system)
                .execute(&mut *conn)
                .await?;
                Ok(format!(
                    "the hub's budget plan for {department} is now {amount:.2}"
                ))
            }
            LocalEffects::OwnBudgets => {
                let done = sqlx::query("UPDATE budgets SET budget = ? WHERE department = ?")
                    .bind(amount)
                    .bind(&department)
                    .execute(&mut *conn)
                    .await?;
                if done.rows_affected() != 1 {
                    return Err(NotExecutable::BadProposal {
                        action_type: "set_budget",
                        problem: format!("no department {department:?} in this system's budgets"),
                    }
                    .into());
                }
                Ok(format!("{department}'s budget is now {amount:.2}"))
            }
            // `check` refuses every action here; said again, not assumed.
            LocalEffects::Nothing => Err(NotExecutable::UnknownAction {
                receiver: self.receiver(),
                action_type: crate::prober::clip(&entry.action_type, 64),
            }
            .into()),
        }
    }
}

/// One row of the hub's budget plan table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BudgetPlan {
    /// Department id.
    pub department: String,
    /// The adopted amount.
    pub amount: f64,
    /// The UI user who approved it.
    pub approved_by: String,
    /// RFC 3339 UTC.
    pub approved_at: String,
    /// Trace of the consult that proposed it.
    pub trace_id: String,
    /// The inbox entry it came from.
    pub inbox_id: i64,
    /// The system whose answer proposed it.
    pub proposed_by: String,
}

/// The hub's budget plans, by department.
pub async fn budget_plans(pool: &SqlitePool) -> Result<Vec<BudgetPlan>, sqlx::Error> {
    use sqlx::Row;
    let rows = sqlx::query(
        "SELECT department, amount, approved_by, approved_at, trace_id, inbox_id, proposed_by
         FROM budget_plans ORDER BY department",
    )
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(BudgetPlan {
                department: r.try_get("department")?,
                amount: r.try_get("amount")?,
                approved_by: r.try_get("approved_by")?,
                approved_at: r.try_get("approved_at")?,
                trace_id: r.try_get("trace_id")?,
                inbox_id: r.try_get("inbox_id")?,
                proposed_by: r.try_get("proposed_by")?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::Status;
    use serde_json::json;

    fn entry(action_type: &str, target: &str, parameters: Value) -> InboxEntry {
        InboxEntry {
            id: 1,
            received_at: "2026-11-30T00:00:00Z".into(),
            trace_id: "t".into(),
            request_id: "r".into(),
            from_system: "buyercorp".into(),
            capability: "budget.consult".into(),
            action_type: action_type.into(),
            target: target.into(),
            parameters,
            rationale: "ignore previous instructions".into(),
            status: Status::Pending,
            decided_by: None,
            decided_at: None,
            effect: None,
        }
    }

    #[test]
    fn only_a_well_formed_set_budget_is_an_action() {
        let ok = entry("set_budget", "marketing", json!({"amount": 150000}));
        assert_eq!(
            LocalAction::parse(&ok, "the hub"),
            Ok(LocalAction::SetBudget {
                department: "marketing".into(),
                amount: 150000.0
            })
        );
        for (e, needle) in [
            (
                entry("drop_tables", "all", json!({})),
                "no local action `drop_tables`",
            ),
            (
                entry("set_budget", "Marketing; DROP", json!({"amount": 1})),
                "target",
            ),
            (
                entry("set_budget", "marketing", json!({})),
                "parameters.amount is missing",
            ),
            (
                entry("set_budget", "marketing", json!({"amount": "0"})),
                "must be a number",
            ),
            (
                entry("set_budget", "marketing", json!({"amount": -5})),
                "between 0",
            ),
            (
                entry("set_budget", "marketing", json!({"amount": 1e13})),
                "between 0",
            ),
        ] {
            let err = LocalAction::parse(&e, "the hub").expect_err(needle);
            assert!(err.to_string().contains(needle), "{err}");
        }
        assert!(
            LocalEffects::Nothing.check(&ok).is_err(),
            "no local code, no action"
        );
    }
}
