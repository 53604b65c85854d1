//! The canvas view of the registry: `GET /api/topology` and the page's
//! first render answer exactly this.
//!
//! Built field by field into `app::dto` types: nothing from the registry
//! reaches a browser unless a DTO field was written for it, so tokens,
//! token env var names, base URLs and IP allowlists have nowhere to go.

use std::collections::BTreeMap;

use app::dto::{
    CapabilityRef, CapabilityView, CardSignatureView, EdgeView, InputGrant, NodeKind, NodePosition,
    NodeView, RuleView, TopologyView,
};

use crate::edge_calls::dto_kind;
use crate::health::{PeerStatus, StatusBoard};
use crate::registry::model::Topology;
use crate::registry::Loaded;
use crate::store::edges::Edge;
use exchange::jws::CardSignature;

/// Builds the canvas view of `loaded`, with each system's health from
/// `board`, the `established` edges (already filtered to those a rule
/// allows) and the stored `positions` of nodes that exist. Only
/// whitelisted facts are copied.
pub fn topology_view(
    loaded: &Loaded,
    board: &StatusBoard,
    established: &[Edge],
    positions: &BTreeMap<String, (f64, f64)>,
    reload_error: Option<String>,
) -> TopologyView {
    let t: &Topology = &loaded.topology;
    let kind_of = |cap: &str| t.capability(cap).map(|c| dto_kind(c.kind));
    let refs = |caps: &[String]| -> Vec<CapabilityRef> {
        caps.iter()
            .filter_map(|c| {
                kind_of(c).map(|kind| CapabilityRef {
                    id: c.clone(),
                    kind,
                })
            })
            .collect()
    };

    let mut nodes = Vec::new();
    let hub_consumes: Vec<String> = t
        .rules
        .iter()
        .filter(|r| r.consumers.iter().any(|c| c == &t.hub.id))
        .map(|r| r.capability.clone())
        .fold(Vec::new(), |mut acc, c| {
            if !acc.contains(&c) {
                acc.push(c);
            }
            acc
        });
    nodes.push(NodeView {
        id: t.hub.id.clone(),
        name: "Wall Street hub".into(),
        node_type: NodeKind::Hub,
        system: None,
        description: "The exchange hub.".into(),
        status: app::dto::NodeStatus::Healthy,
        reason: None,
        detail: None,
        since: None,
        provides: Vec::new(),
        consumes: refs(&hub_consumes),
        card_signature: CardSignatureView::Unsigned,
    });
    for s in &t.systems {
        let status = board.status(&s.id);
        let (node_status, reason, detail, since) = status_fields(&status);
        nodes.push(NodeView {
            id: s.id.clone(),
            name: s.name.clone(),
            node_type: NodeKind::System,
            system: None,
            description: String::new(),
            status: node_status,
            reason,
            detail: detail.clone(),
            since: since.clone(),
            provides: refs(&s.provides),
            consumes: refs(&s.consumes),
            card_signature: board.card(&s.id).map_or(CardSignatureView::Unsigned, |c| {
                match c.signature {
                    CardSignature::Unsigned => CardSignatureView::Unsigned,
                    CardSignature::Verified { .. } => CardSignatureView::Verified,
                    CardSignature::Failed { .. } => CardSignatureView::Failed,
                }
            }),
        });
        let children = s
            .agents
            .iter()
            .map(|a| (NodeKind::Agent, "agent", &a.id, &a.name, &a.description))
            .chain(s.datasources.iter().map(|d| {
                (
                    NodeKind::Datasource,
                    "datasource",
                    &d.id,
                    &d.name,
                    &d.description,
                )
            }));
        // A datasource of a system with an MCP data plane shows the plane's
        // own identity check: the agent may answer while the plane is down.
        let plane = s
            .data_plane
            .as_ref()
            .and_then(|_| board.plane_status(&s.id))
            .map(|p| status_fields(&p));
        for (node_type, segment, id, name, description) in children {
            let (node_status, reason, detail, since) = match (&plane, node_type) {
                (Some(p), NodeKind::Datasource) => p.clone(),
                _ => (node_status, reason, detail.clone(), since.clone()),
            };
            nodes.push(NodeView {
                id: format!("{}/{segment}/{id}", s.id),
                name: name.clone(),
                node_type,
                system: Some(s.id.clone()),
                description: description.clone(),
                status: node_status,
                reason,
                detail: detail.clone(),
                since: since.clone(),
                provides: Vec::new(),
                consumes: Vec::new(),
                card_signature: CardSignatureView::Unsigned,
            });
        }
    }

    let edges = established
        .iter()
        .filter_map(|e| edge_view(t, board, e))
        .collect();
    let mut rules = Vec::new();
    for r in &t.rules {
        let Some(kind) = kind_of(&r.capability) else {
            continue;
        };
        rules.push(RuleView {
            capability: r.capability.clone(),
            kind,
            provider: r.provider.clone(),
            consumers: r.consumers.clone(),
        });
    }

    let capabilities = t
        .capabilities
        .iter()
        .map(|c| CapabilityView {
            id: c.id.clone(),
            kind: dto_kind(c.kind),
            description: c.description.clone(),
            deadline_ms: t.deadline_ms(&c.id),
            input_grants: c
                .input_schema
                .as_ref()
                .map(crate::contract::input_grants)
                .unwrap_or_default()
                .into_iter()
                .map(|(field, allowed)| InputGrant { field, allowed })
                .collect(),
        })
        .collect();

    let positions = nodes
        .iter()
        .filter_map(|n| {
            positions.get(&n.id).map(|(x, y)| NodePosition {
                node: n.id.clone(),
                x: *x,
                y: *y,
            })
        })
        .collect();

    TopologyView {
        hub_id: t.hub.id.clone(),
        nodes,
        edges,
        rules,
        capabilities,
        reload_error,
        positions,
        layout: Vec::new(),
        digest: loaded.digest.clone(),
    }
}

/// The canvas view of one established edge, its status that of its
/// provider; `None` when its capability is no longer in the registry.
pub fn edge_view(t: &Topology, board: &StatusBoard, edge: &Edge) -> Option<EdgeView> {
    let kind = dto_kind(t.capability(&edge.capability)?.kind);
    let provider_status = board.status(&edge.provider);
    Some(EdgeView {
        id: edge.id.clone(),
        consumer: edge.consumer.clone(),
        provider: edge.provider.clone(),
        capability: edge.capability.clone(),
        kind,
        status: provider_status.node_status(),
        reason: provider_status.reason(),
    })
}

type StatusFields = (
    app::dto::NodeStatus,
    Option<app::dto::ReasonCode>,
    Option<String>,
    Option<String>,
);

fn status_fields(status: &PeerStatus) -> StatusFields {
    let since = match status {
        PeerStatus::Degraded { since, .. } => {
            Some(since.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        }
        _ => None,
    };
    (
        status.node_status(),
        status.reason(),
        status.detail().map(str::to_string),
        since,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventBus;
    use exchange::reason::{NotConnected, ReasonCode};

    fn edge(consumer: &str, provider: &str, capability: &str) -> Edge {
        Edge {
            id: crate::registry::model::edge_id(consumer, provider, capability),
            consumer: consumer.into(),
            provider: provider.into(),
            capability: capability.into(),
            created_at: String::new(),
        }
    }

    fn loaded() -> Loaded {
        crate::registry::load::load_str(
            "config/topology.yaml",
            include_str!("../../../../config/topology.yaml"),
        )
        .expect("shipped topology is valid")
    }

    #[test]
    fn the_view_leaks_no_secret_or_internal_address() {
        let loaded = loaded();
        let board = StatusBoard::new(EventBus::new());
        board.record_probe(
            "vendorcorp",
            Err(NotConnected::new(
                ReasonCode::PeerUnreachable,
                "connection refused by vendorcorp",
            )),
        );
        let edges = [edge("buyercorp", "vendorcorp", "orders.query")];
        let view = topology_view(&loaded, &board, &edges, &BTreeMap::new(), None);
        let json = serde_json::to_string(&view).expect("serialises");
        let mut forbidden: Vec<String> = Vec::new();
        for s in &loaded.topology.systems {
            forbidden.push(s.token_env.clone());
            forbidden.push(s.base_url.clone());
            forbidden.push(s.base_url.trim_start_matches("http://").to_string());
            for net in &s.ip_allowlist {
                forbidden.push(net.to_string());
                forbidden.push(net.addr().to_string());
            }
        }
        forbidden.extend([
            "WS_TOKEN".into(),
            "token".into(),
            "base_url".into(),
            "allowlist".into(),
        ]);
        for needle in &forbidden {
            assert!(
                !json.contains(needle.as_str()),
                "view leaks {needle:?}: {json}"
            );
        }
        // ... while it does carry what the canvas needs.
        assert!(json.contains("\"PEER_UNREACHABLE\""));
        assert!(json.contains("orders.query"));
    }

    #[test]
    fn nodes_edges_and_status_follow_the_registry_and_board() {
        let loaded = loaded();
        let board = StatusBoard::new(EventBus::new());
        board.record_probe("buyercorp", Ok(()));
        board.record_probe(
            "helpdesk",
            Err(NotConnected::new(ReasonCode::Timeout, "slow")),
        );
        let edges = [
            edge("buyercorp", "vendorcorp", "orders.query"),
            edge("buyercorp", "helpdesk", "ticket.classify"),
        ];
        let positions = BTreeMap::from([
            ("vendorcorp".to_string(), (1.0, 2.0)),
            ("gone".to_string(), (3.0, 4.0)),
        ]);
        let view = topology_view(
            &loaded,
            &board,
            &edges,
            &positions,
            Some("bad reload".into()),
        );
        let node = |id: &str| view.nodes.iter().find(|n| n.id == id).cloned().expect(id);
        assert_eq!(node("buyercorp").status, app::dto::NodeStatus::Healthy);
        assert_eq!(node("vendorcorp").status, app::dto::NodeStatus::Unknown);
        assert_eq!(node("helpdesk").reason, Some(ReasonCode::Timeout));
        let triage = node("helpdesk/agent/triage-agent");
        assert_eq!(triage.system.as_deref(), Some("helpdesk"));
        assert_eq!(triage.status, app::dto::NodeStatus::Degraded);
        assert_eq!(
            node("vendorcorp/datasource/orders-db").node_type,
            NodeKind::Datasource
        );
        assert_eq!(node("hub").node_type, NodeKind::Hub);
        // The established edges, not one per rule.
        assert_eq!(view.edges.len(), 2);
        // Positions of nodes that exist only.
        assert_eq!(
            view.positions,
            vec![NodePosition {
                node: "vendorcorp".into(),
                x: 1.0,
                y: 2.0
            }]
        );
        let e = view
            .edges
            .iter()
            .find(|e| e.id == "buyercorp->helpdesk:ticket.classify")
            .expect("edge");
        assert_eq!(
            (e.status, e.reason),
            (app::dto::NodeStatus::Degraded, Some(ReasonCode::Timeout))
        );
        assert_eq!(view.reload_error.as_deref(), Some("bad reload"));
        assert_eq!(view.rules.len(), 5);
    }
}
