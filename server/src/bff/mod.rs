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
//!   `GET /api/nodes/{id}/metrics` ([`traffic`]): what crossed each edge
//!   (established or observed), whether work got done; `/metrics`
//!   (outside `/api`) for Prometheus.
//! * `GET /api/agents`, `GET /api/recommendations`,
//!   `POST /api/nodes/{id}/interpret` ([`agents`]): the hub's own agents;
//!   each route picks its specialist.
//! * `POST /api/systems/discover`, `POST /api/systems`,
//!   `DELETE /api/systems/{id}`, `PUT /api/rules/consumers` ([`systems`]):
//!   the operator changes the exchange — onboards a system from its card,
//!   removes one, edits who may call whom — as edits of the topology file.
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
pub mod systems;
pub mod topology;
pub mod traffic;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use app::dto::{HubEvent, TopologyView};
use app::routes::{self, ApiRoute};
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{any, on, MethodRouter};
use axum::{Json, Router};
use futures::stream::{self, Stream, StreamExt};
use tokio::sync::broadcast::error::RecvError;

use crate::api::method_filter;
use crate::edges::EdgeStore;
use crate::events::{EventBus, Shutdown};
use crate::gateway::Gateway;
use crate::health::StatusBoard;
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
    /// The other replicas, told what a handler changed.
    pub cluster: crate::cluster::Cluster,
    /// The egress path onboarding reads a would-be member's card by.
    pub onboarding: crate::egress::Egress,
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

/// The `/api` routes of the BFF, built from the one route table both
/// sides share (`app::routes::ApiRoute`): each route's method and path come
/// from the table, its handler from [`handler`].
pub fn router(state: BffState) -> Router {
    ApiRoute::ALL
        .iter()
        .filter_map(|&route| Some((route, handler(route)?)))
        .fold(Router::new(), |router, (route, handler)| {
            router.route(route.template(), handler)
        })
        // An unknown `/api` path is an API 404, not the canvas's HTML page.
        .route(routes::API_UNKNOWN, any(unknown_route))
        .with_state(state)
}

/// The handler of `route` at the table's method, or `None` for the routes
/// another module serves (the login routes: `ui_auth`; the server function:
/// Leptos).
fn handler(route: ApiRoute) -> Option<MethodRouter<BffState>> {
    let verb = method_filter(route.verb());
    let h = match route {
        ApiRoute::Topology => on(verb, topology),
        ApiRoute::Events => on(verb, events),
        ApiRoute::CreateEdge => on(verb, edges::create),
        ApiRoute::RemoveEdge => on(verb, edges::remove),
        ApiRoute::SavePositions => on(verb, edges::save_positions),
        ApiRoute::EdgeQuery => on(verb, drawers::query),
        ApiRoute::EdgeAsk => on(verb, drawers::ask),
        ApiRoute::EdgeContract => on(verb, contracts::contract),
        ApiRoute::EdgeNegotiate => on(verb, contracts::negotiate),
        ApiRoute::Inbox => on(verb, approvals::inbox),
        ApiRoute::InboxPage => on(verb, approvals::page),
        ApiRoute::InboxPending => on(verb, approvals::pending),
        ApiRoute::InboxApprove => on(verb, approvals::approve),
        ApiRoute::InboxReject => on(verb, approvals::reject),
        ApiRoute::NodeAudit => on(verb, drawers::audit),
        ApiRoute::Traffic => on(verb, traffic::traffic),
        ApiRoute::EdgeMetrics => on(verb, traffic::edge_metrics),
        ApiRoute::EdgeInspector => on(verb, traffic::edge_inspector),
        ApiRoute::NodeMetrics => on(verb, traffic::node_metrics),
        ApiRoute::Agents => on(verb, agents::agents),
        ApiRoute::Recommendations => on(verb, agents::recommendations),
        ApiRoute::NodeInterpret => on(verb, agents::interpret),
        ApiRoute::DiscoverSystem => on(verb, systems::discover),
        ApiRoute::AddSystem => on(verb, systems::add),
        ApiRoute::RemoveSystem => on(verb, systems::remove),
        ApiRoute::SetRuleConsumer => on(verb, systems::set_consumer),
        ApiRoute::Login | ApiRoute::Logout | ApiRoute::Session | ApiRoute::TopologyFn => {
            return None
        }
    };
    Some(h)
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
