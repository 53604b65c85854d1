//! Several hub processes as one hub (DESIGN.md §6: "several hub replicas
//! on PostgreSQL behind an ordinary load balancer, with every promise
//! above holding across replicas").
//!
//! A hub on a SQLite file is alone ([`Cluster`] in solo mode): nothing here
//! does anything but name the process. On PostgreSQL any number of hub
//! processes may share the database, and this module is how they stay one
//! hub:
//!
//! | promise | how it holds across replicas |
//! |---|---|
//! | a repeated request id executes once | the idempotency claim and the task row are unique keys in the shared database; a claim names its process, and a claim of a dead process is taken over ([`Cluster::is_alive`]) |
//! | an approval is decided once | a conditional `UPDATE … WHERE status = 'pending'` (`exchange::inbox`) |
//! | live events reach every canvas | what one replica changes is announced with `NOTIFY` ([`Cluster::announce`]); every replica `LISTEN`s and re-reads it (`listen`) |
//! | the prober does not multiply its load | one replica probes, the holder of an advisory lock (`leader`); its results are rows of `peer_health`, announced to the others |
//! | topology and agent reloads reach every replica | a reload is announced; the others reload their own file and compare its digest |
//! | a person's new role, removal or logout closes their event streams everywhere | the change is announced; each replica re-reads the people store (or ends the session's streams) |
//!
//! **Liveness.** Every replica holds a session-level advisory lock keyed by
//! its instance id on a connection of its own, for as long as it runs.
//! PostgreSQL releases it the moment that connection closes — a killed
//! process's socket is closed by its kernel — so "is instance X alive?" is
//! "is X's lock held?", answered with a transaction-level try-lock that
//! takes nothing from X.

mod leader;
mod listen;

use std::sync::Arc;
use std::time::Duration;

use exchange::db::{Location, Store};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;
use serde::{Deserialize, Serialize};
use sqlx::{Connection, PgConnection};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::health::{HealthSnapshot, PeerStatus, ProviderCard, ShareHealth};

pub use listen::{PeopleSync, Reload, Replicated};

/// The channel every replica listens on.
pub const CHANNEL: &str = "ws_hub";

/// Advisory lock namespaces (the first key of the two-key form).
const LOCK_LIVE: i32 = 0x5753_0001;
const LOCK_LEADER: i32 = 0x5753_0002;

/// How often a held lock's connection is checked, and a lost one retaken.
const KEEP_EVERY: Duration = Duration::from_millis(1000);

/// Most bytes of operator detail a notification carries (PostgreSQL caps a
/// payload at 8000 bytes).
const MAX_DETAIL: usize = 300;

/// Why this process could not join the replicas.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// Connecting for the liveness lock, or taking it, failed.
    #[error("holding this replica's liveness lock: {0}")]
    Lock(#[from] sqlx::Error),
}

/// What one replica changed, as the others learn it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// Edges or positions were written: re-read both.
    Edges,
    /// The hub's inbox changed: count what waits.
    Inbox,
    /// The probing replica recorded `system`'s health in `peer_health`.
    Health {
        /// The system.
        system: String,
    },
    /// A call changed what a replica knows of a provider.
    Call {
        /// The provider.
        system: String,
        /// The failure, or `None`: a call succeeded again.
        failure: Option<Failure>,
    },
    /// A replica reloaded the topology file; `digest` is what it loaded.
    Topology {
        /// SHA-256 of the text.
        digest: String,
    },
    /// A replica reloaded the agent config.
    Agents,
    /// A replica changed the people store: re-read it.
    People,
    /// A session logged out on a replica: its event streams end on every
    /// replica. `key` is a digest of the session id, never the id.
    SessionEnded {
        /// The session's stream key.
        key: String,
    },
    /// What a replica counted on some edges lately (its own counts).
    Traffic {
        /// Its views of the edges that changed.
        edges: Vec<app::dto::EdgeTrafficView>,
    },
}

/// Edge views per notification: a payload stays well under PostgreSQL's
/// 8000 bytes.
const TRAFFIC_CHUNK: usize = 20;

/// A call failure as a notification carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The reason code.
    pub reason: ReasonCode,
    /// Operator detail, clipped.
    pub detail: String,
}

/// A notification: who changed what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Notice {
    from: String,
    change: Change,
}

/// A status as `peer_health` stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum StoredStatus {
    Healthy,
    Degraded { reason: ReasonCode, detail: String },
    Unknown,
}

impl From<&PeerStatus> for StoredStatus {
    fn from(s: &PeerStatus) -> Self {
        match s {
            PeerStatus::Healthy => StoredStatus::Healthy,
            PeerStatus::Degraded { reason, detail, .. } => StoredStatus::Degraded {
                reason: *reason,
                detail: clip(detail, MAX_DETAIL),
            },
            PeerStatus::Unknown => StoredStatus::Unknown,
        }
    }
}

impl StoredStatus {
    fn status(self) -> PeerStatus {
        match self {
            StoredStatus::Healthy => PeerStatus::Healthy,
            StoredStatus::Degraded { reason, detail } => PeerStatus::Degraded {
                reason,
                detail,
                since: chrono::Utc::now(),
            },
            StoredStatus::Unknown => PeerStatus::Unknown,
        }
    }
}

/// A card as `peer_health` stores it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredCard {
    version: String,
    card: serde_json::Value,
    /// Absent in rows written before signatures were checked.
    #[serde(default)]
    signature: exchange::jws::CardSignature,
    /// The keys that verified it; absent in rows written before answers
    /// were signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    keys: Option<jsonwebtoken::jwk::JwkSet>,
}

/// The hub process's place among replicas. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Cluster {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// This process's instance id (8 hex digits of a random `u32`).
    instance: String,
    shared: Option<Shared>,
}

#[derive(Debug)]
struct Shared {
    store: Store,
    url: String,
    outbox: mpsc::UnboundedSender<Outgoing>,
    /// The liveness lock's keeper and the outbox's writer.
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// What the outbox writer does, in order.
#[derive(Debug)]
enum Outgoing {
    Notify(Change),
    Health {
        system: String,
        snapshot: HealthSnapshot,
    },
}

impl Cluster {
    /// A hub alone on its store (SQLite): a fresh instance id, nothing
    /// shared.
    pub fn solo() -> Self {
        Self {
            inner: Arc::new(Inner {
                instance: new_instance().0,
                shared: None,
            }),
        }
    }

    /// This process on `store`: alone on SQLite; on PostgreSQL one replica
    /// among any number, holding its liveness lock from now on.
    pub async fn join(store: &Store) -> Result<Self, ClusterError> {
        let url = match store.location() {
            Location::Postgres(url) => url.clone(),
            Location::File(_) | Location::Memory => return Ok(Self::solo()),
        };
        // The lock is taken here, so the replica is alive before it claims
        // anything; an id another process holds (one chance in four
        // billion) is drawn again.
        let (instance, key, conn) = loop {
            let (instance, key) = new_instance();
            let mut conn = PgConnection::connect(&url).await?;
            if try_lock(&mut conn, LOCK_LIVE, key).await? {
                break (instance, key, conn);
            }
        };
        let keeper = tokio::spawn(keep_alive(url.clone(), key, conn));
        let (outbox, queue) = mpsc::unbounded_channel();
        let writer = tokio::spawn(write_outbox(store.clone(), instance.clone(), queue));
        tracing::info!(%instance, store = %store.location(), "joined the replicas");
        Ok(Self {
            inner: Arc::new(Inner {
                instance,
                shared: Some(Shared {
                    store: store.clone(),
                    url,
                    outbox,
                    tasks: vec![keeper, writer],
                }),
            }),
        })
    }

    /// This process's instance id: what its claims and task rows name.
    pub fn instance(&self) -> &str {
        &self.inner.instance
    }

    /// Whether other hub processes may share the store.
    pub fn is_shared(&self) -> bool {
        self.inner.shared.is_some()
    }

    /// Whether the hub process `instance` still runs. Alone, only this one
    /// does (any other is an earlier run of this hub). Among replicas, a
    /// process runs while its liveness lock is held; if the database cannot
    /// be asked, it is presumed alive (nothing of it is taken over).
    pub async fn is_alive(&self, instance: &str) -> bool {
        if instance == self.inner.instance {
            return true;
        }
        let Some(shared) = &self.inner.shared else {
            return false;
        };
        let Some(key) = lock_key(instance) else {
            // Not an instance id any replica would have written.
            return false;
        };
        match lock_is_held(&shared.store, LOCK_LIVE, key).await {
            Ok(held) => held,
            Err(e) => {
                tracing::warn!(error = %e, %instance, "could not ask whether a replica is alive");
                true
            }
        }
    }

    /// Whether the hub process a row names as its claimer still runs; a
    /// row from before claimers were recorded names none, and nothing runs
    /// it.
    pub async fn claimer_runs(&self, claimer: Option<&str>) -> bool {
        match claimer {
            Some(c) => self.is_alive(c).await,
            None => false,
        }
    }

    /// Tells the other replicas what this one changed (nothing alone). In
    /// order, without waiting: a notification that cannot be sent is
    /// logged; the change itself is already stored.
    pub fn announce(&self, change: Change) {
        if let Some(shared) = &self.inner.shared {
            let _ = shared.outbox.send(Outgoing::Notify(change));
        }
    }

    /// Tells the other replicas what this one counted on `edges` lately
    /// (in notifications of a few edges each).
    pub fn share_traffic(&self, edges: Vec<app::dto::EdgeTrafficView>) {
        if !self.is_shared() {
            return;
        }
        for chunk in edges.chunks(TRAFFIC_CHUNK) {
            self.announce(Change::Traffic {
                edges: chunk.to_vec(),
            });
        }
    }

    /// Spawns what keeps this replica up to date with the others (nothing
    /// alone): the listener that applies their changes. From now on the
    /// status board also tells the others what this replica's own probes
    /// and calls change.
    pub fn spawn_listener(&self, state: Replicated) -> Option<JoinHandle<()>> {
        let shared = self.inner.shared.as_ref()?;
        state.board.share_with(Arc::new(self.clone()));
        Some(tokio::spawn(listen::run(
            shared.url.clone(),
            shared.store.clone(),
            self.inner.instance.clone(),
            state,
        )))
    }

    /// Spawns the prober: alone, it simply runs; among replicas, it runs
    /// in whichever replica holds the leader lock, and moves to another
    /// within about a second of that one's end.
    pub fn spawn_prober(&self, prober: crate::health::Prober) -> JoinHandle<()> {
        match &self.inner.shared {
            None => prober.spawn(),
            Some(shared) => tokio::spawn(leader::lead(
                shared.url.clone(),
                self.inner.instance.clone(),
                prober,
            )),
        }
    }
}

impl ShareHealth for Cluster {
    fn probed(&self, system: &str, snapshot: HealthSnapshot) {
        if let Some(shared) = &self.inner.shared {
            let _ = shared.outbox.send(Outgoing::Health {
                system: system.to_string(),
                snapshot,
            });
        }
    }

    fn called(&self, system: &str, outcome: &Result<(), NotConnected>) {
        self.announce(Change::Call {
            system: system.to_string(),
            failure: outcome.as_ref().err().map(|nc| Failure {
                reason: nc.reason,
                detail: clip(&nc.detail, MAX_DETAIL),
            }),
        });
    }
}

/// A fresh instance id — 8 hex digits of a random nonzero `u32` — and its
/// lock key (the same bits).
fn new_instance() -> (String, i32) {
    let n: u32 = rand::random::<u32>().max(1);
    (format!("{n:08x}"), i32::from_ne_bytes(n.to_ne_bytes()))
}

/// The lock key of an instance id.
fn lock_key(instance: &str) -> Option<i32> {
    (instance.len() == 8)
        .then(|| u32::from_str_radix(instance, 16).ok())
        .flatten()
        .map(|n| i32::from_ne_bytes(n.to_ne_bytes()))
}

/// Takes the session lock `(space, key)` on `conn` if nobody holds it.
async fn try_lock(conn: &mut PgConnection, space: i32, key: i32) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT pg_try_advisory_lock($1, $2)")
        .bind(space)
        .bind(key)
        .fetch_one(conn)
        .await
}

/// Whether someone holds the session lock `(space, key)`: a try-lock in a
/// transaction of our own, released at once.
async fn lock_is_held(store: &Store, space: i32, key: i32) -> Result<bool, sqlx::Error> {
    let mut tx = store.pool().begin().await?;
    let free: bool = sqlx::query_scalar("SELECT pg_try_advisory_xact_lock($1, $2)")
        .bind(space)
        .bind(key)
        .fetch_one(&mut *tx)
        .await?;
    tx.rollback().await?;
    Ok(!free)
}

/// Keeps the liveness lock's connection open, and retakes the lock on a
/// new one if it breaks (the database restarted).
async fn keep_alive(url: String, key: i32, mut conn: PgConnection) {
    loop {
        tokio::time::sleep(KEEP_EVERY).await;
        if conn.ping().await.is_ok() {
            continue;
        }
        tracing::warn!("the liveness lock's connection broke; taking the lock again");
        loop {
            let retaken = match PgConnection::connect(&url).await {
                Ok(mut c) => match try_lock(&mut c, LOCK_LIVE, key).await {
                    Ok(true) => Ok(c),
                    Ok(false) => Err("still held by the broken connection".to_string()),
                    Err(e) => Err(e.to_string()),
                },
                Err(e) => Err(e.to_string()),
            };
            match retaken {
                Ok(c) => {
                    conn = c;
                    break;
                }
                Err(why) => {
                    tracing::warn!(%why, "retaking the liveness lock");
                    tokio::time::sleep(KEEP_EVERY).await;
                }
            }
        }
    }
}

/// Sends the outbox in order: health rows upserted then announced, plain
/// notifications as they come.
async fn write_outbox(store: Store, from: String, mut queue: mpsc::UnboundedReceiver<Outgoing>) {
    while let Some(out) = queue.recv().await {
        let done = match out {
            Outgoing::Notify(change) => notify(&store, &from, change).await,
            Outgoing::Health { system, snapshot } => {
                match write_health(&store, &from, &system, &snapshot).await {
                    Ok(()) => notify(&store, &from, Change::Health { system }).await,
                    Err(e) => Err(e),
                }
            }
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, "could not tell the other replicas of a change");
        }
    }
}

async fn notify(store: &Store, from: &str, change: Change) -> Result<(), sqlx::Error> {
    let payload = serde_json::to_string(&Notice {
        from: from.to_string(),
        change,
    })
    .map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(CHANNEL)
        .bind(payload)
        .execute(store.pool())
        .await?;
    Ok(())
}

async fn write_health(
    store: &Store,
    prober: &str,
    system: &str,
    s: &HealthSnapshot,
) -> Result<(), sqlx::Error> {
    let probe = to_json(&StoredStatus::from(&s.probe));
    let card = s.card.as_ref().map(|c| {
        to_json(&StoredCard {
            version: c.version.as_str().to_string(),
            card: c.card.clone(),
            signature: c.signature.clone(),
            keys: c.keys.clone(),
        })
    });
    let plane = s.plane.as_ref().map(|p| to_json(&StoredStatus::from(p)));
    sqlx::query(
        "INSERT INTO peer_health (system, probe, card, plane, updated_at, prober)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (system) DO UPDATE SET probe = excluded.probe, card = excluded.card,
            plane = excluded.plane, updated_at = excluded.updated_at, prober = excluded.prober",
    )
    .bind(system)
    .bind(probe)
    .bind(card)
    .bind(plane)
    .bind(exchange::audit::now())
    .bind(prober)
    .execute(store.pool())
    .await?;
    Ok(())
}

/// Reads what the probing replica last wrote of `system` (`None`: nothing
/// yet, or a row this build cannot read).
async fn read_health(store: &Store, system: &str) -> Result<Option<HealthSnapshot>, sqlx::Error> {
    let row: Option<(String, Option<String>, Option<String>)> =
        sqlx::query_as("SELECT probe, card, plane FROM peer_health WHERE system = $1")
            .bind(system)
            .fetch_optional(store.pool())
            .await?;
    Ok(row.and_then(|(probe, card, plane)| {
        let probe: StoredStatus = serde_json::from_str(&probe).ok()?;
        let card = match card {
            None => None,
            Some(c) => {
                let c: StoredCard = serde_json::from_str(&c).ok()?;
                let version = exchange::envelope::A2aVersion::parse(&c.version)?;
                Some(Arc::new(ProviderCard {
                    version,
                    card: c.card,
                    signature: c.signature,
                    keys: c.keys,
                }))
            }
        };
        let plane = match plane {
            None => None,
            Some(p) => Some(serde_json::from_str::<StoredStatus>(&p).ok()?.status()),
        };
        Some(HealthSnapshot {
            probe: probe.status(),
            card,
            plane,
        })
    }))
}

/// A stored shape as JSON (plain enums, strings and JSON values: it
/// cannot fail).
fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests;
