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
//!
//! Where the buckets live:
//! * a hub alone keeps them in this process, bounded: at most
//!   [`MAX_KEYS`] of each, a full bucket carrying no information is the
//!   first dropped, and when every kept bucket is still draining a new key
//!   is refused rather than kept;
//! * replicas keep them in their shared database ([`LoginThrottle::shared`],
//!   table `login_buckets`), so an attempt counts against its address and
//!   username whichever replica the balancer sent it to — N replicas do not
//!   allow N times the guesses. Each take is one conditional upsert (the
//!   row lock makes concurrent takes on two replicas count twice, never
//!   once); buckets full again are swept now and then.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use exchange::db::Store;

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

/// The login limits of a hub (one process, or every replica).
#[derive(Debug)]
pub struct LoginThrottle {
    limits: LoginLimits,
    backend: Backend,
}

/// Where the buckets live (module doc).
#[derive(Debug)]
enum Backend {
    Local(LocalThrottle),
    Shared {
        store: Store,
        /// Takes so far: every 64th sweeps the full buckets.
        takes: AtomicU64,
    },
}

/// The buckets of a hub alone, in this process, with the clock given:
/// what [`LoginThrottle`] uses without replicas, and what the tests drive.
#[derive(Debug)]
pub struct LocalThrottle {
    state: Mutex<State>,
}

impl Default for LocalThrottle {
    fn default() -> Self {
        Self::new(LoginLimits::default())
    }
}

impl LocalThrottle {
    /// Buckets with `limits`.
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            state: Mutex::new(State {
                addresses: Buckets::new(limits.per_address),
                users: Buckets::new(limits.per_user),
            }),
        }
    }
}

impl LoginThrottle {
    /// A throttle with `limits`, its buckets in this process.
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            limits,
            backend: Backend::Local(LocalThrottle::new(limits)),
        }
    }

    /// A throttle with `limits`, its buckets in the replicas' shared
    /// `store` (PostgreSQL).
    pub fn shared(limits: LoginLimits, store: Store) -> Self {
        Self {
            limits,
            backend: Backend::Shared {
                store,
                takes: AtomicU64::new(0),
            },
        }
    }

    /// Admits one attempt from `address` for `username` now, or says which
    /// limit refuses it (see [`LocalThrottle::admit`]). A store that
    /// cannot be asked admits (and logs): the login stays usable, argon2's
    /// own cost still paces a guesser.
    pub async fn check(&self, address: Option<IpAddr>, username: &str) -> Result<(), Throttled> {
        match &self.backend {
            Backend::Local(local) => local.admit(address, username, Instant::now()),
            Backend::Shared { store, takes } => {
                if takes.fetch_add(1, Ordering::Relaxed) % 64 == 63 {
                    self.sweep(store).await;
                }
                let user = user_key(username);
                match shared::tokens(store, "user", &user, self.limits.per_user).await {
                    Ok(t) if t < 1.0 => {
                        return Err(Throttled {
                            limit: Limit::User,
                            retry_after: self.limits.per_user.wait(t),
                        })
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "reading the shared login limits"),
                }
                let Some(address) = address else {
                    return Ok(());
                };
                let key = address.to_string();
                match shared::take(store, "address", &key, self.limits.per_address, false).await {
                    Ok(true) => Ok(()),
                    Ok(false) => {
                        let t = shared::tokens(store, "address", &key, self.limits.per_address)
                            .await
                            .unwrap_or(0.0);
                        Err(Throttled {
                            limit: Limit::Address,
                            retry_after: self.limits.per_address.wait(t),
                        })
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "counting a login in the shared limits");
                        Ok(())
                    }
                }
            }
        }
    }

    /// Counts a failed attempt for `username` now.
    pub async fn count_failure(&self, username: &str) {
        match &self.backend {
            Backend::Local(local) => local.failed(username, Instant::now()),
            Backend::Shared { store, .. } => {
                let user = user_key(username);
                if let Err(e) = shared::take(store, "user", &user, self.limits.per_user, true).await
                {
                    tracing::warn!(error = %e, "counting a failed login in the shared limits");
                }
            }
        }
    }

    /// Forgets the shared buckets that are full again.
    async fn sweep(&self, store: &Store) {
        let longest = self
            .limits
            .per_address
            .window
            .max(self.limits.per_user.window);
        if let Err(e) = shared::sweep(store, longest).await {
            tracing::warn!(error = %e, "sweeping the shared login limits");
        }
    }
}

/// The shared buckets' statements (PostgreSQL: replicas only).
mod shared {
    use super::Allowance;
    use exchange::db::Store;
    use std::time::Duration;

    fn now_ms() -> i64 {
        chrono::Utc::now().timestamp_millis()
    }

    fn refill_ms(rate: Allowance) -> f64 {
        rate.refill().as_secs_f64() * 1e3
    }

    /// The tokens of a bucket now (a bucket never seen is full).
    pub(super) async fn tokens(
        store: &Store,
        kind: &str,
        key: &str,
        rate: Allowance,
    ) -> Result<f64, sqlx::Error> {
        let t: Option<f64> = sqlx::query_scalar(
            "SELECT LEAST($1, tokens + ($2 - at_ms) / $3) FROM login_buckets
             WHERE kind = $4 AND key = $5",
        )
        .bind(f64::from(rate.count))
        .bind(now_ms())
        .bind(refill_ms(rate))
        .bind(kind)
        .bind(key)
        .fetch_optional(store.pool())
        .await?;
        Ok(t.unwrap_or(f64::from(rate.count)))
    }

    /// Takes a token: `false` when the bucket has none (and `always` is
    /// off: a failure is counted even on an empty bucket, which stays
    /// empty).
    pub(super) async fn take(
        store: &Store,
        kind: &str,
        key: &str,
        rate: Allowance,
        always: bool,
    ) -> Result<bool, sqlx::Error> {
        let sql = format!(
            "INSERT INTO login_buckets (kind, key, tokens, at_ms) VALUES ($1, $2, $3 - 1, $4)
             ON CONFLICT (kind, key) DO UPDATE SET
                tokens = GREATEST(0, LEAST($3, login_buckets.tokens + ($4 - login_buckets.at_ms) / $5) - 1),
                at_ms = $4
             {}
             RETURNING tokens",
            if always {
                ""
            } else {
                "WHERE LEAST($3, login_buckets.tokens + ($4 - login_buckets.at_ms) / $5) >= 1"
            }
        );
        let taken: Option<f64> = sqlx::query_scalar(&sql)
            .bind(kind)
            .bind(key)
            .bind(f64::from(rate.count))
            .bind(now_ms())
            .bind(refill_ms(rate))
            .fetch_optional(store.pool())
            .await?;
        Ok(taken.is_some())
    }

    /// Deletes the buckets untouched for `longest` (full again).
    pub(super) async fn sweep(store: &Store, longest: Duration) -> Result<(), sqlx::Error> {
        let cutoff = now_ms() - i64::try_from(longest.as_millis()).unwrap_or(i64::MAX / 2);
        sqlx::query("DELETE FROM login_buckets WHERE at_ms < $1")
            .bind(cutoff)
            .execute(store.pool())
            .await?;
        Ok(())
    }
}

/// The key of a username: trimmed, lower-case, at most 64 characters (a
/// username differing only in case or padding is the same person).
fn user_key(username: &str) -> String {
    exchange::text::clip(&username.trim().to_lowercase(), 64).to_string()
}

impl LocalThrottle {
    /// Admits one attempt from `address` for `username` at `now`, or says
    /// which limit refuses it. An admitted attempt counts against the
    /// address; call [`LocalThrottle::failed`] when its password was wrong.
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
