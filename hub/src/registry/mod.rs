//! The registry: the only place that knows who exists and who may talk to
//! whom (DESIGN.md §1 rule 2).
//!
//! [`Registry`] holds the current topology and its compiled contracts
//! behind an atomic pointer: readers take a snapshot without locking, a
//! reload swaps the whole thing at once, and a reload that fails validation
//! leaves the previous topology in force (recording why, for the canvas).
//!
//! Layout: [`model`] (the file's shape), [`load`] (reading it: serde, then
//! the semantic checks of `validate` and the contracts of
//! `crate::contract`, every problem located), [`tokens`] (the members'
//! tokens, read from the environment once per generation, else from the
//! hub's own [`credentials`] file), [`member_cas`]
//! (the members' CAs for their client certificates, read the same way),
//! [`schema`] (the file's JSON Schema, generated from [`model`]), [`route`]
//! (the one decision between a call's route and its refusal, for every
//! door), [`watch`] (reloading on a change or SIGHUP), [`edit`] (changes
//! of the file's text that keep its comments and order) and [`write`]
//! (the one road by which the hub writes the file: locked, against the
//! version the writer saw, validated, atomic, reloaded).

pub mod credentials;
pub mod edit;
pub mod load;
pub mod member_cas;
pub mod model;
pub mod route;
pub mod schema;
pub mod tokens;
mod validate;
pub mod watch;
pub mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption};

pub use load::{LoadError, Loaded};
pub use route::Route;
pub use tokens::Tokens;

use crate::events::EventBus;
use app::dto::HubEvent;

/// The live registry: current topology + contracts, reloadable.
#[derive(Debug)]
pub struct Registry {
    source: PathBuf,
    current: ArcSwap<Loaded>,
    reload_error: ArcSwapOption<String>,
    events: EventBus,
}

impl Registry {
    /// Loads the topology file at `source`. A hub must not start on an
    /// invalid topology, so this fails where a later reload would not.
    pub fn open(source: impl Into<PathBuf>, events: EventBus) -> Result<Self, LoadError> {
        let source = source.into();
        let loaded = load::load_file(&source)?;
        Ok(Self::with_loaded(source, loaded, events))
    }

    /// A registry around an already loaded topology (tests, embedding).
    /// `source` is what [`Registry::reload`] reads.
    pub fn with_loaded(source: impl Into<PathBuf>, loaded: Loaded, events: EventBus) -> Self {
        Self {
            source: source.into(),
            current: ArcSwap::from_pointee(loaded),
            reload_error: ArcSwapOption::empty(),
            events,
        }
    }

    /// The topology file this registry reloads from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The current topology and contracts. Cheap; hold it for the duration
    /// of one decision so the decision sees one consistent generation.
    pub fn snapshot(&self) -> Arc<Loaded> {
        self.current.load_full()
    }

    /// Why the last reload failed, or `None` if the last one succeeded.
    /// Names the topology file by its file name only (canvases show it).
    pub fn reload_error(&self) -> Option<String> {
        self.reload_error.load_full().map(|e| e.as_ref().clone())
    }

    /// Re-reads the topology file. On success the new topology replaces the
    /// old one and `topology_changed` is published; on failure the old one
    /// stays in force and the error is logged and recorded.
    pub fn reload(&self) -> Result<(), LoadError> {
        match load::load_file(&self.source) {
            Ok(loaded) => {
                self.current.store(Arc::new(loaded));
                self.reload_error.store(None);
                tracing::info!(file = %self.source.display(), "topology reloaded");
                self.events.publish(HubEvent::TopologyChanged);
                Ok(())
            }
            Err(e) => {
                tracing::warn!(
                    file = %self.source.display(),
                    error = %e,
                    "topology reload rejected; keeping the previous topology"
                );
                // Browsers see this: the file name only, not the path.
                self.reload_error.store(Some(Arc::new(e.public_message())));
                // A canvas shows the reload error: tell it to refetch.
                self.events.publish(HubEvent::TopologyChanged);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = include_str!("../../../config/topology.yaml");

    #[test]
    fn bad_reload_keeps_the_old_topology_and_records_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("topology.yaml");
        std::fs::write(&path, GOOD).expect("write");
        let bus = EventBus::new();
        let mut rx = bus.subscribe();
        let reg = Registry::open(&path, bus).expect("loads");
        assert_eq!(reg.snapshot().topology.systems.len(), 3);

        std::fs::write(&path, GOOD.replace("version: 1", "version: 9")).expect("write");
        assert!(reg.reload().is_err());
        assert_eq!(reg.snapshot().topology.version, 1, "old topology kept");
        let why = reg.reload_error().expect("error recorded");
        assert!(
            why.contains("topology.yaml:") && why.contains("version"),
            "{why}"
        );

        // The seeded edge buyercorp -> vendorcorp must go with its rule:
        // the file has to be consistent in itself.
        let fewer = GOOD
            .replace("consumers: [buyercorp, hub]", "consumers: [hub]")
            .replace(
                "  - consumer: buyercorp\n    provider: vendorcorp\n    capability: orders.query\n",
                "",
            );
        std::fs::write(&path, fewer).expect("write");
        assert!(reg.reload().is_ok());
        assert!(reg.reload_error().is_none(), "error cleared");
        assert!(!reg
            .snapshot()
            .topology
            .permits("buyercorp", "orders.query", "vendorcorp"));
        let mut changes = 0;
        while let Ok(ev) = rx.try_recv() {
            assert_eq!(ev, HubEvent::TopologyChanged);
            changes += 1;
        }
        assert_eq!(changes, 2);
    }
}
