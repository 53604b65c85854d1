//! The push relay (NOTES.md, "Push relay"), with real processes on both
//! sides: the official Python a2a-sdk registers a webhook for a long
//! Helpdesk task through the hub, the Helpdesk reference peer pushes each
//! event to the hub's own webhook, and the hub delivers each one to a real
//! HTTP receiver the test starts, with the receiver's token and the hub's
//! signature, which verifies against the hub's JWKS. Webhooks that would
//! open the hub's network are refused at registration (a loopback admin
//! port, a link-local metadata address) or at connect time (a name that
//! rebinds to loopback); a receiver that is down gets its retries and then
//! a dead letter; another caller can neither read nor delete a caller's
//! configuration.

mod common;

use std::net::{Ipv4Addr, SocketAddr};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::HeaderMap;
use common::dns::Dns;
use common::{repo, PeerSpec, Stack};
use serde_json::{json, Value};

/// What a receiver got: each request's headers and body.
type Got = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

/// A webhook receiver on `ip` (any port) that answers 200 and keeps what
/// it got.
async fn receiver(ip: Ipv4Addr) -> (SocketAddr, Got) {
    let got: Got = Arc::default();
    let kept = got.clone();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = kept.clone();
            async move {
                kept.lock().expect("lock").push((headers, body));
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, got)
}

fn demo_peers() -> Vec<PeerSpec> {
    ["vendorcorp", "buyercorp", "helpdesk"]
        .map(PeerSpec::stock)
        .to_vec()
}

/// Starts a triage task of `work_ms` at Helpdesk for BuyerCorp, answered
/// once accepted: its id.
async fn long_task(stack: &Stack, work_ms: u64) -> String {
    let started = stack
        .a2a("buyercorp", "helpdesk")
        .params(common::a2a::triage(
            &common::a2a::unique(),
            json!({"ticket_id": "T-1003", "work_ms": work_ms}),
            true,
            None,
        ))
        .send()
        .await;
    started.json["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {}", started.json))
        .to_string()
}

/// `method` of the push-config operations at Helpdesk, as `caller`.
async fn push_rpc(stack: &Stack, caller: &str, method: &str, params: Value) -> Value {
    stack
        .a2a(caller, "helpdesk")
        .method(method)
        .params(params)
        .send()
        .await
        .json
}

/// How many push deliveries ended `outcome` (`/metrics`).
async fn deliveries(stack: &Stack, outcome: &str) -> u64 {
    common::metric_samples(&stack.hub_url(), "wallstreet_push_deliveries_total")
        .await
        .into_iter()
        .filter(|(labels, _)| labels.contains(&format!("outcome=\"{outcome}\"")))
        .map(|(_, n)| n)
        .sum()
}

/// Waits until `ready` holds, or panics with `what` after `within`.
async fn until<F: FnMut() -> bool>(within: Duration, what: &str, mut ready: F) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < within, "{what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_callers_webhook_gets_each_event_of_its_long_task_signed_by_the_hub() {
    let receiver_ip = Ipv4Addr::new(127, 0, 0, 3);
    let stack = Stack::start_with_env(demo_peers(), &[("WS_PUSH_NETWORKS", "127.0.0.3/32")]).await;
    let (addr, got) = receiver(receiver_ip).await;
    let webhook = format!("http://{addr}/hook");

    // The official Python SDK: a task started, a webhook registered for it.
    let out = Command::new(repo().join(".tools/venv/bin/python"))
        .arg(repo().join("hub/tests/clients/push_register.py"))
        .args([
            &format!("{}/a2a/helpdesk/", stack.hub_url()),
            &stack.token("buyercorp"),
            &webhook,
            "receiver-secret-1",
            r#"{"capability": "ticket.triage", "input": {"ticket_id": "T-1003", "work_ms": 2500}}"#,
        ])
        .output()
        .expect("run push_register.py");
    let registered: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "push_register.py: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    eprintln!("registered: {registered}");
    let task_id = registered["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{registered}\n{}", stack.hub_log()))
        .to_string();
    assert_eq!(registered["config"]["url"], json!(webhook), "{registered}");
    assert_eq!(
        registered["config"]["token"], "receiver-secret-1",
        "{registered}"
    );

    // Each event the provider pushed reaches the receiver, up to the end.
    let completed = |got: &Got| {
        got.lock()
            .expect("lock")
            .iter()
            .any(|(_, body)| String::from_utf8_lossy(body).contains("TASK_STATE_COMPLETED"))
    };
    until(
        Duration::from_secs(20),
        "the completed task reached the webhook",
        || completed(&got),
    )
    .await;
    let keys = stack.hub_jwks().await;
    let received = got.lock().expect("lock").clone();
    let mut states = Vec::new();
    for (headers, body) in &received {
        // The receiver's own token, never the hub's secret at the provider.
        assert_eq!(
            headers
                .get("a2a-notification-token")
                .and_then(|v| v.to_str().ok()),
            Some("receiver-secret-1")
        );
        // Signed by the hub: a detached JWS over the body, its key in the
        // hub's published JWKS.
        let signature = headers
            .get("wall-street-push-signature")
            .and_then(|v| v.to_str().ok())
            .expect("a signature");
        let kid = exchange::jws::verify_detached(signature, body, &keys, "the delivery")
            .expect("the signature verifies against the hub's JWKS");
        assert!(!kid.is_empty());
        let mut changed = body.to_vec();
        changed[1] ^= 1;
        assert!(exchange::jws::verify_detached(signature, &changed, &keys, "x").is_err());
        let event: Value = serde_json::from_slice(body).expect("a JSON event");
        let about = event
            .pointer("/statusUpdate/taskId")
            .or_else(|| event.pointer("/task/id"))
            .or_else(|| event.pointer("/artifactUpdate/taskId"));
        assert_eq!(about, Some(&json!(task_id)), "{event}");
        if let Some(state) = event
            .pointer("/statusUpdate/status/state")
            .or_else(|| event.pointer("/task/status/state"))
        {
            states.push(state.clone());
        }
    }
    eprintln!("pushed states: {states:?} ({} deliveries)", received.len());
    assert_eq!(
        states.last(),
        Some(&json!("TASK_STATE_COMPLETED")),
        "{states:?}"
    );
    let delivered = deliveries(&stack, "delivered").await;
    assert!(delivered as usize >= received.len(), "{delivered}");

    // Someone who is not the provider posts to the hub's webhook: a forged
    // token at the real relay, any token at a relay that does not exist.
    // Both are the same 401, and nothing reaches the caller's receiver.
    let store = stack.hub_store().await;
    let relay_id: String = sqlx::query_scalar("SELECT relay_id FROM push_relays")
        .fetch_one(store.pool())
        .await
        .expect("the hub's relay for the task");
    let forged = json!({"statusUpdate": {"taskId": task_id, "contextId": "c",
        "status": {"state": "TASK_STATE_FAILED"}}});
    let before = got.lock().expect("lock").len();
    let mut answers = Vec::new();
    for relay in [relay_id.as_str(), "relay-nobody"] {
        let resp = reqwest::Client::new()
            .post(format!("{}/push/v1/{relay}", stack.hub_url()))
            .header("a2a-notification-token", "receiver-secret-1")
            .json(&forged)
            .send()
            .await
            .expect("the hub answers");
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.expect("a JSON error");
        answers.push((status, body["error"]["message"].clone()));
    }
    assert_eq!(answers[0], answers[1], "one answer for both: {answers:?}");
    assert_eq!(answers[0].0, 401, "{answers:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(got.lock().expect("lock").len(), before, "nothing relayed");
    assert_eq!(deliveries(&stack, "delivered").await, delivered);
}

#[tokio::test(flavor = "multi_thread")]
async fn webhooks_that_would_open_the_network_are_refused_and_a_dead_one_is_buried() {
    let dns = Dns::start("rebind.test", Ipv4Addr::new(127, 0, 0, 3)).await;
    let dns_addr = dns.addr.to_string();
    let stack = Stack::start_with_env(
        demo_peers(),
        &[
            ("WS_PUSH_NETWORKS", "127.0.0.3/32"),
            ("WS_EGRESS_DNS", dns_addr.as_str()),
        ],
    )
    .await;
    let task_id = long_task(&stack, 2000).await;
    let create = |url: String| json!({"taskId": task_id, "url": url, "token": "t"});

    // Refused at registration, each with its reason, nothing kept.
    for (url, says) in [
        (
            format!("http://127.0.0.1:{}/api/people", stack.hub_port),
            "where the hub itself listens",
        ),
        (
            "http://169.254.169.254/latest/meta-data".to_string(),
            "169.254.169.254",
        ),
        ("file:///etc/passwd".to_string(), "http or https"),
    ] {
        let answer = push_rpc(
            &stack,
            "buyercorp",
            "CreateTaskPushNotificationConfig",
            create(url.clone()),
        )
        .await;
        eprintln!("{url} -> {answer}");
        assert_eq!(answer["error"]["code"], -32602, "{url}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{url}: {answer}");
    }

    // A name that resolves to an allowed address now, and to loopback
    // when the hub connects; and a receiver that is down. Both are taken
    // at registration, and both end as dead letters.
    let (loopback, loopback_got) = receiver(Ipv4Addr::LOCALHOST).await;
    let rebinding = format!("http://rebind.test:{}/hook", loopback.port());
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.3:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let down = format!("http://127.0.0.3:{closed}/hook");
    for url in [&rebinding, &down] {
        let answer = push_rpc(
            &stack,
            "buyercorp",
            "CreateTaskPushNotificationConfig",
            create(url.clone()),
        )
        .await;
        assert_eq!(answer["result"]["url"], json!(url), "{answer}");
    }
    dns.answer(Ipv4Addr::LOCALHOST);

    // Another caller: neither its list, nor a read, nor a delete.
    let listed = push_rpc(
        &stack,
        "buyercorp",
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    let ids: Vec<String> = listed["result"]["configs"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|c| c["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(ids.len(), 2, "{listed}");
    for (method, params) in [
        (
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task_id}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": ids[0]}),
        ),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": ids[0]}),
        ),
    ] {
        let answer = push_rpc(&stack, "helpdesk", method, params).await;
        assert_eq!(answer["error"]["code"], -32001, "{method}: {answer}");
        assert!(!answer.to_string().contains("rebind.test"), "{answer}");
    }
    let still = push_rpc(
        &stack,
        "buyercorp",
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": ids[0]}),
    )
    .await;
    assert_eq!(still["result"]["id"], json!(ids[0]), "{still}");

    // The task ends; each of its events fails every attempt at both.
    let hub_db = stack.hub_store.to_argument();
    let letters = || {
        let out = Command::new(env!("CARGO_BIN_EXE_hub"))
            .args(["push", "dead-letters", "--db", &hub_db])
            .output()
            .expect("run hub push dead-letters");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let started = Instant::now();
    let mut text = letters();
    while !(text.contains(&rebinding) && text.contains(&down)) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "dead letters: {text}\n{}",
            stack.hub_log()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        text = letters();
    }
    eprintln!("dead letters:\n{text}");
    for line in text.lines() {
        let letter: Value = serde_json::from_str(line).expect("a JSON line");
        assert_eq!(letter["attempts"], 4, "{letter}");
        assert_eq!(letter["caller"], "buyercorp", "{letter}");
        if letter["url"] == json!(rebinding) {
            let why = letter["last_error"].as_str().unwrap_or_default();
            assert!(
                why.contains("127.0.0.1"),
                "refused at connect time: {letter}"
            );
        }
    }
    assert!(
        loopback_got.lock().expect("lock").is_empty(),
        "nothing reached the loopback receiver"
    );
    assert!(deliveries(&stack, "dead_letter").await >= 2);
    assert!(deliveries(&stack, "retried").await >= 6);
}
