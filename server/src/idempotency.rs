//! The consult idempotency store (DESIGN.md §2, "envelope").
//!
//! A consult's `X-Request-Id` is its idempotency key: a repeated id returns
//! the stored answer and never executes the consult twice. Answers live in
//! the hub's own SQLite file, so the guarantee survives a hub restart. Only
//! successful consult answers are stored: a failure must stay retryable.

use serde_json::Value;
use sqlx::{Row, SqlitePool};

/// Errors of the store (the gateway logs them and carries on: losing the
/// ability to replay must not turn into losing the call).
#[derive(Debug, thiserror::Error)]
pub enum IdempotencyError {
    /// The database failed.
    #[error("idempotency store: {0}")]
    Store(#[from] sqlx::Error),
    /// A stored answer is not JSON any more.
    #[error("idempotency store holds an unreadable answer: {0}")]
    Corrupt(#[from] serde_json::Error),
}

/// What identifies one consult: the same request id from another caller,
/// or to another capability, is a different consult.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    /// The calling system (or the hub).
    pub caller: String,
    /// The providing system.
    pub provider: String,
    /// The capability.
    pub capability: String,
    /// The caller's `X-Request-Id`.
    pub request_id: String,
}

/// A stored consult answer.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAnswer {
    /// The capability result as first answered.
    pub answer: Value,
    /// The trace of the call that produced it.
    pub trace_id: String,
    /// When it was stored (RFC 3339).
    pub created_at: String,
}

/// The store, inside the hub's database.
#[derive(Debug, Clone)]
pub struct IdempotencyStore {
    pool: SqlitePool,
}

impl IdempotencyStore {
    /// Opens the store in `pool`, creating its table if needed.
    pub async fn open(pool: SqlitePool) -> Result<Self, IdempotencyError> {
        sqlx::query(
            "CREATE TABLE IF NOT EXISTS idempotency (
                caller TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
                request_id TEXT NOT NULL, answer TEXT NOT NULL, trace_id TEXT NOT NULL,
                created_at TEXT NOT NULL,
                PRIMARY KEY (caller, provider, capability, request_id))",
        )
        .execute(&pool)
        .await?;
        Ok(Self { pool })
    }

    /// The stored answer for `key`, if any.
    pub async fn get(
        &self,
        key: &IdempotencyKey,
    ) -> Result<Option<StoredAnswer>, IdempotencyError> {
        let row = sqlx::query(
            "SELECT answer, trace_id, created_at FROM idempotency
             WHERE caller = ? AND provider = ? AND capability = ? AND request_id = ?",
        )
        .bind(&key.caller)
        .bind(&key.provider)
        .bind(&key.capability)
        .bind(&key.request_id)
        .fetch_optional(&self.pool)
        .await?;
        match row {
            None => Ok(None),
            Some(row) => {
                let answer: String = row.try_get("answer")?;
                Ok(Some(StoredAnswer {
                    answer: serde_json::from_str(&answer)?,
                    trace_id: row.try_get("trace_id")?,
                    created_at: row.try_get("created_at")?,
                }))
            }
        }
    }

    /// Stores the first answer for `key`; a later `put` for the same key
    /// keeps the first (the first answer is the one that was executed).
    pub async fn put(
        &self,
        key: &IdempotencyKey,
        answer: &Value,
        trace_id: &str,
    ) -> Result<(), IdempotencyError> {
        sqlx::query(
            "INSERT OR IGNORE INTO idempotency
                (caller, provider, capability, request_id, answer, trace_id, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&key.caller)
        .bind(&key.provider)
        .bind(&key.capability)
        .bind(&key.request_id)
        .bind(serde_json::to_string(answer)?)
        .bind(trace_id)
        .bind(crate::audit::now())
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(id: &str) -> IdempotencyKey {
        IdempotencyKey {
            caller: "helpdesk".into(),
            provider: "buyercorp".into(),
            capability: "budget.consult".into(),
            request_id: id.into(),
        }
    }

    #[tokio::test]
    async fn answers_survive_reopening_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("hub.db");
        {
            let pool = crate::db::open(&path).await.expect("open");
            let store = IdempotencyStore::open(pool.clone()).await.expect("store");
            store
                .put(&key("r1"), &json!({"answer": "first"}), "t1")
                .await
                .expect("put");
            store
                .put(&key("r1"), &json!({"answer": "second"}), "t2")
                .await
                .expect("put");
            pool.close().await;
        }
        let pool = crate::db::open(&path).await.expect("reopen");
        let store = IdempotencyStore::open(pool).await.expect("store");
        let got = store.get(&key("r1")).await.expect("get").expect("stored");
        assert_eq!(got.answer, json!({"answer": "first"}), "first answer wins");
        assert_eq!(got.trace_id, "t1");
        assert!(store.get(&key("r2")).await.expect("get").is_none());
        let mut other_caller = key("r1");
        other_caller.caller = "hub".into();
        assert!(store.get(&other_caller).await.expect("get").is_none());
    }
}
