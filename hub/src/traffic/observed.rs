//! Observed edges (DESIGN.md §2): which of the triples that crossed the
//! hub the canvas draws as edges of their own, apart from the edges an
//! operator established.
//!
//! A (caller, provider, capability) is an observed edge while the whole
//! hub (every replica, summed as for the labels) counts at least one call
//! on it in the window, answered or refused, and the current topology
//! knows all three ids (a label that is `unknown` is never drawn: its ends
//! are no node). The hub is a node, so its own calls (a drawer's query or
//! consult, its agents' tools) are observed edges too. When the window
//! empties, the publisher's last push of the edge (count zero) is not
//! named as observed, and the canvas drops it.
//!
//! Whether an established edge already draws the same id is the canvas's
//! to say (it knows what it drew; an edge made or removed there does not
//! wait for the next call): the established edge wins and shows the
//! traffic as its label does.

use app::dto::{EdgeTrafficView, HubEvent, ObservedEdgeView};

use super::Labels;
use crate::registry::model::Topology;

/// The observed edges among `edges` (views as the whole hub counted
/// them), in their order.
pub fn observed(topology: &Topology, edges: &[EdgeTrafficView]) -> Vec<ObservedEdgeView> {
    edges
        .iter()
        .filter(|v| v.calls > 0)
        .filter_map(|v| {
            let l = Labels::of_edge_id(topology, &v.edge)?;
            Some(ObservedEdgeView {
                id: v.edge.clone(),
                consumer: l.caller,
                provider: l.provider,
                capability: l.capability,
            })
        })
        .collect()
}

/// The traffic event for `edges`: their traffic, and which of them are
/// observed edges now.
pub fn event(topology: &Topology, edges: Vec<EdgeTrafficView>) -> HubEvent {
    let observed = observed(topology, &edges);
    HubEvent::Traffic { edges, observed }
}

#[cfg(test)]
#[path = "observed_tests.rs"]
mod tests;
