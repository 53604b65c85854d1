use std::collections::BTreeMap;

use super::*;
use crate::events::EventBus;
use crate::health::StatusBoard;
use crate::registry::Loaded;
use crate::store::edges::Edge;
use crate::web::bff::topology_view;
use app::dto::{edge_id, EdgeTrafficView, NodeStatus, ObservedEdgeView};
use exchange::reason::{NotConnected, ReasonCode};

fn loaded() -> Loaded {
    crate::registry::load::load_str(
        "config/topology.yaml",
        include_str!("../../../../config/topology.yaml"),
    )
    .expect("shipped topology is valid")
}

fn edge(consumer: &str, provider: &str, capability: &str) -> Edge {
    Edge {
        id: crate::registry::model::edge_id(consumer, provider, capability),
        consumer: consumer.into(),
        provider: provider.into(),
        capability: capability.into(),
        created_at: String::new(),
    }
}

fn view() -> TopologyView {
    let loaded = loaded();
    let board = StatusBoard::new(EventBus::new());
    board.record_probe(
        "vendorcorp",
        Err(NotConnected::new(
            ReasonCode::PeerUnreachable,
            "connection refused by vendorcorp at 10.0.0.7",
        )),
    );
    let edges = [
        edge("buyercorp", "vendorcorp", "orders.query"),
        edge("buyercorp", "helpdesk", "ticket.classify"),
        edge("hub", "helpdesk", "ticket.triage"),
    ];
    let positions = BTreeMap::from([
        ("vendorcorp".to_string(), (1.0, 2.0)),
        ("helpdesk".to_string(), (3.0, 4.0)),
    ]);
    topology_view(
        &loaded,
        &board,
        &edges,
        &positions,
        Some("topology.yaml:3: x".into()),
    )
}

#[test]
fn an_exchange_wide_person_sees_everything() {
    let v = view();
    assert_eq!(topology(v.clone(), &Scope::Exchange), v);
}

#[test]
fn a_member_sees_its_part_and_its_counterparts_as_names_and_health() {
    let v = topology(view(), &Scope::Member("vendorcorp".into()));
    // Its own node with its agents and datasources.
    assert!(v.nodes.iter().any(|n| n.id == "vendorcorp"));
    assert!(v
        .nodes
        .iter()
        .any(|n| n.id.starts_with("vendorcorp/") && n.system.as_deref() == Some("vendorcorp")));
    // Its counterparts by its rules: BuyerCorp and the hub; not Helpdesk
    // (nothing between them), nor anybody's agents.
    let ids: Vec<&str> = v.nodes.iter().map(|n| n.id.as_str()).collect();
    assert!(
        ids.contains(&"buyercorp") && ids.contains(&"hub"),
        "{ids:?}"
    );
    assert!(!ids.iter().any(|i| i.starts_with("helpdesk")), "{ids:?}");
    assert!(!ids.iter().any(|i| i.starts_with("buyercorp/")), "{ids:?}");
    let buyer = v
        .nodes
        .iter()
        .find(|n| n.id == "buyercorp")
        .expect("buyercorp");
    assert!(buyer.description.is_empty() && buyer.detail.is_none());
    assert!(
        buyer.provides.iter().all(|c| c.id.starts_with("orders.")),
        "only what it shares with vendorcorp: {:?}",
        buyer.provides
    );
    // Its own health, with the reason.
    let own = v.nodes.iter().find(|n| n.id == "vendorcorp").expect("own");
    assert_eq!(own.status, NodeStatus::Degraded);
    // Edges and rules: its own only.
    assert_eq!(v.edges.len(), 1);
    assert!(
        v.rules.iter().all(|r| r.provider == "vendorcorp"),
        "{:?}",
        v.rules
    );
    assert!(v.capabilities.iter().all(|c| c.id.starts_with("orders.")));
    assert_eq!(v.positions.len(), 1);
    assert!(v.reload_error.is_none());
}

#[test]
fn a_consumer_sees_the_rules_it_may_call_with_itself_as_the_only_consumer() {
    let v = topology(view(), &Scope::Member("helpdesk".into()));
    let budget = v
        .rules
        .iter()
        .find(|r| r.capability == "budget.consult")
        .expect("it may call budget.consult");
    assert_eq!(budget.consumers, vec!["helpdesk".to_string()]);
    let triage = v
        .rules
        .iter()
        .find(|r| r.capability == "ticket.triage")
        .expect("its own rule");
    assert!(triage.consumers.contains(&"buyercorp".to_string()));
    assert!(!v.nodes.iter().any(|n| n.id == "vendorcorp"));
}

#[test]
fn events_and_traffic_are_cut_to_the_part() {
    let t = loaded().topology;
    let scope = Scope::Member("helpdesk".into());
    let status = |system: &str| HubEvent::StatusChanged {
        system: system.into(),
        status: NodeStatus::Healthy,
        reason: None,
        detail: None,
    };
    assert!(event(&t, &scope, status("buyercorp")).is_some());
    assert!(event(&t, &scope, status("vendorcorp")).is_none());
    assert!(event(&t, &scope, HubEvent::InboxChanged { pending: 3 }).is_none());
    assert!(event(&t, &scope, HubEvent::TopologyChanged).is_some());
    let traffic = |edge: &str| EdgeTrafficView {
        edge: edge.into(),
        window_secs: 60,
        calls: 1,
        failures: 0,
        last: None,
    };
    let observed = |c: &str, p: &str| ObservedEdgeView {
        id: edge_id(c, p, "x"),
        consumer: c.into(),
        provider: p.into(),
        capability: "x".into(),
    };
    let ev = HubEvent::Traffic {
        edges: vec![
            traffic("buyercorp->helpdesk:ticket.classify"),
            traffic("buyercorp->vendorcorp:orders.query"),
        ],
        observed: vec![observed("buyercorp", "vendorcorp")],
    };
    match event(&t, &scope, ev) {
        Some(HubEvent::Traffic { edges, observed }) => {
            assert_eq!(edges.len(), 1);
            assert!(observed.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let only_others = HubEvent::Traffic {
        edges: vec![traffic("buyercorp->vendorcorp:orders.query")],
        observed: Vec::new(),
    };
    assert!(event(&t, &scope, only_others).is_none());
}
