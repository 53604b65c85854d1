//! The `initial_edges` section: the connections the file seeds, each
//! between known parties and permitted by a rule.

use std::collections::HashSet;

use exchange::located::Seg;

use super::key;
use crate::registry::model::Topology;

/// Each edge: its consumer, provider and capability known; then a rule
/// that permits it, and no earlier edge with the same id.
pub(super) fn check(t: &Topology, push: &mut impl FnMut(&[Seg<'_>], String)) {
    let capability_ids = super::capability_ids(t);
    let system_ids = super::system_ids(t);
    let mut seen = HashSet::new();
    for (i, e) in t.initial_edges.iter().enumerate() {
        let at = |field: &'static str| [key("initial_edges"), Seg::Index(i), key(field)];
        let consumer_known = e.consumer == t.hub.id || system_ids.contains(e.consumer.as_str());
        let provider_known = system_ids.contains(e.provider.as_str());
        let capability_known = capability_ids.contains(e.capability.as_str());
        if !consumer_known {
            push(
                &at("consumer"),
                format!("unknown consumer `{}`", e.consumer),
            );
        }
        if !provider_known {
            push(
                &at("provider"),
                format!("unknown provider `{}`", e.provider),
            );
        }
        if !capability_known {
            push(
                &at("capability"),
                format!("unknown capability `{}`", e.capability),
            );
        }
        if consumer_known && provider_known && capability_known {
            if !t.permits(&e.consumer, &e.capability, &e.provider) {
                push(
                    &[key("initial_edges"), Seg::Index(i)],
                    format!(
                        "no rule lets {} consume {} from {}",
                        e.consumer, e.capability, e.provider
                    ),
                );
            } else if !seen.insert(e.id()) {
                push(
                    &[key("initial_edges"), Seg::Index(i)],
                    format!("duplicate edge `{}`", e.id()),
                );
            }
        }
    }
}
