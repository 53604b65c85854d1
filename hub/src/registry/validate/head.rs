//! The file's head: its `version` and the `hub` section (the hub's id, and
//! its deadline and probe intervals).

use exchange::located::Seg;

use super::key;
use crate::registry::model::Topology;

/// `version` is 1; the hub's id is an id and its intervals are not 0.
pub(super) fn check(t: &Topology, push: &mut impl FnMut(&[Seg<'_>], String)) {
    if t.version != 1 {
        push(
            &[key("version")],
            format!("unsupported version {}; only version 1 exists", t.version),
        );
    }
    if !exchange::id::is_valid(&t.hub.id) {
        push(&[key("hub"), key("id")], exchange::id::rule_for("hub id"));
    }
    for (field, value) in [
        ("default_deadline_ms", t.hub.default_deadline_ms),
        ("probe_interval_ms", t.hub.probe_interval_ms),
        ("probe_timeout_ms", t.hub.probe_timeout_ms),
    ] {
        if value == 0 {
            push(&[key("hub"), key(field)], "must be greater than 0".into());
        }
    }
}
