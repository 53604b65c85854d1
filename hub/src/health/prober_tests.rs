//! The prober against fake peers: a peer going down and coming back, a
//! port answered by another program, a stalled peer and a garbage answer.

use super::*;
use crate::events::EventBus;
use app::dto::{HubEvent, NodeStatus};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use tokio::net::TcpListener;

fn system(id: &str, port: u16) -> System {
    System {
        id: id.into(),
        name: id.into(),
        node_type: Default::default(),
        base_url: format!("http://127.0.0.1:{port}"),
        token_env: "UNUSED".into(),
        oidc: None,
        mtls: None,
        ip_allowlist: vec![],
        provides: vec![],
        consumes: vec![],
        agents: vec![],
        datasources: vec![],
        data_plane: None,
    }
}

fn prober() -> (Prober, Arc<StatusBoard>, EventBus) {
    let bus = EventBus::new();
    let loaded =
        crate::registry::load::load_str("t.yaml", include_str!("../../../config/topology.yaml"))
            .expect("valid");
    let reg = Arc::new(Registry::with_loaded("t.yaml", loaded, bus.clone()));
    let board = Arc::new(StatusBoard::new(bus.clone()));
    (
        Prober::new(
            reg,
            board.clone(),
            None,
            &crate::net::egress::Egress::default(),
        )
        .expect("client"),
        board,
        bus,
    )
}

/// A fake peer answering as `service`/`system`, on `listener`.
fn serve(listener: TcpListener, service: &'static str, system: &'static str) -> JoinHandle<()> {
    let app = Router::new()
        .route(
            HEALTH_PATH,
            get(move || async move { Json(json!({"service": service, "system": system})) }),
        )
        .route(CARD_PATH, get(|| async { Json(json!({"name": "Fake"})) }));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    })
}

const T: Duration = Duration::from_millis(500);

#[tokio::test]
async fn healthy_then_degraded_then_healthy_again() {
    let (prober, board, bus) = prober();
    let mut events = bus.subscribe();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let sys = system("vendorcorp", port);
    assert_eq!(board.status("vendorcorp"), PeerStatus::Unknown);

    let server = serve(listener, PEER_SERVICE, "vendorcorp");
    board.record_probe("vendorcorp", prober.probe(&sys, T, true).await);
    assert_eq!(board.status("vendorcorp"), PeerStatus::Healthy);

    server.abort();
    let _ = server.await;
    board.record_probe("vendorcorp", prober.probe(&sys, T, false).await);
    let down = board.status("vendorcorp");
    assert_eq!(down.reason(), Some(ReasonCode::PeerUnreachable), "{down:?}");

    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("rebind");
    let _server = serve(listener, PEER_SERVICE, "vendorcorp");
    board.record_probe("vendorcorp", prober.probe(&sys, T, true).await);
    assert_eq!(board.status("vendorcorp"), PeerStatus::Healthy);

    let seen: Vec<NodeStatus> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|e| match e {
            HubEvent::StatusChanged { status, .. } => Some(status),
            _ => None,
        })
        .collect();
    assert_eq!(
        seen,
        [
            NodeStatus::Healthy,
            NodeStatus::Degraded,
            NodeStatus::Healthy
        ],
        "one event per change, none for repeats"
    );
}

#[tokio::test]
async fn identity_mismatch_is_unknown_peer() {
    let (prober, _, _) = prober();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let _s = serve(listener, "some-other-program", "vendorcorp");
    let err = prober
        .probe(&system("vendorcorp", port), T, true)
        .await
        .expect_err("mismatch");
    assert_eq!(err.reason, ReasonCode::UnknownPeer);
    assert_eq!(err.detail, "port answered by some-other-program");

    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let _s = serve(listener, PEER_SERVICE, "helpdesk");
    let err = prober
        .probe(&system("vendorcorp", port), T, true)
        .await
        .expect_err("wrong system");
    assert_eq!(err.reason, ReasonCode::UnknownPeer);
}

#[tokio::test]
async fn a_stalled_peer_times_out_and_garbage_is_peer_error() {
    let (prober, _, _) = prober();
    let app = Router::new()
        .route(
            HEALTH_PATH,
            get(|| async {
                tokio::time::sleep(Duration::from_secs(10)).await;
                "late"
            }),
        )
        .route(CARD_PATH, get(|| async { "not json" }));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let _s = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let started = std::time::Instant::now();
    let err = prober
        .probe(
            &system("vendorcorp", port),
            Duration::from_millis(200),
            false,
        )
        .await
        .expect_err("stalled");
    assert_eq!(err.reason, ReasonCode::Timeout);
    assert!(started.elapsed() < Duration::from_secs(2));

    let garbage = Router::new().route(HEALTH_PATH, get(|| async { "<html>hi</html>" }));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let _g = tokio::spawn(async move {
        let _ = axum::serve(listener, garbage).await;
    });
    let err = prober
        .probe(&system("vendorcorp", port), T, false)
        .await
        .expect_err("garbage");
    assert_eq!(err.reason, ReasonCode::PeerError);
}
