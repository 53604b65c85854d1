//! Edges: a connection `consumer → provider` for one capability, drawn as
//! an SVG path under the nodes and a labelled button above them.
//!
//! The label is the edge's focusable, clickable handle (a real `<button>`,
//! so keyboard and screen readers get it for free); the path answers
//! clicks too. Both light up together when either is focused or hovered.
//! Delete on a focused label removes the edge. The arrowheads the lines
//! end in are here too.

use leptos::ev::{KeyboardEvent, PointerEvent};
use leptos::prelude::*;

use crate::canvas::commands::edges::remove_edge;
use crate::canvas::graph::Point;
use crate::canvas::health::Health;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::labels::kind_label;
use crate::canvas::state::{CanvasCtx, Selection};
use crate::dto::EdgeView;

/// Per-edge reactive facts both halves of an edge need.
#[derive(Clone, Copy)]
struct EdgeState {
    health: Memo<Health>,
    active: Memo<bool>,
}

fn edge_state(ctx: CanvasCtx, scene: &SceneCtx, edge: &EdgeView) -> EdgeState {
    let health = {
        let (scene, edge) = (scene.clone(), edge.clone());
        Memo::new(move |_| scene.edge_health(&ctx, &edge))
    };
    let active = {
        let (scene, id) = (scene.clone(), edge.id.clone());
        Memo::new(move |_| {
            scene.is_highlighted(&id) || scene.is_selected(Selection::Edge(id.clone()))
        })
    };
    EdgeState { health, active }
}

/// Is one of the edge's ends being dragged? Then the edge is drawn on the
/// drag layers instead (hidden in the main ones, so those big layers are
/// not repainted on every frame of the drag).
fn lifted(scene: &SceneCtx, edge: &EdgeView) -> Memo<bool> {
    let scene = scene.clone();
    let c = scene.model.root_of(&edge.consumer).to_string();
    let p = scene.model.root_of(&edge.provider).to_string();
    Memo::new(move |_| {
        scene.lifted.selected(&Some(c.clone())) || scene.lifted.selected(&Some(p.clone()))
    })
}

/// The edges with an end on the root being dragged, by index.
fn lifted_edges(scene: &SceneCtx, root: &str) -> Vec<(usize, EdgeView)> {
    let model = &scene.model;
    model
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| model.root_of(&e.consumer) == root || model.root_of(&e.provider) == root)
        .map(|(i, e)| (i, e.clone()))
        .collect()
}

fn edge_class(base: &str, edge: &EdgeView, st: EdgeState) -> String {
    let h = st.health.get();
    format!(
        "{base} {} {}{}",
        kind_label(edge.kind),
        h.word(),
        if st.active.get() { " active" } else { "" }
    )
}

/// Longest label drawn in full; longer ids are cut with an ellipsis (the
/// whole id is in the label's accessible name and the drawer). Cut here
/// rather than by CSS: a clipping box per label costs every frame.
const LABEL_MAX_CHARS: usize = 24;

fn short_label(capability: &str) -> String {
    if capability.chars().count() <= LABEL_MAX_CHARS {
        capability.to_string()
    } else {
        capability
            .chars()
            .take(LABEL_MAX_CHARS - 1)
            .chain(['…'])
            .collect()
    }
}

fn open(ctx: CanvasCtx, id: &str) {
    ctx.selection.set(Some(Selection::Edge(id.to_string())));
}

/// The line of an edge.
#[component]
pub(crate) fn EdgePath(
    edge: EdgeView,
    /// Its place in the scene's edge list (and geometry).
    index: usize,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let st = edge_state(ctx, &scene, &edge);
    let lifted = lifted(&scene, &edge);
    // While lifted, the hidden line keeps its place: moving it would still
    // repaint the big layer it is hidden in.
    let geom = {
        let geom = scene.edge_geom.get(index).copied();
        Memo::new(
            move |prev: Option<&Option<std::sync::Arc<str>>>| match prev {
                Some(prev) if lifted.get() => prev.clone(),
                _ => geom.and_then(|g| g.with(|g| g.as_ref().map(|g| g.path.clone()))),
            },
        )
    };
    let d = move || geom.get().unwrap_or_else(|| std::sync::Arc::from(""));
    let marker = {
        let kind = kind_label(edge.kind);
        move || {
            let id = if st.active.get() {
                "arrow-active"
            } else if st.health.get().is_degraded() {
                "arrow-degraded"
            } else if kind == "consult" {
                "arrow-consult"
            } else {
                "arrow-data-share"
            };
            format!("url(#{id})")
        }
    };
    let class = {
        let edge = edge.clone();
        move || {
            let mut c = edge_class("edge", &edge, st);
            if lifted.get() {
                c.push_str(" lifted");
            }
            c
        }
    };
    let id = edge.id.clone();
    let (id_enter, id_click) = (id.clone(), id.clone());
    view! {
        <g
            class=class
            data-edge-id=id
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
            on:click=move |_| open(ctx, &id_click)
            on:pointerenter=move |_| ctx.highlight.set(Some(id_enter.clone()))
            on:pointerleave=move |_| ctx.highlight.set(None)
        >
            <path class="edge-hit" d=d></path>
            <path class="edge-line" d=d marker-end=marker></path>
        </g>
    }
}

/// The edges of the node being dragged, on an SVG layer of their own (a
/// composited layer: `will-change` in CSS). Repainting a few paths there
/// each frame is cheap; repainting the main edge layer, with every other
/// edge in it, is what made drags stutter on large graphs.
#[component]
pub(crate) fn DragLayer(
    /// Width of the edge layer.
    width: Memo<String>,
    /// Height of the edge layer.
    height: Memo<String>,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let scene_class = scene.clone();
    let paths = move || {
        let root = scene.dragging.get()?;
        let lines = lifted_edges(&scene, &root)
            .into_iter()
            .map(|(i, e)| {
                let kind = kind_label(e.kind);
                let health = untrack(|| scene.edge_health(&ctx, &e));
                let marker = if health.is_degraded() {
                    "arrow-degraded"
                } else if kind == "consult" {
                    "arrow-consult"
                } else {
                    "arrow-data-share"
                };
                let geom = scene.edge_geom.get(i).copied();
                let d = move || {
                    geom.and_then(|g| g.with(|g| g.as_ref().map(|g| g.path.clone())))
                        .unwrap_or_else(|| std::sync::Arc::from(""))
                };
                view! {
                    <g class=format!("edge {kind} {}", health.word())>
                        <path class="edge-line" d=d marker-end=format!("url(#{marker})")></path>
                    </g>
                }
            })
            .collect_view();
        Some(lines)
    };
    view! {
        <svg
            class=move || {
                if scene_class.dragging.with(Option::is_some) {
                    "edge-layer drag-layer lifting"
                } else {
                    "edge-layer drag-layer"
                }
            }
            width=move || width.get()
            height=move || height.get()
            aria-hidden="true"
        >
            {paths}
        </svg>
    }
}

/// The labels of the edges of the node being dragged, on a layer of their
/// own (see [`DragLayer`]); plain text, since nobody clicks mid-drag.
#[component]
pub(crate) fn DragLabels() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let dragging = scene.dragging;
    let labels = move || {
        let root = scene.dragging.get()?;
        let labels = lifted_edges(&scene, &root)
            .into_iter()
            .map(|(i, e)| {
                let kind = kind_label(e.kind);
                let word = untrack(|| scene.edge_health(&ctx, &e)).word();
                let geom = scene.edge_geom.get(i).copied();
                let transform = move || {
                    geom.and_then(|g| g.with(|g| g.as_ref().map(|g| g.label)))
                        .map_or_else(String::new, |p| {
                            format!(
                                "translate({:.1}px, {:.1}px) translate(-50%, -50%)",
                                p.x, p.y
                            )
                        })
                };
                view! {
                    <span class=format!("edge-label {kind} {word}") style:transform=transform>
                        {short_label(&e.capability)}
                    </span>
                }
            })
            .collect_view();
        Some(labels)
    };
    let class = move || {
        if dragging.with(Option::is_some) {
            "label-layer drag-labels lifting"
        } else {
            "label-layer drag-labels"
        }
    };
    view! { <div class=class aria-hidden="true">{labels}</div> }
}

/// The label of an edge: its capability, as a button opening its drawer.
#[component]
pub(crate) fn EdgeLabel(
    edge: EdgeView,
    /// Its place in the scene's edge list (and geometry).
    index: usize,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let st = edge_state(ctx, &scene, &edge);
    let lifted = lifted(&scene, &edge);
    let pos = {
        let geom = scene.edge_geom.get(index).copied();
        Memo::new(move |prev: Option<&Option<Point>>| match prev {
            Some(prev) if lifted.get() => *prev,
            _ => geom.and_then(|g| g.with(|g| g.as_ref().map(|g| g.label))),
        })
    };
    let transform = move || {
        pos.get().map_or_else(
            || "translate(-9999px, -9999px)".to_string(),
            |p| {
                format!(
                    "translate({:.1}px, {:.1}px) translate(-50%, -50%)",
                    p.x, p.y
                )
            },
        )
    };
    let consumer = scene.name(&edge.consumer);
    let provider = scene.name(&edge.provider);
    let kind = kind_label(edge.kind);
    let label = {
        let capability = edge.capability.clone();
        move || {
            let h = st.health.get();
            let mut s = format!("{consumer} consumes {capability} from {provider}, {kind}");
            if h.is_degraded() {
                s.push_str(", ");
                s.push_str(&h.spoken());
            }
            s
        }
    };
    let title = move || {
        let h = st.health.get();
        if h.is_degraded() {
            format!("{kind} · {}", h.badge())
        } else {
            kind.to_string()
        }
    };
    let class = {
        let edge = edge.clone();
        move || {
            let mut c = edge_class("edge-label", &edge, st);
            if lifted.get() {
                c.push_str(" lifted");
            }
            c
        }
    };
    let id = edge.id.clone();
    let (id_click, id_focus, id_enter) = (id.clone(), id.clone(), id.clone());
    let on_key = {
        let (scene, edge) = (scene.clone(), edge.clone());
        move |ev: KeyboardEvent| {
            if ev.key() == "Delete" {
                ev.prevent_default();
                remove_edge(ctx, &scene, &edge);
            }
        }
    };
    view! {
        <button
            type="button"
            class=class
            data-testid=format!("edge-{id}")
            aria-label=label
            aria-keyshortcuts="Delete"
            title=title
            style:transform=transform
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
            on:click=move |_| open(ctx, &id_click)
            on:keydown=on_key
            on:focus=move |_| ctx.highlight.set(Some(id_focus.clone()))
            on:blur=move |_| ctx.highlight.set(None)
            on:pointerenter=move |_| ctx.highlight.set(Some(id_enter.clone()))
            on:pointerleave=move |_| ctx.highlight.set(None)
        >
            {short_label(&edge.capability)}
        </button>
    }
}

/// An arrowhead at the end of edge lines; its colour comes from CSS by id.
#[component]
pub(crate) fn Arrow(id: &'static str) -> impl IntoView {
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
