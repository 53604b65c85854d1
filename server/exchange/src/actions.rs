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
//! Which receiver does what is the receiver's own code: it implements
//! [`LocalEffects`] next to the store it owns. The hub keeps its budget
//! plans (`server::budget_plans`), a budget-owning peer updates its own
//! row (`peer::approvals`); a receiver with no local actions uses
//! [`NoLocalActions`] and every approval is refused with a message saying
//! so (the entry stays pending: reject it instead). This module knows the
//! vocabulary of actions, never a system's tables.

use serde_json::Value;
use sqlx::{SqliteConnection, SqlitePool};

use crate::inbox::InboxEntry;
use crate::text::clip;

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
                action_type: clip(other, 64),
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

/// A receiver's own local actions: which store it writes and how. The
/// inbox calls it inside the transaction that records an approval, so the
/// decision and the write happen together or not at all.
#[async_trait::async_trait]
pub trait LocalEffects: Send + Sync + std::fmt::Debug {
    /// Who this receiver is, in messages (`the hub`, `this system`).
    fn receiver(&self) -> &'static str;

    /// Creates the tables this receiver writes, if any.
    async fn prepare(&self, _pool: &SqlitePool) -> Result<(), sqlx::Error> {
        Ok(())
    }

    /// Checks that `entry` could run here, without running it: approval
    /// is refused up front for what this receiver cannot do.
    fn check(&self, entry: &InboxEntry) -> Result<LocalAction, NotExecutable> {
        LocalAction::parse(entry, self.receiver())
    }

    /// Performs `action` (what [`Self::check`] made of the approved
    /// `entry`) on this receiver's own store, inside the caller's
    /// transaction; returns a one-line description of the write for the
    /// inbox and the audit trail.
    async fn apply(
        &self,
        conn: &mut SqliteConnection,
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
        _conn: &mut SqliteConnection,
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
            NoLocalActions.check(&ok).is_err(),
            "no local code, no action"
        );
    }
}
