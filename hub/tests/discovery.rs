//! The hub's door for clients that hold nothing but a URL (DESIGN.md §2,
//! "A2A surface"): public cards without a credential, the extended card
//! with one, what a hidden topology reveals (A2A v1.0 §3.3.2), the
//! catalog, card caching, machine paths that answer JSON whatever is
//! asked of them, and JSON sent as a file part read as data.

mod common;

use base64::Engine;
use common::{PeerSpec, Stack};
use serde_json::{json, Value};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// GET `path` on the hub with an optional bearer token; status, headers,
/// body as JSON (panics on a body that is not JSON, unless 304).
async fn get(
    stack: &Stack,
    path: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut req = client()
        .get(format!("{}{path}", stack.hub_url()))
        .header("a2a-version", "1.0");
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("the hub answers");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("a body");
    let body = if status == 304 {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {path}: not JSON ({e}): {text}"))
    };
    (status, headers, body)
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
}

/// The string `key` of every object in the list `items`.
fn strings(items: &Value, key: &str) -> Vec<String> {
    items
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i[key].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn skill_ids(card: &Value) -> Vec<String> {
    strings(&card["skills"], "id")
}

const VENDOR_CARD: &str = "/a2a/vendorcorp/.well-known/agent-card.json";

#[tokio::test]
async fn an_anonymous_client_gets_the_public_card_and_a_member_its_extended_card() {
    let mut stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let hub = stack.hub_url();

    // No credential: the public card, with the interfaces and the scheme,
    // no skills, and the promise of an extended card.
    let (status, headers, public) = get(&stack, VENDOR_CARD, None, &[]).await;
    assert_eq!(status, 200, "{public}");
    assert_eq!(public["name"], "VendorCorp", "{public}");
    assert_eq!(public["skills"], json!([]), "{public}");
    assert_eq!(
        public["capabilities"]["extendedAgentCard"], true,
        "{public}"
    );
    let urls = strings(&public["supportedInterfaces"], "url");
    assert!(
        urls.contains(&format!("{hub}/a2a/vendorcorp"))
            && urls.contains(&format!("{hub}/a2a/vendorcorp/rest")),
        "{public}"
    );
    assert!(public["securitySchemes"]["bearer"].is_object(), "{public}");
    assert_eq!(header(&headers, "cache-control"), "public, max-age=60");
    assert_eq!(header(&headers, "access-control-allow-origin"), "*");
    let etag = header(&headers, "etag").to_string();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    // The same card again under its tag: 304, no body.
    let (status, headers, _) = get(&stack, VENDOR_CARD, None, &[("if-none-match", &etag)]).await;
    assert_eq!(status, 304);
    assert_eq!(header(&headers, "etag"), etag);
    // A tag that is not the card's: the card.
    let (status, _, _) = get(&stack, VENDOR_CARD, None, &[("if-none-match", "\"stale\"")]).await;
    assert_eq!(status, 200);

    // A member: the extended card, with the skills a rule lets it use,
    // cached privately; at the well-known URL, on HTTP+JSON and JSON-RPC.
    let buyer = stack.token("buyercorp");
    let (status, headers, extended) = get(&stack, VENDOR_CARD, Some(&buyer), &[]).await;
    assert_eq!(status, 200, "{extended}");
    assert_eq!(
        skill_ids(&extended),
        ["orders.query", "orders.negotiate"],
        "{extended}"
    );
    assert_eq!(header(&headers, "cache-control"), "private, max-age=30");
    assert_ne!(header(&headers, "etag"), etag, "another card, another tag");
    // The interface URL itself, read with GET (a client given the bare
    // URL that takes it for the card's): the same cards.
    let (status, _, at_url) = get(&stack, "/a2a/vendorcorp", None, &[]).await;
    assert_eq!(
        (status, &at_url["name"], skill_ids(&at_url).len()),
        (200, &public["name"], 0),
        "{at_url}"
    );
    assert_eq!(
        strings(&at_url["supportedInterfaces"], "url"),
        strings(&public["supportedInterfaces"], "url")
    );
    let (status, _, at_url) = get(&stack, "/a2a/vendorcorp/", Some(&buyer), &[]).await;
    assert_eq!(
        (status, skill_ids(&at_url)),
        (200, skill_ids(&extended)),
        "{at_url}"
    );
    let (status, _, rest) = get(
        &stack,
        "/a2a/vendorcorp/rest/extendedAgentCard",
        Some(&buyer),
        &[],
    )
    .await;
    assert_eq!(
        (status, skill_ids(&rest)),
        (200, skill_ids(&extended)),
        "{rest}"
    );
    let rpc = stack
        .a2a("buyercorp", "vendorcorp")
        .method("GetExtendedAgentCard")
        .params(json!({}))
        .send()
        .await;
    assert_eq!(
        skill_ids(rpc.result()),
        skill_ids(&extended),
        "{}",
        rpc.json
    );

    // A member no rule lets use VendorCorp: the public card's skills (none);
    // its call is then refused with its reason code.
    let helpdesk = stack.token("helpdesk");
    let (status, _, none) = get(&stack, VENDOR_CARD, Some(&helpdesk), &[]).await;
    assert_eq!((status, skill_ids(&none).len()), (200, 0), "{none}");

    // A credential the hub does not know, and the extended card without
    // one: 401 with the scheme to use.
    let (status, headers, body) = get(&stack, VENDOR_CARD, Some("not-a-token"), &[]).await;
    assert_eq!(status, 401, "{body}");
    assert!(header(&headers, "www-authenticate").starts_with("Bearer"));
    let (status, _, body) = get(&stack, "/a2a/vendorcorp/rest/extendedAgentCard", None, &[]).await;
    assert_eq!(status, 401, "{body}");
    let anonymous = stack
        .a2a("buyercorp", "vendorcorp")
        .without_header("authorization")
        .method("GetExtendedAgentCard")
        .params(json!({}))
        .send()
        .await;
    assert_eq!(
        (anonymous.status, anonymous.reason()),
        (401, "AUTH_REJECTED"),
        "{}",
        anonymous.json
    );

    // An unknown provider: a JSON 404, never a page.
    let (status, _, body) = get(&stack, "/a2a/nosuch/.well-known/agent-card.json", None, &[]).await;
    assert_eq!(status, 404, "{body}");

    // The hub's own card and the catalog are public too, with tags.
    let (status, headers, own) = get(&stack, "/.well-known/agent-card.json", None, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(own["capabilities"]["extendedAgentCard"], false, "{own}");
    assert!(!header(&headers, "etag").is_empty());
    let (status, _, catalog) = get(&stack, "/.well-known/ai-catalog.json", None, &[]).await;
    assert_eq!(
        (status, &catalog["specVersion"]),
        (200, &json!("1.0")),
        "{catalog}"
    );
    let entries = strings(&catalog["entries"], "url");
    assert!(
        entries.contains(&format!("{hub}/.well-known/agent-card.json"))
            && entries.contains(&format!("{hub}{VENDOR_CARD}")),
        "{catalog}"
    );
    assert!(
        strings(&catalog["entries"], "type")
            .iter()
            .all(|t| t == "application/a2a-agent-card+json"),
        "{catalog}"
    );
    // Nothing secret in any public document.
    let all = format!("{public}{own}{catalog}");
    for token in stack.all_tokens() {
        assert!(!all.contains(&token), "a token in a public document");
    }
    // Nor where a provider or its data plane really listens.
    let internal: Vec<String> = stack.topology_mut()["systems"]
        .as_sequence()
        .into_iter()
        .flatten()
        .flat_map(|s| [&s["base_url"], &s["data_plane"]["base_url"]])
        .filter_map(|u| u.as_str().map(str::to_string))
        .collect();
    assert!(!internal.is_empty());
    for url in internal {
        assert!(!all.contains(&url), "{url} in a public document: {all}");
    }
}

#[tokio::test]
async fn hidden_cards_answer_an_unknown_and_an_unlisted_provider_alike() {
    let mut stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    stack
        .topology_mut()
        .as_mapping_mut()
        .expect("a mapping")
        .entry("hub".into())
        .or_insert_with(|| serde_yaml_ng::Mapping::new().into())
        .as_mapping_mut()
        .expect("hub settings")
        .insert("public_cards".into(), "hidden".into());
    stack.write_topology();
    // The hub re-reads the file on change.
    let mut hidden = (0, Value::Null);
    for _ in 0..100 {
        let (status, _, body) = get(&stack, VENDOR_CARD, None, &[]).await;
        hidden = (status, body);
        if status == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (status, vendor) = hidden;
    assert_eq!(status, 404, "{vendor}");
    let (status, _, unknown) =
        get(&stack, "/a2a/nosuch/.well-known/agent-card.json", None, &[]).await;
    assert_eq!(status, 404);
    // Identical but for the name the client itself sent.
    let shape = |v: &Value, name: &str| {
        let mut v = v.clone();
        v["error"]["message"] = json!(v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .replace(name, "P"));
        if let Some(details) = v["error"]["details"].as_array_mut() {
            for d in details {
                d["metadata"] = Value::Null;
            }
        }
        v
    };
    assert_eq!(shape(&vendor, "vendorcorp"), shape(&unknown, "nosuch"));
    // Asked at the interface URL itself, the same: nothing tells them apart.
    let (status, _, vendor_at_url) = get(&stack, "/a2a/vendorcorp", None, &[]).await;
    let (unknown_status, _, unknown_at_url) = get(&stack, "/a2a/nosuch", None, &[]).await;
    assert_eq!((status, unknown_status), (404, 404), "{vendor_at_url}");
    assert_eq!(
        shape(&vendor_at_url, "vendorcorp"),
        shape(&unknown_at_url, "nosuch")
    );
    // A member no rule lets use it learns no more than a stranger.
    let helpdesk = stack.token("helpdesk");
    let (status, _, member) = get(&stack, VENDOR_CARD, Some(&helpdesk), &[]).await;
    assert_eq!(status, 404);
    assert_eq!(shape(&member, "vendorcorp"), shape(&unknown, "nosuch"));
    // A member that may use it gets its extended card as before.
    let buyer = stack.token("buyercorp");
    let (status, _, extended) = get(&stack, VENDOR_CARD, Some(&buyer), &[]).await;
    assert_eq!(status, 200, "{extended}");
    assert!(
        skill_ids(&extended).contains(&"orders.query".to_string()),
        "{extended}"
    );
    // The catalog lists the hub alone.
    let (_, _, catalog) = get(&stack, "/.well-known/ai-catalog.json", None, &[]).await;
    assert_eq!(
        catalog["entries"].as_array().map(Vec::len),
        Some(1),
        "{catalog}"
    );
}

#[tokio::test]
async fn machine_paths_answer_json_never_the_login_page() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let hub = stack.hub_url();
    let buyer = stack.token("buyercorp");
    let http = client();
    let methods = [
        reqwest::Method::GET,
        reqwest::Method::POST,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
        reqwest::Method::PATCH,
    ];
    // Every machine prefix: an unknown path under it, by every method,
    // with and without a credential and a trailing slash.
    for prefix in hub::net::machine::PREFIXES {
        for path in [
            format!("{prefix}/no/such/thing"),
            format!("{prefix}/no/such/thing/"),
            format!("{prefix}/.well-known/agent-card.json/x"),
        ] {
            for method in &methods {
                for token in [None, Some(buyer.as_str())] {
                    let mut req = http.request(method.clone(), format!("{hub}{path}"));
                    if let Some(t) = token {
                        req = req.bearer_auth(t);
                    }
                    let resp = req.send().await.expect("the hub answers");
                    let status = resp.status().as_u16();
                    let ct = header(resp.headers(), "content-type").to_string();
                    let body = resp.text().await.unwrap_or_default();
                    assert!(
                        (400..500).contains(&status) && ct.contains("json"),
                        "{method} {path}: {status} {ct} {body}"
                    );
                    assert!(
                        !body.contains("<html") && !body.contains("<!DOCTYPE"),
                        "{body}"
                    );
                    let v: Value = serde_json::from_str(&body)
                        .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {body}"));
                    assert!(v["error"].is_object(), "{method} {path}: {v}");
                }
            }
        }
    }
    // Known routes asked with a method they do not take: JSON 405, or the
    // binding's own JSON error.
    for (method, path) in [
        (reqwest::Method::PATCH, "/a2a/vendorcorp"),
        (reqwest::Method::PUT, "/a2a/vendorcorp"),
        (reqwest::Method::DELETE, "/.well-known/agent-card.json"),
        (reqwest::Method::POST, VENDOR_CARD),
        (reqwest::Method::POST, "/.well-known/ai-catalog.json"),
        (reqwest::Method::GET, "/gateway/v1/vendorcorp/orders.query"),
        (reqwest::Method::POST, "/metrics"),
        (reqwest::Method::PUT, "/mcp/vendorcorp"),
        (reqwest::Method::GET, "/mcp/vendorcorp"),
    ] {
        let resp = http
            .request(method.clone(), format!("{hub}{path}"))
            .bearer_auth(&buyer)
            .send()
            .await
            .expect("the hub answers");
        let status = resp.status().as_u16();
        let ct = header(resp.headers(), "content-type").to_string();
        let body = resp.text().await.unwrap_or_default();
        assert!(
            (400..500).contains(&status) && ct.contains("json"),
            "{method} {path}: {status} {ct} {body}"
        );
        if !path.starts_with("/mcp") {
            assert_eq!(status, 405, "{method} {path}: {body}");
        }
    }
    // Wrong content types on the bindings: JSON errors.
    for path in [
        "/a2a/vendorcorp",
        "/a2a/vendorcorp/rest/message:send",
        "/mcp/vendorcorp",
    ] {
        let resp = http
            .post(format!("{hub}{path}"))
            .bearer_auth(&buyer)
            .header("content-type", "text/plain")
            .body("hello")
            .send()
            .await
            .expect("the hub answers");
        let status = resp.status().as_u16();
        let ct = header(resp.headers(), "content-type").to_string();
        assert!(
            (200..500).contains(&status) && ct.contains("json"),
            "{path}: {status} {ct}"
        );
    }
    // `.well-known/agent-card.json` resolved against a provider URL without
    // its trailing slash: a JSON 404 that says where the card is.
    let (status, _, body) = get(&stack, "/a2a/.well-known/agent-card.json", None, &[]).await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("/a2a/{provider}/.well-known/agent-card.json")),
        "{body}"
    );
    // A trailing slash reaches the same interface: the card, and a call.
    let (status, _, card) = get(&stack, &format!("{VENDOR_CARD}/"), None, &[]).await;
    assert_eq!((status, &card["name"]), (200, &json!("VendorCorp")));
    let mut call = stack.a2a("buyercorp", "vendorcorp").data(
        "orders.query",
        json!({"aggregate": {"op": "count"}, "group_by": "region"}),
    );
    call.url.push('/');
    let answer = call.send().await;
    assert!(
        answer.result()["message"].is_object() || answer.result()["task"].is_object(),
        "{}",
        answer.json
    );
}

/// A message whose only part is `part`, to VendorCorp.
async fn send_part(stack: &Stack, part: Value) -> common::a2a::A2aAnswer {
    stack
        .a2a("buyercorp", "vendorcorp")
        .params(json!({"message": {"messageId": common::a2a::unique(), "role": "ROLE_USER", "parts": [part]}}))
        .send()
        .await
}

#[tokio::test]
async fn a_part_that_declares_json_is_read_as_data() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let query = json!({"aggregate": {"op": "count"}, "group_by": "region"});
    let b64 = base64::engine::general_purpose::STANDARD.encode(query.to_string());
    // Raw bytes declared JSON (what Microsoft Agent Framework sends), a
    // structured-syntax JSON type, and text declared JSON: all data.
    for part in [
        json!({"raw": b64, "mediaType": "application/json"}),
        json!({"raw": b64, "mediaType": "application/vnd.query+json; charset=utf-8"}),
        json!({"text": query.to_string(), "mediaType": "application/json"}),
    ] {
        let a = send_part(&stack, part.clone()).await;
        let groups = &a.result()["message"]["parts"][0]["data"]["groups"];
        assert!(
            groups.as_array().is_some_and(|g| !g.is_empty()),
            "{part}: {}",
            a.json
        );
    }
    // Declared JSON, not JSON: invalid params naming the part.
    let bad = base64::engine::general_purpose::STANDARD.encode("{not json");
    let a = send_part(&stack, json!({"raw": bad, "mediaType": "application/json"})).await;
    assert_eq!(a.code(), -32602, "{}", a.json);
    assert!(
        a.message().contains("part 0") && a.message().contains("not JSON"),
        "{}",
        a.json
    );
    // Another media type: content type not supported, as before.
    let pdf = base64::engine::general_purpose::STANDARD.encode("%PDF-1.7");
    let a = send_part(&stack, json!({"raw": pdf, "mediaType": "application/pdf"})).await;
    assert_eq!(a.code(), -32005, "{}", a.json);
    // Through the v0.3 bridge: a file part with JSON bytes.
    let v03 = stack
        .a2a("buyercorp", "vendorcorp")
        .without_header("a2a-version")
        .method("message/send")
        .params(json!({"message": {"kind": "message", "messageId": common::a2a::unique(), "role": "user",
            "parts": [{"kind": "file", "file": {"bytes": b64, "mimeType": "application/json"}}]}}))
        .send()
        .await;
    assert!(
        v03.result()["parts"][0]["data"]["groups"].is_array(),
        "{}",
        v03.json
    );
}

/// A client that resolves every name below to the hub's loopback address
/// (as the system resolver does for `.localhost` names with Debian's
/// `libnss-myhostname`), so the request carries the name as its `Host`.
fn named_client(stack: &Stack, names: &[&str]) -> reqwest::Client {
    let at: std::net::SocketAddr = ([127, 0, 0, 1], stack.hub_port).into();
    names
        .iter()
        .fold(reqwest::Client::builder(), |b, name| b.resolve(name, at))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

#[tokio::test]
async fn a_provider_answers_at_the_root_of_its_own_host() {
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let port = stack.hub_port;
    let own = format!("http://vendorcorp.localhost:{port}");
    let http = named_client(
        &stack,
        &[
            "vendorcorp.localhost",
            "nobody.localhost",
            "vendorcorp.evil.example",
        ],
    );

    // The public card at RFC 8615's place on the provider's own host,
    // naming that host as its interfaces; its signature names the keys at
    // the hub's own address, which the provider's host serves too.
    let resp = http
        .get(format!("{own}/.well-known/agent-card.json"))
        .header("a2a-version", "1.0")
        .send()
        .await
        .expect("the hub answers");
    assert_eq!(resp.status().as_u16(), 200);
    let card: Value = resp.json().await.expect("a card");
    let grpc_target = own.trim_start_matches("http://").to_string();
    assert_eq!(
        strings(&card["supportedInterfaces"], "url"),
        [own.clone(), format!("{own}/rest"), grpc_target, own.clone()],
        "{card}"
    );
    assert_eq!(card["supportedInterfaces"][2]["tenant"], "vendorcorp");
    assert!(skill_ids(&card).is_empty(), "a public card lists no skills");
    let protected = card["signatures"][0]["protected"].as_str().expect("signed");
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(protected)
        .expect("base64url");
    let header: Value = serde_json::from_slice(&header).expect("a JWS header");
    assert_eq!(
        header["jku"],
        json!(format!("{}/.well-known/jwks.json", stack.hub_url()))
    );
    let jwks = http
        .get(format!("{own}/.well-known/jwks.json"))
        .send()
        .await
        .expect("the hub answers");
    assert_eq!(jwks.status().as_u16(), 200);
    let jwks: Value = jwks.json().await.expect("JSON");
    assert!(jwks["keys"][0]["kid"].is_string(), "{jwks}");

    // The card's JSON-RPC interface takes a call: granted for BuyerCorp
    // under the same rule as on the provider's path, refused without a
    // credential.
    let call = |token: Option<String>| {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": common::a2a::send_message_params(
                "orders.query", json!({"aggregate": {"op": "count"}})),
        });
        let req = http
            .post(own.clone())
            .header("a2a-version", "1.0")
            .json(&body);
        let req = match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        };
        async move {
            let resp = req.send().await.expect("the hub answers");
            (
                resp.status().as_u16(),
                resp.json::<Value>().await.expect("JSON"),
            )
        }
    };
    let (status, granted) = call(Some(stack.token("buyercorp"))).await;
    assert_eq!(status, 200, "{granted}");
    assert!(granted.get("error").is_none(), "{granted}");
    assert!(granted["result"].is_object(), "{granted}");
    let (status, refused) = call(None).await;
    assert_eq!(status, 401, "{refused}");
    // The extended card on the same host names the same interfaces.
    let resp = http
        .get(format!("{own}/rest/extendedAgentCard"))
        .bearer_auth(stack.token("buyercorp"))
        .header("a2a-version", "1.0")
        .send()
        .await
        .expect("the hub answers");
    let extended: Value = resp.json().await.expect("a card");
    assert_eq!(strings(&extended["supportedInterfaces"], "url")[0], own);
    assert!(skill_ids(&extended).contains(&"orders.query".to_string()));

    // An unknown provider's host: the 404 of an unknown provider. The
    // canvas is not on a provider's host: its root is the provider.
    let (status, body) = {
        let resp = http
            .get(format!(
                "http://nobody.localhost:{port}/.well-known/agent-card.json"
            ))
            .send()
            .await
            .expect("the hub answers");
        (
            resp.status().as_u16(),
            resp.json::<Value>().await.expect("JSON"),
        )
    };
    assert_eq!(status, 404, "{body}");
    let login = http
        .get(format!("{own}/login"))
        .send()
        .await
        .expect("the hub answers");
    assert_eq!(login.status().as_u16(), 404);
    assert!(login
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap_or_default().contains("json")));

    // A name the hub was not configured with is not a provider's host,
    // whatever its first label: the hub's own card, naming the hub's own
    // address, never the forged name.
    let forged = http
        .get(format!(
            "http://vendorcorp.evil.example:{port}/.well-known/agent-card.json"
        ))
        .send()
        .await
        .expect("the hub answers");
    assert_eq!(forged.status().as_u16(), 200);
    let text = forged.text().await.expect("a body");
    assert!(!text.contains("evil.example"), "{text}");
    let hub_card: Value = serde_json::from_str(&text).expect("JSON");
    assert!(hub_card["skills"].as_array().is_some_and(Vec::is_empty));
    assert!(text.contains(&stack.hub_url()), "{text}");
    // The hub's card tells a client where each provider's own host is.
    assert!(
        hub_card["description"]
            .as_str()
            .is_some_and(|d| d.contains(&format!("http://{{provider}}.localhost:{port}"))),
        "{hub_card}"
    );
}
