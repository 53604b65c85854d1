//! Who is logged in, as the pages know it: the username in the top bar and
//! the CSRF token the browser adds to every state-changing request.
//!
//! The session itself is the hub's (an HttpOnly cookie the browser code
//! never reads). The server renders each page knowing the session (the hub
//! hands the [`SessionView`] to rendering, see [`server_session`]), and
//! passes it to the browser in the page as a [`SharedValue`], so hydration
//! starts from the same value. A page rendered without it asks
//! `GET /api/session` once hydrated.

use leptos::prelude::*;

use crate::api::{self, Method};
use crate::dto::SessionView;
use crate::routes;

/// The session as the pages see it; provided by [`App`](crate::App).
#[derive(Debug, Clone, Copy)]
pub struct SessionCtx {
    /// `None` until known (or on the login page).
    pub session: RwSignal<Option<SessionView>>,
}

/// The session the hub rendered this request for. The hub provides it
/// either as a context value or as a request extension (its session
/// middleware inserts a [`SessionView`] into the request); a page rendered
/// without either simply starts without one.
#[cfg(feature = "ssr")]
pub fn server_session() -> Option<SessionView> {
    use_context::<SessionView>().or_else(|| {
        use_context::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<SessionView>().cloned())
    })
}

/// Creates the page-wide session state, identical on server and browser.
pub fn provide_session() -> SessionCtx {
    #[cfg(feature = "ssr")]
    let initial = SharedValue::new(server_session).into_inner();
    #[cfg(not(feature = "ssr"))]
    let initial = SharedValue::new(|| None::<SessionView>).into_inner();
    api::set_csrf(initial.as_ref().map(|s| s.csrf_token.clone()));
    let ctx = SessionCtx {
        session: RwSignal::new(initial),
    };
    provide_context(ctx);
    ctx
}

/// On a page that needs a session: once hydrated, ask the hub who is
/// logged in if the page was rendered without it (a `401` goes to the
/// login).
pub fn require_session() {
    let ctx = expect_context::<SessionCtx>();
    Effect::new(move |_| {
        if let Some(s) = ctx.session.get_untracked() {
            api::set_csrf(Some(s.csrf_token));
            return;
        }
        leptos::task::spawn_local(async move {
            if let Ok(s) = api::get_json::<SessionView>(routes::SESSION).await {
                api::set_csrf(Some(s.csrf_token.clone()));
                ctx.session.try_set(Some(s));
            }
        });
    });
}

/// Whether the logged-in person may use `route` at all (their role grants
/// what it needs, and a member-scoped person is not asked for an
/// exchange-wide action): the pages leave out the controls they could not
/// use. The hub decides again on every request; this only spares a
/// person buttons that would answer 403.
pub fn can(route: crate::routes::ApiRoute) -> Signal<bool> {
    // Without a session context (a component rendered on its own) nobody
    // may do anything.
    let Some(ctx) = use_context::<SessionCtx>() else {
        return Signal::derive(|| false);
    };
    Signal::derive(move || {
        ctx.session.with(|s| {
            s.as_ref().is_some_and(|s| {
                let rights = route.rights();
                let role_ok = match rights.need {
                    crate::access::Need::Public => true,
                    crate::access::Need::Role(needed) => s.role.grants(needed),
                };
                role_ok && (s.system.is_none() || rights.reach != crate::access::Reach::Exchange)
            })
        })
    })
}

/// The top bar of a page other than the canvas (whose bar carries its
/// live controls): the site's name, the links between pages with `current`
/// marked, who is logged in.
#[component]
pub fn PageTopBar(current: crate::routes::Page) -> impl IntoView {
    use crate::routes::Page;
    let mark = move |page: Page| (page == current).then_some("page");
    view! {
        <header class="topbar">
            <h1>"Wall Street"</h1>
            <nav class="nav" aria-label="Pages">
                <a href="/" aria-current=mark(Page::Canvas) data-testid="nav-canvas">"Canvas"</a>
                <a href="/inbox" aria-current=mark(Page::Inbox) data-testid="nav-inbox">"Inbox"</a>
                {people_link()}
            </nav>
            <UserMenu/>
        </header>
    }
}

/// The top bar's People link, shown to those who may manage people.
pub fn people_link() -> impl IntoView {
    let allowed = can(crate::routes::ApiRoute::People);
    move || {
        allowed.get().then(|| {
            let current = (crate::current_page() == crate::routes::Page::People).then_some("page");
            view! { <a href="/people" aria-current=current data-testid="nav-people">"People"</a> }
        })
    }
}

/// True once the wasm bundle has taken over the page (never on the
/// server): controls that need code stay disabled until then.
pub fn use_hydrated() -> ReadSignal<bool> {
    let (hydrated, set) = signal(false);
    Effect::new(move |_| set.set(true));
    hydrated
}

/// The username and the logout button of the top bar.
#[component]
pub fn UserMenu() -> impl IntoView {
    let ctx = expect_context::<SessionCtx>();
    let hydrated = use_hydrated();
    let busy = RwSignal::new(false);
    let logout = move |_| {
        busy.set(true);
        leptos::task::spawn_local(async move {
            // Whatever the answer, this page is done with the session.
            let _ = api::send_json::<(), serde::de::IgnoredAny>(Method::Post, routes::LOGOUT, None)
                .await;
            api::set_csrf(None);
            api::go_to(routes::LOGIN_PAGE);
        });
    };
    let name = move || ctx.session.get().map(|s| s.username).unwrap_or_default();
    let role = move || {
        ctx.session
            .get()
            .map(|s| match s.system {
                Some(system) => format!("{} of {system}", s.role),
                None => s.role.to_string(),
            })
            .unwrap_or_default()
    };
    view! {
        <div class="user-menu">
            <span class="username" data-testid="username" title="Logged in as">
                {name}
            </span>
            <span class="role muted" data-testid="role" title="What you may do">
                {role}
            </span>
            <button
                type="button"
                class="logout"
                data-testid="logout"
                disabled=move || !hydrated.get() || busy.get()
                on:click=logout
            >
                "Log out"
            </button>
        </div>
    }
}
