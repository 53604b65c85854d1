//! The drawn graph: the pannable, zoomable world with its nodes and edges,
//! the drag overlay, the minimap, the drawer, the chooser and the
//! suggestions panel. The top of the canvas's layers: it builds the
//! scene's state, hands the gestures' outcomes to the commands and
//! composes the components.
//!
//! React Flow's hybrid: HTML nodes over an SVG edge layer, edge labels as
//! HTML above the nodes, and one CSS transform on the world for pan and
//! zoom. Positions live in one signal, changed by a drop or a nudge; each
//! node and edge derives its own piece with a memo. A drag moves only the
//! dragged root's card and, on the drag overlay, its edges.
//!
//! What is drawn depends on the camera (`crate::canvas::cull`):
//! close up, every node and edge of a small graph, and of a large one those
//! near the screen (the server's HTML has the same ones); far out, blocks
//! and grouped edge paths (`components::far`). Both are in the DOM (the far
//! view from a moment after hydration) and the world's `far` class shows
//! one: crossing the threshold toggles them instead of building either.
//!
//! The world is one composited layer, so panning moves pixels instead of
//! painting them. Chromium rasterises such a layer at the scale it was
//! first drawn at, whatever the zoom becomes: zoomed out to 10 %, it
//! rasterised the whole graph at 100 % (260 tiles, a second or more of
//! software raster, longer when the machine was busy: why fit-to-view took
//! 0.8 to 3.3 s). So for a moment after each zoom change the world is no
//! layer of its own (`rezoom`), and it is rasterised again at the new
//! scale.

use leptos::ev::{PointerEvent, WheelEvent};
use leptos::prelude::*;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::commands::{edges, positions};
use super::components::connector::ChooserPanel;
use super::components::cover::LabelCover;
use super::components::drag::DragOverlay;
use super::components::drawer::{prefetch_drawer, Drawer};
use super::components::edge::{label_place, EdgeLabel, EdgePath, TrafficLine};
use super::components::far::{FarBlocks, FarEdges};
use super::components::messages::ReloadError;
use super::components::minimap::Minimap;
use super::components::node::RootNode;
use super::components::observed::{drawn_observed, observed_arcs, ObservedLabels, ObservedPaths};
use super::components::suggestions::SuggestionsPanel;
use super::cull::CULL_MIN_ROOTS;
use super::dom::focus_testid;
use super::graph::{ObservedGeom, LABEL_RUN};
use super::interaction::controller::{self, GestureEnd};
use super::interaction::SceneCtx;
use super::state::CanvasCtx;
use crate::dto::TopologyView;

/// How long the world stays off its own layer after a zoom change (see
/// the module's notes): long enough for a wheel's run of steps.
const REZOOM: Duration = Duration::from_millis(150);

/// How long after hydration the (hidden) far view is drawn: out of the
/// way of the first interactive frame.
const FAR_READY: Duration = Duration::from_millis(250);

/// Rounds a layer dimension up to a multiple of 1024 world pixels.
fn coarse(v: f64) -> f64 {
    ((v.max(1.0)) / 1024.0).ceil() * 1024.0
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
    let scene = SceneCtx::new(ctx, view, seq);
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
            if ev.key() == "Escape" {
                controller::cancel_connect(&scene);
            }
        });
        on_cleanup(move || keys.remove());
    });
    let scene_wheel = scene.clone();
    let on_wheel = move |ev: WheelEvent| controller::wheel_zoom(&scene_wheel, &ctx, &ev);
    let scene_down = scene.clone();
    let on_pointer_down = move |ev: PointerEvent| controller::start_pan(&scene_down, &ctx, &ev);
    let scene_move = scene.clone();
    let on_pointer_move = move |ev: PointerEvent| controller::pointer_move(&scene_move, &ctx, &ev);
    let scene_up = scene.clone();
    let on_pointer_up = move |ev: PointerEvent| match controller::pointer_up(&scene_up, &ev) {
        Some(GestureEnd::Moved { root, pos }) => positions::moved(&ctx, &root, pos),
        Some(GestureEnd::Dropped {
            source,
            target,
            anchor,
        }) => edges::drop_on(ctx, &scene_up, &source, &target, anchor),
        None => {}
    };
    let on_pointer_cancel = on_pointer_up.clone();

    let model = scene.model.clone();
    let drawn = scene.drawn;
    let edge_paths = {
        let model = model.clone();
        view! {
            <For
                each=move || drawn.with(|d| d.edges.clone())
                key=|i| *i
                children=move |index| {
                    model.edges.get(index).cloned().map(|edge| view! { <EdgePath edge index/> })
                }
            />
        }
    };
    // Each label and its traffic line (DESIGN.md §6: recent calls under
    // the label) share one place.
    let edge_labels = {
        let (model, scene) = (model.clone(), scene.clone());
        view! {
            <For
                each=move || drawn.with(|d| d.edges.clone())
                key=|i| *i
                children=move |index| {
                    model
                        .edges
                        .get(index)
                        .cloned()
                        .map(|edge| {
                            let place = label_place(ctx, &scene, &edge, index);
                            let id = edge.id.clone();
                            view! {
                                <EdgeLabel edge place/>
                                <TrafficLine edge=id place=place.line()/>
                            }
                        })
                }
            />
        }
    };
    // Observed edges: traffic without an established edge, drawn apart.
    let observed = drawn_observed(ctx, &scene);
    let arcs = observed_arcs(ctx, &scene, observed);
    follow_bounds(ctx, &scene, arcs);
    let nodes = {
        let model = model.clone();
        view! {
            <For
                each=move || drawn.with(|d| d.roots.clone())
                key=|i| *i
                children=move |index| {
                    model.roots.get(index).cloned().map(|id| view! { <RootNode id/> })
                }
            />
        }
    };
    // The edge layers' size, rounded up to a coarse step: resizing an SVG
    // repaints all of it, so a drag near the graph's edge must not resize
    // it on every frame (paths outside its box still show: overflow is
    // visible).
    let bounds = scene.bounds;
    let layer_w = Memo::new(move |_| {
        let b = bounds.get();
        format!("{:.0}", coarse(b.x + b.w + 2.0 * LABEL_RUN))
    });
    let layer_h = Memo::new(move |_| {
        let b = bounds.get();
        format!("{:.0}", coarse(b.y + b.h + 200.0))
    });
    let reload_error = scene.view.reload_error.clone();
    let far = scene.far;
    // No dashes or dots on a large graph (see the stylesheet: they cost
    // raster per tile).
    let plain = scene.model.roots.len() >= CULL_MIN_ROOTS;
    let rezoom = rezoom_after_zoom(ctx);
    // The far view (blocks and grouped paths) is drawn once, hidden, a
    // moment after hydration (browser only: not in the server's HTML), so
    // that fit-to-view only shows it.
    let far_ready = RwSignal::new(false);
    Effect::new(move |_| {
        set_timeout(
            move || {
                let _ = far_ready.try_set(true);
            },
            FAR_READY,
        );
    });
    let world_class = move || {
        let mut c = String::from("world");
        if plain {
            c.push_str(" plain");
        }
        if far.get() {
            c.push_str(" far");
        }
        if rezoom.get() {
            c.push_str(" rezoom");
        }
        c
    };

    view! {
        {reload_error.map(|e| view! { <ReloadError error=e/> })}
        <div
            class="viewport"
            node_ref=scene.viewport
            on:wheel=on_wheel
            on:pointerdown=on_pointer_down
            on:pointerover=move |_| prefetch_drawer()
            on:focusin=move |_| prefetch_drawer()
            on:pointermove=on_pointer_move
            on:pointerup=on_pointer_up
            on:pointercancel=on_pointer_cancel
        >
            <div
                class=world_class
                data-testid="world"
                style:transform=move || ctx.camera.get().transform()
            >
                <svg
                    class="edge-layer"
                    width=move || layer_w.get()
                    height=move || layer_h.get()
                    aria-hidden="true"
                >
                    {edge_paths}
                    <ObservedPaths edges=observed arcs/>
                </svg>
                <div class="node-layer">{nodes}</div>
                <div class="label-layer">{edge_labels}<ObservedLabels edges=observed arcs/></div>
                {move || {
                    far_ready
                        .get()
                        .then(|| {
                            view! {
                                <FarEdges width=layer_w height=layer_h/>
                                <FarBlocks/>
                            }
                        })
                }}
            </div>
            <DragOverlay/>
        </div>
        <Minimap/>
        <LabelCover arcs/>
        <SuggestionsPanel/>
        <Drawer/>
        <ChooserPanel/>
    }
}

/// Keeps the page's bounds ([`CanvasCtx::bounds`]: what fit-to-view and
/// the first view show, what the minimap draws) around every card, every
/// edge label and every observed arc's label, so a fitted view
/// leaves no label outside the window or under the toolbar. Browser only:
/// effects do not run on the server.
fn follow_bounds(ctx: CanvasCtx, scene: &SceneCtx, arcs: Memo<Arc<HashMap<String, ObservedGeom>>>) {
    let cards = scene.bounds;
    let labels = scene.label_boxes;
    Effect::new(move |_| {
        let mut all = cards.get();
        labels.with(|boxes| {
            for r in boxes.iter().flatten() {
                all = all.union(*r);
            }
        });
        // An arc's label sits at its apex: its box holds what the arc adds
        // (the arc's control box reaches twice as far out as its curve).
        arcs.with(|m| {
            for r in m.values().filter_map(|g| g.label.rect) {
                all = all.union(r);
            }
        });
        ctx.bounds.set(Some(all));
    });
}

/// True for a moment after each change of zoom (browser only: effects do
/// not run on the server), while the world is drawn without a layer of its
/// own so that Chromium rasterises it again at the new scale.
fn rezoom_after_zoom(ctx: CanvasCtx) -> RwSignal<bool> {
    let rezoom = RwSignal::new(false);
    let zoom = Memo::new(move |_| ctx.camera.get().zoom);
    let timer = StoredValue::new(None::<TimeoutHandle>);
    Effect::new(move |prev: Option<f64>| {
        let z = zoom.get();
        if prev.is_some_and(|p| p != z) {
            rezoom.set(true);
            if let Some(t) = timer.get_value() {
                t.clear();
            }
            let handle = set_timeout_with_handle(
                move || {
                    let _ = rezoom.try_set(false);
                },
                REZOOM,
            )
            .ok();
            timer.set_value(handle);
        }
        z
    });
    on_cleanup(move || {
        if let Some(t) = timer.try_get_value().flatten() {
            t.clear();
        }
    });
    rezoom
}
