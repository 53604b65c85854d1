//! The canvas page: the ecosystem drawn as nodes and edges.
//!
//! The topology comes from one server function ([`get_topology`]), read
//! through a resource, so the first HTML already contains the graph and the
//! browser hydrates it. After hydration the live channel patches statuses
//! and asks for refetches; pan, zoom, drags and drawers are browser-only
//! state layered on top.
//!
//! Modules: `graph` (layout and edge routes, pure), `viewport` (camera
//! math, pure), `state` (page state), `scene` (the drawn graph), `node`,
//! `edge`, `drawer`, `minimap`, `live` (Server-Sent Events), `source`
//! (the server function and what the hub provides for it).

mod drawer;
mod edge;
pub mod graph;
mod live;
mod minimap;
mod node;
mod scene;
mod source;
pub mod state;
pub mod viewport;

use leptos::prelude::*;

use self::graph::{GraphModel, Point};
use self::scene::{ReloadError, Scene};
use self::state::{CanvasCtx, TopologyLoad};
use self::viewport::{Camera, Size};
use crate::dto::{CapabilityKind, NodeKind};

pub use self::live::EVENTS_PATH;
pub use self::source::*;

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

/// One fetch of the topology, stamped for the live channel.
async fn load_topology(seq: u64) -> TopologyLoad {
    TopologyLoad {
        seq,
        result: get_topology().await.map_err(|e| e.to_string()),
    }
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

    let topology = Resource::new(
        move || ctx.refresh.get(),
        move |_| load_topology(ctx.event_seq.get_untracked()),
    );

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
            <LiveIndicator/>
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
            }>{move || topology.get().map(|load| view! { <Loaded load/> })}</Transition>
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

/// Whether live updates are arriving.
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
