//! The hub's own signing keys: what its agent cards are signed with, and
//! the JWKS a client verifies them against (`GET /.well-known/jwks.json`).
//!
//! - **Where keys live.** In the hub's store (`signing_keys`): every
//!   replica signs with the same newest key, and a restart keeps them. The
//!   private half never leaves the store and this module; the JWKS carries
//!   the public half of every key, so a signature made before a rotation
//!   still verifies.
//! - **Rotation.** A key older than `WS_SIGNING_KEY_ROTATE_SECONDS`
//!   (default 30 days) is replaced by a new one with a new `kid`; each
//!   replica looks every half of that period (at most hourly) and takes the
//!   newest key in the store. Two replicas rotating at once make two keys;
//!   both are published, the newest signs.
//! - **What is signed.** Every agent card the hub serves (its own, each
//!   provider's public and extended card): an Ed25519 JWS over the card's
//!   canonical form ([`exchange::jws`]), whose protected header names the
//!   key (`kid`) and where the JWKS is (`jku`). And the checkpoints of the
//!   hub's audit trail ([`spawn_trail_checkpoints`]): every
//!   `WS_TRAIL_CHECKPOINT_SECONDS` (default 60) the head of each chain in
//!   the store, if it moved, is signed with the current key
//!   ([`exchange::audit::checkpoint`]). Replicas each run it; a head is
//!   stored once. With `WS_TRAIL_ANCHOR=FILE` every checkpoint this
//!   process signs is also appended to that file, outside the store
//!   ([`exchange::audit::anchor`]): what `hub trail verify --anchor`
//!   checks a chain cut short against.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use base64::Engine;
use serde_json::{json, Value};

use std::path::Path;

use exchange::audit::anchor::AnchorFile;
use exchange::audit::checkpoint::Checkpoint;
use exchange::db::Store;
use exchange::jws::{SignError, SigningKey};

/// Where the hub publishes its keys (where every signer here does).
pub use exchange::jws::JWKS_PATH;
/// The environment variable that sets how old a key may get.
pub const ROTATE_ENV: &str = "WS_SIGNING_KEY_ROTATE_SECONDS";
const DEFAULT_ROTATE: Duration = Duration::from_secs(30 * 24 * 3600);
/// The environment variable that sets how often the trail's chain heads
/// are checkpointed.
pub const CHECKPOINT_ENV: &str = "WS_TRAIL_CHECKPOINT_SECONDS";
const DEFAULT_CHECKPOINT: Duration = Duration::from_secs(60);
/// The environment variable naming the file every signed checkpoint is
/// appended to, outside the store.
pub const ANCHOR_ENV: &str = "WS_TRAIL_ANCHOR";

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// Why the keys could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// The store failed.
    #[error("the signing keys' store: {0}")]
    Store(#[from] sqlx::Error),
    /// A stored key is unreadable, or a new one could not be made.
    #[error(transparent)]
    Key(#[from] SignError),
    /// `WS_SIGNING_KEY_ROTATE_SECONDS` is not a positive number.
    #[error("{ROTATE_ENV}: `{0}` is not a positive number of seconds")]
    Rotate(String),
    /// `WS_TRAIL_CHECKPOINT_SECONDS` is not a positive number.
    #[error("{CHECKPOINT_ENV}: `{0}` is not a positive number of seconds")]
    CheckpointInterval(String),
    /// `WS_TRAIL_ANCHOR` names a file that cannot be appended to.
    #[error("{ANCHOR_ENV}: {0}")]
    Anchor(#[from] exchange::audit::anchor::AnchorError),
}

/// The keys as one replica holds them: the newest signs, all verify.
#[derive(Debug)]
struct Ring {
    current: SigningKey,
    /// When the current key was made (RFC 3339).
    created_at: String,
    jwks: Value,
}

/// The hub's signing keys.
#[derive(Debug)]
pub struct HubKeys {
    store: Store,
    rotate_after: Duration,
    ring: ArcSwap<Ring>,
}

impl HubKeys {
    /// Reads the keys from the store, making the first (or a new one, when
    /// the newest is due for rotation).
    pub async fn open(store: Store) -> Result<Arc<Self>, SigningError> {
        let rotate_after = match std::env::var(ROTATE_ENV) {
            Ok(raw) => raw
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|s| *s > 0)
                .map(Duration::from_secs)
                .ok_or(SigningError::Rotate(raw))?,
            Err(_) => DEFAULT_ROTATE,
        };
        let ring = load(&store, rotate_after).await?;
        Ok(Arc::new(Self {
            store,
            rotate_after,
            ring: ArcSwap::from_pointee(ring),
        }))
    }

    /// How often [`HubKeys::refresh`] should run.
    pub fn refresh_every(&self) -> Duration {
        (self.rotate_after / 2).clamp(Duration::from_secs(1), Duration::from_secs(3600))
    }

    /// Takes the newest key in the store, rotating first if it is due.
    pub async fn refresh(&self) -> Result<(), SigningError> {
        let ring = load(&self.store, self.rotate_after).await?;
        if ring.created_at != self.ring.load().created_at {
            tracing::info!(kid = ring.current.kid(), "signing with a new key");
        }
        self.ring.store(Arc::new(ring));
        Ok(())
    }

    /// The JWKS: the public half of every key.
    pub fn jwks(&self) -> Value {
        self.ring.load().jwks.clone()
    }

    /// The key that signs now (cards, trail checkpoints).
    pub fn signing_key(&self) -> SigningKey {
        self.ring.load().current.clone()
    }

    /// The key id that signs now.
    pub fn current_kid(&self) -> String {
        self.ring.load().current.kid().to_string()
    }

    /// Signs a card the hub serves, naming `jku` as where its keys are. A
    /// card that cannot be signed is served unsigned (and logged): a
    /// client that requires signatures refuses it, one that does not still
    /// works.
    pub fn sign_card(&self, card: &mut Value, jku: &str) {
        if let Err(e) = self.ring.load().current.sign_card(card, jku) {
            tracing::warn!(error = %e, "serving an unsigned card");
        }
    }

    /// A detached compact JWS (`protected..signature`) of `payload` with
    /// the current key, naming `jku` as where the JWKS is: what signs a
    /// push delivery's body.
    pub fn sign_detached(&self, payload: &[u8], jku: &str) -> Result<String, SignError> {
        let (protected, signature) = self
            .ring
            .load()
            .current
            .sign_detached(json!({"jku": jku}), payload)?;
        Ok(format!("{protected}..{signature}"))
    }

    /// `receipt` signed with the current key, naming `jku` as where the
    /// JWKS is: the compact JWS a party keeps.
    pub fn sign_receipt(
        &self,
        receipt: &exchange::receipt::Receipt,
        jku: &str,
    ) -> Result<String, exchange::receipt::ReceiptError> {
        receipt.sign(&self.ring.load().current, jku)
    }
}

/// Signs the head of every chain of the hub's trail in `store`, when it
/// moved, every `WS_TRAIL_CHECKPOINT_SECONDS` (default 60 s), with the
/// key that signs now, and appends each checkpoint it signed to the
/// `WS_TRAIL_ANCHOR` file when one is named (a file that cannot be opened
/// stops the hub). A failure is logged and tried again next time; a
/// checkpoint not yet anchored stays queued for the next tick.
pub fn spawn_trail_checkpoints(
    keys: Arc<HubKeys>,
    store: Store,
) -> Result<tokio::task::JoinHandle<()>, SigningError> {
    let every = seconds_setting(CHECKPOINT_ENV, DEFAULT_CHECKPOINT)
        .map_err(SigningError::CheckpointInterval)?;
    let anchor = match std::env::var_os(ANCHOR_ENV) {
        Some(path) if !path.is_empty() => Some(Arc::new(AnchorFile::open(Path::new(&path))?)),
        _ => None,
    };
    Ok(tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let mut unanchored: Vec<Checkpoint> = Vec::new();
        loop {
            tick.tick().await;
            let key = keys.signing_key();
            match exchange::audit::checkpoint::checkpoint_all(&store, &key).await {
                Ok(made) => {
                    for c in &made {
                        tracing::debug!(system = %c.system, seq = c.seq, kid = %c.kid,
                            "trail checkpoint signed");
                    }
                    if anchor.is_some() {
                        unanchored.extend(made);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not checkpoint the audit trail"),
            }
            if let Some(anchor) = &anchor {
                unanchored = append_to_anchor(anchor, unanchored).await;
            }
        }
    }))
}

/// An interval of the trail's background work (its checkpoints, the
/// summary of unidentified calls) from `variable`: a positive number of
/// seconds, fractions allowed; `default` when unset; the value as set when
/// it is anything else.
pub fn seconds_setting(variable: &str, default: Duration) -> Result<Duration, String> {
    match std::env::var(variable) {
        Ok(raw) => raw
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64)
            .ok_or(raw),
        Err(_) => Ok(default),
    }
}

/// Appends `checkpoints` to `anchor` in order, off the async workers: the
/// ones it could not write (logged), to try again.
async fn append_to_anchor(
    anchor: &Arc<AnchorFile>,
    checkpoints: Vec<Checkpoint>,
) -> Vec<Checkpoint> {
    if checkpoints.is_empty() {
        return checkpoints;
    }
    let file = anchor.clone();
    let written = tokio::task::spawn_blocking(move || {
        let mut rest = checkpoints.into_iter();
        while let Some(c) = rest.next() {
            if let Err(e) = file.append(&c) {
                tracing::error!(error = %e, system = %c.system, seq = c.seq,
                    "could not anchor a trail checkpoint");
                return std::iter::once(c).chain(rest).collect();
            }
        }
        Vec::new()
    })
    .await;
    written.unwrap_or_else(|e| {
        tracing::error!(error = %e, "the trail anchor's writer failed");
        Vec::new()
    })
}

/// The public half of every key in `store` as a JWKS, without making a
/// key (`{"keys": []}` for a store without the table: a peer's): what
/// `hub trail verify` and `hub trail export` check checkpoints against.
pub async fn stored_jwks(store: &Store) -> Result<Value, SigningError> {
    if !store.has_table("signing_keys").await? {
        return Ok(json!({"keys": []}));
    }
    let mut jwks = Vec::new();
    for (kid, pkcs8, _) in read(store).await? {
        let der = B64
            .decode(&pkcs8)
            .map_err(|e| SignError::Key(format!("stored key `{kid}`: {e}")))?;
        jwks.push(SigningKey::from_pkcs8(kid, &der)?.public_jwk());
    }
    Ok(json!({ "keys": jwks }))
}

/// Every key in the store, newest last; a new one first when there is
/// none or the newest is older than `rotate_after`.
async fn load(store: &Store, rotate_after: Duration) -> Result<Ring, SigningError> {
    let mut rows = read(store).await?;
    let due = rows.last().is_none_or(|(_, _, created)| {
        chrono::DateTime::parse_from_rfc3339(created).map_or(true, |at| {
            let age = chrono::Utc::now().signed_duration_since(at);
            age.to_std().is_ok_and(|age| age >= rotate_after)
        })
    });
    if due {
        let created_at = exchange::audit::now();
        let kid = format!(
            "hub-{}-{}",
            created_at
                .replace([':', '-', '.'], "")
                .trim_end_matches('Z'),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        let key = SigningKey::generate(kid.clone())?;
        sqlx::query("INSERT INTO signing_keys (kid, pkcs8, created_at) VALUES ($1, $2, $3)")
            .bind(&kid)
            .bind(B64.encode(key.pkcs8()))
            .bind(&created_at)
            .execute(store.pool())
            .await?;
        rows = read(store).await?;
    }
    let mut keys = Vec::with_capacity(rows.len());
    for (kid, pkcs8, _) in &rows {
        let der = B64
            .decode(pkcs8)
            .map_err(|e| SignError::Key(format!("stored key `{kid}`: {e}")))?;
        keys.push(SigningKey::from_pkcs8(kid.clone(), &der)?);
    }
    let created_at = rows.last().map(|r| r.2.clone()).unwrap_or_default();
    let jwks = json!({"keys": keys.iter().map(SigningKey::public_jwk).collect::<Vec<_>>()});
    let current = keys
        .pop()
        .ok_or_else(|| SignError::Key("no signing key in the store".into()))?;
    Ok(Ring {
        current,
        created_at,
        jwks,
    })
}

async fn read(store: &Store) -> Result<Vec<(String, String, String)>, sqlx::Error> {
    use sqlx::Row;
    let rows =
        sqlx::query("SELECT kid, pkcs8, created_at FROM signing_keys ORDER BY created_at, kid")
            .fetch_all(store.pool())
            .await?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect()
}
