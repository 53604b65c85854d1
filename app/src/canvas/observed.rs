//! Observed edges on the canvas (DESIGN.md §2): which ones the canvas
//! knows, and which of those it draws. Pure: no reactive or browser code,
//! tested without a browser.
//!
//! The hub decides which triples are observed edges
//! (`hub::traffic::observed`): `GET /api/traffic` lists them, and each
//! `HubEvent::Traffic` says which of the edges it carries are observed
//! edges now (an edge it carries but does not name is not any more: its
//! window emptied). The canvas keeps that set across topology loads and
//! draws each one whose ends are nodes of the drawn topology, unless an
//! established edge has the same id: that edge already shows the traffic.

use std::collections::{BTreeMap, HashSet};

use crate::dto::{EdgeTrafficView, EdgeView, NodeStatus, ObservedEdgeView, TopologyView};

/// The observed edges the canvas knows, by id.
pub type ObservedSet = BTreeMap<String, ObservedEdgeView>;

/// Applies a traffic event to `set`: the edges it names as observed are,
/// the other edges it carries are not. True when `set` changed.
pub fn after_event(
    set: &mut ObservedSet,
    edges: &[EdgeTrafficView],
    observed: Vec<ObservedEdgeView>,
) -> bool {
    let named: HashSet<&str> = observed.iter().map(|o| o.id.as_str()).collect();
    let mut changed = false;
    for e in edges {
        if !named.contains(e.edge.as_str()) {
            changed |= set.remove(&e.edge).is_some();
        }
    }
    for o in observed {
        if set.get(&o.id) != Some(&o) {
            set.insert(o.id.clone(), o);
            changed = true;
        }
    }
    changed
}

/// The set after a full read that started before the events that named
/// the ids in `newer`: the read's observed edges, except that for those
/// ids what `current` holds stands (the event is newer than the read).
pub fn after_load(
    current: &ObservedSet,
    loaded: Vec<ObservedEdgeView>,
    newer: &HashSet<String>,
) -> ObservedSet {
    let mut set: ObservedSet = loaded
        .into_iter()
        .filter(|o| !newer.contains(&o.id))
        .map(|o| (o.id.clone(), o))
        .collect();
    for id in newer {
        if let Some(o) = current.get(id) {
            set.insert(id.clone(), o.clone());
        }
    }
    set
}

/// The observed edges to draw over `view`, as edges (their kind from the
/// view's capabilities, their status left to the ends' health), in id
/// order: not an established edge's id, both ends nodes of the view, the
/// capability one it lists.
pub fn drawable(set: &ObservedSet, view: &TopologyView) -> Vec<EdgeView> {
    let established: HashSet<&str> = view.edges.iter().map(|e| e.id.as_str()).collect();
    let nodes: HashSet<&str> = view.nodes.iter().map(|n| n.id.as_str()).collect();
    set.values()
        .filter(|o| !established.contains(o.id.as_str()))
        .filter(|o| nodes.contains(o.consumer.as_str()) && nodes.contains(o.provider.as_str()))
        .filter_map(|o| {
            let kind = view.capability(&o.capability)?.kind;
            Some(EdgeView {
                id: o.id.clone(),
                consumer: o.consumer.clone(),
                provider: o.provider.clone(),
                capability: o.capability.clone(),
                kind,
                status: NodeStatus::Healthy,
                reason: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canvas::graph::tests::demo;
    use crate::dto::{edge_id, CapabilityKind, CapabilityView};

    fn o(c: &str, p: &str, cap: &str) -> ObservedEdgeView {
        ObservedEdgeView {
            id: edge_id(c, p, cap),
            consumer: c.into(),
            provider: p.into(),
            capability: cap.into(),
        }
    }

    fn t(edge: &str, calls: u32) -> EdgeTrafficView {
        EdgeTrafficView {
            edge: edge.into(),
            window_secs: 60,
            calls,
            failures: 0,
            last: None,
        }
    }

    #[test]
    fn events_add_observed_edges_and_drop_those_whose_window_emptied() {
        let mut set = ObservedSet::new();
        let a = o("buyercorp", "helpdesk", "ticket.classify");
        let b = o("helpdesk", "vendorcorp", "orders.query");
        assert!(after_event(
            &mut set,
            &[t(&a.id, 1), t(&b.id, 2)],
            vec![a.clone(), b.clone()]
        ));
        assert_eq!(set.len(), 2);
        // The same again: nothing changes.
        assert!(!after_event(&mut set, &[t(&a.id, 1)], vec![a.clone()]));
        // `a`'s window emptied: pushed with zero calls, not named.
        assert!(after_event(&mut set, &[t(&a.id, 0)], vec![]));
        assert_eq!(set.keys().collect::<Vec<_>>(), vec![&b.id]);
        // An event about other edges leaves `b` alone.
        assert!(!after_event(&mut set, &[t("hub->x:y", 3)], vec![]));
        assert!(set.contains_key(&b.id));
    }

    #[test]
    fn a_full_read_replaces_the_set_but_yields_to_newer_events() {
        let a = o("buyercorp", "helpdesk", "ticket.classify");
        let b = o("helpdesk", "vendorcorp", "orders.query");
        let c = o("hub", "vendorcorp", "orders.query");
        let current: ObservedSet = [(a.id.clone(), a.clone())].into();
        // The read lists b and c; an event since named a (observed) and c
        // (no longer).
        let newer: HashSet<String> = [a.id.clone(), c.id.clone()].into();
        let set = after_load(&current, vec![b.clone(), c.clone()], &newer);
        assert_eq!(set.keys().collect::<Vec<_>>(), vec![&a.id, &b.id]);
        let set = after_load(&set, vec![], &HashSet::new());
        assert!(set.is_empty());
    }

    #[test]
    fn an_established_edge_or_an_unknown_end_is_not_drawn_again() {
        let mut view = demo();
        view.edges
            .retain(|e| e.id != "buyercorp->helpdesk:ticket.classify");
        view.capabilities = [
            ("orders.query", CapabilityKind::DataShare),
            ("ticket.classify", CapabilityKind::Consult),
        ]
        .into_iter()
        .map(|(id, kind)| CapabilityView {
            id: id.into(),
            kind,
            description: String::new(),
            deadline_ms: 2000,
            input_grants: vec![],
        })
        .collect();
        let established = view.edges[0].clone();
        let set: ObservedSet = [
            o(
                &established.consumer,
                &established.provider,
                &established.capability,
            ),
            o("buyercorp", "helpdesk", "ticket.classify"),
            o("ghost", "helpdesk", "ticket.classify"),
            o("buyercorp", "helpdesk", "no.such.capability"),
        ]
        .into_iter()
        .map(|o| (o.id.clone(), o))
        .collect();
        let drawn = drawable(&set, &view);
        let ids: Vec<&str> = drawn.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, vec!["buyercorp->helpdesk:ticket.classify"]);
        assert_eq!(drawn[0].kind, CapabilityKind::Consult);
    }
}
