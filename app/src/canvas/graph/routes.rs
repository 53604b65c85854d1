//! The edge routes: each edge's SVG path, its label and the box culling
//! reads, from where its two roots' cards are. An edge leaves its
//! consumer's card by the side facing the provider and enters the provider
//! by a straight run; edges sharing a side of a card get ports spread
//! along it. The labels of the routes at committed positions are placed
//! together (`placement`); a drag redraws only the dragged root's edges,
//! each label keeping its spot on its moving path, and works on indices.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::layout::{GraphModel, ROOT_H, ROOT_W};
use super::placement::{place_labels, LabelInput, Look, PathShape, Placed, Spot};
use crate::canvas::css::push_fixed;
use crate::canvas::geometry::{Point, Rect};

/// Length of the straight last stretch of an edge, where its label sits
/// when it has room.
pub const LABEL_RUN: f64 = 150.0;
/// Preferred vertical distance between edge ports on one side of a card.
const PORT_SPACING: f64 = 24.0;

/// Which side of a card an edge leaves or enters by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The card's left side.
    Left,
    /// The card's right side.
    Right,
}

/// How one edge is drawn: its SVG path and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeGeom {
    /// SVG path data, ending at the provider's card (shared: a redraw
    /// that leaves the edge where it was reuses it).
    pub path: Arc<str>,
    /// The path's curve and run, which label spots are points of.
    pub shape: PathShape,
    /// Where the label is and what it shows (see `placement`).
    pub label: Placed,
    /// A box around the line, its label and its traffic line: what must
    /// be on screen for any of them to show (culling).
    pub bbox: Rect,
    /// What the path is computed from: same key, same path.
    key: RouteKey,
}

/// How far an edge's line (its stroke, its arrowhead) reaches beyond its
/// control points' box.
const LINE_REACH: f64 = 10.0;

impl EdgeGeom {
    /// This route with `label`, its culling box grown to hold it.
    fn labelled(mut self, label: Placed) -> Self {
        if let Some(r) = label.rect {
            self.bbox = self.bbox.union(r);
        }
        self.label = label;
        self
    }
}

/// The numbers an edge's path is a function of.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RouteKey {
    start: Point,
    end: Point,
    exit: Side,
    entry: Side,
}

impl GraphModel {
    /// Routes every edge at the given positions, by id (see
    /// [`Self::edge_routes`]).
    pub fn edge_geometry(&self, positions: &BTreeMap<String, Point>) -> HashMap<String, EdgeGeom> {
        self.edge_routes(positions, None)
            .into_iter()
            .zip(&self.edges)
            .filter_map(|(g, e)| g.map(|g| (e.id.clone(), g)))
            .collect()
    }

    /// Routes every edge at the given positions, in the order of `edges`
    /// (`None` for an edge whose ends are not placed).
    ///
    /// An edge leaves its consumer's card by the side facing the provider
    /// and enters the provider by a straight stretch of [`LABEL_RUN`], where
    /// its label sits when it has room: labels land in the gaps between
    /// columns rather than on top of cards. Edges sharing a side of a card
    /// get distinct ports, ordered by where their other end is (then by
    /// id), so they do not cross needlessly: two edges between the same
    /// cards, either way, take neighbouring ports in the same order at
    /// both ends and never run over each other. Then every label is placed
    /// ([`place_labels`]): clear of every block and of each other, whole,
    /// cut, or not drawn.
    ///
    /// Everything is indexed, and an edge whose route did not change keeps
    /// its path text from `prev`.
    pub fn edge_routes(
        &self,
        positions: &BTreeMap<String, Point>,
        prev: Option<&[Option<EdgeGeom>]>,
    ) -> Vec<Option<EdgeGeom>> {
        let pos: Vec<Option<Point>> = self
            .roots
            .iter()
            .map(|r| positions.get(r).copied())
            .collect();
        let at = |i: usize| pos.get(i).copied().flatten();
        let side_ix = |s: Side| match s {
            Side::Left => 0,
            Side::Right => 1,
        };
        let n = self.edges.len();
        let mut sides: Vec<Option<(Side, Side)>> = vec![None; n];
        // Ports: every (card, side) lists the edge ends on it:
        // (the other end's y, edge index, is this the entry end).
        let mut ports: Vec<Vec<(f64, usize, bool)>> = vec![Vec::new(); self.roots.len() * 2];
        for (i, &(c, p)) in self.edge_ends.iter().enumerate() {
            let (Some(from), Some(to)) = (at(c), at(p)) else {
                continue;
            };
            let (exit, entry) = sides_between(from, to);
            sides[i] = Some((exit, entry));
            ports[c * 2 + side_ix(exit)].push((to.y, i, false));
            ports[p * 2 + side_ix(entry)].push((from.y, i, true));
        }
        // Port offsets of each edge: [its exit end, its entry end].
        let mut offsets = vec![[0.0_f64; 2]; n];
        for list in &mut ports {
            if list.is_empty() {
                continue;
            }
            list.sort_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then_with(|| self.edges[a.1].id.cmp(&self.edges[b.1].id))
                    .then_with(|| a.2.cmp(&b.2))
            });
            let count = list.len() as f64;
            let spacing = if count > 1.0 {
                PORT_SPACING.min((ROOT_H - 24.0) / (count - 1.0))
            } else {
                0.0
            };
            for (k, &(_, i, is_entry)) in list.iter().enumerate() {
                offsets[i][usize::from(is_entry)] = (k as f64 - (count - 1.0) / 2.0) * spacing;
            }
        }

        let mut out = Vec::with_capacity(n);
        for (i, &(c, p)) in self.edge_ends.iter().enumerate() {
            let (Some(from), Some(to), Some((exit, entry))) = (at(c), at(p), sides[i]) else {
                out.push(None);
                continue;
            };
            let key = route_key(from, to, exit, entry, offsets[i]);
            let path = prev
                .and_then(|p| p.get(i))
                .and_then(|g| g.as_ref())
                .filter(|g| g.key == key)
                .map(|g| g.path.clone());
            out.push(Some(route(key, path)));
        }
        self.place_route_labels(positions, &mut out);
        out
    }

    /// Places the labels of `routes` (by edge index) among the blocks at
    /// `positions`.
    fn place_route_labels(
        &self,
        positions: &BTreeMap<String, Point>,
        routes: &mut [Option<EdgeGeom>],
    ) {
        let blocks: Vec<Rect> = self.root_blocks(positions).into_iter().flatten().collect();
        let mut at = Vec::with_capacity(routes.len());
        let mut inputs = Vec::with_capacity(routes.len());
        for (i, (g, e)) in routes.iter().zip(&self.edges).enumerate() {
            if let Some(g) = g {
                at.push(i);
                inputs.push(LabelInput {
                    key: &e.id,
                    shape: g.shape,
                    text: &e.capability,
                    badge: None,
                    look: Look::Established,
                    traffic: true,
                });
            }
        }
        let placed = place_labels(&inputs, &blocks, &[]);
        for (i, label) in at.into_iter().zip(placed) {
            if let Some(slot) = routes.get_mut(i) {
                *slot = slot.take().map(|g| g.labelled(label));
            }
        }
    }

    /// The block (card and children) of every root at `positions`, by
    /// root index (`None` for a root not placed).
    pub(super) fn root_blocks(&self, positions: &BTreeMap<String, Point>) -> Vec<Option<Rect>> {
        self.roots
            .iter()
            .enumerate()
            .map(|(i, r)| positions.get(r).map(|&p| self.block_rect(i, p)))
            .collect()
    }

    /// The routes of the edges of `root` while it is dragged to `at`, by
    /// edge index, from their `committed` routes at `positions`: each end
    /// keeps its port (the dragged end moves with its card, the other end
    /// stays put) and only the sides are chosen again; each label keeps
    /// its spot on its path and its text. Nothing else moves mid-drag: the
    /// ports of other edges are spread again, and every label placed
    /// again, on the drop ([`Self::edge_routes`]), so a drag repaints only
    /// its own edges.
    pub fn dragged_routes(
        &self,
        positions: &BTreeMap<String, Point>,
        committed: &[Option<EdgeGeom>],
        root: &str,
        at: Point,
    ) -> Vec<(usize, EdgeGeom)> {
        let Some(r) = self.index_of(root) else {
            return Vec::new();
        };
        let pos = |i: usize| -> Option<Point> {
            let id = self.roots.get(i)?;
            positions.get(id).copied()
        };
        let mut out = Vec::new();
        for &i in self.edges_of(r) {
            let Some(&(c, p)) = self.edge_ends.get(i) else {
                continue;
            };
            let (Some(from0), Some(to0), Some(Some(old))) = (pos(c), pos(p), committed.get(i))
            else {
                continue;
            };
            // The port offsets of the committed route, from each card's middle.
            let offsets = [
                old.key.start.y - (from0.y + ROOT_H / 2.0),
                old.key.end.y - (to0.y + ROOT_H / 2.0),
            ];
            let from = if c == r { at } else { from0 };
            let to = if p == r { at } else { to0 };
            let (exit, entry) = sides_between(from, to);
            let g = route(route_key(from, to, exit, entry, offsets), None);
            let label = old.label.follow(g.shape);
            out.push((i, g.labelled(label)));
        }
        out
    }
}

/// The sides an edge leaves its consumer's card (at `from`) and enters its
/// provider's (at `to`) by: facing each other when the cards are apart
/// enough for the label's straight run, both on the right otherwise.
fn sides_between(from: Point, to: Point) -> (Side, Side) {
    if to.x >= from.x + ROOT_W + LABEL_RUN + 20.0 {
        (Side::Right, Side::Left)
    } else if to.x + ROOT_W + LABEL_RUN + 20.0 <= from.x {
        (Side::Left, Side::Right)
    } else {
        (Side::Right, Side::Right)
    }
}

/// The route's numbers for cards at `from` and `to`, the sides and the
/// ports' offsets from the cards' middles ([exit end, entry end]).
fn route_key(from: Point, to: Point, exit: Side, entry: Side, offsets: [f64; 2]) -> RouteKey {
    let ys = from.y + ROOT_H / 2.0 + offsets[0];
    let ye = to.y + ROOT_H / 2.0 + offsets[1];
    let sx = match exit {
        Side::Right => from.x + ROOT_W,
        Side::Left => from.x,
    };
    let ex = match entry {
        Side::Left => to.x,
        Side::Right => to.x + ROOT_W,
    };
    RouteKey {
        start: Point { x: sx, y: ys },
        end: Point { x: ex, y: ye },
        exit,
        entry,
    }
}

/// One edge's route from its numbers (`path`: its path text, when known),
/// its label not placed yet (whole, the middle of its run).
fn route(key: RouteKey, path: Option<Arc<str>>) -> EdgeGeom {
    let RouteKey {
        start,
        end,
        exit,
        entry,
    } = key;
    let (sx, ys, ex, ye) = (start.x, start.y, end.x, end.y);
    let out_dir = match exit {
        Side::Right => 1.0,
        Side::Left => -1.0,
    };
    let run_dir = match entry {
        Side::Left => -1.0,
        Side::Right => 1.0,
    };
    let lx = ex + run_dir * LABEL_RUN;
    let k = if exit == entry {
        90.0 + (ye - ys).abs() * 0.2
    } else {
        ((lx - sx).abs() / 2.0).max(40.0)
    };
    let c1 = Point {
        x: sx + out_dir * k,
        y: ys,
    };
    let c2 = Point {
        x: lx + run_dir * k,
        y: ye,
    };
    let path = path.unwrap_or_else(|| {
        let mut d = String::with_capacity(72);
        for (i, v) in [sx, ys, c1.x, c1.y, c2.x, c2.y, lx, ye, ex, ye]
            .into_iter()
            .enumerate()
        {
            d.push_str(["M", ",", " C", ",", " ", ",", " ", ",", " L", ","][i]);
            push_fixed(&mut d, v, 1);
        }
        d.into()
    });
    let shape = PathShape::Route {
        start,
        c1,
        c2,
        run: Point { x: lx, y: ye },
        end,
    };
    // The curve stays inside its control points' box.
    let xs = [sx, c1.x, c2.x, lx, ex];
    let (x0, x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let (y0, y1) = (ys.min(ye), ys.max(ye));
    EdgeGeom {
        path,
        shape,
        label: Placed::unplaced(shape, Spot::Run(0.5)),
        bbox: Rect {
            x: x0,
            y: y0,
            w: x1 - x0,
            h: y1 - y0,
        }
        .grown(LINE_REACH),
        key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canvas::graph::placement::LabelText;
    use crate::canvas::graph::tests::demo;

    #[test]
    fn every_edge_is_routed_and_its_label_drawn_whole_apart() {
        let m = GraphModel::build(&demo());
        let g = m.edge_geometry(&m.layout);
        assert_eq!(g.len(), 6);
        let mut boxes = Vec::new();
        for (id, e) in &g {
            assert_eq!(e.label.text, LabelText::Whole, "{id}");
            let Some(r) = e.label.rect else {
                panic!("{id} has no box");
            };
            assert!(e.bbox.intersects(r), "{id}: culling sees its label");
            boxes.push(r);
        }
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(!a.intersects(*b), "labels {a:?} and {b:?} overlap");
            }
        }
    }

    /// Points along a whole route, its curve then its run.
    fn samples(g: &EdgeGeom) -> Vec<Point> {
        let curve = (0..=40).map(|k| g.shape.at(Spot::Curve(f64::from(k) / 40.0)));
        let run = (0..=10).map(|k| g.shape.at(Spot::Run(1.0 - f64::from(k) / 10.0)));
        curve.chain(run).collect()
    }

    #[test]
    fn edges_between_two_cards_either_way_are_drawn_apart() {
        // BuyerCorp and Helpdesk consume from each other in the demo.
        let m = GraphModel::build(&demo());
        let g = m.edge_geometry(&m.layout);
        let (Some(a), Some(b)) = (
            g.get("buyercorp->helpdesk:ticket.classify"),
            g.get("helpdesk->buyercorp:budget.consult"),
        ) else {
            panic!("both routed");
        };
        // Each end on a port of its own, apart from the other edge's.
        assert!((a.key.start.y - b.key.end.y).abs() >= 12.0, "{a:?} {b:?}");
        assert!((a.key.end.y - b.key.start.y).abs() >= 12.0, "{a:?} {b:?}");
        // The lines never run over each other: they meet at most where one
        // crosses the other, a few points of one near the other in one
        // stretch.
        let (pa, pb) = (samples(a), samples(b));
        let near: Vec<bool> = pa
            .iter()
            .map(|p| {
                pb.iter()
                    .any(|q| (p.x - q.x).powi(2) + (p.y - q.y).powi(2) < 16.0)
            })
            .collect();
        let stretches = near.windows(2).filter(|w| !w[0] && w[1]).count()
            + usize::from(near.first() == Some(&true));
        let count = near.iter().filter(|n| **n).count();
        assert!(stretches <= 1 && count <= 6, "{count} near in {stretches}");
        // And their labels are apart.
        let (Some(ra), Some(rb)) = (a.label.rect, b.label.rect) else {
            panic!("both drawn");
        };
        assert!(!ra.intersects(rb));
    }

    #[test]
    fn moving_a_root_reroutes_its_edges_and_reuses_the_others() {
        let m = GraphModel::build(&demo());
        let first = m.edge_routes(&m.layout, None);
        let mut moved = m.layout.clone();
        if let Some(p) = moved.get_mut("vendorcorp") {
            p.y += 200.0;
        }
        let second = m.edge_routes(&moved, Some(&first));
        let mut changed = 0;
        for ((e, a), b) in m.edges.iter().zip(&first).zip(&second) {
            let (Some(a), Some(b)) = (a, b) else {
                panic!("every edge routed");
            };
            if e.provider == "vendorcorp" {
                assert_ne!(a.path, b.path, "{} follows its provider", e.id);
                changed += 1;
            } else if a.path == b.path {
                assert!(Arc::ptr_eq(&a.path, &b.path), "{} reuses its path", e.id);
            }
        }
        assert_eq!(changed, 2);
        assert_eq!(m.edge_geometry(&m.layout).len(), first.len());
    }

    #[test]
    fn a_drag_moves_only_the_dragged_roots_edges_and_keeps_their_ports() {
        let m = GraphModel::build(&demo());
        let committed = m.edge_routes(&m.layout, None);
        let home = m.layout.get("vendorcorp").copied().unwrap_or_default();
        let at = Point {
            x: home.x + 30.0,
            y: home.y + 50.0,
        };
        let live = m.dragged_routes(&m.layout, &committed, "vendorcorp", at);
        assert_eq!(live.len(), 2, "vendorcorp provides two edges");
        for (i, g) in &live {
            assert_eq!(m.edges[*i].provider, "vendorcorp");
            let Some(old) = committed[*i].as_ref() else {
                panic!("routed");
            };
            assert!(
                (g.key.end.y - old.key.end.y - 50.0).abs() < 1e-9,
                "the port moves with the card"
            );
            assert_eq!(g.key.start, old.key.start, "the consumer's end stays");
            assert!(g.bbox.intersects(Rect {
                x: g.label.centre.x,
                y: g.label.centre.y,
                w: 0.0,
                h: 0.0
            }));
            assert_eq!(g.label.spot, old.label.spot, "the label keeps its spot");
            assert_eq!(g.label.text, old.label.text);
        }
        assert!(m
            .dragged_routes(&m.layout, &committed, "nobody", at)
            .is_empty());
        let hub = m.index_of("hub").unwrap_or(usize::MAX);
        assert_eq!(m.edges_of(hub).len(), 3);
    }
}
