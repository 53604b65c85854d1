//! Quotas: how much a consumer may call along an edge (DESIGN.md §2,
//! "connection rule"; the `rate_limit` and `daily_quota` of a rule).
//!
//! A rule may say how often each consumer it names may call its
//! capability of its provider:
//!
//! ```yaml
//! rules:
//!   - capability: orders.query
//!     provider: vendorcorp
//!     consumers: [buyercorp, hub]
//!     rate_limit: { calls: 60, seconds: 60 }
//!     daily_quota: 10000
//! ```
//!
//! Each consumer has counters of its own, per (consumer, provider,
//! capability): BuyerCorp's calls never use up the hub's.
//!
//! # Fixed windows
//!
//! A limit counts calls in **fixed windows**: a rate limit of `seconds`
//! counts in windows that start at the multiples of `seconds` since the
//! Unix epoch, a daily quota in UTC days (midnight to midnight; Unix time
//! has no leap seconds, so its days are UTC days). A window's count starts
//! at zero, so a caller may send a whole window's calls at the end of one
//! window and again at the start of the next: at most twice the limit in
//! any `seconds`, never more. In exchange, a check is one row and one
//! statement, with no timestamps kept per call, and every replica that
//! reads the same clock agrees on where a window starts.
//!
//! # What is counted
//!
//! A call is counted once the gateway has admitted it — version, auth
//! chain, the rule, the input contract — and before it is forwarded,
//! whatever the provider then answers: the provider did the work. A call
//! refused for any reason, a quota included, is not counted. A consult
//! the replay store answers is counted like one that runs (it was asked
//! for). MCP `tools/call` counts against the data-share its data plane
//! serves; `tools/list` and task operations (get, cancel, list) are not
//! calls of a capability and are not counted.
//!
//! # Shared counters
//!
//! The counters live in the hub's store (table `quota_counts`,
//! migration 101): on PostgreSQL every replica counts in the same rows,
//! so a consumer's calls spread over replicas by a balancer add up. One
//! check is one conditional upsert, atomic in both engines:
//!
//! ```sql
//! INSERT … VALUES (…, 1) ON CONFLICT (…) DO UPDATE
//!     SET calls = quota_counts.calls + 1 WHERE quota_counts.calls < $limit
//! RETURNING calls
//! ```
//!
//! No row back means the window is full: the call is refused and the
//! count is untouched. Two racers for the last call of a window cannot
//! both get it (the row's lock orders them). A rule with both limits
//! checks the rate first; a call the daily quota then refuses gives its
//! rate slot back (one `UPDATE`), so a refused call is counted in neither.
//!
//! Rows of windows that ended more than a day ago are deleted, at most
//! once a minute per process, off the call's path.
//!
//! # Cost
//!
//! A rule without limits costs three hash lookups in the registry's index
//! (`Topology::limits`) and no store access. A limited call costs one
//! statement per limit it has.
//!
//! # What a caller sees
//!
//! A call over a limit is `NOT_PERMITTED` (no tenth reason code: no rule
//! permits this call *now*), with a detail naming the limit and when to
//! come back, and `retry_after` in whole seconds until the window ends
//! ([`Over::refusal`]). The doors answer it as HTTP 429 with a
//! `Retry-After` header (`/gateway/v1`, the A2A HTTP+JSON binding), and
//! as `retryAfter` in the `/gateway/v1` JSON and in the A2A error's
//! `ErrorInfo` metadata (JSON-RPC keeps its HTTP 200 for errors).
//!
//! If the store cannot be asked, the call is admitted and the failure
//! logged, as the shared login limits do: a quota is a share of a
//! provider's capacity, and an outage of the hub's store should not also
//! stop every limited edge.
//!
//! The clock is the hub process's own: replicas must keep their clocks in
//! sync (NTP), as they must for their audit records' timestamps.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use exchange::db::Store;
use exchange::reason::{NotConnected, ReasonCode};

use crate::registry::model::{Limits, RateLimit};

/// The length of a daily quota's window: one UTC day.
pub const DAY_SECONDS: u64 = 86_400;

/// How often a process deletes old windows, at most.
const SWEEP_EVERY_SECONDS: i64 = 60;

/// How long a window's row is kept after the window ended.
const KEEP_ENDED_SECONDS: u64 = DAY_SECONDS;

/// Whose calls are counted: one consumer, along one edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge<'a> {
    pub consumer: &'a str,
    pub provider: &'a str,
    pub capability: &'a str,
}

/// The limit a call would exceed, and how long until its window ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Over {
    /// The consumer's calls in the current rate window.
    #[error("over the rate limit of {} calls per {} s", limit.calls, limit.seconds)]
    Rate {
        limit: RateLimit,
        /// Seconds until the window ends (at least 1).
        retry_after: u64,
    },
    /// The consumer's calls in the current UTC day.
    #[error("over the daily quota of {quota} calls (per UTC day)")]
    Daily {
        quota: u64,
        /// Seconds until the next 00:00 UTC (at least 1).
        retry_after: u64,
    },
}

impl Over {
    /// Seconds until the limit lets calls through again.
    pub fn retry_after(&self) -> u64 {
        match self {
            Over::Rate { retry_after, .. } | Over::Daily { retry_after, .. } => *retry_after,
        }
    }

    /// What the caller is told: `NOT_PERMITTED`, the limit, the edge and
    /// when to come back, with `retry_after` for the doors to answer.
    pub fn refusal(&self, edge: Edge<'_>) -> NotConnected {
        let retry_after = self.retry_after();
        NotConnected::new(
            ReasonCode::NotPermitted,
            format!(
                "{self} for {} at {}; retry after {retry_after} s",
                edge.capability, edge.provider
            ),
        )
        .with_retry_after(retry_after)
    }
}

/// Why the counters could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum QuotaError {
    /// The store refused or is away.
    #[error("quota counters: {0}")]
    Store(#[from] sqlx::Error),
}

/// The hub's counters of calls along limited edges, in its store.
#[derive(Clone)]
pub struct Quotas {
    store: Store,
    /// When this process last deleted old windows (Unix seconds).
    last_sweep: Arc<AtomicI64>,
}

impl std::fmt::Debug for Quotas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Quotas").finish_non_exhaustive()
    }
}

/// One fixed window of one limit, at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    /// `rate` or `day`: a rate limit of a day's length and the daily quota
    /// are counted apart.
    kind: &'static str,
    seconds: u64,
    /// Unix seconds of its first second.
    start: u64,
    /// The calls it admits.
    limit: u64,
}

impl Window {
    fn rate(limit: RateLimit, now: u64) -> Self {
        Self::at("rate", limit.seconds, limit.calls, now)
    }

    fn day(quota: u64, now: u64) -> Self {
        Self::at("day", DAY_SECONDS, quota, now)
    }

    fn at(kind: &'static str, seconds: u64, limit: u64, now: u64) -> Self {
        let seconds = seconds.max(1);
        Self {
            kind,
            seconds,
            start: now - now % seconds,
            limit,
        }
    }

    /// Unix seconds of the first second after it.
    fn end(&self) -> u64 {
        self.start.saturating_add(self.seconds)
    }

    /// Whole seconds from `now` until it ends: never early, at least 1.
    fn retry_after(&self, now: u64) -> u64 {
        self.end().saturating_sub(now).max(1)
    }
}

/// A count, a limit or a time as the store binds it (`Any` carries i64).
fn bound(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Now, in Unix seconds.
fn unix_now() -> u64 {
    u64::try_from(chrono::Utc::now().timestamp()).unwrap_or(0)
}

impl Quotas {
    /// Counters in `store` (migrated: `crate::store::open`).
    pub fn new(store: Store) -> Self {
        Self {
            store,
            last_sweep: Arc::new(AtomicI64::new(0)),
        }
    }

    /// Admits one call of `edge` under `limits` now and counts it, or says
    /// which limit refuses it (and then it is not counted). A store that
    /// cannot be asked admits the call, uncounted, and the failure is
    /// logged.
    pub async fn admit(&self, edge: Edge<'_>, limits: Limits) -> Result<(), Over> {
        let now = unix_now();
        self.sweep_now_and_then(now);
        match self.take(edge, limits, now).await {
            Ok(admitted) => admitted,
            Err(e) => {
                tracing::warn!(
                    error = %e,
                    consumer = edge.consumer,
                    provider = edge.provider,
                    capability = edge.capability,
                    "quota counters unavailable; the call is admitted uncounted"
                );
                Ok(())
            }
        }
    }

    /// [`Quotas::admit`] at `now` (Unix seconds), the store's errors
    /// returned: the rate window first, then the day; a call the day
    /// refuses gives its rate slot back.
    pub async fn take(
        &self,
        edge: Edge<'_>,
        limits: Limits,
        now: u64,
    ) -> Result<Result<(), Over>, QuotaError> {
        let rate = limits.rate.map(|r| (r, Window::rate(r, now)));
        if let Some((limit, window)) = rate {
            if !self.count(edge, window).await? {
                return Ok(Err(Over::Rate {
                    limit,
                    retry_after: window.retry_after(now),
                }));
            }
        }
        if let Some(quota) = limits.daily {
            let window = Window::day(quota, now);
            let counted = match self.count(edge, window).await {
                Ok(counted) => counted,
                Err(e) => {
                    if let Some((_, taken)) = rate {
                        self.give_back(edge, taken).await;
                    }
                    return Err(e.into());
                }
            };
            if !counted {
                if let Some((_, taken)) = rate {
                    self.give_back(edge, taken).await;
                }
                return Ok(Err(Over::Daily {
                    quota,
                    retry_after: window.retry_after(now),
                }));
            }
        }
        Ok(Ok(()))
    }

    /// Counts one call in `window` if it has room: whether it had.
    async fn count(&self, edge: Edge<'_>, window: Window) -> Result<bool, sqlx::Error> {
        if window.limit == 0 {
            return Ok(false);
        }
        let counted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO quota_counts
                 (consumer, provider, capability, kind, seconds, window_start, window_end, calls)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 1)
             ON CONFLICT (consumer, provider, capability, kind, seconds, window_start)
             DO UPDATE SET calls = quota_counts.calls + 1
                 WHERE quota_counts.calls < $8
             RETURNING calls",
        )
        .bind(edge.consumer)
        .bind(edge.provider)
        .bind(edge.capability)
        .bind(window.kind)
        .bind(bound(window.seconds))
        .bind(bound(window.start))
        .bind(bound(window.end()))
        .bind(bound(window.limit))
        .fetch_optional(self.store.pool())
        .await?;
        Ok(counted.is_some())
    }

    /// Uncounts a call counted in `window` (its other limit refused it).
    /// A failure leaves the window one call fuller than it should be:
    /// logged, never a refusal of this call for another reason.
    async fn give_back(&self, edge: Edge<'_>, window: Window) {
        let given = sqlx::query(
            "UPDATE quota_counts SET calls = calls - 1
             WHERE consumer = $1 AND provider = $2 AND capability = $3
               AND kind = $4 AND seconds = $5 AND window_start = $6 AND calls > 0",
        )
        .bind(edge.consumer)
        .bind(edge.provider)
        .bind(edge.capability)
        .bind(window.kind)
        .bind(bound(window.seconds))
        .bind(bound(window.start))
        .execute(self.store.pool())
        .await;
        if let Err(e) = given {
            tracing::warn!(error = %e, "could not give a refused call's rate slot back");
        }
    }

    /// The calls counted for `edge` in the rate window of `limit` and in
    /// the day, at `now`: what an operator (or a test) reads.
    pub async fn counted(
        &self,
        edge: Edge<'_>,
        limits: Limits,
        now: u64,
    ) -> Result<(Option<u64>, Option<u64>), QuotaError> {
        let mut rate = None;
        if let Some(r) = limits.rate {
            rate = Some(self.read(edge, Window::rate(r, now)).await?);
        }
        let mut day = None;
        if let Some(q) = limits.daily {
            day = Some(self.read(edge, Window::day(q, now)).await?);
        }
        Ok((rate, day))
    }

    async fn read(&self, edge: Edge<'_>, window: Window) -> Result<u64, QuotaError> {
        let calls: Option<i64> = sqlx::query_scalar(
            "SELECT calls FROM quota_counts
             WHERE consumer = $1 AND provider = $2 AND capability = $3
               AND kind = $4 AND seconds = $5 AND window_start = $6",
        )
        .bind(edge.consumer)
        .bind(edge.provider)
        .bind(edge.capability)
        .bind(window.kind)
        .bind(bound(window.seconds))
        .bind(bound(window.start))
        .fetch_optional(self.store.pool())
        .await?;
        Ok(calls.map_or(0, |c| u64::try_from(c).unwrap_or(0)))
    }

    /// Deletes the rows of windows that ended more than a day before
    /// `now`: how many.
    pub async fn sweep(&self, now: u64) -> Result<u64, QuotaError> {
        let cutoff = now.saturating_sub(KEEP_ENDED_SECONDS);
        let done = sqlx::query("DELETE FROM quota_counts WHERE window_end < $1")
            .bind(bound(cutoff))
            .execute(self.store.pool())
            .await?;
        Ok(done.rows_affected())
    }

    /// Starts a [`Quotas::sweep`] on its own task when this process has
    /// not swept for a minute (one call a minute wins the race for it).
    fn sweep_now_and_then(&self, now: u64) {
        let now = bound(now);
        let last = self.last_sweep.load(Ordering::Relaxed);
        if now - last < SWEEP_EVERY_SECONDS
            || self
                .last_sweep
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let quotas = self.clone();
        tokio::spawn(async move {
            if let Err(e) = quotas.sweep(u64::try_from(now).unwrap_or(0)).await {
                tracing::warn!(error = %e, "could not delete old quota windows");
            }
        });
    }
}

#[cfg(test)]
#[path = "quotas_tests.rs"]
mod tests;
