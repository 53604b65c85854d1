//! Traffic, metrics and the envelope inspector: what crossed
//! each edge, established or observed, whether work got done, and the
//! edge's last exchanges as the hub redacted them. Built by the hub's
//! `traffic` and `web::bff::traffic`.

use exchange::reason::ReasonCode;
use serde::{Deserialize, Serialize};

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
/// load (then [`HubEvent::Traffic`](crate::dto::HubEvent::Traffic) keeps it
/// current).
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
