//! The hub's signed receipts (NOTES.md, "Receipts"), against a real hub
//! and real peers: every door hands the caller a receipt that verifies
//! against the hub's published JWKS and names the digests of what crossed
//! (a refusal's too, with its reason code); a party reads its receipts
//! back by id or by request id, and nobody else's; `hub receipt verify`
//! passes receipts written under load, finds each in an export of the
//! hub's trail, and fails a tampered one.

mod common;

use std::process::Command;

use common::{repo, Stack};
use exchange::audit::Outcome;
use exchange::receipt::{self, Receipt, EXTENSION_URI};
use jsonwebtoken::jwk::JwkSet;
use serde_json::{json, Value};

/// Checkpoints every half second: an export waits for one, not a minute.
const ENV: [(&str, &str); 1] = [("WS_TRAIL_CHECKPOINT_SECONDS", "0.5")];

/// `GET path` with `caller`'s token (none for `None`): status and body.
async fn get(stack: &Stack, path: &str, caller: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new().get(format!("{}{path}", stack.hub_url()));
    if let Some(caller) = caller {
        req = req.bearer_auth(stack.token(caller));
    }
    let resp = req.send().await.expect("the hub answers");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn digest(v: &Value) -> String {
    receipt::digest(v).expect("a digest")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_door_hands_its_parties_a_receipt_and_nobody_else() {
    let stack = Stack::demo().await;
    let keys = stack.hub_jwks().await;

    // The gateway: the receipt is a header of the answer.
    let input = json!({"aggregate": {"op": "count"}});
    let answer = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .header("x-request-id", "rc-gateway-1")
        .body(input.clone())
        .send()
        .await;
    let jws = answer.receipt.clone().expect("a receipt header");
    let (r, _kid) = receipt::verify(&jws, &keys).expect("it verifies against the JWKS");
    assert_eq!(
        (
            r.caller.as_str(),
            r.provider.as_str(),
            r.capability.as_str()
        ),
        ("buyercorp", "vendorcorp", "orders.query")
    );
    assert_eq!(r.outcome, Outcome::Connected, "{}", answer.json);
    assert_eq!(r.request_id, "rc-gateway-1");
    assert_eq!(r.issuer, stack.hub_url());
    assert_eq!(r.request.as_deref(), Some(digest(&input).as_str()));
    assert_eq!(r.answer.as_deref(), Some(digest(answer.result()).as_str()));
    assert!(r.terms.contract.is_some(), "{r:?}");
    assert_eq!(r.trail.chain, "hub");
    // One changed value of the answer is not what the receipt names.
    let mut changed = answer.result().clone();
    changed["row_count"] = json!(changed["row_count"].as_f64().unwrap_or(0.0) + 1.0);
    assert_ne!(r.answer.as_deref(), Some(digest(&changed).as_str()));

    // A refusal gets one too, with its reason code and no answer.
    let refused = stack
        .call("helpdesk", "vendorcorp", "orders.query")
        .body(json!({"aggregate": {"op": "count"}}))
        .send()
        .await;
    assert_eq!(refused.reason(), "NOT_PERMITTED");
    let (rr, _) = receipt::verify(refused.receipt.as_deref().expect("a receipt"), &keys)
        .expect("it verifies");
    assert_eq!(rr.outcome, Outcome::NotConnected);
    assert_eq!(rr.reason.map(|r| r.as_str()), Some("NOT_PERMITTED"));
    assert_eq!(rr.answer, None);

    // JSON-RPC: in the answer's metadata, under the extension's URI, and
    // the answer digest is the data part's.
    let a2a = stack
        .a2a("buyercorp", "vendorcorp")
        .data("orders.query", json!({"aggregate": {"op": "count"}}))
        .send()
        .await;
    let message = &a2a.json["result"]["message"];
    let entry = &message["metadata"][EXTENSION_URI];
    let (ra, _) = receipt::verify(entry["jws"].as_str().expect("a jws"), &keys).expect("verifies");
    assert_eq!(entry["id"], json!(ra.id));
    assert_eq!(ra.method, "SendMessage");
    let data = message["parts"]
        .as_array()
        .and_then(|p| p.iter().find_map(|p| p.get("data")))
        .expect("a data part");
    assert_eq!(ra.answer.as_deref(), Some(digest(data).as_str()));

    // MCP: in the tool result's `_meta`; the answer is the result without it.
    let mcp = stack
        .mcp_query("buyercorp", json!({"aggregate": {"op": "count"}}))
        .await;
    let mut result = mcp.body["result"].clone();
    let entry = result["_meta"][EXTENSION_URI].clone();
    let (rm, _) = receipt::verify(entry["jws"].as_str().expect("a jws"), &keys).expect("verifies");
    assert_eq!(rm.method, "tools/call");
    if let Some(fields) = result.as_object_mut() {
        fields.remove("_meta");
        fields.remove("resultType");
    }
    assert_eq!(
        rm.answer.as_deref(),
        Some(digest(&result).as_str()),
        "{}",
        mcp.body
    );

    // Read back: both parties see it, a third party and a stranger do not.
    let path = format!("/receipts/v1/{}", r.id);
    for party in ["buyercorp", "vendorcorp"] {
        let (status, body) = get(&stack, &path, Some(party)).await;
        assert_eq!(
            (status, body["receipt"].as_str()),
            (200, Some(jws.as_str())),
            "{party}"
        );
    }
    let (status, body) = get(&stack, &path, Some("helpdesk")).await;
    assert_eq!(status, 404, "{body}");
    assert!(!body.to_string().contains(&jws), "{body}");
    let (missing, _) = get(&stack, "/receipts/v1/rcpt-nobody", Some("helpdesk")).await;
    assert_eq!(missing, 404);
    let (status, body) = get(&stack, &path, None).await;
    assert_eq!(status, 401, "{body}");
    assert!(!body.to_string().contains(&jws), "{body}");
    // Helpdesk's token claiming to be BuyerCorp: refused by the auth
    // chain, the receipt not shown.
    let resp = reqwest::Client::new()
        .get(format!("{}{path}", stack.hub_url()))
        .bearer_auth(stack.token("helpdesk"))
        .header("x-caller-system", "buyercorp")
        .send()
        .await
        .expect("the hub answers");
    let status = resp.status().as_u16();
    let body = resp.text().await.unwrap_or_default();
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("AUTH_REJECTED"), "{body}");
    assert!(!body.contains(&jws), "{body}");

    // The provider finds it by the request id the envelope carried.
    let (status, body) = get(
        &stack,
        "/receipts/v1?request_id=rc-gateway-1",
        Some("vendorcorp"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["receipts"][0]["receipt"], json!(jws), "{body}");
    let (_, body) = get(
        &stack,
        "/receipts/v1?request_id=rc-gateway-1",
        Some("helpdesk"),
    )
    .await;
    assert_eq!(body["receipts"], json!([]), "{body}");

    // The cards declare the extension.
    let (_, card) = get(&stack, "/a2a/vendorcorp/.well-known/agent-card.json", None).await;
    let listed = card["capabilities"]["extensions"]
        .as_array()
        .is_some_and(|e| e.iter().any(|e| e["uri"] == EXTENSION_URI));
    assert!(listed, "{card}");
}

/// `program args...` (a client this project did not write, or a verifier
/// on an outside JOSE library): its one JSON line.
fn run_json(program: &std::path::Path, args: &[&str]) -> Value {
    let out = Command::new(program).args(args).output().expect("run it");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| {
        panic!(
            "{} printed no JSON:\n{stdout}\n{}",
            program.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sdks_receipts_verify_with_outside_jose_libraries() {
    let stack = Stack::demo().await;
    let jwks_url = format!("{}/.well-known/jwks.json", stack.hub_url());
    let venv = repo().join(".tools/venv/bin/python");
    let clients = repo().join("hub/tests/clients");
    let node = std::path::PathBuf::from("node");
    let input = r#"{"capability": "orders.query", "input": {"aggregate": {"op": "count"}}}"#;
    let token = stack.token("buyercorp");
    let vendor = format!("{}/a2a/vendorcorp/", stack.hub_url());
    // The official Python a2a-sdk over JSON-RPC, verified with joserfc and
    // rfc8785; @a2a-js/sdk, verified with jose and canonicalize.
    let sdks = [
        (
            "a2a-sdk 1.3 + joserfc",
            venv.clone(),
            clients.join("matrix/a2a_sdk.py"),
            venv.clone(),
            clients.join("verify_receipt.py"),
        ),
        (
            "@a2a-js/sdk 1.3 + jose",
            node.clone(),
            clients.join("js/a2a_js.mjs"),
            node.clone(),
            clients.join("js/verify_receipt.mjs"),
        ),
    ];
    for (name, program, client, verifier_program, verifier) in sdks {
        let sent = run_json(
            &program,
            &[
                &client.display().to_string(),
                &vendor,
                &token,
                "send-data",
                input,
            ],
        );
        let answer = &sent["answer"];
        let entry = &answer["metadata"][EXTENSION_URI];
        let jws = entry["jws"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no receipt in {sent}"));
        let data = answer["data"].to_string();
        let checked = run_json(
            &verifier_program,
            &[&verifier.display().to_string(), &jwks_url, jws, &data],
        );
        eprintln!("{name}: {checked}");
        assert_eq!(checked["verified"], true, "{name}: {checked}");
        assert_eq!(checked["alg"], "EdDSA", "{name}: {checked}");
        let claims = &checked["claims"];
        assert_eq!(claims["id"], entry["id"], "{name}: {checked}");
        assert_eq!(
            (&claims["caller"], &claims["provider"], &claims["outcome"]),
            (
                &json!("buyercorp"),
                &json!("vendorcorp"),
                &json!("connected")
            ),
            "{name}: {checked}"
        );
        assert_eq!(checked["answer_matches"], true, "{name}: {checked}");
        assert_eq!(
            checked["changed_answer_matches"], false,
            "{name}: {checked}"
        );
        assert!(
            checked["changed_receipt_error"].is_string(),
            "{name}: a changed receipt must not verify: {checked}"
        );
        // The other party reads the same receipt back; a third does not.
        let path = format!("/receipts/v1/{}", entry["id"].as_str().unwrap_or_default());
        let (status, body) = get(&stack, &path, Some("vendorcorp")).await;
        assert_eq!(
            (status, body["receipt"].as_str()),
            (200, Some(jws)),
            "{name}"
        );
        let (status, _) = get(&stack, &path, Some("helpdesk")).await;
        assert_eq!(status, 404, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_providers_own_signature_of_its_answer_rides_in_the_receipt() {
    // VendorCorp signs its card and its answers; Helpdesk signs too, but
    // its card was changed after signing, so its keys vouch for nothing.
    let signs = common::Faults {
        sign_card: true,
        ..Default::default()
    };
    let tampered = common::Faults {
        sign_card: true,
        tamper_card: true,
        ..Default::default()
    };
    let stack = Stack::start(vec![
        common::PeerSpec::clone_of("vendorcorp", "vendorcorp", signs),
        common::PeerSpec::clone_of("helpdesk", "helpdesk", tampered),
        common::PeerSpec::stock("buyercorp"),
    ])
    .await;
    let keys = stack.hub_jwks().await;
    let vendor_keys: JwkSet = reqwest::get(format!(
        "{}/.well-known/jwks.json",
        stack.peer_url("vendorcorp")
    ))
    .await
    .expect("VendorCorp's JWKS")
    .json()
    .await
    .expect("a JWKS");
    // Until the prober has verified VendorCorp's card, its signature is
    // not taken: wait for the first receipt that carries it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let (r, answer) = loop {
        let answer = stack
            .call("buyercorp", "vendorcorp", "orders.query")
            .body(json!({"aggregate": {"op": "count"}}))
            .send()
            .await;
        let (r, _) = receipt::verify(answer.receipt.as_deref().expect("a receipt"), &keys)
            .expect("it verifies");
        if r.provider_signature.is_some() {
            break (r, answer);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no provider signature in {r:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    let signed = r.provider_signature.expect("VendorCorp's signature");
    // A third party checks it against VendorCorp's own keys and the answer.
    let kid = receipt::verify_answer(&signed.jws, answer.result(), &vendor_keys)
        .expect("VendorCorp's signature verifies against VendorCorp's JWKS");
    assert_eq!(kid, signed.kid);
    let mut other = answer.result().clone();
    other["row_count"] = json!(0);
    assert!(receipt::verify_answer(&signed.jws, &other, &vendor_keys).is_err());
    assert!(
        receipt::verify_answer(&signed.jws, answer.result(), &keys).is_err(),
        "the hub's keys do not make VendorCorp's signature"
    );

    // Helpdesk signed its answer, with keys its failing card cannot vouch
    // for: the receipt proves what the hub relayed, no more.
    let classified = stack
        .call("buyercorp", "helpdesk", "ticket.classify")
        .body(json!({"subject": "Printer on fire", "content": "smoke from tray 2"}))
        .send()
        .await;
    let (rh, _) = receipt::verify(classified.receipt.as_deref().expect("a receipt"), &keys)
        .expect("it verifies");
    assert_eq!(rh.outcome, Outcome::Connected, "{}", classified.json);
    assert_eq!(rh.provider_signature, None, "{rh:?}");
}

/// `hub receipt ARGS...`, its exit status and output.
fn hub_receipt(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hub"))
        .arg("receipt")
        .args(args)
        .output()
        .expect("run hub receipt");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test(flavor = "multi_thread")]
async fn receipts_written_under_load_verify_offline_and_in_the_trail() {
    let stack = Stack::start_with_env(
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(common::PeerSpec::stock)
            .to_vec(),
        &ENV,
    )
    .await;
    // 60 calls, 12 at a time: BuyerCorp's queries of VendorCorp and
    // consults of Helpdesk, each receipt kept as BuyerCorp keeps it.
    let dir = tempfile::tempdir().expect("dir");
    let receipts = dir.path().join("receipts");
    std::fs::create_dir(&receipts).expect("dir");
    let mut kept: Vec<Receipt> = Vec::new();
    for wave in 0..5 {
        let calls = (0..12).map(|i| {
            let n = wave * 12 + i;
            let call = if n % 2 == 0 {
                stack
                    .call("buyercorp", "vendorcorp", "orders.query")
                    .body(json!({"aggregate": {"op": "count"}}))
            } else {
                stack
                    .call("buyercorp", "helpdesk", "ticket.classify")
                    .body(json!({"subject": format!("Invoice {n} charged twice"), "content": "billed twice"}))
            };
            call.header("x-request-id", &format!("rc-load-{n}")).send()
        });
        for answer in futures::future::join_all(calls).await {
            let jws = answer.receipt.expect("every answer has its receipt");
            let r = receipt::claims(&jws).expect("a receipt");
            assert_eq!(r.outcome, Outcome::Connected, "{}", answer.json);
            std::fs::write(receipts.join(format!("{}.jws", r.id)), &jws).expect("write");
            kept.push(r);
        }
    }
    assert_eq!(kept.len(), 60);
    let jwks_url = format!("{}/.well-known/jwks.json", stack.hub_url());
    let receipts_arg = receipts.display().to_string();
    let (ok, text) = hub_receipt(&["verify", &receipts_arg, "--jwks", &jwks_url]);
    assert!(ok, "{text}");
    assert!(text.contains("60 receipts verified, 0 failed"), "{text}");

    // BuyerCorp's export of the hub's trail, once a checkpoint covers the
    // last call: every receipt's record is in it, agreeing with it.
    let export = dir.path().join("export");
    let hub_db = stack.hub_store.to_argument();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let out = Command::new(env!("CARGO_BIN_EXE_hub"))
            .args([
                "trail",
                "export",
                "--db",
                &hub_db,
                "--counterparty",
                "buyercorp",
            ])
            .args(["--out", &export.display().to_string()])
            .output()
            .expect("run hub trail export");
        if out.status.success() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = std::fs::remove_dir_all(&export);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    let export_arg = export.display().to_string();
    let (ok, text) = hub_receipt(&[
        "verify",
        &receipts_arg,
        "--jwks",
        &jwks_url,
        "--trail",
        &export_arg,
    ]);
    assert!(ok, "{text}");
    assert_eq!(text.matches(", trail seq ").count(), 60, "{text}");

    // One character of one receipt's claims changed: that one fails, by
    // name, and the command fails.
    let victim = receipts.join(format!("{}.jws", kept[7].id));
    let jws = std::fs::read_to_string(&victim).expect("read");
    let mut parts: Vec<String> = jws.split('.').map(str::to_string).collect();
    let forged = {
        let mut claims = serde_json::to_value(&kept[7]).expect("claims");
        claims["provider"] = json!("helpdesk-x");
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(serde_json::to_vec(&claims).expect("json"))
    };
    parts[1] = forged;
    std::fs::write(&victim, parts.join(".")).expect("write");
    let (ok, text) = hub_receipt(&["verify", &receipts_arg, "--jwks", &jwks_url]);
    assert!(!ok, "{text}");
    assert!(text.contains("59 receipts verified, 1 failed"), "{text}");
    assert!(
        text.contains(&format!(
            "FAIL {}: the receipt's signature does not verify",
            victim.display()
        )),
        "{text}"
    );
}
