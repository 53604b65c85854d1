//! What this peer's own code does with a proposal one of its humans
//! approved (DESIGN.md §1 rule 3): the peer's [`LocalEffects`], next to
//! the data it owns.
//!
//! Only a peer that owns budgets (BuyerCorp's `budgets` dataset) has a
//! local action: an approved `set_budget` updates its own row, in the
//! transaction that records the approval. Every other peer has none
//! ([`NoLocalActions`]): approving is refused, the entry stays pending.

use std::sync::Arc;

use async_trait::async_trait;
use exchange::actions::{ActionError, LocalAction, NotExecutable};
use exchange::inbox::InboxEntry;
use exchange::inbox::{LocalEffects, NoLocalActions};
use sqlx::AnyConnection;

use crate::config::{DatasetConfig, PeerConfig};

/// A peer that owns a `budgets` table: it updates its own row.
#[derive(Debug, Clone, Copy, Default)]
pub struct OwnBudgets;

#[async_trait]
impl LocalEffects for OwnBudgets {
    fn receiver(&self) -> &'static str {
        "this system"
    }

    async fn apply(
        &self,
        conn: &mut AnyConnection,
        action: LocalAction,
        _entry: &InboxEntry,
        _approved_by: &str,
        _approved_at: &str,
    ) -> Result<String, ActionError> {
        let LocalAction::SetBudget { department, amount } = action;
        let done = sqlx::query("UPDATE budgets SET budget = $1 WHERE department = $2")
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
}

/// The local effects of the peer `config` describes: only a peer that owns
/// budgets can set one.
pub fn local_effects(config: &PeerConfig) -> Arc<dyn LocalEffects> {
    match config.dataset {
        DatasetConfig::Budgets { .. } => Arc::new(OwnBudgets),
        _ => Arc::new(NoLocalActions),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use exchange::inbox::{proposed_actions, Inbox, Origin, Status};
    use serde_json::json;

    fn origin(request_id: &str) -> Origin<'_> {
        Origin {
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
            request_id,
            from_system: "buyercorp",
            capability: "budget.consult",
        }
    }

    #[tokio::test]
    async fn a_budget_owner_updates_its_own_row_and_refuses_an_unknown_department() {
        // One file, as the peer runs: its own pool and the exchange's.
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("buyercorp.db");
        let pool = exchange::db::open_sqlite(&path).await.expect("store");
        crate::datasets::ensure_seeded(&pool, &DatasetConfig::Budgets { seed: 7 })
            .await
            .unwrap();
        let inbox = Inbox::open(
            exchange::db::open(path.as_path())
                .await
                .expect("exchange store"),
            Arc::new(OwnBudgets),
        );
        let actions = proposed_actions(&json!({"proposed_actions": [
            {"action_type": "set_budget", "target": "marketing", "parameters": {"amount": 123456}, "rationale": "x"},
            {"action_type": "set_budget", "target": "nowhere", "parameters": {"amount": 1}, "rationale": "y"},
        ]}));
        let ids = inbox.add_pending(&origin("r3"), &actions).await.unwrap();
        let budget = || async {
            sqlx::query_scalar::<_, f64>(
                "SELECT budget FROM budgets WHERE department = 'marketing'",
            )
            .fetch_one(&pool)
            .await
            .unwrap()
        };
        assert_ne!(budget().await, 123456.0);
        inbox.approve(ids[0], "dora").await.unwrap();
        assert_eq!(
            budget().await,
            123456.0,
            "approved: the owner's own row changed"
        );
        let e = inbox.approve(ids[1], "dora").await.unwrap_err();
        assert!(e.to_string().contains("no department \"nowhere\""), "{e}");
        assert_eq!(
            inbox.get(ids[1]).await.unwrap().status,
            Status::Pending,
            "a failed write rolls the approval back"
        );
    }
}
