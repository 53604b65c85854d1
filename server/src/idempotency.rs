//! The consult idempotency store (DESIGN.md §2, "envelope").
//!
//! A consult's `X-Request-Id` is its idempotency key: a repeated id returns
//! the stored answer and never executes the consult twice. Answers live in
//! the hub's own SQLite file, so the guarantee survives a hub restart. Only
//! successful consult answers are stored: a failure must stay retryable.
//!
//! A key is bound to the input it was first used with (a SHA-256 digest of
//! the input as canonical JSON): a retry repeats the same input and gets
//! the stored answer; the same id with a different input is a caller bug
//! (two questions under one key) and is refused, never answered with the
//! other question's answer.

use serde_json::Value;
use sqlx::{Row, SqlitePool};

/// The digest a key is bound to (one definition for both sides: the
/// reference peer binds its task keys the same way).
pub use exchange::wire::input_digest;

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
    /// [`input_digest`] of the input it answered (`None` for rows stored
    /// before digests existed: those replay for any input, as they did).
    pub input_digest: Option<String>,
    /// The provider's A2A answer (its Message or Task, v1.0 JSON) the
    /// result was read from, so a replay answers the same object; `None`
    /// for rows stored before replies were kept.
    pub reply: Option<Value>,
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
                created_at TEXT NOT NULL, input_digest TEXT,
                PRIMARY KEY (caller, provider, capability, request_id))",
        )
        .execute(&pool)
        .await?;
        // Files from before input digests: add the column in place.
        let has_digest: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pragma_table_info('idempotency') WHERE name = 'input_digest'",
        )
        .fetch_one(&pool)
        .await?;
        if has_digest == 0 {
            sqlx::query("ALTER TABLE idempotency ADD COLUMN input_digest TEXT")
                .execute(&pool)
                .await?;
        }
        // Files from before A2A replies were kept: the same, for `reply`.
        let has_reply: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM pragma_table_info('idempotency') WHERE name = 'reply'",
        )
        .fetch_one(&pool)
        .await?;
        if has_reply == 0 {
            sqlx::query("ALTER TABLE idempotency ADD COLUMN reply TEXT")
                .execute(&pool)
                .await?;
        }
        Ok(Self { pool })
    }

    /// The stored answer for `key`, if any.
    pub async fn get(
        &self,
        key: &IdempotencyKey,
    ) -> Result<Option<StoredAnswer>, IdempotencyError> {
        let row = sqlx::query(
            "SELECT answer, trace_id, created_at, input_digest, reply FROM idempotency
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
                let reply: Option<String> = row.try_get("reply")?;
                Ok(Some(StoredAnswer {
                    answer: serde_json::from_str(&answer)?,
                    trace_id: row.try_get("trace_id")?,
                    created_at: row.try_get("created_at")?,
                    input_digest: row.try_get("input_digest")?,
                    reply: reply.map(|r| serde_json::from_str(&r)).transpose()?,
                }))
            }
        }
    }

    /// Stores the first answer for `key`; a later `put` for the same key
    /// keeps the first (the first answer is the one that was executed).
    pub async fn put(
        &self,
        key: &IdempotencyKey,
        input_digest: &str,
        answer: &Value,
        reply: Option<&Value>,
        trace_id: &str,
    ) -> Result<(), IdempotencyError> {
        sqlx::query(
            "INSERT OR IGNORE INTO idempotency
                (caller, provider, capability, request_id, answer, trace_id, created_at, input_digest, reply)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&key.caller)
        .bind(&key.provider)
        .bind(&key.capability)
        .bind(&key.request_id)
        .bind(serde_json::to_string(answer)?)
        .bind(trace_id)
        .bind(exchange::audit::now())
        .bind(input_digest)
        .bind(reply.map(serde_json::to_string).transpose()?)
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
            let pool = exchange::db::open(&path).await.expect("open");
            let store = IdempotencyStore::open(pool.clone()).await.expect("store");
            store
                .put(
                    &key("r1"),
                    "d1",
                    &json!({"answer": "first"}),
                    Some(&json!({"message": {}})),
                    "t1",
                )
                .await
                .expect("put");
            store
                .put(&key("r1"), "d2", &json!({"answer": "second"}), None, "t2")
                .await
                .expect("put");
            pool.close().await;
        }
        let pool = exchange::db::open(&path).await.expect("reopen");
        let store = IdempotencyStore::open(pool).await.expect("store");
        let got = store.get(&key("r1")).await.expect("get").expect("stored");
        assert_eq!(got.answer, json!({"answer": "first"}), "first answer wins");
        assert_eq!(got.trace_id, "t1");
        assert_eq!(got.input_digest.as_deref(), Some("d1"));
        assert!(store.get(&key("r2")).await.expect("get").is_none());
        let mut other_caller = key("r1");
        other_caller.caller = "hub".into();
        assert!(store.get(&other_caller).await.expect("get").is_none());
    }

    #[test]
    fn the_digest_ignores_key_order_and_sees_every_value() {
        let a = input_digest(&json!({"question": "q", "opts": {"x": 1, "y": [1, 2]}}));
        let b = input_digest(&json!({"opts": {"y": [1, 2], "x": 1}, "question": "q"}));
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        assert_ne!(
            a,
            input_digest(&json!({"question": "q", "opts": {"x": 1, "y": [2, 1]}}))
        );
        assert_ne!(
            a,
            input_digest(&json!({"question": "Q", "opts": {"x": 1, "y": [1, 2]}}))
        );
    }

    #[tokio::test]
    async fn a_file_from_before_digests_gains_the_column() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pool = exchange::db::open(&dir.path().join("old.db"))
            .await
            .expect("open");
        sqlx::query(
            "CREATE TABLE idempotency (caller TEXT NOT NULL, provider TEXT NOT NULL,
                capability TEXT NOT NULL, request_id TEXT NOT NULL, answer TEXT NOT NULL,
                trace_id TEXT NOT NULL, created_at TEXT NOT NULL,
                PRIMARY KEY (caller, provider, capability, request_id))",
        )
        .execute(&pool)
        .await
        .expect("old table");
        sqlx::query("INSERT INTO idempotency VALUES ('helpdesk', 'buyercorp', 'budget.consult', 'old', '{}', 't0', 'then')")
            .execute(&pool)
            .await
            .expect("old row");
        let store = IdempotencyStore::open(pool).await.expect("migrates");
        let old = store.get(&key("old")).await.expect("get").expect("row");
        assert_eq!(
            old.input_digest, None,
            "old rows keep replaying for any input"
        );
    }
}
