//! Where the operator puts nodes, persisted by the hub (`PUT
//! /api/positions`), so the canvas looks the same after a reload and in
//! every browser.
//!
//! Moves are sent debounced: a drag ends in one request, a run of arrow
//! keys in one request once the keys stop. A failed save keeps its moves
//! for the next attempt and says so. The layout starts from the positions
//! the hub serves ([`served_positions`](crate::canvas::graph::served_positions)).

use std::time::Duration;

use leptos::prelude::*;

use crate::api::{self, Method};
use crate::canvas::graph::Point;
use crate::canvas::interaction::controller;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::{CanvasCtx, NoticeKind};
use crate::dto::{NodePosition, SavePositionsRequest};
use crate::routes;

/// Quiet time after the last move before the moves are sent.
const SAVE_DEBOUNCE: Duration = Duration::from_millis(400);

/// A root has been moved (drag end or arrow key): keep it for redraws in
/// this tab and save it soon.
pub(crate) fn moved(ctx: &CanvasCtx, root: &str, pos: Point) {
    let pos = Point {
        x: (pos.x * 10.0).round() / 10.0,
        y: (pos.y * 10.0).round() / 10.0,
    };
    ctx.moved.update_value(|m| {
        m.insert(root.to_string(), pos);
    });
    ctx.unsaved.update_value(|m| {
        m.insert(root.to_string(), pos);
    });
    schedule(*ctx);
}

/// Moves a root by a world offset (arrow keys), then records it.
pub(crate) fn nudge(ctx: &CanvasCtx, scene: &SceneCtx, root: &str, dx: f64, dy: f64) {
    if let Some(pos) = controller::nudge(scene, root, dx, dy) {
        moved(ctx, root, pos);
    }
}

fn schedule(ctx: CanvasCtx) {
    if let Some(timer) = ctx.save_timer.get_value() {
        timer.clear();
    }
    let timer = set_timeout_with_handle(move || flush(ctx), SAVE_DEBOUNCE).ok();
    ctx.save_timer.set_value(timer);
}

/// Sends every unsaved move now.
pub(crate) fn flush(ctx: CanvasCtx) {
    ctx.save_timer.set_value(None);
    let batch = ctx
        .unsaved
        .try_update_value(std::mem::take)
        .unwrap_or_default();
    if batch.is_empty() {
        return;
    }
    let request = SavePositionsRequest {
        positions: batch
            .iter()
            .map(|(node, p)| NodePosition {
                node: node.clone(),
                x: p.x,
                y: p.y,
            })
            .collect(),
    };
    leptos::task::spawn_local(async move {
        let res = api::send_json::<_, serde::de::IgnoredAny>(
            Method::Put,
            routes::POSITIONS,
            Some(&request),
        )
        .await;
        if let Err(failure) = res {
            // Newer moves of the same node win over the failed batch.
            ctx.unsaved.update_value(|m| {
                for (node, p) in batch {
                    m.entry(node).or_insert(p);
                }
            });
            ctx.announce(
                NoticeKind::Refused,
                format!(
                    "Could not save node positions: {}. They are kept in this tab and sent with the next move.",
                    failure.describe()
                ),
            );
        }
    });
}

/// Sends pending moves when the page is hidden or left, so a quick reload
/// after a drag keeps it.
pub(crate) fn save_before_leaving(ctx: CanvasCtx) {
    Effect::new(move |_| {
        let hide = window_event_listener(leptos::ev::pagehide, move |_| flush(ctx));
        on_cleanup(move || hide.remove());
    });
}
