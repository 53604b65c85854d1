//! The shared buckets' statements (`login_buckets`, the replicas' one
//! store): one token bucket per row, as of `at_ms` (wall-clock
//! milliseconds), each take one conditional upsert.
//!
//! Written once for both engines but for two function names: PostgreSQL's
//! `LEAST`/`GREATEST` are SQLite's scalar `MIN`/`MAX` of several
//! arguments. Replicas run on PostgreSQL; the SQLite spelling lets the
//! same statements be tested on both.

use std::net::IpAddr;
use std::time::Duration;

use exchange::db::{Engine, Store};

use super::{Allowance, Budget};

/// A bucket's row: its `kind` and `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Key {
    kind: &'static str,
    key: String,
}

impl Key {
    /// The row of a failure budget: `user` for an account's, `known` for
    /// one known source's (`address/user`: an address holds no `/`).
    pub(super) fn of(budget: &Budget) -> Self {
        match budget {
            Budget::Account(user) => Self {
                kind: "user",
                key: user.clone(),
            },
            Budget::KnownSource(user, address) => Self {
                kind: "known",
                key: format!("{address}/{user}"),
            },
        }
    }

    /// The row of an address's attempts.
    pub(super) fn address(address: IpAddr) -> Self {
        Self {
            kind: "address",
            key: address.to_string(),
        }
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn refill_ms(rate: Allowance) -> f64 {
    rate.refill().as_secs_f64() * 1e3
}

/// The engine's names for the smaller and the larger of two values.
fn least_greatest(store: &Store) -> (&'static str, &'static str) {
    match store.engine() {
        Engine::Postgres => ("LEAST", "GREATEST"),
        Engine::Sqlite => ("MIN", "MAX"),
    }
}

/// The tokens of a bucket now (a bucket never seen is full).
pub(super) async fn tokens(store: &Store, key: &Key, rate: Allowance) -> Result<f64, sqlx::Error> {
    let (least, _) = least_greatest(store);
    let sql = format!(
        "SELECT {least}($1, tokens + ($2 - at_ms) / $3) FROM login_buckets
         WHERE kind = $4 AND key = $5"
    );
    let t: Option<f64> = sqlx::query_scalar(&sql)
        .bind(f64::from(rate.count))
        .bind(now_ms())
        .bind(refill_ms(rate))
        .bind(key.kind)
        .bind(&key.key)
        .fetch_optional(store.pool())
        .await?;
    Ok(t.unwrap_or(f64::from(rate.count)))
}

/// Takes a token: `false` when the bucket has none (nothing changes then).
pub(super) async fn take(store: &Store, key: &Key, rate: Allowance) -> Result<bool, sqlx::Error> {
    let (least, greatest) = least_greatest(store);
    let sql = format!(
        "INSERT INTO login_buckets (kind, key, tokens, at_ms) VALUES ($1, $2, $3 - 1, $4)
         ON CONFLICT (kind, key) DO UPDATE SET
            tokens = {greatest}(0, {least}($3, login_buckets.tokens + ($4 - login_buckets.at_ms) / $5) - 1),
            at_ms = $4
         WHERE {least}($3, login_buckets.tokens + ($4 - login_buckets.at_ms) / $5) >= 1
         RETURNING tokens"
    );
    let taken: Option<f64> = sqlx::query_scalar(&sql)
        .bind(key.kind)
        .bind(&key.key)
        .bind(f64::from(rate.count))
        .bind(now_ms())
        .bind(refill_ms(rate))
        .fetch_optional(store.pool())
        .await?;
    Ok(taken.is_some())
}

/// Gives a token taken earlier back (capped at the burst).
pub(super) async fn give_back(
    store: &Store,
    key: &Key,
    rate: Allowance,
) -> Result<(), sqlx::Error> {
    let (least, _) = least_greatest(store);
    let sql = format!(
        "UPDATE login_buckets SET
            tokens = {least}($1, tokens + ($2 - at_ms) / $3 + 1), at_ms = $2
         WHERE kind = $4 AND key = $5"
    );
    sqlx::query(&sql)
        .bind(f64::from(rate.count))
        .bind(now_ms())
        .bind(refill_ms(rate))
        .bind(key.kind)
        .bind(&key.key)
        .execute(store.pool())
        .await?;
    Ok(())
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
