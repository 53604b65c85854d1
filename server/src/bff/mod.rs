//! The browser-facing API (DESIGN.md §3, "BFF"): everything under `/api`
//! except the login routes (`ui_auth`), all behind the UI session guard.
//!
//! * `GET /api/topology` ([`topology`]): what the canvas draws.
//! * `GET /api/events`: status and topology changes as Server-Sent Events.
//! * `POST /api/edges`, `DELETE /api/edges/{id}`, `PUT /api/positions`
//!   ([`edges`]): connections made on the canvas, and where nodes sit.
//! * `POST /api/edges/{id}/query`, `POST /api/edges/{id}/ask`,
//!   `GET /api/inbox`, `GET /api/nodes/{id}/audit` ([`drawers`]): what the
//!   drawers show. The hub is the caller of every call a drawer makes.
//! * `GET /api/traffic`, `GET /api/edges/{id}/metrics|inspector`,
//!   `GET /api/nodes/{id}/metrics` ([`traffic`]): what crossed each edge,
//!   whether work got done; `/metrics` (outside `/api`) for Prometheus.
//! * `GET /api/agents`, `GET /api/recommendations`,
//!   `POST /api/nodes/{id}/interpret` ([`agents`]): the hub's own agents;
//!   each route picks its specialist.
//! * `GET /api/inbox/page`, `GET /api/inbox/pending`,
//!   `POST /api/inbox/{id}/approve|reject`
//!   ([`approvals`]): the hub's inbox page and a human's decision.
//!
//! Every answer is an `app::dto` type built field by field; no peer JSON
//! and no registry struct is ever passed through to a browser.

pub mod agents;
pub mod approvals;
pub mod contracts;
pub mod drawers;
pub mod edges;
pub mod inbox_view;
pub mod topology;
pub mod traffic;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use app::dto::{HubEvent, TopologyView};
use app::routes;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{any, delete, get, post, put};
use axum::{Json, Router};
use futures::stream::{self, Stream, StreamExt};
use tokio::sync::broadcast::error::RecvError;

use crate::edges::EdgeStore;
use crate::events::{EventBus, Shutdown};
use crate::gateway::Gateway;
use crate::prober::StatusBoard;
use crate::registry::Registry;
use exchange::inbox::Inbox;

pub use topology::topology_view;

/// What the BFF handlers read.
#[derive(Debug, Clone)]
pub struct BffState {
    /// The current topology.
    pub registry: Arc<Registry>,
    /// Current health.
    pub board: Arc<StatusBoard>,
    /// Live changes.
    pub events: EventBus,
    /// Ends open event streams when the hub stops.
    pub shutdown: Shutdown,
    /// Established edges and node positions.
    pub edges: Arc<EdgeStore>,
    /// Forwards the drawers' calls (the hub is the caller).
    pub gateway: Arc<Gateway>,
    /// The hub's own approval inbox.
    pub inbox: Inbox,
    /// The hub's own agents (recommender, interpreter, orchestrator).
    pub agents: Arc<crate::agents::Agents>,
}

impl BffState {
    /// The canvas view right now: registry, health, edges, positions.
    pub fn view(&self) -> TopologyView {
        let loaded = self.registry.snapshot();
        topology_view(
            &loaded,
            &self.board,
            &self.edges.visible(&loaded.topology),
            &self.edges.positions(),
            self.registry.reload_error(),
        )
    }
}

/// The `/api` routes of the BFF, at the paths `app::routes` names for
/// both sides (the browser builds its requests from the same constants).
pub fn router(state: BffState) -> Router {
    Router::new()
        .route(routes::TOPOLOGY, get(topology))
        .route(routes::EVENTS, get(events))
        .route(routes::EDGES, post(edges::create))
        .route(routes::EDGE, delete(edges::remove))
        .route(routes::POSITIONS, put(edges::save_positions))
        .route(routes::EDGE_QUERY, post(drawers::query))
        .route(routes::EDGE_ASK, post(drawers::ask))
        .route(routes::EDGE_CONTRACT, get(contracts::contract))
        .route(routes::EDGE_NEGOTIATE, post(contracts::negotiate))
        .route(routes::INBOX, get(approvals::inbox))
        .route(routes::INBOX_PAGE, get(approvals::page))
        .route(routes::INBOX_PENDING, get(approvals::pending))
        .route(routes::INBOX_APPROVE, post(approvals::approve))
        .route(routes::INBOX_REJECT, post(approvals::reject))
        .route(routes::NODE_AUDIT, get(drawers::audit))
        .route(routes::TRAFFIC, get(traffic::traffic))
        .route(routes::EDGE_METRICS, get(traffic::edge_metrics))
        .route(routes::EDGE_INSPECTOR, get(traffic::edge_inspector))
        .route(routes::NODE_METRICS, get(traffic::node_metrics))
        .route(routes::AGENTS, get(agents::agents))
        .route(routes::RECOMMENDATIONS, get(agents::recommendations))
        .route(routes::NODE_INTERPRET, post(agents::interpret))
        // An unknown `/api` path is an API 404, not the canvas's HTML page.
        .route(routes::API_UNKNOWN, any(unknown_route))
        .with_state(state)
}

async fn unknown_route(uri: axum::http::Uri) -> crate::api::ApiFailure {
    crate::api::ApiFailure::not_found(format!(
        "no route {}",
        exchange::text::clip(uri.path(), 200)
    ))
}

async fn topology(State(state): State<BffState>) -> Json<TopologyView> {
    Json(state.view())
}

/// `GET /api/events`: one SSE `message` per hub event, its data the JSON
/// of an `app::dto::HubEvent`. A listener that falls behind gets a
/// `topology_changed` (refetch everything) instead of the events it missed.
async fn events(
    State(state): State<BffState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = state.events.subscribe();
    let live = stream::unfold(rx, |mut rx| async move {
        match rx.recv().await {
            Ok(ev) => Some((ev, rx)),
            Err(RecvError::Lagged(_)) => Some((HubEvent::TopologyChanged, rx)),
            Err(RecvError::Closed) => None,
        }
    })
    .map(|ev| {
        Ok(Event::default()
            .json_data(&ev)
            .unwrap_or_else(|_| Event::default().data("{\"type\":\"topology_changed\"}")))
    })
    .take_until(state.shutdown.wait());
    Sse::new(live).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
