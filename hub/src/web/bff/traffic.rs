//! What crossed each edge, for the canvas (DESIGN.md §6 "metrics … on the
//! canvas"): `GET /api/traffic` (every edge's recent calls, then kept
//! current by `HubEvent::Traffic`), `GET /api/edges/{id}/metrics` and
//! `GET /api/nodes/{id}/metrics` (whether work got done), and
//! `GET /api/edges/{id}/inspector` (the edge's last exchanges, already
//! redacted when they were kept). Also `/metrics`, the same numbers for
//! Prometheus, which is not under `/api` (see [`metrics`]).
//!
//! The counts come from [`Traffic`](crate::traffic::Traffic); what only
//! the hub's store knows — human decisions, unfinished tasks — is read
//! from it here, so those survive a restart.

use std::collections::HashSet;
use std::net::SocketAddr;

use crate::net::networks::Networks;
use app::dto::{InspectorView, MetricsView, TrafficView};
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::drawers::system_of_node;
use super::BffState;
use crate::api::{ApiFailure, ApiPath};
use crate::registry::model::Topology;
use crate::traffic::{inspector, prometheus, Labels};
use exchange::text::clip;

/// `GET /api/traffic`: every established edge's traffic, and every
/// observed edge's ([`observed`](crate::traffic::observed)) with its ends,
/// as the whole hub counted them.
pub async fn traffic(
    State(state): State<BffState>,
    axum::Extension(person): axum::Extension<crate::web::ui_auth::people::Person>,
) -> Json<TrafficView> {
    let loaded = state.registry.snapshot();
    let t = &loaded.topology;
    let traffic = state.traffic;
    let mut edges: Vec<_> = state
        .edges
        .visible(t)
        .iter()
        .map(|e| traffic.edge(&Labels::of(t, &e.consumer, &e.provider, &e.capability)))
        .collect();
    let recent = traffic.recent();
    let observed = crate::traffic::observed::observed(t, &recent);
    let listed: HashSet<String> = edges.iter().map(|e| e.edge.clone()).collect();
    edges.extend(recent.into_iter().filter(|v| !listed.contains(&v.edge)));
    Json(super::part::traffic(
        TrafficView { edges, observed },
        &person.scope,
    ))
}

/// The labels of edge `id`: an established edge, or an observed one (the
/// hub has seen calls on it and knows its ids).
fn edge_labels(state: &BffState, t: &Topology, id: &str) -> Result<Labels, ApiFailure> {
    if let Some(edge) = state.edges.get(t, id) {
        return Ok(Labels::of(
            t,
            &edge.consumer,
            &edge.provider,
            &edge.capability,
        ));
    }
    state
        .traffic
        .seen(t, id)
        .ok_or_else(|| ApiFailure::not_found(format!("no edge {}", clip(id, 200))))
}

/// `GET /api/edges/{id}/metrics`.
pub async fn edge_metrics(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<MetricsView>, ApiFailure> {
    let labels = {
        let loaded = state.registry.snapshot();
        edge_labels(&state, &loaded.topology, &id)?
    };
    let mut view = state.traffic.edge_metrics(&labels);
    let stored = Stored::read(&state).await?;
    for (l, st, n) in &stored.tasks {
        if *l == labels && !st.is_final() {
            view.unfinished_tasks += n;
        }
    }
    // The hub's inbox holds the proposals of the hub's own drawer calls,
    // by provider and capability.
    for (from, capability, approved, rejected) in &stored.decisions {
        if *from == labels.provider && *capability == labels.capability {
            view.approvals += approved;
            view.rejections += rejected;
        }
    }
    Ok(Json(view))
}

/// `GET /api/nodes/{id}/metrics`: every exchange the node's system called
/// or answered.
pub async fn node_metrics(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<MetricsView>, ApiFailure> {
    let system = {
        let loaded = state.registry.snapshot();
        system_of_node(&loaded.topology, &id)
            .ok_or_else(|| ApiFailure::not_found(format!("no node {}", clip(&id, 200))))?
    };
    let mut view = state.traffic.system_metrics(&system);
    let stored = Stored::read(&state).await?;
    for (l, st, n) in &stored.tasks {
        if (l.caller == system || l.provider == system) && !st.is_final() {
            view.unfinished_tasks += n;
        }
    }
    for (from, _, approved, rejected) in &stored.decisions {
        if *from == system || system == stored.hub {
            view.approvals += approved;
            view.rejections += rejected;
        }
    }
    Ok(Json(view))
}

/// `GET /api/edges/{id}/inspector`.
pub async fn edge_inspector(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<InspectorView>, ApiFailure> {
    let labels = {
        let loaded = state.registry.snapshot();
        edge_labels(&state, &loaded.topology, &id)?
    };
    Ok(Json(InspectorView {
        edge: labels.edge_id(),
        capacity: u32::try_from(inspector::CAPACITY).unwrap_or(u32::MAX),
        exchanges: state.traffic.inspector(&labels),
    }))
}

/// What the hub's store says, with registry ids as labels.
struct Stored {
    hub: String,
    tasks: Vec<(Labels, crate::store::task_records::RecordState, u64)>,
    decisions: Vec<(String, String, u64, u64)>,
    peers: Vec<(String, bool)>,
}

impl Stored {
    async fn read(state: &BffState) -> Result<Self, ApiFailure> {
        let counts = state
            .records
            .counts()
            .await
            .map_err(|e| ApiFailure::internal("reading the task record", &e))?;
        let decisions = state
            .inbox
            .decision_counts()
            .await
            .map_err(|e| ApiFailure::internal("reading the inbox", &e))?;
        let loaded = state.registry.snapshot();
        let t = &loaded.topology;
        let tasks = counts
            .into_iter()
            .map(|(caller, provider, capability, state, n)| {
                (Labels::of(t, &caller, &provider, &capability), state, n)
            })
            .collect();
        let decisions = decisions
            .into_iter()
            .map(|(from, capability, a, r)| {
                let l = Labels::of(t, &t.hub.id, &from, &capability);
                (l.provider, l.capability, a, r)
            })
            .collect();
        let peers = t
            .systems
            .iter()
            .map(|s| {
                (
                    s.id.clone(),
                    matches!(
                        state.board.status(&s.id),
                        crate::health::PeerStatus::Healthy
                    ),
                )
            })
            .collect();
        Ok(Self {
            hub: t.hub.id.clone(),
            tasks,
            decisions,
            peers,
        })
    }
}

/// Who may read `/metrics`: the addresses in `WS_METRICS_ALLOW`
/// (comma-separated CIDRs), loopback when unset. A scraper has no UI
/// session, so the door is the address, like the gateway's allowlist;
/// nothing in the text is a secret (labels are registry ids), but the
/// traffic pattern of an exchange is its members' business.
#[derive(Debug, Clone)]
pub struct MetricsDoor {
    allow: Networks,
}

/// The env var listing who may scrape `/metrics`.
pub const METRICS_ALLOW_ENV: &str = "WS_METRICS_ALLOW";

impl MetricsDoor {
    /// From `WS_METRICS_ALLOW`, loopback when unset; an entry that is not
    /// a network is an error naming it.
    pub fn from_env() -> Result<Self, String> {
        Networks::from_env(METRICS_ALLOW_ENV, Networks::loopback()).map(|allow| Self { allow })
    }

    /// Loopback only.
    pub fn loopback() -> Self {
        Self {
            allow: Networks::loopback(),
        }
    }

    /// `10.0.0.0/8, 127.0.0.1/32`.
    pub fn parse(list: &str) -> Result<Self, String> {
        Networks::parse(METRICS_ALLOW_ENV, list).map(|allow| Self { allow })
    }

    fn admits(&self, addr: Option<SocketAddr>) -> bool {
        addr.is_some_and(|a| self.allow.contains(a.ip()))
    }
}

/// `GET /metrics`: OpenMetrics text.
pub async fn metrics(
    State((state, door)): State<(BffState, MetricsDoor)>,
    request: axum::extract::Request,
) -> Response {
    if !door.admits(crate::net::listen::Peer::of(&request).addr) {
        return (
            StatusCode::FORBIDDEN,
            "this address may not read /metrics\n",
        )
            .into_response();
    }
    let stored = match Stored::read(&state).await {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let mut snapshot = prometheus::Snapshot {
        tasks: stored.tasks,
        peers: stored.peers,
        decisions: Vec::new(),
    };
    for (system, capability, a, r) in stored.decisions {
        snapshot
            .decisions
            .push((system.clone(), capability.clone(), "approved", a));
        snapshot.decisions.push((system, capability, "rejected", r));
    }
    match state.traffic.prometheus().render(&snapshot) {
        Ok(text) => ([(header::CONTENT_TYPE, prometheus::CONTENT_TYPE)], text).into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "rendering metrics failed\n",
        )
            .into_response(),
    }
}
