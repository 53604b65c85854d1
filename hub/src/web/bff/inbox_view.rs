//! The hub's approval inbox as a browser sees it (DESIGN.md §2 "proposed
//! action"): the hub's own data, built here, in the BFF.
//!
//! An inbox entry is not peer data on its way to a browser: it is what the
//! hub stored from a *redacted* answer (`redaction::proposed_actions`: only
//! fields the contract keeps), plus the hub's own decision and local write.
//! Its free text (the rationale) is still another system's words, so it is
//! shown as untrusted text from the proposer again
//! (`redaction::view::untrusted_text`). Budget plans are rows the hub's
//! own code validated (`crate::store::budget_plans`).

use app::dto::{ApprovalStatus, BudgetPlanView, InboxPageView, ProposedActionView};
use exchange::inbox::{InboxEntry, Status};
use exchange::text::clip;
use exchange::untrusted::Untrusted;

use crate::redaction::view::untrusted_text;
use crate::store::budget_plans::BudgetPlan;

/// Longest rationale an entry shows.
const MAX_RATIONALE_CHARS: usize = 2_000;

/// One inbox entry as a browser sees it: the rationale as untrusted text
/// from the system that proposed it.
pub fn action_view(entry: &InboxEntry, inbox_owner: &str) -> ProposedActionView {
    ProposedActionView {
        id: entry.id.to_string(),
        action_type: clip(&entry.action_type, 64),
        target: clip(&entry.target, 128),
        parameters: clip(&entry.parameters.to_string(), 1_000),
        rationale: untrusted_text(
            &Untrusted::new(entry.rationale.as_str(), entry.from_system.as_str()),
            MAX_RATIONALE_CHARS,
        ),
        status: match entry.status {
            Status::Pending => ApprovalStatus::Pending,
            Status::Approved => ApprovalStatus::Approved,
            Status::Rejected => ApprovalStatus::Rejected,
        },
        inbox: inbox_owner.to_string(),
        trace_id: entry.trace_id.clone(),
        decided_by: entry.decided_by.as_deref().map(|s| clip(s, 64)),
        decided_at: entry.decided_at.clone(),
        effect: entry.effect.as_deref().map(|s| clip(s, 200)),
    }
}

/// Every entry, in the order given.
pub fn inbox_view(entries: &[InboxEntry], inbox_owner: &str) -> Vec<ProposedActionView> {
    entries
        .iter()
        .map(|e| action_view(e, inbox_owner))
        .collect()
}

/// The hub's inbox page: its entries and the plan rows approvals wrote.
pub fn inbox_page_view(
    entries: &[InboxEntry],
    inbox_owner: &str,
    plans: &[BudgetPlan],
) -> InboxPageView {
    InboxPageView {
        owner: inbox_owner.to_string(),
        entries: inbox_view(entries, inbox_owner),
        budget_plans: plans
            .iter()
            .map(|p| BudgetPlanView {
                department: clip(&p.department, 64),
                amount: p.amount,
                approved_by: clip(&p.approved_by, 64),
                approved_at: p.approved_at.clone(),
                proposed_by: clip(&p.proposed_by, 64),
                trace_id: p.trace_id.clone(),
                inbox_id: p.inbox_id.to_string(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inbox_entries_show_their_rationale_as_untrusted() {
        let entry = InboxEntry {
            id: 7,
            received_at: "2025-01-01T00:00:00Z".into(),
            trace_id: "t".into(),
            request_id: "r".into(),
            from_system: "buyercorp".into(),
            capability: "budget.consult".into(),
            action_type: "set_budget".into(),
            target: "marketing".into(),
            parameters: json!({"amount": 0}),
            rationale: "approve me".into(),
            status: Status::Pending,
            decided_by: None,
            decided_at: None,
            effect: None,
        };
        let v = inbox_view(std::slice::from_ref(&entry), "hub");
        let v = &v[0];
        assert_eq!(v.rationale.from, "buyercorp");
        assert_eq!(v.rationale.text, "approve me");
        assert_eq!(v.status, ApprovalStatus::Pending);
        assert_eq!(v.parameters, "{\"amount\":0}");
    }
}
