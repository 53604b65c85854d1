//! `GET /api/topology`: what the canvas draws (the nodes, the edges of the
//! map, the connection rules and the capabilities), and the words every
//! other room uses for a node's health and a capability's kind. Built by
//! the hub's `web::bff::topology`.

use exchange::reason::ReasonCode;
use serde::{Deserialize, Serialize};

use super::edges::NodePosition;

/// What the canvas draws a node as. `System` is the generic peer type that
/// needs no frontend code; agents and datasources hang off their system;
/// `Hub` is the exchange itself, drawn because rules name it as a consumer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// An independent peer system.
    System,
    /// An agent a system runs.
    Agent,
    /// A datasource a system owns.
    Datasource,
    /// The hub itself (a consumer in rules, never probed).
    Hub,
}

/// Health of a node or edge as the canvas shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeStatus {
    /// Answers its health check, its card and its last call.
    Healthy,
    /// Failed its health check or its last call: drawn greyed with a reason.
    Degraded,
    /// Not probed yet (just started, or just added to the topology).
    Unknown,
}

/// The two kinds of capability (DESIGN.md §2), as the canvas labels them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapabilityKind {
    /// Pull the provider's data through a query call.
    DataShare,
    /// Ask; the answer is a read-only conclusion.
    Consult,
    /// Agree a data contract for a data-share.
    Negotiation,
    /// Long-running work accepted under an idempotency key and a deadline
    /// (DESIGN.md §2, "task"): the answer is a task with a lifecycle.
    Task,
}

/// A capability a node provides or consumes, with its kind, so the canvas
/// can label and colour ports without a second lookup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityRef {
    /// Capability id, e.g. `orders.query`.
    pub id: String,
    /// Its kind.
    pub kind: CapabilityKind,
}

/// One node of the canvas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeView {
    /// Unique on the canvas: the system id for systems and the hub,
    /// `<system>/agent/<id>` and `<system>/datasource/<id>` for the others.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What to draw.
    pub node_type: NodeKind,
    /// For agents and datasources: the system node they hang off.
    pub system: Option<String>,
    /// Free text from the topology file (operator-written, not peer data).
    pub description: String,
    /// Health; agents and datasources share their system's.
    pub status: NodeStatus,
    /// Why the node is degraded (only when `status == degraded`).
    pub reason: Option<ReasonCode>,
    /// Operator-facing detail of the degradation.
    pub detail: Option<String>,
    /// Since when the node has been degraded (RFC 3339).
    pub since: Option<String>,
    /// Capabilities this node provides (systems only).
    pub provides: Vec<CapabilityRef>,
    /// Capabilities this node consumes (systems only).
    pub consumes: Vec<CapabilityRef>,
    /// What the signatures on the system's agent card said when the hub's
    /// prober last checked them (systems only).
    #[serde(default)]
    pub card_signature: CardSignatureView,
}

/// A provider's agent card signature as the hub's prober found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardSignatureView {
    /// No signature on the card (or no card fetched yet).
    #[default]
    Unsigned,
    /// A signature verifies with a key the provider publishes.
    Verified,
    /// The card is signed and no signature verifies.
    Failed,
}

impl CardSignatureView {
    /// Its wire spelling (`verified`).
    pub fn as_str(self) -> &'static str {
        match self {
            CardSignatureView::Unsigned => "unsigned",
            CardSignatureView::Verified => "verified",
            CardSignatureView::Failed => "failed",
        }
    }

    /// The word the drawer shows.
    pub fn word(self) -> &'static str {
        match self {
            CardSignatureView::Unsigned => "not signed",
            CardSignatureView::Verified => "verified",
            CardSignatureView::Failed => "does not verify",
        }
    }
}

impl NodeView {
    /// A healthy node with no description or capabilities: where test and
    /// generated views start (fields are then set as needed).
    pub fn healthy(id: &str, name: &str, node_type: NodeKind, system: Option<&str>) -> Self {
        NodeView {
            id: id.into(),
            name: name.into(),
            node_type,
            system: system.map(Into::into),
            description: String::new(),
            status: NodeStatus::Healthy,
            reason: None,
            detail: None,
            since: None,
            provides: vec![],
            consumes: vec![],
            card_signature: CardSignatureView::Unsigned,
        }
    }
}

/// One edge of the canvas: a legal (for now: rule-permitted) connection
/// `consumer → provider` for one capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeView {
    /// `<consumer>-><provider>:<capability>` ([`edge_id`](crate::dto::edge_id)):
    /// stable across reloads.
    pub id: String,
    /// The consuming node id.
    pub consumer: String,
    /// The providing node id.
    pub provider: String,
    /// Capability id, the edge's label.
    pub capability: String,
    /// Capability kind.
    pub kind: CapabilityKind,
    /// Derived from the provider's health: a degraded provider greys its edges.
    pub status: NodeStatus,
    /// The provider's reason code when degraded.
    pub reason: Option<ReasonCode>,
}

/// A connection rule as the canvas needs it to highlight legal targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleView {
    /// Capability id.
    pub capability: String,
    /// Capability kind.
    pub kind: CapabilityKind,
    /// The providing system id.
    pub provider: String,
    /// Every legal consumer id (systems and possibly the hub).
    pub consumers: Vec<String>,
}

/// A capability and its public contract facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityView {
    /// Capability id.
    pub id: String,
    /// Its kind.
    pub kind: CapabilityKind,
    /// Operator-written description.
    pub description: String,
    /// Deadline of one call in milliseconds.
    pub deadline_ms: u64,
    /// What the capability's input contract lets a caller name, per input
    /// field (e.g. `group_by` → `region, order_date, product`); empty when
    /// the capability has no input contract. The query form offers these.
    #[serde(default)]
    pub input_grants: Vec<InputGrant>,
}

/// The values one input field may take under the capability's input
/// contract (`input_schema` in the topology file).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputGrant {
    /// Dot path of the input field (`aggregate.column`, `filters[].column`).
    pub field: String,
    /// The allowed string values, in the contract's order.
    pub allowed: Vec<String>,
}

/// Everything `GET /api/topology` answers: what the canvas draws.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopologyView {
    /// The hub's own id (the consumer id of the hub's calls).
    pub hub_id: String,
    /// Systems, their agents and datasources, and the hub.
    pub nodes: Vec<NodeView>,
    /// Established connections (persisted by the hub; created and removed
    /// from the canvas). The legal ones are in `rules`.
    pub edges: Vec<EdgeView>,
    /// The connection rules.
    pub rules: Vec<RuleView>,
    /// The capabilities.
    pub capabilities: Vec<CapabilityView>,
    /// Why the last reload of the topology file failed (the hub keeps
    /// running on the previous topology); `None` when it loaded cleanly.
    pub reload_error: Option<String>,
    /// Where the operator left nodes (persisted); nodes not listed use the
    /// deterministic layout.
    #[serde(default)]
    pub positions: Vec<NodePosition>,
    /// Where the server's layered layout puts each root (hub and systems),
    /// in reading order, around the pinned `positions` it keeps clear of;
    /// empty when the server computed none (the canvas then lays out
    /// columns itself).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layout: Vec<NodePosition>,
    /// The digest of the topology file this view was read from: a change
    /// made from the canvas names it, and is refused if the file changed.
    #[serde(default)]
    pub digest: String,
}

impl TopologyView {
    /// The capability with id `id`.
    pub fn capability(&self, id: &str) -> Option<&CapabilityView> {
        self.capabilities.iter().find(|c| c.id == id)
    }
}
