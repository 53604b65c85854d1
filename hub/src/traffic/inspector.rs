//! The envelope inspector (the `a2a-inspector` habit, DESIGN.md §3
//! "browser"): what crossed an edge, as the browser may see it — the
//! envelope's headers, the A2A method, status, timings, reason code, and
//! the payload *after* the contract's redaction. The gateway hands over
//! payloads already redacted (`redaction::view::inspector_payload`); this
//! file only shapes the entry. Each edge keeps the last [`CAPACITY`].

use app::dto::ExchangeView;
use exchange::text::clip;

use super::{Exchange, Labels};

/// Exchanges kept per edge.
pub const CAPACITY: usize = 20;

/// The inspector's entry for one exchange. The payloads move into it
/// (nothing else reads them), the rest is copied.
pub fn view(labels: &Labels, ex: &mut Exchange<'_>) -> ExchangeView {
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
        request: ex.request.take(),
        response: ex.response.take(),
        payload_note: ex.payload_note.take(),
    }
}
