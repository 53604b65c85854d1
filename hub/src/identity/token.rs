//! One access token, checked: is it a JWT a member's issuer signed for
//! this hub, still valid, issued to one of that member's clients — and
//! which system, with which scopes, does it name?
//!
//! The checks, in order, each with the refusal a caller reads (always
//! `AUTH_REJECTED`; no message repeats the token or a key):
//!
//! | check | refusal |
//! |---|---|
//! | three base64url parts, a JSON header and claims | the access token is not a signed JWT |
//! | `alg` is a signature algorithm (never `none`, never a shared secret) | the access token's alg `X` is not accepted |
//! | `iss` is the issuer of a member system | no member system trusts the access token's issuer |
//! | the issuer's JWKS holds the header's `kid` | the issuer's keys do not include the access token's key |
//! | `alg` fits that key | the access token's alg does not fit its key |
//! | the signature | the access token's signature does not verify |
//! | `exp`, `nbf` (with [`CLOCK_SKEW_SECONDS`]) | the access token has expired / is not valid yet |
//! | `aud` names this hub | the access token is not for this hub (aud) |
//! | `client_id` (or `azp`) is a client of the member | the access token's client is not a member system's |

use base64::Engine;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;

use super::keys::IssuerKeys;
use crate::registry::Loaded;
use exchange::reason::{NotConnected, ReasonCode};

/// How far the hub's clock and an issuer's may disagree, in seconds.
pub const CLOCK_SKEW_SECONDS: u64 = 30;

/// What a verified access token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The member system it names.
    pub system: String,
    /// The OAuth client it was issued to.
    pub client_id: String,
    /// The scopes it carries (`scope`, or `scp`).
    pub scopes: Vec<String>,
    /// Its `exp` (seconds since the Unix epoch).
    pub expires_at: u64,
}

impl Member {
    /// Whether the token carries `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// What a token's header and claims say before anything is verified:
/// enough to find the issuer's keys, never enough to trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peek {
    /// The claimed issuer.
    pub issuer: String,
    /// The header's key id.
    pub kid: Option<String>,
    /// The header's `alg`, as written.
    pub alg: String,
}

#[derive(Deserialize)]
struct RawHeader {
    alg: String,
    #[serde(default)]
    kid: Option<String>,
}

#[derive(Deserialize)]
struct RawIssuer {
    iss: String,
}

impl Peek {
    /// The header and issuer of `token`, if it has the shape of a JWS
    /// compact JWT; `None` for anything else (a static token, say).
    pub fn of(token: &str) -> Option<Peek> {
        let mut parts = token.split('.');
        let (header, claims, _sig) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header: RawHeader = serde_json::from_slice(&b64.decode(header).ok()?).ok()?;
        let claims: RawIssuer = serde_json::from_slice(&b64.decode(claims).ok()?).ok()?;
        Some(Peek {
            issuer: claims.iss,
            kid: header.kid,
            alg: header.alg,
        })
    }
}

/// `aud`: one string or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    fn iter(&self) -> impl Iterator<Item = &str> {
        let all: &[String] = match self {
            Audience::One(one) => std::slice::from_ref(one),
            Audience::Many(many) => many,
        };
        all.iter().map(String::as_str)
    }
}

/// The claims the hub reads.
#[derive(Debug, Deserialize)]
struct Claims {
    exp: u64,
    #[serde(default)]
    aud: Option<Audience>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Vec<String>>,
}

fn rejected(why: impl Into<String>) -> NotConnected {
    NotConnected::new(ReasonCode::AuthRejected, why)
}

/// Checks `token` (see the module doc) and names the member system it
/// speaks for. `hub_bases` are the hub's public addresses (configured,
/// never a request's `Host`: [`crate::net::machine::PublicUrls`]): an audience
/// equal to one, or to any URL under one (`{base}/a2a/vendorcorp`,
/// `{base}/mcp/…`), is this hub; so is any audience the member's
/// `oidc.audience` lists.
pub fn verify(
    token: &str,
    registry: &Loaded,
    keys: &IssuerKeys,
    hub_bases: &[String],
) -> Result<Member, NotConnected> {
    let peek = Peek::of(token).ok_or_else(|| rejected("the access token is not a signed JWT"))?;
    let alg: Algorithm = match peek.alg.parse() {
        Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) | Err(_) => {
            return Err(rejected(format!(
                "the access token's alg `{}` is not accepted",
                printable(&peek.alg)
            )))
        }
        Ok(alg) => alg,
    };
    let members: Vec<_> = registry
        .topology
        .systems
        .iter()
        .filter_map(|s| Some((s, s.oidc.as_ref()?)))
        .filter(|(_, oidc)| oidc.issuer == peek.issuer)
        .collect();
    if members.is_empty() {
        return Err(rejected(
            "no member system trusts the access token's issuer",
        ));
    }
    let set = keys.of(&peek.issuer);
    let key = set
        .as_deref()
        .and_then(|set| set.key(peek.kid.as_deref()))
        .ok_or_else(|| rejected("the issuer's keys do not include the access token's key"))?;
    if !key.algorithms.contains(&alg) {
        return Err(rejected("the access token's alg does not fit its key"));
    }
    let mut validation = Validation::new(alg);
    validation.algorithms = vec![alg];
    validation.leeway = CLOCK_SKEW_SECONDS;
    validation.validate_nbf = true;
    validation.validate_aud = false;
    validation.set_issuer(&[peek.issuer.as_str()]);
    validation.set_required_spec_claims(&["exp", "iss"]);
    let claims = jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation)
        .map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            rejected(match e.kind() {
                K::ExpiredSignature => "the access token has expired",
                K::ImmatureSignature => "the access token is not valid yet (nbf)",
                K::InvalidSignature => "the access token's signature does not verify",
                K::MissingRequiredClaim(_) => "the access token lacks `exp` or `iss`",
                K::InvalidAlgorithm => "the access token's alg does not fit its key",
                K::InvalidIssuer => "no member system trusts the access token's issuer",
                _ => "the access token is not a valid JWT",
            })
        })?
        .claims;
    let client = claims
        .client_id
        .as_deref()
        .or(claims.azp.as_deref())
        .ok_or_else(|| rejected("the access token names no client (client_id or azp)"))?;
    let (system, oidc) = members
        .into_iter()
        .find(|(_, oidc)| oidc.client_ids.iter().any(|c| c == client))
        .ok_or_else(|| rejected("the access token's client is not a member system's"))?;
    let for_this_hub = claims.aud.as_ref().is_some_and(|aud| {
        aud.iter().any(|a| {
            oidc.audience.iter().any(|accepted| accepted == a)
                || hub_bases.iter().any(|base| {
                    let base = base.trim_end_matches('/');
                    a.trim_end_matches('/') == base
                        || a.strip_prefix(base)
                            .is_some_and(|rest| rest.starts_with('/'))
                })
        })
    });
    if !for_this_hub {
        return Err(rejected("the access token is not for this hub (aud)"));
    }
    let scopes = match (claims.scope, claims.scp) {
        (Some(scope), _) => scope.split_whitespace().map(str::to_string).collect(),
        (None, Some(scp)) => scp,
        (None, None) => Vec::new(),
    };
    Ok(Member {
        system: system.id.clone(),
        client_id: client.to_string(),
        scopes,
        expires_at: claims.exp,
    })
}

/// A header value fit to repeat in a refusal: short, printable ASCII.
fn printable(raw: &str) -> String {
    raw.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(16)
        .collect()
}

#[cfg(test)]
#[path = "token_tests.rs"]
mod tests;
