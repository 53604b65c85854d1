//! What a client learns before it holds a token: where to get one.
//!
//! * `GET /.well-known/oauth-protected-resource/a2a/{provider}` and
//!   `…/mcp/{provider}`: RFC 9728 protected-resource metadata for the
//!   provider's A2A and MCP doors on the hub — the resource identifier (the
//!   audience a token must name), the member issuers a client may get a
//!   token from, and the scopes the rules ask of that provider's callers.
//! * A 401 from those doors carries `WWW-Authenticate: Bearer
//!   resource_metadata="…"` pointing at that document (RFC 9728 §5.1), and
//!   `error="invalid_token"` when a token was presented and refused.
//!
//! The document says nothing a member-less stranger could not learn from
//! the public card: issuers are public by nature, and it is served for
//! any provider id whether or not it exists (so it tells nobody which do).

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{DoorState, Identity};
use crate::registry::Loaded;

/// Where the documents are served.
pub const PREFIX: &str = "/.well-known/oauth-protected-resource";

/// Which door of a provider a document is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Door {
    /// `/a2a/{provider}` (both A2A bindings, and `/gateway/v1/{provider}`).
    A2a,
    /// `/mcp/{provider}`.
    Mcp,
}

impl Door {
    fn segment(self) -> &'static str {
        match self {
            Door::A2a => "a2a",
            Door::Mcp => "mcp",
        }
    }

    /// The door and provider a request path is for, if it is one of them.
    pub fn of_path(path: &str) -> Option<(Door, &str)> {
        let (door, rest) = if let Some(rest) = path.strip_prefix("/a2a/") {
            (Door::A2a, rest)
        } else if let Some(rest) = path.strip_prefix("/mcp/") {
            (Door::Mcp, rest)
        } else if let Some(rest) = path.strip_prefix("/gateway/v1/") {
            (Door::A2a, rest)
        } else {
            return None;
        };
        let provider = rest
            .split('/')
            .next()
            .filter(|p| exchange::id::is_valid(p))?;
        Some((door, provider))
    }
}

/// The resource identifier of `provider`'s `door` on the hub at `base`.
pub fn resource(base: &str, door: Door, provider: &str) -> String {
    format!(
        "{}/{}/{provider}",
        base.trim_end_matches('/'),
        door.segment()
    )
}

/// The URL of the metadata document for that resource.
pub fn document_url(base: &str, door: Door, provider: &str) -> String {
    format!(
        "{}{PREFIX}/{}/{provider}",
        base.trim_end_matches('/'),
        door.segment()
    )
}

/// The metadata document (RFC 9728 §2).
pub fn document(loaded: &Loaded, base: &str, door: Door, provider: &str) -> serde_json::Value {
    let mut issuers: Vec<&str> = Vec::new();
    for s in &loaded.topology.systems {
        if let Some(oidc) = &s.oidc {
            if !issuers.contains(&oidc.issuer.as_str()) {
                issuers.push(&oidc.issuer);
            }
        }
    }
    let mut scopes: Vec<&str> = loaded
        .topology
        .rules
        .iter()
        .filter(|r| r.provider == provider)
        .filter_map(|r| r.scope.as_deref())
        .collect();
    scopes.sort_unstable();
    scopes.dedup();
    json!({
        "resource": resource(base, door, provider),
        "authorization_servers": issuers,
        "bearer_methods_supported": ["header"],
        "scopes_supported": scopes,
        "resource_name": format!("{provider} through the Wall Street hub"),
    })
}

/// `GET /.well-known/oauth-protected-resource/{door}/{provider}`.
pub async fn protected_resource(
    State(state): State<DoorState>,
    Path((door, provider)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let door = match door.as_str() {
        "a2a" => Door::A2a,
        "mcp" => Door::Mcp,
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    if !exchange::id::is_valid(&provider) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let loaded = state.registry.snapshot();
    let body = document(&loaded, &state.identity.base(&headers), door, &provider);
    let mut response = Json(body).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// The `WWW-Authenticate` value of a 401 on `path`: the bearer challenge
/// with the metadata document's URL, and `error="invalid_token"` when the
/// request presented a token.
pub fn challenge(
    identity: &Identity,
    headers: &HeaderMap,
    path: &str,
    presented: bool,
) -> Option<HeaderValue> {
    let (door, provider) = Door::of_path(path)?;
    let url = document_url(&identity.base(headers), door, provider);
    let error = if presented {
        r#", error="invalid_token""#
    } else {
        ""
    };
    HeaderValue::from_str(&format!(r#"Bearer resource_metadata="{url}"{error}"#)).ok()
}
