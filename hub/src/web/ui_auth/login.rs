//! `POST /api/login`, `POST /api/logout`, `GET /api/session`.

use std::sync::Arc;

use app::dto::{LoginRequest, SessionView};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use tower_sessions::Session;

use super::people::{People, Person};
use super::session::{self, SessionUser};
use super::throttle::{ClientAddress, LoginThrottle, Throttled};
use crate::api::{ApiFailure, ApiJson};

/// The one message for an unknown user and a wrong password alike: which of
/// the two it was is nobody's business before login.
pub const LOGIN_REFUSED: &str = "unknown user or wrong password";

/// At most this many password checks run at once: each argon2 run takes
/// ~19 MiB and real CPU, and the login route is public.
static CHECKS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// What the login reads: who may log in, and how often they may try.
#[derive(Debug, Clone)]
pub struct LoginState {
    /// Who may log in.
    pub people: People,
    /// The per-address and per-username limits.
    pub throttle: Arc<LoginThrottle>,
}

/// `POST /api/login` (public). 429 with `Retry-After` when a limit of
/// [`super::throttle`] refuses the attempt; the password is not checked then.
/// An admitted attempt is settled with the throttle once its password was
/// checked (a right one gives its reserved failure token back).
pub async fn login(
    State(state): State<LoginState>,
    ClientAddress(address): ClientAddress,
    session: Session,
    ApiJson(req): ApiJson<LoginRequest>,
) -> Response {
    let username = req.username.trim().to_string();
    let pass = match state.throttle.admit(address, &username).await {
        Ok(pass) => pass,
        Err(throttled) => {
            tracing::warn!(
                username = %exchange::text::clip(&username, 64),
                ?address,
                limit = ?throttled.limit,
                "UI login throttled"
            );
            return too_many(&throttled);
        }
    };
    let Ok(slot) = CHECKS.acquire().await else {
        return ApiFailure::new(StatusCode::SERVICE_UNAVAILABLE, "the hub is shutting down")
            .into_response();
    };
    let check = {
        let people = state.people.clone();
        let username = username.clone();
        // argon2 is CPU work by design: keep it off the async workers.
        tokio::task::spawn_blocking(move || people.verify(&username, &req.password))
    };
    let ok = check.await.unwrap_or(false);
    drop(slot);
    state.throttle.checked(pass, ok).await;
    if !ok {
        tracing::info!(username = %exchange::text::clip(&username, 64), "UI login refused");
        return ApiFailure::new(StatusCode::UNAUTHORIZED, LOGIN_REFUSED).into_response();
    }
    let Some(person) = state.people.get(&username) else {
        // Removed between the check and now.
        return ApiFailure::new(StatusCode::UNAUTHORIZED, LOGIN_REFUSED).into_response();
    };
    match session::log_in(&session, &username).await {
        Ok(user) => {
            tracing::info!(username = %username, role = %person.role, "UI login");
            Json(user.view(&person)).into_response()
        }
        Err(e) => ApiFailure::internal("logging in", &e).into_response(),
    }
}

/// 429 in the `ApiError` shape, with `Retry-After` in whole seconds.
fn too_many(throttled: &Throttled) -> Response {
    let mut response =
        ApiFailure::new(StatusCode::TOO_MANY_REQUESTS, throttled.message()).into_response();
    let secs = throttled.retry_after.as_secs_f64().ceil().max(1.0) as u64;
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    response
}

/// `POST /api/logout`: 204, the session is gone, and so are its open
/// event streams (on every replica).
pub async fn logout(State(state): State<LoginState>, session: Session) -> Response {
    let key = session::stream_key(&session);
    match session::log_out(&session).await {
        Ok(()) => {
            if let Some(key) = key {
                state.people.end_session(key);
            }
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => ApiFailure::internal("logging out", &e).into_response(),
    }
}

/// `GET /api/session`: who is logged in, with their role and scope, and
/// the CSRF token. The guard has already refused requests without a
/// session.
pub async fn current(
    user: axum::Extension<SessionUser>,
    person: axum::Extension<Person>,
) -> Json<SessionView> {
    Json(user.view(&person))
}
