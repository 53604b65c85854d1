//! The login page: the only page reachable without a session.
//!
//! UI users are the hub's (from its config, argon2 hashes), separate from
//! the A2A tokens peers use. On success the hub sets the session cookie and
//! answers the CSRF token; the page then goes where the user was headed
//! (`?next=`, a path on this site only) with a full page load, so the next
//! page is rendered by the server for the new session.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;

use crate::api::{self, safe_next};
use crate::dto::{LoginRequest, SessionView};
use crate::routes;
use crate::session::use_hydrated;

/// What a refused login says: the hub's words for anything but a plain
/// wrong password (e.g. too many attempts).
fn refusal_text(f: &api::ApiFailure) -> String {
    if f.status == 401 {
        "Wrong username or password.".to_string()
    } else {
        format!("Could not log in: {}", f.describe())
    }
}

/// `/login`.
#[component]
pub fn LoginPage() -> impl IntoView {
    let hydrated = use_hydrated();
    let username = RwSignal::new(String::new());
    let password = RwSignal::new(String::new());
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);

    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        if busy.get_untracked() {
            return;
        }
        let req = LoginRequest {
            username: username.get_untracked().trim().to_string(),
            password: password.get_untracked(),
        };
        if req.username.is_empty() || req.password.is_empty() {
            error.set(Some("Enter a username and a password.".into()));
            return;
        }
        busy.set(true);
        error.set(None);
        let target = safe_next(routes::query_param(&api::current_query(), "next").as_deref());
        leptos::task::spawn_local(async move {
            match api::login::<_, SessionView>(routes::LOGIN, &req).await {
                Ok(s) => {
                    api::set_csrf(Some(s.csrf_token));
                    api::go_to(&target);
                }
                Err(f) => {
                    error.try_set(Some(refusal_text(&f)));
                    busy.try_set(false);
                    password.try_set(String::new());
                }
            }
        });
    };

    view! {
        <main class="login-page">
            <form
                class="login-card"
                data-testid="login-form"
                data-hydrated=move || hydrated.get().to_string()
                aria-labelledby="login-title"
                on:submit=on_submit
            >
                <h1 id="login-title">"Wall Street"</h1>
                <p class="subtitle">"Log in to the A2A exchange hub."</p>
                <label for="login-username">"Username"</label>
                <input
                    id="login-username"
                    name="username"
                    type="text"
                    autocomplete="username"
                    autocapitalize="none"
                    spellcheck="false"
                    required
                    bind:value=username
                />
                <label for="login-password">"Password"</label>
                <input
                    id="login-password"
                    name="password"
                    type="password"
                    autocomplete="current-password"
                    required
                    bind:value=password
                />
                <p class="login-error" role="alert" data-testid="login-error">
                    {move || error.get()}
                </p>
                <button type="submit" disabled=move || !hydrated.get() || busy.get()>
                    {move || if busy.get() { "Logging in…" } else { "Log in" }}
                </button>
                <noscript>
                    <p class="muted">"The canvas needs JavaScript (WebAssembly) to log in."</p>
                </noscript>
                <ProviderLogins/>
            </form>
        </main>
    }
}

/// "Log in with BuyerCorp": the members whose own identity provider lets
/// their people log in (each bound to its member's part of the exchange).
#[component]
fn ProviderLogins() -> impl IntoView {
    let providers = RwSignal::new(Vec::<crate::dto::LoginProviderView>::new());
    Effect::new(move |_| {
        leptos::task::spawn_local(async move {
            if let Ok(v) =
                api::probe_json::<crate::dto::LoginProvidersView>(routes::LOGIN_PROVIDERS).await
            {
                providers.try_set(v.providers);
            }
        });
    });
    move || {
        let list = providers.get();
        (!list.is_empty()).then(|| {
            let next = routes::encode_segment(&safe_next(
                routes::query_param(&api::current_query(), "next").as_deref(),
            ));
            view! {
                <div class="login-providers" data-testid="login-providers">
                    {list
                        .into_iter()
                        .map(|p| {
                            let href = format!("/login/oidc/{}?next={next}", p.system);
                            view! {
                                <a class="login-provider" href=href data-testid="login-provider">
                                    {format!("Log in with {}", p.name)}
                                </a>
                            }
                        })
                        .collect_view()}
                </div>
            }
        })
    }
}
