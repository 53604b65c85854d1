//! The hub's event bus: what changed, pushed live to open canvases.
//!
//! The prober publishes health changes and the registry publishes reloads;
//! the BFF streams them to browsers as Server-Sent Events. A broadcast
//! channel means a slow browser can only lag itself (it then gets a
//! `topology_changed` and refetches), never block a publisher.

use app::dto::HubEvent;
use tokio::sync::{broadcast, watch};

/// How many events a listener may fall behind before it lags.
const CAPACITY: usize = 256;

/// A cloneable handle to publish and subscribe hub events.
#[derive(Debug, Clone)]
pub struct EventBus {
    tx: broadcast::Sender<HubEvent>,
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new()
    }
}

impl EventBus {
    /// A new, empty bus.
    pub fn new() -> Self {
        let (tx, _) = broadcast::channel(CAPACITY);
        Self { tx }
    }

    /// Publishes an event; having no listener is normal (no canvas open).
    pub fn publish(&self, event: HubEvent) {
        let _ = self.tx.send(event);
    }

    /// A new listener, seeing events published from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<HubEvent> {
        self.tx.subscribe()
    }
}

/// Tells long-lived tasks and streams (SSE) that the hub is shutting down,
/// so graceful shutdown is not held open by a browser tab.
#[derive(Debug, Clone)]
pub struct Shutdown {
    tx: watch::Sender<bool>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    /// A signal that has not fired.
    pub fn new() -> Self {
        let (tx, _) = watch::channel(false);
        Self { tx }
    }

    /// Fires the signal (idempotent).
    pub fn trigger(&self) {
        self.tx.send_replace(true);
    }

    /// Completes once the signal has fired (immediately if it already has).
    pub fn wait(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.tx.subscribe();
        async move {
            let _ = rx.wait_for(|fired| *fired).await;
        }
    }
}
