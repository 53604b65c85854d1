//! The hub as a TLS client of a provider that asks for its certificate
//! (`hub/src/tls/client.rs` on the hub's side, the peer's `tls` section,
//! `peer/src/tls.rs`, on the provider's), all real processes.
//!
//! `hub certs` makes the hub's certificate and VendorCorp's. VendorCorp's
//! `peer serve` listens with TLS and requires a client certificate the
//! hub's CA issued (`tls: {cert, key, client_ca}`); the topology names it
//! at `https://localhost:PORT`; the hub trusts VendorCorp's CA
//! (`WS_TLS_PROVIDER_CA`) and presents its own certificate
//! (`WS_TLS_CLIENT_CERT`, `WS_TLS_CLIENT_KEY`). Covered: the demo's
//! contracts negotiate and BuyerCorp's `orders.query` connects through the
//! hub, the prober sees VendorCorp up over TLS, VendorCorp's trail has the
//! call; the hub restarted without its certificate cannot reach VendorCorp
//! (the handshake fails) and nothing more reaches its trail; a client
//! without a certificate fails the handshake, one with the hub's gets in.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::certs::hub_certs;
use common::{PeerSpec, Stack};
use serde_json::{json, Value};

const COUNT_BY_REGION: &str = r#"{"aggregate":{"op":"count"},"group_by":"region"}"#;

/// VendorCorp's trail: its `orders.query` records for BuyerCorp.
async fn buyer_queries(stack: &Stack) -> Vec<exchange::audit::AuditRecord> {
    common::trail(&stack.peer_db("vendorcorp"), "vendorcorp")
        .await
        .recent(10_000)
        .await
        .expect("vendorcorp's trail")
        .into_iter()
        .filter(|r| r.caller == "buyercorp" && r.capability == "orders.query")
        .collect()
}

/// VendorCorp's status on the hub's board.
async fn board_status(stack: &Stack) -> String {
    let topology = stack.ui().await.get_json("/api/topology").await;
    topology["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["id"] == "vendorcorp"))
        .and_then(|n| n["status"].as_str())
        .unwrap_or("<absent>")
        .to_string()
}

/// Waits until the board shows VendorCorp `want` (within 30 s).
async fn wait_board(stack: &Stack, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let status = board_status(stack).await;
        if status == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "VendorCorp is {status} on the board, not {want}:\n{}",
            stack.hub_log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A client of VendorCorp's server trusting its CA, presenting the PEM
/// files `identity` (certificate, key) if given.
fn client(certs: &Path, identity: Option<(&str, &str)>) -> reqwest::Client {
    let ca = std::fs::read(certs.join("vendorcorp-ca.pem")).expect("VendorCorp's CA");
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("CA"))
        .timeout(Duration::from_secs(10));
    if let Some((cert, key)) = identity {
        let mut pem = std::fs::read(certs.join(cert)).expect("cert");
        pem.extend(std::fs::read(certs.join(key)).expect("key"));
        builder = builder.identity(reqwest::Identity::from_pem(&pem).expect("identity"));
    }
    builder.build().expect("client")
}

#[tokio::test]
async fn the_hub_presents_its_certificate_to_a_provider_that_requires_one() {
    let started = Instant::now();
    let work = tempfile::tempdir().expect("tempdir");
    let certs = work.path().join("certs");
    hub_certs(&certs, &["vendorcorp"]);
    let file = |name: &str| certs.join(name).display().to_string();

    let vendor = PeerSpec::stock("vendorcorp").with_config(
        "tls",
        json!({
            "cert": file("vendorcorp.pem"),
            "key": file("vendorcorp-key.pem"),
            "client_ca": file("hub-ca.pem"),
        }),
    );
    let (provider_ca, client_cert, client_key) = (
        file("vendorcorp-ca.pem"),
        file("hub.pem"),
        file("hub-key.pem"),
    );
    // The demo's contracts are negotiated through the hub at start: the
    // hub already reaches VendorCorp over TLS with its certificate there.
    let mut stack = Stack::start_with_env(
        vec![
            vendor,
            PeerSpec::stock("buyercorp"),
            PeerSpec::stock("helpdesk"),
        ],
        &[
            ("WS_TLS_PROVIDER_CA", provider_ca.as_str()),
            ("WS_TLS_CLIENT_CERT", client_cert.as_str()),
            ("WS_TLS_CLIENT_KEY", client_key.as_str()),
        ],
    )
    .await;
    let peer_url = stack.peer_url("vendorcorp");
    let port = stack.peer_ports["vendorcorp"];
    assert_eq!(peer_url, format!("https://localhost:{port}"));
    let peer_log =
        std::fs::read_to_string(stack.dir.path().join("vendorcorp.log")).unwrap_or_default();
    assert!(
        peer_log.contains(&format!("peer listening on https://127.0.0.1:{port}")),
        "{peer_log}"
    );
    let listed = stack.topology_mut()["systems"]
        .as_sequence()
        .and_then(|s| s.iter().find(|s| s["id"].as_str() == Some("vendorcorp")))
        .and_then(|s| s["base_url"].as_str())
        .map(str::to_string);
    assert_eq!(listed.as_deref(), Some(peer_url.as_str()));

    // The prober's probe over TLS, with the hub's certificate.
    wait_board(&stack, "healthy").await;

    // BuyerCorp's call, forwarded by the hub over TLS.
    let before = buyer_queries(&stack).await.len();
    let answer = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(serde_json::from_str(COUNT_BY_REGION).expect("JSON"))
        .send()
        .await;
    assert_eq!(answer.status, 200, "{}", answer.json);
    assert!(answer.result().is_object(), "{}", answer.json);
    // VendorCorp's record of it: the hub's envelope (its request and
    // trace ids) arrived with the call, under the negotiated contract.
    let request_id = answer.json["request_id"].as_str().expect("request_id");
    let trace_id = answer.json["trace_id"].as_str().expect("trace_id");
    let records = buyer_queries(&stack).await;
    assert_eq!(records.len(), before + 1, "{records:#?}");
    let record = records
        .iter()
        .find(|r| r.request_id == request_id)
        .unwrap_or_else(|| panic!("no record of {request_id}: {records:#?}"));
    assert_eq!(record.trace_id, trace_id, "{record:#?}");
    assert_eq!(
        (record.role, record.outcome, record.provider.as_str()),
        (
            exchange::audit::Role::Responder,
            exchange::audit::Outcome::Executed,
            "vendorcorp"
        ),
        "{record:#?}"
    );
    assert!(
        record.detail.starts_with("granted contract "),
        "{record:#?}"
    );

    // A client of VendorCorp's without a certificate fails the handshake;
    // with the hub's it gets in.
    let refused = client(&certs, None)
        .get(format!("{peer_url}/health"))
        .send()
        .await;
    assert!(
        refused.is_err(),
        "a client without a certificate got an answer: {refused:?}"
    );
    let health: Value = client(&certs, Some(("hub.pem", "hub-key.pem")))
        .get(format!("{peer_url}/health"))
        .send()
        .await
        .expect("the hub's certificate gets in")
        .json()
        .await
        .expect("JSON");
    assert_eq!(health["system"], "vendorcorp", "{health}");
    // Plain HTTP on the TLS port is no way in either.
    let plain = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/health"))
        .timeout(Duration::from_secs(10))
        .send()
        .await;
    assert!(
        plain.as_ref().map_or(true, |r| !r.status().is_success()),
        "{plain:?}"
    );

    // The hub restarted without its certificate: VendorCorp's handshake
    // refuses it, the call ends not_connected, nothing reaches the trail.
    stack.kill_hub();
    stack.remove_env("WS_TLS_CLIENT_CERT");
    stack.remove_env("WS_TLS_CLIENT_KEY");
    stack.start_hub().await;
    let before = buyer_queries(&stack).await.len();
    let answer = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(serde_json::from_str(COUNT_BY_REGION).expect("JSON"))
        .send()
        .await;
    assert_eq!(answer.status, 502, "{}", answer.json);
    assert_eq!(answer.reason(), "PEER_UNREACHABLE", "{}", answer.json);
    assert_eq!(
        answer.json["detail"], "connection failed by vendorcorp",
        "{}",
        answer.json
    );
    // And the prober cannot reach it either.
    wait_board(&stack, "degraded").await;
    let answer = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(serde_json::from_str(COUNT_BY_REGION).expect("JSON"))
        .send()
        .await;
    assert_eq!(answer.reason(), "PEER_UNREACHABLE", "{}", answer.json);
    assert_eq!(buyer_queries(&stack).await.len(), before);
    let peer_log =
        std::fs::read_to_string(stack.dir.path().join("vendorcorp.log")).unwrap_or_default();
    assert!(peer_log.contains("TLS handshake failed"), "{peer_log}");
    eprintln!("provider_tls: {:.1} s", started.elapsed().as_secs_f64());
}
