//! The graph model and its layout, pinned down on the demo topology
//! (whose fixture the other canvas tests draw too).

use super::*;
use crate::dto::{edge_id, CapabilityKind, CapabilityRef, NodeStatus, RuleView};

fn node(id: &str, kind: NodeKind, system: Option<&str>) -> NodeView {
    NodeView::healthy(id, id, kind, system)
}

fn cap(id: &str, kind: CapabilityKind) -> CapabilityRef {
    CapabilityRef {
        id: id.into(),
        kind,
    }
}

fn edge(consumer: &str, provider: &str, capability: &str, kind: CapabilityKind) -> EdgeView {
    EdgeView {
        id: edge_id(consumer, provider, capability),
        consumer: consumer.into(),
        provider: provider.into(),
        capability: capability.into(),
        kind,
        status: NodeStatus::Healthy,
        reason: None,
    }
}

/// The demo topology (config/topology.yaml) as the hub serves it.
pub(crate) fn demo() -> TopologyView {
    use CapabilityKind::*;
    let mut hub = node("hub", NodeKind::Hub, None);
    hub.name = "Wall Street hub".into();
    let mut vendor = node("vendorcorp", NodeKind::System, None);
    vendor.name = "VendorCorp".into();
    vendor.provides = vec![cap("orders.query", DataShare)];
    let mut buyer = node("buyercorp", NodeKind::System, None);
    buyer.name = "BuyerCorp".into();
    buyer.provides = vec![cap("budget.consult", Consult)];
    buyer.consumes = vec![
        cap("orders.query", DataShare),
        cap("ticket.classify", Consult),
    ];
    let mut help = node("helpdesk", NodeKind::System, None);
    help.name = "Helpdesk".into();
    help.provides = vec![cap("ticket.classify", Consult)];
    help.consumes = vec![cap("budget.consult", Consult)];
    TopologyView {
        hub_id: "hub".into(),
        nodes: vec![
            hub,
            vendor,
            node(
                "vendorcorp/agent/data-steward",
                NodeKind::Agent,
                Some("vendorcorp"),
            ),
            node(
                "vendorcorp/datasource/orders-db",
                NodeKind::Datasource,
                Some("vendorcorp"),
            ),
            buyer,
            node(
                "buyercorp/datasource/budgets-db",
                NodeKind::Datasource,
                Some("buyercorp"),
            ),
            node(
                "buyercorp/agent/finance-analyst",
                NodeKind::Agent,
                Some("buyercorp"),
            ),
            help,
            node(
                "helpdesk/agent/triage-agent",
                NodeKind::Agent,
                Some("helpdesk"),
            ),
            node(
                "helpdesk/datasource/tickets-db",
                NodeKind::Datasource,
                Some("helpdesk"),
            ),
        ],
        edges: vec![
            edge("buyercorp", "vendorcorp", "orders.query", DataShare),
            edge("hub", "vendorcorp", "orders.query", DataShare),
            edge("hub", "buyercorp", "budget.consult", Consult),
            edge("helpdesk", "buyercorp", "budget.consult", Consult),
            edge("hub", "helpdesk", "ticket.classify", Consult),
            edge("buyercorp", "helpdesk", "ticket.classify", Consult),
        ],
        rules: vec![RuleView {
            capability: "orders.query".into(),
            kind: DataShare,
            provider: "vendorcorp".into(),
            consumers: vec!["buyercorp".into(), "hub".into()],
        }],
        capabilities: vec![],
        reload_error: None,
        positions: Vec::new(),
        digest: String::new(),
    }
}

#[test]
fn same_view_same_layout() {
    let a = GraphModel::build(&demo());
    let b = GraphModel::build(&demo());
    assert_eq!(a.layout, b.layout);
    let mut shuffled = demo();
    shuffled.nodes.reverse();
    shuffled.edges.reverse();
    assert_eq!(GraphModel::build(&shuffled).layout, a.layout);
}

#[test]
fn consumers_left_providers_right() {
    let m = GraphModel::build(&demo());
    let x = |id: &str| m.layout.get(id).map(|p| p.x).unwrap_or(f64::NAN);
    assert!(x("hub") < x("buyercorp"));
    assert_eq!(x("buyercorp"), x("helpdesk"));
    assert!(x("buyercorp") < x("vendorcorp"));
    let y = |id: &str| m.layout.get(id).map(|p| p.y).unwrap_or(f64::NAN);
    assert!(
        y("buyercorp") < y("helpdesk"),
        "sorted by id within a column"
    );
    assert_eq!(m.roots, ["hub", "buyercorp", "helpdesk", "vendorcorp"]);
}

#[test]
fn children_hang_under_their_system_agents_first() {
    let m = GraphModel::build(&demo());
    assert_eq!(m.roots.len(), 4);
    assert_eq!(
        m.children.get("buyercorp").cloned().unwrap_or_default(),
        vec![
            "buyercorp/agent/finance-analyst".to_string(),
            "buyercorp/datasource/budgets-db".to_string()
        ]
    );
    assert_eq!(m.root_of("helpdesk/agent/triage-agent"), "helpdesk");
}

#[test]
fn blocks_in_a_column_do_not_overlap() {
    let m = GraphModel::build(&demo());
    let (Some(b), Some(h)) = (m.layout.get("buyercorp"), m.layout.get("helpdesk")) else {
        panic!("both laid out");
    };
    assert!(b.y + m.block_height("buyercorp") + ROW_GAP <= h.y + 0.001);
}

#[test]
fn edges_with_a_missing_end_are_dropped() {
    let mut v = demo();
    v.edges.push(edge(
        "ghost",
        "vendorcorp",
        "orders.query",
        CapabilityKind::DataShare,
    ));
    assert_eq!(GraphModel::build(&v).edges.len(), 6);
}

#[test]
fn tall_columns_wrap() {
    let mut v = demo();
    for i in 0..40 {
        let mut n = node(&format!("p{i:02}"), NodeKind::System, None);
        n.provides = vec![cap("x", CapabilityKind::Consult)];
        v.nodes.push(n);
    }
    let m = GraphModel::build(&v);
    let b = m.bounds(&m.layout);
    assert!(b.h <= MAX_COLUMN_H + 1.0, "height {}", b.h);
    assert!(b.w > 3.0 * ROOT_W);
}

#[test]
fn hub_alone_is_not_a_system() {
    let mut v = demo();
    v.nodes.retain(|n| n.node_type == NodeKind::Hub);
    assert!(!GraphModel::has_systems(&v));
    assert!(GraphModel::has_systems(&demo()));
}
