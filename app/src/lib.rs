//! Everything the browser runs, and the only types the browser may see.
//!
//! This crate is compiled twice: natively with `ssr` (the hub renders pages
//! with it) and to wasm with `hydrate` (the browser takes those pages over).
//! Anything that must never reach a browser does not belong here.

pub mod access;
pub mod api;
pub mod canvas;
pub mod dto;
pub mod format;
pub mod inbox;
pub mod login;
pub mod parts;
pub mod people;
pub mod routes;
pub mod session;
pub mod untrusted;

use leptos::prelude::*;

use routes::Page;

/// The HTML document around the app: the hub's SSR handler renders it, and
/// it pulls in the hydration script that boots the wasm bundle.
///
/// The head is the server's alone (only the body is hydrated): the page's
/// title and the stylesheet are plain tags here, so the browser bundle
/// carries no head-management code.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let title = current_page().title();
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
                <link rel="stylesheet" id="leptos" href="/pkg/wall-street.css"/>
                <title>{title}</title>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The page the current request (server) or location (browser) asks for.
///
/// Both sides pick the page from the same path with [`Page::from_path`], so
/// hydration finds the DOM the server rendered. There is no client-side
/// router: the links between pages are full page loads, each rendered by
/// the server for the session (a client-side router measured a twentieth
/// of the browser bundle for a few fixed paths).
pub fn current_page() -> Page {
    #[cfg(feature = "ssr")]
    {
        use_context::<http::request::Parts>()
            .map(|parts| Page::from_path(parts.uri.path()))
            .unwrap_or(Page::NotFound)
    }
    #[cfg(all(feature = "hydrate", not(feature = "ssr")))]
    {
        Page::from_path(&window().location().pathname().unwrap_or_default())
    }
    #[cfg(not(any(feature = "ssr", feature = "hydrate")))]
    {
        Page::NotFound
    }
}

/// The application root: the page of the current path.
///
/// `/login` is the only public page; the hub redirects every other page
/// there when there is no session, and `/api` refuses it with `401`.
#[component]
pub fn App() -> impl IntoView {
    session::provide_session();
    match current_page() {
        Page::Canvas => view! { <canvas::CanvasPage/> }.into_any(),
        Page::Inbox => view! { <inbox::InboxPage/> }.into_any(),
        Page::People => view! { <people::PeoplePage/> }.into_any(),
        Page::Login => view! { <login::LoginPage/> }.into_any(),
        Page::NotFound => view! { <p class="not-found">"Page not found."</p> }.into_any(),
    }
}

/// The pages the hub renders, for its axum router: each [`Page`] path with
/// how it is streamed. The canvas is sent once the topology is in it
/// (`Async`), so the first HTML already shows the graph (no streamed
/// fill-in).
#[cfg(feature = "ssr")]
pub fn page_routes() -> Vec<leptos_axum::AxumRouteListing> {
    use leptos_router::{Method, SsrMode};
    Page::ALL
        .iter()
        .map(|page| {
            let mode = match page {
                Page::Canvas => SsrMode::Async,
                _ => SsrMode::OutOfOrder,
            };
            leptos_axum::AxumRouteListing::new(page.path().to_string(), mode, [Method::Get], vec![])
        })
        .collect()
}

/// Entry point of the wasm bundle: takes over the server-rendered DOM.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
