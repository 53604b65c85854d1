//! People and roles against the real hub: the route table is walked as
//! every person of the stack (a viewer, an operator, an approver, an
//! admin, and two member-scoped people), each answer held to what the
//! table says that person may do; a member-scoped person's view of the
//! map and its live events is cut to its system's part; an admin manages
//! people from the API and the command line, and a person's open event
//! streams close when they log out, are removed, or get another role.

mod common;

use std::time::{Duration, Instant};

use app::access::{Need, Reach, Role, Scope};
use app::routes::{self, ApiRoute, Verb};
use common::{hub_bin, Stack, UiClient, PEOPLE};
use reqwest::Method;
use serde_json::{json, Value};

async fn login(stack: &Stack, username: &str) -> UiClient {
    UiClient::login(&stack.hub_url(), username, &stack.ui_password)
        .await
        .unwrap_or_else(|status| panic!("{username} could not log in ({status})"))
}

fn method(verb: Verb) -> Method {
    match verb {
        Verb::Get => Method::GET,
        Verb::Post => Method::POST,
        Verb::Put => Method::PUT,
        Verb::Delete => Method::DELETE,
    }
}

/// An id for `route` that names `system`'s part (or nothing at all when
/// `system` is `None`): never an existing edge or entry, so an allowed
/// request changes nothing (its handler answers 404 or 422).
fn id_for(route: ApiRoute, system: Option<&str>) -> String {
    let own = system.unwrap_or("nobody");
    match route.rights().reach {
        Reach::OwnEdge => format!("{own}->nobody:nothing.here"),
        Reach::OwnNode => own.to_string(),
        _ => "nobody".to_string(),
    }
}

/// What the table says a person of `role` and `scope` gets from `route`
/// named with an id of `system`'s part.
fn allowed(route: ApiRoute, role: Role, scope: &Scope, system: Option<&str>) -> bool {
    let rights = route.rights();
    let role_ok = match rights.need {
        Need::Public => true,
        Need::Role(needed) => role.grants(needed),
    };
    let id = route
        .template()
        .contains("{id}")
        .then(|| id_for(route, system));
    role_ok && rights.reach.admits(scope, id.as_deref())
}

#[tokio::test]
async fn every_route_answers_each_person_as_the_role_table_says() {
    let stack = Stack::demo().await;
    // What an allowed request does is beside the point here: ids name
    // nothing, bodies are empty objects (a handler refuses them with 4xx
    // of its own). Logout runs last for each person.
    let routes: Vec<ApiRoute> = ApiRoute::ALL
        .iter()
        .copied()
        .filter(|r| !matches!(r, ApiRoute::Login | ApiRoute::Logout | ApiRoute::Events))
        .collect();
    let mut checked = 0;
    for &(username, role, member) in PEOPLE {
        let role = Role::parse(role).expect("a role");
        let scope = member.map_or(Scope::Exchange, |m| Scope::Member(m.into()));
        let ui = login(&stack, username).await;
        // The person's own system, and a system outside its part.
        let targets: Vec<Option<&str>> = match member {
            Some(own) => vec![Some(own), Some("helpdesk")],
            None => vec![None],
        };
        for &route in &routes {
            for &target in &targets {
                let path = route.path_with(&id_for(route, target));
                let (status, body) = ui.send(method(route.verb()), &path, &json!({})).await;
                let expected = allowed(route, role, &scope, target);
                if expected {
                    assert_ne!(status, 403, "{username} ({role}) may call {path}: {body}");
                    assert_ne!(status, 401, "{username}: {path}: {body}");
                    // Served by a route of the table, not the unknown-path
                    // fallback.
                    assert!(!body.contains("\"no route "), "{path}: {body}");
                } else {
                    assert_eq!(
                        status,
                        403,
                        "{username} ({role}, {scope:?}) must not call {} {path}: {body}",
                        route.verb().as_str()
                    );
                }
                checked += 1;
            }
        }
        let (status, _) = ui.send(Method::POST, routes::LOGOUT, &json!({})).await;
        assert_eq!(status, 204, "{username} logs out");
        let (status, _) = ui.get(routes::TOPOLOGY).await;
        assert_eq!(status, 401, "{username}'s session is over");
    }
    assert!(checked > 200, "{checked}");
    // A path outside the table is no route at all, for anybody.
    let admin = stack.ui().await;
    let (status, body) = admin.get("/api/nothing/here").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("no route"), "{body}");
    // Nobody without a session reaches a route that needs a role.
    let anonymous = common::plain_client();
    for &route in ApiRoute::ALL.iter().filter(|r| !r.is_public()) {
        let url = format!("{}{}", stack.hub_url(), route.path_with("x"));
        let status = anonymous
            .request(method(route.verb()), &url)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .expect("answers")
            .status()
            .as_u16();
        assert!(
            status == 401 || (route.verb().changes_state() && status == 403),
            "{url}: {status}"
        );
    }
}

fn ids(view: &Value, key: &str) -> Vec<String> {
    view[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key}: {view}"))
        .iter()
        .filter_map(|n| n["id"].as_str().map(str::to_string))
        .collect()
}

/// Reads an SSE response until it ends or `within` passes; whether it
/// ended, and what it carried.
async fn read_stream(mut resp: reqwest::Response, within: Duration) -> (bool, String) {
    let deadline = Instant::now() + within;
    let mut text = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (false, text);
        }
        match tokio::time::timeout(left, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(Ok(None)) | Ok(Err(_)) => return (true, text),
            Err(_) => return (false, text),
        }
    }
}

async fn events(ui: &UiClient) -> reqwest::Response {
    let resp = ui
        .request(Method::GET, routes::EVENTS)
        .send()
        .await
        .expect("the event stream opens");
    assert_eq!(resp.status(), 200);
    resp
}

#[tokio::test]
async fn a_member_scoped_person_sees_and_reaches_its_part_only() {
    let mut stack = Stack::demo().await;
    let vendor = login(&stack, "vendor-viewer").await;
    let buyer = login(&stack, "buyer-operator").await;
    let admin = stack.ui().await;

    // The map: VendorCorp, its agents and datasources, and its
    // counterparts by its rules (BuyerCorp, the hub) — nothing of Helpdesk,
    // no other member's agents, no rule VendorCorp is not part of.
    let view = vendor.get_json(routes::TOPOLOGY).await;
    let nodes = ids(&view, "nodes");
    assert!(nodes.contains(&"vendorcorp".to_string()), "{nodes:?}");
    assert!(
        nodes.iter().any(|n| n.starts_with("vendorcorp/")),
        "{nodes:?}"
    );
    assert!(!nodes.iter().any(|n| n.contains("helpdesk")), "{nodes:?}");
    assert!(
        !nodes.iter().any(|n| n.starts_with("buyercorp/")),
        "{nodes:?}"
    );
    let text = view.to_string();
    assert!(!text.contains("helpdesk"), "{text}");
    assert!(
        !text.contains("budget.consult") && !text.contains("ticket."),
        "{text}"
    );
    for rule in view["rules"].as_array().expect("rules") {
        assert_eq!(rule["provider"], "vendorcorp", "{rule}");
    }
    // The canvas's server function answers the same part.
    let resp = vendor
        .request(Method::POST, routes::TOPOLOGY_FN)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("")
        .send()
        .await
        .expect("answers");
    assert_eq!(resp.status(), 200);
    let fn_text = resp.text().await.expect("body");
    assert!(
        fn_text.contains("vendorcorp") && !fn_text.contains("helpdesk"),
        "{fn_text}"
    );
    // An exchange-wide admin sees the whole map.
    assert!(ids(&admin.get_json(routes::TOPOLOGY).await, "nodes").contains(&"helpdesk".to_string()));

    // Another system's drawer, contract, metrics and trail export: 403,
    // and the refusal names nothing of it but the id asked for.
    for path in [
        routes::node_metrics("buyercorp"),
        routes::node_audit("helpdesk", 5),
        routes::node_trail("buyercorp"),
        routes::edge_contract("buyercorp->helpdesk:ticket.classify"),
        routes::edge_metrics("hub->helpdesk:ticket.triage"),
        routes::edge_inspector("buyercorp->helpdesk:ticket.classify"),
    ] {
        let (status, body) = vendor.get(&path).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert!(
            body.contains("vendor-viewer is bound to vendorcorp"),
            "{body}"
        );
    }
    // Its own: allowed.
    let (status, body) = vendor.get(&routes::node_metrics("vendorcorp")).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = vendor
        .get(&routes::edge_contract("buyercorp->vendorcorp:orders.query"))
        .await;
    assert_eq!(status, 200, "{body}");
    // A viewer changes nothing, even of its own system.
    let (status, body) = vendor
        .send(
            Method::POST,
            &routes::edge_query("hub->vendorcorp:orders.query"),
            &json!({"op": "count", "group_by": "region"}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    // A member-scoped operator edits the rules of what its system
    // provides, never another's, and may not onboard or decide the inbox.
    let base = admin.get_json(routes::TOPOLOGY).await["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    let (status, body) = buyer
        .send(
            Method::PUT,
            routes::RULE_CONSUMERS,
            &json!({"base": base, "capability": "orders.query", "provider": "vendorcorp", "consumer": "helpdesk", "member": true}),
        )
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("touches `vendorcorp`"), "{body}");
    for (verb, path) in [
        (Method::POST, routes::SYSTEMS_DISCOVER.to_string()),
        (Method::POST, routes::inbox_approve("1")),
        (Method::POST, routes::system_credential("buyercorp")),
        (Method::GET, routes::PEOPLE.to_string()),
    ] {
        let (status, body) = buyer.send(verb, &path, &json!({})).await;
        assert_eq!(status, 403, "{path}: {body}");
    }
    let (status, body) = buyer
        .send(
            Method::POST,
            routes::EDGES,
            &json!({"consumer": "hub", "provider": "vendorcorp", "capability": "orders.query"}),
        )
        .await;
    assert_eq!(status, 403, "{body}");

    // Live events: VendorCorp's person never hears of Helpdesk; the admin
    // does. Helpdesk goes down, and a call crosses BuyerCorp → Helpdesk.
    let vendor_stream = events(&vendor).await;
    let admin_stream = events(&admin).await;
    stack.kill_peer("helpdesk");
    let _ = stack
        .call("buyercorp", "helpdesk", "ticket.classify")
        .body(json!({"title": "printer", "body": "jammed"}))
        .send()
        .await;
    let (_, admin_saw) = read_stream(admin_stream, Duration::from_secs(6)).await;
    assert!(admin_saw.contains("helpdesk"), "{admin_saw}");
    let (_, vendor_saw) = read_stream(vendor_stream, Duration::from_secs(1)).await;
    assert!(!vendor_saw.contains("helpdesk"), "{vendor_saw}");
    assert!(!vendor_saw.contains("inbox_changed"), "{vendor_saw}");
}

#[tokio::test]
async fn admins_manage_people_and_a_change_closes_the_persons_streams() {
    let stack = Stack::demo().await;
    let admin = stack.ui().await;

    // An admin adds a member-scoped operator; the password is shown once.
    let (status, body) = admin
        .send(
            Method::POST,
            routes::PEOPLE,
            &json!({"username": "dora", "role": "operator", "system": "helpdesk"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let issued: Value = serde_json::from_str(&body).expect("json");
    let password = issued["password"].as_str().expect("password").to_string();
    let (_, listing) = admin.get(routes::PEOPLE).await;
    assert!(
        listing.contains("\"dora\"") && !listing.contains(&password),
        "{listing}"
    );
    let (status, body) = admin
        .send(
            Method::POST,
            routes::PEOPLE,
            &json!({"username": "eve", "role": "admin", "system": "helpdesk"}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("an admin is exchange-wide"), "{body}");
    let (status, body) = admin
        .send(
            Method::POST,
            routes::PEOPLE,
            &json!({"username": "eve", "role": "viewer", "system": "nobody"}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    // The file's people are the file's.
    let (status, body) = admin
        .send(
            Method::PUT,
            &routes::person("a-viewer"),
            &json!({"role": "admin"}),
        )
        .await;
    assert_eq!(status, 409, "{body}");

    // Dora logs in, opens the map's live stream; her role changes: the
    // stream ends at once, and her next request has the new powers.
    let dora = UiClient::login(&stack.hub_url(), "dora", &password)
        .await
        .expect("dora logs in");
    let session: Value = dora.get_json(routes::SESSION).await;
    assert_eq!(session["role"], "operator");
    assert_eq!(session["system"], "helpdesk");
    let stream = events(&dora).await;
    let (status, body) = admin
        .send(
            Method::PUT,
            &routes::person("dora"),
            &json!({"role": "viewer", "system": "helpdesk"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (ended, _) = read_stream(stream, Duration::from_secs(5)).await;
    assert!(ended, "a role change closes the person's streams");
    let session: Value = dora.get_json(routes::SESSION).await;
    assert_eq!(session["role"], "viewer");

    // Logout ends the session's own stream.
    let stream = events(&dora).await;
    let (status, _) = dora.send(Method::POST, routes::LOGOUT, &json!({})).await;
    assert_eq!(status, 204);
    let (ended, _) = read_stream(stream, Duration::from_secs(5)).await;
    assert!(ended, "logout closes the session's streams");

    // Removal: the stream ends, the session is over.
    let dora = UiClient::login(&stack.hub_url(), "dora", &password)
        .await
        .expect("dora logs in again");
    let stream = events(&dora).await;
    let (status, body) = admin
        .send(Method::DELETE, &routes::person("dora"), &json!({}))
        .await;
    assert_eq!(status, 204, "{body}");
    let (ended, _) = read_stream(stream, Duration::from_secs(5)).await;
    assert!(ended, "removal closes the person's streams");
    let (status, _) = dora.get(routes::TOPOLOGY).await;
    assert_eq!(status, 401);

    // Every change is a line of the hub's trail naming the admin, and no
    // line holds a password.
    let trail = stack.hub_trail().await;
    let lines: Vec<_> = trail
        .recent(100)
        .await
        .expect("trail")
        .into_iter()
        .filter(|r| r.capability == "people")
        .collect();
    assert!(lines.len() >= 5, "{lines:?}");
    assert!(lines.iter().all(|l| l.detail.starts_with("operator ")));
    assert!(lines.iter().all(|l| !l.detail.contains(&password)));
    assert!(lines
        .iter()
        .any(|l| l.detail.contains("add eve as admin") && l.outcome.as_str() == "refused"));
}

#[tokio::test]
async fn people_are_managed_from_the_command_line_and_the_hub_follows() {
    let stack = Stack::demo().await;
    let hub = |args: &[&str]| {
        let out = std::process::Command::new(hub_bin())
            .arg("people")
            .arg("--topology")
            .arg(&stack.topology_path)
            .arg("--database")
            .arg(stack.hub_store.to_argument())
            .args(args)
            .output()
            .expect("hub people runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, password, err) = hub(&["add", "fay", "--role", "approver"]);
    assert!(ok, "{err}");
    assert_eq!(password.len(), 20, "{password}");
    // The running hub picks the new person up within seconds (watched on
    // the admin's people list: a login tried too early would count as a
    // failed one against fay).
    let admin = stack.ui().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !admin
        .get_json(routes::PEOPLE)
        .await
        .to_string()
        .contains("\"fay\"")
    {
        assert!(Instant::now() < deadline, "the hub never learned of fay");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let fay = UiClient::login(&stack.hub_url(), "fay", &password)
        .await
        .expect("fay logs in");
    assert_eq!(fay.get_json(routes::SESSION).await["role"], "approver");
    let (ok, listing, _) = hub(&["list"]);
    assert!(
        ok && listing.contains("fay\tapprover\t(exchange)\tadmin"),
        "{listing}"
    );
    let (ok, _, err) = hub(&["set", "fay", "--role", "root"]);
    assert!(!ok && err.contains("`root` is not a role"), "{err}");
    let (ok, _, err) = hub(&["remove", "operator"]);
    assert!(!ok && err.contains("comes from the UI users file"), "{err}");
    let (ok, _, err) = hub(&["remove", "fay"]);
    assert!(ok, "{err}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while fay.get(routes::TOPOLOGY).await.0 != 401 {
        assert!(
            Instant::now() < deadline,
            "fay's session outlived her removal"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

#[tokio::test]
async fn a_member_downloads_its_part_of_the_trail_and_verifies_it_offline() {
    let stack = Stack::start_with_env(
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(common::PeerSpec::stock)
            .to_vec(),
        &[("WS_TRAIL_CHECKPOINT_SECONDS", "0.5")],
    )
    .await;
    let answer = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .body(json!({"aggregate": {"op": "count"}, "group_by": "region"}))
        .send()
        .await;
    assert_eq!(answer.json["status"], "connected", "{:?}", answer.json);
    let vendor = login(&stack, "vendor-viewer").await;
    // Another member's trail: 403, even for its own calls' counterpart.
    let (status, _) = vendor.get(&routes::node_trail("buyercorp")).await;
    assert_eq!(status, 403);
    // Its own, once a checkpoint covers its newest record.
    let deadline = Instant::now() + Duration::from_secs(15);
    let bundle = loop {
        let (status, body) = vendor.get(&routes::node_trail("vendorcorp")).await;
        if status == 200 {
            break body;
        }
        assert_eq!(status, 409, "{body}");
        assert!(
            Instant::now() < deadline,
            "no checkpoint covered it: {body}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let parsed: Value = serde_json::from_str(&bundle).expect("json");
    assert_eq!(parsed["format"], "wall-street-trail-bundle/1");
    assert_eq!(parsed["manifest"]["counterparty"], "vendorcorp");
    // Nothing of a call VendorCorp was not part of is shown in full.
    for line in parsed["records"].as_array().expect("records") {
        if let Some(record) = line.get("record") {
            assert!(
                record["caller"] == "vendorcorp" || record["provider"] == "vendorcorp",
                "{record}"
            );
        }
    }
    // The counterparty's check, with no access to the hub: the bundle and
    // the hub's published keys.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("trail.json");
    std::fs::write(&file, &bundle).expect("write");
    let jwks = common::plain_client()
        .get(format!("{}/.well-known/jwks.json", stack.hub_url()))
        .send()
        .await
        .expect("answers")
        .text()
        .await
        .expect("jwks");
    let jwks_file = dir.path().join("jwks.json");
    std::fs::write(&jwks_file, jwks).expect("write");
    let out = std::process::Command::new(hub_bin())
        .args(["trail", "verify", "--bundle"])
        .arg(&file)
        .arg("--jwks")
        .arg(&jwks_file)
        .output()
        .expect("hub trail verify runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // An edited record is named.
    let edited = bundle.replacen("\"outcome\":\"connected\"", "\"outcome\":\"refused\"", 1);
    assert_ne!(
        edited, bundle,
        "the bundle holds a connected record in full"
    );
    std::fs::write(&file, edited).expect("write");
    let out = std::process::Command::new(hub_bin())
        .args(["trail", "verify", "--bundle"])
        .arg(&file)
        .output()
        .expect("hub trail verify runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("BROKEN"));
}
