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

use super::graph::{Point, Rect};
use super::health::{Health, LivePatch};
use super::viewport::{Camera, Size};
use crate::api::ApiFailure;
use crate::dto::{
    AgentsView, ConsultView, InterpretationView, QueryResultView, RecommendationsView, TopologyView,
};

/// One load of the topology, stamped with how many live events the browser
/// had applied when it started, so that a live status older than the load
/// gives way to the load and a newer one wins over it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyLoad {
    /// Live events applied before this load was requested.
    pub seq: u64,
    /// The topology, or what failed while getting it.
    pub result: Result<TopologyView, String>,
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
