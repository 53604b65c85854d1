//! Edge labels under the canvas's controls: the toolbar (top right), the
//! minimap (bottom right), the drawer and the suggestions panel stay put
//! on screen while the world pans and zooms under them, and a label half
//! under one reads as a broken label. A label whose box lies under a
//! control, on screen, is given the class `under-control` (hidden), and
//! shows again when a pan or zoom brings it out.
//!
//! Browser only, and cheap: after each camera change (once per animation
//! frame however many changes come in it), the labels' screen boxes come
//! from their world boxes and the camera (`graph::under_controls`),
//! never from reading a label's layout. The controls' rectangles are read
//! only when something may have moved them: the canvas resized or
//! hydrated, the drawer or the suggestions panel opened or closed, the
//! toolbar's Suggestions button came or went, the minimap appeared or
//! went. The minimap's height follows the camera; it counts as its
//! tallest ([`MAP_MAX_H`]), so a pan needs no read. Only labels whose
//! state changes are touched.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use leptos::prelude::*;

use super::minimap::MAP_MAX_H;
use crate::canvas::graph::{under_controls, ObservedGeom, Rect};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::CanvasCtx;

/// The controls floating over the canvas, by class.
const CONTROLS: [&str; 4] = [".toolbar", ".minimap", ".drawer", ".suggestions"];

/// Keeps the `under-control` state of every label (draws nothing).
#[component]
pub(crate) fn LabelCover(
    /// The observed edges' arcs (`components::observed::observed_arcs`).
    arcs: Memo<Arc<HashMap<String, ObservedGeom>>>,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    // The controls' rectangles in canvas pixels; `None`: to be read again.
    let controls = StoredValue::new(None::<Vec<Rect>>);
    let queued = StoredValue::new(false);
    let run = {
        let scene = scene.clone();
        move || {
            // The scene may have been drawn anew (and this one disposed)
            // between the frame's request and the frame.
            let (Some(far), Some(())) = (
                scene.far.try_get_untracked(),
                arcs.try_with_untracked(|_| ()),
            ) else {
                return;
            };
            if queued.try_set_value(false).is_some() {
                return;
            }
            if far {
                // No labels far out; they are checked again on the way in.
                return;
            }
            if controls.with_value(Option::is_none) {
                controls.set_value(Some(read_controls(&scene)));
            }
            let rects = controls.with_value(|c| c.clone().unwrap_or_default());
            let camera = ctx.camera.get_untracked();
            let under = scene
                .label_boxes
                .with_untracked(|b| under_controls(b.iter().copied(), camera, &rects));
            for (sig, now) in scene.covered.iter().zip(under) {
                if sig.get_untracked() != now {
                    sig.set(now);
                }
            }
            let hidden: BTreeSet<String> = arcs.with_untracked(|m| {
                m.iter()
                    .filter(|(_, g)| under_controls([g.label.rect], camera, &rects) == [true])
                    .map(|(id, _)| id.clone())
                    .collect()
            });
            if scene.covered_observed.with_untracked(|s| *s != hidden) {
                scene.covered_observed.set(hidden);
            }
        }
    };
    let schedule = move || {
        if queued.get_value() {
            return;
        }
        queued.set_value(true);
        let run = run.clone();
        request_animation_frame(run);
    };
    // What moves the controls: then they are read again.
    let minimap_shown = Memo::new(move |_| match (ctx.viewport.get(), ctx.bounds.get()) {
        (Some(size), Some(bounds)) => ctx.camera.get().overflows(bounds, size),
        _ => false,
    });
    {
        let schedule = schedule.clone();
        Effect::new(move |_| {
            ctx.viewport.track();
            ctx.hydrated.track();
            ctx.selection.track();
            ctx.agents.suggestions_open.track();
            ctx.agents.offered.track();
            minimap_shown.track();
            controls.set_value(None);
            schedule();
        });
    }
    // What moves the labels on screen.
    let far = scene.far;
    let boxes = scene.label_boxes;
    Effect::new(move |_| {
        ctx.camera.track();
        far.track();
        boxes.track();
        arcs.track();
        schedule();
    });
}

/// The rectangles of the controls on the canvas now, in canvas pixels.
/// The minimap counts as its tallest.
fn read_controls(scene: &SceneCtx) -> Vec<Rect> {
    let Some(viewport) = scene.viewport.get_untracked() else {
        return Vec::new();
    };
    let origin = viewport.get_bounding_client_rect();
    // The controls are the canvas's, beside the viewport.
    let Some(canvas) = viewport.parent_element() else {
        return Vec::new();
    };
    CONTROLS
        .iter()
        .filter_map(|sel| {
            let el = canvas.query_selector(sel).ok().flatten()?;
            let r = el.get_bounding_client_rect();
            if r.width() <= 0.0 || r.height() <= 0.0 {
                return None;
            }
            let mut rect = Rect {
                x: r.left() - origin.left(),
                y: r.top() - origin.top(),
                w: r.width(),
                h: r.height(),
            };
            if *sel == ".minimap" {
                // Its border (1 px a side) around its tallest drawing.
                let tallest = MAP_MAX_H + 2.0;
                if rect.h < tallest {
                    rect.y -= tallest - rect.h;
                    rect.h = tallest;
                }
            }
            Some(rect)
        })
        .collect()
}
