//! The outside-client matrix (DESIGN.md §2, "A2A surface"): A2A and MCP
//! clients this project did not write, as published on PyPI and npm, each
//! joining the hub the way its own README shows — default discovery,
//! nothing but the provider's URL on the hub and the caller's credential.
//! Against real peers behind a real hub, each client makes a granted query
//! at VendorCorp, a refused one (Helpdesk has no rule for it: the reason
//! code reaches the client), and a consult at Helpdesk; an MCP client a
//! granted query, the data owner's refusal and the hub's.
//!
//! The clients are CLIs under `hub/tests/clients/` (`matrix/*.py`,
//! `js/*.mjs`) that print one JSON object per command; their headers say
//! how each library is used. Versions are pinned in
//! `scripts/requirements-{a2a,a2a03,maf,mcp,fastmcp}.txt` and
//! `hub/tests/clients/js/package-lock.json`; `scripts/setup test`
//! installs them.

mod common;

use common::{repo, PeerSpec, Stack};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// One client as the tests run it: an interpreter, its script, and the
/// options that pick its variant.
struct Client {
    name: &'static str,
    program: PathBuf,
    script: PathBuf,
    options: &'static [&'static str],
}

impl Client {
    fn python(
        name: &'static str,
        venv: &str,
        script: &str,
        options: &'static [&'static str],
    ) -> Self {
        Client {
            name,
            program: repo().join(venv).join("bin/python"),
            script: repo().join("hub/tests/clients/matrix").join(script),
            options,
        }
    }

    fn node(name: &'static str, script: &str, options: &'static [&'static str]) -> Self {
        Client {
            name,
            program: PathBuf::from("node"),
            script: repo().join("hub/tests/clients/js").join(script),
            options,
        }
    }

    /// Runs one command; the JSON object it printed, and its exit code.
    fn run(&self, url: &str, token: &str, args: &[&str]) -> (Value, i32) {
        assert!(
            !self.program.is_absolute() || self.program.exists(),
            "{} missing: run scripts/setup test",
            self.program.display()
        );
        let out = Command::new(&self.program)
            .arg(&self.script)
            .arg(url)
            .arg(token)
            .args(args)
            .args(self.options)
            .output()
            .unwrap_or_else(|e| panic!("{}: cannot run: {e}", self.name));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let code = out.status.code().unwrap_or(-1);
        assert!(
            code == 0 || code == 3,
            "{} {args:?} failed ({}):\n{stdout}\n{}",
            self.name,
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {stdout}", self.name));
        println!("{} {} {args:?} -> {value}", self.name, url);
        (value, code)
    }

    /// Like [`Client::run`], for a command that must get an answer.
    fn answer(&self, url: &str, token: &str, args: &[&str]) -> Value {
        let (value, code) = self.run(url, token, args);
        assert_eq!(code, 0, "{}: no answer: {value}", self.name);
        value
    }
}

const COUNT_BY_REGION: &str = r#"{"aggregate":{"op":"count"},"group_by":"region"}"#;
const QUESTION: &str = "Printer on floor 3 is jammed";

/// What every A2A client must do through the hub, with `base` (the
/// provider URL on the hub, `{provider}` in it) as its user would give it.
fn a2a_matrix(stack: &Stack, client: &Client, base: &str) {
    let vendor = base.replace("{provider}", "vendorcorp");
    let helpdesk = base.replace("{provider}", "helpdesk");
    let name = client.name;

    // Discovery with the library's defaults: no credential on the card.
    let card = client.answer(&vendor, "", &["card"]);
    assert_eq!(card["name"], "VendorCorp", "{name}: {card}");
    assert_eq!(
        card["skills"],
        serde_json::json!([]),
        "{name}: the public card lists no skills: {card}"
    );
    assert_eq!(card["extended_card"], true, "{name}: {card}");

    // A granted query: the groups of the aggregate.
    let granted = client.answer(
        &vendor,
        &stack.token("buyercorp"),
        &["send-data", COUNT_BY_REGION],
    );
    let groups = granted["answer"]["data"]["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(groups.len(), 4, "{name}: {granted}");

    // A refused one: the reason code reaches the client.
    let refused = client.answer(
        &vendor,
        &stack.token("helpdesk"),
        &["send-data", COUNT_BY_REGION],
    );
    assert_eq!(
        refused["error"]["reason"], "NOT_PERMITTED",
        "{name}: {refused}"
    );

    // A consult: Helpdesk classifies the question.
    let consult = client.answer(
        &helpdesk,
        &stack.token("buyercorp"),
        &["send-text", QUESTION],
    );
    let category = consult["answer"]["data"]["category"]
        .as_str()
        .unwrap_or_default();
    assert!(!category.is_empty(), "{name}: {consult}");
}

#[tokio::test]
async fn the_python_a2a_sdks_join_with_their_default_discovery() {
    let stack = Stack::demo().await;
    let base = format!("{}/a2a/{{provider}}", stack.hub_url());
    for client in [
        Client::python(
            "a2a-sdk 1.3, JSON-RPC",
            ".tools/venv",
            "a2a_sdk.py",
            &["--transport", "jsonrpc"],
        ),
        Client::python(
            "a2a-sdk 1.3, HTTP+JSON",
            ".tools/venv",
            "a2a_sdk.py",
            &["--transport", "http+json"],
        ),
        Client::python("a2a-sdk 0.3.26", ".tools/venv03", "a2a_sdk03.py", &[]),
    ] {
        a2a_matrix(&stack, &client, &base);
    }
    // The bare URL of a provider's own host, resolved by the system's
    // resolver: the card at the root, the interfaces it names.
    let own_host = format!("http://{{provider}}.localhost:{}", stack.hub_port);
    let sdk = Client::python(
        "a2a-sdk 1.3, JSON-RPC",
        ".tools/venv",
        "a2a_sdk.py",
        &["--transport", "jsonrpc"],
    );
    a2a_matrix(&stack, &sdk, &own_host);
}

#[tokio::test]
async fn microsoft_agent_framework_and_the_javascript_sdk_join_with_their_default_discovery() {
    let stack = Stack::demo().await;
    let hub = stack.hub_url();

    // Microsoft Agent Framework's A2AAgent: text, and structured input
    // (which it sends as a raw part declaring application/json).
    let maf = Client::python(
        "Microsoft Agent Framework A2AAgent",
        ".tools/venv",
        "maf_a2a.py",
        &[],
    );
    a2a_matrix(&stack, &maf, &format!("{hub}/a2a/{{provider}}"));
    let wire = Client::python("MAF, wire", ".tools/venv", "maf_a2a.py", &["--show-wire"]);
    let sent = wire.answer(
        &format!("{hub}/a2a/vendorcorp"),
        &stack.token("buyercorp"),
        &["send-data", COUNT_BY_REGION],
    );
    let part = &sent["wire"]["parts"][0];
    assert!(
        part.get("raw").is_some() && part["mediaType"] == "application/json",
        "MAF's structured input is a raw JSON part on the wire: {sent}"
    );
    assert_eq!(
        sent["answer"]["data"]["groups"].as_array().map(Vec::len),
        Some(4),
        "{sent}"
    );

    // @a2a-js/sdk's default resolver reads `.well-known/agent-card.json`
    // relative to the URL: the provider URL with its trailing slash works
    // for everything, and so does the bare URL of the provider's own host
    // (`http://vendorcorp.localhost:PORT`, which Node resolves with the
    // system's resolver: `libnss-myhostname` answers `.localhost` names).
    let js = Client::node("@a2a-js/sdk 1.3", "a2a_js.mjs", &[]);
    a2a_matrix(&stack, &js, &format!("{hub}/a2a/{{provider}}/"));
    let own_host = format!("http://{{provider}}.localhost:{}", stack.hub_port);
    a2a_matrix(&stack, &js, &own_host);
    let card = js.answer(&own_host.replace("{provider}", "vendorcorp"), "", &["card"]);
    assert_eq!(
        card["interfaces"][0]["url"],
        own_host.replace("{provider}", "vendorcorp"),
        "the card names the host it was asked at: {card}"
    );
    // Without the slash the resolver asks `/a2a/.well-known/agent-card.json`
    // (the provider's segment is gone): a JSON 404 that says where the card
    // is, never the login page (NOTES "The A2A surface").
    let (card, code) = js.run(&format!("{hub}/a2a/vendorcorp"), "", &["card"]);
    assert_eq!(code, 3, "{card}");
    assert_eq!(card["error"]["http_status"], 404, "{card}");
    let resp = reqwest::get(format!("{hub}/a2a/.well-known/agent-card.json"))
        .await
        .expect("the hub answers");
    assert_eq!(resp.status().as_u16(), 404);
    let body: Value = resp.json().await.expect("a JSON error");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("trailing `/`")),
        "{body}"
    );
}

#[tokio::test]
async fn mcp_clients_on_both_revisions_join_with_a_url_and_a_token() {
    // BuyerCorp's contract as the demo's: some columns, not `product`.
    let stack = Stack::start_without_contracts(
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(PeerSpec::stock)
            .to_vec(),
    )
    .await;
    stack
        .negotiate_orders("buyercorp", "vendorcorp", &["region", "order_value"])
        .await;
    let url = format!("{}/mcp/vendorcorp", stack.hub_url());
    let granted_args = r#"{"aggregate":{"op":"avg","column":"order_value"},"group_by":"region"}"#;
    let out_of_contract = r#"{"aggregate":{"op":"count"},"group_by":"product"}"#;
    for (client, revision) in [
        (
            Client::python(
                "Python mcp 2.3 (initialize)",
                ".tools/venv-mcp",
                "mcp_sdk.py",
                &["--protocol", "2025-11-25"],
            ),
            "2025-11-25",
        ),
        (
            Client::python(
                "fastmcp 4.2 (defaults)",
                ".tools/venv-mcp",
                "fastmcp_client.py",
                &[],
            ),
            "2026-07-28",
        ),
        (
            Client::node("@modelcontextprotocol/sdk 1.32", "mcp_ts.mjs", &[]),
            "2025-11-25",
        ),
    ] {
        let name = client.name;
        let buyer = stack.token("buyercorp");
        let tools = client.answer(&url, &buyer, &["tools"]);
        assert_eq!(
            tools["tools"],
            serde_json::json!(["query_records"]),
            "{name}: {tools}"
        );
        assert_eq!(tools["protocol_version"], revision, "{name}: {tools}");

        let granted = client.answer(&url, &buyer, &["call", "query_records", granted_args]);
        assert_eq!(granted["result"]["is_error"], false, "{name}: {granted}");
        assert_eq!(
            granted["result"]["structured"]["row_count"].as_f64(),
            Some(624.0),
            "{name}: {granted}"
        );

        // The data owner's refusal, in its words, as a tool error.
        let scope = client.answer(&url, &buyer, &["call", "query_records", out_of_contract]);
        assert_eq!(scope["result"]["is_error"], true, "{name}: {scope}");
        assert!(
            scope["result"]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("SCOPE_DENIED: ")),
            "{name}: {scope}"
        );

        // The hub's refusal: an MCP error carrying the reason code.
        let refused = client.answer(
            &url,
            &stack.token("helpdesk"),
            &["call", "query_records", granted_args],
        );
        assert_eq!(
            refused["error"]["reason"], "NOT_PERMITTED",
            "{name}: {refused}"
        );

        // No credential the hub knows: refused, with the reason.
        let anonymous = client.answer(&url, "not-a-token", &["tools"]);
        assert_eq!(
            anonymous["error"]["reason"], "AUTH_REJECTED",
            "{name}: {anonymous}"
        );
    }
}
