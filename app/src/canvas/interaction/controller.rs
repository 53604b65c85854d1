//! What pointer and keyboard gestures do to the scene's state: pan the
//! background (and zoom with the wheel), drag a node (or nudge it with the
//! keys), drag a connection from a node's handle.
//!
//! Like xyflow's `XYDrag` and `XYHandle`, the controllers only move state
//! ([`SceneCtx`], the camera); what a finished gesture means (save a
//! position, create an edge) is returned as a [`GestureEnd`] for the
//! scene to hand to the commands.

use std::sync::Arc;

use leptos::ev::{PointerEvent, WheelEvent};
use leptos::prelude::*;

use super::scene_ctx::{ConnectDrag, Gesture, LiveDrag, SceneCtx};
use crate::canvas::dom::{capture_pointer, client_point, root_at};
use crate::canvas::graph::Point;
use crate::canvas::state::CanvasCtx;
use crate::canvas::viewport::Camera;

/// A pointer travelling less than this (screen pixels) is a click, not a drag.
const DRAG_THRESHOLD: f64 = 4.0;

/// What a finished gesture did, for the scene to act on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GestureEnd {
    /// A root was dragged to `pos`.
    Moved { root: String, pos: Point },
    /// A connection from `source` was dropped on `target`, at `anchor`
    /// (canvas pixels).
    Dropped {
        source: String,
        target: String,
        anchor: Point,
    },
}

/// The background was pressed: start panning.
pub(crate) fn start_pan(scene: &SceneCtx, ctx: &CanvasCtx, ev: &PointerEvent) {
    if ev.button() != 0 {
        return;
    }
    capture_pointer(ev);
    scene.gesture.set_value(Some(Gesture::Pan {
        pointer: ev.pointer_id(),
        start: client_point(ev),
        camera: ctx.camera.get_untracked(),
    }));
}

/// The wheel zooms around the pointer.
pub(crate) fn wheel_zoom(scene: &SceneCtx, ctx: &CanvasCtx, ev: &WheelEvent) {
    ev.prevent_default();
    let Some(el) = scene.viewport.get_untracked() else {
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
}

/// Starts moving `root` (a node or one of its children was pressed).
pub(crate) fn start_move(scene: &SceneCtx, root: &str, ev: &PointerEvent) {
    if ev.button() != 0 {
        return;
    }
    ev.stop_propagation();
    capture_pointer(ev);
    scene.suppress_click.set_value(false);
    let origin = scene
        .positions
        .with_untracked(|p| p.get(root).copied())
        .unwrap_or_default();
    scene.gesture.set_value(Some(Gesture::Move {
        pointer: ev.pointer_id(),
        root: root.to_string(),
        start: client_point(ev),
        origin,
        moved: false,
    }));
}

/// Starts dragging a connection from `root`'s handle.
pub(crate) fn start_connect(scene: &SceneCtx, root: &str, ev: &PointerEvent) {
    if ev.button() != 0 {
        return;
    }
    ev.stop_propagation();
    capture_pointer(ev);
    scene.suppress_click.set_value(false);
    scene.gesture.set_value(Some(Gesture::Connect {
        pointer: ev.pointer_id(),
        source: root.to_string(),
        start: client_point(ev),
        moved: false,
    }));
}

/// The pointer moved: pan, move the dragged root, or follow the dragged
/// connection's loose end.
pub(crate) fn pointer_move(scene: &SceneCtx, ctx: &CanvasCtx, ev: &PointerEvent) {
    let now = client_point(ev);
    let Some(gesture) = scene.gesture.get_value() else {
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
                scene.gesture.update_value(|g| {
                    if let Some(Gesture::Move { moved, .. }) = g {
                        *moved = true;
                    }
                });
                scene.dragging.set(Some(root.clone()));
            }
            let zoom = ctx.camera.get_untracked().zoom;
            let at = Point {
                x: origin.x + dx / zoom,
                y: origin.y + dy / zoom,
            };
            // Only the live drag moves: the committed positions (and every
            // route and memo that reads them) wait for the drop.
            scene.drag.set(Some(LiveDrag { root, at }));
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
                scene.gesture.update_value(|g| {
                    if let Some(Gesture::Connect { moved, .. }) = g {
                        *moved = true;
                    }
                });
                begin_connect_drag(scene, &source);
            }
            scene.connect_cursor.set(Some(scene.world_point(ctx, now)));
            let hover = root_at(now).filter(|r| r != &source);
            if scene.connect_hover.get_untracked() != hover {
                scene.connect_hover.set(hover);
            }
        }
        _ => {}
    }
}

/// The pointer was released (or cancelled): the gesture is over. Returns
/// what a drag did; a click, a pan or a cancelled drop did nothing to act
/// on.
pub(crate) fn pointer_up(scene: &SceneCtx, ev: &PointerEvent) -> Option<GestureEnd> {
    let gesture = scene.gesture.get_value()?;
    let pointer = match &gesture {
        Gesture::Pan { pointer, .. }
        | Gesture::Move { pointer, .. }
        | Gesture::Connect { pointer, .. } => *pointer,
    };
    if pointer != ev.pointer_id() {
        return None;
    }
    scene.gesture.set_value(None);
    // The drop commits the dragged root's position (before the drag layer
    // lets go of it, so it never shows back where it started).
    let live = scene.drag.get_untracked();
    if let Some(LiveDrag { root, at }) = &live {
        scene.positions.update(|p| {
            p.insert(root.clone(), *at);
        });
        scene.drag.set(None);
    }
    if scene.dragging.get_untracked().is_some() {
        scene.dragging.set(None);
    }
    match gesture {
        Gesture::Move {
            root, moved: true, ..
        } => {
            scene.suppress_click.set_value(true);
            let pos = live
                .filter(|d| d.root == root)
                .map(|d| d.at)
                .or_else(|| scene.positions.with_untracked(|p| p.get(&root).copied()))?;
            Some(GestureEnd::Moved { root, pos })
        }
        Gesture::Connect {
            source,
            moved: true,
            ..
        } => {
            scene.suppress_click.set_value(true);
            let now = client_point(ev);
            // A cancelled pointer drops nothing.
            let target = (ev.type_() == "pointerup")
                .then(|| root_at(now))
                .flatten()
                .filter(|t| t != &source);
            end_connect_drag(scene);
            let target = target?;
            let anchor = scene.canvas_point(now);
            Some(GestureEnd::Dropped {
                source,
                target,
                anchor,
            })
        }
        _ => None,
    }
}

/// Escape: drops a connection being dragged (nothing else is cancelled).
pub(crate) fn cancel_connect(scene: &SceneCtx) {
    if matches!(scene.gesture.get_value(), Some(Gesture::Connect { .. })) {
        scene.gesture.set_value(None);
        // The click that ends the press must not open the chooser.
        scene.suppress_click.set_value(true);
        end_connect_drag(scene);
    }
}

/// Is this click the one the browser fires at the end of a drag? Then it
/// is swallowed (once): a drag must not also open a drawer or the chooser.
pub(crate) fn click_ends_drag(scene: &SceneCtx) -> bool {
    if scene.suppress_click.get_value() {
        scene.suppress_click.set_value(false);
        return true;
    }
    false
}

/// Moves a root by a world offset (the arrow keys' drag); its new
/// position, if it is drawn.
pub(crate) fn nudge(scene: &SceneCtx, root: &str, dx: f64, dy: f64) -> Option<Point> {
    let mut new = None;
    scene.positions.update(|p| {
        if let Some(pos) = p.get_mut(root) {
            pos.x += dx;
            pos.y += dy;
            new = Some(*pos);
        }
    });
    new
}

/// A drag from `source`'s handle has left the handle: light up the legal
/// targets, dim the rest.
fn begin_connect_drag(scene: &SceneCtx, source: &str) {
    scene.chooser.set(None);
    scene.connecting.set(Some(ConnectDrag {
        source: source.to_string(),
        legal: Arc::new(scene.connections.legal_targets(source)),
    }));
}

/// The connection drag is over (dropped or cancelled).
fn end_connect_drag(scene: &SceneCtx) {
    scene.connecting.set(None);
    scene.connect_cursor.set(None);
    scene.connect_hover.set(None);
}
