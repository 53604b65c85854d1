//! Several hub replicas on one PostgreSQL database behind Debian's nginx
//! (DESIGN.md §6: "with every promise above holding across replicas";
//! `hub::cluster`): real hub processes of this build, the demo's real
//! peers, a real balancer. Each promise is checked where it could break:
//! the two halves of a duplicate land on two different replicas.

mod common;

use std::time::{Duration, Instant};

use common::a2a::{triage, unique};
use common::{Stack, UiClient};
use reqwest::Method;
use serde_json::{json, Value};

/// The same logged-in browser, talking to replica `i` directly.
fn on(stack: &Stack, ui: &UiClient, i: usize) -> UiClient {
    UiClient {
        base: stack.replica_url(i),
        ..ui.clone()
    }
}

/// Reads an event stream until `want` has been seen (or panics after
/// `within`); what was seen.
async fn until_seen(events: &mut reqwest::Response, want: &[&str], within: Duration) -> String {
    let deadline = Instant::now() + within;
    let mut seen = String::new();
    while !want.iter().all(|w| seen.contains(w)) {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "never saw {want:?} on the stream: {seen}");
        if let Ok(Ok(Some(chunk))) = tokio::time::timeout(left, events.chunk()).await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    seen
}

/// A node's (status, reason) in a topology view.
fn status_of(topology: &Value, id: &str) -> Option<(String, Value)> {
    topology["nodes"].as_array()?.iter().find_map(|n| {
        (n["id"] == id).then(|| {
            (
                n["status"].as_str().unwrap_or_default().to_string(),
                n["reason"].clone(),
            )
        })
    })
}

/// Polls `check` on a replica's topology until it holds (or panics).
async fn until_topology(ui: &UiClient, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let t = ui.get_json("/api/topology").await;
        if check(&t) {
            return t;
        }
        assert!(Instant::now() < deadline, "{what} at {}: {t}", ui.base);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn two_replicas_are_one_hub_for_callers_and_canvases() {
    let stack = Stack::start_replicas(2, &[]).await;

    // One login (through the balancer) is a session on every replica: the
    // sessions live in the shared database.
    let ui = stack.ui().await;
    let (r0, r1) = (on(&stack, &ui, 0), on(&stack, &ui, 1));
    for r in [&r0, &r1] {
        let (status, body) = r.get("/api/session").await;
        assert_eq!(status, 200, "{}: {body}", r.base);
    }

    // A canvas on replica 1 hears what is done on replica 0.
    let mut events = r1
        .request(Method::GET, "/api/events")
        .send()
        .await
        .expect("the stream opens");
    let (status, text) = r0
        .send(
            Method::POST,
            "/api/edges",
            &json!({"consumer": "helpdesk", "provider": "buyercorp", "capability": "budget.consult"}),
        )
        .await;
    assert_eq!(status, 201, "{text}");
    until_seen(
        &mut events,
        &[r#""type":"topology_changed""#],
        Duration::from_secs(5),
    )
    .await;
    until_topology(&r1, "the edge made on replica 0", |t| {
        t["edges"].as_array().is_some_and(|e| {
            e.iter()
                .any(|e| e["id"] == "helpdesk->buyercorp:budget.consult")
        })
    })
    .await;
    let (status, text) = r0
        .send(
            Method::PUT,
            "/api/positions",
            &json!({"positions": [{"node": "buyercorp", "x": 123.5, "y": -4.0}]}),
        )
        .await;
    assert_eq!(status, 204, "{text}");
    until_topology(&r1, "the position saved on replica 0", |t| {
        t["positions"].as_array().is_some_and(|p| {
            p.iter()
                .any(|p| p["node"] == "buyercorp" && p["x"] == 123.5)
        })
    })
    .await;

    // One consult id on both replicas at once: one execution, one answer.
    let key = format!("consult-{}", unique());
    let calls = (0..8).map(|i| {
        let mut call = stack
            .call("helpdesk", "buyercorp", "budget.consult")
            .header("x-request-id", &key)
            .body(json!({"question": "How much of the marketing budget is left?"}));
        call.url = call
            .url
            .replace(&stack.hub_url(), &stack.replica_url(i % 2));
        call.send()
    });
    let answers = futures::future::join_all(calls).await;
    for a in &answers {
        assert_eq!(a.json["status"], "connected", "{}", a.json);
        assert_eq!(a.result(), answers[0].result(), "one answer for one id");
    }
    let responder = common::trail(&stack.peer_db("buyercorp"), "buyercorp").await;
    assert_eq!(
        responder
            .count(&key, exchange::audit::Outcome::Executed)
            .await
            .expect("trail"),
        1,
        "the provider ran the consult once"
    );
    // The edge's label counts every replica's calls, on either replica.
    let edge_calls = |r: &UiClient| {
        let r = r.clone();
        async move {
            r.get_json("/api/traffic").await["edges"]
                .as_array()
                .and_then(|e| {
                    e.iter()
                        .find(|e| e["edge"] == "helpdesk->buyercorp:budget.consult")
                        .and_then(|e| e["calls"].as_u64())
                })
                .unwrap_or(0)
        }
    };
    until_seen(
        &mut events,
        &["helpdesk->buyercorp:budget.consult"],
        Duration::from_secs(5),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while edge_calls(&r1).await < 8 || edge_calls(&r0).await < 8 {
        assert!(
            Instant::now() < deadline,
            "labels: {} on replica 0, {} on replica 1",
            edge_calls(&r0).await,
            edge_calls(&r1).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let hub = stack.hub_trail().await;
    let connected = hub
        .count(&key, exchange::audit::Outcome::Connected)
        .await
        .expect("trail");
    let replayed = hub
        .count(&key, exchange::audit::Outcome::Replayed)
        .await
        .expect("trail");
    assert_eq!((connected, replayed), (1, 7), "one forward, seven replays");

    // One task key on both replicas at once: one task, run once.
    let task_key = format!("task-{}", unique());
    let submissions = (0..6).map(|i| {
        let mut call = stack.a2a("buyercorp", "helpdesk").params(triage(
            &task_key,
            json!({"ticket_id": "T-1007", "work_ms": 200}),
            true,
            None,
        ));
        call.url = call
            .url
            .replace(&stack.hub_url(), &stack.replica_url(i % 2));
        call.send()
    });
    let answers = futures::future::join_all(submissions).await;
    let ids: Vec<String> = answers
        .iter()
        .map(|a| {
            a.result()["task"]["id"]
                .as_str()
                .unwrap_or_else(|| panic!("{}", a.json))
                .to_string()
        })
        .collect();
    assert!(
        ids.iter().all(|i| *i == ids[0]),
        "one task for one key: {ids:?}"
    );
    let provider = common::peer_pool(&stack.peer_db("helpdesk")).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let details: Vec<String> = sqlx::query_scalar("SELECT detail FROM audit_trail")
            .fetch_all(&provider)
            .await
            .expect("trail");
        let executed = details
            .iter()
            .filter(|d| d.contains(&format!("task {} executed", ids[0])))
            .count();
        if executed > 0 {
            assert_eq!(executed, 1, "the provider ran the task once");
            break;
        }
        assert!(Instant::now() < deadline, "the task never ran");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A proposal asked on replica 0, decided on both at once: decided once.
    let (status, text) = r0
        .send(
            Method::POST,
            "/api/edges/helpdesk-%3Ebuyercorp:budget.consult/ask",
            &json!({"question": "raise marketing budget to 150000"}),
        )
        .await;
    assert_eq!(status, 200, "{text}");
    let view: Value = serde_json::from_str(&text).expect("a ConsultView");
    let action = view["proposed_actions"][0].clone();
    let id = action["id"].as_str().expect("an inbox id").to_string();
    until_seen(
        &mut events,
        &[r#""type":"inbox_changed","pending":1"#],
        Duration::from_secs(5),
    )
    .await;
    let decisions = [
        (&r0, "approve"),
        (&r1, "reject"),
        (&r1, "approve"),
        (&r0, "reject"),
    ]
    .map(|(r, verb)| {
        let (r, path) = (r.clone(), format!("/api/inbox/{id}/{verb}"));
        async move { r.send(Method::POST, &path, &json!(null)).await }
    });
    let decided = futures::future::join_all(decisions).await;
    let statuses: Vec<u16> = decided.iter().map(|d| d.0).collect();
    assert!(
        statuses.iter().all(|s| *s == 200 || *s == 409),
        "{decided:?}"
    );
    until_seen(
        &mut events,
        &[r#""type":"inbox_changed","pending":0"#],
        Duration::from_secs(5),
    )
    .await;
    let lines = stack
        .hub_trail()
        .await
        .by_trace(action["trace_id"].as_str().unwrap_or_default())
        .await
        .expect("trail");
    let decisions = lines
        .iter()
        .filter(|l| l.detail.contains(&format!("inbox entry {id} ")))
        .count();
    assert_eq!(decisions, 1, "one decision recorded: {lines:?}");
    let page = r1.get_json("/api/inbox/page").await;
    let plans = page["budget_plans"].as_array().cloned().unwrap_or_default();
    let approved = decided
        .iter()
        .any(|(s, t)| *s == 200 && t.contains(r#""status":"approved""#));
    assert_eq!(plans.len(), usize::from(approved), "{page}");
}

#[tokio::test]
async fn one_replica_probes_for_all_and_another_takes_over_when_it_dies() {
    let mut stack = Stack::start_replicas(3, &[]).await;
    let ui = stack.ui().await;
    let store = stack.hub_store().await;
    // Wait for the first probe results.
    let deadline = Instant::now() + Duration::from_secs(10);
    let probers = loop {
        let p: Vec<String> = sqlx::query_scalar("SELECT DISTINCT prober FROM peer_health")
            .fetch_all(store.pool())
            .await
            .expect("peer_health");
        let systems: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM peer_health")
            .fetch_one(store.pool())
            .await
            .expect("peer_health");
        if systems >= 3 {
            break p;
        }
        assert!(
            Instant::now() < deadline,
            "no probe results: {}",
            stack.hub_log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(probers.len(), 1, "one replica probes: {probers:?}");
    let leader = probers[0].clone();

    // The peers see one prober, not three: about one health check per
    // probe interval (1 s in the shipped topology).
    let checks = || async {
        let health: Value = reqwest::get(format!("{}/health", stack.peer_url("vendorcorp")))
            .await
            .expect("health")
            .json()
            .await
            .expect("json");
        health["health_checks"].as_u64().expect("a count")
    };
    let (c0, t0) = (checks().await, Instant::now());
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (c1, t1) = (checks().await, Instant::now());
    // Our own two reads are in the count.
    let per_second = (c1 - c0 - 1) as f64 / (t1 - t0).as_secs_f64();
    println!("health checks per second with 3 replicas: {per_second:.2}");
    assert!(
        (0.5..=1.6).contains(&per_second),
        "{per_second:.2} health checks a second: three probing replicas would make about 3"
    );

    // The leader dies: another replica takes over, and a peer that dies
    // afterwards is still seen dead by the replicas that are left.
    let leader_index = (0..3)
        .find(|i| {
            // The line `hub listening … instance=<id>` (with the log's
            // colours between the words).
            std::fs::read_to_string(stack.replica_log(*i))
                .unwrap_or_default()
                .lines()
                .any(|l| l.contains("hub listening") && l.contains(&leader))
        })
        .unwrap_or_else(|| panic!("no replica log names {leader}: {}", stack.hub_log()));
    stack.kill_replica(leader_index);
    let survivors: Vec<usize> = (0..3).filter(|i| *i != leader_index).collect();
    stack.kill_peer("helpdesk");
    for i in &survivors {
        let r = on(&stack, &ui, *i);
        let t = until_topology(&r, "helpdesk degraded after the leader died", |t| {
            status_of(t, "helpdesk").is_some_and(|(s, _)| s == "degraded")
        })
        .await;
        assert_eq!(
            status_of(&t, "helpdesk").expect("node").1,
            "PEER_UNREACHABLE"
        );
        assert_eq!(status_of(&t, "vendorcorp").expect("node").0, "healthy");
    }
    let now: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT prober FROM peer_health WHERE system = 'helpdesk'")
            .fetch_all(store.pool())
            .await
            .expect("peer_health");
    assert_eq!(now.len(), 1);
    assert_ne!(now[0], leader, "a surviving replica probes now");

    // A topology reload reaches every replica.
    stack.topology_mut()["systems"]
        .as_sequence_mut()
        .expect("systems")
        .iter_mut()
        .filter(|s| s["id"].as_str() == Some("vendorcorp"))
        .for_each(|s| s["name"] = serde_yaml_ng::Value::String("VendorCorp Europe".into()));
    stack.write_topology();
    for i in &survivors {
        let r = on(&stack, &ui, *i);
        until_topology(&r, "the renamed system", |t| {
            t["nodes"]
                .as_array()
                .is_some_and(|n| n.iter().any(|n| n["name"] == "VendorCorp Europe"))
        })
        .await;
    }
    // The dead leader comes back as one replica among the others.
    stack.start_replica(leader_index).await;
    let back = on(&stack, &ui, leader_index);
    until_topology(&back, "helpdesk still degraded", |t| {
        status_of(t, "helpdesk").is_some_and(|(s, _)| s == "degraded")
    })
    .await;
}

#[tokio::test]
async fn behind_the_balancer_the_client_address_is_the_one_nginx_saw() {
    let stack = Stack::start_replicas(2, &[("WS_LOGIN_ADDRESS_LIMIT", "3/600")]).await;
    // Logins come through nginx from two loopback addresses: each has its
    // own allowance (the hub reads X-Forwarded-For from the balancer
    // only), and a header a client forges does not buy a new one.
    let from = |ip: &str| {
        reqwest::Client::builder()
            .local_address(ip.parse::<std::net::IpAddr>().expect("ip"))
            .build()
            .expect("client")
    };
    let login = |client: reqwest::Client, forged: Option<&'static str>| {
        let url = format!("{}/api/login", stack.hub_url());
        async move {
            let mut req = client
                .post(url)
                .json(&json!({"username": "nobody", "password": "wrong"}));
            if let Some(f) = forged {
                req = req.header("x-forwarded-for", f);
            }
            req.send().await.expect("answer").status().as_u16()
        }
    };
    let a = from("127.0.0.2");
    let mut seen = Vec::new();
    for i in 0..4 {
        // Forged headers rotate; the limit holds anyway.
        seen.push(
            login(
                a.clone(),
                Some(["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"][i]),
            )
            .await,
        );
    }
    assert_eq!(&seen[..3], &[401, 401, 401], "{seen:?}");
    assert_eq!(seen[3], 429, "the fourth attempt from 127.0.0.2: {seen:?}");
    // Another address is not held back by 127.0.0.2's attempts.
    assert_eq!(login(from("127.0.0.3"), None).await, 401);
}
