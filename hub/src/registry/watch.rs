//! Reloading the topology without a restart: on file change and on SIGHUP.
//! The same watcher re-reads the agent config (`crate::agents::watch`):
//! [`spawn_for`] watches any file and calls its reload (the hub's wiring,
//! `hub::Hub::start_background`, passes the registry's, and tells the
//! other replicas of a reload that took).
//!
//! The file is polled (modification time + length) rather than watched
//! with inotify: it works the same on every filesystem, in containers and
//! for editors that replace the file by renaming, and costs one `stat`
//! every half second.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::task::JoinHandle;

/// How often the file's metadata is checked.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// What identifies a version of the file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    modified: Option<SystemTime>,
    len: u64,
}

async fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let meta = tokio::fs::metadata(path).await.ok()?;
    Some(Fingerprint {
        modified: meta.modified().ok(),
        len: meta.len(),
    })
}

/// Watches the file at `path` (and SIGHUP) and calls `reload` on a
/// worker thread each time it changes; `what` names it in the log.
pub fn spawn_for(
    path: PathBuf,
    what: &'static str,
    reload: impl Fn() + Send + Sync + 'static,
) -> JoinHandle<()> {
    let reload = Arc::new(reload);
    tokio::spawn(async move {
        let mut last = fingerprint(&path).await;
        let mut hangup = hangup_signal();
        let mut tick = tokio::time::interval(POLL_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let forced = tokio::select! {
                _ = tick.tick() => false,
                _ = recv_hangup(&mut hangup) => true,
            };
            let now = fingerprint(&path).await;
            if !forced && now == last {
                continue;
            }
            if forced {
                tracing::info!("SIGHUP: reloading {what}");
            }
            last = now;
            let reload = reload.clone();
            // Reading and compiling is blocking work: keep it off the
            // async workers.
            let _ = tokio::task::spawn_blocking(move || reload()).await;
        }
    })
}

#[cfg(unix)]
type Hangup = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangup = Option<()>;

#[cfg(unix)]
fn hangup_signal() -> Hangup {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for SIGHUP; file polling only");
            None
        }
    }
}

#[cfg(not(unix))]
fn hangup_signal() -> Hangup {
    None
}

#[cfg(unix)]
async fn recv_hangup(h: &mut Hangup) {
    match h {
        Some(s) => {
            if s.recv().await.is_none() {
                std::future::pending::<()>().await
            }
        }
        None => std::future::pending::<()>().await,
    }
}

#[cfg(not(unix))]
async fn recv_hangup(_: &mut Hangup) {
    std::future::pending::<()>().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventBus;
    use crate::registry::Registry;
    use app::dto::HubEvent;

    #[tokio::test]
    async fn a_changed_file_is_reloaded_and_announced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("topology.yaml");
        let good = include_str!("../../../config/topology.yaml");
        std::fs::write(&path, good).expect("write");
        let bus = EventBus::new();
        let mut rx = bus.subscribe();
        let reg = Arc::new(Registry::open(&path, bus).expect("loads"));
        let r = reg.clone();
        let task = spawn_for(path.clone(), "the topology", move || {
            let _ = r.reload();
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        std::fs::write(
            &path,
            good.replace("name: VendorCorp", "name: VendorCorp Ltd"),
        )
        .expect("write");
        let ev = tokio::time::timeout(Duration::from_secs(3), rx.recv()).await;
        task.abort();
        assert!(matches!(ev, Ok(Ok(HubEvent::TopologyChanged))), "{ev:?}");
        assert_eq!(
            reg.snapshot()
                .topology
                .system("vendorcorp")
                .map(|s| s.name.clone()),
            Some("VendorCorp Ltd".to_string())
        );
    }
}
