//! Loading what the page draws: the topology (first in-process on the
//! server, then refetched by the browser whenever asked) and the count of
//! proposals waiting in the inbox.
//!
//! A refetch that draws the same graph as the one on screen only updates
//! the health bookkeeping, so nothing is redrawn (and nobody loses focus)
//! for nothing.

use leptos::prelude::*;

use crate::canvas::source::get_topology;
use crate::canvas::state::{CanvasCtx, TopologyLoad};
use crate::dto::{InboxPendingView, TopologyView};
use crate::routes;

/// The load the page is rendered with: in-process on the server (the
/// browser hydrates it and never runs this).
pub(crate) async fn first_load() -> TopologyLoad {
    TopologyLoad {
        seq: 0,
        result: get_topology().await.map_err(|e| e.to_string()),
    }
}

/// Do two views draw the same graph? Positions are left out: they are
/// where nodes were put, and the canvas already shows its own moves.
fn same_drawing(a: &TopologyView, b: &TopologyView) -> bool {
    a.hub_id == b.hub_id
        && a.nodes == b.nodes
        && a.edges == b.edges
        && a.rules == b.rules
        && a.capabilities == b.capabilities
        && a.reload_error == b.reload_error
}

/// Refetches the topology whenever [`CanvasCtx::refetch`] is asked (browser
/// only; the first run is the hydrated page's own load). A load drawing a
/// new graph goes to `latest`; one drawing the same graph only records
/// that its health is as new as its request.
pub(crate) fn follow_refetches(
    ctx: CanvasCtx,
    first: Resource<TopologyLoad>,
    latest: RwSignal<Option<TopologyLoad>>,
) {
    let issued = StoredValue::new(0u64);
    let applied = StoredValue::new(0u64);
    Effect::new(move |prev: Option<u64>| {
        let r = ctx.refresh.get();
        if prev.is_none() {
            return r;
        }
        issued.update_value(|n| *n += 1);
        let ticket = issued.get_value();
        let seq = ctx.event_seq.get_untracked();
        leptos::task::spawn_local(async move {
            let result = crate::api::get_json::<TopologyView>(routes::TOPOLOGY)
                .await
                .map_err(|e| e.describe());
            // An older request answering late must not undo a newer one.
            if ticket < applied.get_value() {
                return;
            }
            applied.set_value(ticket);
            let drawn = latest
                .with_untracked(|l| l.as_ref().map(|l| l.result.clone()))
                .or_else(|| first.get_untracked().map(|l| l.result));
            let same = match (&drawn, &result) {
                (Some(Ok(a)), Ok(b)) => same_drawing(a, b),
                _ => false,
            };
            if same {
                ctx.applied_seq.try_update(|s| *s = (*s).max(seq));
            } else {
                latest.try_set(Some(TopologyLoad { seq, result }));
            }
        });
        r
    });
}

/// Reads how many proposals wait in the inbox (browser only), unless the
/// live channel said so first.
pub(crate) fn load_inbox_pending(ctx: CanvasCtx) {
    leptos::task::spawn_local(async move {
        if let Ok(v) = crate::api::get_json::<InboxPendingView>(routes::INBOX_PENDING).await {
            // A live event may have arrived first: it is newer.
            if ctx.inbox_pending.get_untracked().is_none() {
                ctx.inbox_pending.try_set(Some(v.pending));
            }
        }
    });
}
