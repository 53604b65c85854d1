//! The layered layout the server computes for every view it serves
//! (`view.layout`): where each root (the hub and the systems; agents and
//! datasources hang under their system) starts, drawn as a layered
//! (Sugiyama-style) graph so that capabilities flow left to right:
//!
//! 1. **Cycles broken**: the roots are put in one sequence in which most
//!    edges run forward, consumer before provider (Eades, Lin and Smyth's
//!    greedy heuristic: the hub first, then repeatedly a sink to the
//!    right end, a source to the left end, or else the root with the most
//!    outgoing minus incoming edges; a tie goes to the root consuming the
//!    most of the others tied, then to the smallest id). An edge running
//!    backward in it is read reversed for the layering only.
//! 2. **Layers**: a root's layer is one past the deepest of its consumers
//!    earlier in the sequence (longest path), so the hub and the pure
//!    consumers open the first layer; roots with no edge at all get a last
//!    layer of their own.
//! 3. **Columns**: a layer's blocks are stacked top to bottom with their
//!    real heights and `ROW_GAP`, layers `ROOT_W + COL_GAP` apart, a layer
//!    taller than `MAX_COLUMN_H` wrapped into further columns. A graph
//!    deeper than it is wide (a ring of a hundred systems is a hundred
//!    layers) would run off to the right, so when a column per layer
//!    would be wider than [`MAX_LAYERED_W`], consecutive layers share a
//!    column (the earlier on top), in columns no taller than the least
//!    height that fits that width, and never taller than `MAX_COLUMN_H`.
//!    Columns are centred vertically on the tallest.
//! 4. **Order**: crossings are reduced by barycenter sweeps, alternately
//!    left to right and right to left: a layer's blocks are sorted by the
//!    mean vertical position of their neighbours' cards on the side
//!    already swept, whatever layer those are in (a long edge needs no
//!    dummy node), and the positions are stacked again; the hub stays on
//!    top of the first column. The order after the sweep with the fewest
//!    crossings ([`crossings`]) is kept.
//! 5. **Pins**: a root the operator put somewhere (`view.positions`) stays
//!    there and is an obstacle: it takes no room in its layer, and an
//!    auto-placed block that would meet it is pushed down its column past
//!    it (and the blocks below with it), so no two blocks overlap.
//!
//! Pure and deterministic: the same roots, edges, block heights and pins
//! give the same positions, whatever order the view lists them in. Only
//! the server compiles this (feature `ssr`): the browser draws the layout
//! it is sent, and computes the column layout only for a view without
//! one. [`fill_layout`] remembers its last few answers, keyed by exactly
//! what the layout depends on, so a page load of an unchanged exchange
//! does not compute it again. Why this is written here rather than taken
//! from a crate: NOTES.md, "Canvas layout".

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use super::layout::{reading_order, served_positions, GraphModel};
use super::layout::{COL_GAP, MAX_COLUMN_H, ROOT_H, ROOT_W, ROW_GAP};
use crate::canvas::geometry::{Point, Rect};
use crate::dto::{NodeKind, NodePosition, TopologyView};

/// The widest the layout may grow (world pixels) before consecutive
/// layers share a column: four of the tallest columns side by side.
pub const MAX_LAYERED_W: f64 = 4.0 * MAX_COLUMN_H;

/// Crossing-reduction sweeps, alternately left to right and right to
/// left.
const SWEEPS: usize = 8;

/// How many laid-out graphs [`fill_layout`] remembers (the whole
/// exchange's and a few members' parts).
const REMEMBERED: usize = 8;

/// What the layout depends on, and nothing else: the key of the memo.
#[derive(Debug, Clone, PartialEq)]
struct Graph {
    /// Root ids: the hub first, then by id.
    ids: Vec<String>,
    /// Each root's block height (card and children).
    heights: Vec<f64>,
    /// Whether `ids[0]` is the hub.
    hub: bool,
    /// Consumer → provider (indices in `ids`), once per pair, between two
    /// different roots, sorted.
    edges: Vec<(usize, usize)>,
    /// Where the operator left each root, if they did.
    pinned: Vec<Option<Point>>,
}

impl Graph {
    fn of(model: &GraphModel, pinned: &BTreeMap<String, Point>) -> Self {
        let is_hub = |id: &str| {
            model
                .nodes
                .get(id)
                .is_some_and(|n| n.node_type == NodeKind::Hub)
        };
        let mut ids = model.roots.clone();
        ids.sort_by(|a, b| is_hub(b).cmp(&is_hub(a)).then_with(|| a.cmp(b)));
        let at: HashMap<&str, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        let index = |root: usize| -> Option<usize> {
            model
                .roots
                .get(root)
                .and_then(|id| at.get(id.as_str()).copied())
        };
        let mut edges: Vec<(usize, usize)> = model
            .edge_ends
            .iter()
            .filter_map(|&(c, p)| Some((index(c)?, index(p)?)))
            .filter(|(c, p)| c != p)
            .collect();
        edges.sort_unstable();
        edges.dedup();
        Graph {
            hub: ids.first().is_some_and(|id| is_hub(id)),
            heights: ids.iter().map(|id| model.block_height(id)).collect(),
            pinned: ids.iter().map(|id| pinned.get(id).copied()).collect(),
            ids,
            edges,
        }
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// The layered layout of `model`'s roots around the `pinned` ones (which
/// keep their place): every root's top-left corner.
pub fn layered_layout(
    model: &GraphModel,
    pinned: &BTreeMap<String, Point>,
) -> BTreeMap<String, Point> {
    let graph = Graph::of(model, pinned);
    let points = lay_out(&graph);
    graph.ids.into_iter().zip(points).collect()
}

/// Fills `view.layout` with the layered layout of its roots, pinned where
/// `view.positions` put them, in reading order. The last few answers are
/// remembered by what they depend on (roots, block heights, edges, pins).
pub fn fill_layout(view: &mut TopologyView) {
    static REMEMBER: Mutex<Vec<(Graph, Arc<Vec<NodePosition>>)>> = Mutex::new(Vec::new());
    let graph = Graph::of(&GraphModel::build(view), &served_positions(view));
    // A panic elsewhere while holding the lock leaves a list that is still
    // whole: take it.
    let recalled = {
        let mut memo = REMEMBER.lock().unwrap_or_else(|e| e.into_inner());
        let hit = memo.iter().position(|(key, _)| *key == graph);
        hit.map(|i| {
            let entry = memo.remove(i);
            let spots = entry.1.clone();
            memo.insert(0, entry);
            spots
        })
    };
    let spots = match recalled {
        Some(spots) => spots,
        None => {
            let points = lay_out(&graph);
            let mut list: Vec<NodePosition> = graph
                .ids
                .iter()
                .zip(&points)
                .map(|(id, p)| NodePosition {
                    node: id.clone(),
                    x: p.x,
                    y: p.y,
                })
                .collect();
            list.sort_by(|a, b| {
                reading_order(
                    (&a.node, Point { x: a.x, y: a.y }),
                    (&b.node, Point { x: b.x, y: b.y }),
                )
            });
            let spots = Arc::new(list);
            let mut memo = REMEMBER.lock().unwrap_or_else(|e| e.into_inner());
            // Another request may have laid out the same graph meanwhile.
            memo.retain(|(key, _)| *key != graph);
            memo.insert(0, (graph, spots.clone()));
            memo.truncate(REMEMBERED);
            spots
        }
    };
    view.layout = spots.as_ref().clone();
}

/// How many pairs of `model`'s edges cross when each is drawn straight
/// from card centre to card centre at `positions` (edges without a
/// position at both ends left out; two edges sharing an end, or lying on
/// one line, do not count). The measure the sweeps keep the best order
/// by, and what compares one layout with another.
pub fn crossings(model: &GraphModel, positions: &BTreeMap<String, Point>) -> usize {
    let graph = Graph::of(model, &BTreeMap::new());
    let points: Vec<Option<Point>> = graph
        .ids
        .iter()
        .map(|id| positions.get(id).copied())
        .collect();
    count_crossings(&points, &graph.edges)
}

/// Every root's top-left corner, by index in `g.ids`.
fn lay_out(g: &Graph) -> Vec<Point> {
    let n = g.len();
    let mut neighbours: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(c, p) in &g.edges {
        neighbours[c].push(p);
        neighbours[p].push(c);
    }
    let layer = layers(g, &sequence(g));
    let depth = layer.iter().copied().max().map_or(0, |d| d + 1);
    // Each layer's auto-placed roots, by index (the hub first, then by id).
    let mut order: Vec<Vec<usize>> = vec![Vec::new(); depth];
    for v in (0..n).filter(|&v| g.pinned[v].is_none()) {
        order[layer[v]].push(v);
    }
    let groups = share_columns(g, &order);

    let mut best_order = order.clone();
    let mut points = place(g, &order, &groups);
    let mut best = count_crossings(&points, &g.edges);
    for sweep in 0..SWEEPS {
        if best == 0 {
            break;
        }
        let forward = sweep % 2 == 0;
        let layers: Vec<usize> = if forward {
            (1..depth).collect()
        } else {
            (0..depth.saturating_sub(1)).rev().collect()
        };
        for l in layers {
            let centre = |v: usize| points[v].map_or(0.0, |p| p.y + ROOT_H / 2.0);
            let key = |v: usize| {
                if g.hub && v == 0 {
                    // The hub stays on top of the first column.
                    return f64::NEG_INFINITY;
                }
                let swept = neighbours[v]
                    .iter()
                    .filter(|&&u| if forward { layer[u] < l } else { layer[u] > l })
                    .filter(|&&u| points[u].is_some());
                let (sum, count) = swept.fold((0.0, 0usize), |(s, c), &u| (s + centre(u), c + 1));
                if count == 0 {
                    centre(v)
                } else {
                    sum / count as f64
                }
            };
            let mut keyed: Vec<(f64, usize, usize)> = order[l]
                .iter()
                .enumerate()
                .map(|(at, &v)| (key(v), at, v))
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            order[l] = keyed.into_iter().map(|(_, _, v)| v).collect();
            points = place(g, &order, &groups);
        }
        let count = count_crossings(&points, &g.edges);
        if count < best {
            best = count;
            best_order = order.clone();
        }
    }
    let columns = columns(g, &best_order, &groups);
    let planned = stack(g, &columns);
    keep_clear(g, &columns, planned)
}

/// The roots in one sequence in which most edges run forward, consumer
/// before provider (the module's step 1): each root's place in it.
fn sequence(g: &Graph) -> Vec<usize> {
    let n = g.len();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut inn: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(c, p) in &g.edges {
        out[c].push(p);
        inn[p].push(c);
    }
    let mut left = Peeling {
        alive: vec![true; n],
        out: out.iter().map(Vec::len).collect(),
        inn: inn.iter().map(Vec::len).collect(),
    };
    let (mut front, mut back) = (Vec::with_capacity(n), Vec::new());
    if g.hub && n > 0 {
        front.push(0);
        left.take(0, &out, &inn);
    }
    while front.len() + back.len() < n {
        let live: Vec<usize> = (0..n).filter(|&v| left.alive[v]).collect();
        if let Some(&v) = live.iter().find(|&&v| left.out[v] == 0) {
            back.push(v);
            left.take(v, &out, &inn);
            continue;
        }
        if let Some(&v) = live.iter().find(|&&v| left.inn[v] == 0) {
            front.push(v);
            left.take(v, &out, &inn);
            continue;
        }
        let delta = |v: usize| left.out[v] as isize - left.inn[v] as isize;
        let top = live.iter().map(|&v| delta(v)).max().unwrap_or(0);
        let mut is_tied = vec![false; n];
        for &v in live.iter().filter(|&&v| delta(v) == top) {
            is_tied[v] = true;
        }
        // The tied root consuming the most of the others goes first: they
        // are its providers. `max_by_key` keeps the last of equals, so the
        // ties are walked from the largest index down.
        let pick = (0..n)
            .rev()
            .filter(|&v| is_tied[v])
            .max_by_key(|&v| out[v].iter().filter(|&&u| is_tied[u]).count())
            .unwrap_or(0);
        front.push(pick);
        left.take(pick, &out, &inn);
    }
    let mut place = vec![0; n];
    for (at, &v) in front.iter().chain(back.iter().rev()).enumerate() {
        place[v] = at;
    }
    place
}

/// The roots not yet sequenced, and their edges to each other.
struct Peeling {
    alive: Vec<bool>,
    /// Edges to providers still alive, by root.
    out: Vec<usize>,
    /// Edges from consumers still alive, by root.
    inn: Vec<usize>,
}

impl Peeling {
    fn take(&mut self, v: usize, out: &[Vec<usize>], inn: &[Vec<usize>]) {
        self.alive[v] = false;
        for &u in &out[v] {
            self.inn[u] -= 1;
        }
        for &u in &inn[v] {
            self.out[u] -= 1;
        }
    }
}

/// Each root's layer (the module's step 2), given its place in the
/// sequence.
fn layers(g: &Graph, place: &[usize]) -> Vec<usize> {
    let n = g.len();
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut linked = vec![false; n];
    for &(c, p) in &g.edges {
        let (first, then) = if place[c] < place[p] { (c, p) } else { (p, c) };
        consumers[then].push(first);
        linked[c] = true;
        linked[p] = true;
    }
    let mut by_place: Vec<usize> = (0..n).collect();
    by_place.sort_by_key(|&v| place[v]);
    let mut layer = vec![0; n];
    for &v in &by_place {
        layer[v] = consumers[v]
            .iter()
            .map(|&u| layer[u] + 1)
            .max()
            .unwrap_or(0);
    }
    let apart = layer.iter().copied().max().unwrap_or(0) + 1;
    for v in 0..n {
        let the_hub = g.hub && v == 0;
        if !linked[v] && !the_hub {
            layer[v] = apart;
        }
    }
    // Number the layers in use without a gap (with neither a hub nor an
    // edge, every root would be in layer 1).
    let mut used: Vec<usize> = layer.clone();
    used.sort_unstable();
    used.dedup();
    layer
        .iter()
        .map(|l| used.binary_search(l).unwrap_or(0))
        .collect()
}

/// Which consecutive layers share a column (the module's step 3): groups
/// of layer indices, each drawn as one column, or as several when it is
/// one layer taller than `MAX_COLUMN_H`. Layers with no auto-placed root
/// take no column.
fn share_columns(g: &Graph, order: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let height = |l: &[usize]| stacked(g, l);
    let heights: Vec<(usize, f64)> = order
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| (i, height(l)))
        .collect();
    let group = |budget: f64| -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut used = f64::INFINITY;
        for &(l, h) in &heights {
            let fits = used + ROW_GAP + h <= budget && h <= MAX_COLUMN_H;
            match groups.last_mut() {
                Some(last) if fits => {
                    last.push(l);
                    used += ROW_GAP + h;
                }
                _ => {
                    groups.push(vec![l]);
                    used = if h > MAX_COLUMN_H { f64::INFINITY } else { h };
                }
            }
        }
        groups
    };
    let width = |groups: &[Vec<usize>]| {
        let n = columns(g, order, groups).len() as f64;
        n * (ROOT_W + COL_GAP) - COL_GAP
    };
    let alone = group(0.0);
    if width(&alone) <= MAX_LAYERED_W {
        return alone;
    }
    // The least budget that fits the width (the column count only falls
    // as the budget grows), or the tallest column allowed.
    let (mut low, mut high) = (0u32, MAX_COLUMN_H as u32);
    if width(&group(f64::from(high))) > MAX_LAYERED_W {
        return group(f64::from(high));
    }
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if width(&group(f64::from(mid))) <= MAX_LAYERED_W {
            high = mid;
        } else {
            low = mid;
        }
    }
    group(f64::from(high))
}

/// Height of a stack of roots: their blocks and the gaps between them.
fn stacked(g: &Graph, roots: &[usize]) -> f64 {
    let blocks: f64 = roots.iter().map(|&v| g.heights[v]).sum();
    blocks + ROW_GAP * roots.len().saturating_sub(1) as f64
}

/// The columns, left to right, each its roots top to bottom: a group's
/// layers one under the other, a lone layer taller than `MAX_COLUMN_H`
/// wrapped.
fn columns(g: &Graph, order: &[Vec<usize>], groups: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut columns = Vec::new();
    for group in groups {
        let roots: Vec<usize> = group
            .iter()
            .flat_map(|&l| order[l].iter().copied())
            .collect();
        if stacked(g, &roots) <= MAX_COLUMN_H {
            columns.push(roots);
            continue;
        }
        let mut column: Vec<usize> = Vec::new();
        let mut height = 0.0;
        for v in roots {
            let h = g.heights[v];
            if !column.is_empty() && height + ROW_GAP + h > MAX_COLUMN_H {
                columns.push(std::mem::take(&mut column));
                height = 0.0;
            }
            height += if column.is_empty() { h } else { ROW_GAP + h };
            column.push(v);
        }
        if !column.is_empty() {
            columns.push(column);
        }
    }
    columns
}

/// Every auto-placed root's corner in `columns`, centred vertically on
/// the tallest column; the pinned ones where they were left.
fn stack(g: &Graph, columns: &[Vec<usize>]) -> Vec<Option<Point>> {
    let mut points: Vec<Option<Point>> = g.pinned.clone();
    let tallest = columns.iter().map(|c| stacked(g, c)).fold(0.0, f64::max);
    for (at, column) in columns.iter().enumerate() {
        let x = at as f64 * (ROOT_W + COL_GAP);
        let mut y = ((tallest - stacked(g, column)) / 2.0).floor();
        for &v in column {
            points[v] = Some(Point { x, y });
            y += g.heights[v] + ROW_GAP;
        }
    }
    points
}

/// The corners of the blocks in `order`, grouped into columns.
fn place(g: &Graph, order: &[Vec<usize>], groups: &[Vec<usize>]) -> Vec<Option<Point>> {
    stack(g, &columns(g, order, groups))
}

/// The planned corners with every auto-placed block pushed down its
/// column until it meets no pinned block, the blocks below it following
/// (the module's step 5).
fn keep_clear(g: &Graph, columns: &[Vec<usize>], planned: Vec<Option<Point>>) -> Vec<Point> {
    let pins: Vec<Rect> = (0..g.len())
        .filter_map(|v| g.pinned[v].map(|p| block(g, v, p)))
        .collect();
    let mut points: Vec<Point> = planned.into_iter().map(Option::unwrap_or_default).collect();
    for column in columns {
        let mut floor = f64::NEG_INFINITY;
        for &v in column {
            let mut at = points[v];
            at.y = at.y.max(floor);
            // Each step moves the block below a pin it met, which it then
            // never meets again: at most one step per pin. (Only far out,
            // where adding a gap no longer changes a number, could a step
            // stay put: the block is then left where it is.)
            while let Some(below) = pins
                .iter()
                .filter(|pin| block(g, v, at).intersects(pin.grown(ROW_GAP / 2.0)))
                .map(|pin| pin.y + pin.h + ROW_GAP)
                .reduce(f64::max)
            {
                if below <= at.y {
                    break;
                }
                at.y = below;
            }
            points[v] = at;
            floor = at.y + g.heights[v] + ROW_GAP;
        }
    }
    points
}

/// The box of root `v`'s block at `at`.
fn block(g: &Graph, v: usize, at: Point) -> Rect {
    Rect {
        x: at.x,
        y: at.y,
        w: ROOT_W,
        h: g.heights[v],
    }
}

/// Crossings of `edges` drawn straight between card centres (see
/// [`crossings`]). Segments are compared only when their horizontal
/// spans meet.
fn count_crossings(points: &[Option<Point>], edges: &[(usize, usize)]) -> usize {
    let centre = |p: Point| Point {
        x: p.x + ROOT_W / 2.0,
        y: p.y + ROOT_H / 2.0,
    };
    let mut segments: Vec<(Point, Point)> = edges
        .iter()
        .filter_map(|&(a, b)| Some((centre((*points.get(a)?)?), centre((*points.get(b)?)?))))
        .collect();
    let left = |s: &(Point, Point)| s.0.x.min(s.1.x);
    let right = |s: &(Point, Point)| s.0.x.max(s.1.x);
    segments.sort_by(|a, b| left(a).total_cmp(&left(b)));
    let mut count = 0;
    for (i, a) in segments.iter().enumerate() {
        for b in segments.iter().skip(i + 1) {
            if left(b) > right(a) {
                break;
            }
            if cross(*a, *b) {
                count += 1;
            }
        }
    }
    count
}

/// Do two segments cross at a point inside both?
fn cross(a: (Point, Point), b: (Point, Point)) -> bool {
    let turn = |p: Point, q: Point, r: Point| (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x);
    let sides = |s: (Point, Point), t: (Point, Point)| turn(s.0, s.1, t.0) * turn(s.0, s.1, t.1);
    sides(a, b) < 0.0 && sides(b, a) < 0.0
}

#[cfg(test)]
#[path = "layered_tests.rs"]
mod tests;
