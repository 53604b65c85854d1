use super::*;
use app::dto::{HubEvent, NodeStatus, TopologyView};
use exchange::reason::{NotConnected, ReasonCode};
use std::net::SocketAddr;
use std::time::Duration;

/// A hub on 127.0.0.1:0 serving `api_router` with connect info, its
/// peers pointing at a port nobody listens on.
async fn serve_hub(tag: &str) -> (Hub, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let dead_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let text = include_str!("../../config/topology.yaml")
        .replace("127.0.0.1:3101", &format!("127.0.0.1:{dead_port}"))
        .replace("WS_TOKEN_", &format!("WS_TOKEN_TESTHUB{tag}_"));
    for sys in ["VENDORCORP", "BUYERCORP", "HELPDESK"] {
        std::env::set_var(format!("WS_TOKEN_TESTHUB{tag}_{sys}"), format!("tok-{sys}"));
    }
    let topology = dir.path().join("topology.yaml");
    std::fs::write(&topology, text).expect("write");
    let ui_users = dir.path().join("ui-users.yaml");
    let hash = crate::web::ui_auth::users::hash_password("pw").expect("hash");
    std::fs::write(
        &ui_users,
        format!("users:\n  - username: op\n    password_hash: \"{hash}\"\n    role: admin\n"),
    )
    .expect("write");
    let hub = Hub::build(&HubConfig {
        topology,
        database: Location::File(dir.path().join("hub.db")),
        ui_users: Some(ui_users),
        agents: None,
    })
    .await
    .expect("hub builds");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let bound = listener.local_addr().expect("addr");
    hub.identity
        .set_public(crate::net::machine::PublicUrls::listening(bound, None));
    let url = format!("http://{bound}");
    let app = hub
        .api_router()
        .into_make_service_with_connect_info::<SocketAddr>();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (hub, url, dir)
}

#[tokio::test]
async fn the_gateway_route_answers_json_with_the_callers_trace() {
    let (_hub, url, _dir) = serve_hub("ROUTE").await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let resp = client
        .post(format!("{url}/gateway/v1/vendorcorp/orders.query"))
        .header("x-caller-system", "buyercorp")
        .header("authorization", "Bearer tok-BUYERCORP")
        .header("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"))
        .json(&serde_json::json!({"aggregate": {"op": "count"}}))
        .send()
        .await
        .expect("answers");
    assert_eq!(resp.status().as_u16(), 502);
    let tp = resp
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(tp.starts_with(&format!("00-{trace}-")), "{tp}");
    let body: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(body["reason"], "PEER_UNREACHABLE", "{body}");
    assert_eq!(body["trace_id"], trace);

    let big = vec![b' '; MAX_REQUEST_BODY + 10];
    let resp = client
        .post(format!("{url}/gateway/v1/vendorcorp/orders.query"))
        .header("x-caller-system", "buyercorp")
        .body(big)
        .send()
        .await
        .expect("answers");
    assert_eq!(resp.status().as_u16(), 413);
    let body: serde_json::Value = resp.json().await.expect("json even when too large");
    assert_eq!(body["status"], "not_connected");
}

/// Logs in as `op` and answers the session cookie (`name=value`).
async fn log_in(url: &str) -> String {
    let resp = reqwest::Client::new()
        .post(format!("{url}/api/login"))
        .json(&serde_json::json!({"username": "op", "password": "pw"}))
        .send()
        .await
        .expect("answers");
    assert_eq!(resp.status().as_u16(), 200);
    resp.headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .expect("a session cookie")
        .to_string()
}

#[tokio::test]
async fn the_api_serves_the_view_and_streams_changes() {
    let (hub, url, _dir) = serve_hub("API").await;
    let anonymous = reqwest::get(format!("{url}/api/topology"))
        .await
        .expect("answers");
    assert_eq!(anonymous.status().as_u16(), 401);
    let cookie = log_in(&url).await;
    let client = reqwest::Client::new();
    let view: TopologyView = client
        .get(format!("{url}/api/topology"))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("answers")
        .json()
        .await
        .expect("a TopologyView");
    assert!(view.nodes.iter().any(|n| n.id == "vendorcorp"));

    let mut events = client
        .get(format!("{url}/api/events"))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("stream opens");
    assert_eq!(
        events
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    // Give the handler time to subscribe, then change a status.
    tokio::time::sleep(Duration::from_millis(100)).await;
    hub.board.record_probe(
        "helpdesk",
        Err(NotConnected::new(ReasonCode::Timeout, "slow")),
    );
    let chunk = tokio::time::timeout(Duration::from_secs(3), events.chunk())
        .await
        .expect("an event in time")
        .expect("readable")
        .expect("a chunk");
    let text = String::from_utf8_lossy(&chunk);
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("a data line");
    let ev: HubEvent = serde_json::from_str(data).expect("a HubEvent");
    assert_eq!(
        ev,
        HubEvent::StatusChanged {
            system: "helpdesk".into(),
            status: NodeStatus::Degraded,
            reason: Some(ReasonCode::Timeout),
            detail: Some("slow".into()),
        }
    );
    // Shutdown ends the stream instead of holding the server open.
    hub.shutdown.trigger();
    let end = tokio::time::timeout(Duration::from_secs(3), async {
        while let Ok(Some(_)) = events.chunk().await {}
    })
    .await;
    assert!(end.is_ok(), "the event stream did not end on shutdown");
}
