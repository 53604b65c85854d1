//! What the hub's A2A surface answers besides a message: the card in the
//! shape the caller's version reads, task ids in messages, empty task
//! lists, a text message to a provider whose skills take data, and the
//! operations it does not offer (push, unknown routes) —
//! each an A2A answer, never the canvas's login page.

mod common;

use common::{PeerSpec, Stack};
use serde_json::{json, Value};

async fn card(stack: &Stack, caller: &str, provider: &str, version: Option<&str>) -> Value {
    let mut req = reqwest::Client::new()
        .get(format!(
            "{}/a2a/{provider}/.well-known/agent-card.json",
            stack.hub_url()
        ))
        .bearer_auth(stack.token(caller));
    if let Some(v) = version {
        req = req.header("a2a-version", v);
    }
    req.send()
        .await
        .expect("the hub answers")
        .json()
        .await
        .expect("a JSON card")
}

#[tokio::test]
async fn the_card_has_the_shape_the_callers_version_reads() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let v1 = card(&stack, "buyercorp", "vendorcorp", Some("1.0")).await;
    assert!(v1["supportedInterfaces"].is_array(), "{v1}");
    for v03_only in ["url", "protocolVersion", "preferredTransport", "security"] {
        assert!(
            v1.get(v03_only).is_none(),
            "a v1.0 card has no {v03_only}: {v1}"
        );
    }
    assert!(
        v1["securitySchemes"]["bearer"].get("type").is_none(),
        "{v1}"
    );
    let v03 = card(&stack, "buyercorp", "vendorcorp", Some("0.3")).await;
    assert_eq!(
        v03["url"],
        format!("{}/a2a/vendorcorp", stack.hub_url()),
        "{v03}"
    );
    assert!(v03.get("supportedInterfaces").is_none(), "{v03}");
    assert_eq!(v03["securitySchemes"]["bearer"]["type"], "http");
    let resp = reqwest::Client::new()
        .get(format!(
            "{}/a2a/vendorcorp/.well-known/agent-card.json",
            stack.hub_url()
        ))
        .bearer_auth(stack.token("buyercorp"))
        .send()
        .await
        .expect("the hub answers");
    assert_eq!(
        resp.headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("private, max-age=30"),
        "a caller's own card is cached privately"
    );
    let undeclared = card(&stack, "buyercorp", "vendorcorp", None).await;
    assert!(
        undeclared["supportedInterfaces"].is_array() && undeclared["url"].is_string(),
        "{undeclared}"
    );
    assert_eq!(undeclared["protocolVersion"], "0.3.0", "{undeclared}");
    // Each scheme in both shapes.
    let bearer = &undeclared["securitySchemes"]["bearer"];
    assert!(
        bearer["httpAuthSecurityScheme"].is_object() && bearer["type"] == "http",
        "{undeclared}"
    );
}

#[tokio::test]
async fn task_ids_in_messages_and_task_lists() {
    let stack = Stack::start(vec![
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    // No task yet: an empty list, not an error.
    let empty = stack
        .a2a("buyercorp", "helpdesk")
        .method("ListTasks")
        .params(json!({}))
        .send()
        .await;
    assert_eq!(empty.result()["tasks"], json!([]), "{}", empty.json);
    // A message naming a task that is not the caller's is TaskNotFound.
    let unknown = stack
        .a2a("buyercorp", "helpdesk")
        .params(json!({"message": {"messageId": "m-unknown-task", "role": "ROLE_USER", "taskId": "no-such-task",
            "parts": [{"data": {"capability": "ticket.classify", "input": {"ticket_id": "T-1001"}}}]}}))
        .send()
        .await;
    assert_eq!(unknown.code(), -32001, "{}", unknown.json);
    // Its own task: the message goes on to the provider with the task id.
    let task = stack
        .a2a("buyercorp", "helpdesk")
        .data("ticket.classify", json!({"ticket_id": "T-1001"}))
        .send()
        .await;
    let id = task.result()["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string();
    let list = stack
        .a2a("buyercorp", "helpdesk")
        .method("ListTasks")
        .params(json!({}))
        .send()
        .await;
    assert_eq!(
        list.result()["tasks"].as_array().map(Vec::len),
        Some(1),
        "{}",
        list.json
    );
    let again = stack
        .a2a("buyercorp", "helpdesk")
        .params(json!({"message": {"messageId": "m-own-task", "role": "ROLE_USER", "taskId": id,
            "parts": [{"data": {"capability": "ticket.classify", "input": {"ticket_id": "T-1002"}}}]}}))
        .send()
        .await;
    // The hub let it through (no TaskNotFound); the provider refuses a
    // message to its ended task with its own A2A error, which the caller
    // gets with its code (UnsupportedOperationError), as PEER_ERROR.
    assert_eq!(again.code(), -32004, "{}", again.json);
    assert_eq!(again.reason(), "PEER_ERROR");
    assert!(again.message().contains("terminal state"), "{}", again.json);
    // A refusal of what the caller asked is not the provider failing:
    // helpdesk stays healthy on the status board.
    let ui = stack.ui().await;
    let topology = ui.get_json("/api/topology").await;
    let helpdesk = topology["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["id"] == "helpdesk"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(helpdesk["status"], "healthy", "{topology}");
}

#[tokio::test]
async fn text_to_a_data_share_is_answered_with_its_skills() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let a = stack
        .a2a("buyercorp", "vendorcorp")
        .params(json!({"message": {"messageId": "m-hello", "role": "ROLE_USER", "parts": [{"text": "hello, what can you do?"}]}}))
        .send()
        .await;
    let text = a.result()["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        text.contains("orders.query") && text.contains("example data part"),
        "{}",
        a.json
    );
    // Authenticated and audited like any call: without a token, 401.
    let anonymous = stack
        .a2a("buyercorp", "vendorcorp")
        .without_header("authorization")
        .params(json!({"message": {"messageId": "m-anon", "role": "ROLE_USER", "parts": [{"text": "hello"}]}}))
        .send()
        .await;
    assert_eq!(
        (anonymous.status, anonymous.reason()),
        (401, "AUTH_REJECTED")
    );
}

#[tokio::test]
async fn operations_the_surface_does_not_offer_are_a2a_errors() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    // The extended card is offered (see tests/discovery.rs); push configs
    // are (tests/push.rs), on the caller's own tasks only: one on a task
    // that is nobody's is the task's absence, on both bindings.
    let ext = stack
        .a2a("buyercorp", "vendorcorp")
        .method("GetExtendedAgentCard")
        .params(json!({}))
        .send()
        .await;
    assert_eq!(
        ext.result()["skills"][0]["id"],
        "orders.query",
        "{}",
        ext.json
    );
    let push = stack
        .a2a("buyercorp", "vendorcorp")
        .method("CreateTaskPushNotificationConfig")
        .params(json!({"taskId": "t", "url": "http://127.0.0.1:9/"}))
        .send()
        .await;
    assert_eq!(push.code(), -32001, "{}", push.json);
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    for (method, path, status, reason) in [
        (
            "GET",
            "tasks/t/pushNotificationConfigs",
            404,
            "TASK_NOT_FOUND",
        ),
        ("GET", "no/such/route", 404, "METHOD_NOT_FOUND"),
    ] {
        let url = format!("{}/a2a/vendorcorp/rest/{path}", stack.hub_url());
        let req = if method == "POST" {
            client.post(&url).json(&json!({}))
        } else {
            client.get(&url)
        };
        let resp = req
            .bearer_auth(stack.token("buyercorp"))
            .header("a2a-version", "1.0")
            .send()
            .await
            .expect("the hub answers");
        assert_eq!(resp.status().as_u16(), status, "{method} {path}");
        let body: Value = resp.json().await.expect("a JSON error, not a login page");
        let reasons: Vec<&str> = body["error"]["details"]
            .as_array()
            .map(|d| d.iter().filter_map(|d| d["reason"].as_str()).collect())
            .unwrap_or_default();
        assert!(reasons.contains(&reason), "{method} {path}: {body}");
    }
}

#[tokio::test]
async fn a_repeated_consult_answers_the_first_answer_marked_replayed() {
    let stack = Stack::start(vec![
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    let send = || {
        stack
            .a2a("buyercorp", "helpdesk")
            .params(json!({"message": {"messageId": "m-repeat-1", "role": "ROLE_USER",
                "parts": [{"data": {"capability": "ticket.classify", "input": {"ticket_id": "T-1003"}}}]}}))
            .send()
    };
    let first = send().await;
    let again = send().await;
    let (a, b) = (&first.result()["task"], &again.result()["task"]);
    assert_eq!(
        a["id"], b["id"],
        "the same task, not a new execution: {}",
        again.json
    );
    assert_eq!(a["artifacts"], b["artifacts"]);
    assert!(a["metadata"]["replayed"].is_null(), "{}", first.json);
    assert_eq!(b["metadata"]["replayed"], true, "{}", again.json);
}

#[tokio::test]
async fn a_task_list_pages_over_the_callers_own_tasks_only() {
    let stack = Stack::start(vec![
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    for n in 1..=3 {
        let t = stack
            .a2a("buyercorp", "helpdesk")
            .data("ticket.classify", json!({"ticket_id": format!("T-100{n}")}))
            .send()
            .await;
        assert!(t.result()["task"]["id"].is_string(), "{}", t.json);
    }
    let list = |caller: &'static str, params: Value| {
        stack
            .a2a(caller, "helpdesk")
            .method("ListTasks")
            .params(params)
            .send()
    };
    // The owner pages through its three tasks with the hub's tokens.
    let first = list("buyercorp", json!({"pageSize": 2})).await;
    let r = first.result();
    assert_eq!(
        (r["tasks"].as_array().map(Vec::len), &r["totalSize"]),
        (Some(2), &json!(3)),
        "{}",
        first.json
    );
    let token = r["nextPageToken"].as_str().unwrap_or_default().to_string();
    assert!(!token.is_empty(), "{}", first.json);
    let second = list("buyercorp", json!({"pageSize": 2, "pageToken": token})).await;
    let r = second.result();
    assert_eq!(
        r["tasks"].as_array().map(Vec::len),
        Some(1),
        "{}",
        second.json
    );
    assert_eq!(r["nextPageToken"], "", "{}", second.json);
    // Another caller at the same provider: nothing, and no page to follow
    // that would say someone else's tasks are there.
    let other = list("helpdesk", json!({"pageSize": 1})).await;
    let r = other.result();
    assert_eq!(
        (&r["tasks"], &r["totalSize"], &r["nextPageToken"]),
        (&json!([]), &json!(0), &json!("")),
        "{}",
        other.json
    );
    // A token the hub did not issue: invalid params.
    let forged = list("buyercorp", json!({"pageToken": "provider-token"})).await;
    assert_eq!(forged.code(), -32602, "{}", forged.json);
}
