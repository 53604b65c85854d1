//! Whether work got done, edge by edge (DESIGN.md §6 "metrics that say
//! whether work got done … on `/metrics` and on the canvas": success
//! rate, failure types, retries, wait, human interventions, unfinished
//! tasks — not how many model requests were made).
//!
//! Every exchange the gateway finishes (refused or answered, on any door)
//! is handed to [`Traffic::observe`] once, from `gateway::pipeline`'s
//! `finish`, next to its audit record. Three things are kept from it, all
//! bounded in memory:
//!
//! - [`stats`]: per (caller, provider, capability) counters since the hub
//!   started, the last minute's calls for the canvas's edge labels, and
//!   the recent waits for p50/p95;
//! - [`inspector`]: the last [`inspector::CAPACITY`] exchanges of each
//!   edge, with the payload **after** the contract's redaction (the raw
//!   answer is never kept);
//! - [`prometheus`]: the same counts as Prometheus metrics, rendered at
//!   `/metrics` with what only the hub's store knows (tasks by state,
//!   human decisions) read at scrape time.
//!
//! Labels are ids the registry knows (a caller claim or a path segment
//! the registry does not know is `unknown`), never a payload value, a
//! token or a URL: a label cannot become a leak, nor a way to grow memory.
//!
//! Which of the counted triples the canvas draws as observed edges
//! (traffic without an established edge) is decided in [`observed`].
//!
//! The edges that changed are drained by [`Traffic::spawn_publisher`]
//! twice a second into one `HubEvent::Traffic`, so a busy edge costs open
//! canvases at most two events a second.
//!
//! **Replicas.** Each replica counts the exchanges it handled. The edge
//! labels a canvas shows are the whole hub's: the publisher also hands this
//! replica's changed edges to the other replicas (`cluster`), which keep
//! them ([`Traffic::apply_remote`], for a window's length) and add them to
//! their own — calls and failures summed, the newest last call — in what
//! they publish and in `GET /api/traffic`. An edge's metrics drawer, its
//! inspector and `/metrics` stay the replica's own (Prometheus scrapes
//! each replica).

pub mod inspector;
pub use inspector::Payload;
pub mod observed;
pub mod prometheus;
pub mod stats;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::Duration;

use app::dto::{EdgeTrafficView, ExchangeView, LastCallView, MetricsView, TrafficOutcome};
use exchange::envelope::Envelope;
use exchange::reason::ReasonCode;
use tokio::time::Instant;

use crate::events::EventBus;
use crate::registry::model::{edge_id, Topology};
use crate::registry::Registry;
use stats::EdgeStats;

/// The label of an id the registry does not know.
pub const UNKNOWN: &str = "unknown";

/// What the gateway tells traffic about one finished exchange.
#[derive(Debug)]
pub struct Exchange<'a> {
    pub caller: &'a str,
    pub provider: &'a str,
    /// The capability the exchange is about (for a task operation: the
    /// task's capability, when the hub knows it).
    pub capability: &'a str,
    /// The A2A method (or `tools/call` for the MCP front).
    pub method: &'static str,
    pub envelope: &'a Envelope,
    pub http_status: u16,
    pub outcome: TrafficOutcome,
    pub reason: Option<ReasonCode>,
    pub duration: Duration,
    /// The call repeated a key already used (a replay, or a task
    /// submission joined to the task its key already has).
    pub retry: bool,
    /// The provider task it created or read, and its state.
    pub task: Option<(String, String)>,
}

/// The (caller, provider, capability) an exchange counts under, with ids
/// the registry does not know replaced by [`UNKNOWN`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Labels {
    pub caller: String,
    pub provider: String,
    pub capability: String,
}

impl Labels {
    /// The labels of an exchange under `topology`.
    pub fn of(topology: &Topology, caller: &str, provider: &str, capability: &str) -> Self {
        let system = |id: &str| {
            if topology.system(id).is_some() || id == topology.hub.id {
                id.to_string()
            } else {
                UNKNOWN.to_string()
            }
        };
        Labels {
            caller: system(caller),
            provider: system(provider),
            capability: if topology.capability(capability).is_some() {
                capability.to_string()
            } else {
                UNKNOWN.to_string()
            },
        }
    }

    /// Whether every id is known: only then is there an edge to draw.
    pub fn known(&self) -> bool {
        self.caller != UNKNOWN && self.provider != UNKNOWN && self.capability != UNKNOWN
    }

    /// The canvas edge these labels are.
    pub fn edge_id(&self) -> String {
        edge_id(&self.caller, &self.provider, &self.capability)
    }

    /// The labels of the canvas edge `id` (`<caller>-><provider>:<capability>`)
    /// when every id in it is one `topology` knows; `None` otherwise. Ids
    /// are never spelt with `>` or `:`, so the split is unambiguous.
    pub fn of_edge_id(topology: &Topology, id: &str) -> Option<Self> {
        let (caller, rest) = id.split_once("->")?;
        let (provider, capability) = rest.split_once(':')?;
        let labels = Labels::of(topology, caller, provider, capability);
        (labels.known() && labels.edge_id() == id).then_some(labels)
    }
}

/// Everything traffic keeps; shared by the gateway (writer) and the BFF
/// and `/metrics` (readers). Its lock is only held to update or copy a
/// few numbers, never across an await.
pub struct Traffic {
    state: Mutex<State>,
    prometheus: prometheus::Metrics,
    /// The other replicas' edge labels, by instance.
    remote: Mutex<HashMap<String, RemoteEdges>>,
}

/// What one other replica last said of its edges: edge id → (its view,
/// when it arrived).
type RemoteEdges = HashMap<String, (EdgeTrafficView, Instant)>;

#[derive(Default)]
struct State {
    edges: HashMap<Labels, EdgeStats>,
    dirty: HashSet<Labels>,
}

impl std::fmt::Debug for Traffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Traffic").finish_non_exhaustive()
    }
}

impl Default for Traffic {
    fn default() -> Self {
        Self::new()
    }
}

impl Traffic {
    /// Empty traffic.
    pub fn new() -> Self {
        Self {
            state: Mutex::new(State::default()),
            prometheus: prometheus::Metrics::new(),
            remote: Mutex::new(HashMap::new()),
        }
    }

    /// `local` with what the other replicas counted on the same edge added
    /// (a replica's view is kept for a window's length after it arrived).
    fn merged(&self, mut local: EdgeTrafficView, now: Instant) -> EdgeTrafficView {
        let Ok(remote) = self.remote.lock() else {
            return local;
        };
        let window = Duration::from_secs(u64::from(local.window_secs.max(1)));
        for edges in remote.values() {
            let Some((view, at)) = edges.get(&local.edge) else {
                continue;
            };
            if now.saturating_duration_since(*at) > window {
                continue;
            }
            local.calls = local.calls.saturating_add(view.calls);
            local.failures = local.failures.saturating_add(view.failures);
            let newer = match (&local.last, &view.last) {
                (None, Some(_)) => true,
                (Some(mine), Some(theirs)) => theirs.at > mine.at,
                _ => false,
            };
            if newer {
                local.last.clone_from(&view.last);
            }
        }
        local
    }

    /// Keeps what replica `from` counted on `edges` (its own views), and
    /// answers those edges as the whole hub counted them now: what this
    /// replica's canvases are told.
    pub fn apply_remote(&self, from: &str, edges: Vec<EdgeTrafficView>) -> Vec<EdgeTrafficView> {
        let now = Instant::now();
        let ids: Vec<String> = edges.iter().map(|e| e.edge.clone()).collect();
        if let Ok(mut remote) = self.remote.lock() {
            let theirs = remote.entry(from.to_string()).or_default();
            for view in edges {
                theirs.insert(view.edge.clone(), (view, now));
            }
            // Forget what has left every window.
            remote.retain(|_, edges| {
                edges.retain(|_, (v, at)| {
                    now.saturating_duration_since(*at)
                        <= Duration::from_secs(u64::from(v.window_secs.max(1)))
                });
                !edges.is_empty()
            });
        }
        let locals: Vec<EdgeTrafficView> = {
            let state = self.state.lock().ok();
            ids.into_iter()
                .map(|edge| {
                    state
                        .as_ref()
                        .and_then(|s| {
                            s.edges
                                .iter()
                                .find(|(l, _)| l.known() && l.edge_id() == edge)
                                .map(|(_, stats)| stats.traffic(edge.clone(), now))
                        })
                        .unwrap_or_else(|| stats::EdgeStats::default().traffic(edge, now))
                })
                .collect()
        };
        locals
            .into_iter()
            .map(|local| self.merged(local, now))
            .collect()
    }

    /// Counts one finished exchange, and keeps its inspector entry when
    /// the edge's sampling takes it (`payload` is worked out only then).
    pub fn observe(
        &self,
        topology: &Topology,
        ex: Exchange<'_>,
        payload: impl FnOnce() -> Payload,
    ) {
        let labels = Labels::of(topology, ex.caller, ex.provider, ex.capability);
        self.prometheus.observe(&labels, &ex);
        let now = Instant::now();
        let known = labels.known();
        let entry = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            let stats = state.edges.entry(labels.clone()).or_default();
            stats.record(now, &ex);
            let entry = known && stats.take_entry(now);
            if known {
                state.dirty.insert(labels.clone());
            }
            entry
        };
        if !entry {
            return;
        }
        // The payload is redacted outside the lock; an exchange that ends
        // meanwhile on the same edge may enter the ring first.
        let view = inspector::view(&labels, &ex, payload());
        if let Ok(mut state) = self.state.lock() {
            if let Some(stats) = state.edges.get_mut(&labels) {
                stats.inspect(view);
            }
        }
    }

    /// The recent traffic of one edge (an edge nobody called: zero, no
    /// last call).
    pub fn edge(&self, labels: &Labels) -> EdgeTrafficView {
        let now = Instant::now();
        let local = {
            let state = self.state.lock().ok();
            match state.as_ref().and_then(|s| s.edges.get(labels)) {
                Some(stats) => stats.traffic(labels.edge_id(), now),
                None => stats::EdgeStats::default().traffic(labels.edge_id(), now),
            }
        };
        self.merged(local, now)
    }

    /// Every edge with calls in its window now, as the whole hub counted
    /// them (this replica's edges and those only another replica called),
    /// by edge id. Only edges whose labels are all known.
    pub fn recent(&self) -> Vec<EdgeTrafficView> {
        let now = Instant::now();
        let mut views: Vec<EdgeTrafficView> = match self.state.lock() {
            Ok(state) => state
                .edges
                .iter()
                .filter(|(l, _)| l.known())
                .map(|(l, stats)| stats.traffic(l.edge_id(), now))
                .collect(),
            Err(_) => Vec::new(),
        };
        let mine: HashSet<String> = views.iter().map(|v| v.edge.clone()).collect();
        if let Ok(remote) = self.remote.lock() {
            let theirs: HashSet<&String> = remote
                .values()
                .flat_map(|edges| edges.keys())
                .filter(|id| !mine.contains(*id))
                .collect();
            views.extend(
                theirs
                    .into_iter()
                    .map(|id| stats::EdgeStats::default().traffic(id.clone(), now)),
            );
        }
        let mut views: Vec<EdgeTrafficView> = views
            .into_iter()
            .map(|v| self.merged(v, now))
            .filter(|v| v.calls > 0)
            .collect();
        views.sort_by(|a, b| a.edge.cmp(&b.edge));
        views
    }

    /// The labels of edge `id` if the hub has seen calls on it (this
    /// replica, or another one lately) and `topology` knows all its ids:
    /// what an observed edge's drawer resolves.
    pub fn seen(&self, topology: &Topology, id: &str) -> Option<Labels> {
        let labels = Labels::of_edge_id(topology, id)?;
        let here = self
            .state
            .lock()
            .is_ok_and(|s| s.edges.contains_key(&labels));
        let there = || {
            self.remote
                .lock()
                .is_ok_and(|r| r.values().any(|edges| edges.contains_key(id)))
        };
        (here || there()).then_some(labels)
    }

    /// The metrics of one edge.
    pub fn edge_metrics(&self, labels: &Labels) -> MetricsView {
        let state = self.state.lock().ok();
        let mut view = stats::Totals::default();
        if let Some(stats) = state.as_ref().and_then(|s| s.edges.get(labels)) {
            view.add(stats);
        }
        view.into_view(labels.edge_id())
    }

    /// The metrics of a system: every exchange it called or answered.
    pub fn system_metrics(&self, system: &str) -> MetricsView {
        let state = self.state.lock().ok();
        let mut view = stats::Totals::default();
        if let Some(state) = state.as_ref() {
            for (labels, stats) in &state.edges {
                if labels.caller == system || labels.provider == system {
                    view.add(stats);
                }
            }
        }
        view.into_view(system.to_string())
    }

    /// The last exchanges of one edge, newest first.
    pub fn inspector(&self, labels: &Labels) -> Vec<ExchangeView> {
        let state = self.state.lock().ok();
        state
            .as_ref()
            .and_then(|s| s.edges.get(labels))
            .map(|stats| stats.exchanges())
            .unwrap_or_default()
    }

    /// The Prometheus metrics.
    pub fn prometheus(&self) -> &prometheus::Metrics {
        &self.prometheus
    }

    /// The edges that changed since the last call, with their traffic now.
    pub fn drain_changed(&self) -> Vec<EdgeTrafficView> {
        let now = Instant::now();
        let Ok(mut state) = self.state.lock() else {
            return Vec::new();
        };
        let dirty: Vec<Labels> = state.dirty.drain().collect();
        let mut out = Vec::with_capacity(dirty.len());
        for labels in dirty {
            if let Some(stats) = state.edges.get_mut(&labels) {
                let view = stats.traffic(labels.edge_id(), now);
                stats.published(view.calls);
                out.push(view);
            }
        }
        out.sort_by(|a, b| a.edge.cmp(&b.edge));
        out
    }

    /// Publishes the changed edges every `every` (twice a second in the
    /// hub) as one `HubEvent::Traffic`, as the whole hub counted them,
    /// naming those that are observed edges under `registry`'s topology
    /// ([`observed`]); nothing when nothing changed. An edge whose last call leaves the
    /// window changes too: its count is pushed once more when it drops to
    /// zero. `share` gets this replica's own views of the same edges (for
    /// the other replicas).
    pub fn spawn_publisher(
        self: std::sync::Arc<Self>,
        registry: std::sync::Arc<Registry>,
        events: EventBus,
        every: Duration,
        share: impl Fn(Vec<EdgeTrafficView>) + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                self.mark_expiring();
                let own = self.drain_changed();
                if !own.is_empty() {
                    let now = Instant::now();
                    let edges = own.iter().map(|v| self.merged(v.clone(), now)).collect();
                    events.publish(observed::event(&registry.snapshot().topology, edges));
                    share(own);
                }
            }
        })
    }

    /// Marks dirty the edges whose window count changed by time alone.
    fn mark_expiring(&self) {
        let now = Instant::now();
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let State { edges, dirty } = &mut *state;
        for (labels, stats) in edges.iter_mut() {
            if labels.known() && stats.expire(now) {
                dirty.insert(labels.clone());
            }
        }
    }
}

/// The last call as the canvas shows it.
pub(crate) fn last_call(ex: &Exchange<'_>) -> LastCallView {
    LastCallView {
        at: exchange::audit::now(),
        outcome: ex.outcome,
        reason: ex.reason,
        duration_ms: u64::try_from(ex.duration.as_millis()).unwrap_or(u64::MAX),
    }
}

#[cfg(test)]
#[path = "traffic_tests.rs"]
mod tests;
