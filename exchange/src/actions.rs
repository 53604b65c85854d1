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
//! the inbox's [`crate::inbox::LocalEffects`] next to the store it owns. The hub keeps its budget
//! plans (`hub::store::budget_plans`), a budget-owning peer updates its own
//! row (`peer::approvals`); a receiver with no local actions uses
//! [`crate::inbox::NoLocalActions`] and every approval is refused with a message saying
//! so (the entry stays pending: reject it instead). This module knows the
//! vocabulary of actions, never a system's tables.

use crate::text::clip;
use serde_json::Value;

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
    pub fn parse(
        action_type: &str,
        target: &str,
        parameters: &Value,
        receiver: &'static str,
    ) -> Result<Self, NotExecutable> {
        match action_type {
            "set_budget" => {
                let bad = |problem: String| NotExecutable::BadProposal {
                    action_type: "set_budget",
                    problem,
                };
                let department = target.trim();
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
                let amount = match parameters.get("amount") {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::{InboxEntry, LocalEffects, NoLocalActions, Status};
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
            LocalAction::parse(&ok.action_type, &ok.target, &ok.parameters, "the hub"),
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
            let err = LocalAction::parse(&e.action_type, &e.target, &e.parameters, "the hub")
                .expect_err(needle);
            assert!(err.to_string().contains(needle), "{err}");
        }
        assert!(
            NoLocalActions.check(&ok).is_err(),
            "no local code, no action"
        );
    }
}
