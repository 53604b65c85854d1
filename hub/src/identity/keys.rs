//! Each member issuer's signing keys: its discovery document names its
//! JWKS, the JWKS holds the keys, and the hub keeps them in memory.
//!
//! When the keys are read:
//! * the first time a token from the issuer arrives;
//! * when a token names a key id (`kid`) the cached set lacks, which is
//!   what an issuer's key rotation looks like from here — at most once
//!   every [`MIN_REFETCH`] per issuer, so a stream of tokens with made-up
//!   key ids costs the issuer one request every few seconds, not one per
//!   call;
//! * when the cached set is older than [`MAX_AGE`], so a key the issuer
//!   withdrew stops verifying within that time.
//!
//! Whatever the tokens, an issuer is read at most
//! [`MAX_FETCHES_PER_MINUTE`] times in any minute, and one fetch of an
//! issuer is in flight at a time: a burst of calls naming a new `kid`
//! waits for that fetch instead of sending its own. Each issuer waits on
//! its own fetch only, so a slow (or hostile) issuer holds up the tokens
//! that name it, never another issuer's.
//!
//! Every read goes out by the egress path (purpose `Identity`,
//! `WS_IDENTITY_NETWORKS`): the issuer's host and the `jwks_uri` its
//! discovery document names are checked where they are connected to, no
//! redirect is followed, and a document is read streaming, refused at its
//! first byte over [`MAX_DOCUMENT`], all within [`FETCH_TIMEOUT`].
//!
//! A failed fetch keeps the keys the hub had (and is retried after
//! [`MIN_REFETCH`]); it is logged, never shown to a caller beyond "the
//! issuer's keys do not include this token's key".

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;

use crate::net::egress::{Egress, FetchError as EgressFetchError, Fetcher, Limits, Purpose};

/// The shortest time between two fetches of one issuer's keys.
pub const MIN_REFETCH: Duration = Duration::from_secs(5);
/// The longest time a fetched key set is used without reading it again.
pub const MAX_AGE: Duration = Duration::from_secs(300);
/// The most fetches of one issuer (each a discovery document and a JWKS)
/// in any minute, however many tokens name it.
pub const MAX_FETCHES_PER_MINUTE: usize = 12;
/// How long one document (discovery or JWKS) may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest discovery document or JWKS the hub reads.
pub const MAX_DOCUMENT: usize = 256 * 1024;

/// One verification key of an issuer.
pub use exchange::jws::VerificationKey as Key;

/// What the hub holds of one issuer.
#[derive(Debug, Clone)]
pub struct KeySet {
    /// Its verification keys.
    pub keys: Vec<Key>,
    /// Its token endpoint, as its discovery document names it (what the
    /// hub's cards advertise for the client-credentials flow).
    pub token_endpoint: Option<String>,
    /// Its authorization endpoint (where a person logs in, for the canvas's
    /// login through a member's identity provider).
    pub authorization_endpoint: Option<String>,
    /// When the set was last read (or last tried).
    fetched_at: Instant,
}

impl KeySet {
    /// The key a token's header names: by `kid`, or the only key when the
    /// token names none.
    pub fn key(&self, kid: Option<&str>) -> Option<&Key> {
        match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
            None if self.keys.len() == 1 => self.keys.first(),
            None => None,
        }
    }
}

/// The cache of every member issuer's keys.
pub struct IssuerKeys {
    /// The client every read goes out by; `Err` when it could not be
    /// built (then every read fails with why, and no key is ever read).
    http: Result<Fetcher, String>,
    sets: RwLock<HashMap<String, Arc<KeySet>>>,
    /// Each issuer's fetch lock and the times of its recent fetches.
    issuers: Mutex<HashMap<String, Arc<Fetching>>>,
}

/// One issuer's fetches: one in flight at a time, counted per minute.
#[derive(Debug, Default)]
struct Fetching {
    one: tokio::sync::Mutex<()>,
    recent: Mutex<VecDeque<Instant>>,
}

impl Fetching {
    /// Whether another fetch fits in the last minute's budget (then it is
    /// counted).
    fn admit(&self, now: Instant) -> bool {
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while recent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(60))
        {
            recent.pop_front();
        }
        if recent.len() >= MAX_FETCHES_PER_MINUTE {
            return false;
        }
        recent.push_back(now);
        true
    }
}

impl std::fmt::Debug for IssuerKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuerKeys").finish_non_exhaustive()
    }
}

impl Default for IssuerKeys {
    /// Going out by the default egress policy.
    fn default() -> Self {
        Self::new(&Egress::default())
    }
}

/// Why an issuer's keys could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The request was refused, failed, or answered an error status.
    #[error("fetching {what}: {why}")]
    Http { what: &'static str, why: String },
    /// The document is too large or not the JSON it should be.
    #[error("reading {what}: {why}")]
    Document { what: &'static str, why: String },
}

/// The fields of a discovery document the hub reads.
#[derive(Debug, Deserialize)]
struct Discovery {
    issuer: String,
    jwks_uri: String,
    #[serde(default)]
    token_endpoint: Option<String>,
    #[serde(default)]
    authorization_endpoint: Option<String>,
}

impl IssuerKeys {
    /// No keys yet; every read through `egress`.
    pub fn new(egress: &Egress) -> Self {
        let http = egress
            .fetcher(Purpose::Identity, reqwest::Client::builder())
            .map_err(|e| e.to_string());
        Self {
            http,
            sets: RwLock::default(),
            issuers: Mutex::default(),
        }
    }

    /// The cached keys of `issuer`, if any were read.
    pub fn of(&self, issuer: &str) -> Option<Arc<KeySet>> {
        self.sets.read().ok()?.get(issuer).cloned()
    }

    /// `issuer`'s token endpoint, if its discovery document was read.
    pub fn token_endpoint(&self, issuer: &str) -> Option<String> {
        self.of(issuer)?.token_endpoint.clone()
    }

    /// Reads `issuer`'s discovery document and keys unless the cache holds
    /// them, fresh (for what a card advertises: no token asks for a key).
    pub async fn ensure_discovered(&self, issuer: &str) {
        if self
            .of(issuer)
            .is_some_and(|set| set.fetched_at.elapsed() <= MAX_AGE)
        {
            return;
        }
        let kid = self
            .of(issuer)
            .and_then(|set| set.keys.first().and_then(|k| k.kid.clone()));
        self.ensure(issuer, kid.as_deref()).await;
    }

    /// Makes sure the cache can verify a token of `issuer` signed with
    /// `kid`, fetching the issuer's keys when the rules of this module say
    /// so. A failure keeps what the cache had.
    pub async fn ensure(&self, issuer: &str, kid: Option<&str>) {
        if !self.needs_fetch(issuer, kid) {
            return;
        }
        let fetching = self.fetching(issuer);
        let _one = fetching.one.lock().await;
        if !self.needs_fetch(issuer, kid) {
            return;
        }
        if !fetching.admit(Instant::now()) {
            tracing::debug!(issuer, "the issuer's keys were read {MAX_FETCHES_PER_MINUTE} times this minute; not again yet");
            return;
        }
        let fetched = self.fetch(issuer).await;
        let mut sets = match self.sets.write() {
            Ok(sets) => sets,
            Err(poisoned) => poisoned.into_inner(),
        };
        match fetched {
            Ok(set) => {
                tracing::info!(issuer, keys = set.keys.len(), "read the issuer's keys");
                sets.insert(issuer.to_string(), Arc::new(set));
            }
            Err(e) => {
                tracing::warn!(issuer, error = %e, "could not read the issuer's keys");
                let (keys, token_endpoint, authorization_endpoint) = sets
                    .get(issuer)
                    .map(|s| {
                        (
                            s.keys.clone(),
                            s.token_endpoint.clone(),
                            s.authorization_endpoint.clone(),
                        )
                    })
                    .unwrap_or_default();
                sets.insert(
                    issuer.to_string(),
                    Arc::new(KeySet {
                        keys,
                        token_endpoint,
                        authorization_endpoint,
                        fetched_at: Instant::now(),
                    }),
                );
            }
        }
    }

    /// `issuer`'s fetch lock and budget.
    fn fetching(&self, issuer: &str) -> Arc<Fetching> {
        self.issuers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(issuer.to_string())
            .or_default()
            .clone()
    }

    fn needs_fetch(&self, issuer: &str, kid: Option<&str>) -> bool {
        let Some(set) = self.of(issuer) else {
            return true;
        };
        let age = set.fetched_at.elapsed();
        age > MAX_AGE || (set.key(kid).is_none() && age > MIN_REFETCH)
    }

    async fn fetch(&self, issuer: &str) -> Result<KeySet, FetchError> {
        let discovery_url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let discovery: Discovery = self.get_json("discovery document", &discovery_url).await?;
        if discovery.issuer != issuer {
            return Err(FetchError::Document {
                what: "discovery document",
                why: "its `issuer` is not the issuer the topology names".into(),
            });
        }
        let set: JwkSet = self.get_json("JWKS", &discovery.jwks_uri).await?;
        let keys = set
            .keys
            .iter()
            .filter_map(exchange::jws::verification_key)
            .collect();
        Ok(KeySet {
            keys,
            token_endpoint: discovery.token_endpoint,
            authorization_endpoint: discovery.authorization_endpoint,
            fetched_at: Instant::now(),
        })
    }

    async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        what: &'static str,
        url: &str,
    ) -> Result<T, FetchError> {
        let http = |why: String| FetchError::Http { what, why };
        let fetcher = self.http.as_ref().map_err(|e| http(e.clone()))?;
        let limits = Limits {
            max_bytes: MAX_DOCUMENT,
            timeout: FETCH_TIMEOUT,
        };
        let fetched = fetcher
            .get(url, "application/json", limits)
            .await
            .map_err(|e| match e {
                EgressFetchError::TooLarge { limit } => FetchError::Document {
                    what,
                    why: format!("larger than {limit} bytes"),
                },
                other => http(other.to_string()),
            })?;
        if !fetched.status.is_success() {
            let redirect = if fetched.status.is_redirection() {
                " (a redirect, which the hub does not follow)"
            } else {
                ""
            };
            return Err(http(format!("HTTP {}{redirect}", fetched.status.as_u16())));
        }
        serde_json::from_slice(&fetched.body).map_err(|e| FetchError::Document {
            what,
            why: e.to_string(),
        })
    }
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
