//! Assembling the hub: state, background tasks and the full router
//! (DESIGN.md §3, "hub").
//!
//! The binary stays thin: it parses flags and calls [`Hub::build`],
//! [`Hub::start_background`] and [`Hub::router`]. Integration tests can do
//! the same without a Leptos configuration via [`Hub::api_router`].

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::post;
use axum::Router;
use leptos::prelude::LeptosOptions;
use tokio::task::JoinHandle;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

use crate::audit::AuditTrail;
use crate::bff::{self, BffState};
use crate::events::{EventBus, Shutdown};
use crate::gateway::{self, Gateway, MAX_REQUEST_BODY};
use crate::idempotency::IdempotencyStore;
use crate::prober::{Prober, StatusBoard};
use crate::registry::Registry;

/// Where the hub's inputs are.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// The topology file.
    pub topology: PathBuf,
    /// The hub's SQLite file (audit trail, idempotency records).
    pub database: PathBuf,
}

/// Why the hub could not start.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The topology file is missing or invalid.
    #[error(transparent)]
    Topology(#[from] crate::registry::LoadError),
    /// The database could not be opened.
    #[error(transparent)]
    Database(#[from] crate::db::OpenError),
    /// The audit trail could not be set up.
    #[error(transparent)]
    Audit(#[from] crate::audit::AuditError),
    /// The idempotency store could not be set up.
    #[error(transparent)]
    Idempotency(#[from] crate::idempotency::IdempotencyError),
    /// The gateway's HTTP client could not be built.
    #[error(transparent)]
    Gateway(#[from] gateway::GatewayError),
    /// The prober's HTTP client could not be built.
    #[error("building the prober's HTTP client: {0}")]
    Prober(#[source] reqwest::Error),
}

/// The hub's shared state.
#[derive(Debug, Clone)]
pub struct Hub {
    /// Who exists and who may talk to whom.
    pub registry: Arc<Registry>,
    /// Who is alive.
    pub board: Arc<StatusBoard>,
    /// Forwards calls.
    pub gateway: Arc<Gateway>,
    /// Live changes for canvases.
    pub events: EventBus,
    /// Fired when the hub stops.
    pub shutdown: Shutdown,
}

/// The hub's background tasks; aborted when dropped, so a test that drops
/// its hub leaves nothing probing behind.
#[derive(Debug)]
pub struct BackgroundTasks {
    handles: Vec<JoinHandle<()>>,
}

impl Drop for BackgroundTasks {
    fn drop(&mut self) {
        for h in &self.handles {
            h.abort();
        }
    }
}

impl Hub {
    /// Loads the topology (refusing to start on an invalid one) and opens
    /// the hub's database.
    pub async fn build(config: &HubConfig) -> Result<Self, HubError> {
        let events = EventBus::new();
        let registry = Arc::new(Registry::open(&config.topology, events.clone())?);
        let hub_id = registry.snapshot().topology.hub.id.clone();
        let pool = crate::db::open(&config.database).await?;
        let audit = AuditTrail::open(pool.clone(), hub_id).await?;
        let idempotency = IdempotencyStore::open(pool).await?;
        let board = Arc::new(StatusBoard::new(events.clone()));
        let gateway = Arc::new(Gateway::new(
            registry.clone(),
            board.clone(),
            idempotency,
            audit,
        )?);
        Ok(Self {
            registry,
            board,
            gateway,
            events,
            shutdown: Shutdown::new(),
        })
    }

    /// Starts the health prober and the topology watcher.
    pub fn start_background(&self) -> Result<BackgroundTasks, HubError> {
        let prober =
            Prober::new(self.registry.clone(), self.board.clone()).map_err(HubError::Prober)?;
        Ok(BackgroundTasks {
            handles: vec![
                prober.spawn(),
                crate::registry::watch::spawn(self.registry.clone()),
            ],
        })
    }

    /// The gateway and `/api` routes, without the UI (integration tests
    /// serve this; it needs no Leptos configuration).
    pub fn api_router(&self) -> Router {
        self.routes().layer(TraceLayer::new_for_http())
    }

    /// Everything: gateway, `/api` and the Leptos canvas.
    pub fn router(&self, leptos_options: LeptosOptions) -> Router {
        self.routes()
            .merge(crate::web::ui_router(
                leptos_options,
                crate::web::HubTopology::shared(self.registry.clone(), self.board.clone()),
            ))
            .layer(TraceLayer::new_for_http())
    }

    fn routes(&self) -> Router {
        let gateway = Router::new()
            .route(
                "/gateway/v1/{provider}/{capability}",
                post(gateway::handler),
            )
            .layer(DefaultBodyLimit::max(MAX_REQUEST_BODY))
            .layer(RequestBodyLimitLayer::new(MAX_REQUEST_BODY))
            .with_state(self.gateway.clone());
        let api = bff::router(BffState {
            registry: self.registry.clone(),
            board: self.board.clone(),
            events: self.events.clone(),
            shutdown: self.shutdown.clone(),
        });
        gateway.merge(api)
    }
}
