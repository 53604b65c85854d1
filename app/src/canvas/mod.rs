//! The canvas page: the ecosystem drawn as nodes and edges.
//!
//! The topology comes from one server function ([`get_topology`]), read
//! through a resource, so the first HTML already contains the graph and the
//! browser hydrates it. After hydration the live channel patches statuses
//! and asks for refetches; pan, zoom, drags and drawers are browser-only
//! state layered on top.
//!
//! The page is server-rendered with the topology in it (the resource runs
//! the server function in-process). Later loads, asked for by the live
//! channel or after a change made here, are plain `GET /api/topology`
//! calls from the browser; a load that draws the same graph as the one on
//! screen only updates the health bookkeeping, so nothing is redrawn (and
//! nobody loses focus) for nothing.
//!
//! Modules: `graph` (layout and edge routes, pure), `viewport` (camera
//! math, pure), `connect` (legal connections from the rules, pure),
//! `state` (page state), `scene` (the drawn graph), `node`, `edge`,
//! `connector` (making and removing connections), `drawer`, `panels`
//! (query and consult), `audit`, `positions` (persisting where nodes
//! are), `minimap`, `live` (Server-Sent Events), `source` (the server
//! function and what the hub provides for it).

mod audit;
pub mod connect;
mod connector;
mod drawer;
mod edge;
pub mod graph;
mod live;
mod minimap;
mod node;
mod panels;
mod positions;
mod scene;
mod source;
pub mod state;
pub mod viewport;

use leptos::prelude::*;

use self::graph::{GraphModel, Point};
use self::scene::{ReloadError, Scene};
use self::state::{CanvasCtx, NoticeKind, TopologyLoad};
use self::viewport::{Camera, Size};
use crate::dto::{CapabilityKind, NodeKind, TopologyView};
use crate::routes;
use crate::session::{require_session, UserMenu};

pub use self::source::*;
/// The topology server function's path, under its former name (the
/// hub's tests use it): [`routes::TOPOLOGY_FN`].
pub use crate::routes::TOPOLOGY_FN as TOPOLOGY_FN_PATH;

/// The wire spelling of a capability kind, used in labels and CSS classes.
pub fn kind_label(kind: CapabilityKind) -> &'static str {
    match kind {
        CapabilityKind::DataShare => "data-share",
        CapabilityKind::Consult => "consult",
    }
}

/// The word for a node type, used in labels and CSS classes.
pub fn node_kind_label(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::System => "system",
        NodeKind::Agent => "agent",
        NodeKind::Datasource => "datasource",
        NodeKind::Hub => "hub",
    }
}

/// The load the page is rendered with: in-process on the server (the
/// browser hydrates it and never runs this).
async fn first_load() -> TopologyLoad {
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
fn follow_refetches(
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

/// The canvas route. Rendered on the server, then hydrated.
#[component]
pub fn CanvasPage() -> impl IntoView {
    let ctx = CanvasCtx::new();
    provide_context(ctx);
    // Becomes true only once the wasm bundle has taken over the page: an
    // effect never runs during server rendering. Tests read it as proof of
    // hydration, and the toolbar stays disabled until it is true.
    Effect::new(move |_| ctx.hydrated.set(true));

    require_session();
    let topology = Resource::new(|| (), |_| first_load());
    let latest = RwSignal::new(None::<TopologyLoad>);
    follow_refetches(ctx, topology, latest);
    positions::save_before_leaving(ctx);

    let section = NodeRef::<leptos::html::Section>::new();
    Effect::new(move |_| {
        let Some(el) = section.get() else {
            return;
        };
        let measure = move || {
            let r = el.get_bounding_client_rect();
            ctx.viewport.set(Some(Size {
                w: r.width(),
                h: r.height(),
            }));
        };
        measure();
        let resize = window_event_listener(leptos::ev::resize, move |_| measure());
        on_cleanup(move || resize.remove());
    });
    Effect::new(move |_| {
        let keys = window_event_listener(leptos::ev::keydown, move |ev| {
            if ev.key() == "Escape" {
                drawer::close(ctx);
            }
        });
        on_cleanup(move || keys.remove());
    });
    Effect::new(move |_| {
        #[cfg(feature = "hydrate")]
        {
            let stop = send_wrapper::SendWrapper::new(live::start(ctx));
            on_cleanup(move || (stop.take())());
        }
    });

    view! {
        <header class="topbar">
            <h1>"Wall Street"</h1>
            <span class="subtitle">"A2A exchange hub"</span>
            <nav class="nav" aria-label="Pages">
                <a href="/" aria-current="page" data-testid="nav-canvas">"Canvas"</a>
                <InboxLink/>
            </nav>
            <LiveIndicator/>
            <UserMenu/>
        </header>
        <section
            class="canvas"
            node_ref=section
            aria-label="Ecosystem canvas"
            data-hydrated=move || ctx.hydrated.get().to_string()
        >
            <Toolbar/>
            <Transition fallback=|| {
                view! {
                    <p class="canvas-message" data-testid="loading-state" role="status">
                        "Loading topology…"
                    </p>
                }
            }>
                {move || {
                    let first = topology.get();
                    latest.get().or(first).map(|load| view! { <Loaded load/> })
                }}
            </Transition>
            <Announcer/>
        </section>
    }
}

/// Whatever one load produced: the graph, the empty state or the error.
#[component]
fn Loaded(load: TopologyLoad) -> impl IntoView {
    match load.result {
        Ok(view) if GraphModel::has_systems(&view) => {
            view! { <Scene view seq=load.seq/> }.into_any()
        }
        Ok(view) => view! {
            {view.reload_error.map(|error| view! { <ReloadError error/> })}
            <div class="viewport">
                <p class="empty-state" data-testid="empty-state">
                    "No peers registered — add one to the topology file."
                </p>
            </div>
        }
        .into_any(),
        Err(error) => view! { <LoadError error/> }.into_any(),
    }
}

/// The topology could not be fetched: say what failed and offer a retry.
#[component]
fn LoadError(error: String) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    view! {
        <div class="viewport">
            <div class="canvas-message error" data-testid="error-state" role="alert">
                <p>"Could not load the topology from the hub."</p>
                <p>
                    <code>{error}</code>
                </p>
                <button
                    type="button"
                    disabled=move || !ctx.hydrated.get()
                    on:click=move |_| ctx.refetch()
                >
                    "Try again"
                </button>
            </div>
        </div>
    }
}

/// Zoom buttons, the zoom level and fit-to-view.
#[component]
fn Toolbar() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let zoom_to = move |zoom: Option<f64>| {
        let Some(zoom) = zoom else {
            return;
        };
        let anchor = ctx
            .viewport
            .get_untracked()
            .map(|s| Point {
                x: s.w / 2.0,
                y: s.h / 2.0,
            })
            .unwrap_or_default();
        ctx.camera.update(|c| *c = c.zoom_at(zoom, anchor));
    };
    let fit = move |_| {
        if let (Some(bounds), Some(size)) =
            (ctx.bounds.get_untracked(), ctx.viewport.get_untracked())
        {
            ctx.camera.set(Camera::fit(bounds, size));
        }
    };
    view! {
        <div class="toolbar" role="toolbar" aria-label="Canvas view">
            <button
                type="button"
                data-testid="zoom-out"
                aria-label="Zoom out"
                disabled=move || !ctx.hydrated.get() || ctx.camera.get().step_out().is_none()
                on:click=move |_| zoom_to(ctx.camera.get_untracked().step_out())
            >
                "−"
            </button>
            <output data-testid="zoom-level" aria-live="polite">
                {move || format!("{}%", ctx.camera.get().percent())}
            </output>
            <button
                type="button"
                data-testid="zoom-in"
                aria-label="Zoom in"
                disabled=move || !ctx.hydrated.get() || ctx.camera.get().step_in().is_none()
                on:click=move |_| zoom_to(ctx.camera.get_untracked().step_in())
            >
                "+"
            </button>
            <button
                type="button"
                data-testid="fit-view"
                aria-label="Fit to view"
                title="Fit to view"
                disabled=move || !ctx.hydrated.get() || ctx.bounds.get().is_none()
                on:click=fit
            >
                "⤢"
            </button>
        </div>
    }
}

/// The canvas's live region: what was connected, removed or refused, on
/// screen and read out by screen readers. A message fades after a while.
#[component]
fn Announcer() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    Effect::new(move |_| {
        let Some(seq) = ctx.notice.with(|n| n.as_ref().map(|n| n.seq)) else {
            return;
        };
        set_timeout(
            move || {
                if ctx.notice.with_untracked(|n| n.as_ref().map(|n| n.seq)) == Some(seq) {
                    ctx.notice.try_set(None);
                }
            },
            std::time::Duration::from_secs(12),
        );
    });
    let kind = move || {
        ctx.notice.with(|n| match n.as_ref().map(|n| n.kind) {
            Some(NoticeKind::Done) => "done",
            Some(NoticeKind::Refused) => "refused",
            None => "empty",
        })
    };
    view! {
        <div
            class="announcer"
            data-testid="announcer"
            data-kind=kind
            role="status"
            aria-live="polite"
            aria-atomic="true"
        >
            {move || ctx.notice.get().map(|n| n.text)}
        </div>
    }
}

/// Whether live updates are arriving.
/// The Inbox link, with how many proposals wait there: read once the page
/// is hydrated, then kept current by the live channel (`inbox_changed`).
#[component]
fn InboxLink() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            if let Ok(v) =
                crate::api::get_json::<crate::dto::InboxPendingView>(routes::INBOX_PENDING).await
            {
                // A live event may have arrived first: it is newer.
                if ctx.inbox_pending.get_untracked().is_none() {
                    ctx.inbox_pending.try_set(Some(v.pending));
                }
            }
        });
    });
    let label = move || match ctx.inbox_pending.get() {
        Some(n) if n > 0 => format!("Inbox, {n} waiting for approval"),
        _ => "Inbox".to_string(),
    };
    view! {
        <a href="/inbox" data-testid="nav-inbox" aria-label=label>
            "Inbox"
            {move || ctx.inbox_pending.get().filter(|n| *n > 0).map(|n| view! {
                <span class="badge" data-testid="inbox-pending">{n}</span>
            })}
        </a>
    }
}

#[component]
fn LiveIndicator() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    view! {
        <span
            class="live-indicator"
            data-testid="live-status"
            data-state=move || ctx.link.get().key()
            role="status"
            title="Live updates from the hub"
        >
            <span class="dot" aria-hidden="true"></span>
            {move || ctx.link.get().label()}
        </span>
    }
}
