//! One GET through the egress path, as the prober, onboarding and the
//! identity keys make them: the URL's host checked (an address) or
//! resolved through the gate (a name), the connection checked, no
//! redirect followed, the body read under its cap, the whole within its
//! time. What to do with a redirect, a status or the bytes is the
//! caller's.

use http::header::{ACCEPT, LOCATION};
use http::StatusCode;

use super::body::{read_capped, BodyError, Limits};
use super::clients;
use super::gate::{refusal_in, Gate};
use super::policy::Refusal;

/// A reqwest 0.12 client going out through one gate.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    gate: Gate,
}

/// What a GET answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Its status.
    pub status: StatusCode,
    /// A redirect's `Location`, as sent (relative or not), when it is one.
    pub location: Option<String>,
    /// The body of a success (2xx); empty for any other status, which is
    /// not read.
    pub body: Vec<u8>,
}

/// Why a GET brought nothing back.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not an http(s) URL.
    #[error("`{url}` is not an http(s) URL")]
    BadUrl { url: String },
    /// The egress policy refused the address.
    #[error("{0}")]
    Refused(#[from] Refusal),
    /// The body is over the cap.
    #[error("the answer is larger than {limit} bytes; the hub reads no more")]
    TooLarge { limit: usize },
    /// Nothing whole within the time limit.
    #[error("no answer within {} ms", .after.as_millis())]
    Timeout { after: std::time::Duration },
    /// The transport failed.
    #[error("{0}")]
    Transport(#[source] reqwest::Error),
}

impl Fetcher {
    /// A client through `gate`, built from `builder` (its TLS, its pool)
    /// with the gate's resolver, connection check, no proxy and no
    /// redirects.
    pub fn new(gate: Gate, builder: reqwest::ClientBuilder) -> Result<Self, reqwest::Error> {
        let client = clients::reqwest12(&gate, builder).build()?;
        Ok(Self { client, gate })
    }

    /// GETs `url` (`accept`: its `Accept`) within `limits`.
    pub async fn get(
        &self,
        url: &str,
        accept: &'static str,
        limits: Limits,
    ) -> Result<Fetched, FetchError> {
        let parsed = reqwest::Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| FetchError::BadUrl {
                url: exchange::text::clip(url, 200),
            })?;
        self.gate.admit(&parsed)?;
        let exchange = async {
            let response = self
                .client
                .get(parsed)
                .header(ACCEPT, accept)
                .send()
                .await
                .map_err(transport)?;
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                return Ok(Fetched {
                    status,
                    location,
                    body: Vec::new(),
                });
            }
            if !status.is_success() {
                return Ok(Fetched {
                    status,
                    location: None,
                    body: Vec::new(),
                });
            }
            let body = read_capped(http::Response::from(response).into_body(), limits.max_bytes)
                .await
                .map_err(|e| match e {
                    BodyError::TooLarge { limit } => FetchError::TooLarge { limit },
                    BodyError::Transport(e) => transport(e),
                })?;
            Ok(Fetched {
                status,
                location: None,
                body,
            })
        };
        match tokio::time::timeout(limits.timeout, exchange).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout {
                after: limits.timeout,
            }),
        }
    }
}

/// A transport error, or the policy's refusal when that is what it is.
fn transport(e: reqwest::Error) -> FetchError {
    match refusal_in(&e) {
        Some(refusal) => FetchError::Refused(refusal.clone()),
        None => FetchError::Transport(e),
    }
}
