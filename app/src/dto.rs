//! Data transfer objects: the only shapes of data a browser ever receives.
//!
//! Every field here is whitelisted on purpose. Nothing secret (tokens, token
//! env var names, internal base URLs, IP allowlists) has a field to live in.
//!
//! This module compiles for the browser (wasm) as well as for the hub, so it
//! depends on serde and on the plain vocabulary of the `exchange` crate
//! (its reason codes) only.

use serde::{Deserialize, Serialize};

/// The nine reasons a call can end `not_connected`: defined once in the
/// shared `exchange` crate (the hub produces them, peers read them, the
/// canvas draws them), re-exported here for the browser.
pub use exchange::reason::ReasonCode;

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
    /// `<consumer>-><provider>:<capability>`: stable across reloads.
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

/// A node's position on the canvas, in canvas coordinates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePosition {
    /// Node id.
    pub node: String,
    pub x: f64,
    pub y: f64,
}

/// `PUT /api/positions`: positions to persist (merged with stored ones).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavePositionsRequest {
    pub positions: Vec<NodePosition>,
}

/// `POST /api/edges`: establish `consumer → provider` for `capability`.
/// The server re-checks the connection rule; the browser is never trusted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreateEdgeRequest {
    pub consumer: String,
    pub provider: String,
    pub capability: String,
}

/// The body of every refused `/api` request: what was wrong, and the
/// reason code when one of the nine applies (e.g. `NOT_PERMITTED`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
    pub reason: Option<ReasonCode>,
}

/// `POST /api/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginRequest {
    pub username: String,
    pub password: String,
}

/// `GET /api/session`: who is logged in, and the CSRF token every
/// state-changing request must carry in `X-CSRF-Token`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    pub username: String,
    pub csrf_token: String,
    /// What the person may do.
    pub role: crate::access::Role,
    /// The member system a member-scoped person is bound to.
    pub system: Option<String>,
}

/// How a call through the hub ended, as the browser may see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CallOutcomeView {
    Connected,
    NotConnected { reason: ReasonCode, detail: String },
}

/// `POST /api/edges/{id}/query`: an aggregate over the provider's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryRequest {
    /// `count`, `sum`, `avg`, `min` or `max`.
    pub op: String,
    /// The aggregated column (not needed for `count`).
    pub column: Option<String>,
    /// Group rows by this column.
    pub group_by: Option<String>,
}

/// One group of a data-share answer: aggregates only, never raw rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryRow {
    pub key: Option<String>,
    pub value: Option<f64>,
    pub count: u64,
}

/// What a data-share drawer shows: whitelisted fields of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryResultView {
    pub edge: String,
    pub capability: String,
    pub provider: String,
    pub trace_id: String,
    pub outcome: CallOutcomeView,
    pub rows: Vec<QueryRow>,
    pub row_count: Option<u64>,
}

/// `POST /api/edges/{id}/ask`: a question for a consult capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskRequest {
    pub question: String,
}

/// `GET /api/edges/{id}/contract`: what a data-share edge's drawer shows
/// about data contracts — for the edge's consumer and for the hub (whose
/// drawer queries need their own) — rebuilt from the hub's record of the
/// negotiations that crossed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractsView {
    pub edge: String,
    /// The data-share.
    pub capability: String,
    pub provider: String,
    /// The provider's negotiation capability for it, if the registry has
    /// one.
    pub negotiation: Option<String>,
    /// The edge's consumer first, then the hub (when it is another).
    pub parties: Vec<PartyContractView>,
}

/// One consumer's contract with the provider, its negotiation and state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartyContractView {
    pub consumer: String,
    /// Whether this is the hub (which can negotiate from the drawer; a
    /// member starts its own with `peer negotiate`).
    pub is_hub: bool,
    /// Whether a rule lets this consumer negotiate with the provider.
    pub may_negotiate: bool,
    /// The newest contract granted, if any.
    pub contract: Option<ContractSummaryView>,
    /// Derived from the recorded turns and calls, never stored.
    pub state: RunState,
    /// What the state means right now, in a sentence.
    pub state_detail: String,
    /// The newest negotiation's turns, in order; empty before any.
    pub transcript: Vec<TurnView>,
}

/// A granted contract as the drawer shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContractSummaryView {
    pub contract_id: String,
    pub columns: Vec<String>,
    pub purpose: Option<UntrustedText>,
    pub retention_days: Option<f64>,
    /// RFC 3339.
    pub expires_at: Option<String>,
    pub expired: bool,
}

/// Where a consumer's contract work stands (derived from the
/// events, so a process that dies mid-run cannot leave a stale flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Nothing recorded yet.
    Idle,
    /// Messages are being exchanged; no grant and no end yet.
    Negotiating,
    /// A contract is granted; reads run under it.
    Executing,
    /// The newest negotiation ended in a failure or a protocol error.
    Error,
}

/// One negotiation message and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnView {
    pub seq: i64,
    pub at: String,
    pub context_id: String,
    pub sent: NegotiationMessageView,
    /// The provider's reply, when it was a valid one.
    pub reply: Option<NegotiationMessageView>,
    /// The contract this turn granted.
    pub grant_id: Option<String>,
    /// Why there is no reply (a reason code and the words that came with it).
    pub failure: Option<CallOutcomeView>,
}

/// A negotiation message as the drawer shows it: the words are the
/// speaker's, untrusted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NegotiationMessageView {
    /// The system that spoke.
    pub from: String,
    /// `propose`, `counter`, `accept`, `reject` or `request`.
    pub intent: String,
    pub columns: Vec<String>,
    pub retention_days: Option<f64>,
    pub purpose: Option<UntrustedText>,
    pub rationale: Option<UntrustedText>,
}

/// `POST /api/edges/{id}/negotiate`: what the hub asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NegotiateRequest {
    pub columns: Vec<String>,
    pub purpose: String,
    pub retention_days: u64,
}

/// Free text from a peer: data, never instructions. The canvas shows it
/// inert, marked "from <peer>, unverified".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntrustedText {
    pub text: String,
    /// The system id it came from.
    pub from: String,
}

/// A labelled scalar of a consult answer (e.g. `priority: high`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    pub label: String,
    pub value: String,
}

/// Where a proposed action stands in its receiver's approval inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Rejected,
}

impl ApprovalStatus {
    /// The wire spelling, also the pages' `data-status`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Rejected => "rejected",
        }
    }
}

/// A proposed action from a consult answer, as stored in an inbox. It runs
/// nowhere until a logged-in human of the receiver approves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedActionView {
    pub id: String,
    pub action_type: String,
    pub target: String,
    /// The parameters as compact JSON text.
    pub parameters: String,
    pub rationale: UntrustedText,
    pub status: ApprovalStatus,
    /// The system whose inbox holds it (the hub's id when the hub asked).
    pub inbox: String,
    pub trace_id: String,
    /// The UI user who approved or rejected it.
    #[serde(default)]
    pub decided_by: Option<String>,
    /// When (RFC 3339 UTC).
    #[serde(default)]
    pub decided_at: Option<String>,
    /// The receiver's own local write the approval performed.
    #[serde(default)]
    pub effect: Option<String>,
}

/// One row of the hub's own budget plan: what an approved `set_budget`
/// wrote locally (the hub never writes at the proposing system).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetPlanView {
    pub department: String,
    pub amount: f64,
    pub approved_by: String,
    pub approved_at: String,
    /// The system whose consult answer proposed it.
    pub proposed_by: String,
    pub trace_id: String,
    /// The inbox entry it came from.
    pub inbox_id: String,
}

/// `GET /api/inbox/page`: the hub's inbox page in one answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxPageView {
    /// The hub's id (whose inbox this is).
    pub owner: String,
    /// Newest first.
    pub entries: Vec<ProposedActionView>,
    /// The hub's own local state that approvals write.
    pub budget_plans: Vec<BudgetPlanView>,
}

/// What a consult drawer shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsultView {
    pub edge: String,
    pub capability: String,
    pub provider: String,
    pub trace_id: String,
    pub outcome: CallOutcomeView,
    pub answer: Option<UntrustedText>,
    pub facts: Vec<Fact>,
    pub proposed_actions: Vec<ProposedActionView>,
}

/// One line of the hub's audit trail as a drawer shows it (no detail text,
/// no payload, no token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntryView {
    pub at: String,
    pub caller: String,
    pub provider: String,
    pub capability: String,
    pub outcome: String,
    pub reason: Option<ReasonCode>,
    pub duration_ms: u64,
    pub trace_id: String,
}

/// One message of `GET /api/events` (Server-Sent Events, JSON data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HubEvent {
    /// A system's health changed.
    StatusChanged {
        /// The system id.
        system: String,
        /// Its new status.
        status: NodeStatus,
        /// Why, when degraded.
        reason: Option<ReasonCode>,
        /// Operator detail, when degraded.
        detail: Option<String>,
    },
    /// The topology file was reloaded: refetch `/api/topology`. Also sent
    /// when a slow listener missed events, as a signal to resynchronise.
    TopologyChanged,
    /// The hub's approval inbox changed (a proposal arrived or a decision
    /// was taken): how many entries wait now.
    InboxChanged {
        /// Pending entries in the hub's inbox.
        pending: u64,
    },
    /// The agent config was reloaded: refetch `/api/agents`.
    AgentsChanged,
    /// Calls crossed these edges since the last traffic event: their
    /// recent traffic now (at most one event per half second, only the
    /// edges that changed).
    Traffic {
        /// The changed edges' traffic.
        edges: Vec<EdgeTrafficView>,
        /// Which of `edges` are observed edges now, with their ends; an
        /// edge of `edges` not named here is not (any more) one.
        #[serde(default)]
        observed: Vec<ObservedEdgeView>,
    },
}

// ---------------------------------------------------------------------
// Traffic, metrics and the envelope inspector
// ---------------------------------------------------------------------

/// How one exchange through the hub ended, as traffic counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrafficOutcome {
    /// Forwarded and answered within the contract.
    Connected,
    /// Answered from the hub's store: a retry with a key already used.
    Replayed,
    /// Refused or failed, with a reason code.
    NotConnected,
}

/// The last call of an edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastCallView {
    /// When it ended (RFC 3339).
    pub at: String,
    pub outcome: TrafficOutcome,
    /// The reason code when `not_connected`.
    pub reason: Option<ReasonCode>,
    pub duration_ms: u64,
}

/// An edge's recent traffic, for its label on the canvas: calls and
/// failures in the last `window_secs`, and the last call. An edge nobody
/// has called has `calls == 0` and no `last` (the canvas says so).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeTrafficView {
    /// The edge id (`<consumer>-><provider>:<capability>`).
    pub edge: String,
    /// The window the counts cover, in seconds.
    pub window_secs: u32,
    /// Calls that ended in the window.
    pub calls: u32,
    /// Of those, how many ended `not_connected`.
    pub failures: u32,
    /// The last call, ever (since the hub started).
    pub last: Option<LastCallView>,
}

/// `GET /api/traffic`: every edge's recent traffic, the canvas's first
/// load (then [`HubEvent::Traffic`] keeps it current).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrafficView {
    /// The established edges' traffic, and the observed edges'.
    pub edges: Vec<EdgeTrafficView>,
    /// The observed edges now, with their ends.
    #[serde(default)]
    pub observed: Vec<ObservedEdgeView>,
}

/// An observed edge (DESIGN.md §2): calls between two nodes that crossed
/// the hub in the last window, answered or refused, whether or not an
/// operator established the edge. Its traffic is the [`EdgeTrafficView`]
/// of the same id; the canvas draws it unless an established edge has
/// that id (which then shows the traffic itself).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObservedEdgeView {
    /// `<consumer>-><provider>:<capability>`, as an established edge's.
    pub id: String,
    /// The calling node id (a system, or the hub).
    pub consumer: String,
    /// The called node id.
    pub provider: String,
    /// The capability the calls were about.
    pub capability: String,
}

/// Failures of one reason code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasonCountView {
    pub reason: ReasonCode,
    pub count: u64,
}

/// Whether work got done (DESIGN.md §6), for an edge
/// (`GET /api/edges/{id}/metrics`) or a system, over every edge it is
/// part of (`GET /api/nodes/{id}/metrics`). Counts since the hub started;
/// `unfinished_tasks` and the human interventions are read from the hub's
/// store, so they survive a restart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricsView {
    /// The edge id or the system id.
    pub scope: String,
    /// Calls that ended (connected, replayed or not connected).
    pub calls: u64,
    /// Of those, answered (connected or replayed).
    pub succeeded: u64,
    /// `succeeded / calls`; `None` when there were no calls.
    pub success_rate: Option<f64>,
    /// Failures by reason code, largest first.
    pub failures: Vec<ReasonCountView>,
    /// Retries: calls that repeated a key already used (answered from the
    /// store, or joined to the task the key already has).
    pub retries: u64,
    /// Wait (latency) of the recent calls, median and 95th percentile.
    pub wait_p50_ms: Option<u64>,
    pub wait_p95_ms: Option<u64>,
    /// Proposed actions a human approved / rejected.
    pub approvals: u64,
    pub rejections: u64,
    /// Tasks forwarded and not yet in a final state.
    pub unfinished_tasks: u64,
}

/// One exchange as the envelope inspector shows it: the envelope's
/// headers, the A2A method, status, timings, reason code, and the payload
/// **after** the contract's redaction (whitelisted fields only, masked
/// values masked, free text as untrusted). `request` is the input only
/// when the capability's input schema bounds it; `response` only when the
/// contract compiled the answer (`payload_note` says why one is absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExchangeView {
    /// When it ended (RFC 3339).
    pub at: String,
    /// The A2A method (`SendMessage`, `GetTask`, `CancelTask`, …).
    pub method: String,
    /// The A2A version the caller declared.
    pub version: String,
    /// `X-Request-Id` (the idempotency key).
    pub request_id: String,
    /// The W3C `traceparent` the call carried on.
    pub traceparent: String,
    pub caller: String,
    pub provider: String,
    pub capability: String,
    /// The HTTP status the caller got.
    pub http_status: u16,
    pub outcome: TrafficOutcome,
    pub reason: Option<ReasonCode>,
    pub duration_ms: u64,
    /// The provider task it created or read, with its state.
    pub task_id: Option<String>,
    pub task_state: Option<String>,
    /// The capability input, redacted (see above).
    pub request: Option<serde_json::Value>,
    /// The answer after the contract's redaction.
    pub response: Option<serde_json::Value>,
    /// Why a payload is not shown.
    pub payload_note: Option<String>,
}

/// `GET /api/edges/{id}/inspector`: the edge's last exchanges, newest
/// first, at most `capacity` (the hub keeps no more in memory).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InspectorView {
    pub edge: String,
    pub capacity: u32,
    pub exchanges: Vec<ExchangeView>,
}

/// `GET /api/agents`: which of the hub's own agents (DESIGN.md §5) the
/// canvas offers. An agent that is off, or that has no rule path and no
/// model tier (the interpreter), is `false` and its entry is not drawn;
/// the narrator is not listed at all (it is not built). No endpoint, model
/// or key: only what decides what the canvas shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct AgentsView {
    /// Suggestions of legal, not-yet-made connections.
    pub recommender: bool,
    /// Whether the recommender's suggestions are ranked by a model.
    pub recommender_model: bool,
    /// One sentence about a node's redacted metrics (model only).
    pub interpreter: bool,
}

/// Who ordered a list of suggestions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankedBy {
    /// The registry's order (no model, or the model's run failed).
    Rules,
    /// A model ranked the registry's candidates.
    Model,
}

/// `GET /api/recommendations`: connections the registry allows that are
/// not made yet, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecommendationsView {
    pub suggestions: Vec<SuggestionView>,
    pub ranked_by: RankedBy,
    /// Why a model run did not rank them, when one was tried.
    pub note: Option<String>,
    /// The orchestrator's run behind the ranking, when a model ran.
    pub transcript: Option<TranscriptView>,
}

/// One suggested connection: accepting it is `POST /api/edges` with these
/// three ids, re-checked against the rules there like any drag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuggestionView {
    /// The edge id it would get.
    pub edge: String,
    pub consumer: String,
    pub provider: String,
    pub capability: String,
    pub kind: CapabilityKind,
    /// The hub's own reason, from the registry.
    pub why: String,
    /// The model's explanation, when a model ranked it: model output is
    /// untrusted text (`from` names the tier).
    pub model_why: Option<UntrustedText>,
}

/// `POST /api/nodes/{id}/interpret`: one sentence about a node's redacted
/// metrics, or nothing (no tier: the canvas does not offer it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterpretationView {
    pub node: String,
    /// The sentence (model output: untrusted text).
    pub sentence: Option<UntrustedText>,
    /// Why there is no sentence, when a run was tried and failed.
    pub note: Option<String>,
    pub transcript: Option<TranscriptView>,
}

/// How an orchestrator run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcomeView {
    /// A final answer that passed every check.
    Answered,
    /// The model's replies were unusable (twice not valid JSON, an endpoint
    /// error) or its answer failed the checks.
    Failed,
    /// The run's deadline passed.
    Deadline,
    /// The step budget ran out without a final answer.
    StepsExhausted,
}

/// An orchestrator run, read-only: every step the hub's trail recorded
/// under `trace_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptView {
    pub trace_id: String,
    /// The specialist that built the run (`recommender`, `interpreter`).
    pub agent: String,
    pub outcome: RunOutcomeView,
    /// What ended it, in the hub's words.
    pub detail: String,
    pub elapsed_ms: u64,
    pub steps: Vec<StepView>,
}

/// One thought → tool call → observation of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepView {
    /// 1-based.
    pub n: u32,
    /// The model's thought (untrusted text).
    pub thought: Option<UntrustedText>,
    /// The tool it asked for; `None` for the final answer.
    pub tool: Option<String>,
    /// The arguments, as JSON text.
    pub arguments: Option<String>,
    /// What the hub answered: a tool's redacted result, or why the call
    /// was refused.
    pub observation: Option<UntrustedText>,
    /// Set when the hub refused the tool call, in code.
    pub refused: Option<String>,
    /// Set when the model's first reply had to be corrected.
    pub corrected: Option<String>,
    pub elapsed_ms: u64,
}

/// `GET /api/inbox/pending`: how many proposals wait in the hub's inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxPendingView {
    pub pending: u64,
}

/// `POST /api/systems/discover`: the operator gives a system's base URL;
/// the hub fetches its agent card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoverRequest {
    /// `http(s)://host:port` of the system's A2A server (its card is at
    /// `/.well-known/agent-card.json` under it).
    pub base_url: String,
}

/// What the hub proposes after reading a card: a topology section the
/// operator edits and saves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnboardingProposal {
    /// The digest of the topology file the proposal was made from: the
    /// save names it, and is refused if the file changed since.
    pub base: String,
    /// The system id the server answered with (its `/health` identity).
    pub system: String,
    /// The card's name and description (peer free text).
    pub card_name: UntrustedText,
    pub card_description: UntrustedText,
    /// Whether the card carried a signature.
    pub signed: bool,
    /// Each skill of the card, as the proposal took it.
    pub skills: Vec<ProposedSkill>,
    /// The proposed topology section (YAML): `system`, `capabilities`,
    /// `rules`, `calls`. The operator edits it before saving.
    pub section: String,
}

/// One skill of a discovered card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedSkill {
    /// The skill id, which names the capability.
    pub capability: String,
    /// The kind proposed (from the card's tags), to confirm.
    pub kind: Option<CapabilityKind>,
    /// Whether the registry already defines this capability (the new
    /// system then provides it as it is defined).
    pub existing: bool,
}

/// `POST /api/systems`: saves an edited section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddSystemRequest {
    /// [`OnboardingProposal::base`].
    pub base: String,
    /// The section, as the operator left it.
    pub section: String,
}

/// The answer to a saved onboarding: the only answer that ever carries a
/// system's token, once (`Cache-Control: no-store`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemAdded {
    pub system: String,
    /// The environment variable the system's token is read from.
    pub token_env: String,
    /// The token the hub made for it, shown this once.
    pub credential: String,
    /// The topology file's digest now (the next change's base).
    pub base: String,
}

/// `DELETE /api/systems/{id}` and other topology writes: what the write
/// was made against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyBase {
    /// The digest of the topology file as the operator saw it
    /// ([`TopologyView::digest`]).
    pub base: String,
}

/// `PUT /api/rules/consumers`: adds a consumer to a rule or takes it off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleConsumerRequest {
    pub base: String,
    pub capability: String,
    pub provider: String,
    pub consumer: String,
    /// `true`: may call; `false`: may not any more.
    pub member: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_codes_use_screaming_snake_case() {
        for code in ReasonCode::ALL {
            let json = serde_json::to_string(&code).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }

    #[test]
    fn events_are_tagged_by_type() {
        let ev = HubEvent::StatusChanged {
            system: "vendorcorp".into(),
            status: NodeStatus::Degraded,
            reason: Some(ReasonCode::Timeout),
            detail: Some("deadline".into()),
        };
        let v = serde_json::to_value(&ev).unwrap_or_default();
        assert_eq!(v["type"], "status_changed");
        assert_eq!(v["status"], "degraded");
        assert_eq!(v["reason"], "TIMEOUT");
        let v = serde_json::to_value(HubEvent::TopologyChanged).unwrap_or_default();
        assert_eq!(v["type"], "topology_changed");
    }
}

/// A person of the hub, as the people page shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonView {
    pub username: String,
    pub role: crate::access::Role,
    /// The member system they are bound to; `None`: exchange-wide.
    pub system: Option<String>,
    /// Who made the entry: `file` (the UI users file), `admin`, `oidc`
    /// (a member's identity provider, at their login).
    pub origin: String,
}

/// `GET /api/people`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeopleView {
    pub people: Vec<PersonView>,
}

/// `POST /api/people`: a new person; the hub makes their password.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPersonRequest {
    pub username: String,
    pub role: crate::access::Role,
    /// Bind them to this member system; `None`: exchange-wide.
    #[serde(default)]
    pub system: Option<String>,
}

/// `PUT /api/people/{id}`: a person's new role and scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonUpdate {
    pub role: crate::access::Role,
    #[serde(default)]
    pub system: Option<String>,
}

/// A password the hub made for a person, shown this once
/// (`Cache-Control: no-store`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasswordIssued {
    pub username: String,
    pub password: String,
}

/// `POST /api/systems/{id}/credential`: the system's new credential,
/// shown this once (`Cache-Control: no-store`); the old one no longer
/// authenticates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialIssued {
    pub system: String,
    /// The variable the system's peer reads it from.
    pub token_env: String,
    pub credential: String,
    /// The topology file's digest (unchanged: the credential lives in the
    /// hub's credential store).
    pub base: String,
}

/// A member whose own identity provider lets its people log in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginProviderView {
    pub system: String,
    /// Its display name.
    pub name: String,
}

/// `GET /api/login/providers` (public): who offers a login.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginProvidersView {
    pub providers: Vec<LoginProviderView>,
}
