//! How often `POST /api/login` may be tried: per client address and per
//! username (DESIGN.md §3, "browser"; the login route is the one public
//! `/api` route, so it is where guessing happens).
//!
//! Two token buckets, checked before any password is hashed:
//! * **per address**: every attempt takes a token; 10 in a row, then one
//!   per 6 s (10 per minute). One machine cannot hammer the login (nor
//!   spend the hub's CPU on argon2).
//! * **per username**: only a *failed* attempt takes a token; 5 failures,
//!   then one guess per minute. Guessing
//!   one person's password from many addresses is as slow as from one,
//!   and the right password still works at once for a person who mistyped
//!   a few times.
//!
//! Both are settings ([`LoginLimits::from_env`]). A refused attempt answers 429 with `Retry-After` and is not counted.
//! The buckets live in this process (a replica throttles what reaches it;
//! see NOTES.md) and are bounded: at most [`MAX_KEYS`] of each, a full
//! bucket carrying no information is the first dropped, and when every
//! kept bucket is still draining a new key is refused rather than kept.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

/// At most this many addresses, and this many usernames, are tracked.
pub const MAX_KEYS: usize = 10_000;
/// The per-address allowance's variable (`attempts/seconds`).
pub const ADDRESS_LIMIT_ENV: &str = "WS_LOGIN_ADDRESS_LIMIT";
/// The per-username allowance's variable (`failures/seconds`).
pub const USER_LIMIT_ENV: &str = "WS_LOGIN_USER_LIMIT";

/// `count` in a row, then one more per `window / count`: a token bucket
/// that refills completely in `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    /// The burst.
    pub count: u32,
    /// How long a drained bucket takes to refill.
    pub window: Duration,
}

impl Allowance {
    /// How long one token takes to come back.
    pub fn refill(self) -> Duration {
        self.window / self.count.max(1)
    }

    /// `10/60`: 10 per 60 seconds; `variable` names the setting in errors.
    pub fn parse(text: &str, variable: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "{variable}: `{}` is not `count/seconds` with both above zero (e.g. `10/60`)",
                exchange::text::clip(text, 64)
            )
        };
        let (count, secs) = text.trim().split_once('/').ok_or_else(bad)?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        let secs: u64 = secs.trim().parse().map_err(|_| bad())?;
        if count == 0 || secs == 0 {
            return Err(bad());
        }
        Ok(Self {
            count,
            window: Duration::from_secs(secs),
        })
    }
}

/// The two allowances of the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginLimits {
    /// Attempts from one address: 10 per minute by default.
    pub per_address: Allowance,
    /// Failed attempts for one username: 5 per 5 minutes by default.
    pub per_user: Allowance,
}

impl Default for LoginLimits {
    fn default() -> Self {
        Self {
            per_address: Allowance {
                count: 10,
                window: Duration::from_secs(60),
            },
            per_user: Allowance {
                count: 5,
                window: Duration::from_secs(300),
            },
        }
    }
}

impl LoginLimits {
    /// The defaults, with [`ADDRESS_LIMIT_ENV`] and [`USER_LIMIT_ENV`]
    /// applied when set.
    pub fn from_env() -> Result<Self, String> {
        let mut limits = Self::default();
        if let Ok(v) = std::env::var(ADDRESS_LIMIT_ENV) {
            limits.per_address = Allowance::parse(&v, ADDRESS_LIMIT_ENV)?;
        }
        if let Ok(v) = std::env::var(USER_LIMIT_ENV) {
            limits.per_user = Allowance::parse(&v, USER_LIMIT_ENV)?;
        }
        Ok(limits)
    }
}

/// Which limit refused an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Too many attempts from this address.
    Address,
    /// Too many failed attempts for this username.
    User,
    /// Too many addresses or usernames are being throttled at once.
    Capacity,
}

/// A refused attempt: which limit, and when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttled {
    /// The limit that refused.
    pub limit: Limit,
    /// When a new attempt may succeed.
    pub retry_after: Duration,
}

impl Throttled {
    /// The sentence the browser shows.
    pub fn message(&self) -> String {
        let secs = self.retry_after.as_secs().max(1);
        match self.limit {
            Limit::Address => {
                format!("too many login attempts from this address; try again in {secs} s")
            }
            Limit::User => {
                format!("too many failed logins for this user; try again in {secs} s")
            }
            Limit::Capacity => {
                format!("too many login attempts on this hub; try again in {secs} s")
            }
        }
    }
}

/// One token bucket: `tokens` as of `at`.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Allowance {
    /// The tokens of `bucket` at `now` (refilled, capped at the burst).
    fn tokens(self, bucket: &Bucket, now: Instant) -> f64 {
        let refilled =
            now.saturating_duration_since(bucket.at).as_secs_f64() / self.refill().as_secs_f64();
        (bucket.tokens + refilled).min(f64::from(self.count))
    }

    /// How long until a bucket holding `tokens` holds one.
    fn wait(self, tokens: f64) -> Duration {
        self.refill().mul_f64((1.0 - tokens).max(0.0))
    }
}

/// The buckets of one kind of key.
#[derive(Debug)]
struct Buckets<K> {
    rate: Allowance,
    by_key: HashMap<K, Bucket>,
}

impl<K: Hash + Eq + Clone> Buckets<K> {
    fn new(rate: Allowance) -> Self {
        Self {
            rate,
            by_key: HashMap::new(),
        }
    }

    /// `Ok` when `key` has a token at `now`, else how long until it has.
    fn has_token(&mut self, key: &K, now: Instant) -> Result<(), Duration> {
        let Some(bucket) = self.by_key.get(key) else {
            return Ok(());
        };
        let tokens = self.rate.tokens(bucket, now);
        if tokens >= 1.0 {
            Ok(())
        } else {
            Err(self.rate.wait(tokens))
        }
    }

    /// Takes one token of `key` (which [`Buckets::has_token`] allowed);
    /// `false` when `key` is new and no room can be made for it.
    fn take(&mut self, key: &K, now: Instant) -> bool {
        if !self.by_key.contains_key(key) && self.by_key.len() >= MAX_KEYS {
            let rate = self.rate;
            self.by_key
                .retain(|_, b| rate.tokens(b, now) < f64::from(rate.count));
            if self.by_key.len() >= MAX_KEYS {
                return false;
            }
        }
        let rate = self.rate;
        let bucket = self.by_key.entry(key.clone()).or_insert(Bucket {
            tokens: f64::from(rate.count),
            at: now,
        });
        let tokens = rate.tokens(bucket, now);
        *bucket = Bucket {
            tokens: (tokens - 1.0).max(0.0),
            at: now,
        };
        true
    }
}

#[derive(Debug)]
struct State {
    addresses: Buckets<IpAddr>,
    users: Buckets<String>,
}

/// The login limits of one hub process.
#[derive(Debug)]
pub struct LoginThrottle {
    state: Mutex<State>,
}

impl Default for LoginThrottle {
    fn default() -> Self {
        Self::new(LoginLimits::default())
    }
}

impl LoginThrottle {
    /// A throttle with `limits`.
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            state: Mutex::new(State {
                addresses: Buckets::new(limits.per_address),
                users: Buckets::new(limits.per_user),
            }),
        }
    }
}

/// The key of a username: trimmed, lower-case, at most 64 characters (a
/// username differing only in case or padding is the same person).
fn user_key(username: &str) -> String {
    exchange::text::clip(&username.trim().to_lowercase(), 64).to_string()
}

impl LoginThrottle {
    /// Admits one attempt from `address` for `username` at `now`, or says
    /// which limit refuses it. An admitted attempt counts against the
    /// address; call [`LoginThrottle::failed`] when its password was wrong.
    pub fn admit(
        &self,
        address: Option<IpAddr>,
        username: &str,
        now: Instant,
    ) -> Result<(), Throttled> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let refuse = |limit, retry_after| Throttled { limit, retry_after };
        let user = user_key(username);
        state
            .users
            .has_token(&user, now)
            .map_err(|wait| refuse(Limit::User, wait))?;
        if let Some(address) = address {
            state
                .addresses
                .has_token(&address, now)
                .map_err(|wait| refuse(Limit::Address, wait))?;
            if !state.addresses.take(&address, now) {
                return Err(refuse(Limit::Capacity, state.addresses.rate.refill()));
            }
        }
        Ok(())
    }

    /// Counts a failed attempt for `username` at `now`.
    pub fn failed(&self, username: &str, now: Instant) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // A new username with no room left is simply not tracked: the
        // address limit still holds its sender back.
        let _tracked = state.users.take(&user_key(username), now);
    }
}

/// The address the request came from, when the server recorded one.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddress(pub Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for ClientAddress {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(
            parts
                .extensions
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip()),
        ))
    }
}

#[cfg(test)]
#[path = "throttle_tests.rs"]
mod tests;
