//! Making and removing connections on the canvas: the handle on each
//! root node, the line dragged from it, the chooser (a listbox of legal
//! connections, for the keyboard and for a drop that allows several
//! capabilities), and the calls that ask the hub to create or remove an
//! edge.
//!
//! What is legal comes from [`Connections`](super::connect::Connections),
//! i.e. from the registry's rules; the hub re-checks every create and its
//! refusal is shown as it gave it.

use std::collections::HashSet;
use std::sync::Arc;

use leptos::ev::{KeyboardEvent, PointerEvent};
use leptos::prelude::*;

use super::connect::{refusal, sentence, Candidate, Verdict};
use super::drawer::{focus_testid, has_testid};
use super::graph::{Point, ROOT_H, ROOT_W};
use super::kind_label;
use super::scene::SceneCtx;
use super::state::{CanvasCtx, NoticeKind, Selection};
use crate::api::{self, Method};
use crate::dto::{CreateEdgeRequest, EdgeView};
use crate::routes;

/// A connection being dragged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConnectDrag {
    /// The root it starts from.
    pub source: String,
    /// The roots it may be dropped on.
    pub legal: Arc<HashSet<String>>,
}

/// The open chooser.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chooser {
    /// What the chooser asks.
    pub title: String,
    /// The legal connections to choose from.
    pub options: Vec<Candidate>,
    /// Where to show it (canvas pixels); `None`: the top of the canvas.
    pub anchor: Option<Point>,
    /// Test id of what gets focus back when it closes.
    pub return_focus: String,
}

/// How a root takes part in a connection being dragged, for its styling:
/// `source`, `legal`, `illegal`, or nothing when no drag is on.
pub(crate) fn connect_role(scene: &SceneCtx, root: &str) -> Option<&'static str> {
    scene.connecting.with(|c| {
        c.as_ref().map(|d| {
            if d.source == root {
                "source"
            } else if d.legal.contains(root) {
                "legal"
            } else {
                "illegal"
            }
        })
    })
}

/// A drag from `source`'s handle has left the handle: light up the legal
/// targets, dim the rest.
pub(crate) fn begin_drag(scene: &SceneCtx, source: &str) {
    scene.chooser.set(None);
    scene.connecting.set(Some(ConnectDrag {
        source: source.to_string(),
        legal: Arc::new(scene.connections.legal_targets(source)),
    }));
}

/// The drag is over (dropped or cancelled).
pub(crate) fn end_drag(scene: &SceneCtx) {
    scene.connecting.set(None);
    scene.connect_cursor.set(None);
    scene.connect_hover.set(None);
}

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
            }
            Err(f) if f.status == 409 => {
                ctx.announce(NoticeKind::Refused, format!("Already connected: {label}."));
                ctx.refetch();
            }
            Err(f) => ctx.announce(
                NoticeKind::Refused,
                format!("The hub refused to connect {label} — {}", f.describe()),
            ),
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

/// The handle on a root's right side: drag it to a node to connect, or
/// press it (Enter, click) to choose from a list.
#[component]
pub(crate) fn ConnectHandle(
    /// The root's node id.
    id: String,
    /// Its display name.
    name: String,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let on_down = {
        let (scene, id) = (scene.clone(), id.clone());
        move |ev: PointerEvent| scene.start_connect(&id, &ev)
    };
    let on_click = {
        let (scene, id) = (scene.clone(), id.clone());
        move |ev: leptos::ev::MouseEvent| {
            ev.stop_propagation();
            if scene.suppress_click.get_value() {
                scene.suppress_click.set_value(false);
                return;
            }
            open_chooser(ctx, &scene, &id);
        }
    };
    view! {
        <button
            type="button"
            class="connect-handle"
            data-testid=format!("handle-{id}")
            aria-label=format!("Connect {name} to another node")
            title="Drag to a node to connect (or press to choose)"
            style:left=format!("{}px", ROOT_W - 9.0)
            style:top=format!("{}px", ROOT_H / 2.0 - 9.0)
            on:pointerdown=on_down
            on:click=on_click
        ></button>
    }
}

/// The line of a connection being dragged, from the source's handle to
/// the pointer. Always in the DOM (empty when idle), so server and browser
/// render the same edge layer.
#[component]
pub(crate) fn ConnectLine() -> impl IntoView {
    let scene = expect_context::<SceneCtx>();
    let d = move || {
        let (Some(drag), Some(to)) = (scene.connecting.get(), scene.connect_cursor.get()) else {
            return String::new();
        };
        let Some(from) = scene
            .positions
            .with(|p| p.get(&drag.source).copied())
            .map(|p| Point {
                x: p.x + ROOT_W,
                y: p.y + ROOT_H / 2.0,
            })
        else {
            return String::new();
        };
        let k = ((to.x - from.x).abs() / 2.0).max(40.0);
        format!(
            "M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}",
            from.x,
            from.y,
            from.x + k,
            from.y,
            to.x - k,
            to.y,
            to.x,
            to.y
        )
    };
    let class = move || {
        let legal = scene.connect_hover.with(|h| {
            h.as_ref().map(|t| {
                scene
                    .connecting
                    .with(|c| c.as_ref().is_some_and(|d| d.legal.contains(t)))
            })
        });
        match legal {
            Some(true) => "connect-line legal",
            Some(false) => "connect-line illegal",
            None => "connect-line",
        }
    };
    view! { <path class=class d=d></path> }
}

/// The chooser, when open.
#[component]
pub(crate) fn ChooserPanel() -> impl IntoView {
    let scene = expect_context::<SceneCtx>();
    move || {
        scene
            .chooser
            .get()
            .map(|chooser| view! { <ChooserView chooser/> })
    }
}

/// A listbox of legal connections: arrows move, Enter connects, Escape
/// cancels and gives focus back.
#[component]
fn ChooserView(chooser: Chooser) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let active = RwSignal::new(0usize);
    let count = chooser.options.len();
    let list = NodeRef::<leptos::html::Ul>::new();
    Effect::new(move |_| {
        if let Some(el) = list.get() {
            let _ = el.focus();
        }
    });
    let options = StoredValue::new(chooser.options.clone());
    let return_focus = StoredValue::new(chooser.return_focus.clone());
    let close = {
        let scene = scene.clone();
        move || {
            scene.chooser.set(None);
            focus_testid(&return_focus.get_value());
        }
    };
    let confirm = {
        let scene = scene.clone();
        move |i: usize| {
            let Some(c) = options.with_value(|o| o.get(i).cloned()) else {
                return;
            };
            close();
            create_edge(ctx, &scene, c);
        }
    };
    let on_key = {
        let confirm = confirm.clone();
        move |ev: KeyboardEvent| {
            match ev.key().as_str() {
                "ArrowDown" => active.update(|a| *a = (*a + 1) % count.max(1)),
                "ArrowUp" => active.update(|a| *a = (*a + count.max(1) - 1) % count.max(1)),
                "Home" => active.set(0),
                "End" => active.set(count.saturating_sub(1)),
                "Enter" | " " => confirm(active.get_untracked()),
                "Escape" => {
                    // Only the chooser closes, not the drawer behind it.
                    ev.stop_propagation();
                    close();
                }
                _ => return,
            }
            ev.prevent_default();
        }
    };
    let items = chooser
        .options
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let kind = kind_label(c.kind);
            let text = sentence(c, |id| scene.name(id));
            let confirm = confirm.clone();
            view! {
                <li
                    id=format!("connect-option-{i}")
                    role="option"
                    class=move || if active.get() == i { "connect-option active" } else { "connect-option" }
                    aria-selected=move || (active.get() == i).to_string()
                    data-testid="connect-option"
                    data-edge-id=c.edge_id()
                    on:click=move |_| confirm(i)
                    on:pointerenter=move |_| active.set(i)
                >
                    <span>{text}</span>
                    <span class=format!("kind-chip {kind}")>{kind}</span>
                </li>
            }
        })
        .collect_view();
    let style = chooser.anchor.map_or_else(String::new, |p| {
        format!(
            "left: {:.0}px; top: {:.0}px;",
            p.x.max(8.0),
            (p.y + 12.0).max(8.0)
        )
    });
    let placed = if chooser.anchor.is_some() {
        "chooser anchored"
    } else {
        "chooser"
    };
    view! {
        <div
            class=placed
            style=style
            role="dialog"
            aria-labelledby="chooser-title"
            data-testid="connect-chooser"
            on:pointerdown=|ev: PointerEvent| ev.stop_propagation()
        >
            <p id="chooser-title" class="chooser-title">{chooser.title.clone()}</p>
            <ul
                class="chooser-list"
                role="listbox"
                tabindex="0"
                node_ref=list
                aria-labelledby="chooser-title"
                aria-activedescendant=move || format!("connect-option-{}", active.get())
                data-testid="connect-options"
                on:keydown=on_key
            >
                {items}
            </ul>
            <div class="chooser-foot">
                <span class="muted">"↑ ↓ choose · Enter connect · Esc cancel"</span>
                <button
                    type="button"
                    data-testid="connect-cancel"
                    on:click=move |_| close()
                >
                    "Cancel"
                </button>
            </div>
        </div>
    }
}
