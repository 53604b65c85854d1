//! Signed agent cards (A2A v1.0 §8.4) on both sides of the hub.
//!
//! - A provider that signs its card (a reference peer with `sign_card`) is
//!   verified by the hub's prober against the keys the provider publishes;
//!   one whose card was changed after signing is reported as failing; an
//!   unsigned one as unsigned — in the hub's log and in the canvas's view
//!   of each system.
//! - Every card the hub serves is signed with the hub's key, and an outside
//!   JOSE library (`jose` and `canonicalize` from npm, through
//!   `hub/tests/clients/js/verify_card.mjs`) verifies it against
//!   `/.well-known/jwks.json`; after a rotation the new key signs and the old
//!   one is still published.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{repo, Faults, PeerSpec, Stack};
use serde_json::Value;

fn verify_with_jose(url: &str, token: Option<&str>) -> Value {
    let mut command = Command::new("node");
    command
        .arg(repo().join("hub/tests/clients/js/verify_card.mjs"))
        .arg(url);
    if let Some(token) = token {
        command.arg(token);
    }
    let out = command.output().expect("node runs verify_card.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "verify_card.mjs: not JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Waits until the hub's log has a line with every one of `parts`.
async fn logged(stack: &Stack, parts: &[&str], within: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < within {
        if stack
            .hub_log()
            .lines()
            .any(|line| parts.iter().all(|p| line.contains(p)))
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    false
}

#[tokio::test]
async fn signed_cards_are_verified_by_the_prober_and_the_hubs_own_by_an_outside_library() {
    let signed = Faults {
        sign_card: true,
        ..Default::default()
    };
    let tampered = Faults {
        sign_card: true,
        tamper_card: true,
        ..Default::default()
    };
    let stack = Stack::start_with_env(
        vec![
            PeerSpec::clone_of("vendorcorp", "vendorcorp", signed),
            PeerSpec::clone_of("helpdesk", "helpdesk", tampered),
            PeerSpec::stock("buyercorp"),
        ],
        &[("WS_SIGNING_KEY_ROTATE_SECONDS", "4")],
    )
    .await;
    let hub = stack.hub_url();

    // The prober's verdicts, as the operator's log shows them.
    let wait = Duration::from_secs(15);
    assert!(
        logged(
            &stack,
            &["vendorcorp", "agent card signature: verified"],
            wait
        )
        .await,
        "VendorCorp's signed card is verified:\n{}",
        stack.hub_log()
    );
    assert!(
        logged(
            &stack,
            &[
                "helpdesk",
                "agent card signature: FAILED",
                "the signature does not match the card"
            ],
            wait
        )
        .await,
        "Helpdesk's tampered card fails:\n{}",
        stack.hub_log()
    );
    assert!(
        logged(
            &stack,
            &["buyercorp", "agent card signature: unsigned"],
            wait
        )
        .await,
        "BuyerCorp's card is unsigned:\n{}",
        stack.hub_log()
    );

    // The canvas's view of each system says the same (its drawer shows it).
    let ui = stack.ui().await;
    let topology = ui.get_json("/api/topology").await;
    let signature_of = |id: &str| {
        topology["nodes"]
            .as_array()
            .and_then(|nodes| nodes.iter().find(|n| n["id"] == id))
            .map(|n| n["card_signature"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(signature_of("vendorcorp"), "verified", "{topology}");
    assert_eq!(signature_of("helpdesk"), "failed", "{topology}");
    assert_eq!(signature_of("buyercorp"), "unsigned", "{topology}");

    // The hub's own cards, verified by jose against the hub's JWKS.
    let hub_card = verify_with_jose(&format!("{hub}/.well-known/agent-card.json"), None);
    assert_eq!(hub_card["verified"], true, "{hub_card}");
    assert_eq!(hub_card["alg"], "EdDSA", "{hub_card}");
    assert_eq!(
        hub_card["jku"],
        format!("{hub}/.well-known/jwks.json"),
        "{hub_card}"
    );
    let public = verify_with_jose(
        &format!("{hub}/a2a/vendorcorp/.well-known/agent-card.json"),
        None,
    );
    assert_eq!(public["verified"], true, "{public}");
    let extended = verify_with_jose(
        &format!("{hub}/a2a/vendorcorp/.well-known/agent-card.json"),
        Some(&stack.token("buyercorp")),
    );
    assert_eq!(extended["verified"], true, "{extended}");
    let first_kid = hub_card["kid"].as_str().unwrap_or_default().to_string();

    // The signature rides in the card as A2A §8.4 puts it.
    let card: Value = reqwest::get(format!("{hub}/.well-known/agent-card.json"))
        .await
        .expect("card")
        .json()
        .await
        .expect("JSON");
    assert!(card["signatures"][0]["protected"].is_string(), "{card}");

    // Rotation: after the key's age (4 s here), a new key signs and the old
    // one is still published, so what it signed still verifies.
    let started = Instant::now();
    let rotated = loop {
        let now = verify_with_jose(&format!("{hub}/.well-known/agent-card.json"), None);
        if now["kid"] != first_kid.as_str() || started.elapsed() > Duration::from_secs(20) {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(rotated["verified"], true, "{rotated}");
    assert_ne!(
        rotated["kid"],
        first_kid.as_str(),
        "the key rotated: {rotated}"
    );
    let jwks: Value = reqwest::get(format!("{hub}/.well-known/jwks.json"))
        .await
        .expect("jwks")
        .json()
        .await
        .expect("JSON");
    let kids: Vec<&str> = jwks["keys"]
        .as_array()
        .map(|keys| keys.iter().filter_map(|k| k["kid"].as_str()).collect())
        .unwrap_or_default();
    assert!(kids.contains(&first_kid.as_str()), "old key kept: {jwks}");
    assert!(
        jwks["keys"]
            .as_array()
            .is_some_and(|keys| keys.iter().all(|k| k.get("d").is_none())),
        "the JWKS holds no private key: {jwks}"
    );
}
