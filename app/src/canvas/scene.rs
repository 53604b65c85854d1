//! The drawn graph: the pannable, zoomable world with its nodes and edges,
//! the minimap and the drawer.
//!
//! React Flow's hybrid: HTML nodes over an SVG edge layer, edge labels as
//! HTML above the nodes, and one CSS transform on the world for pan and
//! zoom. Positions live in one signal; each node and edge derives its own
//! piece with a memo, so dragging a node repaints that node and its edges.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use leptos::ev::{PointerEvent, WheelEvent};
use leptos::prelude::*;
use leptos::reactive::computed::Selector;
use wasm_bindgen::JsCast;

use super::connect::Connections;
use super::connector::{self, Chooser, ChooserPanel, ConnectDrag, ConnectLine};
use super::drawer::{focus_testid, Drawer};
use super::edge::{DragLabels, DragLayer, EdgeLabel, EdgePath};
use super::graph::{EdgeGeom, GraphModel, Point, LABEL_RUN};
use super::minimap::Minimap;
use super::node::RootNode;
use super::positions;
use super::state::{edge_health, effective_health, CanvasCtx, Health, Selection};
use super::viewport::Camera;
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

/// Below this zoom the canvas draws less detail (edge labels show only
/// when focused or lit, capability chips fade): they are unreadable there,
/// and a thousand of them cost every frame of a pan.
const FAR_ZOOM: f64 = 0.5;

/// A pointer travelling less than this (screen pixels) is a click, not a drag.
const DRAG_THRESHOLD: f64 = 4.0;

/// The scene's state, shared with its nodes, edges, minimap and drawer.
#[derive(Clone)]
pub(crate) struct SceneCtx {
    /// Roots, children, edges and the initial layout.
    pub model: Arc<GraphModel>,
    /// The topology as served (capabilities, rules, reload error).
    pub view: Arc<TopologyView>,
    /// [`super::state::TopologyLoad::seq`] of the load drawn.
    pub seq: u64,
    /// Top-left corner of every root.
    pub positions: RwSignal<BTreeMap<String, Point>>,
    /// Each edge's route, in the order of `model.edges`: one signal per
    /// edge, set only when that edge moved, so a drag touches only the
    /// edges it moves (a thousand readers of one shared value would all
    /// re-run, and re-subscribe, on every frame).
    pub edge_geom: Arc<Vec<RwSignal<Option<EdgeGeom>>>>,
    /// Each root's health and whether it came live, by root id: edges and
    /// nodes read these instead of the page-wide live map.
    pub root_health: Arc<HashMap<String, Memo<(Health, bool)>>>,
    /// Which edge or node is highlighted, as a per-key selector.
    pub highlighted: Selector<Option<String>>,
    /// What the drawer shows, as a per-key selector.
    pub selected: Selector<Option<Selection>>,
    /// The root being dragged: it and its edges are lifted onto layers of
    /// their own for the drag (see `edge::DragLayer`).
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

    /// Starts moving `root` (a node or one of its children was pressed).
    pub fn start_move(&self, root: &str, ev: &PointerEvent) {
        if ev.button() != 0 {
            return;
        }
        ev.stop_propagation();
        capture_pointer(ev);
        self.suppress_click.set_value(false);
        let origin = self
            .positions
            .with_untracked(|p| p.get(root).copied())
            .unwrap_or_default();
        self.gesture.set_value(Some(Gesture::Move {
            pointer: ev.pointer_id(),
            root: root.to_string(),
            start: client_point(ev),
            origin,
            moved: false,
        }));
    }

    /// Starts dragging a connection from `root`'s handle.
    pub fn start_connect(&self, root: &str, ev: &PointerEvent) {
        if ev.button() != 0 {
            return;
        }
        ev.stop_propagation();
        capture_pointer(ev);
        self.suppress_click.set_value(false);
        self.gesture.set_value(Some(Gesture::Connect {
            pointer: ev.pointer_id(),
            source: root.to_string(),
            start: client_point(ev),
            moved: false,
        }));
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

    /// Moves a root by a world offset (arrow keys), then records it.
    pub fn nudge(&self, ctx: &CanvasCtx, root: &str, dx: f64, dy: f64) {
        let mut new = None;
        self.positions.update(|p| {
            if let Some(pos) = p.get_mut(root) {
                pos.x += dx;
                pos.y += dy;
                new = Some(*pos);
            }
        });
        if let Some(pos) = new {
            node_moved(ctx, root, pos);
        }
    }
}

/// Rounds a layer dimension up to a multiple of 1024 world pixels.
fn coarse(v: f64) -> f64 {
    ((v.max(1.0)) / 1024.0).ceil() * 1024.0
}

/// Health of a root: the live status if newer than the load drawn, else
/// the served one.
fn root_health(ctx: &CanvasCtx, model: &GraphModel, seq: u64, system: &str) -> (Health, bool) {
    let seq = seq.max(ctx.applied_seq.get());
    ctx.live
        .with(|live| effective_health(live, seq, model.nodes.get(system), system))
}

/// Where a root's new position goes once a drag (or nudge) ends: kept in
/// this tab across redraws, and saved by the hub (debounced).
pub(crate) fn node_moved(ctx: &CanvasCtx, root: &str, pos: Point) {
    positions::moved(ctx, root, pos);
}

/// The root node (system or hub) under a screen point, if any: what a
/// dragged connection would be dropped on. Children count as their root.
fn root_at(client: Point) -> Option<String> {
    let doc = window().document()?;
    let el = doc.element_from_point(client.x as f32, client.y as f32)?;
    let holder = el.closest("[data-root]").ok()??;
    holder.get_attribute("data-root")
}

/// Pointer position on screen.
pub(crate) fn client_point(ev: &PointerEvent) -> Point {
    Point {
        x: f64::from(ev.client_x()),
        y: f64::from(ev.client_y()),
    }
}

/// Keeps pointer events coming to the pressed element while the pointer
/// is outside it (or outside the window).
fn capture_pointer(ev: &PointerEvent) {
    if let Some(el) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    {
        let _ = el.set_pointer_capture(ev.pointer_id());
    }
}

/// The graph of one topology load.
#[component]
pub(crate) fn Scene(
    /// The topology to draw.
    view: TopologyView,
    /// The load's sequence number (see `TopologyLoad`).
    seq: u64,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let model = Arc::new(GraphModel::build(&view));
    // Saved positions override the layout; this tab's own moves (maybe not
    // saved yet) override those.
    let mut placed = positions::served(&view);
    ctx.moved
        .with_value(|m| placed.extend(m.iter().map(|(k, v)| (k.clone(), *v))));
    let positions = RwSignal::new(model.initial_positions(&placed));
    // Routes: computed here for the server's HTML and hydration; then, in
    // the browser, recomputed on every move and pushed to the edges that
    // changed.
    let first_routes = positions.with_untracked(|p| model.edge_routes(p, None));
    let edge_geom: Arc<Vec<RwSignal<Option<EdgeGeom>>>> =
        Arc::new(first_routes.iter().cloned().map(RwSignal::new).collect());
    {
        let (model, edge_geom) = (model.clone(), edge_geom.clone());
        let last = StoredValue::new(first_routes);
        Effect::new(move |_| {
            let next = positions.with(|p| last.with_value(|prev| model.edge_routes(p, Some(prev))));
            for (sig, g) in edge_geom.iter().zip(&next) {
                if sig.with_untracked(|old| old != g) {
                    sig.set(g.clone());
                }
            }
            last.set_value(next);
        });
    }
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
    // The toolbar's fit button needs the bounds; effects run only in the
    // browser, where that button works.
    Effect::new(move |_| ctx.bounds.set(Some(bounds.get())));
    on_cleanup(move || {
        let _ = ctx.bounds.try_set(None);
    });

    let viewport = NodeRef::<leptos::html::Div>::new();
    let dragging = RwSignal::new(None::<String>);
    let scene = SceneCtx {
        model: model.clone(),
        connections: Arc::new(Connections::new(&view)),
        view: Arc::new(view),
        seq,
        positions,
        edge_geom,
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
    };
    provide_context(scene.clone());

    // After a redraw caused by a change made here (an edge created or
    // removed), keyboard focus goes where the change is.
    Effect::new(move |_| {
        if let Some(target) = ctx.focus_after_load.get_value() {
            ctx.focus_after_load.set_value(None);
            focus_testid(&target);
        }
    });
    // Escape drops a connection being dragged.
    let scene_esc = scene.clone();
    Effect::new(move |_| {
        let scene = scene_esc.clone();
        let keys = window_event_listener(leptos::ev::keydown, move |ev| {
            if ev.key() == "Escape"
                && matches!(scene.gesture.get_value(), Some(Gesture::Connect { .. }))
            {
                scene.gesture.set_value(None);
                // The click that ends the press must not open the chooser.
                scene.suppress_click.set_value(true);
                connector::end_drag(&scene);
            }
        });
        on_cleanup(move || keys.remove());
    });
    let on_wheel = move |ev: WheelEvent| {
        ev.prevent_default();
        let Some(el) = viewport.get_untracked() else {
            return;
        };
        let rect = el.get_bounding_client_rect();
        let anchor = Point {
            x: f64::from(ev.client_x()) - rect.left(),
            y: f64::from(ev.client_y()) - rect.top(),
        };
        // Lines (Firefox) or pixels (the rest).
        let delta = if ev.delta_mode() == 1 {
            ev.delta_y() * 16.0
        } else {
            ev.delta_y()
        };
        let factor = (-delta * 0.0015).exp();
        ctx.camera
            .update(|c| *c = c.zoom_at(c.zoom * factor, anchor));
    };

    let scene_down = scene.clone();
    let on_pointer_down = move |ev: PointerEvent| {
        if ev.button() != 0 {
            return;
        }
        capture_pointer(&ev);
        scene_down.gesture.set_value(Some(Gesture::Pan {
            pointer: ev.pointer_id(),
            start: client_point(&ev),
            camera: ctx.camera.get_untracked(),
        }));
    };
    let scene_move = scene.clone();
    let on_pointer_move = move |ev: PointerEvent| {
        let now = client_point(&ev);
        let Some(gesture) = scene_move.gesture.get_value() else {
            return;
        };
        match gesture {
            Gesture::Pan {
                pointer,
                start,
                camera,
            } if pointer == ev.pointer_id() => {
                ctx.camera.set(Camera {
                    x: camera.x + now.x - start.x,
                    y: camera.y + now.y - start.y,
                    ..camera
                });
            }
            Gesture::Move {
                pointer,
                root,
                start,
                origin,
                moved,
            } if pointer == ev.pointer_id() => {
                let (dx, dy) = (now.x - start.x, now.y - start.y);
                if !moved && dx.hypot(dy) < DRAG_THRESHOLD {
                    return;
                }
                if !moved {
                    scene_move.gesture.update_value(|g| {
                        if let Some(Gesture::Move { moved, .. }) = g {
                            *moved = true;
                        }
                    });
                    scene_move.dragging.set(Some(root.clone()));
                }
                let zoom = ctx.camera.get_untracked().zoom;
                let pos = Point {
                    x: origin.x + dx / zoom,
                    y: origin.y + dy / zoom,
                };
                scene_move.positions.update(|p| {
                    p.insert(root, pos);
                });
            }
            Gesture::Connect {
                pointer,
                source,
                start,
                moved,
            } if pointer == ev.pointer_id() => {
                if !moved && (now.x - start.x).hypot(now.y - start.y) < DRAG_THRESHOLD {
                    return;
                }
                if !moved {
                    scene_move.gesture.update_value(|g| {
                        if let Some(Gesture::Connect { moved, .. }) = g {
                            *moved = true;
                        }
                    });
                    connector::begin_drag(&scene_move, &source);
                }
                scene_move
                    .connect_cursor
                    .set(Some(scene_move.world_point(&ctx, now)));
                let hover = root_at(now).filter(|r| r != &source);
                if scene_move.connect_hover.get_untracked() != hover {
                    scene_move.connect_hover.set(hover);
                }
            }
            _ => {}
        }
    };
    let scene_up = scene.clone();
    let on_pointer_up = move |ev: PointerEvent| {
        let Some(gesture) = scene_up.gesture.get_value() else {
            return;
        };
        let pointer = match &gesture {
            Gesture::Pan { pointer, .. }
            | Gesture::Move { pointer, .. }
            | Gesture::Connect { pointer, .. } => *pointer,
        };
        if pointer != ev.pointer_id() {
            return;
        }
        scene_up.gesture.set_value(None);
        if scene_up.dragging.get_untracked().is_some() {
            scene_up.dragging.set(None);
        }
        match gesture {
            Gesture::Move {
                root, moved: true, ..
            } => {
                scene_up.suppress_click.set_value(true);
                if let Some(pos) = scene_up.positions.with_untracked(|p| p.get(&root).copied()) {
                    node_moved(&ctx, &root, pos);
                }
            }
            Gesture::Connect {
                source,
                moved: true,
                ..
            } => {
                scene_up.suppress_click.set_value(true);
                let now = client_point(&ev);
                // A cancelled pointer drops nothing.
                let target = (ev.type_() == "pointerup")
                    .then(|| root_at(now))
                    .flatten()
                    .filter(|t| t != &source);
                connector::end_drag(&scene_up);
                if let Some(target) = target {
                    let anchor = scene_up.canvas_point(now);
                    connector::drop_on(ctx, &scene_up, &source, &target, anchor);
                }
            }
            _ => {}
        }
    };
    let on_pointer_cancel = on_pointer_up.clone();

    let roots = model.roots.clone();
    let edges = model.edges.clone();
    let edge_paths = edges
        .iter()
        .enumerate()
        .map(|(index, e)| view! { <EdgePath edge=e.clone() index/> })
        .collect_view();
    let edge_labels = edges
        .into_iter()
        .enumerate()
        .map(|(index, e)| view! { <EdgeLabel edge=e index/> })
        .collect_view();
    let nodes = roots
        .into_iter()
        .map(|id| view! { <RootNode id/> })
        .collect_view();
    // The edge layers' size, rounded up to a coarse step: resizing an SVG
    // repaints all of it, so a drag near the graph's edge must not resize
    // it on every frame (paths outside its box still show: overflow is
    // visible).
    let layer_w = Memo::new(move |_| {
        let b = bounds.get();
        format!("{:.0}", coarse(b.x + b.w + 2.0 * LABEL_RUN))
    });
    let layer_h = Memo::new(move |_| {
        let b = bounds.get();
        format!("{:.0}", coarse(b.y + b.h + 200.0))
    });
    let reload_error = scene.view.reload_error.clone();

    view! {
        {reload_error.map(|e| view! { <ReloadError error=e/> })}
        <div
            class="viewport"
            node_ref=viewport
            on:wheel=on_wheel
            on:pointerdown=on_pointer_down
            on:pointermove=on_pointer_move
            on:pointerup=on_pointer_up
            on:pointercancel=on_pointer_cancel
        >
            <div
                class=move || if ctx.camera.get().zoom < FAR_ZOOM { "world far" } else { "world" }
                data-testid="world"
                style:transform=move || ctx.camera.get().transform()
            >
                <svg
                    class="edge-layer"
                    width=move || layer_w.get()
                    height=move || layer_h.get()
                    aria-hidden="true"
                >
                    <defs>
                        <Arrow id="arrow-data-share"/>
                        <Arrow id="arrow-consult"/>
                        <Arrow id="arrow-degraded"/>
                        <Arrow id="arrow-active"/>
                    </defs>
                    {edge_paths}
                    <ConnectLine/>
                </svg>
                <DragLayer width=layer_w height=layer_h/>
                <div class="node-layer">{nodes}</div>
                <div class="label-layer">{edge_labels}</div>
                <DragLabels/>
            </div>
        </div>
        <Minimap/>
        <Drawer/>
        <ChooserPanel/>
    }
}

/// An arrowhead; its colour comes from CSS by id.
#[component]
fn Arrow(id: &'static str) -> impl IntoView {
    view! {
        <marker
            id=id
            class=id
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto-start-reverse"
        >
            <path d="M0,0 L10,5 L0,10 z"></path>
        </marker>
    }
}

/// Says that the topology file failed to reload and the hub runs on the
/// previous one: the operator must know the canvas is not their latest file.
#[component]
pub(crate) fn ReloadError(error: String) -> impl IntoView {
    view! {
        <p class="banner warn" role="status" data-testid="reload-error">
            "The topology file failed to reload; the hub keeps the previous topology. "
            <code>{error}</code>
        </p>
    }
}
