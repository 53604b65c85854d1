//! The canvas geometry: a deterministic layout and the edge routes.
//!
//! Pure functions of a [`TopologyView`] and node positions, with no reactive
//! or browser code, so the server and the browser compute the same numbers
//! (hydration never sees a different picture) and tests can pin them down.
//!
//! Only *root* nodes (systems and the hub) are positioned. Agents and
//! datasources hang under their system at fixed offsets, so dragging a system
//! moves its children with it and the layout never has to place them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::css::push_fixed;
use crate::dto::{EdgeView, NodeKind, NodeView, TopologyView};

/// Width of a root node's card, in world pixels.
pub const ROOT_W: f64 = 240.0;
/// Height of a root node's card.
pub const ROOT_H: f64 = 112.0;
/// How far children are indented from their system's left edge.
pub const CHILD_INDENT: f64 = 24.0;
/// Height of one child node.
pub const CHILD_H: f64 = 30.0;
/// Vertical gap between children.
pub const CHILD_GAP: f64 = 8.0;
/// Gap between a system's card and its first child.
pub const CHILD_TOP: f64 = 12.0;
/// Horizontal gap between layout columns: edge labels sit in it.
pub const COL_GAP: f64 = 300.0;
/// Vertical gap between blocks of one column.
pub const ROW_GAP: f64 = 48.0;
/// A column taller than this wraps into a further column, so a large
/// topology stays roughly as wide as it is tall.
pub const MAX_COLUMN_H: f64 = 1400.0;
/// Length of the straight last stretch of an edge, where its label sits.
pub const LABEL_RUN: f64 = 150.0;
/// Preferred vertical distance between edge ports on one side of a card.
const PORT_SPACING: f64 = 24.0;

/// A point in world coordinates (before pan and zoom).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Point {
    /// Horizontal coordinate.
    pub x: f64,
    /// Vertical coordinate.
    pub y: f64,
}

/// An axis-aligned rectangle in world coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// Do the two rectangles overlap (touching counts)?
    pub fn intersects(self, o: Rect) -> bool {
        self.x <= o.x + o.w
            && o.x <= self.x + self.w
            && self.y <= o.y + o.h
            && o.y <= self.y + self.h
    }

    /// The rectangle grown by `m` on every side.
    pub fn grown(self, m: f64) -> Rect {
        Rect {
            x: self.x - m,
            y: self.y - m,
            w: self.w + 2.0 * m,
            h: self.h + 2.0 * m,
        }
    }
}

/// Which side of a card an edge leaves or enters by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The card's left side.
    Left,
    /// The card's right side.
    Right,
}

/// How one edge is drawn: its SVG path and where its label goes.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeGeom {
    /// SVG path data, ending at the provider's card (shared: a redraw
    /// that leaves the edge where it was reuses it).
    pub path: Arc<str>,
    /// Centre of the label (on the straight last stretch).
    pub label: Point,
    /// A box around the line, its label and its traffic line: what must
    /// be on screen for any of them to show (culling).
    pub bbox: Rect,
    /// What the path is computed from: same key, same path.
    key: RouteKey,
}

/// How far an edge's label and traffic line may reach beyond its path's
/// box (half a long label's width, a label and a traffic line's height).
const LABEL_REACH: f64 = 110.0;

/// The numbers an edge's path is a function of.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RouteKey {
    start: Point,
    end: Point,
    exit: Side,
    entry: Side,
}

/// The canvas model of one topology: which nodes are roots, which hang
/// under which, which edges can be drawn, and where everything starts.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphModel {
    /// Root node ids (hub and systems, and any orphan), column by column,
    /// top to bottom: the order they are drawn and tabbed through.
    pub roots: Vec<String>,
    /// Children of each root, agents first, then datasources, each by id.
    pub children: HashMap<String, Vec<String>>,
    /// The root each child hangs under.
    pub parent: HashMap<String, String>,
    /// Every node by id.
    pub nodes: HashMap<String, NodeView>,
    /// The edges whose two ends exist, in the order of the view.
    pub edges: Vec<EdgeView>,
    /// The initial (deterministic) top-left corner of every root.
    pub layout: BTreeMap<String, Point>,
    /// Each edge's (consumer root, provider root) as indices in `roots`,
    /// so routing a thousand edges per frame does no string lookups.
    edge_ends: Vec<(usize, usize)>,
    /// Each root's place in `roots`.
    root_index: HashMap<String, usize>,
    /// The edges with an end on each root (indices in `edges`), by root
    /// index: what a drag of that root moves.
    root_edges: Vec<Vec<usize>>,
}

/// Where a root sits in the column layout: consumers on the left,
/// providers on the right, so most edges run left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Consumer,
    Both,
    Provider,
    Unconnected,
}

impl GraphModel {
    /// Builds the model and its initial layout. Same view, same positions.
    pub fn build(view: &TopologyView) -> Self {
        let nodes: HashMap<String, NodeView> = view
            .nodes
            .iter()
            .map(|n| (n.id.clone(), n.clone()))
            .collect();

        let mut children: HashMap<String, Vec<String>> = HashMap::new();
        let mut parent = HashMap::new();
        let mut roots = Vec::new();
        for node in &view.nodes {
            let owner = match node.node_type {
                NodeKind::Agent | NodeKind::Datasource => node
                    .system
                    .as_ref()
                    .filter(|s| nodes.get(*s).is_some_and(is_root_kind)),
                NodeKind::System | NodeKind::Hub => None,
            };
            match owner {
                Some(system) => {
                    children
                        .entry(system.clone())
                        .or_default()
                        .push(node.id.clone());
                    parent.insert(node.id.clone(), system.clone());
                }
                // An agent whose system is missing is still drawn, as a root.
                None => roots.push(node.id.clone()),
            }
        }
        for list in children.values_mut() {
            list.sort_by(|a, b| child_rank(&nodes, a).cmp(&child_rank(&nodes, b)));
        }

        let root_of = |id: &str| -> Option<String> {
            if let Some(p) = parent.get(id) {
                Some(p.clone())
            } else {
                nodes.contains_key(id).then(|| id.to_string())
            }
        };
        let edges: Vec<EdgeView> = view
            .edges
            .iter()
            .filter(|e| root_of(&e.consumer).is_some() && root_of(&e.provider).is_some())
            .cloned()
            .collect();

        let mut model = GraphModel {
            roots,
            children,
            parent,
            nodes,
            edges,
            layout: BTreeMap::new(),
            edge_ends: Vec::new(),
            root_index: HashMap::new(),
            root_edges: Vec::new(),
        };
        model.lay_out();
        let index: HashMap<String, usize> = model
            .roots
            .iter()
            .enumerate()
            .map(|(i, r)| (r.clone(), i))
            .collect();
        let ends: Vec<(usize, usize)> = model
            .edges
            .iter()
            .map(|e| {
                let at = |id: &str| index.get(model.root_of(id)).copied().unwrap_or(usize::MAX);
                (at(&e.consumer), at(&e.provider))
            })
            .collect();
        let mut root_edges = vec![Vec::new(); model.roots.len()];
        for (i, &(c, p)) in ends.iter().enumerate() {
            if let Some(list) = root_edges.get_mut(c) {
                list.push(i);
            }
            if p != c {
                if let Some(list) = root_edges.get_mut(p) {
                    list.push(i);
                }
            }
        }
        model.edge_ends = ends;
        model.root_index = index;
        model.root_edges = root_edges;
        model
    }

    /// A root's place in [`Self::roots`].
    pub fn index_of(&self, root: &str) -> Option<usize> {
        self.root_index.get(root).copied()
    }

    /// The edges with an end on the root at `index` (indices in
    /// [`Self::edges`]).
    pub fn edges_of(&self, index: usize) -> &[usize] {
        self.root_edges.get(index).map_or(&[], Vec::as_slice)
    }

    /// The box of the root at `index`'s whole block (card and children)
    /// at `pos`.
    pub fn block_rect(&self, index: usize, pos: Point) -> Rect {
        let h = self
            .roots
            .get(index)
            .map_or(ROOT_H, |r| self.block_height(r));
        Rect {
            x: pos.x,
            y: pos.y,
            w: ROOT_W,
            h,
        }
    }

    /// Is there anything to draw besides the hub? The empty state says so
    /// when there is not.
    pub fn has_systems(view: &TopologyView) -> bool {
        view.nodes.iter().any(|n| n.node_type == NodeKind::System)
    }

    /// The root a node is drawn under (itself for a root).
    pub fn root_of<'a>(&'a self, id: &'a str) -> &'a str {
        self.parent.get(id).map(String::as_str).unwrap_or(id)
    }

    /// Height of a root's whole block: its card and its children.
    pub fn block_height(&self, root: &str) -> f64 {
        let n = self.children.get(root).map_or(0, Vec::len);
        if n == 0 {
            ROOT_H
        } else {
            ROOT_H + CHILD_TOP + n as f64 * CHILD_H + (n as f64 - 1.0) * CHILD_GAP
        }
    }

    /// Top-left offset of a root's `index`-th child from the root's corner.
    pub fn child_offset(index: usize) -> Point {
        Point {
            x: CHILD_INDENT,
            y: ROOT_H + CHILD_TOP + index as f64 * (CHILD_H + CHILD_GAP),
        }
    }

    /// Starting positions: the layout, overridden by positions the user
    /// has dragged roots to (which survive a refetch of the topology).
    pub fn initial_positions(&self, moved: &BTreeMap<String, Point>) -> BTreeMap<String, Point> {
        self.layout
            .iter()
            .map(|(id, p)| (id.clone(), moved.get(id).copied().unwrap_or(*p)))
            .collect()
    }

    /// The box around every node at the given positions.
    pub fn bounds(&self, positions: &BTreeMap<String, Point>) -> Rect {
        let mut min = Point {
            x: f64::INFINITY,
            y: f64::INFINITY,
        };
        let mut max = Point {
            x: f64::NEG_INFINITY,
            y: f64::NEG_INFINITY,
        };
        for root in &self.roots {
            let Some(p) = positions.get(root) else {
                continue;
            };
            min.x = min.x.min(p.x);
            min.y = min.y.min(p.y);
            max.x = max.x.max(p.x + ROOT_W);
            max.y = max.y.max(p.y + self.block_height(root));
        }
        if !min.x.is_finite() {
            return Rect::default();
        }
        Rect {
            x: min.x,
            y: min.y,
            w: max.x - min.x,
            h: max.y - min.y,
        }
    }

    /// Column layout: consumers (and the hub) left, providers right, each
    /// column sorted by id (hub first), wrapped when too tall, centred
    /// vertically on the tallest.
    fn lay_out(&mut self) {
        // Which roots provide and consume over an edge: one pass over the
        // edges (asking per root was roots × edges lookups at hydration).
        let mut provider_ends: std::collections::HashSet<&str> = Default::default();
        let mut consumer_ends: std::collections::HashSet<&str> = Default::default();
        for e in &self.edges {
            provider_ends.insert(self.root_of(&e.provider));
            consumer_ends.insert(self.root_of(&e.consumer));
        }
        let mut columns: BTreeMap<Role, Vec<String>> = BTreeMap::new();
        for root in &self.roots {
            columns
                .entry(self.role(root, &provider_ends, &consumer_ends))
                .or_default()
                .push(root.clone());
        }
        let mut stacks: Vec<Vec<String>> = Vec::new();
        for (_, mut ids) in columns {
            ids.sort_by(|a, b| {
                let hub = |id: &String| {
                    self.nodes
                        .get(id)
                        .is_none_or(|n| n.node_type != NodeKind::Hub)
                };
                hub(a).cmp(&hub(b)).then_with(|| a.cmp(b))
            });
            let mut stack: Vec<String> = Vec::new();
            let mut height = 0.0;
            for id in ids {
                let h = self.block_height(&id);
                if !stack.is_empty() && height + ROW_GAP + h > MAX_COLUMN_H {
                    stacks.push(std::mem::take(&mut stack));
                    height = 0.0;
                }
                height += if stack.is_empty() { h } else { ROW_GAP + h };
                stack.push(id);
            }
            if !stack.is_empty() {
                stacks.push(stack);
            }
        }
        let heights: Vec<f64> = stacks
            .iter()
            .map(|s| {
                s.iter().map(|id| self.block_height(id)).sum::<f64>()
                    + ROW_GAP * (s.len() as f64 - 1.0)
            })
            .collect();
        let tallest = heights.iter().copied().fold(0.0, f64::max);
        for (col, (stack, height)) in stacks.iter().zip(heights).enumerate() {
            let x = col as f64 * (ROOT_W + COL_GAP);
            let mut y = ((tallest - height) / 2.0).floor();
            for id in stack {
                self.layout.insert(id.clone(), Point { x, y });
                y += self.block_height(id) + ROW_GAP;
            }
        }
        // Document order = reading order (column by column, top to
        // bottom), so Tab walks the canvas the way the eye does.
        self.roots = stacks.into_iter().flatten().collect();
    }

    fn role(
        &self,
        id: &str,
        provider_ends: &std::collections::HashSet<&str>,
        consumer_ends: &std::collections::HashSet<&str>,
    ) -> Role {
        let Some(node) = self.nodes.get(id) else {
            return Role::Unconnected;
        };
        if node.node_type == NodeKind::Hub {
            return Role::Consumer;
        }
        let provides = !node.provides.is_empty() || provider_ends.contains(id);
        let consumes = !node.consumes.is_empty() || consumer_ends.contains(id);
        match (consumes, provides) {
            (true, false) => Role::Consumer,
            (true, true) => Role::Both,
            (false, true) => Role::Provider,
            (false, false) => Role::Unconnected,
        }
    }

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
    /// its label sits: labels land in the gaps between columns rather than
    /// on top of cards. Edges sharing a side of a card get distinct ports,
    /// ordered by where their other end is, so they do not cross needlessly.
    ///
    /// This runs on every frame of a drag: everything is indexed, and an
    /// edge whose route did not change keeps its path text from `prev`.
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
            let reused = prev
                .and_then(|p| p.get(i))
                .and_then(|g| g.as_ref())
                .filter(|g| g.key == key)
                .cloned();
            out.push(Some(reused.unwrap_or_else(|| route(key))));
        }
        out
    }
}

impl GraphModel {
    /// The routes of the edges of `root` while it is dragged to `at`, by
    /// edge index, from their `committed` routes at `positions`: each end
    /// keeps its port (the dragged end moves with its card, the other end
    /// stays put) and only the sides are chosen again. Nothing else moves
    /// mid-drag: the ports of other edges are spread again on the drop
    /// ([`Self::edge_routes`]), so a drag repaints only its own edges.
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
            out.push((i, route(route_key(from, to, exit, entry, offsets))));
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

/// The positions the hub serves (where the operator left nodes), for the
/// layout to start from. Anything that is not a finite number is ignored
/// (the deterministic layout wins).
pub fn served_positions(view: &TopologyView) -> BTreeMap<String, Point> {
    view.positions
        .iter()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .map(|p| (p.node.clone(), Point { x: p.x, y: p.y }))
        .collect()
}

/// The path and label of one edge from its route's numbers.
fn route(key: RouteKey) -> EdgeGeom {
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
    let mut path = String::with_capacity(72);
    for (i, v) in [sx, ys, c1.x, c1.y, c2.x, c2.y, lx, ye, ex, ye]
        .into_iter()
        .enumerate()
    {
        path.push_str(["M", ",", " C", ",", " ", ",", " ", ",", " L", ","][i]);
        push_fixed(&mut path, v, 1);
    }
    // The curve stays inside its control points' box.
    let xs = [sx, c1.x, c2.x, lx, ex];
    let (x0, x1) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let (y0, y1) = (ys.min(ye), ys.max(ye));
    EdgeGeom {
        path: path.into(),
        label: Point {
            x: (lx + ex) / 2.0,
            y: ye,
        },
        bbox: Rect {
            x: x0,
            y: y0,
            w: x1 - x0,
            h: y1 - y0,
        }
        .grown(LABEL_REACH),
        key,
    }
}

fn is_root_kind(n: &NodeView) -> bool {
    matches!(n.node_type, NodeKind::System | NodeKind::Hub)
}

fn child_rank<'a>(nodes: &'a HashMap<String, NodeView>, id: &'a str) -> (u8, &'a str) {
    let kind = match nodes.get(id).map(|n| n.node_type) {
        Some(NodeKind::Agent) => 0,
        _ => 1,
    };
    (kind, id)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::dto::{CapabilityKind, CapabilityRef, NodeStatus, RuleView};

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
            id: format!("{consumer}->{provider}:{capability}"),
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
    fn every_edge_is_routed_and_labels_do_not_collide() {
        let m = GraphModel::build(&demo());
        let g = m.edge_geometry(&m.layout);
        assert_eq!(g.len(), 6);
        let labels: Vec<Point> = g.values().map(|e| e.label).collect();
        for (i, a) in labels.iter().enumerate() {
            for b in &labels[i + 1..] {
                let apart = (a.x - b.x).abs() >= 120.0 || (a.y - b.y).abs() >= 20.0;
                assert!(apart, "labels {a:?} and {b:?} overlap");
            }
        }
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
                x: g.label.x,
                y: g.label.y,
                w: 0.0,
                h: 0.0
            }));
        }
        assert!(m
            .dragged_routes(&m.layout, &committed, "nobody", at)
            .is_empty());
        let hub = m.index_of("hub").unwrap_or(usize::MAX);
        assert_eq!(m.edges_of(hub).len(), 3);
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
}
