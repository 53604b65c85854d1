//! Signed checkpoints: a signer's word, at a time, that a chain's head was
//! a given link.
//!
//! A checkpoint is `{system, seq, hash, at, count}` — the chain, the seq
//! of its last record, that record's link ([`super::chain`]), when it was
//! taken (RFC 3339 UTC) and how many records the chain holds up to that
//! seq — signed as a detached JWS (RFC 7515 appendix F) whose payload is
//! that object's RFC 8785 (JCS) form, with an Ed25519 key of
//! [`crate::jws`] (`alg: EdDSA`, `kid` in the protected header). The store
//! keeps it in `audit_checkpoints` with the compact detached form
//! `protected..signature` and the `kid`. Anyone holding the signer's JWKS
//! can check it; a checkpoint pins every record up to its seq, since each
//! link covers all those before it, and its count says how many there are
//! (seq numbers may skip: PostgreSQL's identity leaves gaps).
//!
//! Checkpoints signed before the count existed (migration 4) sign
//! `{system, seq, hash, at}` and carry no `count`: they verify as they
//! were signed, and pin the hash only.
//!
//! [`checkpoint`] writes one when the head moved since the last one (and
//! nothing otherwise); two processes checkpointing the same head at once
//! store it once. The hub runs [`checkpoint_all`] at an interval; a peer's
//! trail has no checkpoints: its chain alone is verified.

use jsonwebtoken::jwk::JwkSet;
use serde::{Deserialize, Serialize};
use sqlx::Row;

use super::chain::{self, CanonicalError};
use super::AuditError;
use crate::db::Store;
use crate::jws::SigningKey;

/// One signed checkpoint, as stored and exported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The chain (the `system` of its records).
    pub system: String,
    /// The seq of the last record it covers.
    pub seq: i64,
    /// That record's link (64 hex digits).
    pub hash: String,
    /// When it was signed (RFC 3339 UTC, milliseconds).
    pub at: String,
    /// How many records the chain holds up to `seq` (`None`: signed
    /// before checkpoints counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The key that signed it.
    pub kid: String,
    /// The detached JWS: `protected..signature` (base64url).
    pub signature: String,
}

/// What a checkpoint's signature covers: the JCS form of
/// `{system, seq, hash, at, count}`, or of `{system, seq, hash, at}` for
/// one without a count.
pub fn payload(
    system: &str,
    seq: i64,
    hash: &str,
    at: &str,
    count: Option<u64>,
) -> Result<Vec<u8>, CanonicalError> {
    #[derive(Serialize)]
    struct Signed<'a> {
        system: &'a str,
        seq: i64,
        hash: &'a str,
        at: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        count: Option<u64>,
    }
    serde_json_canonicalizer::to_vec(&Signed {
        system,
        seq,
        hash,
        at,
        count,
    })
    .map_err(|e| CanonicalError(e.to_string()))
}

impl Checkpoint {
    /// Checks the signature against `keys`: the `kid` that verified it, or
    /// why it does not verify.
    pub fn verify_signature(&self, keys: &JwkSet) -> Result<String, String> {
        let payload = payload(&self.system, self.seq, &self.hash, &self.at, self.count)
            .map_err(|e| e.to_string())?;
        let kid = crate::jws::verify_detached(&self.signature, &payload, keys, "the checkpoint")?;
        if kid != self.kid {
            return Err(format!(
                "the signature names key `{}`, the checkpoint `{}`",
                crate::text::clip(&kid, 64),
                crate::text::clip(&self.kid, 64)
            ));
        }
        Ok(kid)
    }
}

/// Signs and stores a checkpoint of `system`'s chain head with `key`, if
/// the head moved since the chain's last checkpoint: the new checkpoint,
/// or `None` (no chain yet, or nothing new).
pub async fn checkpoint(
    store: &Store,
    system: &str,
    key: &SigningKey,
) -> Result<Option<Checkpoint>, AuditError> {
    let Some(head) = chain::head(store, system).await? else {
        return Ok(None);
    };
    if head.seq <= 0 {
        return Ok(None);
    }
    let last: Option<i64> = sqlx::query_scalar(
        "SELECT seq FROM audit_checkpoints WHERE system = $1 ORDER BY seq DESC LIMIT 1",
    )
    .bind(system)
    .fetch_optional(store.pool())
    .await?;
    if last.is_some_and(|seq| seq >= head.seq) {
        return Ok(None);
    }
    let at = super::now();
    let hash = head.hash.hex();
    let count = Some(u64::try_from(head.count).unwrap_or(0));
    let payload = payload(system, head.seq, &hash, &at, count).map_err(AuditError::Canonical)?;
    let (protected, signature) = key.sign_detached(serde_json::json!({}), &payload)?;
    let made = Checkpoint {
        system: system.to_string(),
        seq: head.seq,
        hash,
        at,
        count,
        kid: key.kid().to_string(),
        signature: format!("{protected}..{signature}"),
    };
    let stored = sqlx::query(
        "INSERT INTO audit_checkpoints (system, seq, hash, at, kid, signature, count)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (system, seq) DO NOTHING",
    )
    .bind(&made.system)
    .bind(made.seq)
    .bind(&made.hash)
    .bind(&made.at)
    .bind(&made.kid)
    .bind(&made.signature)
    .bind(head.count)
    .execute(store.pool())
    .await?
    .rows_affected();
    Ok((stored == 1).then_some(made))
}

/// [`checkpoint`] for every chain of the store: the checkpoints made.
pub async fn checkpoint_all(
    store: &Store,
    key: &SigningKey,
) -> Result<Vec<Checkpoint>, AuditError> {
    let systems: Vec<String> =
        sqlx::query_scalar("SELECT system FROM audit_chain_head ORDER BY system")
            .fetch_all(store.pool())
            .await?;
    let mut made = Vec::new();
    for system in systems {
        made.extend(checkpoint(store, &system, key).await?);
    }
    Ok(made)
}

/// `system`'s checkpoints with `from <= seq <= to`, in seq order.
pub async fn list(
    store: &Store,
    system: &str,
    from: i64,
    to: i64,
) -> Result<Vec<Checkpoint>, AuditError> {
    let rows = sqlx::query(
        "SELECT system, seq, hash, at, kid, signature, count FROM audit_checkpoints
         WHERE system = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq",
    )
    .bind(system)
    .bind(from)
    .bind(to)
    .fetch_all(store.pool())
    .await?;
    rows.iter()
        .map(|r| {
            Ok(Checkpoint {
                system: r.try_get("system")?,
                seq: r.try_get("seq")?,
                hash: r.try_get("hash")?,
                at: r.try_get("at")?,
                count: r
                    .try_get::<Option<i64>, _>("count")?
                    .map(|n| u64::try_from(n).unwrap_or(0)),
                kid: r.try_get("kid")?,
                signature: r.try_get("signature")?,
            })
        })
        .collect()
}
