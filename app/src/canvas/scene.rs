//! The drawn graph: the pannable, zoomable world with its nodes and edges,
//! the minimap, the drawer, the chooser and the suggestions panel. The top
//! of the canvas's layers: it builds the scene's state, hands the
//! gestures' outcomes to the commands and composes the components.
//!
//! React Flow's hybrid: HTML nodes over an SVG edge layer, edge labels as
//! HTML above the nodes, and one CSS transform on the world for pan and
//! zoom. Positions live in one signal; each node and edge derives its own
//! piece with a memo, so dragging a node repaints that node and its edges.

use leptos::ev::{PointerEvent, WheelEvent};
use leptos::prelude::*;

use super::commands::{edges, positions};
use super::components::connector::{ChooserPanel, ConnectLine};
use super::components::drawer::Drawer;
use super::components::edge::{
    label_place, Arrow, DragLabels, DragLayer, EdgeLabel, EdgePath, TrafficLine,
};
use super::components::messages::ReloadError;
use super::components::minimap::Minimap;
use super::components::node::RootNode;
use super::components::suggestions::SuggestionsPanel;
use super::dom::focus_testid;
use super::graph::LABEL_RUN;
use super::interaction::controller::{self, GestureEnd};
use super::interaction::SceneCtx;
use super::state::CanvasCtx;
use crate::dto::TopologyView;

/// Below this zoom the canvas draws less detail (edge labels show only
/// when focused or lit, capability chips fade): they are unreadable there,
/// and a thousand of them cost every frame of a pan.
const FAR_ZOOM: f64 = 0.5;

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

    let roots = scene.model.roots.clone();
    let edges = scene.model.edges.clone();
    let edge_paths = edges
        .iter()
        .enumerate()
        .map(|(index, e)| view! { <EdgePath edge=e.clone() index/> })
        .collect_view();
    // Each label and its traffic line (DESIGN.md §6: recent calls under
    // the label) share one place; the lines are a layer of their own, so
    // far out they are hidden as one element.
    let places: Vec<_> = edges
        .iter()
        .enumerate()
        .map(|(index, e)| label_place(ctx, &scene, e, index))
        .collect();
    let traffic_lines = edges
        .iter()
        .zip(&places)
        .map(|(e, &place)| view! { <TrafficLine edge=e.id.clone() place/> })
        .collect_view();
    let edge_labels = edges
        .into_iter()
        .zip(places)
        .map(|(edge, place)| view! { <EdgeLabel edge place/> })
        .collect_view();
    let nodes = roots
        .into_iter()
        .map(|id| view! { <RootNode id/> })
        .collect_view();
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

    view! {
        {reload_error.map(|e| view! { <ReloadError error=e/> })}
        <div
            class="viewport"
            node_ref=scene.viewport
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
                        <Arrow id="arrow-task"/>
                        <Arrow id="arrow-degraded"/>
                        <Arrow id="arrow-active"/>
                    </defs>
                    {edge_paths}
                    <ConnectLine/>
                </svg>
                <DragLayer width=layer_w height=layer_h/>
                <div class="node-layer">{nodes}</div>
                <div class="label-layer">{edge_labels}</div>
                <div class="label-layer traffic-layer" aria-hidden="true">{traffic_lines}</div>
                <DragLabels/>
            </div>
        </div>
        <Minimap/>
        <SuggestionsPanel/>
        <Drawer/>
        <ChooserPanel/>
    }
}
