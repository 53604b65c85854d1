//! Discovery (A2A v1.0 §8.2, §8.6): how a client that holds nothing but a
//! URL finds out what is there and how to call it.
//!
//! | route | who may ask | what |
//! |---|---|---|
//! | `GET /.well-known/agent-card.json` | anyone | the hub's own card |
//! | `GET /.well-known/ai-catalog.json` | anyone | the hub and every public provider card ([`card::catalog`]) |
//! | `GET /a2a/{p}/.well-known/agent-card.json` | anyone | without a credential the provider's public card; with one, that caller's extended card |
//! | `GET /a2a/{p}` (the interface URL itself) | anyone | the same card: a client that reads the card from the URL it was given, as CrewAI's A2A delegation does, finds it there |
//! | `GET /a2a/{p}/rest/extendedAgentCard`, JSON-RPC `GetExtendedAgentCard` | members | the caller's extended card |
//! | `GET /.well-known/agent-card.json` on `{p}.{domain}` | anyone | the provider's card at the root of its own host ([`crate::net::provider_hosts`]), naming that host as its interfaces |
//!
//! Every card answer carries an `ETag` (a digest of the body) and
//! `Cache-Control`: public documents are cacheable by anyone and readable
//! from any origin; an extended card is the caller's own (`private`,
//! `Vary: Authorization`). A request whose `If-None-Match` names the
//! current tag gets 304. The body follows the caller's `A2A-Version`
//! ([`shaped`]).
//!
//! What a card reveals about existence (§3.3.2) is the topology's
//! `public_cards` ([`PublicCards`](crate::registry::model::PublicCards)):
//! `listed` publishes every provider (the registry is the members' shared
//! map, and a public card says no more than that the provider is reached
//! here); `hidden` publishes none, and an anonymous request for any
//! provider's card gets the same 404 as a provider that does not exist. A
//! credential the hub does not know is 401 for every provider path alike.

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::card::{self, Viewer};
use super::errors::SurfaceError;
use super::ops::Request as SurfaceRequest;
use super::Surface;
use exchange::envelope::{A2aVersion, Envelope, VERSION_HEADER};
use exchange::reason::ReasonCode;
use exchange::text::clip;

/// `Cache-Control` of the public documents (the hub's card, the catalog,
/// a provider's public card): they follow registry reloads and providers'
/// own cards within a minute.
pub const PUBLIC_CACHE: &str = "public, max-age=60";
/// `Cache-Control` of an extended card: the caller's own view.
pub const PRIVATE_CACHE: &str = "private, max-age=30";

/// Who may keep a copy of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Audience {
    /// Anyone, from any origin.
    Public,
    /// The caller whose credential asked.
    Caller,
}

/// `GET /.well-known/agent-card.json`.
pub async fn hub_card(State(surface): State<Surface>, headers: HeaderMap) -> Response {
    let loaded = surface.registry.snapshot();
    let card = card::hub_card(
        &surface.identity.base(&headers),
        &loaded.topology,
        &surface.identity,
    );
    // One shape for every version: the hub's card names no interface, so
    // there is no v0.3 form (a v0.3 card needs a `url`).
    let mut body = serde_json::to_value(&card).unwrap_or_default();
    sign(&surface, &headers, &mut body);
    document(&headers, body, Audience::Public)
}

/// `GET /.well-known/jwks.json`: the public keys the hub's cards are
/// signed with (every key, newest last).
pub async fn jwks(State(surface): State<Surface>, headers: HeaderMap) -> Response {
    document(&headers, surface.keys.jwks(), Audience::Public)
}

/// Signs a card the hub serves with its current key ([`crate::signing`]),
/// naming the JWKS at the hub's public address the request reached it by
/// (one of the configured ones, never the request's `Host` as such: the
/// card's URLs name the same one, [`crate::net::machine::PublicUrls`]).
pub fn sign(surface: &Surface, headers: &HeaderMap, card: &mut Value) {
    let jku = format!(
        "{}{}",
        surface.identity.base(headers),
        crate::signing::JWKS_PATH
    );
    surface.keys.sign_card(card, &jku);
}

/// `GET /.well-known/ai-catalog.json`.
pub async fn catalog(State(surface): State<Surface>, headers: HeaderMap) -> Response {
    let loaded = surface.registry.snapshot();
    let body = card::catalog(
        &surface.identity.base(&headers),
        &loaded.topology,
        &surface.identity,
        &surface.board,
    );
    document(&headers, body, Audience::Public)
}

/// `GET /a2a/{provider}/.well-known/agent-card.json`: the public card, or
/// the caller's extended card when the request carries a credential.
pub async fn provider_card(
    State(surface): State<Surface>,
    Path(provider): Path<String>,
    request: Request,
) -> Response {
    let asked = SurfaceRequest::of(provider, &request);
    if asked.headers.contains_key(header::AUTHORIZATION) {
        return respond_extended(&surface, &asked);
    }
    let loaded = surface.registry.snapshot();
    let card = card::provider_card(
        &card::interface_url(&surface.identity, &asked.headers, &asked.provider),
        &loaded.topology,
        &surface.identity,
        &surface.board,
        &asked.provider,
        Viewer::Anonymous,
    );
    match card {
        Some(card) => document(
            &asked.headers,
            served(&surface, &asked.headers, &card),
            Audience::Public,
        ),
        None => super::errors::rest_error(&asked.envelope(), no_card(&asked.provider)),
    }
}

/// `GET /a2a/{provider}/rest/extendedAgentCard`.
pub async fn rest_extended_card(
    State(surface): State<Surface>,
    Path(provider): Path<String>,
    request: Request,
) -> Response {
    let asked = SurfaceRequest::of(provider, &request);
    respond_extended(&surface, &asked)
}

fn respond_extended(surface: &Surface, asked: &SurfaceRequest) -> Response {
    match extended_card(surface, asked) {
        Ok(card) => document(
            &asked.headers,
            served(surface, &asked.headers, &card),
            Audience::Caller,
        ),
        Err(e) => super::errors::rest_error(&asked.envelope(), e),
    }
}

/// The extended card of `asked.provider` for the member that asks: its
/// credential and the rest of the auth chain as for a call (401 for a
/// credential the hub does not know, the same for every provider), then
/// the card with the skills a rule lets it use.
pub fn extended_card(
    surface: &Surface,
    asked: &SurfaceRequest,
) -> Result<a2a::AgentCard, SurfaceError> {
    let (caller, loaded) = asked.authenticate(surface).map_err(|nc| {
        let status = StatusCode::from_u16(nc.reason.http_status()).unwrap_or(StatusCode::FORBIDDEN);
        SurfaceError::call(nc.reason, nc.detail, status)
    })?;
    card::provider_card(
        &card::interface_url(&surface.identity, &asked.headers, &asked.provider),
        &loaded.topology,
        &surface.identity,
        &surface.board,
        &asked.provider,
        Viewer::Member(&caller),
    )
    .ok_or_else(|| no_card(&asked.provider))
}

/// The one answer for "no card here": an unknown provider, a hidden one,
/// one a member may not use while cards are hidden.
fn no_card(provider: &str) -> SurfaceError {
    SurfaceError::call(
        ReasonCode::UnknownPeer,
        format!("no agent card for `{}` on this hub", clip(provider, 64)),
        StatusCode::NOT_FOUND,
    )
}

/// A card as the hub serves it: [`shaped`] for the caller's version, then
/// signed.
pub fn served(surface: &Surface, headers: &HeaderMap, card: &a2a::AgentCard) -> Value {
    let mut body = shaped(headers, card);
    sign(surface, headers, &mut body);
    body
}

/// A card in the shape the caller's version reads: `1.x` the pure v1.0
/// card (schema-valid), `0.3` the v0.3 card, and no declared version (the
/// 0.3 SDK, plain `curl`) one card both SDK lines read (see NOTES.md, "The
/// A2A surface").
pub fn shaped(headers: &HeaderMap, card: &a2a::AgentCard) -> Value {
    let declared = headers.contains_key(VERSION_HEADER);
    match (declared, Envelope::from_headers(headers).protocol()) {
        (true, Some(A2aVersion::V1_0)) => serde_json::to_value(card).unwrap_or_default(),
        (true, Some(A2aVersion::V0_3)) => {
            crate::bridge::card_to_v03(serde_json::to_value(card).unwrap_or_default())
                .unwrap_or_else(|_| card::both_versions(card))
        }
        _ => card::both_versions(card),
    }
}

/// A discovery document with its validators and caching headers, or 304
/// when the caller's `If-None-Match` names it.
fn document(request: &HeaderMap, body: Value, audience: Audience) -> Response {
    let bytes = body.to_string();
    let etag = format!("\"{}\"", &exchange::wire::text_digest(&bytes)[..32]);
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .map(|t| t.trim().trim_start_matches("W/"))
                .any(|t| t == etag || t == "*")
        });
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            bytes,
        )
            .into_response()
    };
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, v);
    }
    let (cache, vary) = match audience {
        Audience::Public => (PUBLIC_CACHE, "A2A-Version"),
        Audience::Caller => (PRIVATE_CACHE, "Authorization, A2A-Version"),
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(header::VARY, HeaderValue::from_static(vary));
    if audience == Audience::Public {
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
    }
    response
}
