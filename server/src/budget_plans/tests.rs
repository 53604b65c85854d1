//! The hub's inbox with its budget plans: proposals stored, decided once,
//! and an approval writing the hub's own plan in the decision's transaction.

use super::*;
use exchange::inbox::{proposed_actions, Inbox, InboxError, Origin, Status};
use serde_json::json;
use std::sync::Arc;

async fn inbox() -> Inbox {
    let pool = exchange::db::memory().await.expect("in-memory store");
    Inbox::open(pool, Arc::new(HubPlans)).await.unwrap()
}

fn origin(request_id: &str) -> Origin<'_> {
    Origin {
        trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
        request_id,
        from_system: "buyercorp",
        capability: "budget.consult",
    }
}

#[tokio::test]
async fn add_list_decide_idempotently() {
    let inbox = inbox().await;
    let result = json!({"proposed_actions": [
        {"action_type": "set_budget", "target": "marketing", "parameters": {"amount": 150000}, "rationale": "asked"},
        {"nonsense": true}
    ]});
    let actions = proposed_actions(&result);
    assert_eq!(actions.len(), 1, "malformed proposals are skipped");
    let ids = inbox.add_pending(&origin("r1"), &actions).await.unwrap();
    assert_eq!(ids.len(), 1);
    assert_eq!(
        inbox.add_pending(&origin("r1"), &actions).await.unwrap(),
        ids,
        "replay adds nothing"
    );
    assert_eq!(inbox.list(None).await.unwrap().len(), 1);
    let pending = inbox.list(Some(Status::Pending)).await.unwrap();
    assert_eq!(pending[0].parameters, json!({"amount": 150000}));
    assert_eq!(pending[0].trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");

    assert!(list(inbox.pool()).await.unwrap().is_empty());
    let decided = inbox.approve(ids[0], "alice").await.unwrap();
    assert!(decided.decided_now);
    let a = decided.entry;
    assert_eq!(a.status, Status::Approved);
    assert_eq!(a.decided_by.as_deref(), Some("alice"));
    assert_eq!(
        a.effect.as_deref(),
        Some("the hub's budget plan for marketing is now 150000.00")
    );
    let plans = list(inbox.pool()).await.unwrap();
    assert_eq!(plans.len(), 1, "the approval wrote the hub's own plan");
    assert_eq!(
        (plans[0].amount, plans[0].approved_by.as_str()),
        (150000.0, "alice")
    );
    let again = inbox.approve(ids[0], "bob").await.unwrap();
    assert!(!again.decided_now);
    assert_eq!(again.entry, a, "approving twice changes nothing");
    assert!(matches!(
        inbox.reject(ids[0], "bob").await,
        Err(InboxError::AlreadyDecided { .. })
    ));
    assert!(matches!(
        inbox.approve(999, "bob").await,
        Err(InboxError::NotFound(999))
    ));
    assert!(matches!(
        inbox.approve(ids[0], " ").await,
        Err(InboxError::NoDecider)
    ));
    assert!(inbox.list(Some(Status::Pending)).await.unwrap().is_empty());
    assert_eq!(
        list(inbox.pool()).await.unwrap(),
        plans,
        "approving again wrote nothing again"
    );
}

#[tokio::test]
async fn reject_and_unperformable_proposals_write_nothing() {
    let inbox = inbox().await;
    let actions = proposed_actions(&json!({"proposed_actions": [
        {"action_type": "set_budget", "target": "marketing", "parameters": {"amount": 0}, "rationale": "x"},
        {"action_type": "transfer_funds", "target": "offshore", "parameters": {}, "rationale": "y"},
    ]}));
    let ids = inbox.add_pending(&origin("r2"), &actions).await.unwrap();
    let r = inbox.reject(ids[0], "carol").await.unwrap().entry;
    assert_eq!((r.status, r.effect.as_deref()), (Status::Rejected, None));
    assert!(matches!(
        inbox.approve(ids[0], "carol").await,
        Err(InboxError::AlreadyDecided { .. })
    ));
    let e = inbox.approve(ids[1], "carol").await.unwrap_err();
    assert!(
        e.to_string().contains("no local action `transfer_funds`"),
        "{e}"
    );
    assert_eq!(inbox.get(ids[1]).await.unwrap().status, Status::Pending);
    assert!(list(inbox.pool()).await.unwrap().is_empty());
}
