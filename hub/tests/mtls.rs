//! Mutual TLS at the hub's door (`hub/src/tls`, the auth chain's mTLS
//! layer), on the real hub and its real peers.
//!
//! The certificates are made at start by `hub certs` (a CA per member, the
//! hub's own). The hub listens with TLS beside its plain listener
//! (`WS_TLS_ADDR`); BuyerCorp's entry registers its certificate, first by
//! its pinned key, then by its CA. Covered: the right certificate
//! connects (over `/gateway/v1` and the A2A HTTP+JSON binding); no
//! certificate (over TLS and over plain HTTP), another member's
//! certificate and a certificate nobody registered are each refused by
//! the layer with `AUTH_REJECTED` and their own message, and nothing of a
//! refused call reaches the provider; VendorCorp receives the hub's token,
//! never the caller's; `hub.auth.mtls: true` asks it of every member.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::a2a::send_message_params;
use common::certs::{demo_with_tls, hub_certs};
use common::Stack;
use serde_json::{json, Value};

/// A client that trusts the hub's CA and presents `identity` (the PEM
/// files of a member's certificate and key), if any.
fn client(certs: &Path, identity: Option<(&Path, &str)>) -> reqwest::Client {
    let ca = std::fs::read(certs.join("hub-ca.pem")).expect("hub CA");
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("CA"))
        .timeout(Duration::from_secs(30));
    if let Some((dir, system)) = identity {
        let mut pem = std::fs::read(dir.join(format!("{system}.pem"))).expect("cert");
        pem.extend(std::fs::read(dir.join(format!("{system}-key.pem"))).expect("key"));
        builder = builder.identity(reqwest::Identity::from_pem(&pem).expect("identity"));
    }
    builder.build().expect("client")
}

/// BuyerCorp's `orders.query` through `/gateway/v1` at `base`: status and
/// JSON.
async fn query(client: &reqwest::Client, base: &str, token: &str) -> (u16, Value) {
    let resp = client
        .post(format!("{base}/gateway/v1/vendorcorp/orders.query"))
        .bearer_auth(token)
        .header("x-caller-system", "buyercorp")
        .json(&json!({"aggregate": {"op": "count"}, "group_by": "region"}))
        .send()
        .await
        .expect("the hub answers");
    let status = resp.status().as_u16();
    (status, resp.json().await.expect("JSON"))
}

/// The refusal's reason code and message, from `/gateway/v1`'s answer.
fn refusal(body: &Value) -> (String, String) {
    (
        body["envelope"]["reason"]
            .as_str()
            .or_else(|| body["reason"].as_str())
            .unwrap_or_default()
            .to_string(),
        body["detail"]
            .as_str()
            .or_else(|| body["envelope"]["detail"].as_str())
            .or_else(|| body["error"]["message"].as_str())
            .unwrap_or_default()
            .to_string(),
    )
}

/// BuyerCorp's and the hub's `orders.query` calls in VendorCorp's trail.
async fn executed_for_buyer(stack: &Stack) -> usize {
    common::trail(&stack.peer_db("vendorcorp"), "vendorcorp")
        .await
        .recent(10_000)
        .await
        .expect("vendorcorp's trail")
        .iter()
        .filter(|r| r.caller == "buyercorp" && r.capability == "orders.query")
        .count()
}

/// Sets BuyerCorp's `mtls` entry (and `hub.auth.mtls`) and waits for the
/// hub to reload it.
async fn register(stack: &mut Stack, mtls: Value, everyone: bool) {
    stack
        .reload_topology(|stack| {
            stack.topology_mut()["hub"]["auth"]["mtls"] = serde_yaml_ng::Value::Bool(everyone);
            stack.system_mut("buyercorp")["mtls"] = serde_yaml_ng::to_value(mtls).expect("yaml");
        })
        .await;
}

#[tokio::test]
async fn a_member_is_known_by_its_certificate_and_every_other_certificate_is_refused() {
    let work = tempfile::tempdir().expect("tempdir");
    let certs: PathBuf = work.path().join("certs");
    let pins = hub_certs(&certs, &["buyercorp", "vendorcorp"]);
    let buyer_pin = pins
        .iter()
        .find(|(s, _)| s == "buyercorp")
        .map(|(_, p)| p.clone())
        .expect("buyercorp's pin");
    // A certificate nobody registered: the same name, another key and CA.
    let strangers = work.path().join("strangers");
    hub_certs(&strangers, &["buyercorp"]);

    let (mut stack, tls) = demo_with_tls(&certs).await;
    let token = stack.token("buyercorp");

    // Before any registration, TLS without a certificate is just TLS.
    let (status, body) = query(&client(&certs, None), &tls, &token).await;
    assert_eq!(status, 200, "{body}");

    register(&mut stack, json!({"spki_sha256": [buyer_pin]}), false).await;
    let before = executed_for_buyer(&stack).await;

    let own = client(&certs, Some((&certs, "buyercorp")));
    let (status, body) = query(&own, &tls, &token).await;
    assert_eq!(status, 200, "BuyerCorp's own certificate connects: {body}");

    // Each wrong certificate is refused by the layer, with its message.
    let cases: [(&str, reqwest::Client, &str); 4] = [
        (
            "no certificate over TLS",
            client(&certs, None),
            "no client certificate: buyercorp must call over TLS with its certificate",
        ),
        (
            "another member's certificate",
            client(&certs, Some((&certs, "vendorcorp"))),
            "the client certificate is not buyercorp's",
        ),
        (
            "a certificate nobody registered",
            client(&certs, Some((&strangers, "buyercorp"))),
            "the client certificate is not buyercorp's",
        ),
        (
            "plain HTTP",
            reqwest::Client::new(),
            "no client certificate: buyercorp must call over TLS with its certificate",
        ),
    ];
    for (case, client, message) in cases {
        let base = if case == "plain HTTP" {
            stack.hub_url()
        } else {
            tls.clone()
        };
        let (status, body) = query(&client, &base, &token).await;
        assert_eq!(status, 401, "{case}: {body}");
        assert_eq!(
            refusal(&body),
            ("AUTH_REJECTED".to_string(), message.to_string()),
            "{case}: {body}"
        );
        assert!(
            !body.to_string().contains(&token),
            "{case}: the refusal repeats the token"
        );
    }
    // The A2A HTTP+JSON binding: the token names the caller, the
    // certificate must be its own.
    let rest = |client: &reqwest::Client| {
        client
            .post(format!("{tls}/a2a/vendorcorp/rest/message:send"))
            .bearer_auth(&token)
            .header("a2a-version", "1.0")
            .json(&send_message_params(
                "orders.query",
                json!({"aggregate": {"op": "count"}, "group_by": "region"}),
            ))
            .send()
    };
    let ok = rest(&own).await.expect("answers");
    assert_eq!(
        ok.status().as_u16(),
        200,
        "{}",
        ok.text().await.unwrap_or_default()
    );
    let refused = rest(&client(&certs, Some((&certs, "vendorcorp"))))
        .await
        .expect("answers");
    assert_eq!(refused.status().as_u16(), 401);
    let text = refused.text().await.unwrap_or_default();
    assert!(
        text.contains("the client certificate is not buyercorp's"),
        "{text}"
    );

    // Exactly the two admitted calls reached VendorCorp.
    assert_eq!(executed_for_buyer(&stack).await, before + 2);
    // What VendorCorp received: the hub's token, never BuyerCorp's (the
    // peer logs the failed attempts of a wrong token; none arrived).
    let peer_log =
        std::fs::read_to_string(stack.dir.path().join("vendorcorp.log")).unwrap_or_default();
    assert!(
        !peer_log.contains(&token),
        "BuyerCorp's token reached VendorCorp"
    );

    // By its CA instead of a pin: a reload, no restart.
    let ca = certs.join("buyercorp-ca.pem").display().to_string();
    register(&mut stack, json!({"ca": ca}), false).await;
    let (status, body) = query(&own, &tls, &token).await;
    assert_eq!(status, 200, "BuyerCorp's CA issued its certificate: {body}");
    let (status, body) = query(
        &client(&certs, Some((&strangers, "buyercorp"))),
        &tls,
        &token,
    )
    .await;
    assert_eq!(status, 401, "a certificate of another CA: {body}");

    // Asked of every member: Helpdesk registered nothing.
    register(&mut stack, json!({"ca": ca}), true).await;
    let resp = reqwest::Client::new()
        .post(format!(
            "{}/gateway/v1/helpdesk/ticket.classify",
            stack.hub_url()
        ))
        .bearer_auth(stack.token("buyercorp"))
        .header("x-caller-system", "buyercorp")
        .json(&json!({"text": "the printer is on fire"}))
        .send()
        .await
        .expect("answers");
    assert_eq!(resp.status().as_u16(), 401);
    let resp = own
        .post(format!("{tls}/gateway/v1/buyercorp/budget.consult"))
        .bearer_auth(stack.token("helpdesk"))
        .header("x-caller-system", "helpdesk")
        .json(&json!({"question": "how much is left?"}))
        .send()
        .await
        .expect("answers");
    let body: Value = resp.json().await.expect("JSON");
    assert_eq!(
        refusal(&body),
        (
            "AUTH_REJECTED".to_string(),
            "mutual TLS is required and no client certificate is registered for helpdesk"
                .to_string()
        ),
        "{body}"
    );
}
