//! The UI login: who may use the canvas and the `/api` routes behind it
//! (DESIGN.md §3, "browser": it holds only a UI session cookie), and what
//! each of them may do there.
//!
//! Separate from the A2A auth chain: the people, their roles and their
//! argon2 hashes live in the people store ([`people`], provisioned from
//! the UI users file, [`users`], managed by admins), sessions live in the
//! hub's database ([`session`]), and state-changing requests are guarded
//! against CSRF ([`csrf`]); logins are rate-limited per address and per
//! username ([`throttle`]); every answer carries the standard security
//! headers and a Content-Security-Policy ([`headers`]). [`UiAuth::protect`]
//! wraps the canvas and `/api` routes (never the gateway, which has the
//! peer auth chain) in one guard:
//!
//! * `/api/login` is public; every other `/api` route answers 401 without a
//!   session, and 403 for a state-changing request without the session's
//!   `X-CSRF-Token` or from a foreign `Origin`;
//! * then the route's rights from the one route table
//!   (`app::routes::ApiRoute::rights`): 403 when the person's role does
//!   not grant what the route needs, or when a member-scoped person names
//!   something outside their part (`app::access::Reach`);
//! * pages answer 303 to `/login?next=<path>` without a session; `/login`
//!   and static assets (`/pkg/*`, the favicon) are public; the people page
//!   is an admin's.

pub mod csrf;
pub mod headers;
pub mod login;
pub mod oidc;
pub mod people;
pub mod session;
pub mod throttle;
pub mod users;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::on;
use axum::Router;
use tower_sessions::Session;

use app::access::Need;
use app::routes::{self, ApiRoute, Page, LOGIN_PAGE};

use crate::api::ApiFailure;
use people::{People, Person};
use session::{SessionSettings, SessionStore, SessionUser};

/// The message of every 401 from the guard.
pub const NOT_LOGGED_IN: &str = "not logged in";

/// Everything the UI login needs.
#[derive(Debug, Clone)]
pub struct UiAuth {
    /// Who may log in, and what each may do.
    pub people: People,
    /// Where sessions live.
    pub store: SessionStore,
    /// Cookie settings.
    pub settings: SessionSettings,
    /// How often a login may be tried.
    pub throttle: Arc<throttle::LoginThrottle>,
}

impl UiAuth {
    /// The login, logout and session routes.
    pub fn routes(&self) -> Router {
        let at = |route: ApiRoute| (route.template(), crate::api::method_filter(route.verb()));
        let (login, login_verb) = at(ApiRoute::Login);
        let (logout, logout_verb) = at(ApiRoute::Logout);
        let (session, session_verb) = at(ApiRoute::Session);
        Router::new()
            .route(login, on(login_verb, login::login))
            .route(logout, on(logout_verb, login::logout))
            .route(session, on(session_verb, login::current))
            .with_state(login::LoginState {
                people: self.people.clone(),
                throttle: self.throttle.clone(),
            })
    }

    /// `router` behind the session guard and the session layer. Every
    /// route and the fallback of `router` are covered.
    pub fn protect(&self, router: Router) -> Router {
        router
            .layer(middleware::from_fn_with_state(self.people.clone(), guard))
            .layer(self.store.layer(self.settings))
    }
}

/// Whether `path` is served without a session: the login page and the
/// static assets it needs.
fn is_public_page(path: &str) -> bool {
    path == LOGIN_PAGE
        || path.starts_with(oidc::PREFIX)
        || path.starts_with("/pkg/")
        || path == "/favicon.ico"
        || path == "/robots.txt"
}

pub(crate) fn is_api(path: &str) -> bool {
    path == routes::API
        || path
            .strip_prefix(routes::API)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The guard in front of the canvas and `/api` (see the module doc).
async fn guard(
    State(people): State<People>,
    session: Session,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path().to_string();
    let changing = csrf::is_state_changing(request.method());
    if is_api(&path) {
        if changing {
            let authority = request.uri().authority().map(|a| a.as_str().to_string());
            if let Err(why) = csrf::origin_allowed(request.headers(), authority.as_deref()) {
                return ApiFailure::new(StatusCode::FORBIDDEN, why).into_response();
            }
        }
        let route = ApiRoute::matching(request.method().as_str(), &path);
        if route.is_some_and(|(r, _)| r.is_public()) {
            return next.run(request).await;
        }
        let (user, person) = match logged_in(&people, &session).await {
            Ok(Some(who)) => who,
            Ok(None) => {
                return ApiFailure::new(StatusCode::UNAUTHORIZED, NOT_LOGGED_IN).into_response()
            }
            Err(failure) => return failure.into_response(),
        };
        if changing && !csrf::token_matches(request.headers(), &user.csrf_token) {
            return ApiFailure::new(StatusCode::FORBIDDEN, csrf::CSRF_REFUSED).into_response();
        }
        if let Some((route, id)) = route {
            if let Err(why) = authorize(&person, route, id) {
                return ApiFailure::new(StatusCode::FORBIDDEN, why).into_response();
            }
        }
        request.extensions_mut().insert(person.scope.clone());
        request.extensions_mut().insert(user);
        request.extensions_mut().insert(person);
        return next.run(request).await;
    }
    if is_public_page(&path) {
        return next.run(request).await;
    }
    match logged_in(&people, &session).await {
        Ok(Some((user, person))) => {
            if Page::from_path(&path) == Page::People && person.role != app::access::Role::Admin {
                return ApiFailure::new(StatusCode::FORBIDDEN, "the people page is an admin's")
                    .into_response();
            }
            // The page is rendered knowing who is logged in (the top bar
            // shows the name before any script runs; see app::session).
            request.extensions_mut().insert(user.view(&person));
            request.extensions_mut().insert(person.scope.clone());
            request.extensions_mut().insert(user);
            request.extensions_mut().insert(person);
            next.run(request).await
        }
        Ok(None) => {
            let target = request
                .uri()
                .path_and_query()
                .map(|pq| pq.as_str().to_string())
                .unwrap_or_else(|| "/".to_string());
            login_redirect(&target)
        }
        Err(failure) => failure.into_response(),
    }
}

/// Whether `person` may call `route` naming `id` (its encoded `{id}`);
/// the refusal says why.
pub fn authorize(person: &Person, route: ApiRoute, id: Option<&str>) -> Result<(), String> {
    let rights = route.rights();
    if let Need::Role(needed) = rights.need {
        if !person.role.grants(needed) {
            return Err(format!(
                "{} {} needs the {needed} role; {} is {} {}",
                route.verb().as_str(),
                route.template(),
                person.username,
                article(person.role.as_str()),
                person.role
            ));
        }
    }
    let id = id.and_then(routes::decode_segment);
    if !rights.reach.admits(&person.scope, id.as_deref()) {
        let own = person.scope.member().unwrap_or_default();
        return Err(match id {
            Some(id) => format!(
                "{} is bound to {own}: `{}` is not part of {own}",
                person.username,
                exchange::text::clip(&id, 120)
            ),
            None => format!(
                "{} is bound to {own}: {} {} is for people of the whole exchange",
                person.username,
                route.verb().as_str(),
                route.template()
            ),
        });
    }
    Ok(())
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// The session's user and who they are now, if they are still a person
/// of this hub (one removed is logged out at their next request).
async fn logged_in(
    people: &People,
    session: &Session,
) -> Result<Option<(SessionUser, Person)>, ApiFailure> {
    let user = session::current_user(session)
        .await
        .map_err(|e| ApiFailure::internal("reading the session", &e))?;
    let Some(user) = user else {
        return Ok(None);
    };
    match people.get(&user.username) {
        Some(person) => Ok(Some((user, person))),
        None => {
            session::log_out(session)
                .await
                .map_err(|e| ApiFailure::internal("ending the session", &e))?;
            Ok(None)
        }
    }
}

/// 303 to the login page, remembering where the person wanted to go.
fn login_redirect(target: &str) -> Response {
    let location = format!("{LOGIN_PAGE}?next={}", percent_encode(target));
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    response
}

/// Percent-encodes everything but unreserved characters and `/`, so the
/// target survives as one query parameter.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_keeps_the_target_as_one_parameter() {
        assert_eq!(percent_encode("/inbox"), "/inbox");
        assert_eq!(percent_encode("/?a=1&b=2"), "/%3Fa%3D1%26b%3D2");
        let r = login_redirect("/inbox");
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            r.headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok()),
            Some("/login?next=/inbox")
        );
    }

    #[test]
    fn public_pages_are_the_login_and_assets_only() {
        for p in ["/login", "/pkg/wall-street.wasm", "/favicon.ico"] {
            assert!(is_public_page(p), "{p}");
        }
        for p in ["/", "/inbox", "/login/x", "/loginx", "/api/topology"] {
            assert!(!is_public_page(p), "{p}");
        }
        assert!(is_api("/api/fn/topology") && is_api("/api") && !is_api("/apix"));
    }
}
