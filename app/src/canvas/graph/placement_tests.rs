//! Label placement pinned down: on the demo with observed edges both ways
//! between two systems, on the benchmark's ring of 100 systems, on shapes
//! made to leave a label little or no room, and the screen half (labels
//! under the canvas's controls).

use std::collections::BTreeMap;

use super::*;
use crate::canvas::graph::tests::demo;
use crate::canvas::graph::{lanes, GraphModel, ObservedEdge};
use crate::dto::{
    edge_id, CapabilityKind, CapabilityRef, EdgeView, NodeKind, NodeStatus, NodeView,
};

fn edge(consumer: &str, provider: &str, capability: &str) -> EdgeView {
    EdgeView {
        id: edge_id(consumer, provider, capability),
        consumer: consumer.into(),
        provider: provider.into(),
        capability: capability.into(),
        kind: CapabilityKind::Consult,
        status: NodeStatus::Healthy,
        reason: None,
    }
}

/// Every label of a scene: the established edges' and the observed
/// edges', as the canvas places them (observed ones after, around the
/// established ones).
struct Scene {
    model: GraphModel,
    positions: BTreeMap<String, Point>,
    /// (edge id, full text, placement)
    labels: Vec<(String, String, Placed)>,
}

fn scene(view: &crate::dto::TopologyView, observed: &[EdgeView]) -> Scene {
    let model = GraphModel::build(view);
    let positions = model.layout.clone();
    let routes = model.edge_routes(&positions, None);
    let mut labels: Vec<(String, String, Placed)> = routes
        .iter()
        .zip(&model.edges)
        .filter_map(|(g, e)| {
            Some((
                e.id.clone(),
                e.capability.clone(),
                g.as_ref()?.label.clone(),
            ))
        })
        .collect();
    let taken: Vec<Rect> = labels.iter().filter_map(|(_, _, p)| p.rect).collect();
    let lanes = lanes(observed, |id| model.root_of(id));
    let inputs: Vec<ObservedEdge<'_>> = observed
        .iter()
        .zip(&lanes)
        .map(|(edge, &lane)| ObservedEdge {
            edge,
            lane,
            badge: None,
        })
        .collect();
    let arcs = model.observed_routes(&positions, &inputs, &taken);
    for (g, e) in arcs.iter().zip(observed) {
        let Some(g) = g else {
            panic!("{} has no arc", e.id);
        };
        labels.push((e.id.clone(), e.capability.clone(), g.label.clone()));
    }
    Scene {
        model,
        positions,
        labels,
    }
}

/// No drawn label meets a block or another label; every cut is a prefix
/// of its text ending in "…", shorter than the whole.
fn check(s: &Scene) {
    let blocks: Vec<Rect> = s
        .model
        .root_blocks(&s.positions)
        .into_iter()
        .flatten()
        .collect();
    let drawn: Vec<(&str, Rect)> = s
        .labels
        .iter()
        .filter_map(|(id, _, p)| Some((id.as_str(), p.rect?)))
        .collect();
    for (id, r) in &drawn {
        for b in &blocks {
            assert!(!r.intersects(*b), "{id}'s label {r:?} lies on block {b:?}");
        }
    }
    for (i, (a, ra)) in drawn.iter().enumerate() {
        for (b, rb) in &drawn[i + 1..] {
            assert!(!ra.intersects(*rb), "{a} {ra:?} and {b} {rb:?} overlap");
        }
    }
    for (id, full, p) in &s.labels {
        match &p.text {
            LabelText::Whole => assert!(p.rect.is_some(), "{id}"),
            LabelText::Short(cut) => {
                assert!(p.rect.is_some(), "{id}");
                let prefix = cut.strip_suffix(ELLIPSIS);
                assert!(
                    prefix.is_some_and(|pre| !pre.is_empty() && full.starts_with(pre)),
                    "{id}: {cut} is no prefix of {full} and an ellipsis"
                );
                assert!(text_cells(cut) < text_cells(full), "{id}: {cut}");
            }
            LabelText::Hidden => assert!(p.rect.is_none(), "{id}"),
        }
    }
}

/// How many labels end whole, short and not drawn.
fn counts(s: &Scene) -> (usize, usize, usize) {
    let n = |w: &str| {
        s.labels
            .iter()
            .filter(|(_, _, p)| p.text.word() == w)
            .count()
    };
    (n("whole"), n("short"), n("none"))
}

#[test]
fn the_demo_with_observed_edges_both_ways_draws_every_label_whole_apart() {
    let both_ways = [
        edge("buyercorp", "helpdesk", "ticket.triage"),
        edge("helpdesk", "buyercorp", "budget.review"),
    ];
    let s = scene(&demo(), &both_ways);
    check(&s);
    assert_eq!(counts(&s), (8, 0, 0), "{:?}", s.labels);
    // A second capability beside BuyerCorp's orders.query: parallel lines,
    // their labels apart too.
    let mut view = demo();
    view.edges
        .push(edge("buyercorp", "vendorcorp", "orders.negotiate"));
    let s = scene(&view, &both_ways);
    check(&s);
    for id in [
        "buyercorp->vendorcorp:orders.query",
        "buyercorp->vendorcorp:orders.negotiate",
    ] {
        let text = s.labels.iter().find(|(i, _, _)| i == id).map(|l| &l.2.text);
        assert_eq!(text, Some(&LabelText::Whole), "{id}");
    }
    assert_eq!(counts(&s).2, 0, "every label drawn: {:?}", s.labels);
}

#[test]
fn the_stacks_canvas_keeps_observed_labels_apart_both_ways() {
    // The stack's two established edges, and calls observed both ways
    // between BuyerCorp and Helpdesk (once their labels and rate lines
    // sat on one spot) and a refused one.
    let mut view = demo();
    view.edges.retain(|e| {
        e.id == "buyercorp->vendorcorp:orders.query" || e.id == "hub->helpdesk:ticket.classify"
    });
    let observed = [
        edge("buyercorp", "helpdesk", "ticket.classify"),
        edge("helpdesk", "buyercorp", "budget.consult"),
        edge("helpdesk", "vendorcorp", "orders.query"),
    ];
    let s = scene(&view, &observed);
    check(&s);
    assert_eq!(counts(&s), (5, 0, 0), "{:?}", s.labels);
    // The two arcs between BuyerCorp and Helpdesk take two lanes, and
    // their labels lie apart by more than a line of text.
    let at = |id: &str| {
        s.labels
            .iter()
            .find(|(i, _, _)| i == id)
            .map(|(_, _, p)| p.centre)
            .unwrap_or_default()
    };
    let (a, b) = (
        at("buyercorp->helpdesk:ticket.classify"),
        at("helpdesk->buyercorp:budget.consult"),
    );
    assert!(
        (a.x - b.x).abs() > 20.0 || (a.y - b.y).abs() > 20.0,
        "{a:?} {b:?}"
    );
}

/// The benchmark's topology: `n` systems with two agents and two
/// datasources each, system i providing one capability to its 10
/// successors.
fn ring(n: usize) -> crate::dto::TopologyView {
    let mut view = demo();
    view.nodes.retain(|n| n.node_type == NodeKind::Hub);
    view.edges.clear();
    let sys = |i: usize| format!("sys{i:03}");
    let verb = |i: usize| {
        if i.is_multiple_of(2) {
            "query"
        } else {
            "consult"
        }
    };
    let cap = |i: usize| format!("cap{i:03}.{}", verb(i));
    for i in 0..n {
        let id = sys(i);
        let mut node = NodeView::healthy(&id, &format!("System {i:03}"), NodeKind::System, None);
        node.provides = vec![CapabilityRef {
            id: cap(i),
            kind: CapabilityKind::Consult,
        }];
        node.consumes = (1..=10)
            .map(|k| CapabilityRef {
                id: cap((i + n - k) % n),
                kind: CapabilityKind::Consult,
            })
            .collect();
        view.nodes.push(node);
        for child in ["agent/a1", "agent/a2", "datasource/d1", "datasource/d2"] {
            let kind = if child.starts_with("agent") {
                NodeKind::Agent
            } else {
                NodeKind::Datasource
            };
            let cid = format!("{id}/{child}");
            view.nodes
                .push(NodeView::healthy(&cid, &cid, kind, Some(id.as_str())));
        }
        for k in 1..=10 {
            view.edges.push(edge(&sys((i + k) % n), &id, &cap(i)));
        }
    }
    view
}

#[test]
fn a_ring_of_a_hundred_systems_places_its_thousand_labels_apart() {
    let s = scene(&ring(100), &[]);
    assert_eq!(s.labels.len(), 1000);
    check(&s);
    let (whole, short, none) = counts(&s);
    eprintln!("ring of 100: {whole} whole, {short} short, {none} not drawn");
    assert!(whole + short >= 400, "{whole} whole, {short} short");
}

#[test]
fn the_same_labels_in_any_order_land_on_the_same_spots() {
    let s = scene(&ring(30), &[]);
    let again = scene(&ring(30), &[]);
    assert_eq!(s.labels, again.labels);
    // Given in the reverse order, every label still lands where it did.
    let mut view = ring(30);
    view.edges.reverse();
    let reversed = scene(&view, &[]);
    let by_id = |s: &Scene| {
        s.labels
            .iter()
            .map(|(id, _, p)| (id.clone(), p.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(by_id(&s), by_id(&reversed));
}

/// A straight route from `x0` to `x1` at height 50, its run all of it.
fn straight(x0: f64, x1: f64) -> PathShape {
    let p = |x: f64| Point { x, y: 50.0 };
    PathShape::Route {
        start: p(x0),
        c1: p(x0),
        c2: p(x0),
        run: p(x0),
        end: p(x1),
    }
}

fn card(x: f64) -> Rect {
    Rect {
        x,
        y: 0.0,
        w: 240.0,
        h: 112.0,
    }
}

fn input<'a>(key: &'a str, shape: PathShape, text: &'a str) -> LabelInput<'a> {
    LabelInput {
        key,
        shape,
        text,
        badge: None,
        look: Look::Established,
        traffic: true,
    }
}

#[test]
fn a_label_with_little_room_is_cut_and_with_none_not_drawn() {
    let long = "a.capability.identifier.too.long.for.here";
    // 200 px between two cards: the whole text does not fit, a cut does.
    let narrow = [input("a", straight(240.0, 440.0), long)];
    let placed = place_labels(&narrow, &[card(0.0), card(440.0)], &[]);
    let Some(p) = placed.first() else {
        panic!("one label");
    };
    let LabelText::Short(cut) = &p.text else {
        panic!("cut: {p:?}");
    };
    assert!(cut.ends_with(ELLIPSIS), "{cut}");
    assert!(long.starts_with(cut.trim_end_matches(ELLIPSIS)), "{cut}");
    let Some(r) = p.rect else {
        panic!("drawn");
    };
    assert!(r.x > 240.0 && r.x + r.w < 440.0, "{r:?}");
    assert!(p.line_cells >= 10, "its traffic line has room: {p:?}");
    // 60 px: not even three characters fit. Not drawn, no box.
    let none = [input("a", straight(240.0, 300.0), long)];
    let placed = place_labels(&none, &[card(0.0), card(300.0)], &[]);
    assert_eq!(placed.first().map(|p| &p.text), Some(&LabelText::Hidden));
    assert_eq!(placed.first().and_then(|p| p.rect), None);
    // A label too long for the room but another already there: the
    // second is cut or left out, never laid over the first.
    let two = [
        input("a", straight(240.0, 640.0), "first.label"),
        input("b", straight(240.0, 640.0), "second.label"),
    ];
    let placed = place_labels(&two, &[card(0.0), card(640.0)], &[]);
    if let [a, b] = placed.as_slice() {
        assert_eq!(a.text, LabelText::Whole);
        if let (Some(ra), Some(rb)) = (a.rect, b.rect) {
            assert!(!ra.intersects(rb), "{ra:?} {rb:?}");
        }
    }
}

#[test]
fn a_dragged_label_keeps_its_spot_and_box_size() {
    let shape = straight(240.0, 440.0);
    let placed = place_labels(&[input("a", shape, "orders.query")], &[], &[]);
    let Some(p) = placed.first() else {
        panic!("one label");
    };
    let moved = straight(300.0, 600.0);
    let f = p.follow(moved);
    assert_eq!(f.spot, p.spot);
    assert_eq!(f.centre, moved.at(p.spot));
    assert_eq!(f.text, p.text);
    let (Some(a), Some(b)) = (p.rect, f.rect) else {
        panic!("boxes");
    };
    assert!((a.w - b.w).abs() < 1e-9 && (a.h - b.h).abs() < 1e-9);
    assert!((b.x - a.x - (f.centre.x - p.centre.x)).abs() < 1e-9);
}

#[test]
fn labels_under_a_control_are_found_from_the_camera() {
    let camera = Camera {
        x: 48.0,
        y: 64.0,
        zoom: 2.0,
    };
    let world = Rect {
        x: 10.0,
        y: 10.0,
        w: 20.0,
        h: 10.0,
    };
    assert_eq!(
        screen_rect(world, camera),
        Rect {
            x: 68.0,
            y: 84.0,
            w: 40.0,
            h: 20.0
        }
    );
    // A toolbar over the first box's corner, a minimap far from the rest.
    let controls = [
        Rect {
            x: 100.0,
            y: 0.0,
            w: 300.0,
            h: 90.0,
        },
        Rect {
            x: 900.0,
            y: 600.0,
            w: 200.0,
            h: 150.0,
        },
    ];
    let far = Rect {
        x: 200.0,
        y: 200.0,
        ..world
    };
    let under_map = Rect {
        x: 440.0,
        y: 300.0,
        ..world
    };
    let got = under_controls(
        [Some(world), Some(far), None, Some(under_map)],
        camera,
        &controls,
    );
    assert_eq!(got, vec![true, false, false, true]);
    // Zoomed out to 50 %, the first box moves out from under the toolbar.
    let out = Camera {
        zoom: 0.5,
        ..camera
    };
    assert_eq!(under_controls([Some(world)], out, &controls), vec![false]);
}
