//! What the canvas's drawers show: a data-share edge's query and its
//! result, a consult edge's question and answer, a node's audit lines,
//! and how a call through the hub ended. Built by the hub's
//! `web::bff::drawers`, through its redaction layer.

use exchange::reason::ReasonCode;
use serde::{Deserialize, Serialize};

use super::inbox::ProposedActionView;
use super::untrusted::UntrustedText;

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

/// A labelled scalar of a consult answer (e.g. `priority: high`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fact {
    pub label: String,
    pub value: String,
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
