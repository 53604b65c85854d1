//! A member company's people log in to the canvas through the company's
//! own identity provider (a real `oidc-provider`, the same the identity
//! tests start): authorization code with PKCE, the hub a public client.
//! Each is bound to that member with the role its claim names; a claim of
//! `admin` is refused, as is an answer that does not belong to the login
//! the browser started.

mod common;

use std::collections::HashMap;

use common::oidc::Issuer;
use common::{plain_client, Stack, UiClient};
use serde_json::{json, Value};

const UI_CLIENT: &str = "wall-street-ui";

/// A browser without a script: follows every redirect itself, keeping
/// each host's cookies; the last answer's status, body, and the hub's
/// session cookie if one was set.
async fn browse(start: &str) -> (u16, String, Option<String>) {
    let client = plain_client();
    let mut jar: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut url = reqwest::Url::parse(start).expect("url");
    for _ in 0..20 {
        let host = format!(
            "{}:{}",
            url.host_str().unwrap_or_default(),
            url.port_or_known_default().unwrap_or(80)
        );
        let cookies = jar
            .get(&host)
            .map(|c| {
                c.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .unwrap_or_default();
        let resp = client
            .get(url.clone())
            .header("cookie", cookies)
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET {url}: {e}"));
        for set in resp.headers().get_all("set-cookie") {
            let set = set.to_str().unwrap_or_default();
            if let Some((name, value)) = set.split(';').next().and_then(|p| p.split_once('=')) {
                jar.entry(host.clone())
                    .or_default()
                    .insert(name.trim().to_string(), value.trim().to_string());
            }
        }
        let status = resp.status().as_u16();
        if (300..400).contains(&status) {
            let location = resp
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .expect("a redirect says where")
                .to_string();
            url = url.join(&location).expect("location");
            continue;
        }
        let body = resp.text().await.unwrap_or_default();
        let session = jar
            .values()
            .find_map(|c| c.get("ws_session").filter(|v| !v.is_empty()).cloned());
        return (status, body, session);
    }
    panic!("more than 20 redirects from {start}");
}

async fn session_of(stack: &Stack, cookie: &str) -> (UiClient, Value) {
    let client = plain_client();
    let view: Value = client
        .get(format!("{}/api/session", stack.hub_url()))
        .header("cookie", format!("ws_session={cookie}"))
        .send()
        .await
        .expect("answers")
        .json()
        .await
        .expect("a session");
    let ui = UiClient {
        base: stack.hub_url(),
        cookie: format!("ws_session={cookie}"),
        csrf: view["csrf_token"].as_str().unwrap_or_default().to_string(),
        set_cookie: String::new(),
        client,
    };
    (ui, view)
}

#[tokio::test]
async fn a_members_people_log_in_through_its_own_provider_bound_to_it() {
    let mut issuer = Issuer::start(&json!([]), "urn:wall-street:hub");
    let mut stack = Stack::demo().await;
    let yaml = |v: Value| serde_yaml_ng::to_value(v).expect("YAML");
    for system in stack.topology_mut()["systems"]
        .as_sequence_mut()
        .expect("systems")
    {
        if system["id"].as_str() == Some("buyercorp") {
            system["oidc"] = yaml(json!({
                "issuer": issuer.url,
                "client_ids": ["buyercorp-app"],
                "ui_login": { "client_id": UI_CLIENT },
            }));
        }
    }
    stack.write_topology();
    issuer.allow_logins(
        UI_CLIENT,
        &format!("{}/login/oidc/callback", stack.hub_url()),
        &json!({
            "alice": {"ws_role": "operator"},
            "bob": {},
            "mallory": {"ws_role": "admin"},
            "trudy": {"ws_role": "root"},
        }),
    );
    // The login page lists the members that offer a login.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let providers: Value = plain_client()
            .get(format!("{}/api/login/providers", stack.hub_url()))
            .send()
            .await
            .expect("answers")
            .json()
            .await
            .expect("json");
        if providers["providers"].to_string().contains("buyercorp") {
            assert_eq!(
                providers["providers"][0]["name"], "BuyerCorp",
                "{providers}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{providers}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }

    // Alice: an operator of BuyerCorp's part, nothing more.
    issuer.next_login("alice");
    let start = format!("{}/login/oidc/buyercorp?next=/inbox", stack.hub_url());
    let (status, body, session) = browse(&start).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("url=/inbox"), "moves on to next: {body}");
    let (alice, view) = session_of(&stack, &session.expect("a session")).await;
    assert_eq!(view["username"], "alice@buyercorp", "{view}");
    assert_eq!(view["role"], "operator", "{view}");
    assert_eq!(view["system"], "buyercorp", "{view}");
    let (status, _) = alice.get("/api/people").await;
    assert_eq!(status, 403);
    let (status, _) = alice.get("/api/nodes/vendorcorp/metrics").await;
    assert_eq!(status, 403);
    let (status, _) = alice.get("/api/nodes/buyercorp/metrics").await;
    assert_eq!(status, 200);

    // Bob has no role claim: a viewer.
    issuer.next_login("bob");
    let (_, _, session) = browse(&start).await;
    let (_, view) = session_of(&stack, &session.expect("a session")).await;
    assert_eq!(view["role"], "viewer", "{view}");

    // A company's provider never makes an admin, nor a role that is not one.
    for (who, says) in [("mallory", "never an admin"), ("trudy", "names no role")] {
        issuer.next_login(who);
        let (status, body, session) = browse(&start).await;
        assert_eq!(status, 401, "{body}");
        assert!(body.contains(says), "{body}");
        assert!(session.is_none(), "{who} got a session");
    }
    let admin = stack.ui().await;
    let people = admin.get_json("/api/people").await.to_string();
    assert!(
        people.contains("alice@buyercorp") && !people.contains("mallory"),
        "{people}"
    );

    // An answer for a login this browser never started: no state cookie,
    // or a state that is not its own.
    let (status, body, _) = browse(&format!(
        "{}/login/oidc/callback?code=x&state=y",
        stack.hub_url()
    ))
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("no login was started"), "{body}");
    // A member that offers no login.
    let (status, body, _) = browse(&format!("{}/login/oidc/vendorcorp", stack.hub_url())).await;
    assert_eq!(status, 404, "{body}");
}
