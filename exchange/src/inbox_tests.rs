use super::*;
use crate::testing::{engines, TestStore};
use async_trait::async_trait;
use serde_json::json;

fn origin(request_id: &str) -> Origin<'_> {
    Origin {
        trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
        request_id,
        from_system: "buyercorp",
        capability: "budget.consult",
    }
}

fn one_set_budget() -> Vec<ProposedAction> {
    proposed_actions(&json!({"proposed_actions": [
        {"action_type": "set_budget", "target": "marketing", "parameters": {"amount": 5}, "rationale": "x"}
    ]}))
}

/// A receiver whose local write lands in its own `ledger` table and
/// then fails when told to: the approval and the write must roll back
/// together.
#[derive(Debug)]
struct Ledger {
    fail_after_write: bool,
}

#[async_trait]
impl LocalEffects for Ledger {
    fn receiver(&self) -> &'static str {
        "the ledger"
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
        sqlx::query("INSERT INTO ledger VALUES ($1, $2)")
            .bind(&department)
            .bind(amount)
            .execute(&mut *conn)
            .await?;
        if self.fail_after_write {
            return Err(ActionError::Store(sqlx::Error::Protocol(
                "disk on fire".into(),
            )));
        }
        Ok(format!("ledger: {department} {amount}"))
    }
}

async fn rows(store: &Store) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM ledger")
        .fetch_one(store.pool())
        .await
        .unwrap()
}

async fn inbox_stores() -> Vec<TestStore> {
    engines(&[&crate::db::SCHEMA]).await
}

#[tokio::test]
async fn a_receiver_without_local_actions_refuses_approval_and_can_reject() {
    for t in inbox_stores().await {
        refuses_and_rejects(t.store).await;
    }
}

async fn refuses_and_rejects(store: Store) {
    let inbox = Inbox::open(store, Arc::new(NoLocalActions));
    let ids = inbox
        .add_pending(&origin("r1"), &one_set_budget())
        .await
        .unwrap();
    let e = inbox.approve(ids[0], "erin").await.unwrap_err();
    assert!(
        e.to_string()
            .contains("this system has no local action `set_budget`"),
        "{e}"
    );
    assert_eq!(inbox.pending_count().await.unwrap(), 1, "still pending");
    let r = inbox.reject(ids[0], "erin").await.unwrap();
    assert!(r.decided_now);
    assert_eq!(r.entry.status, Status::Rejected);
    assert_eq!(inbox.pending_count().await.unwrap(), 0);
}

#[tokio::test]
async fn the_local_write_and_the_approval_commit_or_roll_back_together() {
    for t in inbox_stores().await {
        commit_or_roll_back_together(t.store).await;
    }
}

async fn commit_or_roll_back_together(pool: Store) {
    sqlx::query("CREATE TABLE ledger (department TEXT, amount DOUBLE PRECISION)")
        .execute(pool.pool())
        .await
        .unwrap();
    let failing = Inbox::open(
        pool.clone(),
        Arc::new(Ledger {
            fail_after_write: true,
        }),
    );
    let ids = failing
        .add_pending(&origin("r2"), &one_set_budget())
        .await
        .unwrap();
    assert!(failing.approve(ids[0], "erin").await.is_err());
    assert_eq!(rows(&pool).await, 0, "the write rolled back");
    assert_eq!(failing.get(ids[0]).await.unwrap().status, Status::Pending);

    let working = Inbox::open(
        pool.clone(),
        Arc::new(Ledger {
            fail_after_write: false,
        }),
    );
    let decided = working.approve(ids[0], "erin").await.unwrap();
    assert_eq!(rows(&pool).await, 1, "one write, with the approval");
    assert_eq!(decided.entry.effect.as_deref(), Some("ledger: marketing 5"));
    assert!(!working.approve(ids[0], "erin").await.unwrap().decided_now);
    assert_eq!(rows(&pool).await, 1, "approving again writes nothing");
}

#[tokio::test]
async fn a_decision_and_its_trail_line_commit_together_and_once() {
    for t in inbox_stores().await {
        noted_once(t.store).await;
    }
}

async fn noted_once(store: Store) {
    use crate::audit::{AuditRecord, AuditTrail, Outcome, Role};
    sqlx::query("CREATE TABLE ledger (department TEXT, amount DOUBLE PRECISION)")
        .execute(store.pool())
        .await
        .unwrap();
    let note = |e: &InboxEntry| AuditRecord {
        system: "hub".into(),
        role: Role::Caller,
        at: crate::audit::now(),
        caller: "hub".into(),
        provider: e.from_system.clone(),
        capability: e.capability.clone(),
        request_id: e.request_id.clone(),
        trace_id: e.trace_id.clone(),
        outcome: if e.status == Status::Approved {
            Outcome::Executed
        } else {
            Outcome::Refused
        },
        reason: None,
        duration_ms: 0,
        detail: format!(
            "entry {} {:?} by {:?}: {:?}",
            e.id, e.status, e.decided_by, e.effect
        ),
    };
    let trail = AuditTrail::read_only(store.clone(), "hub");
    let lines = |request_id: &'static str| {
        let trail = trail.clone();
        async move {
            trail
                .by_trace("4bf92f3577b34da6a3ce929d0e0e4736")
                .await
                .unwrap()
                .into_iter()
                .filter(|r| r.request_id == request_id)
                .map(|r| (r.outcome, r.detail))
                .collect::<Vec<_>>()
        }
    };

    // A local write that fails: no decision, no line.
    let failing = Inbox::open(
        store.clone(),
        Arc::new(Ledger {
            fail_after_write: true,
        }),
    );
    let ids = failing
        .add_pending(&origin("n1"), &one_set_budget())
        .await
        .unwrap();
    assert!(failing
        .approve_noted(ids[0], "erin", Some(&note))
        .await
        .is_err());
    assert!(
        lines("n1").await.is_empty(),
        "rolled back with the decision"
    );

    // Approved: one line, made of the decided entry; again: none more.
    let working = Inbox::open(
        store.clone(),
        Arc::new(Ledger {
            fail_after_write: false,
        }),
    );
    let decided = working
        .approve_noted(ids[0], "erin", Some(&note))
        .await
        .unwrap();
    assert!(decided.decided_now);
    let again = working
        .approve_noted(ids[0], "erin", Some(&note))
        .await
        .unwrap();
    assert!(!again.decided_now);
    assert_eq!(
        lines("n1").await,
        vec![(
            Outcome::Executed,
            format!(
                "entry {} Approved by Some(\"erin\"): Some(\"ledger: marketing 5\")",
                ids[0]
            )
        )]
    );

    // Rejected: the same, once.
    let other = working
        .add_pending(&origin("n2"), &one_set_budget())
        .await
        .unwrap();
    assert!(
        working
            .reject_noted(other[0], "frank", Some(&note))
            .await
            .unwrap()
            .decided_now
    );
    assert!(
        !working
            .reject_noted(other[0], "frank", Some(&note))
            .await
            .unwrap()
            .decided_now
    );
    assert_eq!(
        lines("n2").await,
        vec![(
            Outcome::Refused,
            format!("entry {} Rejected by Some(\"frank\"): None", other[0])
        )]
    );
}
