//! The hub as an A2A server (DESIGN.md §4, "Peer to peer"): any A2A
//! client reaches a provider through the hub, in A2A v1.0 or v0.3, with
//! every rule of the exchange enforced.
//!
//! | route | what |
//! |---|---|
//! | `GET /.well-known/agent-card.json` | the hub's own card |
//! | `GET /.well-known/ai-catalog.json` | the hub and every public provider card |
//! | `GET /.well-known/jwks.json` | the keys every card the hub serves is signed with ([`crate::signing`]) |
//! | `GET /a2a/{provider}/.well-known/agent-card.json` | the provider's public card; with a credential, the caller's extended card ([`discovery`]) |
//! | `POST /a2a/{provider}` | JSON-RPC, v1.0 (`A2A-Version: 1.0`) or v0.3 (no header, or `0.3`) |
//! | `/a2a/{provider}/rest/...` | HTTP+JSON, v1.0 |
//! | `/lf.a2a.v1.A2AService/{method}` (HTTP/2) | gRPC, v1.0, every provider: the call's `tenant` (or the provider's own host) names it ([`grpc`]) |
//! | `GET /receipts/v1/{id}`, `GET /receipts/v1?request_id=X` | a party's signed receipts of its exchanges ([`receipts`]) |
//! | `POST /mcp/{provider}` | MCP Streamable HTTP in front of the provider's data plane ([`mcp`]) |
//! | `GET /.well-known/oauth-protected-resource/{a2a,mcp}/{provider}` | RFC 9728 metadata: where a member gets an access token ([`crate::identity::metadata`]) |
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
//! - [`discovery`]: who gets which card, with its caching headers;
//! - [`ops`]: the operations both bindings call, and how a message names
//!   its capability ([`ops::select`]);
//! - [`receipts`]: a party's receipts, read back by id or request id;
//! - [`jsonrpc`], [`rest`], [`grpc`]: the three bindings, translation only;
//! - [`errors`]: what a refusal looks like (codes, `ErrorInfo`).
//!
//! A v0.3 caller's params and answers cross the version bridge
//! ([`crate::bridge`]) in the JSON-RPC binding.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

use crate::gateway::{Gateway, MAX_REQUEST_BODY};
use crate::health::StatusBoard;
use crate::identity::Identity;
use crate::registry::Registry;
use crate::signing::HubKeys;

pub mod card;
pub mod discovery;
pub mod errors;
pub mod grpc;
pub mod jsonrpc;
pub mod mcp;
pub mod ops;
pub mod receipts;
pub mod rest;

/// Where the hub's AI catalog is served.
pub const CATALOG_PATH: &str = "/.well-known/ai-catalog.json";

/// What the surface's handlers read, built once at start: the pipeline
/// every message and task operation runs, and what discovery reads
/// besides (the registry, the callers' identities and the hub's public
/// addresses, the providers' cards, the keys cards are signed with).
#[derive(Debug, Clone)]
pub struct Surface {
    /// The exchange pipeline.
    pub gateway: Arc<Gateway>,
    /// Who exists and who may talk to whom.
    pub registry: Arc<Registry>,
    /// The member issuers' keys and the hub's public addresses.
    pub identity: Arc<Identity>,
    /// The providers' cards and health.
    pub board: Arc<StatusBoard>,
    /// The keys every card the hub serves is signed with.
    pub keys: Arc<HubKeys>,
    /// The hub's trail, where each call's receipt is kept.
    pub trail: exchange::audit::AuditTrail,
}

/// The surface's routes.
pub fn router(surface: Surface, door_state: crate::identity::DoorState) -> Router {
    Router::new()
        .route(exchange::health::CARD_PATH, get(discovery::hub_card))
        .route(CATALOG_PATH, get(discovery::catalog))
        .route(crate::signing::JWKS_PATH, get(discovery::jwks))
        .route(receipts::PATH, get(receipts::by_request))
        .route(&format!("{}/{{id}}", receipts::PATH), get(receipts::by_id))
        .route(
            &format!("/a2a/{{provider}}{}", exchange::health::CARD_PATH),
            get(discovery::provider_card),
        )
        .route(
            "/a2a/{provider}",
            post(jsonrpc::handler).get(discovery::provider_card),
        )
        .route(
            &format!(
                "{}/{{door}}/{{provider}}",
                crate::identity::metadata::PREFIX
            ),
            get(crate::identity::metadata::protected_resource).with_state(door_state.clone()),
        )
        .nest("/a2a/{provider}/rest", rest::routes())
        .route_service(
            &format!("{}/{{method}}", grpc::SERVICE_PATH),
            grpc::service(surface.clone()),
        )
        .route_service(mcp::ROUTE, mcp::service(surface.gateway.clone()))
        // Handlers read at most MAX_REQUEST_BODY themselves and answer in
        // their binding's error shape.
        .layer(axum::extract::DefaultBodyLimit::max(MAX_REQUEST_BODY))
        .route_layer(axum::middleware::from_fn_with_state(
            surface.clone(),
            mcp_guard,
        ))
        .with_state(surface)
}

/// The bearer check in front of `/mcp/{provider}` only (the A2A routes do
/// their own, in their binding's error shape).
async fn mcp_guard(
    state: State<Surface>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if request.uri().path().starts_with("/mcp/") {
        mcp::require_caller(state, request, next).await
    } else {
        next.run(request).await
    }
}
