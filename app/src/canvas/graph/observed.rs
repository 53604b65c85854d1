//! The routes of observed edges: drawn apart from the established edges'
//! routes (which leave and enter cards by their sides, see `routes`), as
//! an arc over the tops of the two cards, or, for cards stacked in one
//! column, an arc out to their left. The label clears the other roots'
//! blocks (card and children): a block it would lie on pushes the arc out
//! past it, and so on until none does (the line itself may still cross a
//! block on its way, as an established edge's may). Several observed
//! edges between the same two cards take lanes: each lane arcs further
//! out.

use std::collections::HashMap;
use std::sync::Arc;

use super::layout::{ROOT_H, ROOT_W};
use crate::canvas::css::push_fixed;
use crate::canvas::geometry::{Point, Rect};
use crate::dto::EdgeView;

/// How far the first lane's arc rises above the higher card (or reaches
/// left of the cards) when no other block is in its label's way.
const RISE: f64 = 46.0;
/// How much further out each next lane arcs.
const LANE_GAP: f64 = 30.0;
/// How far the label and traffic line reach beyond the arc's box.
const LABEL_REACH: f64 = 110.0;
/// The room the label and its traffic line take around the label's
/// centre: half its usual width, above and below.
const LABEL_HALF_W: f64 = 70.0;
const LABEL_ABOVE: f64 = 14.0;
const LABEL_BELOW: f64 = 30.0;
/// Room left between a label and the block it was moved past.
const GAP: f64 = 6.0;

/// The box a label centred at (`x`, `y`) and its traffic line take.
fn label_box(x: f64, y: f64) -> Rect {
    Rect {
        x: x - LABEL_HALF_W,
        y: y - LABEL_ABOVE,
        w: 2.0 * LABEL_HALF_W,
        h: LABEL_ABOVE + LABEL_BELOW,
    }
}

/// How one observed edge is drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedGeom {
    /// SVG path data, from the consumer's card to the provider's.
    pub path: Arc<str>,
    /// Centre of the label (the arc's middle).
    pub label: Point,
    /// A box around the arc, its label and its traffic line (culling).
    pub bbox: Rect,
}

/// The route of an observed edge from the card whose top-left corner is
/// at `from` to the one at `to`, in `lane` (0 for the first edge between
/// those two cards); `blocks` are the other roots' blocks (card and
/// children), which the arc clears.
pub fn observed_route(from: Point, to: Point, lane: usize, blocks: &[Rect]) -> ObservedGeom {
    // The first lane clears the blocks; each next one arcs further out
    // from there (and clears them again).
    let lane_out = lane as f64 * LANE_GAP;
    // Apart enough side by side: over the top; otherwise out to the left.
    let over = (to.x - from.x).abs() >= ROOT_W;
    let (start, end, control, label) = if over {
        // Both ends on the cards' tops, a little off centre so that the
        // two directions between a pair land apart.
        let shift = if to.x >= from.x { 16.0 } else { -16.0 };
        let start = Point {
            x: from.x + ROOT_W / 2.0 + shift,
            y: from.y,
        };
        let end = Point {
            x: to.x + ROOT_W / 2.0 - shift,
            y: to.y,
        };
        // Up past every block the label would lie on.
        let mid = (start.x + end.x) / 2.0;
        let in_way = |apex: f64, b: &Rect| b.intersects(label_box(mid, apex));
        let past = |b: &Rect| b.y - LABEL_BELOW - GAP;
        let first = clear(from.y.min(to.y) - RISE, blocks, &in_way, &past);
        let apex = clear(first - lane_out, blocks, &in_way, &past);
        // A quadratic curve's middle is (start + 2·control + end) / 4.
        let control = Point {
            x: (start.x + end.x) / 2.0,
            y: 2.0 * apex - (start.y + end.y) / 2.0,
        };
        let label = Point {
            x: (start.x + end.x) / 2.0,
            y: apex,
        };
        (start, end, control, label)
    } else {
        let shift = if to.y >= from.y { 10.0 } else { -10.0 };
        let start = Point {
            x: from.x,
            y: from.y + ROOT_H / 2.0 + shift,
        };
        let end = Point {
            x: to.x,
            y: to.y + ROOT_H / 2.0 - shift,
        };
        // Left past every block the label would lie on.
        let mid = (start.y + end.y) / 2.0;
        let in_way = |apex: f64, b: &Rect| b.intersects(label_box(apex, mid));
        let past = |b: &Rect| b.x - LABEL_HALF_W - GAP;
        let first = clear(from.x.min(to.x) - RISE, blocks, &in_way, &past);
        let apex = clear(first - lane_out, blocks, &in_way, &past);
        let control = Point {
            x: 2.0 * apex - (start.x + end.x) / 2.0,
            y: (start.y + end.y) / 2.0,
        };
        let label = Point {
            x: apex,
            y: (start.y + end.y) / 2.0,
        };
        (start, end, control, label)
    };
    let mut path = String::with_capacity(48);
    for (i, v) in [start.x, start.y, control.x, control.y, end.x, end.y]
        .into_iter()
        .enumerate()
    {
        path.push_str(["M", ",", " Q", ",", " ", ","][i]);
        push_fixed(&mut path, v, 1);
    }
    // The curve stays inside its control points' box.
    let xs = [start.x, control.x, end.x];
    let ys = [start.y, control.y, end.y];
    let lo = |v: [f64; 3]| v.into_iter().fold(f64::INFINITY, f64::min);
    let hi = |v: [f64; 3]| v.into_iter().fold(f64::NEG_INFINITY, f64::max);
    ObservedGeom {
        path: path.into(),
        label,
        bbox: Rect {
            x: lo(xs),
            y: lo(ys),
            w: hi(xs) - lo(xs),
            h: hi(ys) - lo(ys),
        }
        .grown(LABEL_REACH),
    }
}

/// `apex` moved out past each block `in_way` of it (`past`: where the
/// apex goes to clear that block), until none is. A move only ever goes
/// further out, so a block is passed at most once.
fn clear(
    mut apex: f64,
    blocks: &[Rect],
    in_way: &impl Fn(f64, &Rect) -> bool,
    past: &impl Fn(&Rect) -> f64,
) -> f64 {
    for _ in 0..=blocks.len() {
        match blocks.iter().find(|b| in_way(apex, b)) {
            Some(b) => apex = past(b).min(apex),
            None => break,
        }
    }
    apex
}

/// The lane of each of `edges` (in their order): edges between the same
/// two roots, either way, count 0, 1, 2… in the order given. `root_of`
/// names the root a node hangs under.
pub fn lanes<'a>(edges: &'a [EdgeView], root_of: impl Fn(&'a str) -> &'a str) -> Vec<usize> {
    let mut taken: HashMap<(&str, &str), usize> = HashMap::new();
    edges
        .iter()
        .map(|e| {
            let (a, b) = (root_of(&e.consumer), root_of(&e.provider));
            let pair = if a <= b { (a, b) } else { (b, a) };
            let n = taken.entry(pair).or_default();
            *n += 1;
            *n - 1
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dto::{edge_id, CapabilityKind, NodeStatus};

    fn e(c: &str, p: &str, cap: &str) -> EdgeView {
        EdgeView {
            id: edge_id(c, p, cap),
            consumer: c.into(),
            provider: p.into(),
            capability: cap.into(),
            kind: CapabilityKind::Consult,
            status: NodeStatus::Healthy,
            reason: None,
        }
    }

    #[test]
    fn side_by_side_cards_are_joined_over_their_tops() {
        let from = Point { x: 0.0, y: 100.0 };
        let to = Point { x: 600.0, y: 300.0 };
        let g = observed_route(from, to, 0, &[]);
        assert!(g.path.starts_with("M"), "{}", g.path);
        assert!(g.path.contains(" Q"), "{}", g.path);
        // The label sits above the higher card, between the two.
        assert!((g.label.y - (100.0 - RISE)).abs() < 1e-9);
        assert!(g.label.x > from.x && g.label.x < to.x + ROOT_W);
        assert!(g.bbox.intersects(Rect {
            x: g.label.x,
            y: g.label.y,
            w: 0.0,
            h: 0.0
        }));
        // The next lane arcs further out; the other direction lands apart.
        let next = observed_route(from, to, 1, &[]);
        assert!(next.label.y < g.label.y);
        let back = observed_route(to, from, 0, &[]);
        assert_ne!(back.path, g.path);
    }

    #[test]
    fn stacked_cards_are_joined_out_to_the_left() {
        let from = Point { x: 300.0, y: 0.0 };
        let to = Point { x: 300.0, y: 400.0 };
        let g = observed_route(from, to, 0, &[]);
        assert!((g.label.x - (300.0 - RISE)).abs() < 1e-9);
        assert!(g.label.y > 0.0 && g.label.y < 400.0 + ROOT_H);
    }

    fn block(x: f64, y: f64, h: f64) -> Rect {
        Rect { x, y, w: ROOT_W, h }
    }

    #[test]
    fn a_label_is_moved_off_the_blocks_it_would_lie_on() {
        // The demo's shape: the hub left, VendorCorp right, BuyerCorp's
        // block (card and children) between them, reaching below the arc.
        let hub = Point { x: 0.0, y: 300.0 };
        let vendor = Point {
            x: 1100.0,
            y: 260.0,
        };
        let buyer = block(560.0, 60.0, 200.0);
        let plain = observed_route(hub, vendor, 0, &[]);
        assert!(buyer.intersects(label_box(plain.label.x, plain.label.y)));
        let g = observed_route(hub, vendor, 0, &[buyer]);
        assert!(
            !buyer.intersects(label_box(g.label.x, g.label.y)),
            "{:?}",
            g.label
        );
        assert!(g.label.y < buyer.y, "over it, not under: {:?}", g.label);
        // A block out of the label's way moves nothing.
        let below = block(560.0, 900.0, 200.0);
        assert_eq!(observed_route(hub, vendor, 0, &[below]).label, plain.label);
        // Lanes stay apart past the block.
        let next = observed_route(hub, vendor, 1, &[buyer]);
        assert!(next.label.y < g.label.y);
        assert!(!buyer.intersects(label_box(next.label.x, next.label.y)));
        // Stacked: left, past a block beside the column, but not past one
        // far to the left.
        let top = Point { x: 600.0, y: 0.0 };
        let bottom = Point { x: 600.0, y: 480.0 };
        let beside = block(500.0, 200.0, 150.0);
        let away = block(0.0, 200.0, 150.0);
        let s = observed_route(top, bottom, 0, &[beside, away]);
        assert!(
            !beside.intersects(label_box(s.label.x, s.label.y)),
            "{:?}",
            s.label
        );
        assert!(
            !away.intersects(label_box(s.label.x, s.label.y)),
            "{:?}",
            s.label
        );
        assert!(
            s.label.x < beside.x && s.label.x > away.x + ROOT_W,
            "{:?}",
            s.label
        );
    }

    #[test]
    fn edges_between_the_same_two_roots_take_lanes_either_way() {
        let edges = [
            e("buyercorp", "helpdesk", "ticket.classify"),
            e("helpdesk", "buyercorp", "budget.consult"),
            e("hub", "vendorcorp", "orders.query"),
            e("buyercorp/agent/x", "helpdesk", "ticket.triage"),
        ];
        fn root(id: &str) -> &str {
            id.split('/').next().unwrap_or(id)
        }
        assert_eq!(lanes(&edges, root), vec![0, 1, 0, 2]);
    }
}
