//! The hub's inbox with its budget plans: proposals stored, decided once,
//! and an approval writing the hub's own plan in the decision's transaction.

use super::*;
use exchange::inbox::{proposed_actions, Inbox, InboxError, Origin, Status};
use serde_json::json;
use std::sync::Arc;

fn inbox(store: &exchange::db::Store) -> Inbox {
    Inbox::open(store.clone(), Arc::new(HubPlans))
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
    for db in crate::store::test_stores().await {
        add_list_decide(inbox(&db.store)).await;
    }
}

async fn add_list_decide(inbox: Inbox) {
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

    assert!(list(inbox.store().pool()).await.unwrap().is_empty());
    let decided = inbox.approve(ids[0], "alice").await.unwrap();
    assert!(decided.decided_now);
    let a = decided.entry;
    assert_eq!(a.status, Status::Approved);
    assert_eq!(a.decided_by.as_deref(), Some("alice"));
    assert_eq!(
        a.effect.as_deref(),
        Some("the hub's budget plan for marketing is now 150000.00")
    );
    let plans = list(inbox.store().pool()).await.unwrap();
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
        list(inbox.store().pool()).await.unwrap(),
        plans,
        "approving again wrote nothing again"
    );
}

#[tokio::test]
async fn reject_and_unperformable_proposals_write_nothing() {
    for db in crate::store::test_stores().await {
        reject_and_unperformable(inbox(&db.store)).await;
    }
}

async fn reject_and_unperformable(inbox: Inbox) {
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
    assert!(list(inbox.store().pool()).await.unwrap().is_empty());
}

/// Two hub processes on one database (replicas, or a double click landing
/// on two of them): of concurrent approvals and rejections of one entry,
/// exactly one decides it, and the plan is written once.
#[tokio::test]
async fn concurrent_deciders_on_one_store_decide_once() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        let (a, b) = (inbox(&db.store), inbox(&db.store));
        let actions = proposed_actions(&json!({"proposed_actions": [
            {"action_type": "set_budget", "target": "marketing", "parameters": {"amount": 7}, "rationale": "x"}
        ]}));
        let ids = a.add_pending(&origin("r3"), &actions).await.unwrap();
        assert_eq!(b.add_pending(&origin("r3"), &actions).await.unwrap(), ids);
        let id = ids[0];
        let mut runs = Vec::new();
        for i in 0..6 {
            let inbox = if i % 2 == 0 { a.clone() } else { b.clone() };
            runs.push(tokio::spawn(async move {
                if i % 3 == 2 {
                    inbox.reject(id, &format!("r{i}")).await
                } else {
                    inbox.approve(id, &format!("a{i}")).await
                }
            }));
        }
        let mut now = 0;
        for r in runs {
            if let Ok(decided) = r.await.expect("task") {
                now += usize::from(decided.decided_now);
            }
        }
        assert_eq!(now, 1, "{engine:?}: one decision");
        let entry = a.get(id).await.unwrap();
        let plans = list(a.store().pool()).await.unwrap();
        match entry.status {
            Status::Approved => assert_eq!(plans.len(), 1, "{engine:?}"),
            Status::Rejected => assert!(plans.is_empty(), "{engine:?}"),
            Status::Pending => panic!("{engine:?}: still pending"),
        }
    }
}
