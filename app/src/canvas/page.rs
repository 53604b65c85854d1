//! The canvas route: the page around the graph (top bar, toolbar, live
//! region) and whichever of graph, empty state or error the latest load
//! gives.
//!
//! The first load is in the server's HTML (the resource runs the server
//! function in-process); later loads come from the browser's refetches
//! ([`commands::topology`]). The page also measures the canvas, closes the
//! drawer on Escape, runs the live channel, reads which of the hub's own
//! agents to offer ([`commands::agents`]) and every edge's recent traffic
//! ([`commands::traffic`]).

use leptos::prelude::*;

use super::commands;
use super::commands::agents::follow_agents;
use super::commands::camera::follow_camera;
#[cfg(feature = "hydrate")]
use super::commands::live;
use super::commands::positions;
use super::commands::topology::{first_load, follow_refetches};
use super::commands::traffic::follow_traffic;
use super::components::announcer::Announcer;
use super::components::messages::{LoadError, ReloadError};
use super::components::toolbar::Toolbar;
use super::components::topbar::{InboxLink, LiveIndicator, PeopleLink};
use super::graph::GraphModel;
use super::scene::Scene;
use super::state::{CanvasCtx, TopologyLoad};
use super::viewport::Size;
use crate::session::{require_session, UserMenu};

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
    follow_agents(ctx);
    follow_traffic(ctx);
    follow_camera(ctx);
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
                commands::drawer::close(ctx);
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
                <PeopleLink/>
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
