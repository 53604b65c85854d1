//! The provider's negotiation memory and granted contracts, in its own
//! SQLite file: its last offer per negotiation (the
//! A2A `contextId`: an `accept` is checked against it), and every contract
//! it granted, the newest per consumer and capability being the current
//! one that every read is decided against.

use chrono::{DateTime, Utc};
use exchange::negotiation::Scope;
use sqlx::{Row, SqlitePool};

use super::Contract;

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ContractStoreError {
    /// The database failed.
    #[error("contract store: {0}")]
    Db(#[from] sqlx::Error),
    /// A stored scope is not readable any more.
    #[error("contract store holds an unreadable scope: {0}")]
    Corrupt(#[from] serde_json::Error),
    /// A stored time is not RFC 3339.
    #[error("contract store holds an unreadable time: {0}")]
    Time(#[from] chrono::ParseError),
}

/// The store, inside the peer's database.
#[derive(Debug, Clone)]
pub struct ContractStore {
    pool: SqlitePool,
}

impl ContractStore {
    /// Opens the store in `pool`, creating its tables if needed.
    pub async fn open(pool: SqlitePool) -> Result<Self, ContractStoreError> {
        sqlx::query(
            "CREATE TABLE IF NOT EXISTS negotiation_offers (
                context_id TEXT PRIMARY KEY, consumer TEXT NOT NULL, scope TEXT NOT NULL,
                at TEXT NOT NULL)",
        )
        .execute(&pool)
        .await?;
        sqlx::query(
            "CREATE TABLE IF NOT EXISTS contracts (
                seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL,
                capability TEXT NOT NULL, provider TEXT NOT NULL, consumer TEXT NOT NULL,
                scope TEXT NOT NULL, context_id TEXT NOT NULL,
                granted_at TEXT NOT NULL, expires_at TEXT NOT NULL)",
        )
        .execute(&pool)
        .await?;
        Ok(Self { pool })
    }

    /// Remembers the scope the provider just offered in a negotiation (the
    /// last one counts).
    pub async fn record_offer(
        &self,
        context_id: &str,
        consumer: &str,
        scope: &Scope,
    ) -> Result<(), ContractStoreError> {
        sqlx::query(
            "INSERT INTO negotiation_offers (context_id, consumer, scope, at) VALUES (?, ?, ?, ?)
             ON CONFLICT(context_id) DO UPDATE SET scope = excluded.scope, at = excluded.at",
        )
        .bind(context_id)
        .bind(consumer)
        .bind(serde_json::to_string(scope)?)
        .bind(Utc::now().to_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The provider's last offer in a negotiation of `consumer` (another
    /// consumer's negotiation id finds nothing).
    pub async fn last_offer(
        &self,
        context_id: &str,
        consumer: &str,
    ) -> Result<Option<Scope>, ContractStoreError> {
        let row = sqlx::query(
            "SELECT scope FROM negotiation_offers WHERE context_id = ? AND consumer = ?",
        )
        .bind(context_id)
        .bind(consumer)
        .fetch_optional(&self.pool)
        .await?;
        match row {
            None => Ok(None),
            Some(r) => Ok(Some(serde_json::from_str(
                &r.try_get::<String, _>("scope")?,
            )?)),
        }
    }

    /// Writes a granted contract; it becomes the current one for its
    /// consumer and capability.
    pub async fn grant(&self, c: &Contract) -> Result<(), ContractStoreError> {
        sqlx::query(
            "INSERT INTO contracts (id, capability, provider, consumer, scope, context_id, granted_at, expires_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&c.id)
        .bind(&c.capability)
        .bind(&c.provider)
        .bind(&c.consumer)
        .bind(serde_json::to_string(&c.scope)?)
        .bind(&c.context_id)
        .bind(c.granted_at.to_rfc3339())
        .bind(c.expires_at.to_rfc3339())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The current contract of `consumer` for `capability`: the newest
    /// granted, expired or not (the decision tells an expired one apart).
    pub async fn current(
        &self,
        consumer: &str,
        capability: &str,
    ) -> Result<Option<Contract>, ContractStoreError> {
        let row = sqlx::query(
            "SELECT id, capability, provider, consumer, scope, context_id, granted_at, expires_at
             FROM contracts WHERE consumer = ? AND capability = ? ORDER BY seq DESC LIMIT 1",
        )
        .bind(consumer)
        .bind(capability)
        .fetch_optional(&self.pool)
        .await?;
        let Some(r) = row else { return Ok(None) };
        let time = |col: &str| -> Result<DateTime<Utc>, ContractStoreError> {
            let text: String = r.try_get(col)?;
            Ok(DateTime::parse_from_rfc3339(&text)?.with_timezone(&Utc))
        };
        Ok(Some(Contract {
            id: r.try_get("id")?,
            capability: r.try_get("capability")?,
            provider: r.try_get("provider")?,
            consumer: r.try_get("consumer")?,
            scope: serde_json::from_str(&r.try_get::<String, _>("scope")?)?,
            context_id: r.try_get("context_id")?,
            granted_at: time("granted_at")?,
            expires_at: time("expires_at")?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::policy;

    fn scope(cols: &[&str]) -> Scope {
        Scope {
            columns: cols.iter().map(|c| c.to_string()).collect(),
            purpose: "p".into(),
            retention_days: 30,
        }
    }

    #[tokio::test]
    async fn offers_per_negotiation_and_the_newest_contract_is_current() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("peer.db");
        let store = ContractStore::open(exchange::db::open_sqlite(&path).await.expect("db"))
            .await
            .expect("open");
        assert_eq!(
            store.last_offer("ctx-1", "buyercorp").await.expect("q"),
            None
        );
        store
            .record_offer("ctx-1", "buyercorp", &scope(&["region", "order_id"]))
            .await
            .expect("w");
        store
            .record_offer("ctx-1", "buyercorp", &scope(&["region"]))
            .await
            .expect("w");
        assert_eq!(
            store.last_offer("ctx-1", "buyercorp").await.expect("q"),
            Some(scope(&["region"])),
            "the last offer counts"
        );
        assert_eq!(
            store.last_offer("ctx-1", "helpdesk").await.expect("q"),
            None,
            "another consumer's negotiation"
        );

        let now = Utc::now();
        let first = policy::grant(
            scope(&["region"]),
            "orders.query",
            "vendorcorp",
            "buyercorp",
            "ctx-1",
            now,
        );
        let second = policy::grant(
            scope(&["region", "order_date"]),
            "orders.query",
            "vendorcorp",
            "buyercorp",
            "ctx-2",
            now,
        );
        store.grant(&first).await.expect("grant");
        store.grant(&second).await.expect("grant");
        drop(store);
        let reopened = ContractStore::open(exchange::db::open_sqlite(&path).await.expect("db"))
            .await
            .expect("open");
        let current = reopened
            .current("buyercorp", "orders.query")
            .await
            .expect("q")
            .expect("a contract");
        assert_eq!(current.id, second.id);
        assert_eq!(current.scope, second.scope);
        assert_eq!(
            current.expires_at.timestamp(),
            second.expires_at.timestamp()
        );
        assert_eq!(
            reopened
                .current("helpdesk", "orders.query")
                .await
                .expect("q"),
            None
        );
    }
}
