//! The recommender's candidates: the legal connections nobody has made
//! yet, straight from the registry (its deterministic path, and what the
//! `list_candidates` tool shows a run).
//!
//! The registry's provider/consumer intersection — a rule lets the
//! consumer use the capability of the provider, the provider lists it
//! under `provides` and the consumer under `consumes` (the hub consumes
//! whatever a rule names it for) — minus the edges already made, minus
//! negotiations (a negotiation is the conversation behind a data-share
//! edge, not an edge of its own), in the registry's order.

use std::collections::BTreeSet;

use crate::registry::model::{edge_id, CapabilityKind, Topology};
use crate::store::edges::Edge;

/// One legal connection not made yet, with the hub's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub edge: String,
    pub consumer: String,
    pub provider: String,
    pub capability: String,
    pub kind: CapabilityKind,
    /// Why the registry allows it, in the hub's words.
    pub why: String,
}

/// The registry's intersection minus the edges in `made`.
pub fn candidates(t: &Topology, made: &[Edge]) -> Vec<Candidate> {
    let made: BTreeSet<&str> = made.iter().map(|e| e.id.as_str()).collect();
    let name = |id: &str| {
        if id == t.hub.id {
            "the hub".to_string()
        } else {
            t.system(id)
                .map_or_else(|| id.to_string(), |s| s.name.clone())
        }
    };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for rule in &t.rules {
        let Some(cap) = t.capability(&rule.capability) else {
            continue;
        };
        if cap.kind == CapabilityKind::Negotiation {
            continue;
        }
        let Some(provider) = t.system(&rule.provider) else {
            continue;
        };
        if !provider.provides.contains(&rule.capability) {
            continue;
        }
        for consumer in &rule.consumers {
            let consumes = consumer == &t.hub.id
                || t.system(consumer)
                    .is_some_and(|s| s.consumes.contains(&rule.capability));
            if !consumes || consumer == &rule.provider {
                continue;
            }
            let edge = edge_id(consumer, &rule.provider, &rule.capability);
            if made.contains(edge.as_str()) || !seen.insert(edge.clone()) {
                continue;
            }
            let what = match cap.kind {
                CapabilityKind::DataShare => "read its data",
                _ => "ask it",
            };
            out.push(Candidate {
                why: format!(
                    "{} consumes {} and {} provides it; a rule lets {} {what}, and no edge is made yet.",
                    name(consumer),
                    rule.capability,
                    provider.name,
                    name(consumer),
                ),
                edge,
                consumer: consumer.clone(),
                provider: rule.provider.clone(),
                capability: rule.capability.clone(),
                kind: cap.kind,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology() -> Topology {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/topology.yaml"),
        )
        .unwrap();
        crate::registry::load::load_str("topology.yaml", &text)
            .unwrap()
            .topology
    }

    fn edge(consumer: &str, provider: &str, capability: &str) -> Edge {
        Edge {
            id: edge_id(consumer, provider, capability),
            consumer: consumer.into(),
            provider: provider.into(),
            capability: capability.into(),
            created_at: String::new(),
        }
    }

    #[test]
    fn candidates_are_the_rules_intersection_minus_made_edges_and_negotiations() {
        let t = topology();
        let all: Vec<String> = candidates(&t, &[]).into_iter().map(|c| c.edge).collect();
        // Every rule consumer that declares the capability, for every
        // provider that provides it; no negotiation.
        let mut expected = Vec::new();
        for r in &t.rules {
            if t.capability(&r.capability).unwrap().kind == CapabilityKind::Negotiation {
                continue;
            }
            for c in &r.consumers {
                expected.push(edge_id(c, &r.provider, &r.capability));
            }
        }
        assert_eq!(all, expected);
        assert!(all.iter().all(|e| !e.contains("negotiate")));
        let made = [edge("buyercorp", "vendorcorp", "orders.query")];
        let left: Vec<String> = candidates(&t, &made).into_iter().map(|c| c.edge).collect();
        assert_eq!(left.len(), all.len() - 1);
        assert!(!left.contains(&made[0].id));
    }

    #[test]
    fn a_consumer_that_does_not_declare_the_capability_is_not_suggested() {
        let mut t = topology();
        let helpdesk = t.systems.iter_mut().find(|s| s.id == "helpdesk").unwrap();
        helpdesk.consumes.clear();
        let all = candidates(&t, &[]);
        assert!(all.iter().all(|c| c.consumer != "helpdesk"), "{all:?}");
        assert!(all.iter().any(|c| c.consumer == "hub"));
    }
}
