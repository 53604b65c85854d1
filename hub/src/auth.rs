//! The auth chain in front of the gateway (DESIGN.md §2, "auth chain").
//!
//! Pluggable layers, checked in order, each a small type implementing
//! [`AuthLayer`]: the IP allowlist of the claimed caller, then the caller's
//! bearer token — the static token from the env var the topology names
//! (compared in constant time), or an access token the caller's own
//! identity provider signed ([`crate::identity`]), with the scope its rule
//! asks — then the client certificate the caller presented over TLS
//! (a pinned key, or its own CA's), where its entry registers one or the
//! hub asks it of everyone. The first layer to refuse decides the reason
//! code.
//!
//! Tokens are read from the environment once per registry generation
//! ([`Tokens`](crate::registry::Tokens)), never logged, and never part of an error.

use axum::http::{header::AUTHORIZATION, HeaderMap};
use subtle::{Choice, ConstantTimeEq};

use crate::identity::{token::Peek, Identity};
use crate::net::listen::Peer;
use crate::registry::model::System;
use crate::registry::Loaded;
use exchange::reason::{NotConnected, ReasonCode};

/// What a layer sees of one incoming call.
#[derive(Debug, Clone, Copy)]
pub struct AuthContext<'a> {
    /// The claimed caller (`X-Caller-System`); empty if absent.
    pub caller: &'a str,
    /// Who is at the other end: the client's address and its TLS
    /// certificate, when the server knows them.
    pub peer: &'a Peer,
    /// The request headers.
    pub headers: &'a HeaderMap,
    /// The registry generation the call was admitted under (topology and
    /// tokens).
    pub registry: &'a Loaded,
    /// The member issuers' keys, for an access token.
    pub identity: &'a Identity,
    /// What the call is for, when it is a capability call: the scope a
    /// rule asks of an access token is checked against it.
    pub target: Option<Target<'a>>,
}

/// The provider and capability a call is for.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub provider: &'a str,
    pub capability: &'a str,
}

impl<'a> AuthContext<'a> {
    /// The claimed caller's topology entry. An unknown (or missing, or the
    /// hub's own) id is refused the same way by every layer.
    fn caller_system(&self) -> Result<&'a System, NotConnected> {
        if self.caller.is_empty() {
            return Err(NotConnected::new(
                ReasonCode::AuthRejected,
                "no caller: no bearer token the hub knows, and no X-Caller-System header",
            ));
        }
        self.registry
            .topology
            .system(self.caller)
            .ok_or_else(|| NotConnected::new(ReasonCode::AuthRejected, "unknown caller system"))
    }
}

/// One layer of the chain. Layers are synchronous and cheap: they run on
/// every call before anything is forwarded.
pub trait AuthLayer: Send + Sync {
    /// A stable name for logs and tests.
    fn name(&self) -> &'static str;
    /// Lets the call through, or says why not.
    fn check(&self, cx: &AuthContext<'_>) -> Result<(), NotConnected>;
}

/// Layer 1: the caller's source address must be in its `ip_allowlist`.
#[derive(Debug, Default, Clone, Copy)]
pub struct IpAllowlist;

impl AuthLayer for IpAllowlist {
    fn name(&self) -> &'static str {
        "ip_allowlist"
    }

    fn check(&self, cx: &AuthContext<'_>) -> Result<(), NotConnected> {
        let system = cx.caller_system()?;
        let Some(addr) = cx.peer.addr else {
            return Err(NotConnected::new(
                ReasonCode::IpNotAllowed,
                "source address unknown",
            ));
        };
        // An IPv4 client on a dual-stack socket shows up as ::ffff:a.b.c.d.
        let ip = addr.ip().to_canonical();
        if system.ip_allowlist.iter().any(|net| net.contains(&ip)) {
            Ok(())
        } else {
            Err(NotConnected::new(
                ReasonCode::IpNotAllowed,
                format!("{ip} is not in the allowlist of {}", system.id),
            ))
        }
    }
}

/// Layer 2: `Authorization: Bearer <token>` must be the caller's static
/// token (the value of its `token_env` environment variable), or an access
/// token of the caller's own identity provider that names this caller and
/// carries the scope its rule asks ([`crate::identity::token`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct BearerToken;

impl AuthLayer for BearerToken {
    fn name(&self) -> &'static str {
        "bearer_token"
    }

    fn check(&self, cx: &AuthContext<'_>) -> Result<(), NotConnected> {
        let system = cx.caller_system()?;
        let reject = |why: &str| Err(NotConnected::new(ReasonCode::AuthRejected, why));
        let expected = cx.registry.tokens.of(&system.id);
        if expected.is_none() && system.oidc.is_none() {
            // The hub cannot verify a caller it holds no credential for.
            return reject("the hub holds no token for this caller");
        }
        let Some(value) = cx.headers.get(AUTHORIZATION) else {
            return reject("missing bearer token");
        };
        let Some(given) = value.to_str().ok().and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        }) else {
            return reject("malformed Authorization header");
        };
        let given = given.trim();
        if let Some(expected) = expected {
            if constant_time_eq(given.as_bytes(), expected.as_bytes()) {
                return Ok(());
            }
        }
        if system.oidc.is_none() || Peek::of(given).is_none() {
            return reject("bearer token does not match");
        }
        let member = cx.identity.verify(given, cx.registry, cx.headers)?;
        if member.system != system.id {
            return reject("the access token names another system");
        }
        let scope = cx.target.and_then(|t| {
            cx.registry
                .topology
                .required_scope(&system.id, t.capability, t.provider)
        });
        match scope {
            Some(scope) if !member.has_scope(scope) => Err(NotConnected::new(
                ReasonCode::AuthRejected,
                format!("the access token lacks the scope `{scope}` this capability requires"),
            )),
            _ => Ok(()),
        }
    }
}

/// Layer 3: the client certificate. A system whose entry registers one
/// (`mtls`: pinned keys or its CA), and every system when
/// `hub.auth.mtls` is on, must have presented it over TLS
/// (`crate::net::tls`): its key among the pins, or issued by its CA.
#[derive(Debug, Default, Clone, Copy)]
pub struct MutualTls;

impl AuthLayer for MutualTls {
    fn name(&self) -> &'static str {
        "mtls"
    }

    fn check(&self, cx: &AuthContext<'_>) -> Result<(), NotConnected> {
        let system = cx.caller_system()?;
        let reject = |why: String| Err(NotConnected::new(ReasonCode::AuthRejected, why));
        let Some(registered) = &system.mtls else {
            if cx.registry.topology.hub.auth.mtls {
                return reject(format!(
                    "mutual TLS is required and no client certificate is registered for {}",
                    system.id
                ));
            }
            return Ok(());
        };
        let Some(presented) = &cx.peer.certificate else {
            return reject(format!(
                "no client certificate: {} must call over TLS with its certificate",
                system.id
            ));
        };
        let pinned = presented
            .spki_sha256()
            .is_some_and(|pin| registered.spki_sha256.iter().any(|p| p == pin));
        let issued = || {
            cx.registry
                .member_cas
                .of(&system.id)
                .is_some_and(|ca| ca.issued(presented))
        };
        if pinned || issued() {
            Ok(())
        } else {
            reject(format!("the client certificate is not {}'s", system.id))
        }
    }
}

/// The ordered chain.
pub struct AuthChain {
    layers: Vec<Box<dyn AuthLayer>>,
}

impl std::fmt::Debug for AuthChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.layer_names()).finish()
    }
}

impl Default for AuthChain {
    fn default() -> Self {
        Self::standard()
    }
}

impl AuthChain {
    /// DESIGN.md order: IP allowlist → bearer token → mTLS.
    pub fn standard() -> Self {
        Self::new(vec![
            Box::new(IpAllowlist),
            Box::new(BearerToken),
            Box::new(MutualTls),
        ])
    }

    /// A chain of the given layers, checked in the given order.
    pub fn new(layers: Vec<Box<dyn AuthLayer>>) -> Self {
        Self { layers }
    }

    /// The layers' names in order.
    pub fn layer_names(&self) -> Vec<&'static str> {
        self.layers.iter().map(|l| l.name()).collect()
    }

    /// Runs every layer in order; the first refusal wins.
    pub fn check(&self, cx: &AuthContext<'_>) -> Result<(), NotConnected> {
        self.layers.iter().try_for_each(|layer| layer.check(cx))
    }
}

/// Why a request's credential names no system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unidentified {
    /// No `Authorization` header.
    NoCredential,
    /// An `Authorization` header that is not `Bearer <token>`.
    Malformed,
    /// A bearer token that is no system's static token and not shaped as
    /// an access token.
    UnknownToken,
    /// A token shaped as an access token (three dot-separated parts) that
    /// does not verify: malformed, forged, expired, or from no member's
    /// issuer.
    InvalidAccessToken,
}

impl Unidentified {
    /// The label `/metrics` and the trail's summary use.
    pub fn as_str(self) -> &'static str {
        match self {
            Unidentified::NoCredential => "no_credential",
            Unidentified::Malformed => "malformed_credential",
            Unidentified::UnknownToken => "unknown_token",
            Unidentified::InvalidAccessToken => "invalid_access_token",
        }
    }
}

/// The system the request's `Authorization: Bearer` header names, or why
/// it names none. Every system's static token is compared, each in
/// constant time, so the answer's timing does not tell which system came
/// close; a token that is none of them and has a JWT's shape is checked as
/// a member's access token.
pub fn presented<'a>(
    headers: &HeaderMap,
    registry: &'a Loaded,
    identity: &Identity,
) -> Result<&'a System, Unidentified> {
    let Some(presented) = exchange::envelope::bearer_token(headers) else {
        return Err(if headers.contains_key(AUTHORIZATION) {
            Unidentified::Malformed
        } else {
            Unidentified::NoCredential
        });
    };
    let given = presented.as_bytes();
    let mut found = None;
    for (id, expected) in registry.tokens.iter() {
        if constant_time_eq(given, expected.as_bytes()) && found.is_none() {
            found = Some(id);
        }
    }
    let shaped_as_access_token = presented.split('.').count() == 3;
    let member;
    if found.is_none() && Peek::of(presented).is_some() {
        member = identity
            .verify(presented, registry, headers)
            .map_err(|_| Unidentified::InvalidAccessToken)?;
        found = Some(member.system.as_str());
    }
    found
        .and_then(|id| registry.topology.system(id))
        .ok_or(if shaped_as_access_token {
            Unidentified::InvalidAccessToken
        } else {
            Unidentified::UnknownToken
        })
}

/// The system whose token the request's `Authorization: Bearer` header
/// carries ([`presented`]), for a binding where the token alone names the
/// caller (the A2A surface and MCP: `X-Caller-System` is optional there).
/// `None` for no header, a malformed one, or a token that names nobody
/// (the auth chain then says why, in the call's audit record).
pub fn caller_by_token<'a>(
    headers: &HeaderMap,
    registry: &'a Loaded,
    identity: &Identity,
) -> Option<&'a System> {
    presented(headers, registry, identity).ok()
}

/// Compares a presented token with the expected one in time that depends
/// only on the presented token's length, never on where they differ or on
/// the expected token's length.
pub fn constant_time_eq(given: &[u8], expected: &[u8]) -> bool {
    let mut same = Choice::from(1u8);
    for (i, g) in given.iter().enumerate() {
        let e = expected.get(i).copied().unwrap_or(0);
        same &= g.ct_eq(&e);
    }
    let len_same = (given.len() as u64).ct_eq(&(expected.len() as u64));
    bool::from(same & len_same)
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
