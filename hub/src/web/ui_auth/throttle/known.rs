//! The addresses each account has logged in from (`login_known_sources`):
//! what makes an attempt a known source's rather than a stranger's.
//!
//! A row is written (or its time moved) at every successful login, and
//! counts for [`KNOWN_SOURCE_TTL`] after it. Only a right password makes
//! one, so strangers cannot grow the table; expired rows are deleted at
//! every 64th login that writes one. The table is in the hub's store on
//! both engines: a restart keeps it, and replicas share it.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use exchange::db::Store;

/// How long after its last successful login an address stays known.
pub const KNOWN_SOURCE_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// The known sources of every account, in `store`.
#[derive(Debug)]
pub struct KnownSources {
    store: Store,
    ttl: Duration,
    /// Rows written so far: every 64th deletes the expired ones.
    written: AtomicU64,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 2)
}

impl KnownSources {
    /// The known sources kept in `store`, each for [`KNOWN_SOURCE_TTL`].
    pub fn new(store: Store) -> Self {
        Self::with_ttl(store, KNOWN_SOURCE_TTL)
    }

    /// The same, each kept for `ttl` (the tests' short one).
    pub fn with_ttl(store: Store, ttl: Duration) -> Self {
        Self {
            store,
            ttl,
            written: AtomicU64::new(0),
        }
    }

    /// Whether `user` (a [`super::user_key`]) logged in from `address`
    /// within the TTL.
    pub async fn contains(&self, user: &str, address: IpAddr) -> Result<bool, sqlx::Error> {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT last_success_ms FROM login_known_sources
             WHERE username = $1 AND address = $2 AND last_success_ms >= $3",
        )
        .bind(user)
        .bind(address.to_canonical().to_string())
        .bind(now_ms() - ms(self.ttl))
        .fetch_optional(self.store.pool())
        .await?;
        Ok(found.is_some())
    }

    /// Notes that `user` logged in from `address` now.
    pub async fn remember(&self, user: &str, address: IpAddr) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO login_known_sources (username, address, last_success_ms)
             VALUES ($1, $2, $3)
             ON CONFLICT (username, address)
             DO UPDATE SET last_success_ms = excluded.last_success_ms",
        )
        .bind(user)
        .bind(address.to_canonical().to_string())
        .bind(now_ms())
        .execute(self.store.pool())
        .await?;
        if self.written.fetch_add(1, Ordering::Relaxed) % 64 == 63 {
            self.forget_expired().await?;
        }
        Ok(())
    }

    /// Deletes the rows older than the TTL.
    pub async fn forget_expired(&self) -> Result<u64, sqlx::Error> {
        Ok(
            sqlx::query("DELETE FROM login_known_sources WHERE last_success_ms < $1")
                .bind(now_ms() - ms(self.ttl))
                .execute(self.store.pool())
                .await?
                .rows_affected(),
        )
    }
}
