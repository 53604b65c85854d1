//! The egress policy (`hub/src/egress/`) against real processes: the
//! hub binary, reference peers, and servers this test runs — members that
//! redirect, a DNS server that rebinds, identity providers that never stop
//! talking or never answer. Each attack is shown refused, and the place it
//! aimed at is shown untouched: a listener on `127.0.0.2` (loopback, but
//! not in the default `127.0.0.1/32` of any `WS_*_NETWORKS`) that counts
//! every connection it accepts.
//!
//! - a member answering `/health`, its card, its A2A endpoint or its data
//!   plane with a redirect (into the hub's host, to a cloud's metadata
//!   address) is degraded saying so, and nothing follows it;
//! - a member's name that resolves to `127.0.0.1` and then to `127.0.0.2`
//!   (DNS rebinding) is served while the answer is allowed and refused on
//!   every new connection after: gateway calls, probes, data plane calls;
//!   a name rebound to the hub's own listening socket is refused too;
//! - a data plane, an issuer or an issuer's `jwks_uri` on `127.0.0.2` is
//!   never fetched, and the refusal is on the board or in the hub's log;
//! - an issuer serving an endless JWKS is cut at the cap; a burst of
//!   forged tokens costs it at most the documented fetches; an issuer that
//!   never answers holds up no other issuer's tokens.

mod common;

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine;
use common::dns::Dns;
use common::listener::{Listener, Reply};
use common::{PeerSpec, Stack, UiClient};
use serde_json::{json, Value};

const COUNT_BY_REGION: &str = r#"{"aggregate":{"op":"count"},"group_by":"region"}"#;
/// The reference peer's data plane serves this datasource.
const ORDERS_DB: &str = "vendorcorp/datasource/orders-db";

fn yaml(v: Value) -> serde_yaml_ng::Value {
    serde_yaml_ng::to_value(v).expect("YAML")
}

/// The canvas's node `id`, as `/api/topology` shows it now.
async fn node(ui: &UiClient, id: &str) -> Value {
    let view = ui.get_json("/api/topology").await;
    view["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["id"] == id).cloned())
        .unwrap_or(Value::Null)
}

/// Waits (15 s at most) until node `id` is degraded with a detail
/// containing `words`; answers the node.
async fn degraded_with(stack: &Stack, ui: &UiClient, id: &str, words: &str) -> Value {
    wait_node(stack, ui, id, &format!("degraded with `{words}`"), |n| {
        n["status"] == "degraded" && n["detail"].as_str().is_some_and(|d| d.contains(words))
    })
    .await
}

/// Waits (15 s at most) until node `id` is healthy.
async fn healthy(stack: &Stack, ui: &UiClient, id: &str) {
    wait_node(stack, ui, id, "healthy", |n| n["status"] == "healthy").await;
}

/// Waits (15 s at most) until node `id` is as `wanted` says (`what`, for
/// the failure); answers the node.
async fn wait_node(
    stack: &Stack,
    ui: &UiClient,
    id: &str,
    what: &str,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let n = node(ui, id).await;
        if wanted(&n) {
            return n;
        }
        assert!(
            Instant::now() < deadline,
            "{id} never {what}: {n}\n{}",
            stack.hub_log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// VendorCorp's orders counted by region, as `caller` (its static token
/// unless `token`).
async fn query(stack: &Stack, caller: &str, token: Option<&str>) -> common::Answer {
    let mut call = stack
        .call(caller, "vendorcorp", "orders.query")
        .body(serde_json::from_str(COUNT_BY_REGION).expect("json"));
    if let Some(token) = token {
        call = call.header("authorization", &format!("Bearer {token}"));
    }
    call.send().await
}

/// Helpdesk's `ticket.classify`, as BuyerCorp.
async fn classify(stack: &Stack) -> common::Answer {
    stack
        .call("buyercorp", "helpdesk", "ticket.classify")
        .body(json!({"text": "printer on fire"}))
        .send()
        .await
}

/// The discovery document of an issuer at `origin`, its JWKS under it.
fn discovery(origin: &str) -> Value {
    json!({"issuer": origin, "jwks_uri": format!("{origin}/jwks")})
}

/// A listener on 127.0.0.2 (any port) that must never see a connection.
async fn protected() -> Listener {
    Listener::bind("127.0.0.2:0", |_| Reply::Json(json!({"keys": []}))).await
}

/// One `tools/call` of VendorCorp's data plane through the hub's MCP door.
async fn mcp_call(stack: &Stack, caller: &str) -> Value {
    let count = json!({"aggregate": {"op": "count"}});
    stack.mcp_query(caller, count).await.body
}

/// A peer's `/health` answer, for a member server this test runs.
fn health_of(system: &str) -> Value {
    json!({"service": "wall-street-peer", "system": system})
}

#[tokio::test]
async fn a_redirect_is_never_followed_anywhere() {
    let mut stack = Stack::start_without_contracts(vec![]).await;
    let ui = stack.ui().await;
    let inside = protected().await;
    let into_the_hub = format!("http://127.0.0.2:{}/x", inside.port());

    // Helpdesk's /health redirects into the hub's host.
    let to = into_the_hub.clone();
    let helpdesk = Listener::bind("127.0.0.1:0", move |_| Reply::Redirect {
        status: 302,
        location: to.clone(),
    })
    .await;
    // VendorCorp answers /health and its card, redirects its A2A calls;
    // its data plane redirects every MCP request.
    let to = into_the_hub.clone();
    let vendorcorp = Listener::bind("127.0.0.1:0", move |r| match r.path.as_str() {
        "/health" => Reply::Json(health_of("vendorcorp")),
        "/.well-known/agent-card.json" => Reply::Json(json!({"name": "VendorCorp"})),
        _ => Reply::Redirect {
            status: 307,
            location: to.clone(),
        },
    })
    .await;
    let to = into_the_hub.clone();
    let plane = Listener::bind("127.0.0.1:0", move |_| Reply::Redirect {
        status: 307,
        location: to.clone(),
    })
    .await;
    stack
        .reload_topology(|s| {
            s.system_mut("helpdesk")["base_url"] = yaml(json!(helpdesk.url()));
            let v = s.system_mut("vendorcorp");
            v["base_url"] = yaml(json!(vendorcorp.url()));
            v["data_plane"]["base_url"] = yaml(json!(plane.url()));
        })
        .await;

    let n = degraded_with(&stack, &ui, "helpdesk", "HTTP 302: a redirect").await;
    assert_eq!(n["reason"], "PEER_ERROR", "{n}");
    assert!(
        n["detail"]
            .as_str()
            .is_some_and(|d| d.contains("egress policy does not follow")),
        "{n}"
    );
    let n = degraded_with(&stack, &ui, ORDERS_DB, "did not initialise").await;
    assert_eq!(n["reason"], "PEER_UNREACHABLE", "{n}");
    let call = query(&stack, "buyercorp", None).await;
    assert_eq!(call.json["status"], "not_connected", "{}", call.json);
    let mcp = mcp_call(&stack, "buyercorp").await;
    assert!(mcp.get("result").is_none(), "{mcp}");
    assert!(helpdesk.count("/health") > 0 && plane.count("/mcp") > 0);
    assert!(vendorcorp.count("/a2a") > 0, "{:?}", vendorcorp.requests());
    // Probes go on; still nothing reaches the hub's host.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(inside.connections(), 0, "a redirect was followed");

    // BuyerCorp's card sends the prober to a cloud's metadata address:
    // not followed either (no connection is attempted; the refusal above
    // shows redirects are not followed at all).
    let buyercorp = Listener::bind("127.0.0.1:0", move |r| match r.path.as_str() {
        "/health" => Reply::Json(health_of("buyercorp")),
        _ => Reply::Redirect {
            status: 307,
            location: "http://169.254.169.254/latest/meta-data/".into(),
        },
    })
    .await;
    stack
        .reload_topology(|s| s.system_mut("buyercorp")["base_url"] = yaml(json!(buyercorp.url())))
        .await;
    let n = degraded_with(&stack, &ui, "buyercorp", "agent card: HTTP 307: a redirect").await;
    assert_eq!(n["reason"], "PEER_ERROR", "{n}");
    assert!(buyercorp.count("/.well-known/agent-card.json") > 0);
    assert_eq!(inside.connections(), 0);
}

#[tokio::test]
async fn a_name_rebound_to_a_refused_address_is_refused_on_every_new_connection() {
    let dns = Dns::start("member.test", Ipv4Addr::LOCALHOST).await;
    let dns_addr = dns.addr.to_string();
    let mut stack = Stack::start_with_env(
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(PeerSpec::stock)
            .to_vec(),
        &[("WS_EGRESS_DNS", dns_addr.as_str())],
    )
    .await;
    let ui = stack.ui().await;
    let (agent_port, plane_port) = (
        stack.peer_ports["vendorcorp"],
        stack.mcp_ports["vendorcorp"],
    );
    // Where the rebinding points: the same ports on 127.0.0.2.
    let agent_trap = Listener::bind(&format!("127.0.0.2:{agent_port}"), |_| {
        Reply::Json(health_of("vendorcorp"))
    })
    .await;
    let plane_trap = Listener::bind(&format!("127.0.0.2:{plane_port}"), |_| {
        Reply::Json(json!({}))
    })
    .await;
    stack
        .reload_topology(|s| {
            let v = s.system_mut("vendorcorp");
            v["base_url"] = yaml(json!(format!("http://member.test:{agent_port}")));
            v["data_plane"]["base_url"] = yaml(json!(format!("http://member.test:{plane_port}")));
        })
        .await;

    // While the name is 127.0.0.1, everything works through it.
    let deadline = Instant::now() + Duration::from_secs(15);
    let call = loop {
        let call = query(&stack, "buyercorp", None).await;
        if call.json["status"] == "connected" || Instant::now() > deadline {
            break call;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(call.json["status"], "connected", "{}", call.json);
    let mcp = mcp_call(&stack, "buyercorp").await;
    assert_eq!(mcp["result"]["isError"], false, "{mcp}");
    healthy(&stack, &ui, "vendorcorp").await;
    healthy(&stack, &ui, ORDERS_DB).await;
    assert!(dns.queries() > 0, "the hub asked the test's DNS server");

    // The name now points at 127.0.0.2.
    dns.answer(Ipv4Addr::new(127, 0, 0, 2));
    let refused = "vendorcorp is refused by the hub's egress policy: its address is a loopback \
                   address not listed in WS_MEMBER_NETWORKS";
    let n = degraded_with(&stack, &ui, "vendorcorp", refused).await;
    assert_eq!(n["reason"], "PEER_UNREACHABLE", "{n}");
    let n = degraded_with(&stack, &ui, ORDERS_DB, "refused by the hub's egress policy").await;
    assert_eq!(n["reason"], "PEER_UNREACHABLE", "{n}");
    // The connections the gateway keeps were checked at 127.0.0.1 and end
    // with the peer's restart; every new one resolves and is checked again.
    stack.start_peer("vendorcorp").await;
    let call = query(&stack, "buyercorp", None).await;
    assert_eq!(call.reason(), "PEER_UNREACHABLE", "{}", call.json);
    assert_eq!(call.json["detail"], refused, "{}", call.json);
    let mcp = mcp_call(&stack, "buyercorp").await;
    assert_eq!(mcp["error"]["data"]["reason"], "PEER_UNREACHABLE", "{mcp}");
    assert!(
        mcp.to_string()
            .contains("refused by the hub's egress policy"),
        "{mcp}"
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        agent_trap.connections(),
        0,
        "the gateway or the prober rebound"
    );
    assert_eq!(plane_trap.connections(), 0, "a data plane client rebound");

    // A name that resolves to the hub's own listening socket.
    dns.answer(Ipv4Addr::LOCALHOST);
    let hub_port = stack.hub_port;
    stack
        .reload_topology(|s| {
            s.system_mut("helpdesk")["base_url"] =
                yaml(json!(format!("http://member.test:{hub_port}")));
        })
        .await;
    let own = "helpdesk is refused by the hub's egress policy: its address is the hub's own \
               listening address";
    let n = degraded_with(&stack, &ui, "helpdesk", own).await;
    assert_eq!(n["reason"], "PEER_UNREACHABLE", "{n}");
    let call = classify(&stack).await;
    assert_eq!(call.reason(), "PEER_UNREACHABLE", "{}", call.json);
    assert_eq!(call.json["detail"], own, "{}", call.json);
}

#[tokio::test]
async fn a_data_plane_an_issuer_and_a_jwks_uri_in_a_refused_place_are_never_fetched() {
    let mut stack =
        Stack::start_without_contracts(["vendorcorp", "buyercorp"].map(PeerSpec::stock).to_vec())
            .await;
    let ui = stack.ui().await;
    let inside = protected().await;
    let refused_url = inside.url();
    // An issuer on 127.0.0.1 whose discovery names a JWKS on 127.0.0.2.
    let jwks = format!("{refused_url}/jwks");
    let issuer = Listener::bind("127.0.0.1:0", move |r| {
        Reply::Json(json!({"issuer": r.origin, "jwks_uri": jwks}))
    })
    .await;
    stack
        .reload_topology(|s| {
            let v = s.system_mut("vendorcorp");
            v["data_plane"]["base_url"] = yaml(json!(refused_url));
            v["oidc"] = yaml(json!({"issuer": issuer.url(), "client_ids": ["vendor-app"]}));
            s.system_mut("buyercorp")["oidc"] =
                yaml(json!({"issuer": refused_url, "client_ids": ["buyer-app"]}));
            s.system_mut("helpdesk")["base_url"] = yaml(json!(refused_url));
        })
        .await;

    // The board says why, without the address.
    let n = degraded_with(
        &stack,
        &ui,
        ORDERS_DB,
        "vendorcorp's MCP data plane is refused by the hub's egress policy: its address is a \
         loopback address not listed in WS_MEMBER_NETWORKS",
    )
    .await;
    assert_eq!(n["reason"], "PEER_UNREACHABLE", "{n}");
    degraded_with(
        &stack,
        &ui,
        "helpdesk",
        "refused by the hub's egress policy",
    )
    .await;
    let call = classify(&stack).await;
    assert_eq!(call.reason(), "PEER_UNREACHABLE", "{}", call.json);

    // Tokens naming each issuer make the hub read its keys: refused, logged.
    for (caller, iss) in [
        ("buyercorp", refused_url.clone()),
        ("vendorcorp", issuer.url()),
    ] {
        let answer = query(&stack, caller, Some(&forged(&iss, "k-1"))).await;
        assert_eq!(answer.reason(), "AUTH_REJECTED", "{}", answer.json);
    }
    let line = |needle: &str| {
        stack
            .hub_log()
            .lines()
            .any(|l| l.contains("could not read the issuer's keys") && l.contains(needle))
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(line("fetching discovery document: 127.0.0.2 is a loopback address")
        && line("fetching JWKS: 127.0.0.2 is a loopback address"))
    {
        assert!(
            Instant::now() < deadline,
            "no refusal logged:\n{}",
            stack.hub_log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(line("WS_IDENTITY_NETWORKS"), "{}", stack.hub_log());
    assert_eq!(issuer.count("/.well-known/openid-configuration"), 1);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(inside.connections(), 0, "something reached 127.0.0.2");
}

/// A JWT-shaped token naming `iss` and `kid`, signed by nobody: enough
/// to make the hub read the issuer's keys (it peeks before it verifies).
fn forged(iss: &str, kid: &str) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let now = unix_now();
    let header = json!({"alg": "RS256", "typ": "JWT", "kid": kid});
    let claims = json!({"iss": iss, "sub": "x", "aud": "urn:egress-test", "exp": now + 300,
                        "client_id": "x"});
    format!(
        "{}.{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string()),
        b64.encode([7u8; 256])
    )
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// An issuer this test runs: an Ed25519 key, its discovery document and
/// JWKS served by a [`Listener`], tokens signed here.
struct GoodIssuer {
    server: Listener,
    key: jsonwebtoken::EncodingKey,
}

impl GoodIssuer {
    const KID: &'static str = "good-1";

    async fn start() -> GoodIssuer {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).expect("an Ed25519 key");
        let key = jsonwebtoken::EncodingKey::from_ed_der(&pair.serialize_der());
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(pair.public_key_raw());
        let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": x,
                                    "kid": Self::KID, "alg": "EdDSA", "use": "sig"}]});
        let server = Listener::bind("127.0.0.1:0", move |r| {
            if r.path.starts_with("/jwks") {
                Reply::Json(jwks.clone())
            } else {
                Reply::Json(discovery(&r.origin))
            }
        })
        .await;
        GoodIssuer { server, key }
    }

    fn token(&self, client_id: &str) -> String {
        let now = unix_now();
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some(Self::KID.into());
        let claims = json!({"iss": self.server.url(), "sub": client_id, "aud": "urn:egress-test",
                            "iat": now, "exp": now + 300, "client_id": client_id});
        jsonwebtoken::encode(&header, &claims, &self.key).expect("signed")
    }
}

/// What the hostile issuer does with each request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hostility {
    /// A JWKS that never ends.
    EndlessKeys,
    /// An empty JWKS, promptly.
    EmptyKeys,
    /// No answer at all.
    Silent,
}

#[tokio::test]
async fn a_hostile_issuer_is_read_capped_seldom_and_alone() {
    let mut stack = Stack::demo().await;
    let good = GoodIssuer::start().await;
    let mode = Arc::new(Mutex::new(Hostility::EndlessKeys));
    let now = mode.clone();
    let hostile = Listener::bind("127.0.0.1:0", move |r| {
        match (*now.lock().expect("mode"), r.path.starts_with("/jwks")) {
            (Hostility::Silent, _) => Reply::Hang,
            (Hostility::EndlessKeys, true) => Reply::Endless,
            (Hostility::EmptyKeys, true) => Reply::Json(json!({"keys": []})),
            (_, false) => Reply::Json(discovery(&r.origin)),
        }
    })
    .await;
    let (good_url, hostile_url) = (good.server.url(), hostile.url());
    stack
        .reload_topology(|s| {
            s.system_mut("buyercorp")["oidc"] = yaml(json!({"issuer": good_url,
                "audience": ["urn:egress-test"], "client_ids": ["buyer-app"]}));
            s.system_mut("helpdesk")["oidc"] = yaml(json!({"issuer": hostile_url,
                "audience": ["urn:egress-test"], "client_ids": ["x"]}));
        })
        .await;
    let forged_call = |kid: String| {
        let call = stack.call("helpdesk", "vendorcorp", "orders.query").header(
            "authorization",
            &format!("Bearer {}", forged(&hostile.url(), &kid)),
        );
        async move { call.send().await }
    };
    let discoveries = || hostile.count("/.well-known/openid-configuration");

    // 1. An endless JWKS is cut at the cap: the hub stops reading and
    //    closes the connection long before the server's safety bound.
    let answer = forged_call("endless".into()).await;
    assert_eq!(answer.reason(), "AUTH_REJECTED", "{}", answer.json);
    let deadline = Instant::now() + Duration::from_secs(10);
    let run = loop {
        if let Some(run) = hostile.endless_runs().first().copied() {
            break run;
        }
        assert!(Instant::now() < deadline, "the endless JWKS never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    println!("the endless JWKS: {run:?}");
    assert!(run.cut, "the hub read on: {run:?}");
    // What the hub read (256 KiB) and what the sockets' buffers held.
    assert!(
        run.written < 16 * 1024 * 1024,
        "the hub read far past its 256 KiB cap: {run:?}"
    );
    assert!(run.took < Duration::from_secs(3), "{run:?}");
    assert!(
        stack.hub_log().contains("larger than 262144 bytes"),
        "{}",
        stack.hub_log()
    );

    // 2. A burst of forged tokens with made-up key ids, once the last
    //    fetch is 5 s old (so the burst may fetch): one fetch at a time
    //    per issuer, none sooner than 5 s after the last, at most 12 a
    //    minute.
    *mode.lock().expect("mode") = Hostility::EmptyKeys;
    tokio::time::sleep(Duration::from_millis(5200)).await;
    let before = discoveries();
    let started = Instant::now();
    for batch in 0..8 {
        let calls = (0..25).map(|i| forged_call(format!("made-up-{batch}-{i}-{}", unix_now())));
        for answer in futures::future::join_all(calls).await {
            assert_eq!(answer.reason(), "AUTH_REJECTED", "{}", answer.json);
        }
    }
    let took = started.elapsed();
    let fetched = discoveries() - before;
    let bound = 1 + (took.as_secs_f64() / 5.0).floor() as usize;
    println!("200 forged tokens in {took:?}: {fetched} fetches of the issuer");
    assert!(
        (1..=bound.min(12)).contains(&fetched),
        "200 forged tokens in {took:?} made {fetched} fetches (1 to {bound})"
    );

    // 3. The hostile issuer stops answering. While the hub waits on it,
    //    a token of another issuer is verified at once.
    *mode.lock().expect("mode") = Hostility::Silent;
    tokio::time::sleep(Duration::from_millis(5200)).await;
    let before = discoveries();
    let stuck = tokio::spawn(forged_call("stuck".into()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while discoveries() == before {
        assert!(
            Instant::now() < deadline,
            "the hub never asked the issuer again"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    let answer = query(&stack, "buyercorp", Some(&good.token("buyer-app"))).await;
    let took = started.elapsed();
    println!("the good issuer's first token, beside a silent issuer: {took:?}");
    assert_eq!(answer.json["status"], "connected", "{}", answer.json);
    assert!(
        took < Duration::from_secs(2),
        "the good issuer's token waited {took:?} on the silent one"
    );
    assert!(
        !stuck.is_finished(),
        "the forged call should still wait on its issuer"
    );
    let stuck = stuck.await.expect("the forged call ends");
    assert_eq!(stuck.reason(), "AUTH_REJECTED", "{}", stuck.json);
    assert!(
        stuck.elapsed <= Duration::from_secs(7),
        "the hub waits on an issuer 5 s at most: {:?}",
        stuck.elapsed
    );
}
