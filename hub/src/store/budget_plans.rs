//! The hub's own local action: its budget plans (DESIGN.md §1 rule 3,
//! §2 "proposed action").
//!
//! The hub owns no budgets. When an operator approves a `set_budget` that
//! a consult answer proposed to the hub (a canvas drawer asked), the only
//! honest local write the hub has is a *plan*: "the operator adopted
//! BuyerCorp's proposal that marketing's budget be 150000", in the hub's
//! own `budget_plans` table. The hub never calls BuyerCorp to apply it: no
//! cross-system write exists. [`HubPlans`] is the hub's
//! [`LocalEffects`]; the inbox calls it inside the approval's transaction.

use async_trait::async_trait;
use exchange::actions::{ActionError, LocalAction};
use exchange::inbox::InboxEntry;
use exchange::inbox::LocalEffects;
use sqlx::Row;
use sqlx::{AnyConnection, AnyPool};

/// The hub as a receiver: approved budget changes go to its own plans.
#[derive(Debug, Clone, Copy, Default)]
pub struct HubPlans;

#[async_trait]
impl LocalEffects for HubPlans {
    fn receiver(&self) -> &'static str {
        "the hub"
    }

    async fn apply(
        &self,
        conn: &mut AnyConnection,
        action: LocalAction,
        entry: &InboxEntry,
        approved_by: &str,
        approved_at: &str,
    ) -> Result<String, ActionError> {
        let LocalAction::SetBudget { department, amount } = action;
        sqlx::query(
            "INSERT INTO budget_plans (department, amount, approved_by, approved_at, trace_id, inbox_id, proposed_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
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
pub async fn list(pool: &AnyPool) -> Result<Vec<BudgetPlan>, sqlx::Error> {
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
mod tests;
