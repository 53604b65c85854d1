//! Making and removing connections: what a drop, the chooser, the handle
//! or a key press asks for, and the calls that ask the hub to create or
//! remove an edge.
//!
//! What is legal comes from [`Connections`](crate::canvas::connect::Connections),
//! i.e. from the registry's rules; the hub re-checks every create and its
//! refusal is shown as it gave it.

use leptos::prelude::*;

use crate::api::{self, Method};
use crate::canvas::connect::{refusal, sentence, Candidate, Verdict};
use crate::canvas::dom::{focus_testid, has_testid};
use crate::canvas::graph::Point;
use crate::canvas::interaction::{Chooser, SceneCtx};
use crate::canvas::state::{CanvasCtx, NoticeKind, Selection};
use crate::dto::{CreateEdgeRequest, EdgeView};
use crate::routes;

/// A connection from `source` was dropped on `target`: create it when one
/// capability is legal, ask which when several are, say why not when none.
pub(crate) fn drop_on(ctx: CanvasCtx, scene: &SceneCtx, source: &str, target: &str, anchor: Point) {
    let verdict = scene.connections.judge(source, target);
    match verdict {
        Verdict::Legal(mut options) if options.len() == 1 => {
            if let Some(only) = options.pop() {
                create_edge(ctx, scene, only);
            }
        }
        Verdict::Legal(options) => scene.chooser.set(Some(Chooser {
            title: format!(
                "Connect {} and {}: which capability?",
                scene.name(source),
                scene.name(target)
            ),
            options,
            anchor: Some(anchor),
            return_focus: format!("node-{target}"),
        })),
        other => {
            let text = refusal(&other, source, target, |id| scene.name(id)).unwrap_or_default();
            ctx.announce(NoticeKind::Refused, text);
        }
    }
}

/// Opens the chooser with every legal connection of `root` not made yet
/// (the keyboard's way to connect, and the handle's click).
pub(crate) fn open_chooser(ctx: CanvasCtx, scene: &SceneCtx, root: &str) {
    let options = scene.connections.open_from(root);
    let name = scene.name(root);
    if options.is_empty() {
        ctx.announce(
            NoticeKind::Refused,
            format!("{name} has no connection left to make: every connection the rules allow for it exists already, or none is allowed."),
        );
        return;
    }
    scene.chooser.set(Some(Chooser {
        title: format!("Connect {name} to…"),
        options,
        anchor: None,
        return_focus: format!("node-{root}"),
    }));
}

/// Asks the hub to establish `c`; the canvas redraws with the new edge
/// (the live channel says so too) and focus goes to it.
pub(crate) fn create_edge(ctx: CanvasCtx, scene: &SceneCtx, c: Candidate) {
    create_edge_then(ctx, scene, c, |_| {});
}

/// [`create_edge`], then `then(created)` once the hub has answered
/// (`created` is false for a refusal, an existing edge or no answer): the
/// one create path, for whoever needs to know how it ended (a suggestion
/// being accepted).
pub(crate) fn create_edge_then(
    ctx: CanvasCtx,
    scene: &SceneCtx,
    c: Candidate,
    then: impl FnOnce(bool) + 'static,
) {
    let label = sentence(&c, |id| scene.name(id));
    let request = CreateEdgeRequest {
        consumer: c.consumer.clone(),
        provider: c.provider.clone(),
        capability: c.capability.clone(),
    };
    ctx.announce(NoticeKind::Done, format!("Connecting: {label}…"));
    leptos::task::spawn_local(async move {
        match api::send_json::<_, EdgeView>(Method::Post, routes::EDGES, Some(&request)).await {
            Ok(edge) => {
                let id = edge.map_or_else(|| c.edge_id(), |e| e.id);
                // The live channel may have redrawn the canvas already.
                let target = format!("edge-{id}");
                if !focus_testid(&target) {
                    ctx.focus_after_load.set_value(Some(target));
                }
                ctx.announce(NoticeKind::Done, format!("Connected: {label}."));
                ctx.refetch();
                then(true);
            }
            Err(f) if f.status == 409 => {
                ctx.announce(NoticeKind::Refused, format!("Already connected: {label}."));
                ctx.refetch();
                then(false);
            }
            Err(f) => {
                ctx.announce(
                    NoticeKind::Refused,
                    format!("The hub refused to connect {label} — {}", f.describe()),
                );
                then(false);
            }
        }
    });
}

/// Asks the hub to remove an edge; its drawer closes and focus goes to
/// its consumer.
pub(crate) fn remove_edge(ctx: CanvasCtx, scene: &SceneCtx, edge: &EdgeView) {
    let label = format!(
        "{} consumes {} from {}",
        scene.name(&edge.consumer),
        edge.capability,
        scene.name(&edge.provider)
    );
    let id = edge.id.clone();
    let consumer = scene.model.root_of(&edge.consumer).to_string();
    leptos::task::spawn_local(async move {
        let path = routes::edge(&id);
        match api::send_json::<(), serde::de::IgnoredAny>(Method::Delete, &path, None).await {
            Ok(_) => {
                if ctx.selection.get_untracked() == Some(Selection::Edge(id.clone())) {
                    ctx.selection.try_set(None);
                }
                let target = format!("node-{consumer}");
                if has_testid(&format!("edge-{id}")) {
                    ctx.focus_after_load.set_value(Some(target));
                } else {
                    // The live channel redrew the canvas already.
                    focus_testid(&target);
                }
                ctx.announce(NoticeKind::Done, format!("Removed: {label}."));
                ctx.refetch();
            }
            Err(f) => ctx.announce(
                NoticeKind::Refused,
                format!("Could not remove {label} — {}", f.describe()),
            ),
        }
    });
}
