//! The envelope inspector (the `a2a-inspector` habit, DESIGN.md §3
//! "browser"): what crossed an edge, as the browser may see it — the
//! envelope's headers, the A2A method, status, timings, reason code, and
//! the payload *after* the contract's redaction. The gateway hands over
//! payloads already redacted (`redaction::view::inspector_payload`); this
//! file only shapes the entry. Each edge keeps the last [`CAPACITY`] it
//! took: at most twice that at once and [`CAPACITY`] a second after that
//! (`stats::EdgeStats::take_entry`), so a busy edge is sampled and the
//! redaction of its payloads is not paid on every call.

use app::dto::ExchangeView;
use exchange::text::clip;

use super::{Exchange, Labels};

/// Exchanges kept per edge.
pub const CAPACITY: usize = 20;

/// What the inspector shows of an exchange's payloads, already redacted.
#[derive(Debug, Default)]
pub struct Payload {
    /// The input, when the capability's input schema bounds it.
    pub request: Option<serde_json::Value>,
    /// The answer after the contract's redaction.
    pub response: Option<serde_json::Value>,
    /// Why a payload is not shown.
    pub note: Option<String>,
}

/// The inspector's entry for one exchange. The payloads move into it
/// (nothing else reads them), the rest is copied.
pub fn view(labels: &Labels, ex: &Exchange<'_>, payload: Payload) -> ExchangeView {
    ExchangeView {
        at: exchange::audit::now(),
        method: ex.method.to_string(),
        version: clip(&ex.envelope.version, 16),
        request_id: clip(&ex.envelope.request_id, 128),
        traceparent: ex.envelope.trace.to_header(),
        caller: labels.caller.clone(),
        provider: labels.provider.clone(),
        capability: labels.capability.clone(),
        http_status: ex.http_status,
        outcome: ex.outcome,
        reason: ex.reason,
        duration_ms: u64::try_from(ex.duration.as_millis()).unwrap_or(u64::MAX),
        task_id: ex.task.as_ref().map(|(id, _)| clip(id, 128)),
        task_state: ex.task.as_ref().map(|(_, state)| clip(state, 32)),
        request: payload.request,
        response: payload.response,
        payload_note: payload.note,
    }
}
