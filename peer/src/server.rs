//! The peer's HTTP face: agent card, health, and the A2A endpoint.
//!
//! * `GET /.well-known/agent-card.json` (public): who this peer is and
//!   which capabilities it provides, one AgentSkill per capability.
//! * `GET /health` (public): `{"service": "wall-street-peer", ...}`, the
//!   identity the hub's prober verifies.
//! * `POST /a2a`: A2A v1 JSON-RPC (a2a-server's router, handler and our
//!   executor), behind a bearer-token check in constant time. Only the hub
//!   holds the token; a request without it never reaches a skill.

use crate::card::{agent_card, capabilities};
use crate::config::PeerConfig;
use crate::executor::PeerExecutor;
use crate::{PeerState, Token, VERSION};
use a2a_server::agent_card::agent_card_router;
use a2a_server::jsonrpc::jsonrpc_router;
use a2a_server::{
    DefaultRequestHandler, HttpPushSender, HttpPushSenderConfig, InMemoryPushConfigStore,
    StaticAgentCard,
};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::envelope::{Envelope, CALLER_HEADER};
use exchange::health::{CARD_PATH, HEALTH_PATH, PEER_SERVICE};
use serde_json::json;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Path of the A2A JSON-RPC endpoint.
use exchange::wire::A2A_JSONRPC_PATH as A2A_PATH;

/// Builds the router of a peer whose public base URL is `public_base`
/// (`http://127.0.0.1:3101`).
pub fn router(state: Arc<PeerState>, public_base: &str) -> Router {
    let card = agent_card(&state.config, &state.schema, public_base);
    let (card, jwks) = signed(card, &state, public_base);
    // The executor and the handler share one task store (task skills
    // answer duplicates from it and decide cancels with it).
    let executor = PeerExecutor::new(state.clone());
    let store = executor.task_store();
    // Push notifications of a task's events to the URL its caller
    // registered: only the hub reaches this endpoint (its bearer token),
    // and the hub registers its own webhook, so the sender's guard against
    // private addresses is off (the hub may listen on one).
    let pusher = HttpPushSender::new(Some(HttpPushSenderConfig {
        timeout: std::time::Duration::from_secs(10),
        fail_on_error: false,
        validate_urls: false,
    }));
    let handler = Arc::new(
        DefaultRequestHandler::new(executor, store)
            .with_capabilities(capabilities(&state.config))
            .with_push_notifications(InMemoryPushConfigStore::new(), pusher),
    );
    let mut a2a = jsonrpc_router(handler);
    if state.config.faults.endless_answer {
        a2a = a2a.layer(middleware::from_fn(endless_answer));
    }
    let a2a = a2a.layer(middleware::from_fn_with_state(
        state.clone(),
        require_bearer,
    ));
    let health_body = Arc::new(json!({
        "service": PEER_SERVICE,
        "system": state.config.system,
        "name": state.config.name,
        "version": VERSION,
    }));
    // How many health checks this process answered: an operator (and the
    // replica tests) can see how hard the hub's prober knocks.
    let checks = Arc::new(std::sync::atomic::AtomicU64::new(0));
    Router::new()
        .route(
            HEALTH_PATH,
            get(move || {
                let mut body = (*health_body).clone();
                let n = checks.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                body["health_checks"] = json!(n);
                async move { Json(body) }
            }),
        )
        .merge(agent_card_router(Arc::new(StaticAgentCard::new(card))))
        .route(
            exchange::jws::JWKS_PATH,
            get(move || {
                let jwks = jwks.clone();
                async move { Json(jwks) }
            }),
        )
        .nest(A2A_PATH, a2a)
}

/// The card as the peer serves it: signed when the config says so, with a
/// key made now (kept in memory; its public half is the JWKS the router
/// serves, empty for an unsigned card). With `faults.tamper_card` the
/// description changes after signing, so the signature no longer fits.
fn signed(
    card: a2a::AgentCard,
    state: &PeerState,
    public_base: &str,
) -> (a2a::AgentCard, serde_json::Value) {
    let config = &state.config;
    let none = json!({"keys": []});
    if !config.sign_card {
        return (card, none);
    }
    let kid = format!("{}-{}", config.system, uuid::Uuid::new_v4().simple());
    let key = match exchange::jws::SigningKey::generate(kid) {
        Ok(key) => key,
        Err(e) => {
            tracing::warn!(error = %e, "serving the card unsigned");
            return (card, none);
        }
    };
    let mut value = serde_json::to_value(&card).unwrap_or_default();
    let jku = format!(
        "{}{}",
        public_base.trim_end_matches('/'),
        exchange::jws::JWKS_PATH
    );
    if let Err(e) = key.sign_card(&mut value, &jku) {
        tracing::warn!(error = %e, "serving the card unsigned");
        return (card, none);
    }
    if config.faults.tamper_card {
        value["description"] = json!("A description nobody signed.");
    }
    let jwks = json!({"keys": [key.public_jwk()]});
    let _ = state.signer.set(crate::Signer { key, jku });
    match serde_json::from_value(value) {
        Ok(signed) => (signed, jwks),
        Err(e) => {
            tracing::warn!(error = %e, "serving the card unsigned");
            (card, none)
        }
    }
}

/// `faults.endless_answer`: a 200 whose JSON body opens and never closes,
/// 64 KiB of padding every millisecond, until the caller hangs up.
async fn endless_answer(_req: Request, _next: Next) -> Response {
    let opening = futures::stream::once(async {
        Ok::<_, std::convert::Infallible>(axum::body::Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"result":{"padding":""#,
        ))
    });
    let padding = axum::body::Bytes::from(vec![b'x'; 64 * 1024]);
    let forever = futures::stream::unfold(padding, |padding| async move {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        Some((Ok(padding.clone()), padding))
    });
    let mut response =
        axum::body::Body::from_stream(futures::StreamExt::chain(opening, forever)).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Lets a request through only with `Authorization: Bearer <this peer's
/// token>`; otherwise 401 with a JSON-RPC-shaped error and one Refused
/// record in the trail (no token, no payload in it).
async fn require_bearer(State(state): State<Arc<PeerState>>, req: Request, next: Next) -> Response {
    let presented = exchange::envelope::bearer_token(req.headers());
    if presented.is_some_and(|t| state.token.matches(t.as_bytes())) {
        return next.run(req).await;
    }
    let env = Envelope::from_headers(req.headers());
    let caller = req
        .headers()
        .get(CALLER_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            v.len() <= 64
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .unwrap_or("unknown")
        .to_string();
    let detail = if presented.is_some() {
        "auth: wrong bearer token"
    } else {
        "auth: no bearer token"
    };
    tracing::warn!(caller = %caller, request_id = %env.request_id, trace_id = %env.trace.trace_id, detail, "A2A request refused");
    let record = AuditRecord {
        system: state.config.system.clone(),
        role: Role::Responder,
        at: exchange::audit::now(),
        caller,
        provider: state.config.system.clone(),
        capability: "unknown".into(),
        request_id: env.request_id,
        trace_id: env.trace.trace_id,
        outcome: Outcome::Refused,
        reason: None,
        duration_ms: 0,
        detail: detail.into(),
    };
    if let Err(e) = state.trail.append(record).await {
        tracing::error!(error = %e, "could not append to the audit trail");
    }
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        Json(json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32000, "message": "unauthorized: missing or wrong bearer token"},
        })),
    )
        .into_response()
}

/// A peer serving in the background (tests, embedders).
pub struct RunningPeer {
    /// The bound address.
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    handle: JoinHandle<std::io::Result<()>>,
}

impl RunningPeer {
    /// `http://<addr>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, lets in-flight calls finish, and waits.
    pub async fn stop(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        self.handle
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

/// Serves `state` on an already bound `listener` until [`RunningPeer::stop`].
/// The card advertises `public_url` if configured, else the bound address.
pub fn start(state: Arc<PeerState>, listener: TcpListener) -> std::io::Result<RunningPeer> {
    let addr = listener.local_addr()?;
    let base = state
        .config
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    Ok(spawn(listener, addr, router(state, &base)))
}

/// Serves `app` on `listener` (bound to `addr`) in the background until
/// [`RunningPeer::stop`]: the agent's server and the data plane's alike.
pub(crate) fn spawn(listener: TcpListener, addr: SocketAddr, app: Router) -> RunningPeer {
    let (tx, rx) = oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
            })
            .await
    });
    RunningPeer {
        addr,
        shutdown: Some(tx),
        handle,
    }
}

/// `peer serve`: opens the store, binds, serves until SIGINT/SIGTERM: over
/// TLS when the config has `tls` ([`crate::tls`]), else plain HTTP.
pub async fn serve(
    config: PeerConfig,
    token: Token,
    listen: Option<String>,
    database: &Path,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let listen = listen.unwrap_or_else(|| config.listen.clone());
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("listen address `{listen}` is not IP:port"))?;
    // TLS material first: a bad certificate is said before anything opens.
    let tls = match &config.tls {
        Some(tls) => Some(crate::tls::server_config(tls)?),
        None => None,
    };
    let state = Arc::new(PeerState::open(config, token, database).await?);
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding peer {} to {addr}", state.config.system))?;
    // The bound address (port 0 lets the system pick one): the card's
    // default URL and the log line below name it.
    let addr = listener
        .local_addr()
        .context("reading the peer's bound address")?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let base = state
        .config
        .public_url
        .clone()
        .unwrap_or_else(|| format!("{scheme}://{addr}"));
    tracing::info!(
        system = %state.config.system,
        %addr,
        card = %format!("{base}{CARD_PATH}"),
        database = %database.display(),
        client_certificate = state.config.tls.as_ref().is_some_and(|t| t.client_ca.is_some()),
        "peer listening on {scheme}://{addr}"
    );
    let app = router(state, &base);
    match tls {
        None => axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .context("serving the peer")?,
        Some(config) => axum::serve(
            crate::tls::TlsListener::new(listener, config).context("the TLS listener")?,
            app,
        )
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("serving the peer over TLS")?,
    }
    tracing::info!("peer stopped");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => tracing::info!("SIGINT: shutting down"),
        _ = term => tracing::info!("SIGTERM: shutting down"),
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
