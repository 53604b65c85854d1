//! The graph model of a topology and where every root starts: which
//! nodes are roots, which hang under which, which edges can be drawn, and
//! each root's first position — the server's layered layout
//! (`view.layout`, computed by `layered`) where the view carries one,
//! else a deterministic column layout computed here (a view from a test,
//! or from a server that sent no layout) — and then where the hub says the
//! operator left it. The card sizes the routes and components draw with
//! are here too, and the reading order both layouts' roots are listed in.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

use crate::canvas::geometry::{Point, Rect};
use crate::dto::{EdgeView, NodeKind, NodePosition, NodeView, TopologyView};

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

/// The canvas model of one topology: which nodes are roots, which hang
/// under which, which edges can be drawn, and where everything starts.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphModel {
    /// Root node ids (hub and systems, and any orphan) in reading order of
    /// [`Self::layout`] (column by column, top to bottom): the order they
    /// are drawn and tabbed through.
    pub roots: Vec<String>,
    /// Children of each root, agents first, then datasources, each by id.
    pub children: HashMap<String, Vec<String>>,
    /// The root each child hangs under.
    pub parent: HashMap<String, String>,
    /// Every node by id.
    pub nodes: HashMap<String, NodeView>,
    /// The edges whose two ends exist, in the order of the view.
    pub edges: Vec<EdgeView>,
    /// The initial (deterministic) top-left corner of every root: the
    /// view's layout where it places the root, else the column layout.
    pub layout: BTreeMap<String, Point>,
    /// Each edge's (consumer root, provider root) as indices in `roots`,
    /// so routing a thousand edges per frame does no string lookups.
    pub(super) edge_ends: Vec<(usize, usize)>,
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
    /// Builds the model and its initial layout: the view's layout for the
    /// roots it places, the column layout for any other. Same view, same
    /// positions.
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
        model.adopt(&finite_positions(&view.layout));
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

    /// Takes `served` (the server's layout) for the roots it places, and
    /// lists the roots in reading order of the positions that result.
    fn adopt(&mut self, served: &BTreeMap<String, Point>) {
        if served.is_empty() {
            return;
        }
        for (id, p) in self.layout.iter_mut() {
            if let Some(s) = served.get(id) {
                *p = *s;
            }
        }
        let layout = &self.layout;
        let at = |id: &str| layout.get(id).copied().unwrap_or_default();
        self.roots
            .sort_by(|a, b| reading_order((a, at(a)), (b, at(b))));
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
}

/// The positions the hub serves (where the operator left nodes), for the
/// layout to start from. Anything that is not a finite number is ignored
/// (the deterministic layout wins).
pub fn served_positions(view: &TopologyView) -> BTreeMap<String, Point> {
    finite_positions(&view.positions)
}

/// A list of positions by node; anything that is not a finite number is
/// left out.
fn finite_positions(list: &[NodePosition]) -> BTreeMap<String, Point> {
    list.iter()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .map(|p| (p.node.clone(), Point { x: p.x, y: p.y }))
        .collect()
}

/// Reading order of two roots' top-left corners: column by column (the
/// column whose band of `ROOT_W + COL_GAP` holds the card's centre), top
/// to bottom, then left to right, then by id.
pub(super) fn reading_order(a: (&str, Point), b: (&str, Point)) -> Ordering {
    let band = |p: Point| ((p.x + ROOT_W / 2.0) / (ROOT_W + COL_GAP)).floor();
    band(a.1)
        .total_cmp(&band(b.1))
        .then_with(|| a.1.y.total_cmp(&b.1.y))
        .then_with(|| a.1.x.total_cmp(&b.1.x))
        .then_with(|| a.0.cmp(b.0))
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
#[path = "layout_tests.rs"]
pub(crate) mod tests;
