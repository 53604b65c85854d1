//! The routes of observed edges: drawn apart from the established edges'
//! routes (which leave and enter cards by their sides, see `routes`), as
//! an arc over the tops of the two cards, or, for cards stacked in one
//! column, an arc out to their left. The arc's apex clears the other
//! roots' blocks (card and children): a block a label there would lie on
//! pushes the arc out past it, and so on until none does (the line itself
//! may still cross a block on its way, as an established edge's may).
//! Several observed edges between the same two cards, either way, take
//! lanes: each lane arcs further out, a label's height further, so their
//! lines run apart and their labels can sit at their apexes one over the
//! other. Where each label finally goes is `placement`'s, after the
//! established edges' labels, which it keeps clear of.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::layout::{GraphModel, ROOT_H, ROOT_W};
use super::placement::{place_labels, LabelInput, Look, PathShape, Placed, Spot};
use crate::canvas::css::push_fixed;
use crate::canvas::geometry::{Point, Rect};
use crate::dto::EdgeView;

/// How far the first lane's arc rises above the higher card (or reaches
/// left of the cards) when no other block is in its label's way.
const RISE: f64 = 46.0;
/// How much further out each next lane arcs: more than an observed
/// label's height with its traffic line.
const LANE_GAP: f64 = 40.0;
/// How far the arc (its stroke, its arrowhead) reaches beyond its control
/// points' box.
const LINE_REACH: f64 = 10.0;
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
    /// The arc, which label spots are points of.
    pub shape: PathShape,
    /// Where the label is and what it shows (see `placement`).
    pub label: Placed,
    /// A box around the arc, its label and its traffic line (culling).
    pub bbox: Rect,
}

impl ObservedGeom {
    /// This arc with `label`, its box grown to hold it.
    pub fn labelled(mut self, label: Placed) -> Self {
        if let Some(r) = label.rect {
            self.bbox = self.bbox.union(r);
        }
        self.label = label;
        self
    }

    /// This arc with the label `committed` had on its committed arc, at
    /// the same spot of this one (mid-drag: nothing is placed again until
    /// the drop).
    pub fn following(self, committed: &Placed) -> Self {
        let label = committed.follow(self.shape);
        self.labelled(label)
    }
}

/// An observed edge to draw, as the scene knows it.
#[derive(Debug, Clone, Copy)]
pub struct ObservedEdge<'a> {
    /// The edge.
    pub edge: &'a EdgeView,
    /// Its lane among the observed edges between the same two roots.
    pub lane: usize,
    /// What its label adds after the capability (a refused edge's
    /// reason code).
    pub badge: Option<&'a str>,
}

impl GraphModel {
    /// The arcs of the observed `edges` (in their order; `None` for one
    /// whose ends are not placed) at `positions`, their labels placed clear
    /// of every block, of each other and of `taken` (the established
    /// edges' label boxes, which stay where they are: traffic coming and
    /// going never moves them).
    pub fn observed_routes(
        &self,
        positions: &BTreeMap<String, Point>,
        edges: &[ObservedEdge<'_>],
        taken: &[Rect],
    ) -> Vec<Option<ObservedGeom>> {
        let blocks = self.root_blocks(positions);
        let mut out: Vec<Option<ObservedGeom>> = edges
            .iter()
            .map(|o| {
                let c = self.index_of(self.root_of(&o.edge.consumer))?;
                let p = self.index_of(self.root_of(&o.edge.provider))?;
                let at = |i: usize| positions.get(self.roots.get(i)?).copied();
                let (from, to) = (at(c)?, at(p)?);
                let others: Vec<Rect> = blocks
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != c && *i != p)
                    .filter_map(|(_, b)| *b)
                    .collect();
                Some(observed_route(from, to, o.lane, &others))
            })
            .collect();
        let mut at = Vec::with_capacity(edges.len());
        let mut inputs = Vec::with_capacity(edges.len());
        for (i, (g, o)) in out.iter().zip(edges).enumerate() {
            if let Some(g) = g {
                at.push(i);
                inputs.push(LabelInput {
                    key: &o.edge.id,
                    shape: g.shape,
                    text: &o.edge.capability,
                    badge: o.badge,
                    look: Look::Observed,
                    traffic: true,
                });
            }
        }
        let all: Vec<Rect> = blocks.into_iter().flatten().collect();
        let placed = place_labels(&inputs, &all, taken);
        for (i, label) in at.into_iter().zip(placed) {
            if let Some(slot) = out.get_mut(i) {
                *slot = slot.take().map(|g| g.labelled(label));
            }
        }
        out
    }
}

/// The route of an observed edge from the card whose top-left corner is
/// at `from` to the one at `to`, in `lane` (0 for the first edge between
/// those two cards); `blocks` are the other roots' blocks (card and
/// children), which the arc's apex clears. Its label is not placed yet
/// (whole, at the apex).
pub fn observed_route(from: Point, to: Point, lane: usize, blocks: &[Rect]) -> ObservedGeom {
    // The first lane clears the blocks; each next one arcs further out
    // from there (and clears them again).
    let lane_out = lane as f64 * LANE_GAP;
    // Apart enough side by side: over the top; otherwise out to the left.
    let over = (to.x - from.x).abs() >= ROOT_W;
    let (start, end, control) = if over {
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
        (start, end, control)
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
        (start, end, control)
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
    let shape = PathShape::Arc {
        start,
        control,
        end,
    };
    ObservedGeom {
        path: path.into(),
        shape,
        // The quadratic's middle is its apex.
        label: Placed::unplaced(shape, Spot::Curve(0.5)),
        bbox: Rect {
            x: lo(xs),
            y: lo(ys),
            w: hi(xs) - lo(xs),
            h: hi(ys) - lo(ys),
        }
        .grown(LINE_REACH),
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
        assert!((g.label.centre.y - (100.0 - RISE)).abs() < 1e-9);
        assert!(g.label.centre.x > from.x && g.label.centre.x < to.x + ROOT_W);
        assert!(g.bbox.intersects(Rect {
            x: g.label.centre.x,
            y: g.label.centre.y,
            w: 0.0,
            h: 0.0
        }));
        // The next lane arcs further out; the other direction lands apart.
        let next = observed_route(from, to, 1, &[]);
        assert!(next.label.centre.y < g.label.centre.y);
        let back = observed_route(to, from, 0, &[]);
        assert_ne!(back.path, g.path);
    }

    #[test]
    fn stacked_cards_are_joined_out_to_the_left() {
        let from = Point { x: 300.0, y: 0.0 };
        let to = Point { x: 300.0, y: 400.0 };
        let g = observed_route(from, to, 0, &[]);
        assert!((g.label.centre.x - (300.0 - RISE)).abs() < 1e-9);
        assert!(g.label.centre.y > 0.0 && g.label.centre.y < 400.0 + ROOT_H);
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
        assert!(buyer.intersects(label_box(plain.label.centre.x, plain.label.centre.y)));
        let g = observed_route(hub, vendor, 0, &[buyer]);
        assert!(
            !buyer.intersects(label_box(g.label.centre.x, g.label.centre.y)),
            "{:?}",
            g.label
        );
        assert!(
            g.label.centre.y < buyer.y,
            "over it, not under: {:?}",
            g.label
        );
        // A block out of the label's way moves nothing.
        let below = block(560.0, 900.0, 200.0);
        assert_eq!(observed_route(hub, vendor, 0, &[below]).label, plain.label);
        // Lanes stay apart past the block.
        let next = observed_route(hub, vendor, 1, &[buyer]);
        assert!(next.label.centre.y < g.label.centre.y);
        assert!(!buyer.intersects(label_box(next.label.centre.x, next.label.centre.y)));
        // Stacked: left, past a block beside the column, but not past one
        // far to the left.
        let top = Point { x: 600.0, y: 0.0 };
        let bottom = Point { x: 600.0, y: 480.0 };
        let beside = block(500.0, 200.0, 150.0);
        let away = block(0.0, 200.0, 150.0);
        let s = observed_route(top, bottom, 0, &[beside, away]);
        assert!(
            !beside.intersects(label_box(s.label.centre.x, s.label.centre.y)),
            "{:?}",
            s.label
        );
        assert!(
            !away.intersects(label_box(s.label.centre.x, s.label.centre.y)),
            "{:?}",
            s.label
        );
        assert!(
            s.label.centre.x < beside.x && s.label.centre.x > away.x + ROOT_W,
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
