//! Providers at the root of their own host.
//!
//! Every provider is reached at `/a2a/{provider}` on the hub's addresses.
//! It is also a host of its own, `{provider}.{domain}` on the same schemes
//! and ports ([`PublicUrls::provider_host`]): there its public card is at
//! `/.well-known/agent-card.json` (RFC 8615's place, where an SDK that
//! resolves the card against the root of the URL it was given looks),
//! JSON-RPC at `/` and HTTP+JSON at `/rest`. So a client given nothing but
//! `http://vendorcorp.localhost:3000` finds the card, and the card names
//! that host as the provider's interfaces.
//!
//! A request on such a host is the same request as on the provider's
//! path: [`rewrite`] puts `/a2a/{provider}` before its path, and the
//! machine routes answer it (the auth chain, the rule, the pipeline; an
//! unknown provider is the same 404 as on the path). Two paths are kept:
//! the hub's JWKS, which the card's signature names, and A2A's gRPC
//! service, which serves every provider at one path and reads the
//! provider from the call (its `tenant`, else this host). A provider host
//! has no canvas and no login: every path on it is a machine path.
//!
//! The host names only what the hub's configuration does: a domain the
//! operator set and the ports of the hub's own addresses. A `Host` under
//! any other name is not a provider's, whatever its first label says.

use axum::extract::Request;
use axum::http::Uri;

use super::machine::PublicUrls;

/// The one path a provider's host answers as the hub: the keys its card's
/// signature is checked with.
const KEPT: [&str; 1] = [exchange::jws::JWKS_PATH];

/// When `request` came by a provider's own host, its path moved under
/// that provider's (`/` → `/a2a/{p}`, `/x` → `/a2a/{p}/x`, the query
/// kept); any other request untouched.
pub fn rewrite(public: Option<&PublicUrls>, request: &mut Request) {
    let Some(host) = public.and_then(|p| p.provider_host(request.headers())) else {
        return;
    };
    let path = request.uri().path();
    let grpc = path
        .strip_prefix(super::machine::GRPC_SERVICE)
        .is_some_and(|rest| rest.starts_with('/'));
    if KEPT.contains(&path) || grpc {
        return;
    }
    let path = if path == "/" { "" } else { path };
    let moved = match request.uri().query() {
        Some(q) => format!("/a2a/{}{path}?{q}", host.provider),
        None => format!("/a2a/{}{path}", host.provider),
    };
    let mut parts = request.uri().clone().into_parts();
    if let Ok(pq) = moved.parse() {
        parts.path_and_query = Some(pq);
        if let Ok(uri) = Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
}

#[cfg(test)]
#[path = "provider_hosts_tests.rs"]
mod tests;
