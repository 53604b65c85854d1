//! The views of making connections: the handle on each root node, the
//! line dragged from it, and the chooser (a listbox of legal connections,
//! for the keyboard and for a drop that allows several capabilities).
//!
//! The drag itself is the interaction layer's
//! ([`controller`]); creating the
//! edge is a command ([`edges`](crate::canvas::commands::edges)).

use leptos::ev::{KeyboardEvent, PointerEvent};
use leptos::prelude::*;

use crate::canvas::commands::edges::{create_edge, open_chooser};
use crate::canvas::connect::sentence;
use crate::canvas::dom::focus_testid;
use crate::canvas::graph::{Point, ROOT_H, ROOT_W};
use crate::canvas::interaction::{controller, Chooser, SceneCtx};
use crate::canvas::labels::kind_label;
use crate::canvas::state::CanvasCtx;

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
        move |ev: PointerEvent| controller::start_connect(&scene, &id, &ev)
    };
    let on_click = {
        let (scene, id) = (scene.clone(), id.clone());
        move |ev: leptos::ev::MouseEvent| {
            ev.stop_propagation();
            if controller::click_ends_drag(&scene) {
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
