//! The drag overlay (what keeps a drag fluid at 500 nodes; DESIGN.md §6,
//! the canvas): what a gesture draws while it lasts, on a screen-sized layer
//! above the graph: the edges of the root being dragged (lines, arrows and
//! labels) and the line of a connection being dragged.
//!
//! Why a layer of its own, outside the world: every frame of a drag
//! redraws these lines, and the world's layers are as big as the graph
//! (14,000 pixels wide at 500 nodes); drawn there, each frame
//! re-rasterised tiles far off screen, and everything painted after the
//! lines was pushed onto layers of its own (150 of them). The overlay is
//! clipped to the canvas, so a frame re-rasterises at most what is on
//! screen, with nothing but the moving lines in it. It carries the
//! camera's transform itself. The lifted edges are hidden in the graph for
//! the drag, and their routes come from the live drag position
//! ([`GraphModel::dragged_routes`](crate::canvas::graph::GraphModel::dragged_routes)):
//! the committed positions, and every memo reading them, change on the
//! drop only.
//!
//! The arrowheads every edge line ends in are defined here, in the one
//! SVG that is always drawn.

use std::sync::Arc;

use leptos::prelude::*;

use super::connector::ConnectLine;
use super::edge::{kind_marker, label_transform, Arrow};
use crate::canvas::graph::{EdgeGeom, LabelText};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::labels::kind_label;
use crate::canvas::state::CanvasCtx;
use crate::dto::EdgeView;

/// The edges of `root` with their place in `model.edges_of(root)` (the
/// order of the live routes) and in `model.edges`; `None` for an unknown
/// root.
fn lifted_edges(scene: &SceneCtx, root: &str) -> Option<Vec<(usize, usize, EdgeView)>> {
    let index = scene.model.index_of(root)?;
    Some(
        scene
            .model
            .edges_of(index)
            .iter()
            .enumerate()
            .filter_map(|(k, &i)| scene.model.edges.get(i).map(|e| (k, i, e.clone())))
            .collect(),
    )
}

/// The overlay: drawn always (empty when nothing is dragged), so the server
/// and the browser render the same page.
#[component]
pub(crate) fn DragOverlay() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let dragging = scene.dragging;
    let connecting = scene.connecting;
    // The live routes of the dragged root's edges, in the order of
    // `model.edges_of(root)`: recomputed per frame of the drag, for those
    // edges only.
    let routes: Memo<Arc<Vec<(usize, EdgeGeom)>>> = {
        let scene = scene.clone();
        Memo::new(move |_| {
            let Some(d) = scene.drag.get() else {
                return Arc::new(Vec::new());
            };
            let committed: Vec<Option<EdgeGeom>> = scene
                .model
                .index_of(&d.root)
                .map(|r| {
                    let mut all = vec![None; scene.model.edges.len()];
                    for &i in scene.model.edges_of(r) {
                        if let Some(sig) = scene.edge_geom.get(i) {
                            all[i] = sig.get_untracked();
                        }
                    }
                    all
                })
                .unwrap_or_default();
            Arc::new(
                scene
                    .positions
                    .with_untracked(|p| scene.model.dragged_routes(p, &committed, &d.root, d.at)),
            )
        })
    };
    let lines = {
        let scene = scene.clone();
        move || {
            let lines = lifted_edges(&scene, &dragging.get()?)?
                .into_iter()
                .map(|(k, _, e)| {
                    let kind = kind_label(e.kind);
                    let health = untrack(|| scene.edge_health(&ctx, &e));
                    let marker = if health.is_degraded() {
                        "arrow-degraded"
                    } else {
                        kind_marker(kind)
                    };
                    let d = move || {
                        routes
                            .with(|r| r.get(k).map(|(_, g)| g.path.clone()))
                            .unwrap_or_else(|| Arc::from(""))
                    };
                    view! {
                        <g class=format!("edge {kind} {}", health.word())>
                            <path class="edge-line" d=d marker-end=format!("url(#{marker})")></path>
                        </g>
                    }
                })
                .collect_view();
            Some(lines)
        }
    };
    // Each label shows what it showed before the drag (a label not drawn
    // stays so), at its spot on its moving path.
    let labels = move || {
        let labels = lifted_edges(&scene, &dragging.get()?)?
            .into_iter()
            .filter_map(|(k, index, e)| {
                let text = scene
                    .edge_geom
                    .get(index)?
                    .with_untracked(|g| g.as_ref().map(|g| g.label.text.clone()))?;
                if text == LabelText::Hidden {
                    return None;
                }
                let kind = kind_label(e.kind);
                let word = untrack(|| scene.edge_health(&ctx, &e)).word();
                let transform =
                    move || label_transform(routes.with(|r| r.get(k).map(|(_, g)| g.label.centre)));
                let shown = text.shown(&e.capability).to_string();
                Some(view! {
                    <span class=format!("edge-label {kind} {word}") style:transform=transform>
                        {shown}
                    </span>
                })
            })
            .collect_view();
        Some(labels)
    };
    // Composited only while a gesture draws on it (an idle layer would
    // only cost memory).
    let class = move || {
        if dragging.with(Option::is_some) || connecting.with(Option::is_some) {
            "drag-overlay lifting"
        } else {
            "drag-overlay"
        }
    };
    // Erased: nested in the scene, the full type overflows the compiler's
    // query depth when the wasm is built.
    view! {
        <div class=class aria-hidden="true">
            <div class="drag-world" style:transform=move || ctx.camera.get().transform()>
                <svg class="drag-edges" width="1" height="1">
                    <defs>
                        <Arrow id="arrow-data-share"/>
                        <Arrow id="arrow-consult"/>
                        <Arrow id="arrow-task"/>
                        <Arrow id="arrow-degraded"/>
                        <Arrow id="arrow-active"/>
                        <Arrow id="arrow-observed"/>
                    </defs>
                    {lines}
                    <ConnectLine/>
                </svg>
                <div class="drag-labels">{labels}</div>
            </div>
        </div>
    }
    .into_any()
}
