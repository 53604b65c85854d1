//! `POST /api/login`, `POST /api/logout`, `GET /api/session`.

use std::sync::Arc;

use app::dto::{LoginRequest, SessionView};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use tower_sessions::Session;

use super::session::{self, SessionUser};
use super::users::UiUsers;
use crate::api::{ApiFailure, ApiJson};

/// The one message for an unknown user and a wrong password alike: which of
/// the two it was is nobody's business before login.
pub const LOGIN_REFUSED: &str = "unknown user or wrong password";

/// At most this many password checks run at once: each argon2 run takes
/// ~19 MiB and real CPU, and the login route is public.
static CHECKS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// `POST /api/login` (public).
pub async fn login(
    State(users): State<Arc<UiUsers>>,
    session: Session,
    ApiJson(req): ApiJson<LoginRequest>,
) -> Result<Json<SessionView>, ApiFailure> {
    let username = req.username.trim().to_string();
    let Ok(slot) = CHECKS.acquire().await else {
        return Err(ApiFailure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the hub is shutting down",
        ));
    };
    let check = {
        let users = users.clone();
        let username = username.clone();
        // argon2 is CPU work by design: keep it off the async workers.
        tokio::task::spawn_blocking(move || users.verify(&username, &req.password))
    };
    let ok = check.await.unwrap_or(false);
    drop(slot);
    if !ok {
        tracing::info!(username = %exchange::text::clip(&username, 64), "UI login refused");
        return Err(ApiFailure::new(StatusCode::UNAUTHORIZED, LOGIN_REFUSED));
    }
    let user = session::log_in(&session, &username)
        .await
        .map_err(|e| ApiFailure::internal("logging in", &e))?;
    tracing::info!(username = %username, "UI login");
    Ok(Json(user.view()))
}

/// `POST /api/logout`: 204, the session is gone.
pub async fn logout(session: Session) -> Response {
    match session::log_out(&session).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => ApiFailure::internal("logging out", &e).into_response(),
    }
}

/// `GET /api/session`: who is logged in, and the CSRF token. The guard
/// has already refused requests without a session.
pub async fn current(user: axum::Extension<SessionUser>) -> Json<SessionView> {
    Json(user.view())
}
