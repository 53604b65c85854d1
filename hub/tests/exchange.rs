//! The exchange core end to end, against real processes on loopback:
//! idempotent consults, one trace across three independent trails, a peer
//! added by config alone, an official A2A client, live health, and what the
//! browser-facing registry view may contain.

mod common;

use common::{repo, trail, PeerSpec, Stack};
use exchange::audit::{Outcome, Role};
use serde_json::{json, Value};
use std::process::Command;
use std::time::{Duration, Instant};

fn topology_nodes(topology: &Value) -> Vec<Value> {
    topology["nodes"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_repeated_consult_request_id_executes_once_even_across_a_hub_restart() {
    let mut stack = Stack::start(vec![PeerSpec::stock("buyercorp")]).await;
    let ask = |stack: &Stack, rid: &str| {
        stack
            .call("helpdesk", "buyercorp", "budget.consult")
            .header("x-request-id", rid)
            .body(json!({ "question": "How much of the marketing budget is left?" }))
    };
    let first = ask(&stack, "idem-consult-1").send().await;
    let second = ask(&stack, "idem-consult-1").send().await;
    assert_eq!(
        first.result(),
        second.result(),
        "a replay returns the stored answer"
    );
    assert_eq!(first.json["replayed"], false);
    assert_eq!(second.json["replayed"], true);

    let responder = trail(&stack.peer_db("buyercorp"), "buyercorp").await;
    assert_eq!(
        responder
            .count("idem-consult-1", Outcome::Executed)
            .await
            .unwrap(),
        1
    );

    // The same id with another question: refused (409), never answered
    // with the first question's answer.
    let reused = stack
        .call("helpdesk", "buyercorp", "budget.consult")
        .header("x-request-id", "idem-consult-1")
        .body(json!({ "question": "Raise marketing to 1000000" }))
        .send()
        .await;
    assert_eq!(reused.status, 409, "{}", reused.json);
    assert_eq!(reused.reason(), "PEER_ERROR");

    stack.kill_hub();
    stack.start_hub().await;
    let third = ask(&stack, "idem-consult-1").send().await;
    assert_eq!(third.result(), first.result());
    assert_eq!(
        third.json["replayed"], true,
        "the idempotency record survives a restart"
    );
    assert_eq!(
        responder
            .count("idem-consult-1", Outcome::Executed)
            .await
            .unwrap(),
        1
    );

    // A new id is a new question: the responder runs again.
    let fresh = ask(&stack, "idem-consult-2").send().await;
    assert_eq!(fresh.json["replayed"], false);
    assert_eq!(
        responder
            .count("idem-consult-2", Outcome::Executed)
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn one_trace_id_runs_through_three_trails_and_the_rebuild_command_joins_them() {
    let stack = Stack::start(vec![
        PeerSpec::stock("vendorcorp"),
        PeerSpec::stock("buyercorp"),
    ])
    .await;
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let out = Command::new(common::peer_bin())
        .args(["call", "--config"])
        .arg(stack.peer_config("buyercorp"))
        .args(["--provider", "vendorcorp", "--capability", "orders.query"])
        .args([
            "--input",
            r#"{"aggregate":{"op":"avg","column":"order_value"},"group_by":"region"}"#,
        ])
        .args(["--request-id", "trace-test-1"])
        .args([
            "--traceparent",
            &format!("00-{trace_id}-00f067aa0ba902b7-01"),
        ])
        .envs(stack.tokens.clone())
        .current_dir(repo())
        .output()
        .expect("run peer call");
    assert!(
        out.status.success(),
        "peer call failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: Value =
        serde_json::from_slice(&out.stdout).expect("peer call prints the hub's JSON");
    assert_eq!(answer["status"], "connected", "{answer}");
    assert_eq!(answer["trace_id"], trace_id);

    let caller = trail(&stack.peer_db("buyercorp"), "buyercorp")
        .await
        .by_trace(trace_id)
        .await
        .unwrap();
    let hub = stack.hub_trail().await.by_trace(trace_id).await.unwrap();
    let responder = trail(&stack.peer_db("vendorcorp"), "vendorcorp")
        .await
        .by_trace(trace_id)
        .await
        .unwrap();
    assert!(
        caller.iter().any(|r| r.role == Role::Caller),
        "caller trail: {caller:?}"
    );
    assert!(
        hub.iter()
            .any(|r| r.role == Role::Hub && r.outcome == Outcome::Connected),
        "hub trail: {hub:?}"
    );
    assert!(responder
        .iter()
        .any(|r| r.role == Role::Responder && r.outcome == Outcome::Executed));
    for r in caller.iter().chain(&hub).chain(&responder) {
        assert_eq!(r.request_id, "trace-test-1");
        assert_eq!(r.capability, "orders.query");
    }

    let rebuilt = Command::new(env!("CARGO_BIN_EXE_hub"))
        .args(["trail", "--trace-id", trace_id, "--json"])
        .arg("--db")
        .arg(stack.hub_store.to_argument())
        .arg("--db")
        .arg(stack.peer_db("vendorcorp"))
        .arg("--db")
        .arg(stack.peer_db("buyercorp"))
        .output()
        .expect("run hub trail");
    assert!(
        rebuilt.status.success(),
        "{}",
        String::from_utf8_lossy(&rebuilt.stderr)
    );
    let records: Vec<Value> = serde_json::from_slice(&rebuilt.stdout).expect("JSON records");
    let mut systems: Vec<&str> = records
        .iter()
        .filter_map(|r| r["system"].as_str())
        .collect();
    systems.sort_unstable();
    systems.dedup();
    assert_eq!(systems, ["buyercorp", "hub", "vendorcorp"]);
    assert!(records.iter().all(|r| r["trace_id"] == trace_id));
    // No trail holds a token.
    let text = String::from_utf8_lossy(&rebuilt.stdout);
    for token in stack.tokens.values() {
        assert!(!text.contains(token.as_str()));
    }
}

#[tokio::test]
async fn a_fourth_peer_joins_by_config_alone() {
    let mut stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let ui = stack.ui().await;
    let before = ui.get_json("/api/topology").await;
    assert!(!topology_nodes(&before)
        .iter()
        .any(|n| n["id"] == "logistics"));

    stack.add_peer_by_config("logistics").await;

    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = ui.get_json("/api/topology").await;
        if topology_nodes(&now).iter().any(|n| n["id"] == "logistics") {
            break;
        }
        assert!(Instant::now() < deadline, "logistics never appeared: {now}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let csv = std::fs::read_to_string(repo().join("config/peers/data/shipments.csv")).unwrap();
    let rows = csv.lines().filter(|l| !l.trim().is_empty()).count() - 1;
    // Its data is read under a contract negotiated with it, like anyone's.
    stack
        .negotiate_with(
            "shipments.negotiate",
            "buyercorp",
            "logistics",
            &["carrier"],
        )
        .await;
    let a = stack
        .call("buyercorp", "logistics", "shipments.query")
        .body(json!({ "aggregate": { "op": "count" } }))
        .send()
        .await;
    // Numbers cross A2A data parts as JSON doubles (protobuf Struct): 60 arrives as 60.0.
    assert_eq!(
        a.result()["row_count"].as_f64(),
        Some(rows as f64),
        "{}",
        a.json
    );
}

/// Personal columns are outside both halves of the orders grant: the hub
/// refuses a query naming them before forwarding (NOT_PERMITTED), and if
/// the hub's registry forgets its half, VendorCorp refuses it under the
/// caller's contract before reading a row (PEER_ERROR: `SCOPE_DENIED`
/// naming the column, the granted ones and the purpose). Either way no
/// e-mail address comes back.
#[tokio::test]
async fn a_query_naming_a_personal_column_is_refused_by_the_hub_and_by_the_data_owner() {
    let mut stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let pii = [
        json!({ "aggregate": { "op": "count" }, "group_by": "customer_email" }),
        json!({ "aggregate": { "op": "count", "column": "customer_name" } }),
        json!({ "filters": [{ "column": "customer_email", "op": "eq", "value": "x@example.com" }] }),
    ];
    let query = |stack: &Stack, body: &Value| {
        stack
            .call("buyercorp", "vendorcorp", "orders.query")
            .body(body.clone())
    };
    let responder = trail(&stack.peer_db("vendorcorp"), "vendorcorp").await;
    let executed_before = responder.recent(100_000).await.unwrap().len();
    for body in &pii {
        let a = query(&stack, body).send().await;
        assert_eq!(a.reason(), "NOT_PERMITTED", "{body}: {}", a.json);
        let detail = a.json["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("outside the contract"), "{detail}");
        assert!(!a.json.to_string().contains('@') || body.to_string().contains('@'));
    }
    assert_eq!(
        responder.recent(100_000).await.unwrap().len(),
        executed_before,
        "a refused query never reaches the provider"
    );
    // A granted query still answers.
    let ok = query(
        &stack,
        &json!({ "aggregate": { "op": "count" }, "group_by": "region" }),
    )
    .send()
    .await;
    assert!(!ok.result()["groups"].as_array().unwrap().is_empty());

    // The hub forgets its half of the grant (reloaded live): the data owner
    // still refuses, and says which column and what is granted.
    for cap in stack.topology_mut()["capabilities"]
        .as_sequence_mut()
        .expect("capabilities")
    {
        if cap["id"] == "orders.query" {
            cap.as_mapping_mut()
                .expect("capability")
                .remove(serde_yaml_ng::Value::from("input_schema"));
        }
    }
    stack.write_topology();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let a = query(&stack, &pii[0]).send().await;
        if a.reason() == "PEER_ERROR" {
            let detail = a.json["detail"].as_str().unwrap_or_default();
            assert!(
                detail
                    .contains("SCOPE_DENIED: [\"customer_email\"] was not granted by contract c-"),
                "{detail}"
            );
            assert!(
                detail.contains(
                    "Granted columns: {\"order_date\", \"order_value\", \"product\", \"region\"}"
                ),
                "{detail}"
            );
            assert!(!a.json.to_string().contains('@'), "{}", a.json);
            break;
        }
        assert_eq!(a.reason(), "NOT_PERMITTED");
        assert!(
            Instant::now() < deadline,
            "the reload never dropped the input schema"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for body in &pii[1..] {
        let a = query(&stack, body).send().await;
        assert_eq!(a.reason(), "PEER_ERROR", "{body}: {}", a.json);
        assert!(a.json["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("not granted"));
    }
}

#[tokio::test]
async fn the_official_python_a2a_sdk_talks_to_a_peer() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let python = repo().join(".tools/venv/bin/python");
    assert!(
        python.exists(),
        "{} missing: run scripts/setup",
        python.display()
    );
    let out = Command::new(python)
        .arg(repo().join("hub/tests/clients/a2a_python_client.py"))
        .arg(stack.peer_url("vendorcorp"))
        .arg(stack.token("vendorcorp"))
        // Straight to the peer there is no hub to name a consumer: a read
        // would be NO_CONTRACT, so the SDK negotiates one instead.
        .arg("orders.negotiate")
        .arg(r#"{"from":"consumer","intent":"propose","scope":{"columns":["region","order_value"],"purpose":"a2a-sdk interop","retention_days":30},"rationale":"interop"}"#)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "python a2a-sdk failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON from the client");
    assert_eq!(v["card_name"], "VendorCorp");
    assert!(v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s == "orders.query"));
    let data = &v["data_answer"]["message"]["parts"][0]["data"];
    assert_eq!(data["reply"]["intent"], "accept", "{v}");
    assert!(
        data["grant"]["contract_id"]
            .as_str()
            .is_some_and(|c| c.starts_with("c-")),
        "{v}"
    );
    assert!(v["text_answer"]["message"]["parts"]
        .as_array()
        .is_some_and(|p| !p.is_empty()));
}

#[tokio::test]
async fn a_dead_peer_is_degraded_within_three_seconds_and_recovers() {
    let mut stack = Stack::start(vec![
        PeerSpec::stock("vendorcorp"),
        PeerSpec::stock("helpdesk"),
    ])
    .await;
    let ui = stack.ui().await;
    let url = "/api/topology";
    let get_json = |path: &'static str| {
        let ui = ui.clone();
        async move { ui.get_json(path).await }
    };
    let status_of = |t: &Value, id: &str| {
        topology_nodes(t)
            .into_iter()
            .find(|n| n["id"] == id)
            .map(|n| {
                (
                    n["status"].as_str().unwrap_or("").to_string(),
                    n["reason"].clone(),
                )
            })
    };
    // Wait for the first probe round.
    let deadline = Instant::now() + Duration::from_secs(5);
    while status_of(&get_json(url).await, "vendorcorp").map(|s| s.0) != Some("healthy".into()) {
        assert!(Instant::now() < deadline, "vendorcorp never became healthy");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut events = ui
        .request(reqwest::Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    stack.kill_peer("vendorcorp");
    let killed = Instant::now();
    loop {
        let t = get_json(url).await;
        let (status, reason) = status_of(&t, "vendorcorp").unwrap();
        if status == "degraded" {
            assert_eq!(reason, "PEER_UNREACHABLE");
            break;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(3),
            "not degraded 3 s after death: {t}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The other peer is untouched.
    assert_eq!(
        status_of(&get_json(url).await, "helpdesk").unwrap().0,
        "healthy"
    );
    // Subscribers were told.
    let mut seen = String::new();
    let sse_deadline = Instant::now() + Duration::from_secs(5);
    while !(seen.contains("vendorcorp") && seen.contains("PEER_UNREACHABLE")) {
        assert!(
            Instant::now() < sse_deadline,
            "no SSE event about vendorcorp: {seen}"
        );
        match tokio::time::timeout(Duration::from_secs(5), events.chunk()).await {
            Ok(Ok(Some(bytes))) => seen.push_str(&String::from_utf8_lossy(&bytes)),
            _ => break,
        }
    }
    assert!(
        seen.contains("vendorcorp") && seen.contains("PEER_UNREACHABLE"),
        "{seen}"
    );

    stack.start_peer("vendorcorp").await;
    let back = Instant::now();
    while status_of(&get_json(url).await, "vendorcorp").map(|s| s.0) != Some("healthy".into()) {
        assert!(
            back.elapsed() < Duration::from_secs(3),
            "vendorcorp did not recover"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_topology_view_leaks_no_token_env_name_base_url_or_allowlist() {
    let stack = Stack::demo().await;
    let (status, body) = stack.ui().await.get("/api/topology").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("vendorcorp") && body.contains("orders.query"),
        "{body}"
    );
    let mut forbidden: Vec<String> = vec![
        "127.0.0.1".into(),
        "/32".into(),
        "http://".into(),
        "token".into(),
        "WS_TOKEN".into(),
        "allowlist".into(),
        "base_url".into(),
    ];
    forbidden.extend(stack.tokens.keys().cloned());
    forbidden.extend(stack.tokens.values().cloned());
    for id in ["vendorcorp", "buyercorp", "helpdesk"] {
        forbidden.push(stack.peer_url(id));
        forbidden.push(format!(":{}", stack.peer_ports[id]));
    }
    for f in &forbidden {
        assert!(
            !body.contains(f.as_str()),
            "/api/topology leaks {f:?}: {body}"
        );
    }
}

/// The audit trail's group commit: a call is answered only
/// once its record is committed, so killing the hub with SIGKILL while
/// calls are in flight loses no record of a call that was answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answered_call_has_its_audit_record_after_the_hub_is_killed() {
    let mut stack = Stack::start_without_contracts(vec![]).await;
    stack.add_echo("echo").await;
    let url = format!("{}/a2a/echo", stack.hub_url());
    let token = stack.token("buyercorp");
    let client = reqwest::Client::new();
    let (answered, mut answers) = tokio::sync::mpsc::unbounded_channel::<String>();
    // 16 callers at once, each call after the other, until the hub dies.
    for caller in 0..16 {
        let (client, url, token, answered) =
            (client.clone(), url.clone(), token.clone(), answered.clone());
        tokio::spawn(async move {
            for n in 0.. {
                let id = format!("durable-{caller}-{n}");
                let body = json!({
                    "jsonrpc": "2.0", "id": id, "method": "SendMessage",
                    "params": { "message": {
                        "messageId": id, "role": "ROLE_USER",
                        "parts": [{ "data": { "capability": "echo.data", "input": { "text": "x" } } }],
                    } }
                });
                let Ok(resp) = client
                    .post(&url)
                    .bearer_auth(&token)
                    .header("a2a-version", "1.0")
                    .json(&body)
                    .send()
                    .await
                else {
                    return;
                };
                let Ok(answer) = resp.json::<Value>().await else {
                    return;
                };
                assert!(
                    answer.pointer("/result/message/parts/0/data").is_some(),
                    "{answer}"
                );
                if answered.send(id).is_err() {
                    return;
                }
            }
        });
    }
    drop(answered);
    let mut ids = Vec::new();
    while ids.len() < 300 {
        ids.push(answers.recv().await.expect("answers"));
    }
    // SIGKILL mid-stream: no shutdown, no flush.
    stack.kill_hub();
    while let Some(id) = answers.recv().await {
        ids.push(id);
    }
    let hub = stack.hub_trail().await;
    for id in &ids {
        assert_eq!(
            hub.count(id, Outcome::Connected).await.expect("trail"),
            1,
            "call {id} was answered but its audit record is missing"
        );
    }
}
