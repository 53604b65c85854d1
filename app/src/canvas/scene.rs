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
use wasm_bindgen::JsCast;

use super::drawer::Drawer;
use super::edge::{EdgeLabel, EdgePath};
use super::graph::{EdgeGeom, GraphModel, Point, LABEL_RUN};
use super::minimap::Minimap;
use super::node::RootNode;
use super::state::{edge_health, effective_health, CanvasCtx, Health};
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
}

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
    /// Every edge's route at the current positions.
    pub geometry: Memo<HashMap<String, EdgeGeom>>,
    /// The pointer gesture in progress.
    pub gesture: StoredValue<Option<Gesture>>,
    /// Set when a drag ends, so the click the browser fires after it does
    /// not also open the drawer.
    pub suppress_click: StoredValue<bool>,
}

impl SceneCtx {
    /// Health of a root (tracked), and whether it came from the live channel.
    pub fn system_health(&self, ctx: &CanvasCtx, system: &str) -> (Health, bool) {
        ctx.live
            .with(|live| effective_health(live, self.seq, self.model.nodes.get(system), system))
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

/// Where a root's new position goes once a drag (or nudge) ends.
///
/// Positions are kept client-side for now: in this tab, across refetches
/// of the topology. Persisting them server-side is the next issue's job:
/// it calls a server function (e.g. `save_node_position(id, x, y)`) from
/// here, and the hub returns saved positions with the topology.
pub(crate) fn node_moved(ctx: &CanvasCtx, root: &str, pos: Point) {
    ctx.moved.update_value(|m| {
        m.insert(root.to_string(), pos);
    });
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
    let positions = RwSignal::new(ctx.moved.with_value(|m| model.initial_positions(m)));
    let geometry = {
        let model = model.clone();
        Memo::new(move |_| positions.with(|p| model.edge_geometry(p)))
    };
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

    let scene = SceneCtx {
        model: model.clone(),
        view: Arc::new(view),
        seq,
        positions,
        geometry,
        gesture: StoredValue::new(None),
        suppress_click: StoredValue::new(false),
    };
    provide_context(scene.clone());

    let viewport = NodeRef::<leptos::html::Div>::new();
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
            _ => {}
        }
    };
    let scene_up = scene.clone();
    let on_pointer_up = move |ev: PointerEvent| {
        let Some(gesture) = scene_up.gesture.get_value() else {
            return;
        };
        let pointer = match &gesture {
            Gesture::Pan { pointer, .. } | Gesture::Move { pointer, .. } => *pointer,
        };
        if pointer != ev.pointer_id() {
            return;
        }
        scene_up.gesture.set_value(None);
        if let Gesture::Move {
            root, moved: true, ..
        } = gesture
        {
            scene_up.suppress_click.set_value(true);
            if let Some(pos) = scene_up.positions.with_untracked(|p| p.get(&root).copied()) {
                node_moved(&ctx, &root, pos);
            }
        }
    };
    let on_pointer_cancel = on_pointer_up;

    let roots = model.roots.clone();
    let edges = model.edges.clone();
    let edge_paths = edges
        .iter()
        .map(|e| view! { <EdgePath edge=e.clone()/> })
        .collect_view();
    let edge_labels = edges
        .into_iter()
        .map(|e| view! { <EdgeLabel edge=e/> })
        .collect_view();
    let nodes = roots
        .into_iter()
        .map(|id| view! { <RootNode id/> })
        .collect_view();
    let layer_w = move || {
        format!(
            "{:.0}",
            (bounds.get().x + bounds.get().w + 2.0 * LABEL_RUN).max(1.0)
        )
    };
    let layer_h = move || format!("{:.0}", (bounds.get().y + bounds.get().h + 200.0).max(1.0));
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
                class="world"
                data-testid="world"
                style:transform=move || ctx.camera.get().transform()
            >
                <svg class="edge-layer" width=layer_w height=layer_h aria-hidden="true">
                    <defs>
                        <Arrow id="arrow-data-share"/>
                        <Arrow id="arrow-consult"/>
                        <Arrow id="arrow-degraded"/>
                        <Arrow id="arrow-active"/>
                    </defs>
                    {edge_paths}
                </svg>
                <div class="node-layer">{nodes}</div>
                <div class="label-layer">{edge_labels}</div>
            </div>
        </div>
        <Minimap/>
        <Drawer/>
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
