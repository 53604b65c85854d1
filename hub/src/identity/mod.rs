//! Member identity from each company's own identity provider (DESIGN.md
//! §2, "auth chain": the token layer).
//!
//! A member system may name its OpenID issuer in the topology (`oidc:
//! issuer, audience, client_ids`). A client of that system then calls the
//! hub with an access token its issuer signed (a JWT, typically from the
//! client-credentials grant) instead of, or beside, the static token the
//! hub's operator gave it. The hub is an OAuth 2.1 *resource server*: it
//! validates the token, maps it to the system, and never passes it on
//! (the hub calls providers with its own credentials only).
//!
//! # Rooms
//!
//! - [`keys`]: each issuer's signing keys, read from its discovery document
//!   and JWKS through the egress path, cached, fetched again when a token
//!   names a key the cache lacks (so a key rotation at the issuer needs no
//!   restart here), at most so often per issuer;
//! - [`token`]: one access token checked against the registry: signature,
//!   `alg` allow-list, `iss`, `aud`, `exp`/`nbf` with a small skew, the
//!   client it was issued to, and the scopes it carries;
//! - [`metadata`]: what the hub publishes for clients to find the issuer:
//!   RFC 9728 protected-resource metadata, and the `WWW-Authenticate`
//!   challenge of a 401 that points at it.
//!
//! The auth chain stays synchronous: a middleware in front of the machine
//! routes ([`door`]) makes sure the keys a token needs are in the cache
//! before any door looks at the token, and gives every 401 of a provider's
//! door the challenge that points at its metadata.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Request, State};
use axum::http::header::{HOST, WWW_AUTHENTICATE};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use crate::registry::{Loaded, Registry};

pub mod keys;
pub mod metadata;
pub mod token;

pub use keys::IssuerKeys;
pub use token::Member;

/// The hub as a resource server: its issuers' keys and the URL it is known
/// by (its resource identifier, the audience a token is issued for).
#[derive(Debug, Default)]
pub struct Identity {
    keys: IssuerKeys,
    public: OnceLock<crate::net::machine::PublicUrls>,
    /// Tokens already verified, by their exact text: a client sends one
    /// token for many calls, and a call on the A2A surface asks twice
    /// (who calls, then the chain). See [`Identity::verify`].
    verified: Mutex<HashMap<Box<str>, Verified>>,
}

/// A token verified once, and under what.
#[derive(Debug, Clone)]
struct Verified {
    member: Member,
    /// The registry generation it was verified under.
    digest: String,
}

/// The base URL of a hub whose public addresses are not set yet.
const UNSET_BASE: &str = "http://public-url-not-set.invalid";

/// How many verified tokens are kept; past it the cache starts afresh.
const VERIFIED_KEPT: usize = 4096;

impl Identity {
    /// A resource server reading its issuers' keys through `egress`.
    pub fn new(egress: &crate::net::egress::Egress) -> Self {
        Self {
            keys: IssuerKeys::new(egress),
            public: OnceLock::new(),
            verified: Mutex::default(),
        }
    }

    /// The issuers' key cache.
    pub fn keys(&self) -> &IssuerKeys {
        &self.keys
    }

    /// Sets the hub's public addresses (`WS_PUBLIC_URL`, else the
    /// addresses it listens on), once; later calls are ignored.
    pub fn set_public(&self, public: crate::net::machine::PublicUrls) {
        let _ = self.public.set(public);
    }

    /// The hub's public addresses, when set.
    pub fn public(&self) -> Option<&crate::net::machine::PublicUrls> {
        self.public.get()
    }

    /// The hub's base URL for a request: the public address it reached
    /// the hub by when that is one of the hub's, else the primary
    /// ([`PublicUrls::for_request`](crate::net::machine::PublicUrls::for_request));
    /// never the request's `Host` as such. Before the addresses are set
    /// (a hub not listening yet), a placeholder no client could use.
    pub fn base(&self, headers: &axum::http::HeaderMap) -> String {
        self.public()
            .map(|p| p.for_request(headers).to_string())
            .unwrap_or_else(|| UNSET_BASE.to_string())
    }

    /// Checks a presented access token against the registry generation
    /// `registry`, for a request that reached the hub as `headers` say
    /// (see [`token::verify`]).
    pub fn verify(
        &self,
        token: &str,
        registry: &Loaded,
        headers: &axum::http::HeaderMap,
    ) -> Result<Member, exchange::reason::NotConnected> {
        let _ = headers;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if let Ok(cache) = self.verified.lock() {
            if let Some(hit) = cache.get(token) {
                // The same signed bytes, under the same topology and base,
                // before their `exp` (no skew granted here): the same answer.
                if hit.digest == registry.digest && hit.member.expires_at > now {
                    return Ok(hit.member.clone());
                }
            }
        }
        let bases = self.public().map(|p| p.all().to_vec()).unwrap_or_default();
        let member = token::verify(token, registry, &self.keys, &bases)?;
        if let Ok(mut cache) = self.verified.lock() {
            if cache.len() >= VERIFIED_KEPT {
                cache.clear();
            }
            cache.insert(
                token.into(),
                Verified {
                    member: member.clone(),
                    digest: registry.digest.clone(),
                },
            );
        }
        Ok(member)
    }
}

/// Whether `path` asks for an agent card (public or extended).
fn is_card_path(path: &str) -> bool {
    path.ends_with(exchange::health::CARD_PATH) || path.ends_with("/extendedAgentCard")
}

/// What the [`door`] middleware reads: the registry (which issuers are
/// members') and the hub's identity.
#[derive(Debug, Clone)]
pub struct DoorState {
    pub registry: Arc<Registry>,
    pub identity: Arc<Identity>,
}

/// Around every machine route. Before: if the request carries a bearer JWT
/// from a member's issuer whose key the cache does not hold, fetch that
/// issuer's keys (at most once every few seconds per issuer, see
/// [`keys`]); if it asks for an agent card, read every member issuer's
/// discovery document the cache does not hold fresh (its token endpoint
/// is on the card). After: a 401 of a provider's door gets the RFC 9728
/// challenge ([`metadata::challenge`]). Never refuses anything itself: the
/// door's auth chain decides.
pub async fn door(State(state): State<DoorState>, request: Request, next: Next) -> Response {
    let bearer = exchange::envelope::bearer_token(request.headers());
    let presented = bearer.is_some();
    if let Some(peek) = bearer.and_then(token::Peek::of) {
        let trusted = state
            .registry
            .snapshot()
            .topology
            .systems
            .iter()
            .any(|s| s.oidc.as_ref().is_some_and(|o| o.issuer == peek.issuer));
        if trusted {
            state
                .identity
                .keys()
                .ensure(&peek.issuer, peek.kid.as_deref())
                .await;
        }
    }
    if is_card_path(request.uri().path()) {
        // A card advertises each member issuer's token endpoint: read it
        // now if the hub never has (or not for a while), every issuer at
        // once (a slow one delays the card by its own fetch only).
        let issuers: Vec<String> = state
            .registry
            .snapshot()
            .topology
            .systems
            .iter()
            .filter_map(|s| s.oidc.as_ref().map(|o| o.issuer.clone()))
            .collect();
        let keys = state.identity.keys();
        futures::future::join_all(issuers.iter().map(|issuer| keys.ensure_discovered(issuer)))
            .await;
    }
    let uri = request.uri().clone();
    let host = request.headers().get(HOST).cloned();
    let mut response = next.run(request).await;
    if response.status() == StatusCode::UNAUTHORIZED {
        let mut headers = axum::http::HeaderMap::new();
        if let Some(host) = host {
            headers.insert(HOST, host);
        }
        if let Some(value) = metadata::challenge(&state.identity, &headers, uri.path(), presented) {
            response.headers_mut().insert(WWW_AUTHENTICATE, value);
        }
    }
    response
}
