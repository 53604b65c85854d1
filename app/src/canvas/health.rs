//! Health as the canvas draws it: a node's or edge's status, and how the
//! live channel's pushed statuses combine with the served ones.
//!
//! Pure: plain data and functions of it, so the rules (a newer live status
//! wins, a degraded end greys an edge) are tested without a browser.

use std::collections::HashMap;

use crate::dto::{EdgeView, NodeStatus, NodeView, ReasonCode};

/// Health of a node or edge as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Health {
    /// Healthy, degraded or not yet probed.
    pub status: NodeStatus,
    /// Why it is degraded.
    pub reason: Option<ReasonCode>,
    /// Operator-facing detail.
    pub detail: Option<String>,
    /// Since when (RFC 3339).
    pub since: Option<String>,
}

impl Health {
    /// The health a node was served with.
    pub fn of_node(node: &NodeView) -> Self {
        Health {
            status: node.status,
            reason: node.reason,
            detail: node.detail.clone(),
            since: node.since.clone(),
        }
    }

    /// The health an edge was served with.
    pub fn of_edge(edge: &EdgeView) -> Self {
        Health {
            status: edge.status,
            reason: edge.reason,
            detail: None,
            since: None,
        }
    }

    /// Is it drawn greyed?
    pub fn is_degraded(&self) -> bool {
        self.status == NodeStatus::Degraded
    }

    /// One word for labels and CSS classes.
    pub fn word(&self) -> &'static str {
        match self.status {
            NodeStatus::Healthy => "healthy",
            NodeStatus::Degraded => "degraded",
            NodeStatus::Unknown => "unknown",
        }
    }

    /// What the status badge says: the reason code when degraded, since
    /// that is what an operator acts on.
    pub fn badge(&self) -> String {
        match (self.status, self.reason) {
            (NodeStatus::Degraded, Some(reason)) => reason.as_str().to_string(),
            (NodeStatus::Degraded, None) => "degraded".into(),
            (NodeStatus::Healthy, _) => "healthy".into(),
            (NodeStatus::Unknown, _) => "not probed yet".into(),
        }
    }

    /// The spoken form: "healthy" or "degraded, PEER_UNREACHABLE".
    pub fn spoken(&self) -> String {
        match (self.status, self.reason) {
            (NodeStatus::Degraded, Some(reason)) => format!("degraded, {reason}"),
            (NodeStatus::Unknown, _) => "not probed yet".into(),
            _ => self.word().into(),
        }
    }
}

/// A status pushed by the live channel, numbered in arrival order.
#[derive(Debug, Clone, PartialEq)]
pub struct LivePatch {
    /// Arrival number (1, 2, …); compared with the `seq` of the topology
    /// load the graph was drawn from (`state::TopologyLoad`).
    pub seq: u64,
    /// The pushed health.
    pub health: Health,
}

/// Health of a system: the live status if it is newer than the load the
/// graph was drawn from, else the served one.
pub fn effective_health(
    live: &HashMap<String, LivePatch>,
    load_seq: u64,
    node: Option<&NodeView>,
    system: &str,
) -> (Health, bool) {
    match live.get(system).filter(|p| p.seq > load_seq) {
        Some(p) => (p.health.clone(), true),
        None => (
            node.map(Health::of_node).unwrap_or(Health {
                status: NodeStatus::Unknown,
                reason: None,
                detail: None,
                since: None,
            }),
            false,
        ),
    }
}

/// Health of an edge from its two ends: a degraded provider (or consumer)
/// greys the edge with its reason. The served edge status stands for what
/// only the hub knows (a failed last call) until a live status of the
/// provider supersedes it.
pub fn edge_health(edge: &EdgeView, provider: (Health, bool), consumer: (Health, bool)) -> Health {
    let (p, p_live) = provider;
    let (c, _) = consumer;
    if p.is_degraded() {
        return Health {
            detail: None,
            since: None,
            ..p
        };
    }
    if c.is_degraded() {
        return Health {
            detail: None,
            since: None,
            ..c
        };
    }
    if !p_live && edge.status != NodeStatus::Healthy {
        return Health::of_edge(edge);
    }
    Health {
        status: p.status,
        reason: None,
        detail: None,
        since: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dto::CapabilityKind;

    fn h(status: NodeStatus, reason: Option<ReasonCode>) -> Health {
        Health {
            status,
            reason,
            detail: None,
            since: None,
        }
    }

    fn edge() -> EdgeView {
        EdgeView {
            id: "b->v:orders.query".into(),
            consumer: "b".into(),
            provider: "v".into(),
            capability: "orders.query".into(),
            kind: CapabilityKind::DataShare,
            status: NodeStatus::Healthy,
            reason: None,
        }
    }

    #[test]
    fn newer_live_status_wins_older_gives_way() {
        let mut live = HashMap::new();
        live.insert(
            "v".to_string(),
            LivePatch {
                seq: 3,
                health: h(NodeStatus::Degraded, Some(ReasonCode::Timeout)),
            },
        );
        assert!(effective_health(&live, 2, None, "v").0.is_degraded());
        assert!(!effective_health(&live, 3, None, "v").0.is_degraded());
    }

    #[test]
    fn degraded_end_greys_the_edge_with_its_reason() {
        let bad = (
            h(NodeStatus::Degraded, Some(ReasonCode::PeerUnreachable)),
            true,
        );
        let ok = (h(NodeStatus::Healthy, None), false);
        let e = edge_health(&edge(), bad.clone(), ok.clone());
        assert_eq!(e.reason, Some(ReasonCode::PeerUnreachable));
        assert!(edge_health(&edge(), ok.clone(), bad).is_degraded());
        assert!(!edge_health(&edge(), ok.clone(), ok).is_degraded());
    }

    #[test]
    fn badge_says_the_reason() {
        let d = h(NodeStatus::Degraded, Some(ReasonCode::PeerUnreachable));
        assert_eq!(d.badge(), "PEER_UNREACHABLE");
        assert_eq!(d.spoken(), "degraded, PEER_UNREACHABLE");
        assert_eq!(h(NodeStatus::Healthy, None).badge(), "healthy");
    }
}
