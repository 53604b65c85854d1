//! `/metrics` and the drawers' numbers after a scripted sequence of calls
//! (DESIGN.md §6: success rate, failure types, retries, wait,
//! human interventions, unfinished tasks). Every count asserted is the one
//! the sequence implies; a crawl of `/metrics` finds no token, no env var
//! name, no internal URL and no payload value.

mod common;

use common::{Faults, PeerSpec, Stack};
use reqwest::Method;
use serde_json::{json, Value};

fn count_orders() -> Value {
    json!({ "aggregate": { "op": "count" } })
}

fn edge_path(id: &str, tail: &str) -> String {
    format!("/api/edges/{}{tail}", id.replace('>', "%3E"))
}

async fn scrape(stack: &Stack, from: Option<&str>) -> (u16, String) {
    let mut client = reqwest::Client::builder().no_proxy();
    if let Some(ip) = from {
        client = client.local_address(ip.parse::<std::net::IpAddr>().expect("ip"));
    }
    let resp = client
        .build()
        .expect("client")
        .get(format!("{}/metrics", stack.hub_url()))
        .send()
        .await
        .expect("scrape");
    let status = resp.status().as_u16();
    (status, resp.text().await.expect("body"))
}

/// The value of the one sample `name{labels}` (labels in the order the
/// exporter writes them).
fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
    let head = format!("{name}{{{labels}}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&head))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test]
async fn metrics_count_exactly_what_a_scripted_sequence_did_and_leak_nothing() {
    let stack = Stack::start_with_env(
        vec![
            PeerSpec::stock("vendorcorp"),
            PeerSpec::stock("buyercorp"),
            PeerSpec::clone_of(
                "stallcorp",
                "vendorcorp",
                Faults {
                    stall_ms: 10_000,
                    ..Faults::default()
                },
            ),
            PeerSpec::clone_of(
                "brokencorp",
                "vendorcorp",
                Faults {
                    break_schema: true,
                    ..Faults::default()
                },
            ),
            PeerSpec::clone_of(
                "failcorp",
                "vendorcorp",
                Faults {
                    fail: true,
                    ..Faults::default()
                },
            ),
            PeerSpec::clone_of("deadcorp", "vendorcorp", Faults::default()).not_started(),
        ],
        &[("WS_METRICS_ALLOW", "127.0.0.1/32")],
    )
    .await;
    let call = |provider: &str| {
        stack
            .call("buyercorp", provider, "orders.query")
            .body(count_orders())
    };
    for _ in 0..3 {
        call("vendorcorp").send().await.result();
    }
    // A retry with the same request id of a data-share runs again (live data).
    assert_eq!(call("stallcorp").send().await.reason(), "TIMEOUT");
    assert_eq!(call("brokencorp").send().await.reason(), "SCHEMA_INVALID");
    assert_eq!(call("failcorp").send().await.reason(), "PEER_ERROR");
    assert_eq!(call("deadcorp").send().await.reason(), "PEER_UNREACHABLE");
    assert_eq!(
        call("vendorcorp")
            .header("authorization", "Bearer wrong")
            .send()
            .await
            .reason(),
        "AUTH_REJECTED"
    );
    assert_eq!(
        call("vendorcorp")
            .source_ip("127.0.0.2")
            .send()
            .await
            .reason(),
        "IP_NOT_ALLOWED"
    );
    assert_eq!(
        call("vendorcorp")
            .header("a2a-version", "0.2")
            .send()
            .await
            .reason(),
        "VERSION_UNSUPPORTED"
    );
    assert_eq!(call("nosuchcorp").send().await.reason(), "UNKNOWN_PEER");
    assert_eq!(
        stack
            .call("buyercorp", "vendorcorp", "budget.consult")
            .body(json!({"question": "q"}))
            .send()
            .await
            .reason(),
        "NOT_PERMITTED"
    );

    // Two proposals in the hub's inbox: a human approves one, rejects one.
    let ui = stack.ui().await;
    let (status, text) = ui
        .send(
            Method::POST,
            "/api/edges",
            &json!({"consumer": "hub", "provider": "buyercorp", "capability": "budget.consult"}),
        )
        .await;
    assert!(status == 201 || status == 200, "{status} {text}");
    let edge = "hub->buyercorp:budget.consult";
    let mut ids = Vec::new();
    for q in [
        "raise marketing budget to 150000",
        "raise marketing budget to 170000",
    ] {
        let (status, text) = ui
            .send(
                Method::POST,
                &edge_path(edge, "/ask"),
                &json!({ "question": q }),
            )
            .await;
        assert_eq!(status, 200, "{text}");
        let view: Value = serde_json::from_str(&text).expect("ConsultView");
        assert!(view["proposed_actions"][0]["id"].is_string(), "{view}");
        ids.push(view["proposed_actions"][0]["id"].clone());
    }
    let decide = |id: &Value, what: &str| format!("/api/inbox/{}/{what}", id.as_str().expect("id"));
    assert_eq!(
        ui.send(Method::POST, &decide(&ids[0], "approve"), &json!({}))
            .await
            .0,
        200
    );
    assert_eq!(
        ui.send(Method::POST, &decide(&ids[1], "reject"), &json!({}))
            .await
            .0,
        200
    );

    let (status, text) = scrape(&stack, None).await;
    assert_eq!(status, 200, "{text}");
    let edge_labels = |provider: &str| {
        format!(r#"caller="buyercorp",provider="{provider}",capability="orders.query""#)
    };
    let calls = |provider: &str, outcome: &str| {
        sample(
            &text,
            "wallstreet_calls_total",
            &format!(
                r#"{},method="SendMessage",outcome="{outcome}""#,
                edge_labels(provider)
            ),
        )
    };
    let failures = |provider: &str, reason: &str| {
        sample(
            &text,
            "wallstreet_call_failures_total",
            &format!(r#"{},reason="{reason}""#, edge_labels(provider)),
        )
    };
    assert_eq!(calls("vendorcorp", "connected"), Some(3.0), "{text}");
    // Refused at the door, the call still counts, under its reason.
    assert_eq!(calls("vendorcorp", "not_connected"), Some(3.0), "{text}");
    for (provider, reason) in [
        ("stallcorp", "TIMEOUT"),
        ("brokencorp", "SCHEMA_INVALID"),
        ("failcorp", "PEER_ERROR"),
        ("deadcorp", "PEER_UNREACHABLE"),
        ("vendorcorp", "AUTH_REJECTED"),
        ("vendorcorp", "IP_NOT_ALLOWED"),
        ("vendorcorp", "VERSION_UNSUPPORTED"),
    ] {
        assert_eq!(
            failures(provider, reason),
            Some(1.0),
            "{provider} {reason}: {text}"
        );
    }
    assert_eq!(
        sample(
            &text,
            "wallstreet_call_failures_total",
            r#"caller="buyercorp",provider="unknown",capability="orders.query",reason="UNKNOWN_PEER""#
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "wallstreet_call_failures_total",
            r#"caller="buyercorp",provider="vendorcorp",capability="budget.consult",reason="NOT_PERMITTED""#
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "wallstreet_calls_total",
            r#"caller="hub",provider="buyercorp",capability="budget.consult",method="SendMessage",outcome="connected""#
        ),
        Some(2.0),
        "{text}"
    );
    for (decision, n) in [("approved", 1.0), ("rejected", 1.0)] {
        assert_eq!(
            sample(
                &text,
                "wallstreet_human_decisions",
                &format!(r#"system="buyercorp",capability="budget.consult",decision="{decision}""#)
            ),
            Some(n),
            "{text}"
        );
    }
    assert_eq!(
        sample(
            &text,
            "wallstreet_call_duration_seconds_count",
            &edge_labels("vendorcorp")
        ),
        Some(6.0),
        "{text}"
    );

    // Nothing in it is a secret, an address, or a payload value.
    for token in stack.all_tokens() {
        assert!(!text.contains(&token), "a token in /metrics");
    }
    for needle in [
        "WS_TOKEN",
        "http://",
        "127.0.0.1",
        "marketing",
        "150000",
        "Bearer",
    ] {
        assert!(!text.contains(needle), "`{needle}` in /metrics:\n{text}");
    }

    // The drawers say the same for the edge.
    let m = ui
        .get_json(&edge_path("buyercorp->vendorcorp:orders.query", "/metrics"))
        .await;
    assert_eq!(m["calls"], 6, "{m}");
    assert_eq!(m["succeeded"], 3, "{m}");
    assert_eq!(m["success_rate"], 0.5, "{m}");
    let m = ui.get_json(&edge_path(edge, "/metrics")).await;
    assert_eq!(
        (m["approvals"].clone(), m["rejections"].clone()),
        (json!(1), json!(1)),
        "{m}"
    );
    // The inspector's newest exchange on that edge is the refused version.
    let inspector = ui
        .get_json(&edge_path(
            "buyercorp->vendorcorp:orders.query",
            "/inspector",
        ))
        .await;
    let newest = &inspector["exchanges"][0];
    assert_eq!(newest["reason"], "VERSION_UNSUPPORTED", "{inspector}");
    assert_eq!(newest["version"], "0.2", "{inspector}");
    let connected = inspector["exchanges"]
        .as_array()
        .expect("list")
        .iter()
        .find(|e| e["outcome"] == "connected")
        .cloned()
        .expect("a connected exchange");
    // The input as far as the input schema names it: `aggregate.op` is
    // not one of its properties, so it is not shown.
    assert_eq!(
        connected["request"],
        json!({"aggregate": {}}),
        "{connected}"
    );
    assert!(
        connected["response"]["row_count"].is_number(),
        "{connected}"
    );
    for token in stack.all_tokens() {
        assert!(
            !inspector.to_string().contains(&token),
            "a token in the inspector"
        );
    }

    // The refused call no rule permits, every id in it known, is an
    // observed edge: `GET /api/traffic` lists it with its ends, and its
    // drawer's metrics and inspector resolve; an established edge is
    // listed once.
    let refused = "buyercorp->vendorcorp:budget.consult";
    let traffic = ui.get_json("/api/traffic").await;
    assert!(
        traffic["observed"]
            .as_array()
            .expect("list")
            .contains(&json!({
                "id": refused,
                "consumer": "buyercorp",
                "provider": "vendorcorp",
                "capability": "budget.consult"
            })),
        "{traffic}"
    );
    let listed = |id: &str| {
        traffic["edges"]
            .as_array()
            .expect("list")
            .iter()
            .filter(|e| e["edge"] == id)
            .count()
    };
    assert_eq!(listed(refused), 1, "{traffic}");
    assert_eq!(listed("buyercorp->vendorcorp:orders.query"), 1, "{traffic}");
    let m = ui.get_json(&edge_path(refused, "/metrics")).await;
    assert_eq!(m["calls"], 1, "{m}");
    assert_eq!(m["failures"][0]["reason"], "NOT_PERMITTED", "{m}");
    let inspector = ui.get_json(&edge_path(refused, "/inspector")).await;
    assert_eq!(
        inspector["exchanges"][0]["reason"], "NOT_PERMITTED",
        "{inspector}"
    );
    // An id nobody called is no edge at all.
    let (status, _) = ui
        .get(&edge_path("helpdesk->vendorcorp:orders.query", "/metrics"))
        .await;
    assert_eq!(status, 404);

    // From an address outside WS_METRICS_ALLOW: refused.
    let (status, body) = scrape(&stack, Some("127.0.0.2")).await;
    assert_eq!(status, 403, "{body}");
}
