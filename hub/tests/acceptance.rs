//! Results the requester accepts (NOTES.md, "Acceptance"), with real
//! processes: BuyerCorp submits Helpdesk triage tasks through the hub with
//! acceptance criteria, and the Helpdesk reference peer parks each result
//! until BuyerCorp decides. A task accepted; a task rejected with feedback,
//! answered with a second result and accepted; a task whose window closes;
//! a result that breaks the requester's criteria, rejected by the hub
//! before BuyerCorp ever sees it. After each, the hub's trail and
//! Helpdesk's own trail are read back: they agree on every decision.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{repo, PeerSpec, Stack};
use exchange::acceptance::{ACCEPT_BY_KEY, ATTEMPT_KEY, CRITERIA_KEY, DECISION_KEY, PENDING_KEY};
use exchange::audit::AuditRecord;
use exchange::receipt;
use serde_json::{json, Value};

fn demo_peers() -> Vec<PeerSpec> {
    ["vendorcorp", "buyercorp", "helpdesk"]
        .map(PeerSpec::stock)
        .to_vec()
}

/// Submits a triage of T-1003 for BuyerCorp with `criteria`, waiting for
/// the first result: the JSON-RPC answer.
async fn submit(stack: &Stack, criteria: Value) -> Value {
    let mut params = common::a2a::triage(
        &common::a2a::unique(),
        json!({"ticket_id": "T-1003", "work_ms": 200}),
        false,
        None,
    );
    params["message"]["metadata"] = json!({ CRITERIA_KEY: criteria });
    stack
        .a2a("buyercorp", "helpdesk")
        .params(params)
        .send()
        .await
        .json
}

/// `caller`'s decision on `task_id`, with `text` as its feedback.
async fn decide(stack: &Stack, caller: &str, task_id: &str, decision: Value, text: &str) -> Value {
    stack
        .a2a(caller, "helpdesk")
        .params(json!({
            "message": {
                "messageId": format!("decision-{}", common::a2a::unique()),
                "role": "ROLE_USER",
                "taskId": task_id,
                "parts": [{"text": text}],
                "metadata": { DECISION_KEY: decision },
            }
        }))
        .send()
        .await
        .json
}

async fn get_task(stack: &Stack, task_id: &str) -> Value {
    stack
        .a2a("buyercorp", "helpdesk")
        .method("GetTask")
        .params(json!({"id": task_id}))
        .send()
        .await
        .json
}

/// The task of an answer, or a panic naming the answer.
fn task_of(answer: &Value) -> &Value {
    let r = &answer["result"];
    let t = if r.get("task").is_some() {
        &r["task"]
    } else {
        r
    };
    assert!(t.get("status").is_some(), "a task: {answer}");
    t
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

/// The pending flag and attempt of a task that awaits acceptance.
fn pending_attempt(task: &Value) -> Option<u64> {
    let meta = &task["status"]["message"]["metadata"];
    (state(task) == "TASK_STATE_INPUT_REQUIRED" && meta[PENDING_KEY] == json!(true))
        .then(|| exchange::acceptance::whole(&meta[ATTEMPT_KEY]))
        .flatten()
}

/// The hub's trail records about `task_id`, oldest first.
async fn hub_lines(stack: &Stack, task_id: &str) -> Vec<AuditRecord> {
    let mut lines: Vec<AuditRecord> = stack
        .hub_trail()
        .await
        .recent(400)
        .await
        .expect("hub trail")
        .into_iter()
        .filter(|r| r.detail.contains(task_id))
        .collect();
    lines.reverse();
    lines
}

/// Helpdesk's own trail lines about `task_id`, oldest first.
async fn helpdesk_lines(stack: &Stack, task_id: &str) -> Vec<String> {
    let mut lines: Vec<String> = common::trail(&stack.peer_db("helpdesk"), "helpdesk")
        .await
        .recent(400)
        .await
        .expect("helpdesk trail")
        .into_iter()
        .map(|r| r.detail)
        .filter(|d| d.contains(task_id))
        .collect();
    lines.reverse();
    lines
}

/// The decisions on `task_id` the hub let through: (capability, detail).
async fn hub_decisions(stack: &Stack, task_id: &str) -> Vec<(String, String)> {
    hub_lines(stack, task_id)
        .await
        .into_iter()
        .filter(|r| r.capability.starts_with("acceptance.") && r.reason.is_none())
        .map(|r| (r.capability, r.detail))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn results_wait_for_the_requesters_decision_and_both_trails_agree() {
    let stack = Stack::start(demo_peers()).await;
    let keys = stack.hub_jwks().await;

    // The card the hub shows BuyerCorp declares the extension, because
    // Helpdesk's own card does.
    let card = stack
        .a2a("buyercorp", "helpdesk")
        .method("GetExtendedAgentCard")
        .params(json!({}))
        .send()
        .await
        .json["result"]
        .clone();
    let uris: Vec<&str> = card["capabilities"]["extensions"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["uri"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        uris.contains(&exchange::acceptance::EXTENSION_URI),
        "{card}"
    );

    // 1. Accepted. The first result parks, flagged, with its window.
    let answer = submit(&stack, json!({"description": "a queue and a priority"})).await;
    let task = task_of(&answer);
    let task_id = task["id"].as_str().expect("an id").to_string();
    assert_eq!(pending_attempt(task), Some(1), "{answer}");
    assert!(
        task["status"]["message"]["metadata"][ACCEPT_BY_KEY].is_string(),
        "{answer}"
    );
    assert_eq!(task["artifacts"][0]["name"], "result", "{answer}");
    eprintln!("pending: {}", task["status"]);

    // Another system cannot decide it: the task is nobody's it knows.
    let stranger = decide(
        &stack,
        "vendorcorp",
        &task_id,
        json!({"action": "accept"}),
        "mine",
    )
    .await;
    assert_eq!(stranger["error"]["code"], -32001, "{stranger}");
    assert_eq!(
        pending_attempt(task_of(&get_task(&stack, &task_id).await)),
        Some(1),
        "still pending after the stranger"
    );
    // A decision that cannot be read is refused, naming the key.
    let unreadable = decide(
        &stack,
        "buyercorp",
        &task_id,
        json!({"action": "reject"}),
        "no",
    )
    .await;
    assert_eq!(unreadable["error"]["code"], -32602, "{unreadable}");
    let says = unreadable["error"]["message"].as_str().unwrap_or_default();
    assert!(
        says.contains(DECISION_KEY) && says.contains("a reject needs a `reason`"),
        "{says}"
    );

    let accepted = decide(
        &stack,
        "buyercorp",
        &task_id,
        json!({"action": "accept"}),
        "Approved.",
    )
    .await;
    let done = task_of(&accepted);
    assert_eq!(state(done), "TASK_STATE_COMPLETED", "{accepted}");
    eprintln!("accepted: {}", done["status"]);
    // The decision's receipt rides on the task and names the decision.
    let jws = done["metadata"][receipt::EXTENSION_URI]["jws"]
        .as_str()
        .unwrap_or_else(|| panic!("a receipt: {accepted}"));
    let (claims, _) = receipt::verify(jws, &keys).expect("the receipt verifies");
    assert_eq!(
        (
            claims.capability.as_str(),
            claims.caller.as_str(),
            claims.provider.as_str()
        ),
        ("acceptance.accept", "buyercorp", "helpdesk")
    );
    eprintln!(
        "receipt: {}",
        serde_json::to_string(&claims).unwrap_or_default()
    );
    // A second decision on a completed task is refused.
    let again = decide(
        &stack,
        "buyercorp",
        &task_id,
        json!({"action": "accept"}),
        "",
    )
    .await;
    assert_eq!(again["error"]["code"], -32602, "{again}");
    assert!(
        again["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("does not await acceptance: it is completed")),
        "{again}"
    );
    // The hub recorded the stranger's and the late decisions as refused.
    let refused: Vec<String> = hub_lines(&stack, &task_id)
        .await
        .into_iter()
        .filter(|r| r.capability.starts_with("acceptance.") && r.reason.is_some())
        .map(|r| format!("{} {}", r.caller, r.detail))
        .collect();
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(refused[0].starts_with("vendorcorp no task"), "{refused:?}");
    let hub = hub_decisions(&stack, &task_id).await;
    assert_eq!(hub.len(), 1, "{hub:?}");
    assert_eq!(hub[0].0, "acceptance.accept");
    assert!(
        hub[0].1.contains("result 1: accept by buyercorp"),
        "{hub:?}"
    );
    let peer = helpdesk_lines(&stack, &task_id).await;
    assert!(
        peer.iter()
            .any(|l| l.ends_with("completed: result 1 accepted by the requester")),
        "{peer:?}"
    );

    // 2. Rejected with feedback, then accepted with the second result.
    let answer = submit(&stack, json!({"maxRejections": 2})).await;
    let task_id = task_of(&answer)["id"].as_str().expect("an id").to_string();
    assert_eq!(pending_attempt(task_of(&answer)), Some(1), "{answer}");
    let feedback = "Priority should follow the customer's tier; please look again.";
    let rejected = decide(
        &stack,
        "buyercorp",
        &task_id,
        json!({"action": "reject", "reason": "QUALITY_THRESHOLD_NOT_MET"}),
        feedback,
    )
    .await;
    let second = task_of(&rejected);
    assert_eq!(pending_attempt(second), Some(2), "{rejected}");
    assert_eq!(
        second["artifacts"].as_array().map(Vec::len),
        Some(2),
        "both results are kept: {rejected}"
    );
    // The provider received the feedback, word for word, in the history.
    let full = stack
        .a2a("buyercorp", "helpdesk")
        .method("GetTask")
        .params(json!({"id": task_id, "historyLength": 10}))
        .send()
        .await
        .json;
    assert!(
        full["result"]["history"]
            .as_array()
            .is_some_and(|h| h.iter().any(|m| m["parts"][0]["text"] == feedback)),
        "{full}"
    );
    let accepted = decide(
        &stack,
        "buyercorp",
        &task_id,
        json!({"action": "accept"}),
        "",
    )
    .await;
    assert_eq!(
        state(task_of(&accepted)),
        "TASK_STATE_COMPLETED",
        "{accepted}"
    );
    let hub = hub_decisions(&stack, &task_id).await;
    let names: Vec<&str> = hub.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(names, ["acceptance.reject", "acceptance.accept"], "{hub:?}");
    assert!(
        hub[0].1.contains(&format!(
            "result 1: reject QUALITY_THRESHOLD_NOT_MET (retry) by buyercorp, feedback of {} characters",
            feedback.chars().count()
        )),
        "{hub:?}"
    );
    assert!(
        hub[1].1.contains("result 2: accept by buyercorp"),
        "{hub:?}"
    );
    let peer = helpdesk_lines(&stack, &task_id).await;
    eprintln!("hub trail: {hub:#?}\nhelpdesk trail: {peer:#?}");
    let decided: Vec<&String> = peer
        .iter()
        .filter(|l| l.contains("by the requester"))
        .collect();
    assert_eq!(decided.len(), 2, "{peer:?}");
    assert!(decided[0].contains("result 1 rejected by the requester (QUALITY_THRESHOLD_NOT_MET"));
    assert!(decided[1].ends_with("completed: result 2 accepted by the requester"));
    // The feedback's words stay out of both trails (its length is kept).
    assert!(!peer.iter().any(|l| l.contains("tier")), "{peer:?}");
    assert!(!hub.iter().any(|(_, d)| d.contains("tier")), "{hub:?}");

    // 3. The window closes: a late accept is refused, the task failed.
    let answer = submit(&stack, json!({"acceptanceTimeoutSeconds": 1})).await;
    let task_id = task_of(&answer)["id"].as_str().expect("an id").to_string();
    assert_eq!(pending_attempt(task_of(&answer)), Some(1), "{answer}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let late = decide(
        &stack,
        "buyercorp",
        &task_id,
        json!({"action": "accept"}),
        "",
    )
    .await;
    let says = late["error"]["message"].as_str().unwrap_or_default();
    assert!(
        says.contains("acceptance window") && says.contains("can no longer be decided")
            || says.contains("does not await acceptance: it is failed"),
        "{late}"
    );
    let ended = get_task(&stack, &task_id).await;
    assert_eq!(state(task_of(&ended)), "TASK_STATE_FAILED", "{ended}");
    assert!(
        task_of(&ended)["status"]["message"]["parts"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("acceptance window closed")),
        "{ended}"
    );
    eprintln!("expired: {}", task_of(&ended)["status"]);
    let hub = hub_decisions(&stack, &task_id).await;
    assert!(hub.is_empty(), "no decision went through: {hub:?}");
    let refused: Vec<AuditRecord> = stack
        .hub_trail()
        .await
        .recent(50)
        .await
        .expect("trail")
        .into_iter()
        .filter(|r| r.capability == "acceptance.accept" && r.reason.is_some())
        .collect();
    assert!(
        !refused.is_empty(),
        "the late accept is recorded as refused"
    );
    let peer = helpdesk_lines(&stack, &task_id).await;
    assert!(
        peer.iter()
            .any(|l| l.contains("failed: acceptance window closed")),
        "{peer:?}"
    );
    assert!(
        !peer.iter().any(|l| l.contains("by the requester")),
        "{peer:?}"
    );

    // A result canceled while it waits stays canceled when its window
    // closes: the timer ends only a result that still waits.
    let answer = submit(&stack, json!({"acceptanceTimeoutSeconds": 1})).await;
    let task_id = task_of(&answer)["id"].as_str().expect("an id").to_string();
    let canceled = stack
        .a2a("buyercorp", "helpdesk")
        .method("CancelTask")
        .params(json!({"id": task_id}))
        .send()
        .await
        .json;
    assert_eq!(
        state(task_of(&canceled)),
        "TASK_STATE_CANCELED",
        "{canceled}"
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = get_task(&stack, &task_id).await;
    assert_eq!(state(task_of(&after)), "TASK_STATE_CANCELED", "{after}");
    let peer = helpdesk_lines(&stack, &task_id).await;
    assert!(
        !peer.iter().any(|l| l.contains("acceptance window closed")),
        "{peer:?}"
    );

    // 4. The hub checks the requester's criteria before asking it: a
    // result that breaks the artifactSchema is rejected for BuyerCorp,
    // until the rejections allowed are used up; BuyerCorp never sees it
    // pending.
    let answer = submit(
        &stack,
        json!({
            "artifactSchema": {"required": ["priority"], "properties": {"priority": {"const": "P0"}}},
            "maxRejections": 1,
        }),
    )
    .await;
    let task = task_of(&answer);
    let task_id = task["id"].as_str().expect("an id").to_string();
    assert_eq!(pending_attempt(task), None, "never shown pending: {answer}");
    let started = Instant::now();
    let ended = loop {
        let t = get_task(&stack, &task_id).await;
        assert_eq!(
            pending_attempt(task_of(&t)),
            None,
            "never shown pending: {t}"
        );
        if state(task_of(&t)) == "TASK_STATE_FAILED" {
            break t;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{t}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    eprintln!("screened: {}", task_of(&ended)["status"]);
    let lines = hub_lines(&stack, &task_id).await;
    let by_hub: Vec<&AuditRecord> = lines
        .iter()
        .filter(|r| r.detail.contains("the hub rejected result"))
        .collect();
    assert_eq!(by_hub.len(), 2, "results 1 and 2: {lines:?}");
    assert!(
        by_hub[0]
            .detail
            .contains("(SCHEMA_MISMATCH, retry): result 1 breaks the requester's artifactSchema"),
        "{lines:?}"
    );
    let peer = helpdesk_lines(&stack, &task_id).await;
    let details: Vec<&str> = by_hub.iter().map(|r| r.detail.as_str()).collect();
    eprintln!("hub trail: {details:#?}\nhelpdesk trail: {peer:#?}");
    assert!(
        peer.iter()
            .any(|l| l.contains("result 1 rejected by the requester (SCHEMA_MISMATCH")),
        "{peer:?}"
    );
    assert!(
        peer.iter().any(|l| l
            .contains("failed: result 2 rejected by the requester (SCHEMA_MISMATCH")
            && l.contains("the 1 rejections allowed are used up")),
        "{peer:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_official_python_sdk_asks_rejects_and_accepts_with_the_proposals_messages() {
    let stack = Stack::start(demo_peers()).await;
    let out = Command::new(repo().join(".tools/venv/bin/python"))
        .arg(repo().join("hub/tests/clients/accept_result.py"))
        .args([
            &format!("{}/a2a/helpdesk/", stack.hub_url()),
            &stack.token("buyercorp"),
            r#"{"capability": "ticket.triage", "input": {"ticket_id": "T-1003", "work_ms": 200}}"#,
        ])
        .output()
        .expect("run accept_result.py");
    let got: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "accept_result.py: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    eprintln!("a2a-sdk: {got}");
    assert_eq!(got["declared"], true, "the public card declares it: {got}");
    assert_eq!(
        got["steps"],
        json!([
            {"state": "input-required", "pending": true, "attempt": 1.0, "artifacts": 1},
            {"state": "input-required", "pending": true, "attempt": 2.0, "artifacts": 2},
            {"state": "completed", "pending": false, "attempt": null, "artifacts": 2},
        ]),
        "{got}\n{}",
        stack.hub_log()
    );
    let task_id = got["task_id"].as_str().expect("a task id");
    let names: Vec<String> = hub_decisions(&stack, task_id)
        .await
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    assert_eq!(names, ["acceptance.reject", "acceptance.accept"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn criteria_that_cannot_hold_are_refused_at_the_door() {
    let stack = Stack::start(demo_peers()).await;
    for (criteria, says) in [
        (
            json!({"maxRejections": 99}),
            "maxRejections must be at most 10",
        ),
        (
            json!({"evaluator": "agent"}),
            "evaluator `agent` is not offered",
        ),
        (json!({"artifactSchema": {"type": 12}}), "artifactSchema"),
    ] {
        let answer = submit(&stack, criteria.clone()).await;
        assert_eq!(answer["error"]["code"], -32602, "{criteria}: {answer}");
        let m = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            m.contains(CRITERIA_KEY) && m.contains(says),
            "{criteria}: {m}"
        );
    }
    // On a capability answered at once, criteria mean nothing: refused.
    let mut params =
        common::a2a::send_message_params("orders.query", json!({"aggregate": {"op": "count"}}));
    params["message"]["metadata"] = json!({ CRITERIA_KEY: {"description": "x"} });
    let answer = stack
        .a2a("buyercorp", "vendorcorp")
        .params(params)
        .send()
        .await
        .json;
    let m = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("acceptance criteria apply to a task"),
        "{answer}"
    );
    // Nothing reached Helpdesk: no task was accepted there.
    let peer: Vec<String> = common::trail(&stack.peer_db("helpdesk"), "helpdesk")
        .await
        .recent(50)
        .await
        .expect("trail")
        .into_iter()
        .map(|r| r.detail)
        .filter(|d| d.contains("accepted; deadline"))
        .collect();
    assert!(peer.is_empty(), "{peer:?}");
}
