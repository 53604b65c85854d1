//! The `capabilities` section: each capability's id, its deadlines, and
//! what its kind asks for (a task's deadline, the data-share a negotiation
//! negotiates).

use std::collections::HashSet;

use exchange::located::Seg;

use super::key;
use crate::registry::model::{CapabilityKind, Topology};

/// Each capability: a valid id, not a duplicate; deadlines above 0; a task
/// deadline on a task only, a negotiated data-share on a negotiation only.
pub(super) fn check(t: &Topology, push: &mut impl FnMut(&[Seg<'_>], String)) {
    let mut seen = HashSet::new();
    for (i, c) in t.capabilities.iter().enumerate() {
        if !exchange::id::is_valid(&c.id) {
            push(
                &[key("capabilities"), Seg::Index(i), key("id")],
                exchange::id::rule_for("capability id"),
            );
        } else if !seen.insert(c.id.as_str()) {
            push(
                &[key("capabilities"), Seg::Index(i), key("id")],
                format!("duplicate capability id `{}`", c.id),
            );
        }
        if c.deadline_ms == Some(0) {
            push(
                &[key("capabilities"), Seg::Index(i), key("deadline_ms")],
                "must be greater than 0".into(),
            );
        }
        let at_task_deadline = [key("capabilities"), Seg::Index(i), key("task_deadline_ms")];
        match (c.kind, c.task_deadline_ms) {
            (CapabilityKind::Task, None) => push(
                &[key("capabilities"), Seg::Index(i), key("kind")],
                "a task names the longest a task may live (`task_deadline_ms: <ms>`)".into(),
            ),
            (CapabilityKind::Task, Some(0)) => {
                push(&at_task_deadline, "must be greater than 0".into())
            }
            (CapabilityKind::Task, Some(_)) => {}
            (_, Some(_)) => push(
                &at_task_deadline,
                "only a task capability has a task deadline".into(),
            ),
            (_, None) => {}
        }
        let at_negotiates = [key("capabilities"), Seg::Index(i), key("negotiates")];
        match (c.kind, &c.negotiates) {
            (CapabilityKind::Negotiation, None) => push(
                &[key("capabilities"), Seg::Index(i), key("kind")],
                "a negotiation names the data-share it negotiates (`negotiates: <capability>`)"
                    .into(),
            ),
            (CapabilityKind::Negotiation, Some(n)) => {
                match t.capabilities.iter().find(|d| &d.id == n) {
                    None => push(&at_negotiates, format!("unknown capability `{n}`")),
                    Some(d) if d.kind != CapabilityKind::DataShare => push(
                        &at_negotiates,
                        format!("`{n}` is a {:?}, not a data-share", d.kind),
                    ),
                    Some(_) => {}
                }
            }
            (_, Some(_)) => push(
                &at_negotiates,
                "only a negotiation capability negotiates a data-share".into(),
            ),
            (_, None) => {}
        }
    }
}
