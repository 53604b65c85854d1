//! Reading a would-be member from the hub's side: its agent card and its
//! `/health` identity, fetched with the limits a request to an address an
//! operator typed needs.
//!
//! - `http` or `https` only, no credentials in the URL;
//! - out by the egress path for onboarding (`crate::net::egress`, purpose
//!   `Onboarding`, `WS_ONBOARD_NETWORKS`): the host resolved when the
//!   connection is made and the address connected to checked, never a
//!   second lookup;
//! - redirects followed only on the same scheme, host and port, at most
//!   [`MAX_REDIRECTS`], each hop a new request through the egress path
//!   (checked again); a redirect elsewhere is refused, not followed;
//! - an answer larger than [`MAX_BYTES`] is refused at its first byte
//!   over, one that is not a JSON object is refused with what was wrong;
//! - the whole read within [`TIMEOUT`].
//!
//! Identity is checked the way the prober checks it every second once the
//! system is a member (`health::prober`): `/health` must answer as a Wall
//! Street peer and name its system.

use std::time::Duration;

use exchange::health::{CARD_PATH, HEALTH_PATH, PEER_SERVICE};
use exchange::text::clip;
use reqwest::Url;
use serde_json::Value;

use crate::net::egress::{Egress, FetchError as EgressFetchError, Fetcher, Limits, Purpose};

/// The largest card (or `/health` answer) the hub reads.
pub const MAX_BYTES: usize = 64 * 1024;
/// How long one fetch (redirects included) may take.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// How many same-host redirects are followed.
pub const MAX_REDIRECTS: usize = 3;

/// Why a card could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("`{url}` is not a base URL the hub can fetch from: {why}")]
    BadUrl { url: String, why: String },
    #[error("the hub may not fetch {url}: {why}")]
    Address { url: String, why: String },
    #[error("{url} redirected to {to}, another host; onboarding follows redirects on the same host only")]
    RedirectElsewhere { url: String, to: String },
    #[error("{url} redirected more than {MAX_REDIRECTS} times")]
    TooManyRedirects { url: String },
    #[error("{what} at {url} is larger than {MAX_BYTES} bytes; the hub reads no more")]
    TooLarge { what: &'static str, url: String },
    #[error("{what} at {url} is not a JSON object: {why}")]
    NotJson {
        what: &'static str,
        url: String,
        why: String,
    },
    #[error("{what} at {url} answered HTTP {status}")]
    Status {
        what: &'static str,
        url: String,
        status: u16,
    },
    #[error("{url} could not be reached: {why}")]
    Unreachable { url: String, why: String },
    #[error("{url} did not answer within {} s", TIMEOUT.as_secs())]
    Timeout { url: String },
    #[error("identity mismatch: {why}")]
    Identity { why: String },
}

/// A would-be member as the hub read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Fetched {
    /// `scheme://host:port`, as the topology will name it.
    pub base_url: String,
    /// The system id its `/health` answered with.
    pub system: String,
    /// Its agent card (a JSON object).
    pub card: Value,
}

/// `raw` as a topology base URL: `http(s)://host:port`. The card's own URL
/// (`…/.well-known/agent-card.json`) is accepted and cut back to its base.
pub fn base_url(raw: &str) -> Result<Url, FetchError> {
    let bad = |why: &str| FetchError::BadUrl {
        url: clip(raw.trim(), 200),
        why: why.to_string(),
    };
    let url = Url::parse(raw.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("only http and https are fetched"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("it names no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("it carries credentials"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("a base URL has no query or fragment"));
    }
    if !matches!(url.path(), "/" | "" | CARD_PATH) {
        return Err(bad(
            "a base URL has no path (the card is read at /.well-known/agent-card.json under it)",
        ));
    }
    let port = url
        .port_or_known_default()
        .ok_or_else(|| bad("it names no port"))?;
    let host = match url.host() {
        Some(url::Host::Ipv6(v6)) => format!("[{v6}]"),
        _ => url.host_str().unwrap_or_default().to_string(),
    };
    Url::parse(&format!("{}://{host}:{port}", url.scheme())).map_err(|e| bad(&e.to_string()))
}

/// Reads the card and the identity of the server at `raw`, going out by
/// `egress`.
pub async fn discover(egress: &Egress, raw: &str) -> Result<Fetched, FetchError> {
    let base = base_url(raw)?;
    let client = client(egress, &base)?;
    let system = identity_with(&client, &base).await?;
    let card_url = join(&base, CARD_PATH)?;
    let card = get_json(&client, card_url, "the agent card").await?;
    Ok(Fetched {
        base_url: base.as_str().trim_end_matches('/').to_string(),
        system,
        card,
    })
}

/// The system id the server at `base` answers `/health` with; refused
/// unless it answers as a Wall Street peer.
pub async fn identity(egress: &Egress, base: &Url) -> Result<String, FetchError> {
    identity_with(&client(egress, base)?, base).await
}

/// Onboarding's client: out by `egress` for onboarding.
fn client(egress: &Egress, base: &Url) -> Result<Fetcher, FetchError> {
    egress
        .fetcher(Purpose::Onboarding, reqwest::Client::builder())
        .map_err(|e| FetchError::Unreachable {
            url: base.to_string(),
            why: e.to_string(),
        })
}

async fn identity_with(client: &Fetcher, base: &Url) -> Result<String, FetchError> {
    let health = get_json(client, join(base, HEALTH_PATH)?, "/health").await?;
    let origin = base.as_str().trim_end_matches('/');
    match health.get("service").and_then(Value::as_str) {
        Some(PEER_SERVICE) => {}
        Some(other) => {
            return Err(FetchError::Identity {
                why: format!(
                    "{origin} answers as {}, not as a Wall Street peer ({PEER_SERVICE})",
                    clip(other, 80)
                ),
            })
        }
        None => {
            return Err(FetchError::Identity {
                why: format!("{origin}/health does not say which service answers"),
            })
        }
    }
    health
        .get("system")
        .and_then(Value::as_str)
        .filter(|id| exchange::id::is_valid(id))
        .map(str::to_string)
        .ok_or_else(|| FetchError::Identity {
            why: format!("{origin}/health names no valid system id"),
        })
}

fn join(base: &Url, path: &str) -> Result<Url, FetchError> {
    base.join(path).map_err(|e| FetchError::BadUrl {
        url: base.to_string(),
        why: e.to_string(),
    })
}

/// GETs `url` as a JSON object through `client`, following same-origin
/// redirects.
async fn get_json(client: &Fetcher, url: Url, what: &'static str) -> Result<Value, FetchError> {
    let shown = url.to_string();
    match tokio::time::timeout(TIMEOUT, get_json_inner(client, url, what)).await {
        Ok(result) => result,
        Err(_) => Err(FetchError::Timeout { url: shown }),
    }
}

async fn get_json_inner(
    client: &Fetcher,
    first: Url,
    what: &'static str,
) -> Result<Value, FetchError> {
    let limits = Limits {
        max_bytes: MAX_BYTES,
        timeout: TIMEOUT,
    };
    let mut url = first.clone();
    for _ in 0..=MAX_REDIRECTS {
        let shown = url.to_string();
        let fetched = client
            .get(url.as_str(), "application/json", limits)
            .await
            .map_err(|e| match e {
                EgressFetchError::Refused(refusal) => FetchError::Address {
                    url: shown.clone(),
                    why: refusal.to_string(),
                },
                EgressFetchError::TooLarge { .. } => FetchError::TooLarge {
                    what,
                    url: shown.clone(),
                },
                EgressFetchError::Timeout { .. } => FetchError::Timeout { url: shown.clone() },
                EgressFetchError::Transport(e) => FetchError::Unreachable {
                    url: shown.clone(),
                    why: exchange::http::transport_failure(&shown, &e).detail,
                },
                EgressFetchError::BadUrl { .. } => FetchError::BadUrl {
                    url: shown.clone(),
                    why: "only http and https are fetched".into(),
                },
            })?;
        let status = fetched.status;
        if status.is_redirection() {
            let to = fetched
                .location
                .as_deref()
                .and_then(|loc| url.join(loc).ok())
                .ok_or_else(|| FetchError::Status {
                    what,
                    url: shown.clone(),
                    status: status.as_u16(),
                })?;
            let same = to.scheme() == first.scheme()
                && to.host_str() == first.host_str()
                && to.port_or_known_default() == first.port_or_known_default();
            if !same {
                return Err(FetchError::RedirectElsewhere {
                    url: shown,
                    to: clip(to.as_str(), 200),
                });
            }
            url = to;
            continue;
        }
        if status != reqwest::StatusCode::OK {
            return Err(FetchError::Status {
                what,
                url: shown,
                status: status.as_u16(),
            });
        }
        let value: Value =
            serde_json::from_slice(&fetched.body).map_err(|e| FetchError::NotJson {
                what,
                url: shown.clone(),
                why: e.to_string(),
            })?;
        if !value.is_object() {
            return Err(FetchError::NotJson {
                what,
                url: shown,
                why: "it is JSON, but not an object".into(),
            });
        }
        return Ok(value);
    }
    Err(FetchError::TooManyRedirects {
        url: first.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_is_cut_to_scheme_host_and_port() {
        let ok = |raw: &str| base_url(raw).map(|u| u.to_string());
        assert_eq!(
            ok("http://127.0.0.1:3104").as_deref(),
            Ok("http://127.0.0.1:3104/")
        );
        assert_eq!(
            ok(" http://127.0.0.1:3104/.well-known/agent-card.json ").as_deref(),
            Ok("http://127.0.0.1:3104/")
        );
        assert_eq!(
            ok("https://[::1]:8443/").as_deref(),
            Ok("https://[::1]:8443/")
        );
        for (raw, why) in [
            ("ftp://127.0.0.1:21", "only http and https"),
            ("http://u:p@127.0.0.1:3104", "credentials"),
            ("http://127.0.0.1:3104/a2a", "no path"),
            ("http://127.0.0.1:3104/?x=1", "no query"),
            ("not a url", "relative URL"),
        ] {
            let e = base_url(raw).expect_err(raw).to_string();
            assert!(e.contains(why), "{raw}: {e}");
        }
    }

    #[tokio::test]
    async fn a_disallowed_address_is_refused_before_any_request() {
        let e = discover(&Egress::default(), "http://169.254.169.254:80")
            .await
            .expect_err("refused");
        assert!(matches!(e, FetchError::Address { .. }), "{e}");
        assert!(e.to_string().contains("a cloud metadata address"), "{e}");
        let e = discover(&Egress::default(), "http://0x0a.1:8080")
            .await
            .expect_err("refused");
        assert!(
            e.to_string()
                .contains("10.0.0.1 is a private (RFC 1918) address"),
            "{e}"
        );
    }
}
