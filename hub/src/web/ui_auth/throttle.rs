//! How often `POST /api/login` may be tried, and whose budget a wrong
//! password spends (DESIGN.md §3, "browser"; the login route is the one
//! public `/api` route, so it is where guessing happens).
//!
//! Every limit is counted **before** the password is checked: argon2 runs
//! only for an attempt [`LoginThrottle::admit`] let through, and
//! [`LoginThrottle::checked`] settles it afterwards.
//! * **per address**: every attempt takes a token; 10 in a row, then one
//!   per 6 s (10 per minute). One machine cannot hammer the login (nor
//!   spend the hub's CPU on argon2).
//! * **per account**: a failure budget, 5, then one per minute. An
//!   attempt *reserves* a token of it before its password is checked and
//!   gives it back when the password was right. So N attempts sent at once
//!   evaluate at most the budget's tokens, from however many addresses,
//!   and the right password costs nothing.
//! * **per account and known source**: an address the account logged in
//!   from within [`KNOWN_SOURCE_TTL`] ([`known`], kept in the store) is
//!   charged to a budget of its own (the same allowance) instead of the
//!   account's. A stranger spending the account's budget does not lock the
//!   person out of a place it has logged in from before.
//!
//! An address never seen succeeding is charged to the account's budget,
//! so while a stranger keeps it empty, the person is refused there too
//! until it refills. That is the price of the bound: an unknown address
//! with the right password looks exactly like the attacker's next guess
//! until argon2 has run, and running argon2 for it is the evaluation the
//! budget exists to bound.
//!
//! Both allowances are settings ([`LoginLimits::from_env`]). A refused
//! attempt answers 429 with `Retry-After` and takes no token.
//!
//! Where the buckets live:
//! * a hub alone keeps them in this process ([`LocalThrottle`]), bounded:
//!   at most [`MAX_KEYS`] addresses and accounts, a full bucket carrying no
//!   information is the first dropped, and when every kept bucket is still
//!   draining a new key is refused rather than kept;
//! * replicas keep them in their shared database ([`LoginThrottle::shared`],
//!   table `login_buckets`, statements in [`shared`]), so an attempt counts
//!   against its address and account whichever replica the balancer sent
//!   it to — N replicas do not allow N times the guesses. Each take is one
//!   conditional upsert (the row lock makes concurrent takes on two
//!   replicas count twice, never once); buckets full again are swept now
//!   and then.
//!
//! The known sources are in the store for both (`login_known_sources`), so
//! they survive a restart and every replica reads the same.

mod known;
mod shared;

use std::collections::HashMap;
use std::hash::Hash;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use exchange::db::Store;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use crate::traffic::prometheus::LoginCounters;
pub use known::{KnownSources, KNOWN_SOURCE_TTL};

/// At most this many addresses, and this many accounts, are tracked.
pub const MAX_KEYS: usize = 10_000;
/// The per-address allowance's variable (`attempts/seconds`).
pub const ADDRESS_LIMIT_ENV: &str = "WS_LOGIN_ADDRESS_LIMIT";
/// The per-account failure budget's variable (`failures/seconds`).
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
    /// Failed attempts charged to one account (or to one of its known
    /// sources): 5 per 5 minutes by default.
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
    /// The account's failure budget is spent (attempts from addresses it
    /// has not logged in from).
    User,
    /// The failure budget of this known source of the account is spent.
    KnownSource,
    /// Too many addresses or accounts are being throttled at once.
    Capacity,
}

impl Limit {
    /// The label `/metrics` counts a refusal under.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Address => "address",
            Limit::User => "user",
            Limit::KnownSource => "known_source",
            Limit::Capacity => "capacity",
        }
    }
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
            Limit::KnownSource => format!(
                "too many failed logins for this user from this address; try again in {secs} s"
            ),
            Limit::Capacity => {
                format!("too many login attempts on this hub; try again in {secs} s")
            }
        }
    }
}

/// Whose failure budget an attempt reserves a token of.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Budget {
    /// The account's (its key, [`user_key`]): attempts from an address it
    /// has not logged in from, or from no address.
    Account(String),
    /// One known source of the account: its key and the address.
    KnownSource(String, IpAddr),
}

impl Budget {
    /// The budget of an attempt for `username` from `address`, `known`
    /// saying whether the account has logged in from there.
    pub fn of(username: &str, address: Option<IpAddr>, known: bool) -> Self {
        let user = user_key(username);
        match address {
            Some(address) if known => Budget::KnownSource(user, address),
            _ => Budget::Account(user),
        }
    }

    /// The limit that refuses when this budget is spent.
    pub fn limit(&self) -> Limit {
        match self {
            Budget::Account(_) => Limit::User,
            Budget::KnownSource(..) => Limit::KnownSource,
        }
    }
}

/// An attempt [`LoginThrottle::admit`] let through: its password may be
/// checked once, then [`LoginThrottle::checked`] settles it.
#[derive(Debug)]
#[must_use = "an admitted attempt is settled with LoginThrottle::checked"]
pub struct Pass {
    budget: Budget,
    /// Whether a token of `budget` was taken (a shared store that could
    /// not be asked takes none, and so gives none back).
    reserved: bool,
    address: Option<IpAddr>,
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
    fn has_token(&self, key: &K, now: Instant) -> Result<(), Duration> {
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
        self.add(key, -1.0, now);
        true
    }

    /// Gives a token taken earlier back to `key` (capped at the burst).
    fn give_back(&mut self, key: &K, now: Instant) {
        if self.by_key.contains_key(key) {
            self.add(key, 1.0, now);
        }
    }

    fn add(&mut self, key: &K, delta: f64, now: Instant) {
        let rate = self.rate;
        let bucket = self.by_key.entry(key.clone()).or_insert(Bucket {
            tokens: f64::from(rate.count),
            at: now,
        });
        let tokens = rate.tokens(bucket, now);
        *bucket = Bucket {
            tokens: (tokens + delta).clamp(0.0, f64::from(rate.count)),
            at: now,
        };
    }
}

#[derive(Debug)]
struct State {
    addresses: Buckets<IpAddr>,
    accounts: Buckets<String>,
    /// Only addresses an account logged in from: as many as the store's
    /// known sources, which strangers cannot add to.
    sources: Buckets<(String, IpAddr)>,
}

impl State {
    fn has_token(&self, budget: &Budget, now: Instant) -> Result<(), Duration> {
        match budget {
            Budget::Account(user) => self.accounts.has_token(user, now),
            Budget::KnownSource(user, address) => {
                self.sources.has_token(&(user.clone(), *address), now)
            }
        }
    }

    fn take(&mut self, budget: &Budget, now: Instant) -> bool {
        match budget {
            Budget::Account(user) => self.accounts.take(user, now),
            Budget::KnownSource(user, address) => self.sources.take(&(user.clone(), *address), now),
        }
    }

    fn give_back(&mut self, budget: &Budget, now: Instant) {
        match budget {
            Budget::Account(user) => self.accounts.give_back(user, now),
            Budget::KnownSource(user, address) => {
                self.sources.give_back(&(user.clone(), *address), now)
            }
        }
    }
}

/// The login limits of a hub (one process, or every replica).
#[derive(Debug)]
pub struct LoginThrottle {
    limits: LoginLimits,
    backend: Backend,
    known: KnownSources,
    counters: LoginCounters,
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
                accounts: Buckets::new(limits.per_user),
                sources: Buckets::new(limits.per_user),
            }),
        }
    }

    /// Admits one attempt from `address` charged to `budget` at `now`, or
    /// says which limit refuses it. An admitted attempt has taken a token
    /// of its address and reserved one of `budget`; call
    /// [`LocalThrottle::checked`] once its password was checked. A refused
    /// one takes nothing.
    pub fn admit(
        &self,
        address: Option<IpAddr>,
        budget: &Budget,
        now: Instant,
    ) -> Result<(), Throttled> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let refuse = |limit, retry_after| Throttled { limit, retry_after };
        state
            .has_token(budget, now)
            .map_err(|wait| refuse(budget.limit(), wait))?;
        if let Some(address) = address {
            state
                .addresses
                .has_token(&address, now)
                .map_err(|wait| refuse(Limit::Address, wait))?;
        }
        if !state.take(budget, now) {
            return Err(refuse(Limit::Capacity, state.accounts.rate.refill()));
        }
        if let Some(address) = address {
            if !state.addresses.take(&address, now) {
                state.give_back(budget, now);
                return Err(refuse(Limit::Capacity, state.addresses.rate.refill()));
            }
        }
        Ok(())
    }

    /// Settles an attempt [`LocalThrottle::admit`] let through: a right
    /// password gives its reserved token back; a wrong one keeps it spent.
    pub fn checked(&self, budget: &Budget, verified: bool, now: Instant) {
        if verified {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.give_back(budget, now);
        }
    }
}

impl LoginThrottle {
    /// A throttle with `limits`, its buckets in this process; the known
    /// sources in `store`.
    pub fn new(limits: LoginLimits, store: Store) -> Self {
        Self {
            limits,
            backend: Backend::Local(LocalThrottle::new(limits)),
            known: KnownSources::new(store),
            counters: LoginCounters::default(),
        }
    }

    /// A throttle with `limits`, its buckets and known sources in the
    /// `store` the replicas share.
    pub fn shared(limits: LoginLimits, store: Store) -> Self {
        Self {
            limits,
            backend: Backend::Shared {
                store: store.clone(),
                takes: AtomicU64::new(0),
            },
            known: KnownSources::new(store),
            counters: LoginCounters::default(),
        }
    }

    /// Counts into `counters` (`/metrics`' password checks and refusals).
    pub fn with_counters(mut self, counters: LoginCounters) -> Self {
        self.counters = counters;
        self
    }

    /// Admits one attempt from `address` for `username` now, or says which
    /// limit refuses it (the module doc; [`LocalThrottle::admit`]). A
    /// store that cannot be asked admits (and logs): the login stays
    /// usable, the address limit and argon2's own cost still pace a
    /// guesser.
    pub async fn admit(&self, address: Option<IpAddr>, username: &str) -> Result<Pass, Throttled> {
        let address = address.map(|a| a.to_canonical());
        let user = user_key(username);
        let known = match address {
            Some(a) => self.known.contains(&user, a).await.unwrap_or_else(|e| {
                tracing::warn!(error = %e, "reading the known login sources");
                false
            }),
            None => false,
        };
        let budget = Budget::of(&user, address, known);
        let admitted = match &self.backend {
            Backend::Local(local) => local.admit(address, &budget, Instant::now()).map(|()| true),
            Backend::Shared { store, takes } => {
                if takes.fetch_add(1, Ordering::Relaxed) % 64 == 63 {
                    self.sweep(store).await;
                }
                self.admit_shared(store, address, &budget).await
            }
        };
        match admitted {
            Ok(reserved) => Ok(Pass {
                budget,
                reserved,
                address,
            }),
            Err(throttled) => {
                self.counters.throttled(throttled.limit.as_str());
                Err(throttled)
            }
        }
    }

    /// [`LoginThrottle::admit`] on the shared buckets: the budget's token
    /// reserved first (conditionally), then the address's; a refusal by
    /// the address gives the reserved token back. `Ok(false)`: admitted
    /// without a reservation (the store could not be asked).
    async fn admit_shared(
        &self,
        store: &Store,
        address: Option<IpAddr>,
        budget: &Budget,
    ) -> Result<bool, Throttled> {
        let (per_user, per_address) = (self.limits.per_user, self.limits.per_address);
        let key = shared::Key::of(budget);
        let reserved = match shared::take(store, &key, per_user).await {
            Ok(true) => true,
            Ok(false) => {
                let t = shared::tokens(store, &key, per_user).await.unwrap_or(0.0);
                return Err(Throttled {
                    limit: budget.limit(),
                    retry_after: per_user.wait(t),
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "reserving a login failure in the shared limits");
                false
            }
        };
        let Some(address) = address else {
            return Ok(reserved);
        };
        let at = shared::Key::address(address);
        match shared::take(store, &at, per_address).await {
            Ok(true) => Ok(reserved),
            Ok(false) => {
                if reserved {
                    self.give_back_shared(store, &key).await;
                }
                let t = shared::tokens(store, &at, per_address).await.unwrap_or(0.0);
                Err(Throttled {
                    limit: Limit::Address,
                    retry_after: per_address.wait(t),
                })
            }
            Err(e) => {
                tracing::warn!(error = %e, "counting a login in the shared limits");
                Ok(reserved)
            }
        }
    }

    async fn give_back_shared(&self, store: &Store, key: &shared::Key) {
        if let Err(e) = shared::give_back(store, key, self.limits.per_user).await {
            tracing::warn!(error = %e, "giving a login failure back in the shared limits");
        }
    }

    /// Settles an admitted attempt once its password was checked (counted
    /// in `/metrics`): a right password gives its reserved failure token
    /// back and makes the address a known source of the account; a wrong
    /// one keeps the token spent.
    pub async fn checked(&self, pass: Pass, verified: bool) {
        self.counters.password_checked();
        if !verified {
            return;
        }
        if pass.reserved {
            match &self.backend {
                Backend::Local(local) => local.checked(&pass.budget, true, Instant::now()),
                Backend::Shared { store, .. } => {
                    self.give_back_shared(store, &shared::Key::of(&pass.budget))
                        .await
                }
            }
        }
        if let Some(address) = pass.address {
            let user = match &pass.budget {
                Budget::Account(user) | Budget::KnownSource(user, _) => user,
            };
            if let Err(e) = self.known.remember(user, address).await {
                tracing::warn!(error = %e, "remembering a login source");
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

/// The key of a username: trimmed, lower-case, at most 64 characters (a
/// username differing only in case or padding is the same person).
pub fn user_key(username: &str) -> String {
    exchange::text::clip(&username.trim().to_lowercase(), 64).to_string()
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
