//! Onboarding from the canvas's API, end to end against real processes: a
//! fourth peer (`peer serve`, its own config) is read from its card,
//! saved to the hub's topology file with a generated token, called through
//! the hub without a restart, and removed again; every bad input is
//! refused with a sentence naming what was wrong and nothing written.
//!
//! The servers that misbehave (a card that redirects elsewhere, one too
//! large, one that is not JSON) are small HTTP servers of this test: they
//! answer `/health` as a peer would, then lie about the card.

mod common;

use std::net::SocketAddr;

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use axum::Router;
use common::{token_env, PeerSpec, Stack, UiClient};
use reqwest::Method;
use serde_json::{json, Value};

/// A server answering `/health` as system `system` and its card with
/// `card`.
async fn card_server(system: &'static str, card: Router) -> SocketAddr {
    let app = Router::new()
        .route(
            "/health",
            get(move || async move {
                axum::Json(json!({"service": "wall-street-peer", "system": system, "status": "ok"}))
            }),
        )
        .merge(card);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

const CARD: &str = "/.well-known/agent-card.json";

async fn discover(ui: &UiClient, base_url: &str) -> (u16, Value) {
    let (status, body) = ui
        .send(
            Method::POST,
            "/api/systems/discover",
            &json!({ "base_url": base_url }),
        )
        .await;
    (
        status,
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")),
    )
}

async fn save(ui: &UiClient, base: &str, section: &str) -> (u16, Value) {
    ui.save_section(base, section).await
}

fn topology_text(stack: &Stack) -> String {
    std::fs::read_to_string(&stack.topology_path).expect("topology file")
}

/// The topology file as data (the harness writes it in its own style, so
/// what a change did is compared as data, not as text).
fn topology_data(stack: &Stack) -> Value {
    serde_yaml_ng::from_str(&topology_text(stack)).expect("the topology file is YAML")
}

/// The consumers of `capability` of `provider` in the file.
fn consumers(stack: &Stack, capability: &str, provider: &str) -> Vec<String> {
    topology_data(stack)["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .find(|r| r["capability"] == capability && r["provider"] == provider)
        .map(|r| {
            r["consumers"]
                .as_array()
                .expect("consumers")
                .iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The `consumes` list of system `id` in the file.
fn consumes(stack: &Stack, id: &str) -> Vec<String> {
    topology_data(stack)["systems"]
        .as_array()
        .expect("systems")
        .iter()
        .find(|s| s["id"] == id)
        .and_then(|s| s["consumes"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// The demo, and Logistics running but not a member: its process holds a
/// token of its own for now.
async fn stack_with_a_newcomer() -> Stack {
    let mut stack = Stack::demo().await;
    stack.specs.push(PeerSpec::stock("logistics"));
    stack
        .tokens
        .insert(token_env("logistics"), "not-yet-a-member".into());
    stack.start_peer("logistics").await;
    stack
}

#[tokio::test]
async fn an_operator_onboards_a_system_from_its_card_and_its_call_crosses() {
    let mut stack = stack_with_a_newcomer().await;
    let ui = stack.ui().await;
    let url = stack.peer_url("logistics");

    let (status, proposal) = discover(&ui, &format!("{url}{CARD}")).await;
    assert_eq!(status, 200, "{proposal}");
    assert_eq!(proposal["system"], "logistics");
    assert_eq!(proposal["card_name"]["text"], "Logistics");
    let skills: Vec<(&str, &str)> = proposal["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .map(|s| {
            (
                s["capability"].as_str().unwrap_or_default(),
                s["kind"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        skills,
        [
            ("shipments.query", "data-share"),
            ("shipments.negotiate", "negotiation")
        ]
    );
    let section = proposal["section"].as_str().expect("section");
    assert!(
        section.contains(&format!("base_url: \"{url}\"")),
        "{section}"
    );
    assert!(section.contains("negotiates: shipments.query"), "{section}");

    // The operator lets it ask BuyerCorp's budget consult. The hub's
    // environment already sets WS_TOKEN_LOGISTICS (the harness gives every
    // process every token): the hub makes a credential of its own anyway
    // and never adopts that one.
    let edited = section.replace(
        "calls: []",
        "calls:\n  - { capability: budget.consult, provider: buyercorp }",
    );
    let before = topology_text(&stack);
    let (status, added) = save(&ui, proposal["base"].as_str().expect("base"), &edited).await;
    assert_eq!(status, 201, "{added}");
    let credential = added["credential"]
        .as_str()
        .unwrap_or_else(|| panic!("a generated token: {added}"));
    assert_eq!(credential.len(), 64);
    assert_ne!(credential, "not-yet-a-member");
    assert_eq!(added["token_env"], "WS_TOKEN_LOGISTICS");

    // The file on disk: the new section, the old text kept beside it, the
    // token in the hub's credentials file only.
    let after = topology_text(&stack);
    assert!(topology_data(&stack)["systems"]
        .as_array()
        .expect("systems")
        .iter()
        .any(|s| s["id"] == "logistics" && s["token_env"] == "WS_TOKEN_LOGISTICS"));
    assert_eq!(
        consumers(&stack, "budget.consult", "buyercorp"),
        ["hub", "helpdesk", "logistics"]
    );
    assert!(!after.contains(credential));
    let dir = stack.topology_path.parent().expect("dir").to_path_buf();
    assert_eq!(
        std::fs::read_to_string(dir.join("topology.yaml.previous")).expect("previous"),
        before
    );
    let held = std::fs::read_to_string(dir.join("credentials.env")).expect("credentials");
    assert!(held.contains(&format!("WS_TOKEN_LOGISTICS={credential}\n")));

    // The value the environment holds under that name authenticates
    // nobody: the store's credential is the system's.
    let stale = stack
        .call("logistics", "buyercorp", "budget.consult")
        .header("authorization", "Bearer not-yet-a-member")
        .body(json!({ "question": "How much is left?" }))
        .send()
        .await;
    assert_eq!(stale.reason(), "AUTH_REJECTED", "{:?}", stale.json);

    // The company sets the token in its peer's environment; its call
    // through the hub connects, the hub never restarted.
    let pid = stack.hub_pid();
    stack
        .tokens
        .insert(token_env("logistics"), credential.to_string());
    stack.start_peer("logistics").await;
    let ask = || {
        stack
            .call("logistics", "buyercorp", "budget.consult")
            .body(json!({ "question": "How much of the marketing budget is left?" }))
    };
    let answer = ask().send().await;
    assert_eq!(answer.status, 200, "{:?}", answer.json);
    assert_eq!(answer.json["status"], "connected", "{:?}", answer.json);
    assert_eq!(stack.hub_pid(), pid);

    // The canvas has it, and no answer but the save's carries the token.
    let view = ui.get_json("/api/topology").await;
    assert!(view["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .any(|n| n["id"] == "logistics"));
    let (_, text) = ui.get("/api/topology").await;
    assert!(!text.contains(credential));
    let (_, page) = ui.get("/").await;
    assert!(!page.contains(credential));

    // The hub's trail names the operator.
    let trail = stack.hub_trail().await;
    let recent = trail.recent(50).await.expect("trail");
    let line = recent
        .iter()
        .find(|r| r.capability == "topology" && r.provider == "logistics")
        .expect("the write is audited");
    assert!(
        line.detail.contains("operator ") && line.detail.contains(" add logistics"),
        "{}",
        line.detail
    );
    assert!(!line.detail.contains(credential));

    // Removed the same way: the file is back to what it was.
    let base = view["digest"].as_str().expect("digest").to_string();
    let (status, body) = ui
        .send(
            Method::DELETE,
            "/api/systems/logistics",
            &json!({ "base": base }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let back: Value = serde_yaml_ng::from_str(&before).expect("yaml");
    assert_eq!(topology_data(&stack), back);
    let held = std::fs::read_to_string(dir.join("credentials.env")).expect("credentials");
    assert!(!held.contains(credential));
    let answer = ask().send().await;
    assert_eq!(answer.reason(), "AUTH_REJECTED", "{:?}", answer.json);
}

#[tokio::test]
async fn bad_onboarding_input_is_refused_by_name_and_nothing_is_written() {
    let stack = stack_with_a_newcomer().await;
    let ui = stack.ui().await;
    let before = topology_text(&stack);

    // A card that redirects to another host.
    let elsewhere = card_server(
        "mallory",
        Router::new().route(
            CARD,
            get(|| async { Redirect::temporary("http://localhost:9/card.json") }),
        ),
    )
    .await;
    let (status, e) = discover(&ui, &format!("http://{elsewhere}")).await;
    assert_eq!(status, 422, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap_or_default()
            .contains("redirected to http://localhost:9/card.json, another host"),
        "{e}"
    );

    // A disallowed private address (not even contacted).
    let (status, e) = discover(&ui, "http://10.255.255.1:8080").await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"].as_str().unwrap_or_default().contains("10.255.255.1 is a private (RFC 1918) address, which the hub's egress policy does not allow for onboarding"),
        "{e}"
    );

    // An oversized card.
    let big = card_server(
        "bigcorp",
        Router::new().route(
            CARD,
            get(|| async {
                let filler = "x".repeat(200 * 1024);
                axum::Json(json!({ "name": "Big", "description": filler }))
            }),
        ),
    )
    .await;
    let (status, e) = discover(&ui, &format!("http://{big}")).await;
    assert_eq!(status, 422, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap_or_default()
            .contains("is larger than 65536 bytes"),
        "{e}"
    );

    // A card that is not JSON.
    let html = card_server(
        "htmlcorp",
        Router::new().route(
            CARD,
            get(|| async {
                (
                    StatusCode::OK,
                    [(header::CONTENT_TYPE, "text/html")],
                    "<html><body>hello</body></html>",
                )
                    .into_response()
            }),
        ),
    )
    .await;
    let (status, e) = discover(&ui, &format!("http://{html}")).await;
    assert_eq!(status, 422, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap_or_default()
            .contains("the agent card at ")
            && e["error"]
                .as_str()
                .unwrap_or_default()
                .contains("is not a JSON object: expected value at line 1 column 1"),
        "{e}"
    );

    // A system id that exists: Helpdesk's own address.
    let (status, e) = discover(&ui, &stack.peer_url("helpdesk")).await;
    assert_eq!(status, 409, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("a system `helpdesk` already exists"),
        "{e}"
    );

    // The real newcomer, then edits that must fail.
    let (status, proposal) = discover(&ui, &stack.peer_url("logistics")).await;
    assert_eq!(status, 200, "{proposal}");
    let base = proposal["base"].as_str().expect("base").to_string();
    let section = proposal["section"].as_str().expect("section").to_string();

    // Identity mismatch: the server at that address is `logistics`.
    let renamed = section
        .replace("logistics", "shipping")
        .replace("WS_TOKEN_LOGISTICS", "WS_TOKEN_SHIPPING");
    let (status, e) = save(&ui, &base, &renamed).await;
    assert_eq!(status, 422, "{e}");
    assert_eq!(
        e["error"],
        format!(
            "identity mismatch: {} answers as system `logistics`, not `shipping`",
            stack.peer_url("logistics")
        )
    );

    // A section that is not one.
    let (status, e) = save(&ui, &base, "system: [1, 2]\n").await;
    assert_eq!(status, 422, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the section, line 1"),
        "{e}"
    );

    // A change the loader refuses: its located error comes back.
    let invalid = section.replace("consumers: [hub]", "consumers: [hub, nobody]");
    assert_ne!(invalid, section);
    let (status, e) = save(&ui, &base, &invalid).await;
    assert_eq!(status, 422, "{e}");
    let why = e["error"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("the change does not pass the topology's validation; nothing was written:\ntopology.yaml:"),
        "{why}"
    );
    assert!(
        why.contains("rules[5].consumers[1]") && why.contains("nobody"),
        "{why}"
    );

    assert_eq!(topology_text(&stack), before, "nothing was written");
    let dir = stack.topology_path.parent().expect("dir").to_path_buf();
    assert!(!dir.join("credentials.env").exists());

    // Two operators save the same proposal at once: one wins, the other
    // is told the file changed.
    let other = stack.ui().await;
    let (a, b) = tokio::join!(save(&ui, &base, &section), save(&other, &base, &section));
    let mut statuses = [a.0, b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 409], "{a:?} {b:?}");
    let loser = if a.0 == 409 { a.1 } else { b.1 };
    assert!(
        loser["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("the topology file changed since this view of it was read"),
        "{loser}"
    );
    // A stale base on a rule edit is refused the same way.
    let (status, body) = ui
        .send(
            Method::PUT,
            "/api/rules/consumers",
            &json!({"base": base, "capability": "orders.query", "provider": "vendorcorp", "consumer": "helpdesk", "member": true}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
}

#[tokio::test]
async fn a_consumer_is_added_to_a_rule_and_taken_off_from_the_canvas() {
    let stack = Stack::demo().await;
    let ui = stack.ui().await;
    let ask = || {
        stack
            .call("vendorcorp", "buyercorp", "budget.consult")
            .body(json!({ "question": "How much of the marketing budget is left?" }))
    };
    assert_eq!(ask().send().await.reason(), "NOT_PERMITTED");

    let rule = |base: &str, member: bool| json!({"base": base, "capability": "budget.consult", "provider": "buyercorp", "consumer": "vendorcorp", "member": member});
    let base = ui.get_json("/api/topology").await["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    let (status, body) = ui
        .send(Method::PUT, "/api/rules/consumers", &rule(&base, true))
        .await;
    assert_eq!(status, 200, "{body}");
    let written: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        consumers(&stack, "budget.consult", "buyercorp"),
        ["hub", "helpdesk", "vendorcorp"]
    );
    assert_eq!(
        consumes(&stack, "vendorcorp"),
        ["budget.consult"],
        "kept in step"
    );
    let view = ui.get_json("/api/topology").await;
    assert_eq!(
        view["digest"], written["base"],
        "the hub reloaded what it wrote"
    );
    let answer = ask().send().await;
    assert_eq!(answer.json["status"], "connected", "{:?}", answer.json);

    let base = written["base"].as_str().expect("base").to_string();
    let (status, body) = ui
        .send(Method::PUT, "/api/rules/consumers", &rule(&base, false))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ask().send().await.reason(), "NOT_PERMITTED");
    assert!(consumes(&stack, "vendorcorp").is_empty());
}
