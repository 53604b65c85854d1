//! Everything the browser runs, and the only types the browser may see.
//!
//! This crate is compiled twice: natively with `ssr` (the hub renders pages
//! with it) and to wasm with `hydrate` (the browser takes those pages over).
//! Anything that must never reach a browser does not belong here.

pub mod api;
pub mod canvas;
pub mod dto;
pub mod format;
pub mod inbox;
pub mod login;
pub mod routes;
pub mod session;
pub mod untrusted;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{Route, Router, Routes},
    SsrMode, StaticSegment,
};

/// The HTML document around the app: the hub's SSR handler renders it, and
/// it pulls in the hydration script that boots the wasm bundle.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                // No favicon request: a 404 would be a console error in every page load.
                <link rel="icon" href="data:,"/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The application root: routes of the canvas UI.
///
/// `/login` is the only public page; the hub redirects every other page
/// there when there is no session, and `/api` refuses it with `401`.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    session::provide_session();
    view! {
        <Stylesheet id="leptos" href="/pkg/wall-street.css"/>
        <Title text="Wall Street"/>
        <Router>
            <Routes fallback=|| view! { <p class="not-found">"Page not found."</p> }>
                // Async: the page is sent once the topology is in it, so the
                // first HTML already shows the graph (no streamed fill-in).
                <Route path=StaticSegment("") view=canvas::CanvasPage ssr=SsrMode::Async/>
                <Route path=StaticSegment("inbox") view=inbox::InboxPage/>
                <Route path=StaticSegment("login") view=login::LoginPage/>
            </Routes>
        </Router>
    }
}

/// Entry point of the wasm bundle: takes over the server-rendered DOM.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
