//! The graph model and its layouts — the column layout, and the view's
//! layout taken over — pinned down on the demo topology (whose fixture
//! the other canvas tests draw too; the layered layout's own tests build
//! on these helpers).

use super::*;
use crate::dto::{edge_id, CapabilityKind, CapabilityRef, NodePosition, NodeStatus, RuleView};

pub(crate) fn node(id: &str, kind: NodeKind, system: Option<&str>) -> NodeView {
    NodeView::healthy(id, id, kind, system)
}

pub(crate) fn cap(id: &str, kind: CapabilityKind) -> CapabilityRef {
    CapabilityRef {
        id: id.into(),
        kind,
    }
}

pub(crate) fn edge(
    consumer: &str,
    provider: &str,
    capability: &str,
    kind: CapabilityKind,
) -> EdgeView {
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
        layout: Vec::new(),
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

fn spot(node: &str, x: f64, y: f64) -> NodePosition {
    NodePosition {
        node: node.into(),
        x,
        y,
    }
}

#[test]
fn the_views_layout_wins_and_the_roots_read_in_its_order() {
    let columns = GraphModel::build(&demo());
    let mut v = demo();
    // Providers first and the hub last, as a server's layout might say;
    // helpdesk is left out, and keeps its place in the column layout.
    v.layout = vec![
        spot("vendorcorp", 0.0, 0.0),
        spot("buyercorp", 540.0, 400.0),
        spot("hub", 1100.0, 10.0),
        spot("ghost", 5.0, 5.0),
    ];
    let m = GraphModel::build(&v);
    let at = |id: &str| m.layout.get(id).copied();
    assert_eq!(at("vendorcorp"), Some(Point { x: 0.0, y: 0.0 }));
    assert_eq!(at("buyercorp"), Some(Point { x: 540.0, y: 400.0 }));
    assert_eq!(at("hub"), Some(Point { x: 1100.0, y: 10.0 }));
    assert_eq!(at("helpdesk"), columns.layout.get("helpdesk").copied());
    assert_eq!(at("ghost"), None, "a node that is no root is not placed");
    // Reading order: column by column, top to bottom. Helpdesk keeps the
    // column layout's second column, above buyercorp's new spot.
    assert_eq!(at("helpdesk"), Some(Point { x: 540.0, y: 240.0 }));
    assert_eq!(m.roots, ["vendorcorp", "helpdesk", "buyercorp", "hub"]);
    // Indices follow the new order.
    assert_eq!(m.index_of("vendorcorp"), Some(0));
    assert_eq!(m.index_of("hub"), Some(3));
}

#[test]
fn a_layout_spot_that_is_not_a_number_is_ignored() {
    let columns = GraphModel::build(&demo());
    let mut v = demo();
    v.layout = vec![
        spot("vendorcorp", f64::NAN, 3.0),
        spot("hub", 0.0, f64::INFINITY),
    ];
    let m = GraphModel::build(&v);
    assert_eq!(m.layout, columns.layout);
    assert_eq!(m.roots, columns.roots);
}

#[test]
fn served_positions_still_override_the_views_layout() {
    let mut v = demo();
    v.layout = vec![spot("vendorcorp", 1080.0, 0.0)];
    let m = GraphModel::build(&v);
    let moved = BTreeMap::from([("vendorcorp".to_string(), Point { x: 7.0, y: 8.0 })]);
    let start = m.initial_positions(&moved);
    assert_eq!(start.get("vendorcorp"), Some(&Point { x: 7.0, y: 8.0 }));
    assert_eq!(start.len(), 4);
}
