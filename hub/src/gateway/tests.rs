//! The gateway's pipeline against fake providers (DESIGN.md §4, "Peer to
//! peer"; §1, the robustness rules; §2, one reason code per failure).
//!
//! Each test starts a real HTTP server on a free port that plays a provider
//! in one [`Mode`] (a good answer, a slow one, one that breaks the contract,
//! a JSON-RPC error, a refused input, an HTTP 500), points the demo topology
//! at it, and calls through [`Gateway::call`] (the hub's own door) or
//! [`Gateway::handle`] (the door for peers, auth chain included). The fake
//! records what it saw, so a test can check what reached the provider, and
//! how often.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::net::listen::Peer;
use a2a::SendMessageResponse;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use tokio::net::TcpListener;

use super::http::body_input;
use super::{Gateway, Handled, Incoming, Wiring, MAX_PEER_DETAIL};
use crate::events::EventBus;
use crate::health::{PeerStatus, StatusBoard};
use crate::registry::Registry;
use crate::store::idempotency::IdempotencyStore;
use exchange::audit::{AuditTrail, Outcome, Role};
use exchange::envelope::{Envelope, CALLER_HEADER, REQUEST_ID_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{CallResult, ReasonCode};
use exchange::wire;

/// What the fake provider saw of the last call.
#[derive(Default)]
struct Seen {
    calls: AtomicUsize,
    headers: Mutex<Option<HeaderMap>>,
}

/// How the fake provider answers.
#[derive(Clone, Copy)]
enum Mode {
    Good,
    Slow,
    BadSchema,
    RpcError,
    InvalidParams,
    Http500,
}

fn good_orders() -> Value {
    json!({"table": "orders", "aggregate": {"op": "count", "column": "order_value"},
           "group_by": null, "groups": [{"key": null, "value": 3, "count": 3}], "row_count": 3})
}

fn good_budget() -> Value {
    json!({"department": "it", "budget": 10.0, "spent": 4.0, "remaining": 6.0,
           "answer": "fine", "proposed_actions": []})
}

async fn fake_provider(mode: Mode, seen: Arc<Seen>) -> u16 {
    let app = Router::new().route(
        wire::A2A_JSONRPC_PATH,
        post(move |headers: HeaderMap, Json(req): Json<Value>| {
            let seen = seen.clone();
            async move {
                seen.calls.fetch_add(1, Ordering::SeqCst);
                if let Ok(mut h) = seen.headers.lock() {
                    *h = Some(headers);
                }
                let capability = req["params"]["message"]["parts"][0]["data"]["capability"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let result = if capability == "budget.consult" {
                    json!({"department": "it", "budget": 10.0, "spent": 4.0, "remaining": 6.0,
                           "answer": format!("call {}", seen.calls.load(Ordering::SeqCst)),
                           "proposed_actions": []})
                } else {
                    good_orders()
                };
                let answer = |result: Value| {
                    let msg = wire::answer_message(result, None);
                    json!({"jsonrpc": "2.0", "id": req["id"],
                           "result": SendMessageResponse::Message(msg)})
                };
                match mode {
                    Mode::Good => (StatusCode::OK, Json(answer(result))),
                    Mode::Slow => {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                        (StatusCode::OK, Json(answer(result)))
                    }
                    Mode::BadSchema => {
                        let mut r = good_orders();
                        r["groups"][0]["count"] = json!("three");
                        (StatusCode::OK, Json(answer(r)))
                    }
                    Mode::RpcError => (
                        StatusCode::OK,
                        Json(json!({"jsonrpc": "2.0", "id": req["id"],
                            "error": {"code": -32000, "message": "x".repeat(1000)}})),
                    ),
                    Mode::InvalidParams => (
                        StatusCode::OK,
                        Json(json!({"jsonrpc": "2.0", "id": req["id"],
                            "error": {"code": -32602, "message": "unknown column \"colour\""}})),
                    ),
                    Mode::Http500 => (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        Json(json!({"oops": true})),
                    ),
                }
            }
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    port
}

struct Fixture {
    gateway: Arc<Gateway>,
    board: Arc<StatusBoard>,
    audit: AuditTrail,
    _dir: tempfile::TempDir,
}

impl Fixture {
    /// One call with a fresh root envelope.
    async fn call(
        &self,
        caller: &str,
        provider: &str,
        capability: &str,
        input: Value,
    ) -> CallResult {
        self.gateway
            .call(caller, provider, capability, input, Envelope::new_root())
            .await
    }
}

/// A gateway whose vendorcorp and buyercorp point at `port`, with a
/// deadline of `deadline_ms` and per-test token env vars.
async fn fixture(port: u16, deadline_ms: u64, tag: &str) -> Fixture {
    let text = include_str!("../../../config/topology.yaml")
        .replace("http://127.0.0.1:3101", &format!("http://127.0.0.1:{port}"))
        .replace("http://127.0.0.1:3102", &format!("http://127.0.0.1:{port}"))
        .replace("deadline_ms: 2000", &format!("deadline_ms: {deadline_ms}"))
        .replace("WS_TOKEN_", &format!("WS_TOKEN_TESTGW{tag}_"));
    for sys in ["VENDORCORP", "BUYERCORP", "HELPDESK"] {
        std::env::set_var(format!("WS_TOKEN_TESTGW{tag}_{sys}"), format!("tok-{sys}"));
    }
    let loaded = crate::registry::load::load_str("t.yaml", &text).expect("valid");
    let bus = EventBus::new();
    let registry = Arc::new(Registry::with_loaded("t.yaml", loaded, bus.clone()));
    let board = Arc::new(StatusBoard::new(bus));
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = crate::store::open(&exchange::db::Location::File(dir.path().join("hub.db")))
        .await
        .expect("db");
    let cluster = crate::cluster::Cluster::solo();
    let audit = AuditTrail::open(pool.clone(), "hub");
    let egress = crate::net::egress::Egress::default();
    let keys = crate::signing::HubKeys::open(pool.clone())
        .await
        .expect("keys");
    let identity = Arc::new(crate::identity::Identity::new(&egress));
    let push = crate::push::PushRelay::new(
        crate::store::push::PushTables::new(pool.clone()),
        &egress,
        keys.clone(),
        identity.clone(),
        Default::default(),
    );
    let gateway = Arc::new(
        Gateway::new(Wiring {
            registry,
            board: board.clone(),
            identity,
            traffic: Arc::new(crate::traffic::Traffic::new()),
            audit: audit.clone(),
            idempotency: IdempotencyStore::new(pool.clone()),
            owners: crate::store::task_owners::TaskOwners::new(pool.clone()),
            records: crate::store::task_records::TaskRecords::new(pool.clone(), cluster.instance()),
            negotiations: crate::store::negotiations::Negotiations::new(pool),
            cluster,
            quotas: None,
            egress,
            provider_tls: None,
            keys,
            push,
        })
        .expect("gw"),
    );
    Fixture {
        gateway,
        board,
        audit,
        _dir: dir,
    }
}

fn reason(r: &CallResult) -> Option<ReasonCode> {
    match r {
        CallResult::NotConnected { reason, .. } => Some(*reason),
        CallResult::Connected { .. } => None,
    }
}

fn detail(r: &CallResult) -> String {
    match r {
        CallResult::NotConnected { detail, .. } => detail.clone(),
        CallResult::Connected { .. } => String::new(),
    }
}

#[tokio::test]
async fn forwarding_keeps_the_trace_id_and_sends_the_envelope() {
    let seen = Arc::new(Seen::default());
    let port = fake_provider(Mode::Good, seen.clone()).await;
    let f = fixture(port, 2000, "TRACE").await;
    let env = Envelope::new_root();
    let result = f
        .gateway
        .call("hub", "vendorcorp", "orders.query", json!({}), env.clone())
        .await;
    match &result {
        CallResult::Connected {
            trace_id,
            result,
            replayed,
            ..
        } => {
            assert_eq!(trace_id, &env.trace.trace_id);
            assert_eq!(result, &good_orders());
            assert!(!replayed);
        }
        other => panic!("{other:?}"),
    }
    let headers = seen
        .headers
        .lock()
        .ok()
        .and_then(|h| h.clone())
        .expect("called");
    let tp = headers
        .get(TRACEPARENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(exchange::envelope::TraceParent::parse)
        .expect("traceparent forwarded");
    assert_eq!(tp.trace_id, env.trace.trace_id, "same trace id");
    assert_ne!(tp.span_id, env.trace.span_id, "new span");
    let h = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    assert_eq!(h("authorization").as_deref(), Some("Bearer tok-VENDORCORP"));
    assert_eq!(h(CALLER_HEADER).as_deref(), Some("hub"));
    assert_eq!(h(REQUEST_ID_HEADER), Some(env.request_id.clone()));
    assert_eq!(h("a2a-version").as_deref(), Some("1.0"));
    assert_eq!(f.board.status("vendorcorp"), PeerStatus::Healthy);
    let trail = f.audit.by_trace(&env.trace.trace_id).await.expect("trail");
    assert_eq!(trail.len(), 1);
    assert_eq!(trail[0].outcome, Outcome::Connected);
    assert_eq!(trail[0].role, Role::Hub);
}

#[tokio::test]
async fn a_slow_provider_times_out_at_the_deadline() {
    let port = fake_provider(Mode::Slow, Arc::default()).await;
    let f = fixture(port, 300, "SLOW").await;
    let started = std::time::Instant::now();
    let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
    let took = started.elapsed();
    assert_eq!(reason(&r), Some(ReasonCode::Timeout), "{r:?}");
    assert!(
        took >= Duration::from_millis(290) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert_eq!(
        f.board.status("vendorcorp").reason(),
        Some(ReasonCode::Timeout)
    );
}

#[tokio::test]
async fn contract_breach_names_the_pointer() {
    let port = fake_provider(Mode::BadSchema, Arc::default()).await;
    let f = fixture(port, 2000, "SCHEMA").await;
    let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
    assert_eq!(reason(&r), Some(ReasonCode::SchemaInvalid), "{r:?}");
    assert!(detail(&r).contains("/groups/0/count"), "{}", detail(&r));
    assert!(!detail(&r).contains("three"), "no payload in details");
}

#[tokio::test]
async fn peer_errors_are_clipped_and_non_2xx_is_peer_error() {
    let port = fake_provider(Mode::RpcError, Arc::default()).await;
    let f = fixture(port, 2000, "RPCERR").await;
    let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
    assert_eq!(reason(&r), Some(ReasonCode::PeerError));
    assert!(
        detail(&r).chars().count() <= MAX_PEER_DETAIL + 1,
        "{}",
        detail(&r).len()
    );

    let port = fake_provider(Mode::Http500, Arc::default()).await;
    let f = fixture(port, 2000, "HTTP500").await;
    let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
    assert_eq!(reason(&r), Some(ReasonCode::PeerError));
    assert!(detail(&r).starts_with("HTTP 500"), "{}", detail(&r));
    assert_eq!(
        f.board.status("vendorcorp").reason(),
        Some(ReasonCode::PeerError)
    );
}

#[tokio::test]
async fn refused_input_is_a_peer_error_that_does_not_degrade_the_provider() {
    let port = fake_provider(Mode::InvalidParams, Arc::default()).await;
    let f = fixture(port, 2000, "PARAMS").await;
    f.board.record_probe("vendorcorp", Ok(()));
    let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
    assert_eq!(reason(&r), Some(ReasonCode::PeerError));
    assert!(detail(&r).contains("colour"), "{}", detail(&r));
    assert_eq!(f.board.status("vendorcorp"), PeerStatus::Healthy);
}

#[tokio::test]
async fn refused_connection_is_unreachable_and_rules_are_enforced() {
    // Bind then drop: a port nobody listens on.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        l.local_addr().expect("addr").port()
    };
    let f = fixture(port, 2000, "REFUSED").await;
    let r = f.call("hub", "vendorcorp", "orders.query", json!({})).await;
    assert_eq!(reason(&r), Some(ReasonCode::PeerUnreachable), "{r:?}");
    assert!(
        !detail(&r).contains("127.0.0.1"),
        "no URLs in details: {}",
        detail(&r)
    );

    let r = f
        .call("helpdesk", "vendorcorp", "orders.query", json!({}))
        .await;
    assert_eq!(reason(&r), Some(ReasonCode::NotPermitted));
    let r = f.call("hub", "nobody", "orders.query", json!({})).await;
    assert_eq!(reason(&r), Some(ReasonCode::UnknownPeer));
    let r = f
        .call("hub", "vendorcorp", "orders.delete", json!({}))
        .await;
    assert_eq!(reason(&r), Some(ReasonCode::NotPermitted));
}

#[tokio::test]
async fn a_repeated_consult_is_replayed_not_executed() {
    let seen = Arc::new(Seen::default());
    let port = fake_provider(Mode::Good, seen.clone()).await;
    let f = fixture(port, 2000, "IDEM").await;
    let mut env = Envelope::new_root();
    env.request_id = "consult-1".into();
    env.request_id_from_caller = true;
    let first = f
        .gateway
        .call("hub", "buyercorp", "budget.consult", json!({}), env.clone())
        .await;
    let (a, b) = tokio::join!(
        f.gateway
            .call("hub", "buyercorp", "budget.consult", json!({}), env.clone()),
        f.gateway
            .call("hub", "buyercorp", "budget.consult", json!({}), env.clone()),
    );
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1, "executed once");
    for r in [&a, &b] {
        match (r, &first) {
            (
                CallResult::Connected {
                    replayed: true,
                    result,
                    ..
                },
                CallResult::Connected {
                    replayed: false,
                    result: original,
                    ..
                },
            ) => assert_eq!(result, original),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        f.audit
            .count("consult-1", Outcome::Replayed)
            .await
            .expect("count"),
        2
    );
    // A data-share is never replayed, even with a caller request id.
    let q1 = f
        .gateway
        .call("hub", "vendorcorp", "orders.query", json!({}), env.clone())
        .await;
    assert!(matches!(
        q1,
        CallResult::Connected {
            replayed: false,
            ..
        }
    ));
    assert_eq!(seen.calls.load(Ordering::SeqCst), 2);
    assert_eq!(good_budget()["answer"], "fine");

    // The same id with another input: refused, not answered with the
    // first input's answer, and nothing executes.
    let other = f
        .gateway
        .call(
            "hub",
            "buyercorp",
            "budget.consult",
            json!({"question": "something else"}),
            env.clone(),
        )
        .await;
    assert_eq!(reason(&other), Some(ReasonCode::PeerError), "{other:?}");
    assert!(detail(&other).contains("first used with a different input"));
    assert_eq!(seen.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn http_pipeline_checks_version_and_auth_before_anything() {
    let seen = Arc::new(Seen::default());
    let port = fake_provider(Mode::Good, seen.clone()).await;
    let f = fixture(port, 2000, "HTTP").await;
    let incoming = |headers: &[(&'static str, &str)], ip: &str| {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.insert(*k, v);
            }
        }
        Incoming::new(
            format!("{ip}:5000")
                .parse()
                .map(Peer::at)
                .unwrap_or_default(),
            h,
            "vendorcorp".into(),
            "orders.query".into(),
            body_input(b"{}"),
        )
    };
    let good = [
        ("x-caller-system", "buyercorp"),
        ("authorization", "Bearer tok-BUYERCORP"),
    ];
    let answer = |h: Handled| (h.status, h.result);
    let (status, r) = answer(f.gateway.handle(incoming(&good, "127.0.0.1")).await);
    assert_eq!(status, StatusCode::OK, "{r:?}");
    let (status, r) = answer(
        f.gateway
            .handle(incoming(
                &[good[0], good[1], ("a2a-version", "0.2")],
                "127.0.0.1",
            ))
            .await,
    );
    assert_eq!(
        (status.as_u16(), reason(&r)),
        (400, Some(ReasonCode::VersionUnsupported))
    );
    let (status, r) = answer(f.gateway.handle(incoming(&good, "10.9.9.9")).await);
    assert_eq!(
        (status.as_u16(), reason(&r)),
        (403, Some(ReasonCode::IpNotAllowed))
    );
    let (status, r) = answer(
        f.gateway
            .handle(incoming(
                &[good[0], ("authorization", "Bearer nope")],
                "127.0.0.1",
            ))
            .await,
    );
    assert_eq!(
        (status.as_u16(), reason(&r)),
        (401, Some(ReasonCode::AuthRejected))
    );
    assert_eq!(
        seen.calls.load(Ordering::SeqCst),
        1,
        "refused calls are never forwarded"
    );
}
