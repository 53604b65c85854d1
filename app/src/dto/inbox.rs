//! The hub's approval inbox as a browser sees it (DESIGN.md §2, "proposed
//! action"): the proposed actions, where each stands, and the budget plan
//! rows approvals wrote. Built by the hub's `web::bff::inbox_view`.

use serde::{Deserialize, Serialize};

use super::untrusted::UntrustedText;

/// Where a proposed action stands in its receiver's approval inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Rejected,
}

impl ApprovalStatus {
    /// The wire spelling, also the pages' `data-status`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Rejected => "rejected",
        }
    }
}

/// A proposed action from a consult answer, as stored in an inbox. It runs
/// nowhere until a logged-in human of the receiver approves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedActionView {
    pub id: String,
    pub action_type: String,
    pub target: String,
    /// The parameters as compact JSON text.
    pub parameters: String,
    pub rationale: UntrustedText,
    pub status: ApprovalStatus,
    /// The system whose inbox holds it (the hub's id when the hub asked).
    pub inbox: String,
    pub trace_id: String,
    /// The UI user who approved or rejected it.
    #[serde(default)]
    pub decided_by: Option<String>,
    /// When (RFC 3339 UTC).
    #[serde(default)]
    pub decided_at: Option<String>,
    /// The receiver's own local write the approval performed.
    #[serde(default)]
    pub effect: Option<String>,
}

/// One row of the hub's own budget plan: what an approved `set_budget`
/// wrote locally (the hub never writes at the proposing system).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetPlanView {
    pub department: String,
    pub amount: f64,
    pub approved_by: String,
    pub approved_at: String,
    /// The system whose consult answer proposed it.
    pub proposed_by: String,
    pub trace_id: String,
    /// The inbox entry it came from.
    pub inbox_id: String,
}

/// `GET /api/inbox/page`: the hub's inbox page in one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxPageView {
    /// The hub's id (whose inbox this is).
    pub owner: String,
    /// Newest first.
    pub entries: Vec<ProposedActionView>,
    /// The hub's own local state that approvals write.
    pub budget_plans: Vec<BudgetPlanView>,
}
