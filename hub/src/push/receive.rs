//! The webhook a provider posts a task's events to:
//! `POST /push/v1/{relay_id}`, registered by the hub with the provider for
//! one task ([`super::PushRelay::new_relay`]).
//!
//! An event is taken when the request presents the relay's secret
//! (`A2A-Notification-Token`, compared by digest in constant time), its
//! body is an A2A stream event (a task, a status update or an artifact
//! update) of the relay's own task, at most [`MAX_EVENT`] bytes. A
//! provider's retry of an event already taken (the same body) is answered
//! `200` and not relayed again. Everything else is refused with a JSON
//! error naming what was wrong, and relays nothing.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::deliver::Job;
use super::{PushRelay, TOKEN_HEADER};

/// The largest event taken.
pub const MAX_EVENT: usize = 1024 * 1024;

/// `POST /push/v1/{relay_id}`.
pub async fn webhook(
    State(relay): State<Arc<PushRelay>>,
    Path(relay_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match take(&relay, &relay_id, &headers, &body).await {
        Ok(taken) => (StatusCode::OK, Json(json!({ "taken": taken }))).into_response(),
        Err((status, why)) => crate::net::machine::error(status, why),
    }
}

/// Takes one event: whether it is new (and queued for delivery).
async fn take(
    relay: &PushRelay,
    relay_id: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<bool, (StatusCode, String)> {
    let unavailable = |e: sqlx::Error| {
        tracing::warn!(error = %e, "push relay: the store failed");
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "the hub cannot take the event now; send it again".to_string(),
        )
    };
    // One answer for an unknown relay and a wrong secret.
    let refused = || {
        (
            StatusCode::UNAUTHORIZED,
            "no push relay of that id takes this token".to_string(),
        )
    };
    let kept = relay
        .tables
        .relay_by_id(relay_id)
        .await
        .map_err(unavailable)?
        .ok_or_else(refused)?;
    let presented = headers
        .get(TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(refused)?;
    let digest = exchange::wire::text_digest(presented);
    if !crate::auth::constant_time_eq(digest.as_bytes(), kept.secret_digest.as_bytes()) {
        return Err(refused());
    }
    if body.len() > MAX_EVENT {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("an event is at most {MAX_EVENT} bytes"),
        ));
    }
    let event: Value = serde_json::from_slice(body).map_err(|e| {
        (
            StatusCode::BAD_REQUEST,
            format!("the event is not JSON: {e}"),
        )
    })?;
    let Some(task_id) = super::event_task(&event) else {
        return Err((
            StatusCode::BAD_REQUEST,
            "the event is not an A2A stream event (`task`, `statusUpdate` or `artifactUpdate`)"
                .into(),
        ));
    };
    if task_id != kept.task_id {
        return Err((
            StatusCode::FORBIDDEN,
            "the event is about another task than the one this relay was registered for".into(),
        ));
    }
    let fresh = relay
        .tables
        .first_time(relay_id, &exchange::wire::bytes_digest(body))
        .await
        .map_err(unavailable)?;
    if !fresh {
        return Ok(false);
    }
    let configs = relay
        .tables
        .configs(&kept.provider, &kept.task_id)
        .await
        .map_err(unavailable)?;
    let body = Arc::<[u8]>::from(body);
    for config in configs {
        relay.enqueue(
            relay_id,
            Job {
                config,
                body: body.clone(),
            },
        );
    }
    Ok(true)
}
