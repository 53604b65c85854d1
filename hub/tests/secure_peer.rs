//! The reference peer calling a secure hub (`peer/src/hub_credentials.rs`):
//! over TLS with its own client certificate (`hub_tls`), with an access
//! token from its own OpenID provider (`hub_oidc`), all real processes.
//!
//! `hub certs` makes the hub's and BuyerCorp's certificates; panva's
//! `oidc-provider` (`hub/tests/clients/js/oidc_issuer.mjs`) is
//! BuyerCorp's identity provider; the hub listens with TLS beside its
//! plain listener, and BuyerCorp's topology entry registers its CA
//! (`mtls: {ca}`) and its issuer (`oidc`). `peer call` with the secure
//! config connects, with a wrong static token in `token_env` (so only the
//! OpenID token can have passed); without a client certificate, over TLS
//! or plain HTTP, the hub refuses it with `AUTH_REJECTED`, "no client
//! certificate"; without the hub's CA the peer does not trust the hub; a
//! wrong client secret is the peer's own error, naming the token endpoint
//! and the status, never the secret.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::certs::{demo_with_tls, hub_certs};
use common::oidc::Issuer;
use common::{peer_bin, Stack};
use serde_json::{json, Value};

/// BuyerCorp's client at its own identity provider.
const CLIENT_ID: &str = "buyercorp";
const CLIENT_SECRET: &str = "buyercorp-oidc-client-secret";
/// The env var the peer config names for the secret.
const SECRET_ENV: &str = "BUYERCORP_OIDC_CLIENT_SECRET";
/// The audience of the provider's tokens (its default resource).
const HUB_AUDIENCE: &str = "urn:wall-street:hub";
const COUNT_BY_REGION: &str = r#"{"aggregate":{"op":"count"},"group_by":"region"}"#;

/// Registers BuyerCorp's CA and issuer in the topology (`hub.auth.mtls`
/// stays off: the other members call without certificates) and waits for
/// the hub to reload it.
async fn register(stack: &mut Stack, ca: &Path, issuer: &str) {
    let yaml = |v: Value| serde_yaml_ng::to_value(v).expect("YAML");
    let mtls = yaml(json!({"ca": ca.display().to_string()}));
    let oidc = yaml(json!({
        "issuer": issuer,
        "audience": [HUB_AUDIENCE],
        "client_ids": [CLIENT_ID],
    }));
    stack
        .reload_topology(|stack| {
            let buyer = stack.system_mut("buyercorp");
            buyer["mtls"] = mtls;
            buyer["oidc"] = oidc;
        })
        .await;
}

/// BuyerCorp's peer config as the stack runs it, with `hub_url` and the
/// given `hub_tls` / `hub_oidc` sections, written to `path`.
fn write_config(
    stack: &Stack,
    path: &Path,
    hub_url: &str,
    tls: Option<Value>,
    oidc: Option<Value>,
) {
    let text = std::fs::read_to_string(stack.peer_config("buyercorp")).expect("buyercorp's config");
    let mut config: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).expect("YAML");
    let yaml = |v: Value| serde_yaml_ng::to_value(v).expect("YAML");
    config["hub_url"] = yaml(json!(hub_url));
    let m = config.as_mapping_mut().expect("a mapping");
    for (key, section) in [("hub_tls", tls), ("hub_oidc", oidc)] {
        match section {
            Some(v) => {
                m.insert(key.into(), yaml(v));
            }
            None => {
                m.remove(key);
            }
        }
    }
    std::fs::write(path, serde_yaml_ng::to_string(&config).expect("YAML")).expect("write config");
}

/// `peer call` as BuyerCorp (`scripts/stack`'s demo call), from another
/// working directory than the config's: a wrong static token in
/// `token_env`, the client secret in its env var.
fn peer_call(stack: &Stack, config: &Path, secret: &str) -> Output {
    Command::new(peer_bin())
        .arg("call")
        .arg("--config")
        .arg(config)
        .arg("--database")
        .arg(stack.peer_db("buyercorp"))
        .args(["--provider", "vendorcorp", "--capability", "orders.query"])
        .args(["--input", COUNT_BY_REGION])
        .current_dir(std::env::temp_dir())
        .env("WS_TOKEN_BUYERCORP", "not-buyercorps-token")
        .env(SECRET_ENV, secret)
        .env_remove("PEER_HUB_URL")
        .env_remove("PEER_DATABASE")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .output()
        .expect("run peer call")
}

fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[tokio::test]
async fn a_peer_calls_a_secure_hub_with_its_certificate_and_its_own_providers_token() {
    let work = tempfile::tempdir().expect("tempdir");
    let certs = work.path().join("certs");
    hub_certs(&certs, &["buyercorp"]);
    let issuer = Issuer::start(
        &json!([
            {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "scope": "orders.read"},
        ]),
        HUB_AUDIENCE,
    );

    let (mut stack, tls) = demo_with_tls(&certs).await;
    register(&mut stack, &certs.join("buyercorp-ca.pem"), &issuer.url).await;
    let stock_token = stack.token("buyercorp");

    // The whole secure config; the TLS files relative to its directory.
    let oidc = json!({
        "token_url": format!("{}/token", issuer.url),
        "client_id": CLIENT_ID,
        "client_secret_env": SECRET_ENV,
    });
    let secure = work.path().join("buyercorp.secure.yaml");
    write_config(
        &stack,
        &secure,
        &tls,
        Some(json!({
            "ca": "certs/hub-ca.pem",
            "cert": "certs/buyercorp.pem",
            "key": "certs/buyercorp-key.pem",
        })),
        Some(oidc.clone()),
    );
    let out = peer_call(&stack, &secure, CLIENT_SECRET);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON answer");
    assert_eq!(answer["status"], "connected", "{answer}");
    assert_eq!(
        answer["result"]["groups"].as_array().map(Vec::len),
        Some(4),
        "{answer}"
    );
    // Its own trail has the call, connected.
    let trail = common::trail(&stack.peer_db("buyercorp"), "buyercorp")
        .await
        .recent(10)
        .await
        .expect("buyercorp's trail");
    let request_id = answer["request_id"].as_str().expect("request id");
    assert!(
        trail
            .iter()
            .any(|r| r.request_id == request_id && r.outcome.as_str() == "connected"),
        "{trail:#?}"
    );

    // No client certificate, over TLS (the hub's CA only): refused by the
    // hub's mTLS layer, after the token was accepted.
    let no_cert = work.path().join("buyercorp.no-cert.yaml");
    write_config(
        &stack,
        &no_cert,
        &tls,
        Some(json!({"ca": certs.join("hub-ca.pem").display().to_string()})),
        Some(oidc.clone()),
    );
    // No TLS at all: the plain listener, no `hub_tls`.
    let plain = work.path().join("buyercorp.plain.yaml");
    write_config(&stack, &plain, &stack.hub_url(), None, Some(oidc.clone()));
    for (case, config) in [("over TLS", &no_cert), ("over plain HTTP", &plain)] {
        let out = peer_call(&stack, config, CLIENT_SECRET);
        assert_eq!(out.status.code(), Some(2), "{case}: {}", shown(&out));
        let text = shown(&out);
        assert!(text.contains("AUTH_REJECTED"), "{case}: {text}");
        assert!(
            text.contains(
                "no client certificate: buyercorp must call over TLS with its certificate"
            ),
            "{case}: {text}"
        );
    }

    // Without the hub's CA, the peer does not trust the hub (a private CA
    // is in no system's roots): it never gets as far as the hub's check.
    let no_ca = work.path().join("buyercorp.no-ca.yaml");
    write_config(&stack, &no_ca, &tls, None, Some(oidc.clone()));
    let out = peer_call(&stack, &no_ca, CLIENT_SECRET);
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(shown(&out).contains("PEER_UNREACHABLE"), "{}", shown(&out));

    // A wrong client secret: the peer's own error (exit 1), naming the
    // token endpoint and its status, not the secret; nothing was sent.
    let out = peer_call(&stack, &secure, "not-the-client-secret");
    let text = shown(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "the token endpoint {}/token answered HTTP 401",
            issuer.url
        )),
        "{text}"
    );
    assert!(!text.contains("not-the-client-secret"), "{text}");

    // The peer prints neither the secret nor an access token, and the
    // hub never saw the stock static token from it.
    let printed = shown(&peer_call(&stack, &secure, CLIENT_SECRET));
    assert!(!printed.contains(CLIENT_SECRET), "{printed}");
    assert!(!printed.contains("eyJ"), "a JWT was printed: {printed}");
    let hub_log = stack.hub_log();
    assert!(
        !hub_log.contains(CLIENT_SECRET),
        "the hub logged the secret"
    );
    assert!(
        !hub_log.contains(&stock_token),
        "the hub logged a static token"
    );
}
