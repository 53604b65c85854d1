//! Official A2A clients this project did not write, through the hub's A2A
//! surface (DESIGN.md §4, "Peer to peer"): the Python `a2a-sdk` 1.3 and 0.3
//! lines as published, against real peers behind a real hub, and a
//! provider on the 0.3 line reached by a v1.0 caller through the version
//! bridge. Plus task isolation: a second caller cannot see or cancel the
//! first caller's task.
//!
//! The clients are CLIs (`hub/tests/clients/a2a_hub_client.py`,
//! `a2a03_hub_client.py`) that print one JSON object per command; an A2A
//! error is printed with its `ErrorInfo` (reason, trace id), so these tests
//! assert what an SDK user would see.

mod common;

use common::{repo, PeerSpec, Stack};
use serde_json::{json, Value};
use std::process::Command;

/// Runs one command of a Python client; its JSON output.
fn client(venv: &str, script: &str, url: &str, token: &str, args: &[&str]) -> Value {
    let python = repo().join(venv).join("bin/python");
    assert!(
        python.exists(),
        "{} missing: run scripts/setup test",
        python.display()
    );
    let out = Command::new(&python)
        .arg(repo().join("hub/tests/clients").join(script))
        .arg(url)
        .arg(token)
        .args(args)
        .output()
        .expect("run the python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{script}: not JSON ({e}): {stdout}"))
}

/// The a2a-sdk 1.3 client.
fn sdk13(url: &str, token: &str, args: &[&str]) -> Value {
    client(".tools/venv", "a2a_hub_client.py", url, token, args)
}

/// The a2a-sdk 0.3 client.
fn sdk03(url: &str, token: &str, args: &[&str]) -> Value {
    client(".tools/venv03", "a2a03_hub_client.py", url, token, args)
}

/// The hub's audit records matching `filter` (an SQL condition), as JSON
/// objects of the columns tests assert on.
async fn hub_audit(stack: &Stack, filter: &str) -> Vec<Value> {
    use sqlx::Row;
    let store = stack.hub_store().await;
    let rows = sqlx::query(&format!(
        "SELECT caller, provider, capability, outcome, reason FROM audit_trail WHERE {filter} ORDER BY seq"
    ))
    .fetch_all(store.pool())
    .await
    .expect("read the hub's trail");
    rows.iter()
        .map(|r| {
            let col = |c: &str| r.try_get::<Option<String>, _>(c).ok().flatten();
            json!({"caller": col("caller"), "provider": col("provider"), "capability": col("capability"),
                   "outcome": col("outcome"), "reason": col("reason")})
        })
        .collect()
}

fn surface(stack: &Stack, provider: &str) -> String {
    format!("{}/a2a/{provider}", stack.hub_url())
}

#[tokio::test]
async fn the_python_a2a_sdk_1_3_uses_the_hub_like_any_agent() {
    let stack = Stack::demo().await;
    let buyer = stack.token("buyercorp");
    let vendor_url = surface(&stack, "vendorcorp");

    // Card resolution from the hub's URL: the provider's skills, the hub's
    // interfaces and security scheme.
    let card = sdk13(&vendor_url, &buyer, &["card"]);
    assert_eq!(card["name"], "VendorCorp", "{card}");
    assert_eq!(card["skills"], json!(["orders.query", "orders.negotiate"]));
    assert_eq!(card["security_schemes"], json!(["bearer"]));
    let interfaces = card["interfaces"].as_array().expect("interfaces");
    // The HTTP bindings under the provider's URL; gRPC at the hub's
    // address as a gRPC target, the provider as its tenant.
    let (grpc, http): (Vec<&Value>, Vec<&Value>) = interfaces
        .iter()
        .partition(|i| i["protocolBinding"] == "GRPC");
    assert!(http.iter().all(|i| i["url"]
        .as_str()
        .is_some_and(|u| u.starts_with(&vendor_url))));
    assert_eq!(grpc.len(), 1, "{card}");
    assert_eq!(grpc[0]["url"], format!("127.0.0.1:{}", stack.hub_port));
    assert_eq!(grpc[0]["tenant"], "vendorcorp");
    assert!(interfaces
        .iter()
        .any(|i| i["protocolBinding"] == "HTTP+JSON" && i["protocolVersion"] == "1.0"));

    // A data-share, over both bindings.
    let count = r#"{"aggregate":{"op":"count"},"group_by":"region"}"#;
    for transport in ["jsonrpc", "http+json"] {
        let a = sdk13(
            &vendor_url,
            &buyer,
            &["send", "--data", count, "--transport", transport],
        );
        assert_eq!(a["kind"], "message", "{transport}: {a}");
        assert_eq!(
            a["data"]["row_count"].as_f64(),
            Some(624.0),
            "{transport}: {a}"
        );
        assert_eq!(a["data"]["groups"].as_array().map(Vec::len), Some(4));
    }

    // A consult by plain text: the question of the provider's one skill.
    let consult = sdk13(
        &surface(&stack, "buyercorp"),
        &stack.token("helpdesk"),
        &["send", "--text", "How much does marketing have left?"],
    );
    assert_eq!(consult["data"]["department"], "marketing", "{consult}");
    assert!(consult["data"]["remaining"].is_number());

    // A task: helpdesk answers a classification as a completed task, which
    // its creator reads again with GetTask and finds in ListTasks.
    let helpdesk_url = surface(&stack, "helpdesk");
    let task = sdk13(
        &helpdesk_url,
        &buyer,
        &["send", "--data", r#"{"ticket_id":"T-1003"}"#],
    );
    assert_eq!(
        (task["kind"].as_str(), task["state"].as_str()),
        (Some("task"), Some("completed")),
        "{task}"
    );
    assert_eq!(task["data"]["category"], "billing");
    let id = task["task_id"].as_str().expect("task id").to_string();
    let got = sdk13(&helpdesk_url, &buyer, &["get-task", &id]);
    assert_eq!(
        (got["task_id"].as_str(), got["state"].as_str()),
        (Some(id.as_str()), Some("completed")),
        "{got}"
    );
    let list = sdk13(&helpdesk_url, &buyer, &["list-tasks"]);
    assert!(
        list["tasks"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["task_id"] == id)),
        "{list}"
    );

    // A refused call: the reason code and trace id in the error's ErrorInfo.
    let refused = sdk13(
        &vendor_url,
        &buyer,
        &[
            "send",
            "--data",
            r#"{"aggregate":{"op":"sum","column":"customer_email"}}"#,
        ],
    );
    let e = &refused["error"];
    assert_eq!(e["reason"], "NOT_PERMITTED", "{refused}");
    assert_eq!(e["domain"], "wall-street.exchange");
    assert!(
        e["trace_id"].as_str().is_some_and(|t| t.len() == 32),
        "{refused}"
    );
    assert!(e["message"]
        .as_str()
        .is_some_and(|m| m.contains("outside the contract")));
    // The hub's trail has the refusal under that trace id.
    let trace = e["trace_id"].as_str().unwrap_or_default();
    let trail = hub_audit(&stack, &format!("trace_id = '{trace}'")).await;
    assert!(
        trail.iter().any(|r| r["reason"] == "NOT_PERMITTED"),
        "{trail:?}"
    );

    // No token: the public card, which lists no skills (what a caller may
    // do there is on its extended card).
    let anonymous = sdk13(&vendor_url, "", &["card"]);
    assert_eq!(anonymous["name"], "VendorCorp", "{anonymous}");
    assert_eq!(anonymous["skills"], json!([]), "{anonymous}");
    // A token the hub does not know: refused.
    let forged = sdk13(&vendor_url, "not-a-token", &["card"]);
    assert_eq!(forged["error"]["http_status"], 401, "{forged}");
}

#[tokio::test]
async fn the_python_a2a_sdk_0_3_consults_through_the_bridge() {
    let stack = Stack::demo().await;
    let url = surface(&stack, "buyercorp");
    let helpdesk = stack.token("helpdesk");
    let card = sdk03(&url, &helpdesk, &["card"]);
    assert_eq!(card["name"], "BuyerCorp", "{card}");
    let a = sdk03(
        &url,
        &helpdesk,
        &["send", "--text", "How much does marketing have left?"],
    );
    assert_eq!(a["kind"], "message", "{a}");
    assert_eq!(a["data"]["department"], "marketing", "{a}");
    // A data part naming the capability, and a refusal with its reason.
    let a = sdk03(
        &surface(&stack, "vendorcorp"),
        &stack.token("buyercorp"),
        &[
            "send",
            "--capability",
            "orders.query",
            "--data",
            r#"{"aggregate":{"op":"count"}}"#,
        ],
    );
    assert_eq!(a["data"]["row_count"].as_f64(), Some(624.0), "{a}");
    let refused = sdk03(
        &surface(&stack, "vendorcorp"),
        &stack.token("buyercorp"),
        &[
            "send",
            "--capability",
            "orders.query",
            "--data",
            r#"{"aggregate":{"op":"sum","column":"customer_email"}}"#,
        ],
    );
    assert_eq!(refused["error"]["reason"], "NOT_PERMITTED", "{refused}");
}

#[tokio::test]
async fn a_v1_caller_reaches_a_v0_3_provider_through_the_hub() {
    let mut stack = Stack::start(vec![PeerSpec::stock("buyercorp")]).await;
    stack.add_v03_provider("ratesdesk").await;
    let url = surface(&stack, "ratesdesk");
    let buyer = stack.token("buyercorp");
    // The v1.0 card the hub serves for it, built from its v0.3 card.
    let card = sdk13(&url, &buyer, &["card"]);
    assert_eq!(card["skills"], json!(["rates.consult"]), "{card}");
    for args in [
        vec!["send", "--text", "What is the euro worth?"],
        vec![
            "send",
            "--capability",
            "rates.consult",
            "--data",
            r#"{"question":"EUR?"}"#,
        ],
    ] {
        let a = sdk13(&url, &buyer, &args);
        assert_eq!(a["kind"], "message", "{args:?}: {a}");
        assert_eq!(a["data"]["pair"], "EUR/USD", "{a}");
        assert!(a["data"]["rate"].is_number(), "{a}");
    }
    // The reference peer's own client, `peer call`, makes the same call
    // through the same surface.
    let out = Command::new(common::peer_bin())
        .args(["call", "--config"])
        .arg(stack.peer_config("buyercorp"))
        .args(["--provider", "ratesdesk", "--capability", "rates.consult"])
        .args(["--input", r#"{"question":"EUR?"}"#])
        .envs(stack.tokens.clone())
        .output()
        .expect("run peer call");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "peer call: {printed}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(printed.contains("EUR/USD"), "{printed}");
    // The provider saw v0.3 methods, never a v1.0 one. It logs a request
    // after answering it: wait for the third line.
    let read_log =
        || std::fs::read_to_string(stack.dir.path().join("ratesdesk.log")).unwrap_or_default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while read_log().matches("method=message/send http=200").count() < 3
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let log = read_log();
    assert_eq!(
        log.matches("method=message/send http=200").count(),
        3,
        "{log}"
    );
    assert!(!log.contains("SendMessage"), "{log}");
}

#[tokio::test]
async fn a_second_caller_cannot_see_or_cancel_the_first_callers_task() {
    let mut stack = Stack::start(vec![
        PeerSpec::stock("helpdesk"),
        PeerSpec::stock("buyercorp"),
        PeerSpec::stock("vendorcorp"),
    ])
    .await;
    // Let vendorcorp use ticket.classify too, so it is a caller the
    // provider's card is shown to: only the task is not its own.
    let rules = stack.topology_mut()["rules"]
        .as_sequence_mut()
        .expect("rules");
    for r in rules.iter_mut() {
        if r["capability"].as_str() == Some("ticket.classify") {
            r["consumers"]
                .as_sequence_mut()
                .expect("consumers")
                .push(serde_yaml_ng::Value::String("vendorcorp".into()));
        }
    }
    stack.write_topology();
    let url = surface(&stack, "helpdesk");
    let (buyer, vendor) = (stack.token("buyercorp"), stack.token("vendorcorp"));
    // The reload is picked up within a second or two.
    let mut card = Value::Null;
    for _ in 0..50 {
        card = sdk13(&url, &vendor, &["card"]);
        if card["skills"] == json!(["ticket.classify"]) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(card["skills"], json!(["ticket.classify"]), "{card}");

    let task = sdk13(
        &url,
        &buyer,
        &["send", "--data", r#"{"ticket_id":"T-1001"}"#],
    );
    let id = task["task_id"].as_str().expect("a task").to_string();
    let own = sdk13(
        &url,
        &vendor,
        &["send", "--data", r#"{"ticket_id":"T-1002"}"#],
    );
    let own_id = own["task_id"].as_str().expect("a task").to_string();

    for cmd in ["get-task", "cancel-task"] {
        let other = sdk13(&url, &vendor, &[cmd, &id]);
        assert_eq!(other["error"]["code"], -32001, "{cmd}: {other}");
        // Exactly what an id that never existed answers.
        let never = sdk13(&url, &vendor, &[cmd, "no-such-task"]);
        assert_eq!(never["error"]["code"], -32001, "{cmd}: {never}");
        assert_eq!(
            other["error"]["message"]
                .as_str()
                .map(|m| m.replace(&id, "ID")),
            never["error"]["message"]
                .as_str()
                .map(|m| m.replace("no-such-task", "ID")),
        );
    }
    // vendorcorp's list holds its own task only.
    let list = sdk13(&url, &vendor, &["list-tasks"]);
    let ids: Vec<&str> = list["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter_map(|t| t["task_id"].as_str())
        .collect();
    assert_eq!(ids, vec![own_id.as_str()], "{list}");
    // Nothing changed at the provider: the owner still reads it completed,
    // and no operation of vendorcorp's on it was forwarded.
    let got = sdk13(&url, &buyer, &["get-task", &id]);
    assert_eq!(got["state"], "completed", "{got}");
    let refusals = hub_audit(
        &stack,
        "caller = 'vendorcorp' AND capability IN ('GetTask', 'CancelTask')",
    )
    .await;
    assert!(refusals.len() >= 2, "{refusals:?}");
    assert!(
        refusals.iter().all(|r| r["outcome"] == "not_connected"),
        "{refusals:?}"
    );
}
