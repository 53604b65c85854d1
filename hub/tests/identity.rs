//! Member identity from a company's own identity provider (DESIGN.md §2,
//! "auth chain"; `hub/src/identity/`): a real OpenID provider —
//! panva's `oidc-provider` from npm, `hub/tests/clients/js/oidc_issuer.mjs`
//! — issues client-credentials access tokens to BuyerCorp's and
//! VendorCorp's clients; the hub validates them against the issuer's JWKS
//! and names the caller by them.
//!
//! Covered: a token from the provider calls through `/gateway/v1` and
//! through the official Python `a2a-sdk` (its auth interceptor, on the
//! card's bearer scheme); every bad token is refused with its own
//! `AUTH_REJECTED` message and reaches no provider; a key rotation at the
//! provider is picked up without restarting the hub; RFC 9728 metadata and
//! the 401 challenge point a client at the issuer.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use common::oidc::Issuer;
use common::{repo, trail, Stack};
use serde_json::{json, Value};

/// BuyerCorp's client at its identity provider.
const BUYER_CLIENT: (&str, &str) = ("buyercorp-app", "buyercorp-client-secret");
/// VendorCorp's client at the same provider.
const VENDOR_CLIENT: (&str, &str) = ("vendorcorp-app", "vendorcorp-client-secret");
/// The audience BuyerCorp's tokens name when the client asks for no
/// resource (the provider's default), which the topology lists.
const HUB_AUDIENCE: &str = "urn:wall-street:hub";
/// The scope the rule for Helpdesk's `ticket.classify` asks.
const CLASSIFY_SCOPE: &str = "tickets.classify";
const COUNT_BY_REGION: &str = r#"{"aggregate":{"op":"count"},"group_by":"region"}"#;

/// The issuer with the two members' clients.
fn start_issuer() -> Issuer {
    let clients = json!([
        {"client_id": BUYER_CLIENT.0, "client_secret": BUYER_CLIENT.1,
         "scope": format!("orders.read {CLASSIFY_SCOPE}")},
        {"client_id": VENDOR_CLIENT.0, "client_secret": VENDOR_CLIENT.1, "scope": "orders.read"},
    ]);
    Issuer::start(&clients, HUB_AUDIENCE)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// The demo's peers, with BuyerCorp and VendorCorp naming the issuer and a
/// scope on the rule for Helpdesk's `ticket.classify`; returns once the
/// hub has reloaded the topology (a token call goes through).
async fn stack_with(issuer: &Issuer) -> Stack {
    let mut stack = Stack::demo().await;
    let topology = stack.topology_mut();
    let yaml = |v: Value| serde_yaml_ng::to_value(v).expect("YAML");
    for system in topology["systems"].as_sequence_mut().expect("systems") {
        let client = match system["id"].as_str() {
            Some("buyercorp") => BUYER_CLIENT.0,
            Some("vendorcorp") => VENDOR_CLIENT.0,
            _ => continue,
        };
        system["oidc"] = yaml(json!({
            "issuer": issuer.url,
            "audience": [HUB_AUDIENCE],
            "client_ids": [client],
        }));
    }
    for rule in topology["rules"].as_sequence_mut().expect("rules") {
        if rule["capability"].as_str() == Some("ticket.classify") {
            rule["scope"] = yaml(json!(CLASSIFY_SCOPE));
        }
    }
    stack.write_topology();
    stack
}

/// Sends `orders.query` as BuyerCorp through `/gateway/v1` with `token`.
async fn query(stack: &Stack, token: &str, caller: &str) -> common::Answer {
    stack
        .call(caller, "vendorcorp", "orders.query")
        .header("authorization", &format!("Bearer {token}"))
        .body(serde_json::from_str(COUNT_BY_REGION).expect("json"))
        .send()
        .await
}

/// Waits until `token` is accepted (the reload of the topology, or the
/// hub's fetch of a rotated key), at most `within`.
async fn accepted_within(stack: &Stack, token: &str, within: Duration) -> common::Answer {
    let started = Instant::now();
    loop {
        let answer = query(stack, token, "buyercorp").await;
        if answer.json["status"] == "connected" || started.elapsed() > within {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn unsigned(claims: &Value) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!(
        "{}.{}.",
        b64.encode(br#"{"alg":"none","typ":"JWT"}"#),
        b64.encode(claims.to_string())
    )
}

#[tokio::test]
async fn a_members_own_identity_provider_authenticates_its_calls_and_every_bad_token_is_refused() {
    let mut issuer = start_issuer();
    let stack = stack_with(&issuer).await;
    let hub = stack.hub_url();

    // A client-credentials token from BuyerCorp's provider: the call goes
    // through, as BuyerCorp, with no static token anywhere.
    let token = issuer.token(BUYER_CLIENT, None, None).await;
    let ok = accepted_within(&stack, &token, Duration::from_secs(10)).await;
    assert_eq!(ok.json["status"], "connected", "{}", ok.json);
    assert_eq!(ok.result()["groups"].as_array().map(Vec::len), Some(4));

    // A token for the hub's own resource URL (RFC 8707 `resource`, as an
    // MCP or A2A client asks after reading the hub's metadata) is for this
    // hub too.
    let for_resource = issuer
        .token(BUYER_CLIENT, None, Some(&format!("{hub}/a2a/vendorcorp")))
        .await;
    let ok = query(&stack, &for_resource, "buyercorp").await;
    assert_eq!(ok.json["status"], "connected", "{}", ok.json);

    // The official Python a2a-sdk, its auth interceptor putting the token
    // on the calls the card's bearer scheme covers: the A2A surface names
    // the caller by the token alone (no X-Caller-System).
    let sdk = run_a2a_sdk(&format!("{hub}/a2a/vendorcorp"), &token);
    let groups = sdk["answer"]["data"]["groups"].as_array().map(Vec::len);
    assert_eq!(groups, Some(4), "a2a-sdk with an OIDC token: {sdk}");

    // Every bad token: refused with its own message, nothing forwarded.
    let vendor_trail = trail(&stack.peer_db("vendorcorp"), "vendorcorp").await;
    let forwarded_before = vendor_trail.recent(100_000).await.expect("trail").len();
    let issuer_url = issuer.url.clone();
    let base_claims = |overrides: Value| {
        let mut claims = json!({
            "iss": issuer_url,
            "aud": HUB_AUDIENCE,
            "client_id": BUYER_CLIENT.0,
            "sub": BUYER_CLIENT.0,
            "iat": now(),
            "exp": now() + 300,
        });
        if let (Some(c), Some(o)) = (claims.as_object_mut(), overrides.as_object()) {
            for (k, v) in o {
                c.insert(k.clone(), v.clone());
            }
        }
        claims
    };
    let other_audience = issuer
        .token(BUYER_CLIENT, None, Some("https://elsewhere.example/api"))
        .await;
    let vendors_token = issuer.token(VENDOR_CLIENT, None, None).await;
    let expired = issuer.sign(base_claims(json!({"exp": now() - 600, "iat": now() - 900})));
    let not_yet = issuer.sign(base_claims(json!({"nbf": now() + 600})));
    let wrong_issuer = issuer.sign(base_claims(json!({"iss": "http://127.0.0.1:9/other"})));
    let foreign_key = issuer.sign_foreign(base_claims(json!({})));
    let alg_none = unsigned(&base_claims(json!({})));
    let unknown_client = issuer.sign(base_claims(json!({"client_id": "someone-else"})));
    let cases: Vec<(&str, String, &str)> = vec![
        ("expired", expired, "the access token has expired"),
        (
            "not valid yet",
            not_yet,
            "the access token is not valid yet (nbf)",
        ),
        (
            "wrong audience",
            other_audience,
            "the access token is not for this hub (aud)",
        ),
        (
            "wrong issuer",
            wrong_issuer,
            "no member system trusts the access token's issuer",
        ),
        (
            "alg none",
            alg_none,
            "the access token's alg `none` is not accepted",
        ),
        (
            "a key the JWKS does not hold",
            foreign_key,
            "the issuer's keys do not include the access token's key",
        ),
        (
            "a client no member names",
            unknown_client,
            "the access token's client is not a member system's",
        ),
        (
            "VendorCorp's valid token claiming BuyerCorp",
            vendors_token.clone(),
            "the access token names another system",
        ),
    ];
    for (case, token, message) in &cases {
        let refused = query(&stack, token, "buyercorp").await;
        assert_eq!(refused.status, 401, "{case}: {}", refused.json);
        assert_eq!(
            refused.reason(),
            "AUTH_REJECTED",
            "{case}: {}",
            refused.json
        );
        assert!(
            refused.json.to_string().contains(message),
            "{case}: expected {message:?} in {}",
            refused.json
        );
        assert!(
            !refused.json.to_string().contains(token.as_str()),
            "{case}: a refusal never repeats the token"
        );
    }
    // A token whose audience is the host the request names, sent with
    // that `Host`: the audience is the hub's configured address, never
    // what a request says it reached.
    let at_forged_host = issuer.sign(base_claims(
        json!({"aud": "http://evil.example/a2a/vendorcorp"}),
    ));
    let refused = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .header("authorization", &format!("Bearer {at_forged_host}"))
        .header("host", "evil.example")
        .body(serde_json::from_str(COUNT_BY_REGION).expect("json"))
        .send()
        .await;
    assert_eq!(refused.reason(), "AUTH_REJECTED", "{}", refused.json);
    assert!(
        refused
            .json
            .to_string()
            .contains("the access token is not for this hub (aud)"),
        "{}",
        refused.json
    );
    // The same token of VendorCorp is fine as VendorCorp: it names a
    // member, just not the one claimed above (and VendorCorp may not call
    // its own orders through the hub, which the rule check says).
    let as_vendor = query(&stack, &vendors_token, "vendorcorp").await;
    assert_eq!(as_vendor.reason(), "NOT_PERMITTED", "{}", as_vendor.json);

    // A rule that names a scope: BuyerCorp's token without it is refused,
    // with it the call goes through.
    let classify = |token: &str| {
        stack
            .call("buyercorp", "helpdesk", "ticket.classify")
            .header("authorization", &format!("Bearer {token}"))
            .body(json!({"ticket_id": "T-1001"}))
            .send()
    };
    let without = classify(&token).await;
    assert_eq!(without.reason(), "AUTH_REJECTED", "{}", without.json);
    assert!(
        without
            .json
            .to_string()
            .contains("the access token lacks the scope `tickets.classify`"),
        "{}",
        without.json
    );
    let scoped = issuer.token(BUYER_CLIENT, Some(CLASSIFY_SCOPE), None).await;
    let with = classify(&scoped).await;
    assert_eq!(with.json["status"], "connected", "{}", with.json);
    // A static token carries no scopes and is not asked for one.
    let static_token = stack
        .call("buyercorp", "helpdesk", "ticket.classify")
        .body(json!({"ticket_id": "T-1001"}))
        .send()
        .await;
    assert_eq!(
        static_token.json["status"], "connected",
        "{}",
        static_token.json
    );

    let forwarded_after = vendor_trail.recent(100_000).await.expect("trail").len();
    assert_eq!(
        forwarded_after, forwarded_before,
        "no refused token reached VendorCorp"
    );
    // The claims refused at the forged host, naming the hub's own address
    // instead, are fine.
    let at_hub = issuer.sign(base_claims(
        json!({"aud": format!("{}/a2a/vendorcorp", stack.hub_url())}),
    ));
    let accepted = query(&stack, &at_hub, "buyercorp").await;
    assert_eq!(accepted.json["status"], "connected", "{}", accepted.json);

    // What the provider receives is the hub's own credential: the peer
    // accepts only the hub's token, so every call above that went through
    // reached it with that token and not the caller's. The hub does not
    // log the caller's token either.
    let hub_log = stack.hub_log();
    assert!(
        !hub_log.contains(&token),
        "the hub never logs a caller's access token"
    );

    // A key rotation at the provider: the new key's tokens are accepted
    // once the hub reads the new JWKS (at the first token naming the new
    // key, at most once every few seconds per issuer), with no restart.
    let hub_pid = stack.hub_pid();
    issuer.rotate();
    let rotated = issuer.token(BUYER_CLIENT, None, None).await;
    let started = Instant::now();
    let after_rotation = accepted_within(&stack, &rotated, Duration::from_secs(20)).await;
    assert_eq!(
        after_rotation.json["status"], "connected",
        "a rotated key is picked up: {}",
        after_rotation.json
    );
    assert_eq!(stack.hub_pid(), hub_pid, "without a restart");
    println!("rotation picked up after {:?}", started.elapsed());
}

#[tokio::test]
async fn the_hub_tells_a_client_where_to_get_a_token() {
    let issuer = start_issuer();
    let stack = stack_with(&issuer).await;
    let hub = stack.hub_url();
    let token = issuer.token(BUYER_CLIENT, None, None).await;
    accepted_within(&stack, &token, Duration::from_secs(10)).await;
    let http = reqwest::Client::new();
    let metadata = |door: &str, provider: &str| {
        let url = format!("{hub}/.well-known/oauth-protected-resource/{door}/{provider}");
        let http = http.clone();
        async move {
            let doc: Value = http
                .get(&url)
                .send()
                .await
                .expect("metadata")
                .json()
                .await
                .expect("JSON");
            doc
        }
    };

    for door in ["a2a", "mcp"] {
        let doc = metadata(door, "vendorcorp").await;
        assert_eq!(doc["resource"], format!("{hub}/{door}/vendorcorp"), "{doc}");
        assert_eq!(doc["authorization_servers"], json!([issuer.url]), "{doc}");
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]), "{doc}");
    }
    let helpdesk = metadata("a2a", "helpdesk").await;
    assert_eq!(
        helpdesk["scopes_supported"],
        json!([CLASSIFY_SCOPE]),
        "{helpdesk}"
    );

    // The cards advertise the members' issuer as an OAuth 2.0
    // client-credentials scheme beside the bearer one: its token endpoint
    // (from its discovery document), the scopes the provider's rules ask,
    // its metadata URL.
    let discovery: Value = http
        .get(format!("{}/.well-known/openid-configuration", issuer.url))
        .send()
        .await
        .expect("discovery")
        .json()
        .await
        .expect("JSON");
    let card = |provider: &str, token: Option<String>| {
        let mut request = http.get(format!("{hub}/a2a/{provider}/.well-known/agent-card.json"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let card: Value = request
                .send()
                .await
                .expect("card")
                .json()
                .await
                .expect("JSON");
            card
        }
    };
    let public = card("helpdesk", None).await;
    let oauth2 = &public["securitySchemes"]["oauth2"]["oauth2SecurityScheme"];
    assert_eq!(
        oauth2["flows"]["clientCredentials"]["tokenUrl"], discovery["token_endpoint"],
        "{public}"
    );
    assert!(
        oauth2["flows"]["clientCredentials"]["scopes"][CLASSIFY_SCOPE].is_string(),
        "{public}"
    );
    assert_eq!(
        oauth2["oauth2MetadataUrl"],
        format!("{}/.well-known/openid-configuration", issuer.url),
        "{public}"
    );
    assert!(
        public["securityRequirements"].as_array().is_some_and(
            |r| r.contains(&json!({"schemes": {"oauth2": {"list": [CLASSIFY_SCOPE]}}}))
        ),
        "{public}"
    );
    // A member's extended card names its own issuer, with no scope where
    // its rules ask none.
    let extended = card("vendorcorp", Some(token.clone())).await;
    let flow = &extended["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]["flows"]
        ["clientCredentials"];
    assert_eq!(flow["tokenUrl"], discovery["token_endpoint"], "{extended}");
    assert_eq!(flow["scopes"], json!({}), "{extended}");

    // The official MCP Python SDK's OAuth client, given the URL and
    // BuyerCorp's client credentials only: the 401's challenge, the
    // metadata, the issuer's discovery, a token for the hub's resource,
    // then the call.
    let python = repo().join(".tools/venv-mcp/bin/python");
    let out = Command::new(python)
        .arg(repo().join("hub/tests/clients/mcp_oauth_client.py"))
        .args([
            &format!("{hub}/mcp/vendorcorp"),
            BUYER_CLIENT.0,
            BUYER_CLIENT.1,
            &issuer.url,
            "call",
            "query_records",
            COUNT_BY_REGION,
        ])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mcp: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "mcp OAuth client: not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(mcp["result"]["is_error"], false, "{mcp}");
    assert_eq!(
        mcp["token_requests"], 1,
        "one token, from the issuer: {mcp}"
    );
    let groups = mcp["result"]["structured"]["groups"]
        .as_array()
        .map(Vec::len);
    assert_eq!(groups, Some(4), "{mcp}");

    // A 401 points at the document: without a token, and with a bad one.
    let send_message = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}"#;
    let tools_list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    for (door, path, body) in [
        ("mcp", "/mcp/vendorcorp", tools_list),
        ("a2a", "/a2a/vendorcorp", send_message),
    ] {
        for bearer in [None, Some("not-a-token")] {
            let mut request = http
                .post(format!("{hub}{path}"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("a2a-version", "1.0")
                .body(body);
            if let Some(bearer) = bearer {
                request = request.bearer_auth(bearer);
            }
            let response = request.send().await.expect("answer");
            assert_eq!(response.status().as_u16(), 401, "{path} {bearer:?}");
            let challenge = response
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            let expected = format!(
                r#"Bearer resource_metadata="{hub}/.well-known/oauth-protected-resource/{door}/vendorcorp""#
            );
            assert!(challenge.starts_with(&expected), "{path}: {challenge}");
            assert_eq!(
                challenge.contains(r#"error="invalid_token""#),
                bearer.is_some(),
                "{path}: {challenge}"
            );
        }
    }
}

/// The official Python a2a-sdk's matrix client (`matrix/a2a_sdk.py`):
/// default discovery, then `send-data` with the SDK's auth interceptor.
fn run_a2a_sdk(url: &str, token: &str) -> Value {
    let python = repo().join(".tools/venv/bin/python");
    assert!(python.exists(), "run scripts/setup test");
    let out = Command::new(python)
        .arg(repo().join("hub/tests/clients/matrix/a2a_sdk.py"))
        .arg(url)
        .arg(token)
        .args(["send-data", COUNT_BY_REGION])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "a2a-sdk: not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}
