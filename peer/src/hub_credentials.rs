//! What this peer presents to the hub when it calls through it: a bearer
//! token, and on a TLS hub a client certificate.
//!
//! - **The bearer** ([`Bearer`]): the static token in `token_env`, or, with
//!   `hub_oidc`, an access token from the member's own OpenID provider
//!   (OAuth 2.0 client credentials, RFC 6749 §4.4, the secret sent as HTTP
//!   Basic, `client_secret_basic`). The access token is kept until 30 s
//!   before its `expires_in` and fetched again after; a token answer
//!   without `expires_in` is used for one call. Concurrent calls wait for
//!   one fetch rather than each asking the provider.
//! - **TLS** (`hub_tls`): the hub's CA (then the only root trusted for the
//!   hub) and this peer's client certificate and key, on the reqwest client
//!   of every call to the hub ([`HubCredentials::http_client`]). rustls on
//!   ring, the same stack `exchange` already builds.
//!
//! Neither the token nor the client secret is ever logged or put in an
//! error: both are [`Token`]s (`Debug` redacted), and a refusal by the
//! token endpoint is reported by its URL, its HTTP status and the OAuth
//! `error` code only.

use crate::config::{HubOidcConfig, HubTlsConfig, PeerConfig};
use crate::Token;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long before its `expires_in` an access token stops being used: a
/// token about to expire is not sent on a call that may take seconds.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// The longest a token request may take.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(10);

/// Everything this peer presents to the hub.
#[derive(Debug, Clone)]
pub struct HubCredentials {
    /// The `Authorization: Bearer` of every call.
    pub bearer: Bearer,
    /// The TLS settings towards the hub, if any.
    tls: Option<HubTlsConfig>,
}

impl HubCredentials {
    /// From the config: the OpenID client when `hub_oidc` is set (its
    /// secret read from its env var now), else the static token from
    /// `token_env`; and `hub_tls` (read when the client is built). A
    /// missing env var is an error naming the var, never a value.
    pub fn from_config(config: &PeerConfig) -> anyhow::Result<Self> {
        let bearer = match &config.hub_oidc {
            Some(oidc) => Bearer::Oidc(Arc::new(OidcClient::new(oidc)?)),
            None => Bearer::Static(Token::from_env(&config.token_env)?),
        };
        Ok(Self {
            bearer,
            tls: config.hub_tls.clone(),
        })
    }

    /// The reqwest client for every call to the hub: the loopback tuning of
    /// [`client_builder`], plus the hub's CA and this peer's
    /// client certificate when `hub_tls` names them. An unreadable or
    /// invalid PEM file is an error naming the file.
    pub fn http_client(&self) -> anyhow::Result<reqwest::Client> {
        let mut builder = client_builder();
        if let Some(tls) = &self.tls {
            builder = builder.use_rustls_tls();
            if let Some(ca) = &tls.ca {
                let pem = read(ca, "the hub's CA (hub_tls.ca)")?;
                let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                    anyhow::anyhow!("{}: not a PEM certificate (hub_tls.ca): {e}", ca.display())
                })?;
                if certs.is_empty() {
                    anyhow::bail!("{}: holds no PEM certificate (hub_tls.ca)", ca.display());
                }
                // The hub is trusted by its CA alone.
                builder = builder.tls_built_in_root_certs(false);
                for cert in certs {
                    builder = builder.add_root_certificate(cert);
                }
            }
            if let (Some(cert), Some(key)) = (&tls.cert, &tls.key) {
                let mut pem = read(cert, "the client certificate (hub_tls.cert)")?;
                pem.push(b'\n');
                pem.extend(read(key, "the client key (hub_tls.key)")?);
                let identity = reqwest::Identity::from_pem(&pem).map_err(|e| {
                    anyhow::anyhow!(
                        "{} and {}: not a PEM certificate and its private key \
                         (hub_tls.cert, hub_tls.key): {e}",
                        cert.display(),
                        key.display()
                    )
                })?;
                builder = builder.identity(identity);
            }
        }
        builder
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the HTTP client for the hub: {e}"))
    }
}

fn read(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: cannot read {what}: {e}", path.display()))
}

/// Where the bearer token of a call comes from.
#[derive(Debug, Clone)]
pub enum Bearer {
    /// The static token of `token_env`.
    Static(Token),
    /// Access tokens from the member's OpenID provider (`hub_oidc`).
    Oidc(Arc<OidcClient>),
}

impl From<Token> for Bearer {
    fn from(token: Token) -> Self {
        Bearer::Static(token)
    }
}

impl Bearer {
    /// The token to send now: the static one, or a cached access token
    /// fetched again when it is within [`REFRESH_MARGIN`] of expiring.
    pub async fn token(&self) -> Result<Token, CredentialError> {
        match self {
            Bearer::Static(token) => Ok(token.clone()),
            Bearer::Oidc(client) => client.token().await,
        }
    }
}

/// Why no access token could be had. Names the token endpoint; never the
/// client secret nor any token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// The token endpoint could not be reached or did not answer in time.
    #[error("no access token for the hub: the token endpoint {url} cannot be reached: {cause}")]
    Unreachable {
        /// The token endpoint.
        url: String,
        /// The transport's root cause (`connection refused`).
        cause: String,
    },
    /// The token endpoint answered with an error status.
    #[error(
        "no access token for the hub: the token endpoint {url} answered HTTP {status}{}",
        oauth_error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default()
    )]
    Refused {
        /// The token endpoint.
        url: String,
        /// Its HTTP status.
        status: u16,
        /// The OAuth `error` code of its answer (`invalid_client`), if any.
        oauth_error: Option<String>,
    },
    /// The token endpoint answered 2xx without a usable bearer token.
    #[error("no access token for the hub: the token endpoint {url} answered HTTP {status} {why}")]
    Unusable {
        /// The token endpoint.
        url: String,
        /// Its HTTP status.
        status: u16,
        /// What was wrong with the answer.
        why: &'static str,
    },
}

/// A client-credentials client of the member's OpenID provider, with the
/// access token it holds.
pub struct OidcClient {
    token_url: String,
    client_id: String,
    secret: Token,
    scope: Option<String>,
    resource: Option<String>,
    http: reqwest::Client,
    cached: tokio::sync::Mutex<Option<Cached>>,
}

impl std::fmt::Debug for OidcClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcClient")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field("scope", &self.scope)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// An access token and until when it is used.
struct Cached {
    token: Token,
    until: Instant,
}

impl OidcClient {
    /// The client of `config`, its secret read from `client_secret_env`
    /// (missing or empty: an error naming the var).
    pub fn new(config: &HubOidcConfig) -> anyhow::Result<Self> {
        let secret = Token::from_env(&config.client_secret_env).map_err(|e| {
            anyhow::anyhow!(
                "env var {} is not set or is empty: it must hold the client secret of \
                 hub_oidc.client_id at the token endpoint",
                e.var
            )
        })?;
        Ok(Self::with_secret(config, secret))
    }

    /// The client of `config` with its secret given (tests, embedders).
    pub fn with_secret(config: &HubOidcConfig, secret: Token) -> Self {
        Self {
            token_url: config.token_url.clone(),
            client_id: config.client_id.clone(),
            secret,
            scope: config.scope.clone(),
            resource: config.resource.clone(),
            http: client_builder()
                .build()
                .unwrap_or_else(|_| reqwest::Client::new()),
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The cached access token while it is good for more than
    /// [`REFRESH_MARGIN`], else a new one from the token endpoint.
    pub async fn token(&self) -> Result<Token, CredentialError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref().filter(|c| Instant::now() < c.until) {
            return Ok(c.token.clone());
        }
        *cached = None;
        let (token, expires_in) = self.fetch().await?;
        if let Some(lifetime) = expires_in.and_then(|s| s.checked_sub(REFRESH_MARGIN)) {
            *cached = Some(Cached {
                token: token.clone(),
                until: Instant::now() + lifetime,
            });
        }
        Ok(token)
    }

    /// One client-credentials request: the token and its `expires_in`.
    async fn fetch(&self) -> Result<(Token, Option<Duration>), CredentialError> {
        let url = self.token_url.clone();
        let mut form = vec![("grant_type", "client_credentials")];
        if let Some(scope) = &self.scope {
            form.push(("scope", scope));
        }
        if let Some(resource) = &self.resource {
            form.push(("resource", resource));
        }
        // RFC 6749 §2.3.1: id and secret are form-encoded before Basic.
        let sent = self
            .http
            .post(&self.token_url)
            .timeout(TOKEN_TIMEOUT)
            .basic_auth(
                form_encode(&self.client_id),
                Some(form_encode(self.secret.expose())),
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .form(&form)
            .send()
            .await
            .map_err(|e| CredentialError::Unreachable {
                url: url.clone(),
                cause: if e.is_timeout() {
                    format!("no answer within {} s", TOKEN_TIMEOUT.as_secs())
                } else {
                    exchange::http::root_cause(&e)
                },
            })?;
        let status = sent.status().as_u16();
        let body: Option<Value> = sent.json().await.ok();
        if !(200..300).contains(&status) {
            return Err(CredentialError::Refused {
                url,
                status,
                oauth_error: body
                    .as_ref()
                    .and_then(|b| b.get("error"))
                    .and_then(Value::as_str)
                    .filter(|e| is_oauth_error_code(e))
                    .map(str::to_string),
            });
        }
        let unusable = |why| CredentialError::Unusable {
            url: url.clone(),
            status,
            why,
        };
        let body = body.ok_or_else(|| unusable("without a JSON body"))?;
        let token = body
            .get("access_token")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| unusable("without an access_token"))?;
        if let Some(kind) = body.get("token_type").and_then(Value::as_str) {
            if !kind.eq_ignore_ascii_case("bearer") {
                return Err(unusable("with a token_type other than Bearer"));
            }
        }
        let expires_in = match body.get("expires_in") {
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.parse().ok(),
            _ => None,
        };
        Ok((
            Token::new(token.trim()),
            expires_in.map(Duration::from_secs),
        ))
    }
}

/// `application/x-www-form-urlencoded` of one value (RFC 6749 §2.3.1, for
/// the Basic credentials of the token request).
fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(char::from(b))
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// An OAuth `error` code (RFC 6749 §5.2: `%x20-21 / %x23-5B / %x5D-7E`),
/// short: what the provider said, safe to repeat.
fn is_oauth_error_code(code: &str) -> bool {
    !code.is_empty()
        && code.len() <= 64
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

/// The settings every client of the peer's own calls starts from (pooled,
/// no proxy lookup).
pub(crate) fn client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .pool_idle_timeout(std::time::Duration::from_secs(30))
}

#[cfg(test)]
#[path = "hub_credentials_tests.rs"]
mod tests;
