//! Tasks through the hub with a real provider (DESIGN.md §2 "task", §6):
//! Helpdesk's `ticket.triage` moves submitted → working →
//! completed / failed / canceled, under a deadline the caller sets, and
//! a retry with the same key never executes twice — after a timeout,
//! across a hub restart, and when submissions race.

mod common;

use std::time::Duration;

use common::a2a::{triage, unique};
use common::{Faults, PeerSpec, Stack};
use serde_json::{json, Value as Json};
use tokio::time::Instant;

/// An RFC 3339 time `ms` from now.
fn in_ms(ms: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::milliseconds(ms))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

async fn get_task(stack: &Stack, caller: &str, id: &str) -> common::a2a::A2aAnswer {
    stack
        .a2a(caller, "helpdesk")
        .method("GetTask")
        .params(json!({ "id": id }))
        .send()
        .await
}

/// Polls `GetTask` until the task is in a final state (bounded).
async fn until_final(stack: &Stack, caller: &str, id: &str) -> Json {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let a = get_task(stack, caller, id).await;
        let task = a.result().clone();
        let state = task["status"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if [
            "TASK_STATE_COMPLETED",
            "TASK_STATE_FAILED",
            "TASK_STATE_CANCELED",
            "TASK_STATE_REJECTED",
        ]
        .contains(&state.as_str())
        {
            return task;
        }
        assert!(Instant::now() < until, "task {id} never ended: {task}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The hub's row of a key: (task id, state, retries).
async fn hub_row(stack: &Stack, caller: &str, key: &str) -> Option<(Option<String>, String, i64)> {
    let store = stack.hub_store().await;
    let row = sqlx::query_as::<_, (Option<String>, String, i64)>(
        "SELECT task_id, state, retries FROM tasks WHERE caller = $1 AND idempotency_key = $2",
    )
    .bind(caller)
    .bind(key)
    .fetch_optional(store.pool())
    .await
    .expect("query");
    store.close().await;
    row
}

/// The provider's own trail lines about one task: how many say it was
/// executed, how many were duplicate submissions.
async fn provider_lines(stack: &Stack, task_id: &str) -> (usize, usize) {
    let pool = common::peer_pool(&stack.peer_db("helpdesk")).await;
    let details: Vec<String> = sqlx::query_scalar("SELECT detail FROM audit_trail")
        .fetch_all(&pool)
        .await
        .expect("trail");
    pool.close().await;
    let executed = details
        .iter()
        .filter(|d| d.contains(&format!("task {task_id} executed")))
        .count();
    let duplicates = details
        .iter()
        .filter(|d| d.contains(&format!("task {task_id} duplicate submission")))
        .count();
    (executed, duplicates)
}

fn task_of(a: &common::a2a::A2aAnswer) -> Json {
    a.result()["task"].clone()
}

#[tokio::test]
async fn a_task_completes_fails_is_canceled_and_ends_at_its_deadline() {
    let stack = Stack::start(vec![
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("buyercorp"),
    ])
    .await;

    // Completed, with its result as an artifact.
    let key = format!("k-{}", unique());
    let a = stack
        .a2a("buyercorp", "helpdesk")
        .params(triage(
            &key,
            json!({"ticket_id": "T-1003", "work_ms": 300}),
            true,
            None,
        ))
        .send()
        .await;
    let task = task_of(&a);
    let id = task["id"].as_str().expect("task id").to_string();
    assert!(
        ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]
            .contains(&task["status"]["state"].as_str().unwrap_or("")),
        "returned at once: {task}"
    );
    let done = until_final(&stack, "buyercorp", &id).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    let result = &done["artifacts"][0]["parts"][0]["data"];
    assert_eq!(result["ticket_id"], "T-1003", "{done}");
    assert!(
        result["queue"].is_string() && result["sla_hours"].is_number(),
        "{done}"
    );
    assert_eq!(done["metadata"]["idempotencyKey"], key.as_str(), "{done}");
    let row = hub_row(&stack, "buyercorp", &key)
        .await
        .expect("the hub recorded it");
    assert_eq!(
        (row.0.as_deref(), row.1.as_str()),
        (Some(id.as_str()), "completed")
    );

    // Another caller's GetTask is TaskNotFound: the task is not theirs.
    let other = get_task(&stack, "helpdesk", &id).await;
    assert_eq!(other.code(), -32001, "{}", other.json);

    // Failed: a ticket Helpdesk does not have.
    let key = format!("k-{}", unique());
    let a = stack
        .a2a("buyercorp", "helpdesk")
        .params(triage(
            &key,
            json!({"ticket_id": "T-9999", "work_ms": 50}),
            true,
            None,
        ))
        .send()
        .await;
    let id = task_of(&a)["id"].as_str().expect("id").to_string();
    let done = until_final(&stack, "buyercorp", &id).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_FAILED", "{done}");
    assert_eq!(
        hub_row(&stack, "buyercorp", &key).await.expect("row").1,
        "failed"
    );

    // Canceled by the caller while it works.
    let key = format!("k-{}", unique());
    let a = stack
        .a2a("buyercorp", "helpdesk")
        .params(triage(
            &key,
            json!({"ticket_id": "T-1001", "work_ms": 10_000}),
            true,
            None,
        ))
        .send()
        .await;
    let id = task_of(&a)["id"].as_str().expect("id").to_string();
    let cancel = stack
        .a2a("buyercorp", "helpdesk")
        .method("CancelTask")
        .params(json!({ "id": id }))
        .send()
        .await;
    assert_eq!(cancel.status, 200, "{}", cancel.json);
    let done = until_final(&stack, "buyercorp", &id).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_CANCELED", "{done}");
    assert_eq!(
        hub_row(&stack, "buyercorp", &key).await.expect("row").1,
        "canceled"
    );
    let (executed, _) = provider_lines(&stack, &id).await;
    assert_eq!(executed, 1);

    // Past its deadline: the caller gave it 400 ms for 3 s of work.
    let key = format!("k-{}", unique());
    let a = stack
        .a2a("buyercorp", "helpdesk")
        .params(triage(
            &key,
            json!({"ticket_id": "T-1002", "work_ms": 3_000}),
            true,
            Some(in_ms(400)),
        ))
        .send()
        .await;
    let id = task_of(&a)["id"].as_str().expect("id").to_string();
    let done = until_final(&stack, "buyercorp", &id).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_FAILED", "{done}");
    assert!(done.to_string().contains("deadline"), "{done}");

    // Blocking (no returnImmediately): the answer is the finished task.
    let a = stack
        .a2a("buyercorp", "helpdesk")
        .params(triage(
            &format!("k-{}", unique()),
            json!({"ticket_id": "T-1004", "work_ms": 100}),
            false,
            None,
        ))
        .send()
        .await;
    assert_eq!(
        task_of(&a)["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{}",
        a.json
    );

    // A deadline that is not a time is the caller's error, named.
    let a = stack
        .a2a("buyercorp", "helpdesk")
        .params(triage(
            &format!("k-{}", unique()),
            json!({"ticket_id": "T-1004"}),
            true,
            Some("soon".into()),
        ))
        .send()
        .await;
    assert!(a.text.contains("metadata.deadline `soon`"), "{}", a.json);
}

#[tokio::test]
async fn a_retry_after_a_timeout_runs_once_also_across_a_hub_restart() {
    // Helpdesk accepts and starts the task, but its answer comes after
    // the hub's 2 s deadline: the hub cannot know it was accepted.
    let mut stack = Stack::start(vec![
        PeerSpec::clone_of(
            "helpdesk",
            "helpdesk",
            Faults {
                accept_stall_ms: 3_000,
                ..Faults::default()
            },
        ),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    let key = format!("k-{}", unique());
    let input = json!({"ticket_id": "T-1005", "work_ms": 200});
    let submit = |stack: &Stack| {
        stack
            .a2a("buyercorp", "helpdesk")
            .params(triage(&key, input.clone(), true, None))
    };
    let first = submit(&stack).send().await;
    assert_eq!(first.reason(), "TIMEOUT", "{}", first.json);
    assert_eq!(
        hub_row(&stack, "buyercorp", &key).await.expect("row").1,
        "unknown"
    );

    // The retry asks the provider by key first, and finds the task.
    let retry = submit(&stack).send().await;
    let task = task_of(&retry);
    let id = task["id"].as_str().expect("the existing task").to_string();
    assert_eq!(task["metadata"]["replayed"], true, "{task}");
    let (executed, duplicates) = provider_lines(&stack, &id).await;
    assert_eq!(
        (executed, duplicates),
        (1, 0),
        "one execution, no second submission"
    );

    // A restart of the hub loses nothing: the same key, the same task.
    stack.kill_hub();
    stack.start_hub().await;
    let again = submit(&stack).send().await;
    assert_eq!(task_of(&again)["id"], id.as_str(), "{}", again.json);
    let done = until_final(&stack, "buyercorp", &id).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(provider_lines(&stack, &id).await, (1, 0));
    let row = hub_row(&stack, "buyercorp", &key).await.expect("row");
    assert_eq!((row.1.as_str(), row.2), ("completed", 2), "{row:?}");

    // The same key with another input is refused: one key, one question.
    let other = stack
        .a2a("buyercorp", "helpdesk")
        .params(triage(&key, json!({"ticket_id": "T-1006"}), true, None))
        .send()
        .await;
    assert_eq!(other.reason(), "NOT_PERMITTED", "{}", other.json);
    assert!(
        other.text.contains("already used for another"),
        "{}",
        other.json
    );
}

#[tokio::test]
async fn concurrent_submissions_with_one_key_run_once() {
    let stack = Stack::start(vec![
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    let key = format!("k-{}", unique());
    let answers = futures::future::join_all((0..6).map(|_| {
        stack
            .a2a("buyercorp", "helpdesk")
            .params(triage(
                &key,
                json!({"ticket_id": "T-1007", "work_ms": 200}),
                true,
                None,
            ))
            .send()
    }))
    .await;
    let ids: Vec<String> = answers
        .iter()
        .map(|a| {
            task_of(a)["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{}", a.json))
                .to_string()
        })
        .collect();
    assert!(
        ids.iter().all(|i| *i == ids[0]),
        "one task for one key: {ids:?}"
    );
    let replayed = answers
        .iter()
        .filter(|a| task_of(a)["metadata"]["replayed"] == true)
        .count();
    assert_eq!(replayed, 5, "five of six joined the first");
    until_final(&stack, "buyercorp", &ids[0]).await;
    assert_eq!(provider_lines(&stack, &ids[0]).await, (1, 0));
    assert_eq!(hub_row(&stack, "buyercorp", &key).await.expect("row").2, 5);
}

#[tokio::test]
async fn a_submission_the_provider_never_got_is_resubmitted_once() {
    let mut stack = Stack::start(vec![
        PeerSpec::stock("helpdesk").not_started(),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    let key = format!("k-{}", unique());
    let submit = |stack: &Stack| {
        stack.a2a("buyercorp", "helpdesk").params(triage(
            &key,
            json!({"ticket_id": "T-1008", "work_ms": 100}),
            true,
            None,
        ))
    };
    let first = submit(&stack).send().await;
    assert_eq!(first.reason(), "PEER_UNREACHABLE", "{}", first.json);
    assert_eq!(
        hub_row(&stack, "buyercorp", &key).await.expect("row").1,
        "unknown"
    );
    stack.start_peer("helpdesk").await;
    // Asked by key, the provider has no such task: the hub resubmits.
    let retry = submit(&stack).send().await;
    let id = task_of(&retry)["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", retry.json))
        .to_string();
    until_final(&stack, "buyercorp", &id).await;
    assert_eq!(provider_lines(&stack, &id).await, (1, 0));
}
