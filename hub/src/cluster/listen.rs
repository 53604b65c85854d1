//! Applying what the other replicas changed: the `LISTEN` side of
//! [`cluster`](super).
//!
//! One connection per replica listens on [`CHANNEL`](super::CHANNEL). Each
//! notification names a change, never carries the state itself (bar a
//! call's reason code and a replica's recent traffic counts, which live in
//! no store): the replica re-reads it from the shared store, so a
//! notification that arrives twice or late does no harm. When the
//! connection breaks, notifications sent meanwhile are lost: after every
//! (re)connection the replica re-reads everything ([`resync`]) before it
//! listens on.

use std::fmt;
use std::sync::Arc;

use app::dto::HubEvent;
use exchange::db::Store;
use exchange::inbox::Inbox;
use exchange::reason::NotConnected;
use sqlx::postgres::PgListener;

use super::{read_health, Change, Notice, CHANNEL, KEEP_EVERY};
use crate::events::EventBus;
use crate::health::StatusBoard;
use crate::registry::Registry;
use crate::store::edges::EdgeStore;
use crate::traffic::Traffic;

/// What a replica keeps in memory of the shared state, and its canvases'
/// event bus: what a notification updates.
#[derive(Debug, Clone)]
pub struct Replicated {
    /// The edge and position mirror.
    pub edges: Arc<EdgeStore>,
    /// The hub's inbox (counted for the canvases' badge).
    pub inbox: Inbox,
    /// The canvases' live channel.
    pub events: EventBus,
    /// The status board (the prober's leader writes it for everyone).
    pub board: Arc<StatusBoard>,
    /// The topology.
    pub registry: Arc<Registry>,
    /// Re-reads the agent config (a file each replica reads itself) when
    /// another replica says it changed.
    pub reload_agents: Reload,
    /// The edge labels' traffic (the other replicas' counts are kept
    /// there).
    pub traffic: Arc<Traffic>,
    /// The people who may use the canvas (the people store, wired by the
    /// hub: the store announces its changes through this module, so this
    /// module knows it only as what it must do).
    pub people: Arc<dyn PeopleSync>,
}

/// What a replica does when another announces a change of the people.
#[async_trait::async_trait]
pub trait PeopleSync: Send + Sync + std::fmt::Debug {
    /// Re-read the people (closing the streams of whoever changed).
    async fn reload(&self);
    /// Close this replica's event streams of the session keyed `key`.
    fn session_ended(&self, key: String);
}

/// What a replica runs to re-read a file of its own when another replica
/// announces it changed: the listener knows the change, whoever wired the
/// replica knows what reads the file.
#[derive(Clone)]
pub struct Reload(Arc<dyn Fn() + Send + Sync>);

impl Reload {
    /// Runs `reload` on each announced change (on a blocking thread:
    /// reading a file is blocking work).
    pub fn new(reload: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Arc::new(reload))
    }

    fn run(&self) {
        (self.0)()
    }
}

impl fmt::Debug for Reload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reload")
    }
}

/// Listens forever (until aborted), reconnecting after a break.
pub(super) async fn run(url: String, store: Store, me: String, state: Replicated) {
    loop {
        let mut listener = match PgListener::connect(&url).await {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "the replicas' listener could not connect; retrying");
                tokio::time::sleep(KEEP_EVERY).await;
                continue;
            }
        };
        if let Err(e) = listener.listen(CHANNEL).await {
            tracing::warn!(error = %e, "LISTEN failed; retrying");
            tokio::time::sleep(KEEP_EVERY).await;
            continue;
        }
        resync(&store, &state).await;
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) => match serde_json::from_str::<Notice>(n.payload()) {
                    Ok(notice) if notice.from == me => {}
                    Ok(notice) => apply(&store, &state, &notice.from, notice.change).await,
                    Err(e) => tracing::warn!(error = %e, "unreadable notification from a replica"),
                },
                // The connection broke: notifications may have been lost.
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "the replicas' listener failed; reconnecting");
                    break;
                }
            }
        }
    }
}

/// Re-reads all the shared state a notification could have announced.
async fn resync(store: &Store, state: &Replicated) {
    if let Err(e) = state.edges.refresh().await {
        tracing::warn!(error = %e, "re-reading edges");
    }
    let systems: Vec<String> = match sqlx::query_scalar("SELECT system FROM peer_health")
        .fetch_all(store.pool())
        .await
    {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "re-reading the shared probe results");
            Vec::new()
        }
    };
    for system in systems {
        apply_health(store, state, &system).await;
    }
    count_inbox(state).await;
    state.people.reload().await;
    state.events.publish(HubEvent::TopologyChanged);
}

/// Applies one change another replica (`from`) announced.
async fn apply(store: &Store, state: &Replicated, from: &str, change: Change) {
    match change {
        Change::Edges => match state.edges.refresh().await {
            Ok(()) => state.events.publish(HubEvent::TopologyChanged),
            Err(e) => tracing::warn!(error = %e, "re-reading edges another replica changed"),
        },
        Change::Inbox => count_inbox(state).await,
        Change::Health { system } => apply_health(store, state, &system).await,
        Change::Call { system, failure } => {
            let outcome = match failure {
                None => Ok(()),
                Some(f) => Err(NotConnected::new(f.reason, f.detail)),
            };
            state.board.apply_shared_call(&system, outcome);
        }
        Change::Topology { digest } => {
            let registry = state.registry.clone();
            // Reading and compiling the file is blocking work.
            let _ = tokio::task::spawn_blocking(move || registry.reload()).await;
            let here = state.registry.snapshot().digest.clone();
            if here != digest {
                tracing::warn!(
                    replica = %from,
                    "replica {from} loaded a topology other than this replica's file \
                     ({} here, {} there): the replicas disagree until their files do",
                    &here[..12.min(here.len())],
                    &digest[..12.min(digest.len())]
                );
            }
        }
        Change::Agents => {
            let reload = state.reload_agents.clone();
            let _ = tokio::task::spawn_blocking(move || reload.run()).await;
        }
        Change::People => state.people.reload().await,
        Change::SessionEnded { key } => state.people.session_ended(key),
        Change::Traffic { edges } => {
            let edges = state.traffic.apply_remote(from, edges);
            if !edges.is_empty() {
                let topology = &state.registry.snapshot().topology;
                state
                    .events
                    .publish(crate::traffic::observed::event(topology, edges));
            }
        }
    }
}

async fn apply_health(store: &Store, state: &Replicated, system: &str) {
    match read_health(store, system).await {
        Ok(Some(snapshot)) => state.board.apply_shared(system, snapshot),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, %system, "reading a shared probe result"),
    }
}

async fn count_inbox(state: &Replicated) {
    match state.inbox.pending_count().await {
        Ok(pending) => state.events.publish(HubEvent::InboxChanged { pending }),
        Err(e) => tracing::warn!(error = %e, "counting the inbox another replica changed"),
    }
}
