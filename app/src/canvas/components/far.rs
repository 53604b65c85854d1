//! The graph far out (a canvas of 500 nodes, zoomed out; DESIGN.md §6,
//! the canvas): below [`FAR_ZOOM`](crate::canvas::cull::FAR_ZOOM) every root
//! is a block (its card and its children's area, its name, its health) and
//! the edges are a few long paths, one per look (kind and health, and the
//! lit edge on its own), instead of a thousand cards, lines, labels and
//! traffic lines nobody can read at that size. Fit-to-view on a large
//! graph lands here, so it draws a hundred elements instead of nine
//! thousand.
//!
//! Drawn (hidden) from a moment after hydration on: the world's `far`
//! class shows this layer and hides the detailed ones, so crossing the
//! threshold builds nothing.
//!
//! Blocks stay buttons: a click or Enter opens the root's drawer, a press
//! drags the root (the drag overlay draws its edges), the arrow keys nudge
//! it, `c` opens the chooser, like a card.

use leptos::prelude::*;

use super::node::{live_position, root_handlers, translate};
use crate::canvas::graph::{ROOT_H, ROOT_W};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::labels::{kind_label, node_kind_label};
use crate::canvas::state::{CanvasCtx, Selection};

/// The edges as grouped paths: (CSS class, concatenated path data), one
/// per look, the lit edges last so they draw on top; the edges of a root
/// being dragged are left out (the drag overlay draws them).
fn grouped_paths(ctx: &CanvasCtx, scene: &SceneCtx) -> Vec<(String, String)> {
    let lifted = scene.dragging.get();
    let lit = ctx.highlight.get();
    let selected = ctx.selection.with(|s| match s {
        Some(Selection::Edge(id)) => Some(id.clone()),
        _ => None,
    });
    let model = &scene.model;
    // (kind, health word or "active", path data)
    let mut groups: Vec<(&'static str, &'static str, String)> = Vec::new();
    for (i, e) in model.edges.iter().enumerate() {
        if let Some(root) = &lifted {
            if model.root_of(&e.consumer) == root || model.root_of(&e.provider) == root {
                continue;
            }
        }
        let Some(path) = scene
            .edge_geom
            .get(i)
            .and_then(|g| g.with(|g| g.as_ref().map(|g| g.path.clone())))
        else {
            continue;
        };
        let active =
            lit.as_deref() == Some(e.id.as_str()) || selected.as_deref() == Some(e.id.as_str());
        let kind = kind_label(e.kind);
        let look = if active {
            "active"
        } else {
            scene.edge_health(ctx, e).word()
        };
        match groups.iter_mut().find(|(k, l, _)| *k == kind && *l == look) {
            Some((_, _, d)) => {
                d.push(' ');
                d.push_str(&path);
            }
            None => groups.push((kind, look, path.to_string())),
        }
    }
    groups.sort_by_key(|(_, look, _)| *look == "active");
    groups
        .into_iter()
        .map(|(kind, look, d)| (format!("far-edge {kind} {look}"), d))
        .collect()
}

/// Every edge far out, as a few paths.
#[component]
pub(crate) fn FarEdges(
    /// Width of the edge layer.
    width: Memo<String>,
    /// Height of the edge layer.
    height: Memo<String>,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    // Computed only far out (close up this layer is hidden, and hovering
    // a label there must not regroup a thousand paths).
    let far = scene.far;
    let groups = Memo::new(move |prev: Option<&Vec<(String, String)>>| {
        if !far.get() {
            return prev.cloned().unwrap_or_default();
        }
        grouped_paths(&ctx, &scene)
    });
    let paths = move || {
        groups
            .get()
            .into_iter()
            .map(|(class, d)| view! { <path class=class d=d></path> })
            .collect_view()
    };
    view! {
        <svg
            class="far-edges"
            width=move || width.get()
            height=move || height.get()
            aria-hidden="true"
        >
            {paths}
        </svg>
    }
    .into_any()
}

/// One root far out: a block the size of its card and children.
#[component]
pub(crate) fn FarBlock(
    /// The root's place in the model's roots.
    index: usize,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let Some(id) = scene.model.roots.get(index).cloned() else {
        return ().into_any();
    };
    let Some(node) = scene.model.nodes.get(&id).cloned() else {
        return ().into_any();
    };
    let kind = node_kind_label(node.node_type);
    let pos = live_position(&scene, &id);
    let health = {
        let (scene, id) = (scene.clone(), id.clone());
        Memo::new(move |_| scene.system_health(&ctx, &id).0)
    };
    let class = {
        let (scene, id) = (scene.clone(), id.clone());
        move || {
            let mut c = format!("far-block {kind} {}", health.get().word());
            if scene.is_selected(Selection::Node(id.clone())) {
                c.push_str(" selected");
            }
            if scene.lifted.selected(&Some(id.clone())) {
                c.push_str(" dragging");
            }
            c
        }
    };
    let label = {
        let name = node.name.clone();
        move || format!("{name}, {kind}, {}", health.get().spoken())
    };
    let (on_down, on_click, on_keydown) = root_handlers(ctx, &scene, &id);
    let h = scene.model.block_height(&id);
    view! {
        <div
            class=class
            data-testid=format!("far-{id}")
            data-root=id.clone()
            role="button"
            tabindex="0"
            aria-label=label
            aria-keyshortcuts="c"
            style:transform=move || translate(pos.get())
            style:width=format!("{ROOT_W}px")
            style:height=format!("{h}px")
            on:pointerdown=on_down
            on:click=on_click
            on:keydown=on_keydown
        >
            <div class="far-card" style:height=format!("{ROOT_H}px")>
                <span class="far-name" title=node.name.clone()>{node.name.clone()}</span>
            </div>
        </div>
    }
    .into_any()
}

/// Every root far out.
#[component]
pub(crate) fn FarBlocks() -> impl IntoView {
    let scene = expect_context::<SceneCtx>();
    let blocks = (0..scene.model.roots.len())
        .map(|index| view! { <FarBlock index/> })
        .collect_view();
    view! { <div class="far-blocks">{blocks}</div> }.into_any()
}
