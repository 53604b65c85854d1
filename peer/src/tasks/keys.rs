//! The provider's idempotency keys (the module doc of [`super`],
//! "idempotency at the provider"): a task's key is its message's
//! `messageId`, per caller, claimed once in the `task_keys` table of the
//! peer's own SQLite file and bound to the digest of the input it came
//! with.

use sqlx::SqlitePool;

/// The longest messageId kept as a key.
pub(super) const MAX_KEY_LEN: usize = 256;

/// The digest a key is bound to: SHA-256 (hex) of the input as canonical
/// JSON, as the hub binds its keys.
pub use exchange::wire::input_digest;

/// What a key was when a submission claimed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// First use: the submission's own task holds it now.
    New,
    /// Used before, by `task_id`.
    Existing {
        /// The task the key's first submission started.
        task_id: String,
        /// Whether that submission had the same input.
        same_input: bool,
    },
}

/// The provider's idempotency keys: one row per (caller, messageId), the
/// task it started and its input's digest, in the peer's own SQLite file.
/// The unique constraint decides a race between two submissions.
pub struct TaskKeys {
    pool: SqlitePool,
    ready: tokio::sync::OnceCell<()>,
}

impl TaskKeys {
    /// Keys in `pool` (the table is created on first use).
    pub fn new(pool: SqlitePool) -> Self {
        Self {
            pool,
            ready: tokio::sync::OnceCell::new(),
        }
    }

    async fn ensure_table(&self) -> Result<(), sqlx::Error> {
        self.ready
            .get_or_try_init(|| async {
                sqlx::query(
                    "CREATE TABLE IF NOT EXISTS task_keys (
                        caller TEXT NOT NULL, message_id TEXT NOT NULL, task_id TEXT NOT NULL,
                        input_sha256 TEXT NOT NULL, created_at TEXT NOT NULL,
                        UNIQUE(caller, message_id))",
                )
                .execute(&self.pool)
                .await
                .map(|_| ())
            })
            .await
            .map(|_| ())
    }

    /// Claims `message_id` of `caller` for `task_id` unless it was claimed
    /// before.
    pub async fn claim(
        &self,
        caller: &str,
        message_id: &str,
        task_id: &str,
        input_sha256: &str,
    ) -> Result<Claim, sqlx::Error> {
        self.ensure_table().await?;
        sqlx::query(
            "INSERT INTO task_keys (caller, message_id, task_id, input_sha256, created_at)
             VALUES (?, ?, ?, ?, ?) ON CONFLICT(caller, message_id) DO NOTHING",
        )
        .bind(caller)
        .bind(message_id)
        .bind(task_id)
        .bind(input_sha256)
        .bind(exchange::audit::now())
        .execute(&self.pool)
        .await?;
        let (first, digest): (String, String) = sqlx::query_as(
            "SELECT task_id, input_sha256 FROM task_keys WHERE caller = ? AND message_id = ?",
        )
        .bind(caller)
        .bind(message_id)
        .fetch_one(&self.pool)
        .await?;
        Ok(if first == task_id {
            Claim::New
        } else {
            Claim::Existing {
                task_id: first,
                same_input: digest == input_sha256,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_key_is_claimed_once_per_caller() {
        let keys = TaskKeys::new(exchange::db::memory_sqlite().await.unwrap());
        let a = input_digest(&json!({"ticket_id": "T-1003"}));
        let b = input_digest(&json!({"ticket_id": "T-1004"}));
        assert_eq!(
            keys.claim("buyercorp", "m1", "t1", &a).await.unwrap(),
            Claim::New
        );
        assert_eq!(
            keys.claim("buyercorp", "m1", "t2", &a).await.unwrap(),
            Claim::Existing {
                task_id: "t1".into(),
                same_input: true
            }
        );
        assert_eq!(
            keys.claim("buyercorp", "m1", "t3", &b).await.unwrap(),
            Claim::Existing {
                task_id: "t1".into(),
                same_input: false
            }
        );
        // Another caller's key is another key.
        assert_eq!(keys.claim("hub", "m1", "t4", &a).await.unwrap(), Claim::New);
        assert_eq!(
            keys.claim("buyercorp", "m2", "t5", &a).await.unwrap(),
            Claim::New
        );
    }

    #[test]
    fn the_digest_ignores_key_order_only() {
        assert_eq!(
            input_digest(&json!({"a": 1, "b": {"c": [1, 2], "d": null}})),
            input_digest(&json!({"b": {"d": null, "c": [1, 2]}, "a": 1}))
        );
        assert_ne!(
            input_digest(&json!({"b": {"c": [2, 1]}})),
            input_digest(&json!({"b": {"c": [1, 2]}}))
        );
        assert_eq!(input_digest(&json!({})).len(), 64);
    }
}
