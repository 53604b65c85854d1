//! The layered layout pinned down on the demo, on a ring of a hundred
//! systems like the canvas benchmark's, and on small graphs made to show
//! one rule each: direction, the hub's place, crossings against the
//! column layout, pins, sharing and wrapping columns, determinism.

use super::*;
use crate::canvas::graph::layout::tests::{cap, demo, edge, node};
use crate::dto::{CapabilityKind, EdgeView, NodeView};

/// A view of the hub and `systems` (no children), with consumer →
/// provider `edges`.
fn graph(systems: &[&str], edges: &[(&str, &str)]) -> TopologyView {
    let mut v = demo();
    v.nodes.retain(|n| n.node_type == NodeKind::Hub);
    v.nodes
        .extend(systems.iter().map(|s| node(s, NodeKind::System, None)));
    v.edges = edges
        .iter()
        .map(|(c, p)| edge(c, p, "x.consult", CapabilityKind::Consult))
        .collect();
    v.rules.clear();
    v
}

/// The benchmark's shape: `systems` systems, each with two agents and two
/// datasources, each providing one capability to its `fanout` successors
/// around a ring (so every system consumes and provides, in one cycle).
fn ring(systems: usize, fanout: usize) -> TopologyView {
    let id = |i: usize| format!("sys{:03}", i % systems);
    let capability = |i: usize| format!("cap{:03}.consult", i % systems);
    let mut v = graph(&[], &[]);
    for i in 0..systems {
        let mut s = node(&id(i), NodeKind::System, None);
        s.provides = vec![cap(&capability(i), CapabilityKind::Consult)];
        s.consumes = (1..=fanout)
            .map(|k| cap(&capability(i + systems - k), CapabilityKind::Consult))
            .collect();
        v.nodes.push(s);
        for child in ["agent/a1", "agent/a2"] {
            v.nodes.push(node(
                &format!("{}/{child}", id(i)),
                NodeKind::Agent,
                Some(&id(i)),
            ));
        }
        for child in ["datasource/d1", "datasource/d2"] {
            v.nodes.push(node(
                &format!("{}/{child}", id(i)),
                NodeKind::Datasource,
                Some(&id(i)),
            ));
        }
        for k in 1..=fanout {
            v.edges.push(edge(
                &id(i + k),
                &id(i),
                &capability(i),
                CapabilityKind::Consult,
            ));
        }
    }
    v
}

/// The layered layout of `view`, nothing pinned.
fn layered(view: &TopologyView) -> BTreeMap<String, Point> {
    layered_layout(&GraphModel::build(view), &BTreeMap::new())
}

fn at(layout: &BTreeMap<String, Point>, id: &str) -> Point {
    layout.get(id).copied().unwrap_or(Point {
        x: f64::NAN,
        y: f64::NAN,
    })
}

/// Does the consumer of `e` come before its provider in reading order
/// (left of it, or above it in the same column)?
fn reads_forward(layout: &BTreeMap<String, Point>, e: &EdgeView) -> bool {
    let (c, p) = (at(layout, &e.consumer), at(layout, &e.provider));
    c.x < p.x || (c.x == p.x && c.y < p.y)
}

/// Every pair of blocks that meet (touching counts), by root id.
fn overlaps(model: &GraphModel, layout: &BTreeMap<String, Point>) -> Vec<(String, String)> {
    let rect = |id: &str| {
        let p = at(layout, id);
        Rect {
            x: p.x,
            y: p.y,
            w: ROOT_W,
            h: model.block_height(id),
        }
    };
    let mut met = Vec::new();
    for (i, a) in model.roots.iter().enumerate() {
        for b in model.roots.iter().skip(i + 1) {
            if rect(a).intersects(rect(b)) {
                met.push((a.clone(), b.clone()));
            }
        }
    }
    met
}

#[test]
fn on_the_demo_consumers_sit_left_of_their_providers() {
    let layout = layered(&demo());
    let x = |id: &str| at(&layout, id).x;
    let edges = demo().edges;
    let backward: Vec<&EdgeView> = edges
        .iter()
        .filter(|e| x(&e.consumer) >= x(&e.provider))
        .collect();
    // buyercorp and helpdesk consume from each other: one of those two
    // edges must run backward, and no other does.
    assert_eq!(backward.len(), 1, "{backward:?}");
    let mut pair = [backward[0].consumer.as_str(), backward[0].provider.as_str()];
    pair.sort_unstable();
    assert_eq!(pair, ["buyercorp", "helpdesk"]);
    // vendorcorp only provides: the last column.
    assert!(layout.values().all(|p| p.x <= x("vendorcorp")));
}

#[test]
fn the_hub_opens_the_first_layer() {
    for view in [demo(), ring(100, 10), graph(&["a", "b"], &[("a", "b")])] {
        let layout = layered(&view);
        let hub = at(&layout, "hub");
        assert_eq!(hub.x, 0.0);
        assert!(layout.values().all(|p| p.x >= hub.x));
        let model = GraphModel::build(&with_layout(&view));
        assert_eq!(model.roots.first().map(String::as_str), Some("hub"));
    }
    // Even when something claims to consume from the hub.
    let view = graph(&["a"], &[("a", "hub")]);
    let layout = layered(&view);
    assert!(at(&layout, "hub").x < at(&layout, "a").x);
}

fn with_layout(view: &TopologyView) -> TopologyView {
    let mut v = view.clone();
    fill_layout(&mut v);
    v
}

#[test]
fn on_a_ring_of_a_hundred_consumers_mostly_come_first_and_it_stays_compact() {
    let view = ring(100, 10);
    let model = GraphModel::build(&view);
    let layout = layered(&view);
    let forward = view
        .edges
        .iter()
        .filter(|e| reads_forward(&layout, e))
        .count();
    let before = view
        .edges
        .iter()
        .filter(|e| reads_forward(&model.layout, e))
        .count();
    // Cut once, the ring reverses 55 of its 1,000 edges (those from the
    // ten systems after the cut to the ten before it); sorted by id, the
    // column layout reads only those forward.
    assert_eq!((forward, before), (945, 55));
    // A hundred layers share columns: no wider than the column layout,
    // no taller than a column.
    let (new, old) = (model.bounds(&layout), model.bounds(&model.layout));
    assert!(
        new.w <= old.w,
        "{} wide, the column layout {}",
        new.w,
        old.w
    );
    assert!(new.h <= MAX_COLUMN_H, "{} tall", new.h);
    assert!(overlaps(&model, &layout).is_empty());
}

#[test]
fn barycenter_sweeps_cross_less_than_the_column_layout() {
    // Sorted by id, the column layout draws c1 → p3, c2 → p2 and c3 → p1
    // as a star of three crossings; the sweeps order p3, p2, p1.
    let view = graph(
        &["c1", "c2", "c3", "p1", "p2", "p3"],
        &[("c1", "p3"), ("c2", "p2"), ("c3", "p1")],
    );
    let model = GraphModel::build(&view);
    let old = crossings(&model, &model.layout);
    let new = crossings(&model, &layered(&view));
    assert_eq!((old, new), (3, 0));
    // The demo: the column layout's line from the hub to vendorcorp cuts
    // the two edges between buyercorp and helpdesk, stacked in one column;
    // layered, nothing crosses.
    let model = GraphModel::build(&demo());
    let old = crossings(&model, &model.layout);
    let new = crossings(&model, &layered(&demo()));
    assert_eq!((old, new), (2, 0));
}

#[test]
fn the_crossing_count_counts_proper_crossings_only() {
    let view = graph(&["a", "b", "c", "d"], &[("a", "d"), ("b", "c")]);
    let model = GraphModel::build(&view);
    let spot = |x: f64, y: f64| Point { x, y };
    let crossed = BTreeMap::from([
        ("a".to_string(), spot(0.0, 0.0)),
        ("b".to_string(), spot(0.0, 200.0)),
        ("c".to_string(), spot(540.0, 0.0)),
        ("d".to_string(), spot(540.0, 200.0)),
    ]);
    assert_eq!(crossings(&model, &crossed), 1);
    let mut apart = crossed.clone();
    apart.insert("c".into(), spot(540.0, 200.0));
    apart.insert("d".into(), spot(540.0, 0.0));
    assert_eq!(crossings(&model, &apart), 0);
    // Two edges meeting at a shared end do not cross.
    let shared = graph(&["a", "b", "c"], &[("a", "b"), ("a", "c")]);
    let model = GraphModel::build(&shared);
    assert_eq!(crossings(&model, &model.layout), 0);
}

#[test]
fn no_block_overlaps_another_even_where_the_operator_pinned_one() {
    for view in [demo(), ring(100, 10)] {
        let model = GraphModel::build(&view);
        let free = layered(&view);
        assert!(overlaps(&model, &free).is_empty());
        // Pin roots exactly where the layout put others (and one a little
        // off, across a column's edge), so the layout must move those.
        let roots: Vec<&String> = model.roots.iter().filter(|r| *r != "hub").collect();
        let (first, last) = (roots[0], roots[roots.len() - 1]);
        let mut pinned = BTreeMap::from([(last.clone(), at(&free, first))]);
        if roots.len() > 10 {
            let (a, b) = (roots[5], roots[roots.len() - 6]);
            let spot = at(&free, a);
            pinned.insert(
                b.clone(),
                Point {
                    x: spot.x + ROOT_W / 2.0,
                    y: spot.y + 30.0,
                },
            );
        }
        let layout = layered_layout(&model, &pinned);
        for (id, p) in &pinned {
            assert_eq!(layout.get(id), Some(p), "{id} stays where it was pinned");
        }
        assert_ne!(at(&layout, first), at(&free, first), "{first} moved aside");
        assert_eq!(overlaps(&model, &layout), Vec::<(String, String)>::new());
        // The view's pins are the ones `fill_layout` keeps.
        let mut v = view.clone();
        v.positions = pinned
            .iter()
            .map(|(id, p)| NodePosition {
                node: id.clone(),
                x: p.x,
                y: p.y,
            })
            .collect();
        let served = GraphModel::build(&with_layout(&v));
        assert_eq!(served.layout, layout);
    }
}

#[test]
fn blocks_pushed_past_a_pin_push_the_rest_of_their_column() {
    // One consumer, eight providers in one column; a pin over the top of
    // that column pushes all eight below it, in order, apart.
    let providers: Vec<String> = (0..8).map(|i| format!("p{i}")).collect();
    let names: Vec<&str> = std::iter::once("c")
        .chain(providers.iter().map(String::as_str))
        .collect();
    let edges: Vec<(&str, &str)> = providers.iter().map(|p| ("c", p.as_str())).collect();
    let view = graph(&names, &edges);
    let model = GraphModel::build(&view);
    let free = layered(&view);
    let top = providers.iter().map(|p| at(&free, p)).fold(
        Point {
            x: 0.0,
            y: f64::INFINITY,
        },
        |a, b| if b.y < a.y { b } else { a },
    );
    let pinned = BTreeMap::from([("c".to_string(), top)]);
    let layout = layered_layout(&model, &pinned);
    assert!(overlaps(&model, &layout).is_empty());
    let mut ys: Vec<f64> = providers.iter().map(|p| at(&layout, p).y).collect();
    ys.sort_by(f64::total_cmp);
    assert!(ys[0] >= top.y + ROOT_H + ROW_GAP);
    assert!(ys.windows(2).all(|w| w[1] - w[0] >= ROOT_H + ROW_GAP));
}

#[test]
fn a_deep_chain_shares_columns_and_still_reads_forward() {
    // s00 → s01 → … → s29: thirty layers of one block, which side by side
    // would be 16,000 px wide.
    let names: Vec<String> = (0..30).map(|i| format!("s{i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let edges: Vec<(&str, &str)> = refs.windows(2).map(|w| (w[0], w[1])).collect();
    let view = graph(&refs, &edges);
    let model = GraphModel::build(&view);
    let layout = layered(&view);
    let b = model.bounds(&layout);
    assert!(b.w <= MAX_LAYERED_W, "{} wide", b.w);
    assert!(b.h <= MAX_COLUMN_H);
    assert!(view.edges.iter().all(|e| reads_forward(&layout, e)));
    assert!(overlaps(&model, &layout).is_empty());
    // A short chain keeps a column per layer (the first one the hub's).
    let view = graph(&["a", "b", "c"], &[("a", "b"), ("b", "c")]);
    let layout = layered(&view);
    let xs: Vec<f64> = ["hub", "a", "b", "c"]
        .iter()
        .map(|id| at(&layout, id).x)
        .collect();
    assert_eq!(xs, [0.0, 0.0, 540.0, 1080.0]);
}

#[test]
fn a_layer_taller_than_a_column_wraps_and_lone_roots_come_last() {
    let providers: Vec<String> = (0..40).map(|i| format!("p{i:02}")).collect();
    let mut names: Vec<&str> = vec!["c", "lone"];
    names.extend(providers.iter().map(String::as_str));
    let edges: Vec<(&str, &str)> = providers.iter().map(|p| ("c", p.as_str())).collect();
    let view = graph(&names, &edges);
    let model = GraphModel::build(&view);
    let layout = layered(&view);
    let b = model.bounds(&layout);
    assert!(b.h <= MAX_COLUMN_H, "{} tall", b.h);
    assert!(view
        .edges
        .iter()
        .all(|e| at(&layout, &e.consumer).x < at(&layout, &e.provider).x));
    assert!(layout.values().all(|p| p.x <= at(&layout, "lone").x));
    assert!(overlaps(&model, &layout).is_empty());
}

#[test]
fn same_view_same_layout_whatever_its_order() {
    for view in [demo(), ring(100, 10)] {
        let a = layered(&view);
        assert_eq!(layered(&view), a);
        let mut shuffled = view.clone();
        shuffled.nodes.reverse();
        shuffled.edges.reverse();
        assert_eq!(layered(&shuffled), a);
        // Remembered or computed, the view carries the same spots.
        let (first, again) = (with_layout(&view), with_layout(&shuffled));
        assert_eq!(first.layout, again.layout);
        let model = GraphModel::build(&first);
        assert_eq!(model.layout, a);
        // The view lists them in reading order, which the model's roots
        // follow.
        let listed: Vec<&str> = first.layout.iter().map(|p| p.node.as_str()).collect();
        assert_eq!(model.roots, listed);
    }
}

#[test]
fn a_system_joining_lays_the_exchange_out_again() {
    let before = with_layout(&demo());
    let mut grown = demo();
    let mut newcomer: NodeView = node("analytics", NodeKind::System, None);
    newcomer.consumes = vec![cap("orders.query", CapabilityKind::DataShare)];
    grown.nodes.push(newcomer);
    grown.edges.push(edge(
        "analytics",
        "vendorcorp",
        "orders.query",
        CapabilityKind::DataShare,
    ));
    let after = with_layout(&grown);
    assert_eq!(after.layout.len(), before.layout.len() + 1);
    let layout = GraphModel::build(&after).layout;
    assert!(at(&layout, "analytics").x < at(&layout, "vendorcorp").x);
}
