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
//! * `POST /api/systems/{id}/credential` ([`systems`]): an admin rotates a
//!   system's credential; `GET /api/nodes/{id}/trail` ([`drawers`]): a
//!   system's part of the hub's trail, verifiable offline;
//! * `GET|POST /api/people`, `PUT|DELETE /api/people/{name}`,
//!   `POST /api/people/{name}/password` ([`people`]): an admin manages
//!   people and roles.
//!
//! Who may call each route is the route table's (`app::routes`), checked by
//! the session guard before a handler runs; a member-scoped person gets
//! their part of every answer ([`part`]). Every answer is an `app::dto`
//! type built field by field; no peer JSON and no registry struct is ever
//! passed through to a browser.

pub mod agents;
pub mod approvals;
pub mod audit;
pub mod contracts;
pub mod drawers;
pub mod edges;
pub mod inbox_view;
pub mod part;
pub mod people;
pub mod systems;
pub mod topology;
pub mod traffic;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use app::access::Scope;
use app::dto::{HubEvent, TopologyView};
use app::routes::{self, ApiRoute};
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{any, on, MethodRouter};
use axum::{Json, Router};
use futures::stream::{self, Stream, StreamExt};
use tokio::sync::broadcast::error::RecvError;

use crate::api::method_filter;
use crate::events::{EventBus, Shutdown};
use crate::gateway::Gateway;
use crate::health::StatusBoard;
use crate::registry::Registry;
use crate::store::edges::EdgeStore;
use crate::web::ui_auth::people::{People, Person, Revocation};
use axum::Extension;
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
    /// What crossed each edge: counts, the inspector, `/metrics`.
    pub traffic: Arc<crate::traffic::Traffic>,
    /// The hub's audit trail.
    pub audit: exchange::audit::AuditTrail,
    /// The keys the hub signs its checkpoints with (a trail export's).
    pub keys: Arc<crate::signing::HubKeys>,
    /// The hub's record of the tasks it forwarded.
    pub records: crate::store::task_records::TaskRecords,
    /// Every negotiation turn that crossed the hub.
    pub negotiations: crate::store::negotiations::Negotiations,
    /// The hub's own approval inbox.
    pub inbox: Inbox,
    /// The hub's own agents (recommender, interpreter, orchestrator).
    pub agents: Arc<crate::agents::Agents>,
    /// The other replicas, told what a handler changed.
    pub cluster: crate::cluster::Cluster,
    /// The egress path onboarding reads a would-be member's card by.
    pub onboarding: crate::net::egress::Egress,
    /// Who may use the canvas, and what each may do.
    pub people: People,
}

impl BffState {
    /// The canvas view right now — registry, health, edges, positions — of
    /// a person of `scope` (their part only, [`part::topology`]), with the
    /// layered layout of that part (`app::canvas::graph::fill_layout`,
    /// remembered while the part does not change). Both the page's first
    /// load and `GET /api/topology` answer this.
    pub fn view(&self, scope: &Scope) -> TopologyView {
        let loaded = self.registry.snapshot();
        let view = topology_view(
            &loaded,
            &self.board,
            &self.edges.visible(&loaded.topology),
            &self.edges.positions(),
            self.registry.reload_error(),
        );
        let mut view = part::topology(view, scope);
        app::canvas::graph::fill_layout(&mut view);
        view
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
        ApiRoute::RotateCredential => on(verb, systems::rotate_credential),
        ApiRoute::NodeTrail => on(verb, drawers::trail),
        ApiRoute::People => on(verb, people::list),
        ApiRoute::AddPerson => on(verb, people::add),
        ApiRoute::UpdatePerson => on(verb, people::update),
        ApiRoute::RemovePerson => on(verb, people::remove),
        ApiRoute::ResetPassword => on(verb, people::reset_password),
        ApiRoute::Login
        | ApiRoute::LoginProviders
        | ApiRoute::Logout
        | ApiRoute::Session
        | ApiRoute::TopologyFn => return None,
    };
    Some(h)
}

async fn unknown_route(uri: axum::http::Uri) -> crate::api::ApiFailure {
    crate::api::ApiFailure::not_found(format!(
        "no route {}",
        exchange::text::clip(uri.path(), 200)
    ))
}

async fn topology(
    State(state): State<BffState>,
    Extension(person): Extension<Person>,
) -> Json<TopologyView> {
    Json(state.view(&person.scope))
}

/// `GET /api/events`: one SSE `message` per hub event, its data the JSON
/// of an `app::dto::HubEvent`, of the person's part only
/// ([`part::event`]). A listener that falls behind gets a
/// `topology_changed` (refetch everything) instead of the events it
/// missed. The stream ends when the hub stops, when its session logs out,
/// and when its person is removed or given another role or scope (the
/// canvas reconnects and sees what it may see now).
async fn events(
    State(state): State<BffState>,
    Extension(person): Extension<Person>,
    session: tower_sessions::Session,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = state.events.subscribe();
    let scope = person.scope.clone();
    let registry = state.registry.clone();
    let live = stream::unfold(rx, |mut rx| async move {
        match rx.recv().await {
            Ok(ev) => Some((ev, rx)),
            Err(RecvError::Lagged(_)) => Some((HubEvent::TopologyChanged, rx)),
            Err(RecvError::Closed) => None,
        }
    })
    .filter_map(move |ev| {
        let shown = part::event(&registry.snapshot().topology, &scope, ev);
        async move { shown }
    })
    .map(|ev| {
        Ok(Event::default()
            .json_data(&ev)
            .unwrap_or_else(|_| Event::default().data("{\"type\":\"topology_changed\"}")))
    })
    .take_until(state.shutdown.wait())
    .take_until(revoked(
        state.people.revocations(),
        person.username,
        crate::web::ui_auth::session::stream_key(&session),
    ));
    Sse::new(live).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// Resolves when `username`'s streams, or the session keyed `session`'s,
/// must end.
async fn revoked(
    mut revocations: tokio::sync::broadcast::Receiver<Revocation>,
    username: String,
    session: Option<String>,
) {
    loop {
        match revocations.recv().await {
            Ok(Revocation::Person(who)) if who == username => return,
            Ok(Revocation::Session(key)) if Some(&key) == session.as_ref() => return,
            Ok(_) => {}
            // Missed revocations may have been this stream's: end it (the
            // canvas reconnects under the current rights).
            Err(RecvError::Lagged(_)) => return,
            Err(RecvError::Closed) => std::future::pending::<()>().await,
        }
    }
}
