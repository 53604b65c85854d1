//! The state of one drawn graph, shared by context with everything the
//! scene renders: the model, where every root is, each edge's route and
//! health, what is highlighted or selected, and the interactions in
//! progress (a pointer gesture, a connection being dragged, the chooser).
//!
//! Rebuilt with every topology load the canvas draws; what must outlive a
//! redraw (this tab's moves, drawer answers, drafts) is page-wide state in
//! [`CanvasCtx`]. Only data and reads live here: what pointer and keyboard
//! events do to it is the controller's (`interaction::controller`, above
//! this module).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use leptos::prelude::*;
use leptos::reactive::computed::Selector;

use crate::canvas::connect::{Candidate, Connections};
use crate::canvas::cull::{self, ASSUMED_VIEWPORT, CULL_MIN_ROOTS};
use crate::canvas::graph::{served_positions, EdgeGeom, GraphModel, Point, Rect};
use crate::canvas::health::{edge_health, effective_health, Health};
use crate::canvas::state::{CanvasCtx, Selection};
use crate::canvas::viewport::Camera;
use crate::dto::{EdgeView, TopologyView};

/// A pointer gesture in progress.
#[derive(Debug, Clone)]
pub(crate) enum Gesture {
    /// Dragging the background pans.
    Pan {
        pointer: i32,
        start: Point,
        camera: Camera,
    },
    /// Dragging a node (or one of its children) moves its root.
    Move {
        pointer: i32,
        root: String,
        start: Point,
        origin: Point,
        moved: bool,
    },
    /// Dragging from a node's handle draws a connection.
    Connect {
        pointer: i32,
        source: String,
        start: Point,
        moved: bool,
    },
}

/// A connection being dragged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConnectDrag {
    /// The root it starts from.
    pub source: String,
    /// The roots it may be dropped on.
    pub legal: Arc<HashSet<String>>,
}

/// A root being dragged, where the pointer has taken it so far. Only the
/// root's own card and its edges follow it (on a layer above the graph);
/// the committed positions change once, on the drop.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LiveDrag {
    /// The dragged root's id.
    pub root: String,
    /// Where its top-left corner is now (world coordinates).
    pub at: Point,
}

/// What the scene draws in detail close up: roots and edges by index (in
/// `model.roots` and `model.edges`), in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Drawn {
    /// Roots drawn (with their children).
    pub roots: Vec<usize>,
    /// Edges drawn (line, label and traffic line).
    pub edges: Vec<usize>,
}

/// The open chooser.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chooser {
    /// What the chooser asks.
    pub title: String,
    /// The legal connections to choose from.
    pub options: Vec<Candidate>,
    /// Where to show it (canvas pixels); `None`: the top of the canvas.
    pub anchor: Option<Point>,
    /// Test id of what gets focus back when it closes.
    pub return_focus: String,
}

/// The scene's state, shared with its nodes, edges, minimap and drawer.
#[derive(Clone)]
pub(crate) struct SceneCtx {
    /// Roots, children, edges and the initial layout.
    pub model: Arc<GraphModel>,
    /// The topology as served (capabilities, rules, reload error).
    pub view: Arc<TopologyView>,
    /// [`TopologyLoad::seq`](crate::canvas::state::TopologyLoad::seq) of
    /// the load drawn.
    pub seq: u64,
    /// Top-left corner of every root, as committed (a drag commits its
    /// root's on the drop; see [`Self::drag`]).
    pub positions: RwSignal<BTreeMap<String, Point>>,
    /// The drag in progress, if any: where the dragged root is right now.
    pub drag: RwSignal<Option<LiveDrag>>,
    /// Whether the camera is far out: blocks instead of cards.
    pub far: Memo<bool>,
    /// What is drawn in detail (close up): every root and edge of a small
    /// graph, the ones near the screen of a large one (far out, the detail
    /// is hidden and this keeps what it was).
    pub drawn: Memo<Drawn>,
    /// Each edge's route, in the order of `model.edges`: one signal per
    /// edge, set only when that edge moved, so a drag touches only the
    /// edges it moves (a thousand readers of one shared value would all
    /// re-run, and re-subscribe, on every frame).
    pub edge_geom: Arc<Vec<RwSignal<Option<EdgeGeom>>>>,
    /// Each edge's label box (with its traffic line), in the order of
    /// `model.edges` (`None`: not drawn): what observed labels keep clear
    /// of, and what the controls' cover reads. Set when a drop moves them.
    pub label_boxes: RwSignal<Arc<Vec<Option<Rect>>>>,
    /// Whether each edge's label lies under one of the canvas's controls
    /// (`components::cover`), in the order of `model.edges`: one signal per
    /// edge, set only when it changes.
    pub covered: Arc<Vec<RwSignal<bool>>>,
    /// The observed edges (by id) whose labels lie under a control.
    pub covered_observed: RwSignal<BTreeSet<String>>,
    /// The box around the drawn graph.
    pub bounds: Memo<Rect>,
    /// Each root's health and whether it came live, by root id: edges and
    /// nodes read these instead of the page-wide live map.
    pub root_health: Arc<HashMap<String, Memo<(Health, bool)>>>,
    /// Which edge or node is highlighted, as a per-key selector.
    pub highlighted: Selector<Option<String>>,
    /// What the drawer shows, as a per-key selector.
    pub selected: Selector<Option<Selection>>,
    /// The root being dragged: its edges are lifted out of the graph onto
    /// the drag overlay for the drag (see `components::drag`), its card
    /// onto a composited layer of its own.
    pub dragging: RwSignal<Option<String>>,
    /// [`Self::dragging`] as a per-key selector.
    pub lifted: Selector<Option<String>>,
    /// The pointer gesture in progress.
    pub gesture: StoredValue<Option<Gesture>>,
    /// Set when a drag ends, so the click the browser fires after it does
    /// not also open the drawer.
    pub suppress_click: StoredValue<bool>,
    /// The connections the rules allow, and which are made.
    pub connections: Arc<Connections>,
    /// A connection being dragged: its source and legal targets.
    pub connecting: RwSignal<Option<ConnectDrag>>,
    /// The dragged connection's loose end (world coordinates).
    pub connect_cursor: RwSignal<Option<Point>>,
    /// The root under the dragged connection's loose end.
    pub connect_hover: RwSignal<Option<String>>,
    /// The open connection chooser (keyboard, or a drop with several
    /// capabilities).
    pub chooser: RwSignal<Option<Chooser>>,
    /// The pannable area, to turn screen points into world points.
    pub viewport: NodeRef<leptos::html::Div>,
}

impl SceneCtx {
    /// The state of drawing `view`, load number `seq`. Positions start
    /// from the layout, overridden by the saved ones, overridden by this
    /// tab's own moves (maybe not saved yet). In the browser, edge routes
    /// follow every move and the page's fit button learns the bounds.
    pub fn new(ctx: CanvasCtx, view: TopologyView, seq: u64) -> Self {
        let model = Arc::new(GraphModel::build(&view));
        let mut placed = served_positions(&view);
        ctx.moved
            .with_value(|m| placed.extend(m.iter().map(|(k, v)| (k.clone(), *v))));
        let positions = RwSignal::new(model.initial_positions(&placed));
        // Routes: computed here for the server's HTML and hydration; then,
        // in the browser, recomputed on every move and pushed to the edges
        // that changed.
        let first_routes = positions.with_untracked(|p| model.edge_routes(p, None));
        let edge_geom: Arc<Vec<RwSignal<Option<EdgeGeom>>>> =
            Arc::new(first_routes.iter().cloned().map(RwSignal::new).collect());
        let label_boxes = RwSignal::new(Arc::new(label_rects(&first_routes)));
        {
            let (model, edge_geom) = (model.clone(), edge_geom.clone());
            let last = StoredValue::new(first_routes);
            Effect::new(move |_| {
                let next =
                    positions.with(|p| last.with_value(|prev| model.edge_routes(p, Some(prev))));
                for (sig, g) in edge_geom.iter().zip(&next) {
                    if sig.with_untracked(|old| old != g) {
                        sig.set(g.clone());
                    }
                }
                let boxes = label_rects(&next);
                if label_boxes.with_untracked(|b| **b != boxes) {
                    label_boxes.set(Arc::new(boxes));
                }
                last.set_value(next);
            });
        }
        let covered = Arc::new(
            (0..model.edges.len())
                .map(|_| RwSignal::new(false))
                .collect(),
        );
        let root_health_memos: HashMap<String, Memo<(Health, bool)>> = model
            .roots
            .iter()
            .map(|r| {
                let (model, id) = (model.clone(), r.clone());
                (
                    r.clone(),
                    Memo::new(move |_| root_health(&ctx, &model, seq, &id)),
                )
            })
            .collect();
        let bounds = {
            let model = model.clone();
            Memo::new(move |_| positions.with(|p| model.bounds(p)))
        };
        // The page's bounds (what fit-to-view shows) are the cards' and
        // their labels' (`scene::follow_bounds`); gone with the scene.
        on_cleanup(move || {
            let _ = ctx.bounds.try_set(None);
        });

        let far = Memo::new(move |_| cull::is_far(ctx.camera.get()));
        let drawn = drawn_memo(ctx, model.clone(), positions, edge_geom.clone(), far);

        let viewport = NodeRef::<leptos::html::Div>::new();
        let dragging = RwSignal::new(None::<String>);
        SceneCtx {
            model: model.clone(),
            connections: Arc::new(Connections::new(&view)),
            view: Arc::new(view),
            seq,
            positions,
            drag: RwSignal::new(None),
            far,
            drawn,
            edge_geom,
            label_boxes,
            covered,
            covered_observed: RwSignal::new(BTreeSet::new()),
            bounds,
            root_health: Arc::new(root_health_memos),
            highlighted: Selector::new(move || ctx.highlight.get()),
            selected: Selector::new(move || ctx.selection.get()),
            dragging,
            lifted: Selector::new(move || dragging.get()),
            gesture: StoredValue::new(None),
            suppress_click: StoredValue::new(false),
            connecting: RwSignal::new(None),
            connect_cursor: RwSignal::new(None),
            connect_hover: RwSignal::new(None),
            chooser: RwSignal::new(None),
            viewport,
        }
    }

    /// Health of a root (tracked), and whether it came from the live channel.
    pub fn system_health(&self, ctx: &CanvasCtx, system: &str) -> (Health, bool) {
        match self.root_health.get(system) {
            Some(memo) => memo.get(),
            None => root_health(ctx, &self.model, self.seq, system),
        }
    }

    /// Is the edge or node `id` highlighted (tracked, per key)?
    pub fn is_highlighted(&self, id: &str) -> bool {
        self.highlighted.selected(&Some(id.to_string()))
    }

    /// Is `sel` what the drawer shows (tracked, per key)?
    pub fn is_selected(&self, sel: Selection) -> bool {
        self.selected.selected(&Some(sel))
    }

    /// Health of an edge (tracked).
    pub fn edge_health(&self, ctx: &CanvasCtx, edge: &EdgeView) -> Health {
        let p = self.system_health(ctx, self.model.root_of(&edge.provider));
        let c = self.system_health(ctx, self.model.root_of(&edge.consumer));
        edge_health(edge, p, c)
    }

    /// Display name of a node, falling back to its id.
    pub fn name(&self, id: &str) -> String {
        self.model
            .nodes
            .get(id)
            .map_or_else(|| id.to_string(), |n| n.name.clone())
    }

    /// How a root takes part in a connection being dragged, for its
    /// styling: `source`, `legal`, `illegal`, or nothing when no drag is on.
    pub fn connect_role(&self, root: &str) -> Option<&'static str> {
        self.connecting.with(|c| {
            c.as_ref().map(|d| {
                if d.source == root {
                    "source"
                } else if d.legal.contains(root) {
                    "legal"
                } else {
                    "illegal"
                }
            })
        })
    }

    /// The world point under a screen point.
    pub fn world_point(&self, ctx: &CanvasCtx, client: Point) -> Point {
        let (left, top) = self.viewport.get_untracked().map_or((0.0, 0.0), |el| {
            let r = el.get_bounding_client_rect();
            (r.left(), r.top())
        });
        let cam = ctx.camera.get_untracked();
        Point {
            x: (client.x - left - cam.x) / cam.zoom,
            y: (client.y - top - cam.y) / cam.zoom,
        }
    }

    /// A screen point relative to the canvas's corner (where popovers go).
    pub fn canvas_point(&self, client: Point) -> Point {
        let (left, top) = self.viewport.get_untracked().map_or((0.0, 0.0), |el| {
            let r = el.get_bounding_client_rect();
            (r.left(), r.top())
        });
        Point {
            x: client.x - left,
            y: client.y - top,
        }
    }
}

/// What to draw in detail: everything of a small graph; of a large one,
/// the roots and edges whose box meets the culling window; far out, what
/// was drawn last close up (hidden then, see `components::far`)
/// (computed with [`ASSUMED_VIEWPORT`] until the canvas is measured, on the
/// server too, so hydration finds what the server drew).
fn drawn_memo(
    ctx: CanvasCtx,
    model: Arc<GraphModel>,
    positions: RwSignal<BTreeMap<String, Point>>,
    edge_geom: Arc<Vec<RwSignal<Option<EdgeGeom>>>>,
    far: Memo<bool>,
) -> Memo<Drawn> {
    let whole = model.roots.len() < CULL_MIN_ROOTS;
    // The measured size counts only once this scene is hydrated: the page
    // may measure the canvas before the scene (inside a transition) is
    // hydrated, and hydration must find what the server drew.
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    let window = Memo::new(move |_| {
        if whole || far.get() {
            return None;
        }
        let size = if hydrated.get() {
            ctx.viewport.get().unwrap_or(ASSUMED_VIEWPORT)
        } else {
            ASSUMED_VIEWPORT
        };
        Some(cull::window(ctx.camera.get(), size))
    });
    Memo::new(move |prev: Option<&Drawn>| {
        // Far out the detailed layers are hidden, not emptied: going far
        // (fit-to-view) and coming back only toggles them, and what comes
        // back is updated to the new window.
        if far.get() {
            return prev.cloned().unwrap_or_default();
        }
        let Some(w) = window.get() else {
            return Drawn {
                roots: (0..model.roots.len()).collect(),
                edges: (0..model.edges.len()).collect(),
            };
        };
        let roots = positions.with(|p| {
            model
                .roots
                .iter()
                .enumerate()
                .filter(|(i, id)| {
                    p.get(*id)
                        .is_some_and(|&at| model.block_rect(*i, at).intersects(w))
                })
                .map(|(i, _)| i)
                .collect()
        });
        let edges = edge_geom
            .iter()
            .enumerate()
            .filter(|(_, g)| g.with(|g| g.as_ref().is_some_and(|g| g.bbox.intersects(w))))
            .map(|(i, _)| i)
            .collect();
        Drawn { roots, edges }
    })
}

/// The label box of each route (`None` for an edge not routed, or whose
/// label is not drawn).
fn label_rects(routes: &[Option<EdgeGeom>]) -> Vec<Option<Rect>> {
    routes
        .iter()
        .map(|g| g.as_ref().and_then(|g| g.label.rect))
        .collect()
}

/// Health of a root: the live status if newer than the load drawn, else
/// the served one.
fn root_health(ctx: &CanvasCtx, model: &GraphModel, seq: u64, system: &str) -> (Health, bool) {
    let seq = seq.max(ctx.applied_seq.get());
    ctx.live
        .with(|live| effective_health(live, seq, model.nodes.get(system), system))
}
