//! A system's credential is the hub's to make and keep, and the hub's
//! signatures bind to its own address, tried the way an attacker would
//! against the real stack:
//!
//! - a person who may onboard saves a section naming another system's
//!   credential variable (or any other variable of the hub's environment)
//!   with a data plane on a server of theirs: refused, located, and their
//!   server hears nothing — not a request, not a credential;
//! - a section that would share or overwrite another system's credential,
//!   or add rules for another provider's capability: refused, nothing
//!   written, the other system's credential still the one that works;
//! - an admin rotates a credential (the old one stops at once, the new one
//!   is shown once and appears in no page, log line, file or trail line);
//!   `hub credentials` does the same from the command line;
//! - a card asked for with a forged `Host` names the hub's own address and
//!   is signed over it (checked with `jose`, a JOSE library this project
//!   did not write), never over the forged host.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::Router;
use common::{hub_bin, repo, Stack, UiClient};
use reqwest::Method;
use serde_json::{json, Value};

/// One request a server of the attacker's heard: its path and the
/// `Authorization` it carried.
type Overheard = (String, Option<String>);

/// Everything a server of the attacker's heard.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<Overheard>>>);

impl Heard {
    fn all(&self) -> Vec<Overheard> {
        self.0.lock().expect("lock").clone()
    }
}

/// The attacker's server: answers `/health` as system `system`, a card,
/// and anything else (its "data plane") with an empty JSON object,
/// recording every request.
async fn attacker(system: &'static str) -> (SocketAddr, Heard) {
    let heard = Heard::default();
    let log = heard.clone();
    let app = Router::new().fallback(move |request: Request| {
        let log = log.clone();
        async move {
            let auth = request
                .headers()
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            log.0
                .lock()
                .expect("lock")
                .push((request.uri().path().to_string(), auth));
            match request.uri().path() {
                "/health" => axum::Json(
                    json!({"service": "wall-street-peer", "system": system, "status": "ok"}),
                ),
                _ => axum::Json(json!({"name": "Evil", "skills": []})),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, heard)
}

/// A section for system `id` at `addr`, its credential variable
/// `token_env`, its data plane on the same server, one rule of
/// `rule_provider`'s.
fn section(id: &str, addr: SocketAddr, token_env: &str, rule_provider: &str) -> String {
    format!(
        "system:\n  id: {id}\n  name: Evil\n  base_url: http://{addr}\n  token_env: {token_env}\n  ip_allowlist: [127.0.0.1/32]\n  provides: [{id}.data]\n  data_plane:\n    base_url: http://{addr}\n    capability: {id}.data\ncapabilities:\n  - id: {id}.data\n    kind: data-share\n    description: Data.\n    response_schema: {{ type: object }}\nrules:\n  - capability: {id}.data\n    provider: {rule_provider}\n    consumers: [hub]\n"
    )
}

async fn digest(ui: &UiClient) -> String {
    ui.get_json("/api/topology").await["digest"]
        .as_str()
        .expect("digest")
        .to_string()
}

async fn save(ui: &UiClient, section: &str) -> (u16, Value) {
    ui.save_section(&digest(ui).await, section).await
}

fn topology_text(stack: &Stack) -> String {
    std::fs::read_to_string(&stack.topology_path).expect("topology file")
}

#[tokio::test]
async fn a_section_naming_another_credential_is_refused_and_its_server_hears_nothing() {
    let stack = Stack::demo().await;
    let ui = stack.ui().await;
    let (addr, heard) = attacker("evil").await;
    let before = topology_text(&stack);

    for variable in [
        "WS_TOKEN_VENDORCORP",
        "WS_HUB_DB",
        "WS_TOKEN_BUYERCORP",
        "PATH",
    ] {
        let (status, e) = save(&ui, &section("evil", addr, variable, "evil")).await;
        assert_eq!(status, 422, "{variable}: {e}");
        let why = e["error"].as_str().unwrap_or_default();
        assert!(
            why.starts_with(
                "the section, line 5 column 3: system.token_env: must be `WS_TOKEN_EVIL`"
            ),
            "{why}"
        );
    }
    // A rule for another provider's capability.
    let (status, e) = save(&ui, &section("evil", addr, "WS_TOKEN_EVIL", "vendorcorp")).await;
    assert_eq!(status, 422, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap_or_default()
            .contains("rules[0].provider: must be `evil`"),
        "{e}"
    );
    assert_eq!(topology_text(&stack), before, "nothing was written");
    // Not a request reached the attacker's server: no health check, no
    // card, no data-plane probe with anybody's token.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(heard.all().is_empty(), "{:?}", heard.all());

    // The section as the hub wants it: saved, with a credential the hub
    // made. What its server then hears carries that credential only.
    let (status, added) = save(&ui, &section("evil", addr, "WS_TOKEN_EVIL", "evil")).await;
    assert_eq!(status, 201, "{added}");
    let own = added["credential"]
        .as_str()
        .expect("credential")
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !heard.all().iter().any(|(path, _)| path == "/mcp") {
        assert!(
            Instant::now() < deadline,
            "the prober never checked the new data plane: {:?}",
            heard.all()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (path, auth) in heard.all() {
        if let Some(auth) = auth {
            assert_eq!(auth, format!("Bearer {own}"), "{path}");
        }
        for (name, token) in &stack.tokens {
            assert!(
                !heard
                    .all()
                    .iter()
                    .any(|(_, a)| a.as_deref() == Some(format!("Bearer {token}").as_str())),
                "{name} reached the attacker"
            );
        }
    }

    // Another section may not take over evil's credential variable.
    let (addr2, heard2) = attacker("evil2").await;
    let taken = section("evil2", addr2, "WS_TOKEN_EVIL", "evil2");
    let (status, e) = save(&ui, &taken).await;
    assert_eq!(status, 422, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap_or_default()
            .contains("must be `WS_TOKEN_EVIL2`"),
        "{e}"
    );
    assert!(heard2.all().is_empty(), "{:?}", heard2.all());
    // Evil's credential still authenticates it (it may call nothing: the
    // refusal is NOT_PERMITTED, not AUTH_REJECTED).
    let answer = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .header("x-caller-system", "evil")
        .header("authorization", &format!("Bearer {own}"))
        .send()
        .await;
    assert_eq!(answer.reason(), "NOT_PERMITTED", "{:?}", answer.json);

    // A hand-written topology naming a variable outside the namespace, or
    // one system's variable twice, is refused at load, located.
    let mut text = topology_text(&stack);
    text = text.replacen("WS_TOKEN_HELPDESK", "WS_TOKEN_BUYERCORP", 1);
    let err = hub::registry::load::load_str("topology.yaml", &text).expect_err("refused");
    assert!(
        err.to_string()
            .contains("token_env: `WS_TOKEN_BUYERCORP` is already the credential variable of"),
        "{err}"
    );
}

#[tokio::test]
async fn an_admin_rotates_a_credential_the_old_one_stops_and_the_new_one_shows_once() {
    let stack = Stack::demo().await;
    let admin = stack.ui().await;
    let operator = UiClient::login(&stack.hub_url(), "an-operator", &stack.ui_password)
        .await
        .expect("login");
    let (status, body) = operator
        .send(
            Method::POST,
            "/api/systems/buyercorp/credential",
            &json!({}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("needs the admin role"), "{body}");

    let old = stack.token("buyercorp");
    let resp = admin
        .request(Method::POST, "/api/systems/buyercorp/credential")
        .json(&json!({}))
        .send()
        .await
        .expect("answers");
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    let issued: Value = resp.json().await.expect("json");
    let new = issued["credential"]
        .as_str()
        .expect("credential")
        .to_string();
    assert_eq!(issued["token_env"], "WS_TOKEN_BUYERCORP");
    assert_eq!(new.len(), 64);
    assert_ne!(new, old);

    let call = |token: &str| {
        stack
            .call("buyercorp", "vendorcorp", "orders.query")
            .header("authorization", &format!("Bearer {token}"))
            .body(json!({"aggregate": {"op": "count"}, "group_by": "region"}))
    };
    assert_eq!(call(&old).send().await.reason(), "AUTH_REJECTED");
    let answer = call(&new).send().await;
    assert_ne!(answer.json["reason"], "AUTH_REJECTED", "{:?}", answer.json);

    // Nowhere but that answer: not the map, not a page, not the file, not
    // the hub's log, not its trail.
    let (_, topology) = admin.get("/api/topology").await;
    let (_, page) = admin.get("/").await;
    assert!(!topology.contains(&new) && !page.contains(&new));
    assert!(!topology_text(&stack).contains(&new));
    assert!(
        !stack.hub_log().contains(&new),
        "the hub's log holds the credential"
    );
    let lines = stack.hub_trail().await.recent(50).await.expect("trail");
    let line = lines
        .iter()
        .find(|r| r.capability == "credential" && r.provider == "buyercorp")
        .expect("the rotation is audited");
    assert!(
        line.detail.contains("rotate the credential of buyercorp"),
        "{}",
        line.detail
    );
    assert!(lines.iter().all(|r| !r.detail.contains(&new)));
    // An unknown system: 404, audited as refused.
    let (status, body) = admin
        .send(Method::POST, "/api/systems/nobody/credential", &json!({}))
        .await;
    assert_eq!(status, 404, "{body}");
}

#[tokio::test]
async fn hub_credentials_lists_sources_rotates_and_sets_without_echoing() {
    let stack = Stack::demo().await;
    let run = |args: &[&str], stdin: Option<&str>| {
        use std::io::Write;
        // Run with the hub's environment, as an operator on its host would:
        // `list` says which credentials that environment provisions.
        let mut child = std::process::Command::new(hub_bin())
            .envs(stack.tokens.iter())
            .arg("credentials")
            .arg("--topology")
            .arg(&stack.topology_path)
            .arg("--database")
            .arg(stack.hub_store.to_argument())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("hub credentials runs");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(text.as_bytes())
                .expect("write");
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().expect("wait");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, listing, err) = run(&["list"], None);
    assert!(ok, "{err}");
    assert!(
        listing.contains("vendorcorp\tWS_TOKEN_VENDORCORP\tenvironment"),
        "{listing}"
    );
    assert!(!listing.contains(&stack.token("vendorcorp")));

    let (ok, rotated, err) = run(&["rotate", "vendorcorp"], None);
    assert!(ok, "{err}");
    assert_eq!(rotated.len(), 64, "{rotated}");
    let (_, listing, _) = run(&["list"], None);
    assert!(
        listing.contains("vendorcorp\tWS_TOKEN_VENDORCORP\tstore"),
        "{listing}"
    );
    let works = |token: String| {
        let call = stack
            .call("vendorcorp", "buyercorp", "budget.consult")
            .header("authorization", &format!("Bearer {token}"))
            .body(json!({"question": "How much is left?"}));
        async move { call.send().await.json["reason"] != "AUTH_REJECTED" }
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !works(rotated.clone()).await {
        assert!(
            Instant::now() < deadline,
            "the hub never read the rotated credential"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        !works(stack.token("vendorcorp")).await,
        "the old one stopped"
    );

    let given = "a-credential-given-once-on-stdin-0123456789abcdef";
    let (ok, out, err) = run(&["set", "vendorcorp"], Some(&format!("{given}\n")));
    assert!(ok, "{err}");
    assert!(
        out.is_empty() && !err.contains(given),
        "never echoed: {out} {err}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !works(given.to_string()).await {
        assert!(
            Instant::now() < deadline,
            "the hub never read the given credential"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (ok, _, err) = run(&["rotate", "nobody"], None);
    assert!(!ok && err.contains("no system `nobody`"), "{err}");
    let lines = stack.hub_trail().await.recent(20).await.expect("trail");
    let audited: Vec<_> = lines
        .iter()
        .filter(|r| r.capability == "credential")
        .collect();
    assert_eq!(audited.len(), 3, "{audited:?}");
    assert!(audited
        .iter()
        .all(|r| !r.detail.contains(given) && !r.detail.contains(&rotated)));
}

/// Verifies a card with `jose` (and `canonicalize`), reading it from a
/// file: what a client that was handed this card would check.
fn verify_with_jose(card: &Value) -> Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("card.json");
    std::fs::write(&file, card.to_string()).expect("write");
    let out = std::process::Command::new("node")
        .arg(repo().join("hub/tests/clients/js/verify_card.mjs"))
        .arg(format!("file://{}", file.display()))
        .output()
        .expect("node runs verify_card.mjs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "verify_card.mjs: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[tokio::test]
async fn a_forged_host_gets_a_card_naming_and_signed_over_the_hubs_own_address() {
    let stack = Stack::demo().await;
    let hub = stack.hub_url();
    let client = common::plain_client();
    let ask = |path: &str, host: &str| {
        client
            .get(format!("{hub}{path}"))
            .header("host", host)
            .send()
    };
    for path in [
        "/a2a/vendorcorp/.well-known/agent-card.json",
        "/.well-known/agent-card.json",
        "/.well-known/ai-catalog.json",
        "/.well-known/oauth-protected-resource/a2a/vendorcorp",
    ] {
        let resp = ask(path, "evil.example").await.expect("answers");
        assert_eq!(resp.status(), 200, "{path}");
        let body = resp.text().await.expect("body");
        assert!(!body.contains("evil.example"), "{path}: {body}");
        assert!(body.contains(&hub), "{path} names the hub: {body}");
    }
    let card: Value = ask(
        "/a2a/vendorcorp/.well-known/agent-card.json",
        "evil.example",
    )
    .await
    .expect("answers")
    .json()
    .await
    .expect("json");
    // An outside JOSE library finds the signature good, over the hub's own
    // JWKS: it signs the hub's address, which is what the card names.
    let verified = verify_with_jose(&card);
    assert_eq!(verified["verified"], true, "{verified}");
    assert_eq!(
        verified["jku"],
        format!("{hub}/.well-known/jwks.json"),
        "{verified}"
    );
    // Served from evil.example beside a copy of the JWKS, the card still
    // sends every client to the hub: nothing in it names evil.example.
    let interfaces = card["supportedInterfaces"].to_string();
    assert!(interfaces.contains(&hub), "{interfaces}");
    // Editing the signed card to point at the forged host breaks the
    // signature.
    let forged: Value =
        serde_json::from_str(&card.to_string().replace(&hub, "http://evil.example")).expect("json");
    assert_eq!(verify_with_jose(&forged)["verified"], false);
    // A 401's challenge points at the hub's metadata, not the Host's.
    let resp = client
        .post(format!("{hub}/gateway/v1/vendorcorp/orders.query"))
        .header("host", "evil.example")
        .header("authorization", "Bearer nonsense")
        .header("x-caller-system", "buyercorp")
        .json(&json!({}))
        .send()
        .await
        .expect("answers");
    assert_eq!(resp.status(), 401);
    let challenge = resp
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(
        !challenge.contains("evil.example") && challenge.contains(&hub),
        "{challenge}"
    );
}
