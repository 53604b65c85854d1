//! One prober for all replicas: the replica holding the leader lock probes
//! (DESIGN.md §4 "Degradation"), so the health prober does not multiply
//! its load by the replica count.
//!
//! Every replica tries to take a session advisory lock on a connection of
//! its own, once a second. The one that gets it runs the prober; its board
//! shares every change (`peer_health` rows, announced), and the others
//! apply them. The lock is released when that connection closes — the
//! leader stopped, was killed, or lost its database — and another replica
//! takes it within a second. A leader whose connection breaks stops
//! probing at once, so two replicas never probe for long together.

use sqlx::{Connection, PgConnection};
use tokio::task::JoinHandle;

use super::{KEEP_EVERY, LOCK_LEADER};
use crate::health::Prober;

/// The prober's task, aborted when the leadership (or this task) ends.
struct Probing(JoinHandle<()>);

impl Drop for Probing {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Competes for the lock forever; probes while holding it.
pub(super) async fn lead(url: String, me: String, prober: Prober) {
    loop {
        let mut conn = match PgConnection::connect(&url).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "the prober's lock: cannot connect; retrying");
                tokio::time::sleep(KEEP_EVERY).await;
                continue;
            }
        };
        // Another replica may be probing: ask again every second, on this
        // connection, until the lock is ours (or the connection fails).
        let leader = loop {
            match take(&mut conn).await {
                Ok(true) => break true,
                Ok(false) => tokio::time::sleep(KEEP_EVERY).await,
                Err(e) => {
                    tracing::warn!(error = %e, "the prober's lock: asking failed; reconnecting");
                    break false;
                }
            }
        };
        if !leader {
            tokio::time::sleep(KEEP_EVERY).await;
            continue;
        }
        tracing::info!(instance = %me, "this replica probes the peers for every replica");
        let probing = Probing(prober.clone().spawn());
        while conn.ping().await.is_ok() {
            tokio::time::sleep(KEEP_EVERY).await;
        }
        drop(probing);
        tracing::warn!(instance = %me, "lost the prober's lock; another replica will probe");
    }
}

/// Tries the leader lock on `conn`.
async fn take(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    super::try_lock(conn, LOCK_LEADER, 1).await
}
