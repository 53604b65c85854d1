//! Nodes: a root's card (a system or the hub) with its agents and
//! datasources hanging under it as small child nodes.
//!
//! A press starts a drag of the root (the interaction controller's); a
//! click or Enter opens the node's drawer, `c` the chooser and the arrow
//! keys nudge the root (commands).

use leptos::ev::{KeyboardEvent, MouseEvent, PointerEvent};
use leptos::prelude::*;

use super::connector::ConnectHandle;
use crate::canvas::commands::edges::open_chooser;
use crate::canvas::commands::positions;
use crate::canvas::css;
use crate::canvas::graph::{
    fit_chips, more_label, GraphModel, Point, CHILD_GAP, CHILD_H, CHILD_TOP, ROOT_H, ROOT_W,
};
use crate::canvas::health::Health;
use crate::canvas::interaction::{controller, SceneCtx};
use crate::canvas::labels::{kind_label, node_kind_label};
use crate::canvas::state::{CanvasCtx, Selection};
use crate::dto::{CapabilityRef, NodeKind, NodeView};

/// How far one arrow-key press moves a focused node, in world pixels.
const NUDGE: f64 = 20.0;

pub(crate) fn translate(p: Point) -> String {
    css::translate(p, "")
}

/// What a root's card and its far-out block answer: a press drags the
/// root, a click opens its drawer, a key acts on it ([`on_key`]).
pub(crate) fn root_handlers(
    ctx: CanvasCtx,
    scene: &SceneCtx,
    id: &str,
) -> (
    impl Fn(PointerEvent) + 'static,
    impl Fn(MouseEvent) + 'static,
    impl Fn(KeyboardEvent) + 'static,
) {
    let on_down = {
        let (scene, id) = (scene.clone(), id.to_string());
        move |ev: PointerEvent| controller::start_move(&scene, &id, &ev)
    };
    let on_click = {
        let (scene, id) = (scene.clone(), id.to_string());
        move |_: MouseEvent| select(&ctx, &scene, &id)
    };
    let on_keydown = {
        let (scene, id) = (scene.clone(), id.to_string());
        move |ev: KeyboardEvent| on_key(&ctx, &scene, &id, &id, &ev)
    };
    (on_down, on_click, on_keydown)
}

/// Opens the drawer of `id`, unless the click ends a drag.
pub(crate) fn select(ctx: &CanvasCtx, scene: &SceneCtx, id: &str) {
    if controller::click_ends_drag(scene) {
        return;
    }
    ctx.selection.set(Some(Selection::Node(id.to_string())));
}

/// Keyboard on a focused node: Enter or Space opens its drawer, `c`
/// starts a connection from its root (a list of the legal ones), the
/// arrow keys move its root (the keyboard's drag).
pub(crate) fn on_key(ctx: &CanvasCtx, scene: &SceneCtx, id: &str, root: &str, ev: &KeyboardEvent) {
    if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
        return;
    }
    let (dx, dy) = match ev.key().as_str() {
        "Enter" | " " => {
            ev.prevent_default();
            ctx.selection.set(Some(Selection::Node(id.to_string())));
            return;
        }
        "c" | "C" => {
            ev.prevent_default();
            open_chooser(*ctx, scene, root);
            return;
        }
        "ArrowLeft" => (-NUDGE, 0.0),
        "ArrowRight" => (NUDGE, 0.0),
        "ArrowUp" => (0.0, -NUDGE),
        "ArrowDown" => (0.0, NUDGE),
        _ => return,
    };
    ev.prevent_default();
    positions::nudge(ctx, scene, root, dx, dy);
}

/// Where the root `id` is drawn: where a drag has it, else its committed
/// position. A memo per root, so a drag's frame re-renders only the
/// dragged root's transform.
pub(crate) fn live_position(scene: &SceneCtx, id: &str) -> Memo<Point> {
    let (id, positions, drag) = (id.to_string(), scene.positions, scene.drag);
    Memo::new(move |_| {
        drag.with(|d| d.as_ref().filter(|d| d.root == id).map(|d| d.at))
            .unwrap_or_else(|| positions.with(|p| p.get(&id).copied().unwrap_or_default()))
    })
}

/// A root node and its children, positioned as one group.
#[component]
pub(crate) fn RootNode(
    /// The root's node id.
    id: String,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let Some(node) = scene.model.nodes.get(&id).cloned() else {
        return ().into_any();
    };
    let pos = live_position(&scene, &id);
    let health = {
        let (id, scene) = (id.clone(), scene.clone());
        Memo::new(move |_| scene.system_health(&ctx, &id).0)
    };
    let children = scene.model.children.get(&id).cloned().unwrap_or_default();
    let tree_line = (!children.is_empty()).then(|| {
        let n = children.len() as f64;
        let h = CHILD_TOP + (n - 1.0) * (CHILD_H + CHILD_GAP) + CHILD_H / 2.0;
        view! { <span class="tree-line" style:top=format!("{ROOT_H}px") style:height=format!("{h}px")></span> }
    });
    let child_views = children
        .into_iter()
        .enumerate()
        .map(|(index, child)| {
            view! { <ChildNode id=child index root=id.clone() system_name=node.name.clone() health/> }
        })
        .collect_view();

    let role = {
        let (scene, id) = (scene.clone(), id.clone());
        Memo::new(move |_| scene.connect_role(&id))
    };
    let hovered = {
        let (scene, id) = (scene.clone(), id.clone());
        Memo::new(move |_| {
            scene
                .connect_hover
                .with(|h| h.as_deref() == Some(id.as_str()))
        })
    };
    let dragged = {
        let (scene, id) = (scene.clone(), id.clone());
        Memo::new(move |_| scene.lifted.selected(&Some(id.clone())))
    };
    let group_class = move || {
        let mut c = String::from("node-group");
        if let Some(r) = role.get() {
            c.push_str(" connect-");
            c.push_str(r);
        }
        if hovered.get() {
            c.push_str(" connect-hover");
        }
        if dragged.get() {
            c.push_str(" dragging");
        }
        c
    };
    let handle = matches!(node.node_type, NodeKind::System | NodeKind::Hub)
        .then(|| view! { <ConnectHandle id=id.clone() name=node.name.clone()/> });

    view! {
        <div class=group_class style:transform=move || translate(pos.get())>
            <NodeCard node=node.clone() health role/>
            {tree_line}
            {child_views}
            {handle}
        </div>
    }
    .into_any()
}

/// The card of a system or the hub.
#[component]
fn NodeCard(
    node: NodeView,
    health: Memo<Health>,
    role: Memo<Option<&'static str>>,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let id = node.id.clone();
    let kind = node_kind_label(node.node_type);
    let name = node.name.clone();
    let class = {
        let (scene, id) = (scene.clone(), id.clone());
        move || {
            let h = health.get();
            let selected = scene.is_selected(Selection::Node(id.clone()));
            format!(
                "node-card {kind} {}{}",
                h.word(),
                if selected { " selected" } else { "" }
            )
        }
    };
    let label = {
        let name = name.clone();
        move || format!("{name}, {kind}, {}", health.get().spoken())
    };
    let (on_down, on_click, on_keydown) = root_handlers(ctx, &scene, &id);
    let caps = (node.node_type != NodeKind::Hub).then(|| {
        let provides = caps_row(ctx, &scene, &id, &name, &node.provides, "provides");
        let consumes = caps_row(ctx, &scene, &id, &name, &node.consumes, "consumes");
        view! { <div class="node-caps">{provides}{consumes}</div> }
    });
    let hub_note = (node.node_type == NodeKind::Hub).then(
        || view! { <p class="node-note">"The exchange: every cross-system call passes here."</p> },
    );

    view! {
        <div
            class=class
            data-testid=format!("node-{id}")
            data-node-type=kind
            data-root=id.clone()
            data-connect=move || role.get().unwrap_or("")
            role="button"
            tabindex="0"
            aria-label=label
            aria-keyshortcuts="c"
            style:width=format!("{ROOT_W}px")
            style:height=format!("{ROOT_H}px")
            on:pointerdown=on_down
            on:click=on_click
            on:keydown=on_keydown
        >
            <div class="node-head">
                <span class="node-type">{kind}</span>
                <span class="node-name" title=name.clone()>{name.clone()}</span>
            </div>
            {caps}
            {hub_note}
            <div class="node-foot">
                <span
                    class=move || format!("status-badge {}", health.get().word())
                    data-testid=format!("status-{id}")
                    title=move || health.get().detail.unwrap_or_default()
                >
                    {move || health.get().badge()}
                </span>
            </div>
        </div>
    }
}

/// One row of capability chips on the card of `id` (named `name`): what
/// it provides or consumes.
///
/// The chips that fit the card whole are drawn ([`fit_chips`] says how
/// many), then, when some are left, a `+N` button counting them: a click,
/// Enter or Space on it opens the node's drawer, which lists them all.
fn caps_row(
    ctx: CanvasCtx,
    scene: &SceneCtx,
    id: &str,
    name: &str,
    caps: &[CapabilityRef],
    direction: &'static str,
) -> impl IntoView {
    (!caps.is_empty()).then(|| {
        let fit = fit_chips(caps.iter().map(|c| c.id.as_str()));
        let (shown, hidden) = caps.split_at(fit.shown.min(caps.len()));
        let chips = shown
            .iter()
            .map(|c| {
                let kind = kind_label(c.kind);
                view! {
                    <span
                        class=format!("cap {kind}")
                        title=format!("{direction} {}, {kind}", c.id)
                        aria-hidden="true"
                    >
                        {c.id.clone()}
                    </span>
                }
            })
            .collect_view();
        let more = (!hidden.is_empty()).then(|| {
            let ids = hidden.iter().map(|c| c.id.as_str()).collect::<Vec<_>>();
            let on_click = {
                let (scene, id) = (scene.clone(), id.to_string());
                move |ev: MouseEvent| {
                    ev.stop_propagation();
                    select(&ctx, &scene, &id);
                }
            };
            // Enter and Space are the button's own (they click it), not
            // the card's.
            let on_keydown = |ev: KeyboardEvent| {
                if matches!(ev.key().as_str(), "Enter" | " ") {
                    ev.stop_propagation();
                }
            };
            view! {
                <button
                    type="button"
                    class="cap more"
                    data-testid=format!("caps-more-{id}-{direction}")
                    data-hidden=hidden.len()
                    aria-label=format!(
                        "{name} {direction} {} capabilities, {} not shown: list them all",
                        caps.len(),
                        hidden.len(),
                    )
                    title=format!("also {direction} {}", ids.join(", "))
                    on:click=on_click
                    on:keydown=on_keydown
                >
                    {more_label(hidden.len())}
                </button>
            }
        });
        view! {
            <div class=format!("cap-row {direction}")>
                <span class="cap-dir" aria-hidden="true">{direction}</span>
                {chips}
                {more}
            </div>
        }
    })
}

/// An agent or datasource under its system; it shares the system's health
/// and dragging it moves the system.
#[component]
fn ChildNode(
    id: String,
    index: usize,
    root: String,
    system_name: String,
    health: Memo<Health>,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let node = scene.model.nodes.get(&id).cloned();
    let (name, kind_enum) = node.as_ref().map_or((id.clone(), NodeKind::Agent), |n| {
        (n.name.clone(), n.node_type)
    });
    let kind = node_kind_label(kind_enum);
    let offset = GraphModel::child_offset(index);
    let class = {
        let (scene, id) = (scene.clone(), id.clone());
        move || {
            let selected = scene.is_selected(Selection::Node(id.clone()));
            format!(
                "node-child {kind} {}{}",
                health.get().word(),
                if selected { " selected" } else { "" }
            )
        }
    };
    let label = {
        let name = name.clone();
        move || format!("{name}, {kind} of {system_name}, {}", health.get().spoken())
    };
    let on_down = {
        let (scene, root) = (scene.clone(), root.clone());
        move |ev: PointerEvent| controller::start_move(&scene, &root, &ev)
    };
    let on_click = {
        let (scene, id) = (scene.clone(), id.clone());
        move |_| select(&ctx, &scene, &id)
    };
    let root_attr = root.clone();
    let on_keydown = {
        let (scene, id) = (scene.clone(), id.clone());
        move |ev: KeyboardEvent| on_key(&ctx, &scene, &id, &root, &ev)
    };
    view! {
        <div
            class=class
            data-testid=format!("node-{id}")
            data-node-type=kind
            data-root=root_attr
            role="button"
            tabindex="0"
            aria-label=label
            style:transform=translate(offset)
            style:width=format!("{}px", ROOT_W - offset.x)
            style:height=format!("{CHILD_H}px")
            on:pointerdown=on_down
            on:click=on_click
            on:keydown=on_keydown
        >
            <span class="child-kind" aria-hidden="true"></span>
            <span class="child-name" title=name.clone()>{name.clone()}</span>
        </div>
    }
}
