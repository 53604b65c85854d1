//! The hub's trail lines of what people do through the BFF: topology
//! writes, credential events, changes of the people. One line per action,
//! made or refused, naming the person; never a secret.

use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::text::clip;

use super::BffState;

/// What one line says.
pub struct Line<'a> {
    /// The person who acted.
    pub who: &'a str,
    /// The kind of change (`topology`, `credential`, `people`): the
    /// line's capability.
    pub capability: &'static str,
    /// What it was about (a system id, or the hub's for the people): the
    /// line's provider.
    pub subject: &'a str,
    /// What they did, in words.
    pub action: &'a str,
    /// `Ok(note)` done, `Err(why)` refused.
    pub outcome: Result<&'a str, &'a str>,
}

/// Appends `line` to the hub's trail (a failure is logged: the action
/// itself is done or refused already).
pub(super) async fn append(state: &BffState, line: Line<'_>) {
    let hub = state.registry.snapshot().topology.hub.id.clone();
    let trail = &state.audit;
    if let Err(e) = trail.append(record(&hub, trail.system(), &line)).await {
        tracing::error!(error = %e, capability = line.capability, "auditing a change");
    }
}

/// The trail record of `line` in hub `hub`'s trail `trail` (what the
/// command line's `hub people` and `hub credentials` append too).
pub fn record(hub: &str, trail: &str, line: &Line<'_>) -> AuditRecord {
    let (outcome, note) = match line.outcome {
        Ok(note) => (Outcome::Executed, note),
        Err(why) => (Outcome::Refused, why),
    };
    let id = uuid::Uuid::new_v4().to_string();
    let detail = if note.is_empty() {
        format!("{} {}", line.who, line.action)
    } else {
        format!("{} {}: {note}", line.who, line.action)
    };
    AuditRecord {
        system: trail.to_string(),
        role: Role::Hub,
        at: exchange::audit::now(),
        caller: hub.to_string(),
        provider: clip(line.subject, 64),
        capability: line.capability.to_string(),
        request_id: format!("{}-{id}", line.capability),
        trace_id: id,
        outcome,
        reason: None,
        duration_ms: 0,
        detail: clip(&detail, 600),
    }
}
