//! A data-share edge's data contracts as its drawer shows them: each
//! party's newest contract, where its contract work stands and its
//! negotiation's turns, and what the hub asks for when it negotiates.
//! Built by the hub's `web::bff::contracts`.

use serde::{Deserialize, Serialize};

use super::drawers::CallOutcomeView;
use super::untrusted::UntrustedText;

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
