//! The consult idempotency store (DESIGN.md §2, "envelope").
//!
//! A consult's `X-Request-Id` is its idempotency key: a repeated id returns
//! the stored answer and never executes the consult twice. Answers live in
//! the hub's own store, so the guarantee survives a hub restart, and is
//! shared by every replica on one PostgreSQL database. Only successful
//! consult answers are stored: a failure must stay retryable.
//!
//! A key is bound to the input it was first used with (a SHA-256 digest of
//! the input as canonical JSON): a retry repeats the same input and gets
//! the stored answer; the same id with a different input is a caller bug
//! (two questions under one key) and is refused, never answered with the
//! other question's answer.
//!
//! **Claims.** While a consult runs, its key is *claimed*: a row of
//! `idempotency_claims` naming the hub process that runs it. The primary
//! key lets exactly one call insert it — in this process or in another
//! replica — and the others wait for the answer (`gateway::replay`). A
//! claim whose process died (`cluster::Cluster::is_alive`) is taken over
//! by one waiter, with a conditional update. The answer and the release of
//! the claim commit together.

use serde_json::Value;
use sqlx::Row;

use exchange::db::Store;

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

impl IdempotencyError {
    /// The store is away for now: worth trying again shortly
    /// ([`exchange::db::is_unavailable`]).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, IdempotencyError::Store(e) if exchange::db::is_unavailable(e))
    }
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

/// Who runs a key's consult now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// This call inserted the claim: it runs the consult.
    Won,
    /// Another call holds it: the hub process (its instance id) running it.
    HeldBy(String),
}

/// The store, inside the hub's database.
#[derive(Debug, Clone)]
pub struct IdempotencyStore {
    store: Store,
}

/// The condition on a key, as [`by_key`] binds it ($1 to $4).
const KEY: &str = "caller = $1 AND provider = $2 AND capability = $3 AND request_id = $4";

/// `sql` with the four parts of `key` bound as $1 to $4.
fn by_key<'q>(
    sql: &'q str,
    key: &'q IdempotencyKey,
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    sqlx::query(sql)
        .bind(&key.caller)
        .bind(&key.provider)
        .bind(&key.capability)
        .bind(&key.request_id)
}

impl IdempotencyStore {
    /// The store in the hub's (migrated) database.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The stored answer for `key`, if any.
    pub async fn get(
        &self,
        key: &IdempotencyKey,
    ) -> Result<Option<StoredAnswer>, IdempotencyError> {
        let sql = format!(
            "SELECT answer, trace_id, created_at, input_digest, reply FROM idempotency WHERE {KEY}"
        );
        let row = by_key(&sql, key).fetch_optional(self.store.pool()).await?;
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

    /// Claims `key` for the hub process `me`, or says who holds it.
    pub async fn claim(&self, key: &IdempotencyKey, me: &str) -> Result<Claim, IdempotencyError> {
        let inserted = by_key(
            "INSERT INTO idempotency_claims
                (caller, provider, capability, request_id, claimed_by, claimed_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (caller, provider, capability, request_id) DO NOTHING",
            key,
        )
        .bind(me)
        .bind(exchange::audit::now())
        .execute(self.store.pool())
        .await?
        .rows_affected();
        if inserted == 1 {
            return Ok(Claim::Won);
        }
        let sql = format!("SELECT claimed_by FROM idempotency_claims WHERE {KEY}");
        let holder: Option<String> = by_key(&sql, key)
            .fetch_optional(self.store.pool())
            .await?
            .map(|row| row.try_get("claimed_by"))
            .transpose()?;
        match holder {
            Some(h) => Ok(Claim::HeldBy(h)),
            // Released between the two statements: try again.
            None => Box::pin(self.claim(key, me)).await,
        }
    }

    /// Takes over the claim `dead` held on `key` (its process is gone).
    /// Of several callers, one wins.
    pub async fn take_over(
        &self,
        key: &IdempotencyKey,
        dead: &str,
        me: &str,
    ) -> Result<bool, IdempotencyError> {
        let sql = format!(
            "UPDATE idempotency_claims SET claimed_by = $5, claimed_at = $6
             WHERE {KEY} AND claimed_by = $7"
        );
        let n = by_key(&sql, key)
            .bind(me)
            .bind(exchange::audit::now())
            .bind(dead)
            .execute(self.store.pool())
            .await?
            .rows_affected();
        Ok(n == 1)
    }

    /// Releases `me`'s claim on `key` without an answer (the consult
    /// failed: the key stays retryable).
    pub async fn release(&self, key: &IdempotencyKey, me: &str) -> Result<(), IdempotencyError> {
        let sql = format!("DELETE FROM idempotency_claims WHERE {KEY} AND claimed_by = $5");
        by_key(&sql, key)
            .bind(me)
            .execute(self.store.pool())
            .await?;
        Ok(())
    }

    /// The hub processes holding claims now.
    pub async fn claimers(&self) -> Result<Vec<String>, IdempotencyError> {
        Ok(
            sqlx::query_scalar("SELECT DISTINCT claimed_by FROM idempotency_claims")
                .fetch_all(self.store.pool())
                .await?,
        )
    }

    /// Frees every claim of `dead` (a hub process that is gone).
    pub async fn release_all(&self, dead: &str) -> Result<u64, IdempotencyError> {
        Ok(
            sqlx::query("DELETE FROM idempotency_claims WHERE claimed_by = $1")
                .bind(dead)
                .execute(self.store.pool())
                .await?
                .rows_affected(),
        )
    }

    /// Stores the first answer for `key` and releases `me`'s claim, in one
    /// transaction; a later answer for the same key keeps the first (the
    /// first answer is the one that was executed).
    pub async fn put(
        &self,
        key: &IdempotencyKey,
        me: &str,
        input_digest: &str,
        answer: &Value,
        reply: Option<&Value>,
        trace_id: &str,
    ) -> Result<(), IdempotencyError> {
        let answer = serde_json::to_string(answer)?;
        let reply = reply.map(serde_json::to_string).transpose()?;
        let mut tx = self.store.pool().begin().await?;
        by_key(
            "INSERT INTO idempotency
                (caller, provider, capability, request_id, answer, trace_id, created_at, input_digest, reply)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
             ON CONFLICT (caller, provider, capability, request_id) DO NOTHING",
            key,
        )
        .bind(answer)
        .bind(trace_id)
        .bind(exchange::audit::now())
        .bind(input_digest)
        .bind(reply)
        .execute(&mut *tx)
        .await?;
        let release = format!("DELETE FROM idempotency_claims WHERE {KEY} AND claimed_by = $5");
        by_key(&release, key).bind(me).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
#[path = "idempotency_tests.rs"]
mod tests;
