//! The hub as an A2A server (DESIGN.md §4, "Peer to peer"): any A2A
//! client reaches a provider through the hub, in A2A v1.0 or v0.3, with
//! every rule of the exchange enforced.
//!
//! | route | what |
//! |---|---|
//! | `GET /.well-known/agent-card.json` | the hub's own card |
//! | `GET /a2a/{provider}/.well-known/agent-card.json` | the provider's card as the caller sees it through the hub (bearer token required) |
//! | `POST /a2a/{provider}` | JSON-RPC, v1.0 (`A2A-Version: 1.0`) or v0.3 (no header, or `0.3`) |
//! | `/a2a/{provider}/rest/...` | HTTP+JSON, v1.0 |
//! | `POST /mcp/{provider}` | MCP Streamable HTTP in front of the provider's data plane ([`mcp`]) |
//!
//! Where agentgateway proxies A2A bytes, this surface *reads* them: every
//! message becomes one call of the exchange pipeline ([`crate::gateway`]),
//! so the auth chain, the connection rules, the input and response
//! contracts, the envelope, the deadline, the audit trail and the status
//! board apply exactly as on `/gateway/v1`, and a failure is an A2A error
//! carrying one of the nine reason codes.
//!
//! # Layout
//!
//! - [`card`]: the cards (what a caller may see of a provider);
//! - [`ops`]: the operations both bindings call, and how a message names
//!   its capability ([`ops::select`]);
//! - [`jsonrpc`], [`rest`]: the two bindings, translation only;
//! - [`errors`]: what a refusal looks like (codes, `ErrorInfo`);
//! - [`bridge`]: A2A v0.3 ⇄ v1.0, for callers and for providers.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::gateway::{Gateway, MAX_REQUEST_BODY};
use exchange::envelope::Envelope;

pub mod bridge;
pub mod card;
pub mod errors;
pub mod jsonrpc;
pub mod mcp;
pub mod ops;
pub mod rest;

use errors::SurfaceError;

/// The surface's routes.
pub fn router(gateway: Arc<Gateway>) -> Router {
    Router::new()
        .route(exchange::health::CARD_PATH, get(hub_card))
        .route(
            &format!("/a2a/{{provider}}{}", exchange::health::CARD_PATH),
            get(provider_card),
        )
        .route("/a2a/{provider}", post(jsonrpc::handler))
        .nest("/a2a/{provider}/rest", rest::routes())
        .route_service(mcp::ROUTE, mcp::service(gateway.clone()))
        // Handlers read at most MAX_REQUEST_BODY themselves and answer in
        // their binding's error shape.
        .layer(axum::extract::DefaultBodyLimit::max(MAX_REQUEST_BODY))
        .route_layer(axum::middleware::from_fn_with_state(
            gateway.clone(),
            mcp_guard,
        ))
        .with_state(gateway)
}

/// The bearer check in front of `/mcp/{provider}` only (the A2A routes do
/// their own, in their binding's error shape).
async fn mcp_guard(
    state: State<Arc<Gateway>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if request.uri().path().starts_with("/mcp/") {
        mcp::require_caller(state, request, next).await
    } else {
        next.run(request).await
    }
}

/// The base URL the caller reached the hub at (`http://{Host}`), for the
/// URLs a card advertises.
fn hub_base(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

async fn hub_card(State(gateway): State<Arc<Gateway>>, headers: HeaderMap) -> Response {
    let hub_id = gateway.registry().snapshot().topology.hub.id.clone();
    let mut response = Json(card::hub_card(&hub_base(&headers), &hub_id)).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static(card::HUB_CARD_CACHE),
    );
    response
}

async fn provider_card(
    State(gateway): State<Arc<Gateway>>,
    Path(provider): Path<String>,
    headers: HeaderMap,
) -> Response {
    let envelope = Envelope::from_headers(&headers);
    let loaded = gateway.registry().snapshot();
    let Some(caller) = crate::auth::caller_by_token(&headers, &loaded.topology) else {
        let e = SurfaceError::call(
            exchange::reason::ReasonCode::AuthRejected,
            "a provider's card needs the bearer token the hub holds for the calling system".into(),
            StatusCode::UNAUTHORIZED,
        );
        return rest::error(&envelope, e);
    };
    match card::provider_card(
        &hub_base(&headers),
        &loaded.topology,
        gateway.board(),
        &provider,
        &caller.id,
    ) {
        Some(card) => {
            // The shape the caller's version reads (see NOTES.md).
            let declared = headers.contains_key(exchange::envelope::VERSION_HEADER);
            let body = match (declared, envelope.protocol()) {
                (true, Some(exchange::envelope::A2aVersion::V1_0)) => {
                    serde_json::to_value(&card).unwrap_or_default()
                }
                (true, Some(exchange::envelope::A2aVersion::V0_3)) => {
                    bridge::card_to_v03(serde_json::to_value(&card).unwrap_or_default())
                        .unwrap_or_else(|_| card::both_versions(&card))
                }
                _ => card::both_versions(&card),
            };
            let mut response = Json(body).into_response();
            // Per caller, and it changes with the registry and the
            // provider's own card: a private copy, briefly.
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                axum::http::HeaderValue::from_static(card::PROVIDER_CARD_CACHE),
            );
            response
        }
        None => {
            let e = SurfaceError::call(
                exchange::reason::ReasonCode::UnknownPeer,
                format!(
                    "no provider `{}` offers this caller a skill",
                    exchange::text::clip(&provider, 64)
                ),
                StatusCode::NOT_FOUND,
            );
            rest::error(&envelope, e)
        }
    }
}
