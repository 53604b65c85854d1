//! The canvas's page-wide state, shared by context.
//!
//! Everything here starts with the same value on the server and in the
//! browser, so hydration finds the DOM it expects; browser-only facts
//! (the window's size, the live channel) arrive later through effects.

use std::collections::{BTreeMap, HashMap, HashSet};

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::graph::{Point, Rect};
use super::viewport::{Camera, Size};
use crate::api::ApiFailure;
use crate::dto::{
    ConsultView, EdgeView, NodeStatus, NodeView, QueryResultView, ReasonCode, TopologyView,
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

/// Health of a node or edge as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// Healthy, degraded or not yet probed.
    pub status: NodeStatus,
    /// Why it is degraded.
    pub reason: Option<ReasonCode>,
    /// Operator-facing detail.
    pub detail: Option<String>,
    /// Since when (RFC 3339).
    pub since: Option<String>,
}

impl Health {
    /// The health a node was served with.
    pub fn of_node(node: &NodeView) -> Self {
        Health {
            status: node.status,
            reason: node.reason,
            detail: node.detail.clone(),
            since: node.since.clone(),
        }
    }

    /// The health an edge was served with.
    pub fn of_edge(edge: &EdgeView) -> Self {
        Health {
            status: edge.status,
            reason: edge.reason,
            detail: None,
            since: None,
        }
    }

    /// Is it drawn greyed?
    pub fn is_degraded(&self) -> bool {
        self.status == NodeStatus::Degraded
    }

    /// One word for labels and CSS classes.
    pub fn word(&self) -> &'static str {
        match self.status {
            NodeStatus::Healthy => "healthy",
            NodeStatus::Degraded => "degraded",
            NodeStatus::Unknown => "unknown",
        }
    }

    /// What the status badge says: the reason code when degraded, since
    /// that is what an operator acts on.
    pub fn badge(&self) -> String {
        match (self.status, self.reason) {
            (NodeStatus::Degraded, Some(reason)) => reason.as_str().to_string(),
            (NodeStatus::Degraded, None) => "degraded".into(),
            (NodeStatus::Healthy, _) => "healthy".into(),
            (NodeStatus::Unknown, _) => "not probed yet".into(),
        }
    }

    /// The spoken form: "healthy" or "degraded, PEER_UNREACHABLE".
    pub fn spoken(&self) -> String {
        match (self.status, self.reason) {
            (NodeStatus::Degraded, Some(reason)) => format!("degraded, {reason}"),
            (NodeStatus::Unknown, _) => "not probed yet".into(),
            _ => self.word().into(),
        }
    }
}

/// A status pushed by the live channel, numbered in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub struct LivePatch {
    /// Arrival number (1, 2, …); compared with [`TopologyLoad::seq`].
    pub seq: u64,
    /// The pushed health.
    pub health: Health,
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
}

impl Default for CanvasCtx {
    fn default() -> Self {
        Self::new()
    }
}

/// Health of a system: the live status if it is newer than the load the
/// graph was drawn from, else the served one.
pub fn effective_health(
    live: &HashMap<String, LivePatch>,
    load_seq: u64,
    node: Option<&NodeView>,
    system: &str,
) -> (Health, bool) {
    match live.get(system).filter(|p| p.seq > load_seq) {
        Some(p) => (p.health.clone(), true),
        None => (
            node.map(Health::of_node).unwrap_or(Health {
                status: NodeStatus::Unknown,
                reason: None,
                detail: None,
                since: None,
            }),
            false,
        ),
    }
}

/// Health of an edge from its two ends: a degraded provider (or consumer)
/// greys the edge with its reason. The served edge status stands for what
/// only the hub knows (a failed last call) until a live status of the
/// provider supersedes it.
pub fn edge_health(edge: &EdgeView, provider: (Health, bool), consumer: (Health, bool)) -> Health {
    let (p, p_live) = provider;
    let (c, _) = consumer;
    if p.is_degraded() {
        return Health {
            detail: None,
            since: None,
            ..p
        };
    }
    if c.is_degraded() {
        return Health {
            detail: None,
            since: None,
            ..c
        };
    }
    if !p_live && edge.status != NodeStatus::Healthy {
        return Health::of_edge(edge);
    }
    Health {
        status: p.status,
        reason: None,
        detail: None,
        since: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dto::CapabilityKind;

    fn h(status: NodeStatus, reason: Option<ReasonCode>) -> Health {
        Health {
            status,
            reason,
            detail: None,
            since: None,
        }
    }

    fn edge() -> EdgeView {
        EdgeView {
            id: "b->v:orders.query".into(),
            consumer: "b".into(),
            provider: "v".into(),
            capability: "orders.query".into(),
            kind: CapabilityKind::DataShare,
            status: NodeStatus::Healthy,
            reason: None,
        }
    }

    #[test]
    fn newer_live_status_wins_older_gives_way() {
        let mut live = HashMap::new();
        live.insert(
            "v".to_string(),
            LivePatch {
                seq: 3,
                health: h(NodeStatus::Degraded, Some(ReasonCode::Timeout)),
            },
        );
        assert!(effective_health(&live, 2, None, "v").0.is_degraded());
        assert!(!effective_health(&live, 3, None, "v").0.is_degraded());
    }

    #[test]
    fn degraded_end_greys_the_edge_with_its_reason() {
        let bad = (
            h(NodeStatus::Degraded, Some(ReasonCode::PeerUnreachable)),
            true,
        );
        let ok = (h(NodeStatus::Healthy, None), false);
        let e = edge_health(&edge(), bad.clone(), ok.clone());
        assert_eq!(e.reason, Some(ReasonCode::PeerUnreachable));
        assert!(edge_health(&edge(), ok.clone(), bad).is_degraded());
        assert!(!edge_health(&edge(), ok.clone(), ok).is_degraded());
    }

    #[test]
    fn badge_says_the_reason() {
        let d = h(NodeStatus::Degraded, Some(ReasonCode::PeerUnreachable));
        assert_eq!(d.badge(), "PEER_UNREACHABLE");
        assert_eq!(d.spoken(), "degraded, PEER_UNREACHABLE");
        assert_eq!(h(NodeStatus::Healthy, None).badge(), "healthy");
    }
}
