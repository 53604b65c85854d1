//! The canvas's page-wide state, shared by context.
//!
//! Everything here starts with the same value on the server and in the
//! browser, so hydration finds the DOM it expects; browser-only facts
//! (the window's size, the live channel) arrive later through effects.
//! The state of one drawn graph (positions, gestures) is the scene's
//! (`interaction::SceneCtx`, a layer up), rebuilt with every load.

use std::collections::{BTreeMap, HashMap, HashSet};

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::geometry::{Point, Rect};
use super::health::{Health, LivePatch};
use super::observed::ObservedSet;
use super::payload::Packed;
use super::viewport::{Camera, Size};
use crate::api::ApiFailure;
use crate::dto::{
    AgentsView, ConsultView, EdgeTrafficView, InterpretationView, ObservedEdgeView,
    QueryResultView, RecommendationsView, TopologyView, TrafficView,
};

/// One load of the topology, stamped with how many live events the browser
/// had applied when it started, so that a live status older than the load
/// gives way to the load and a newer one wins over it.
///
/// Serialised (for the first load, which travels inside the server's
/// HTML) in the packed form of [`super::payload`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Packed", try_from = "Packed")]
pub struct TopologyLoad {
    /// Live events applied before this load was requested.
    pub seq: u64,
    /// The topology, or what failed while getting it.
    pub result: Result<TopologyView, String>,
}

impl From<TopologyLoad> for Packed {
    fn from(load: TopologyLoad) -> Packed {
        Packed::pack(load.seq, &load.result)
    }
}

impl TryFrom<Packed> for TopologyLoad {
    type Error = String;

    fn try_from(packed: Packed) -> Result<Self, String> {
        let (seq, result) = packed.unpack()?;
        Ok(TopologyLoad { seq, result })
    }
}

/// State of the live channel, shown as a small indicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// Not open yet (always so on the server).
    Connecting,
    /// Receiving events.
    Live,
    /// Lost; the browser is retrying.
    Reconnecting,
}

impl LinkState {
    /// The indicator's text.
    pub fn label(self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting…",
            LinkState::Live => "live",
            LinkState::Reconnecting => "reconnecting…",
        }
    }

    /// The indicator's `data-state`, for CSS and tests.
    pub fn key(self) -> &'static str {
        match self {
            LinkState::Connecting => "connecting",
            LinkState::Live => "live",
            LinkState::Reconnecting => "reconnecting",
        }
    }
}

/// What the drawer shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Selection {
    /// A node, by id.
    Node(String),
    /// An edge, by id.
    Edge(String),
}

/// How a message in the announcer reads: good news or a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Something was done (an edge created or removed).
    Done,
    /// Something was refused or failed.
    Refused,
}

/// One message of the canvas's live region: shown on screen and read out
/// by screen readers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The words.
    pub text: String,
    /// Good news or a refusal.
    pub kind: NoticeKind,
    /// Bumped per message, so an old timer never hides a newer one.
    pub seq: u64,
}

/// The last answer a drawer got for an edge: kept page-wide (not in the
/// drawer) so that a refetch of the topology, which redraws the scene,
/// never loses a result or one that is still on its way.
#[derive(Debug, Clone, PartialEq)]
pub enum EdgeAnswer {
    /// A data-share query's answer.
    Query(Result<QueryResultView, ApiFailure>),
    /// A consult's answer.
    Consult(Result<ConsultView, ApiFailure>),
}

/// What the canvas holds of the hub's own agents (DESIGN.md §5): which
/// are offered, the recommender's last list and the interpreter's last
/// sentence per node. Page-wide, so a redraw of the scene loses none of
/// it. Everything starts off (nothing offered, nothing loaded), on the
/// server too: the entries appear once the browser has asked the hub.
#[derive(Debug, Clone, Copy)]
pub struct AgentsState {
    /// Which agents the hub offers; all `false` until known.
    pub offered: RwSignal<AgentsView>,
    /// Bumped to read [`Self::offered`] again (the agent config changed,
    /// or the live channel may have missed that it did).
    pub refresh: RwSignal<u64>,
    /// Whether the suggestions panel is open.
    pub suggestions_open: RwSignal<bool>,
    /// The recommender's last list, or why it could not be read; `None`
    /// until the panel first asked.
    pub recommendations: RwSignal<Option<Result<RecommendationsView, ApiFailure>>>,
    /// The number of the newest request of the list: an older one
    /// answering late is dropped.
    pub recommendations_seq: StoredValue<u64>,
    /// Each node's last interpretation, by node id.
    pub interpretations: RwSignal<HashMap<String, Result<InterpretationView, ApiFailure>>>,
}

impl AgentsState {
    fn new() -> Self {
        AgentsState {
            offered: RwSignal::new(AgentsView::default()),
            refresh: RwSignal::new(0),
            suggestions_open: RwSignal::new(false),
            recommendations: RwSignal::new(None),
            recommendations_seq: StoredValue::new(0),
            interpretations: RwSignal::new(HashMap::new()),
        }
    }
}

/// What the canvas knows of one edge's recent traffic (DESIGN.md §6,
/// metrics on the canvas).
#[derive(Debug, Clone, PartialEq)]
pub enum EdgeTraffic {
    /// Not read yet (always so on the server, and in the browser until the
    /// first `GET /api/traffic` answers): the label shows nothing.
    Unknown,
    /// The hub listed no traffic for the edge.
    Quiet,
    /// What the hub last said about it.
    Known(EdgeTrafficView),
}

impl EdgeTraffic {
    /// The hub's view, when it gave one.
    pub fn view(&self) -> Option<&EdgeTrafficView> {
        match self {
            EdgeTraffic::Known(v) => Some(v),
            _ => None,
        }
    }
}

/// One edge's traffic cell: its own signal (so an event re-renders only
/// the edges it names) and the number of the last traffic event that set
/// it (so a full read answering late does not undo a newer event).
#[derive(Debug, Clone)]
struct TrafficCell {
    value: ArcRwSignal<EdgeTraffic>,
    stamp: u64,
}

/// Every edge's recent traffic, page-wide (a redraw of the scene keeps
/// it): one reactive cell per edge id, filled by `GET /api/traffic` and
/// patched by `HubEvent::Traffic`. The cells are reference-counted
/// signals, not owned by whichever component first asked, so they outlive
/// every scene.
#[derive(Debug, Clone, Copy)]
pub struct TrafficState {
    cells: StoredValue<HashMap<String, TrafficCell>>,
    /// Traffic events applied so far.
    events: StoredValue<u64>,
    /// Whether a full read has answered: from then on an edge the hub did
    /// not list is quiet, not unknown.
    loaded: StoredValue<bool>,
    /// Bumped to read every edge's traffic again.
    pub refresh: RwSignal<u64>,
    /// The observed edges the hub named (`crate::canvas::observed`).
    pub observed: RwSignal<ObservedSet>,
}

impl TrafficState {
    fn new() -> Self {
        TrafficState {
            cells: StoredValue::new(HashMap::new()),
            events: StoredValue::new(0),
            loaded: StoredValue::new(false),
            refresh: RwSignal::new(0),
            observed: RwSignal::new(ObservedSet::new()),
        }
    }

    /// The cell of `edge`, made on first use (untracked; read it with
    /// `.get()` to follow it).
    pub fn cell(&self, edge: &str) -> ArcRwSignal<EdgeTraffic> {
        if let Some(c) = self
            .cells
            .try_with_value(|m| m.get(edge).map(|c| c.value.clone()))
            .flatten()
        {
            return c;
        }
        let first = if self.loaded.try_get_value().unwrap_or(false) {
            EdgeTraffic::Quiet
        } else {
            EdgeTraffic::Unknown
        };
        let value = ArcRwSignal::new(first);
        self.cells
            .try_update_value(|m| {
                m.entry(edge.to_string())
                    .or_insert_with(|| TrafficCell {
                        value: value.clone(),
                        stamp: 0,
                    })
                    .value
                    .clone()
            })
            .unwrap_or(value)
    }

    /// The traffic of `edge` (tracked).
    pub fn get(&self, edge: &str) -> EdgeTraffic {
        self.cell(edge).get()
    }

    /// Applies a `HubEvent::Traffic`: replaces the entries of the edges it
    /// names, and only those (the others' labels do not re-render), and
    /// updates the observed edges.
    pub fn apply_event(&self, edges: Vec<EdgeTrafficView>, observed: Vec<ObservedEdgeView>) {
        let mut set = self.observed.try_get_untracked().unwrap_or_default();
        if crate::canvas::observed::after_event(&mut set, &edges, observed) {
            self.observed.try_set(set);
        }
        let Some(stamp) = self.events.try_update_value(|n| {
            *n += 1;
            *n
        }) else {
            return;
        };
        let mut changed = Vec::with_capacity(edges.len());
        for view in edges {
            let cell = self.cell(&view.edge);
            self.cells.update_value(|m| {
                if let Some(c) = m.get_mut(&view.edge) {
                    c.stamp = stamp;
                }
            });
            changed.push((cell, EdgeTraffic::Known(view)));
        }
        set_changed(changed);
    }

    /// The stamp a full read takes when it starts (see [`Self::apply_load`]).
    pub fn load_ticket(&self) -> u64 {
        self.events.try_get_value().unwrap_or(0)
    }

    /// Applies a full read started at `ticket`: every edge it lists gets
    /// its entry, every other edge is quiet, except edges an event named
    /// since the read started (the event is newer).
    pub fn apply_load(&self, ticket: u64, view: TrafficView) {
        let mut listed: HashMap<String, EdgeTrafficView> = view
            .edges
            .into_iter()
            .map(|e| (e.edge.clone(), e))
            .collect();
        let Some(existing) = self.cells.try_with_value(|m| {
            m.iter()
                .map(|(k, c)| (k.clone(), c.value.clone(), c.stamp))
                .collect::<Vec<_>>()
        }) else {
            return;
        };
        self.loaded.set_value(true);
        let newer: HashSet<String> = existing
            .iter()
            .filter(|(_, _, stamp)| *stamp > ticket)
            .map(|(edge, _, _)| edge.clone())
            .collect();
        if let Some(current) = self.observed.try_get_untracked() {
            let set = crate::canvas::observed::after_load(&current, view.observed, &newer);
            if set != current {
                self.observed.try_set(set);
            }
        }
        let mut changed = Vec::new();
        for (edge, cell, stamp) in existing {
            let entry = listed.remove(&edge);
            if stamp > ticket {
                continue;
            }
            changed.push((cell, entry.map_or(EdgeTraffic::Quiet, EdgeTraffic::Known)));
        }
        // Edges no label has asked for yet (another scene's): keep them
        // for when one does.
        for (edge, v) in listed {
            let cell = self.cell(&edge);
            changed.push((cell, EdgeTraffic::Known(v)));
        }
        set_changed(changed);
    }

    /// Whether some edge shows calls in its window: those counts age, so
    /// they are worth reading again.
    pub fn any_recent(&self) -> bool {
        self.cells
            .try_with_value(|m| {
                m.values().any(|c| {
                    c.value
                        .with_untracked(|t| t.view().is_some_and(|v| v.calls > 0))
                })
            })
            .unwrap_or(false)
    }
}

/// Sets each cell whose value changed (outside the map's lock: a reader
/// woken by the set may ask for a cell).
fn set_changed(changed: Vec<(ArcRwSignal<EdgeTraffic>, EdgeTraffic)>) {
    for (cell, value) in changed {
        if cell.with_untracked(|old| old != &value) {
            cell.set(value);
        }
    }
}

/// Page-wide state. All fields are arena handles, so it is `Copy`.
#[derive(Debug, Clone, Copy)]
pub struct CanvasCtx {
    /// True once the wasm bundle has taken over (never on the server).
    pub hydrated: RwSignal<bool>,
    /// Pan and zoom.
    pub camera: RwSignal<Camera>,
    /// The canvas's size on screen; unknown until measured in the browser.
    pub viewport: RwSignal<Option<Size>>,
    /// The box around the drawn graph (set by the scene, browser only).
    pub bounds: RwSignal<Option<Rect>>,
    /// The open drawer.
    pub selection: RwSignal<Option<Selection>>,
    /// The node or edge the keyboard or pointer is on, highlighted.
    pub highlight: RwSignal<Option<String>>,
    /// Statuses pushed live, by system id.
    pub live: RwSignal<HashMap<String, LivePatch>>,
    /// How many live events have been applied.
    pub event_seq: RwSignal<u64>,
    /// Bumped to refetch the topology.
    pub refresh: RwSignal<u64>,
    /// The `seq` of the newest load that drew the same graph as the one on
    /// screen (so it was not redrawn): live statuses older than it give
    /// way to the served ones, as if that load had been drawn.
    pub applied_seq: RwSignal<u64>,
    /// The live channel's state.
    pub link: RwSignal<LinkState>,
    /// Where the user dragged roots to, kept across refetches.
    pub moved: StoredValue<BTreeMap<String, Point>>,
    /// Moves not yet sent to the hub (sent debounced).
    pub unsaved: StoredValue<BTreeMap<String, Point>>,
    /// The pending debounce timer of [`Self::unsaved`].
    pub save_timer: StoredValue<Option<TimeoutHandle>>,
    /// What the announcer says (aria-live).
    pub notice: RwSignal<Option<Notice>>,
    /// Each edge's last drawer answer, by edge id.
    pub answers: RwSignal<HashMap<String, EdgeAnswer>>,
    /// Edges whose query or consult is on its way.
    pub running: RwSignal<HashSet<String>>,
    /// What the user typed in drawer forms, by `<edge id>#<field>`, so a
    /// redraw of the scene keeps it.
    pub drafts: StoredValue<HashMap<String, String>>,
    /// The element (by test id) to focus once the next load is drawn: the
    /// edge just created, for someone working with the keyboard.
    pub focus_after_load: StoredValue<Option<String>>,
    /// Proposals waiting in the hub's inbox (the Inbox link's badge);
    /// `None` until known.
    pub inbox_pending: RwSignal<Option<u64>>,
    /// The hub's own agents: what is offered and what they last said.
    pub agents: AgentsState,
    /// Every edge's recent traffic, one cell per edge.
    pub traffic: TrafficState,
}

impl CanvasCtx {
    /// Fresh state, identical on server and browser.
    pub fn new() -> Self {
        CanvasCtx {
            hydrated: RwSignal::new(false),
            camera: RwSignal::new(Camera::INITIAL),
            viewport: RwSignal::new(None),
            bounds: RwSignal::new(None),
            selection: RwSignal::new(None),
            highlight: RwSignal::new(None),
            live: RwSignal::new(HashMap::new()),
            event_seq: RwSignal::new(0),
            refresh: RwSignal::new(0),
            applied_seq: RwSignal::new(0),
            link: RwSignal::new(LinkState::Connecting),
            moved: StoredValue::new(BTreeMap::new()),
            unsaved: StoredValue::new(BTreeMap::new()),
            save_timer: StoredValue::new(None),
            notice: RwSignal::new(None),
            answers: RwSignal::new(HashMap::new()),
            running: RwSignal::new(HashSet::new()),
            drafts: StoredValue::new(HashMap::new()),
            focus_after_load: StoredValue::new(None),
            inbox_pending: RwSignal::new(None),
            agents: AgentsState::new(),
            traffic: TrafficState::new(),
        }
    }

    /// Says `text` in the live region (and on screen).
    pub fn announce(&self, kind: NoticeKind, text: impl Into<String>) {
        let seq = self
            .notice
            .with_untracked(|n| n.as_ref().map_or(0, |n| n.seq))
            + 1;
        self.notice.try_set(Some(Notice {
            text: text.into(),
            kind,
            seq,
        }));
    }

    /// A draft value of a drawer form field.
    pub fn draft(&self, key: &str) -> Option<String> {
        self.drafts.with_value(|d| d.get(key).cloned())
    }

    /// Keeps what the user typed in a drawer form field.
    pub fn set_draft(&self, key: &str, value: String) {
        self.drafts.update_value(|d| {
            d.insert(key.to_string(), value);
        });
    }

    /// Applies a pushed status of `system` (and so of its agents,
    /// datasources and edges) without refetching anything.
    pub fn apply_status(&self, system: String, health: Health) {
        let mut seq = 0;
        self.event_seq.update(|s| {
            *s += 1;
            seq = *s;
        });
        self.live.update(|m| {
            m.insert(system, LivePatch { seq, health });
        });
    }

    /// Asks for a fresh topology (the live channel said it changed, or
    /// events may have been missed).
    pub fn refetch(&self) {
        self.refresh.update(|r| *r += 1);
    }

    /// Asks which of the hub's own agents are offered, again (the agent
    /// config was reloaded, or events may have been missed).
    pub fn refetch_agents(&self) {
        self.agents.refresh.update(|r| *r += 1);
    }
}

impl Default for CanvasCtx {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(edge: &str, calls: u32) -> EdgeTrafficView {
        EdgeTrafficView {
            edge: edge.into(),
            window_secs: 60,
            calls,
            failures: 0,
            last: None,
        }
    }

    #[test]
    fn a_full_read_fills_every_edge_but_yields_to_newer_events() {
        let owner = Owner::new();
        owner.with(|| {
            let traffic = CanvasCtx::new().traffic;
            let (a, b, c) = ("a->b:x", "a->c:y", "a->d:z");
            // Labels ask first: unknown until the hub is read.
            assert_eq!(traffic.get(a), EdgeTraffic::Unknown);
            assert_eq!(traffic.get(b), EdgeTraffic::Unknown);
            let ticket = traffic.load_ticket();
            // An event for `a` lands while the read is on its way.
            traffic.apply_event(vec![t(a, 5)], vec![]);
            traffic.apply_load(
                ticket,
                TrafficView {
                    edges: vec![t(a, 4), t(c, 2)],
                    observed: vec![],
                },
            );
            // The event was newer than the read: it stays.
            assert_eq!(traffic.get(a).view().map(|v| v.calls), Some(5));
            // Not listed: quiet.
            assert_eq!(traffic.get(b), EdgeTraffic::Quiet);
            // Listed before any label asked: kept for the label.
            assert_eq!(traffic.get(c).view().map(|v| v.calls), Some(2));
            // A new edge after the first read is quiet, not unknown.
            assert_eq!(traffic.get("hub->e:w"), EdgeTraffic::Quiet);
            assert!(traffic.any_recent());
            // A later read wins over the old event.
            traffic.apply_load(
                traffic.load_ticket(),
                TrafficView {
                    edges: vec![],
                    observed: vec![],
                },
            );
            assert_eq!(traffic.get(a), EdgeTraffic::Quiet);
            assert!(!traffic.any_recent());
        });
    }
}
