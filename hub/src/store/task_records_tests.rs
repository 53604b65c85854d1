//! The task record's key and states, on both engines.

use super::*;

fn submission<'a>(key: &'a str, digest: &'a str) -> Submission<'a> {
    Submission {
        caller: "buyercorp",
        idempotency_key: key,
        provider: "helpdesk",
        capability: "ticket.triage",
        input_digest: digest,
        deadline: "2026-12-01T00:00:30Z",
    }
}

#[tokio::test]
async fn one_claim_per_key_even_when_concurrent() {
    for db in crate::store::test_stores().await {
        one_claim_per_key(TaskRecords::new(db.store.clone(), "p1")).await;
    }
}

async fn one_claim_per_key(records: TaskRecords) {
    let claims = futures::future::join_all((0..8).map(|_| {
        let r = records.clone();
        async move { r.claim(&submission("k-1", "d")).await.expect("claim") }
    }))
    .await;
    let new = claims.iter().filter(|c| **c == Claim::New).count();
    assert_eq!(new, 1, "exactly one claim inserts: {claims:?}");
    let row = records
        .get("buyercorp", "k-1")
        .await
        .expect("get")
        .expect("row");
    assert_eq!(row.retries, 7);
    assert_eq!(row.state, RecordState::Submitting);
    // The same key from another caller is another submission.
    let other = Submission {
        caller: "hub",
        ..submission("k-1", "d")
    };
    assert_eq!(records.claim(&other).await.expect("claim"), Claim::New);
}

#[tokio::test]
async fn states_move_forward_and_survive_a_restart() {
    for db in crate::store::test_stores().await {
        states_move_forward(db.store.clone()).await;
    }
}

async fn states_move_forward(db: exchange::db::Store) {
    let records = TaskRecords::new(db.clone(), "p1");
    records.claim(&submission("a", "d")).await.expect("claim");
    records.claim(&submission("b", "d")).await.expect("claim");
    records
        .accepted("buyercorp", "a", "t-a", RecordState::Working)
        .await
        .expect("accepted");
    assert_eq!(
        records.capability_of("helpdesk", "t-a").await.expect("q"),
        Some(("buyercorp".into(), "ticket.triage".into()))
    );
    records
        .observe("helpdesk", "t-a", RecordState::Completed)
        .await
        .expect("observe");
    // A late report cannot revive a finished task.
    records
        .observe("helpdesk", "t-a", RecordState::Working)
        .await
        .expect("observe");
    let a = records
        .get("buyercorp", "a")
        .await
        .expect("get")
        .expect("row");
    assert_eq!(a.state, RecordState::Completed);
    assert!(a.finished_at.is_some());
    drop(records);
    // "b" was being forwarded when its process ("p1") stopped: another
    // (a restart, or a replica) finds it dead and orphans its rows.
    let reopened = TaskRecords::new(db, "p2");
    assert_eq!(
        reopened.submitters().await.expect("q"),
        vec![Some("p1".to_string())]
    );
    assert_eq!(reopened.orphan(Some("p1")).await.expect("orphan"), 1);
    let b = reopened
        .get("buyercorp", "b")
        .await
        .expect("get")
        .expect("row");
    assert_eq!(b.state, RecordState::Unknown);
    let unfinished = reopened.unfinished().await.expect("q");
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].idempotency_key, "b");
    // Only one of two retakes of an unknown row wins.
    assert!(reopened.retake("buyercorp", "b").await.expect("retake"));
    assert!(!reopened.retake("buyercorp", "b").await.expect("retake"));
    // The old claimer's late word changes nothing: the row is p2's now.
    let late = TaskRecords::new(db_of(&reopened), "p1");
    late.unknown("buyercorp", "b").await.expect("late");
    let b = reopened
        .get("buyercorp", "b")
        .await
        .expect("get")
        .expect("row");
    assert_eq!(
        (b.state, b.claimed_by.as_deref()),
        (RecordState::Submitting, Some("p2"))
    );
    // A released key (the provider refused it) is free again.
    reopened.release("buyercorp", "b").await.expect("release");
    assert_eq!(
        reopened.claim(&submission("b", "d")).await.expect("claim"),
        Claim::New
    );
    // Answered with a message, not a task: done, and a retry finds it so.
    reopened.claim(&submission("m", "d")).await.expect("claim");
    reopened.answered("buyercorp", "m").await.expect("answered");
    let m = reopened
        .get("buyercorp", "m")
        .await
        .expect("get")
        .expect("row");
    assert_eq!((m.state, m.task_id), (RecordState::Completed, None));
    assert!(matches!(
        reopened.claim(&submission("m", "d")).await.expect("claim"),
        Claim::Existing(TaskRecord {
            state: RecordState::Completed,
            task_id: None,
            ..
        })
    ));
    let counts = reopened.counts().await.expect("counts");
    assert!(counts.contains(&(
        "buyercorp".into(),
        "helpdesk".into(),
        "ticket.triage".into(),
        RecordState::Completed,
        2
    )));
}

fn db_of(records: &TaskRecords) -> exchange::db::Store {
    records.store.clone()
}
