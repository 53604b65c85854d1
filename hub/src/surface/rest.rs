//! The HTTP+JSON binding of the A2A surface (A2A v1.0 §11), under
//! `/a2a/{provider}/rest`: `POST /message:send`, `POST /message:stream`,
//! `GET /tasks`, `GET /tasks/{id}`, `POST /tasks/{id}:cancel`,
//! `GET|POST /tasks/{id}:subscribe`.
//!
//! The same operations as the JSON-RPC binding, in v1.0 only: v0.3's
//! HTTP+JSON paths are others (`/v1/...`), so a request on these paths is a
//! v1.0 request, and a missing `A2A-Version` is read as 1.0 here (an
//! explicit unsupported version is still `VERSION_UNSUPPORTED`). Errors
//! are the binding's `google.rpc.Status` body with the HTTP status of the
//! failure and the same `ErrorInfo`.

use std::collections::HashMap;
use std::convert::Infallible;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::stream::BoxStream;
use futures::StreamExt;
use serde_json::Value;

use super::errors::{code, echo_envelope, rest_error as error, SurfaceError};
use super::jsonrpc::{is_json, to_json, typed};
use super::ops::{self, Request as SurfaceRequest};
use super::Surface;
use crate::gateway::{TaskOp, MAX_REQUEST_BODY};
use crate::net::listen::Peer;
use a2a::{CancelTaskRequest, GetTaskRequest, ListTasksRequest};
use exchange::envelope::{Envelope, VERSION_HEADER};
use exchange::reason::ReasonCode;

/// The binding's routes, to nest under `/a2a/{provider}/rest`.
pub fn routes() -> Router<Surface> {
    Router::new()
        .route("/message:send", post(send))
        .route("/message:stream", post(stream))
        .route("/tasks", get(list))
        .route("/tasks/{id}", get(task_get).post(task_post))
        .route(
            "/tasks/{id}/pushNotificationConfigs",
            get(push_list).post(push_create),
        )
        .route(
            "/tasks/{id}/pushNotificationConfigs/{config}",
            get(push_get).delete(push_delete),
        )
        .route(
            "/extendedAgentCard",
            get(super::discovery::rest_extended_card),
        )
        // Anything else under the binding is an A2A error too, never the
        // canvas's login page.
        .fallback(unknown_route)
}

/// What every handler starts from.
struct Call {
    request: SurfaceRequest,
    envelope: Envelope,
}

// The error is the finished answer of a request that ends here: boxing it
// would only move it.
#[allow(clippy::result_large_err)]
fn call(provider: String, headers: HeaderMap, peer: Peer) -> Result<Call, Response> {
    let envelope = Envelope::from_headers(&headers);
    if headers.contains_key(VERSION_HEADER)
        && envelope.protocol() != Some(exchange::envelope::A2aVersion::V1_0)
    {
        let e = SurfaceError::call(
            ReasonCode::VersionUnsupported,
            format!(
                "the HTTP+JSON binding speaks A2A 1.0, not {}",
                exchange::text::clip(&envelope.version, 32)
            ),
            StatusCode::BAD_REQUEST,
        );
        return Err(error(&envelope, e));
    }
    Ok(Call {
        request: SurfaceRequest {
            provider,
            peer,
            headers,
        },
        envelope,
    })
}

/// Reads a JSON body (at most [`MAX_REQUEST_BODY`]) as the typed request.
async fn body<T: serde::de::DeserializeOwned>(
    envelope: &Envelope,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> Result<T, Response> {
    if !is_json(headers) {
        let e = SurfaceError::protocol(
            code::CONTENT_TYPE_NOT_SUPPORTED,
            "Content-Type must be application/json",
        )
        .with_http(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        return Err(error(envelope, e));
    }
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REQUEST_BODY).await else {
        let e = SurfaceError::protocol(
            code::INVALID_REQUEST,
            "request body unreadable or larger than 1 MiB",
        )
        .with_http(StatusCode::PAYLOAD_TOO_LARGE);
        return Err(error(envelope, e));
    };
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        error(
            envelope,
            SurfaceError::protocol(code::PARSE_ERROR, format!("the body is not JSON: {e}")),
        )
    })?;
    typed(value).map_err(|e| error(envelope, e))
}

fn ok(envelope: &Envelope, value: Value) -> Response {
    let mut response = (StatusCode::OK, Json(value)).into_response();
    echo_envelope(response.headers_mut(), envelope);
    response
}

fn sse(envelope: &Envelope, events: BoxStream<'static, Value>) -> Response {
    let events = events.map(|e| Ok::<_, Infallible>(Event::default().data(e.to_string())));
    let mut response = Sse::new(events).into_response();
    echo_envelope(response.headers_mut(), envelope);
    response
}

async fn send(
    State(surface): State<Surface>,
    Path(provider): Path<String>,
    request: Request,
) -> Response {
    message(&surface, provider, request, false).await
}

async fn stream(
    State(surface): State<Surface>,
    Path(provider): Path<String>,
    request: Request,
) -> Response {
    message(&surface, provider, request, true).await
}

/// `message:send`, or `message:stream` (the provider's answer as the
/// stream's one event).
async fn message(surface: &Surface, provider: String, request: Request, stream: bool) -> Response {
    let peer = Peer::of(&request);
    let (parts, raw) = request.into_parts();
    let c = match call(provider, parts.headers.clone(), peer) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let params = match body(&c.envelope, &parts.headers, raw).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let (envelope, answer) = ops::send_message(surface, &c.request, params).await;
    match answer.and_then(|a| to_json(&a)) {
        Ok(v) if stream => sse(&envelope, futures::stream::once(async { v }).boxed()),
        Ok(v) => ok(&envelope, v),
        Err(e) => error(&envelope, e),
    }
}

async fn list(
    State(surface): State<Surface>,
    Path(provider): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    request: Request,
) -> Response {
    let peer = Peer::of(&request);
    let c = match call(provider, request.headers().clone(), peer) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let params = match list_params(&query) {
        Ok(p) => p,
        Err(e) => return error(&c.envelope, e),
    };
    let (envelope, answer) = ops::task(&surface, &c.request, TaskOp::List(params)).await;
    match answer {
        Ok(v) => ok(&envelope, v),
        Err(e) => error(&envelope, e),
    }
}

/// `ListTasks` from query parameters (camelCase, as the JSON fields).
fn list_params(query: &HashMap<String, String>) -> Result<ListTasksRequest, SurfaceError> {
    let mut obj = serde_json::Map::new();
    for (k, v) in query {
        let value = match k.as_str() {
            "pageSize" | "historyLength" => v.parse::<i64>().map(Value::from).map_err(|_| {
                SurfaceError::protocol(code::INVALID_PARAMS, format!("{k} must be an integer"))
            })?,
            "includeArtifacts" => Value::Bool(v == "true"),
            "contextId" | "status" | "pageToken" | "statusTimestampAfter" => {
                Value::String(v.clone())
            }
            _ => continue,
        };
        obj.insert(k.clone(), value);
    }
    typed(Value::Object(obj))
}

/// `GET /tasks/{id}` and `GET /tasks/{id}:subscribe`.
async fn task_get(
    State(surface): State<Surface>,
    Path((provider, id)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    request: Request,
) -> Response {
    let peer = Peer::of(&request);
    let c = match call(provider, request.headers().clone(), peer) {
        Ok(c) => c,
        Err(r) => return r,
    };
    if let Some(id) = id.strip_suffix(":subscribe") {
        return subscribe(surface, c, id.to_string()).await;
    }
    let history_length = match query.get("historyLength").map(|h| h.parse::<i32>()) {
        None => None,
        Some(Ok(h)) => Some(h),
        Some(Err(_)) => {
            return error(
                &c.envelope,
                SurfaceError::protocol(code::INVALID_PARAMS, "historyLength must be an integer"),
            )
        }
    };
    let op = TaskOp::Get(GetTaskRequest {
        id,
        history_length,
        tenant: None,
    });
    let (envelope, answer) = ops::task(&surface, &c.request, op).await;
    match answer {
        Ok(v) => ok(&envelope, v),
        Err(e) => error(&envelope, e),
    }
}

/// `POST /tasks/{id}:cancel` and `POST /tasks/{id}:subscribe`.
async fn task_post(
    State(surface): State<Surface>,
    Path((provider, id)): Path<(String, String)>,
    request: Request,
) -> Response {
    let peer = Peer::of(&request);
    let c = match call(provider, request.headers().clone(), peer) {
        Ok(c) => c,
        Err(r) => return r,
    };
    if let Some(id) = id.strip_suffix(":subscribe") {
        return subscribe(surface, c, id.to_string()).await;
    }
    let Some(id) = id.strip_suffix(":cancel") else {
        return error(
            &c.envelope,
            SurfaceError::protocol(
                code::METHOD_NOT_FOUND,
                "POST /tasks/{id}:cancel or :subscribe",
            ),
        );
    };
    let op = TaskOp::Cancel(CancelTaskRequest {
        id: id.to_string(),
        metadata: None,
        tenant: None,
    });
    let (envelope, answer) = ops::task(&surface, &c.request, op).await;
    match answer {
        Ok(v) => ok(&envelope, v),
        Err(e) => error(&envelope, e),
    }
}

async fn subscribe(surface: Surface, c: Call, id: String) -> Response {
    let (envelope, events) = ops::subscribe(surface, c.request, id).await;
    match events {
        Ok(events) => sse(&envelope, events),
        Err(e) => error(&envelope, e),
    }
}

/// `POST /tasks/{id}/pushNotificationConfigs`: the body is the
/// configuration (its `taskId`, if any, must be the path's).
async fn push_create(
    State(surface): State<Surface>,
    Path((provider, id)): Path<(String, String)>,
    request: Request,
) -> Response {
    let peer = Peer::of(&request);
    let (parts, raw) = request.into_parts();
    let c = match call(provider, parts.headers.clone(), peer) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let mut config: a2a::TaskPushNotificationConfig =
        match body(&c.envelope, &parts.headers, raw).await {
            Ok(config) => config,
            Err(r) => return r,
        };
    if !config.task_id.is_empty() && config.task_id != id {
        return error(
            &c.envelope,
            SurfaceError::protocol(code::INVALID_PARAMS, "the body's taskId is not the path's"),
        );
    }
    config.task_id = id;
    push_op(&surface, &c, TaskOp::CreatePush(config)).await
}

/// `GET /tasks/{id}/pushNotificationConfigs`.
async fn push_list(
    State(surface): State<Surface>,
    Path((provider, id)): Path<(String, String)>,
    request: Request,
) -> Response {
    let op = TaskOp::ListPush(a2a::ListTaskPushNotificationConfigsRequest {
        task_id: id,
        page_size: None,
        page_token: None,
        tenant: None,
    });
    push_at(
        &surface,
        call(provider, request.headers().clone(), Peer::of(&request)),
        op,
    )
    .await
}

/// `GET /tasks/{id}/pushNotificationConfigs/{config}`.
async fn push_get(
    State(surface): State<Surface>,
    Path((provider, task_id, id)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    let op = TaskOp::GetPush(a2a::GetTaskPushNotificationConfigRequest {
        task_id,
        id,
        tenant: None,
    });
    push_at(
        &surface,
        call(provider, request.headers().clone(), Peer::of(&request)),
        op,
    )
    .await
}

/// `DELETE /tasks/{id}/pushNotificationConfigs/{config}`.
async fn push_delete(
    State(surface): State<Surface>,
    Path((provider, task_id, id)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    let op = TaskOp::DeletePush(a2a::DeleteTaskPushNotificationConfigRequest {
        task_id,
        id,
        tenant: None,
    });
    push_at(
        &surface,
        call(provider, request.headers().clone(), Peer::of(&request)),
        op,
    )
    .await
}

/// A push-config operation without a body.
// The error is the finished answer of a request that ends here.
#[allow(clippy::result_large_err)]
async fn push_at(surface: &Surface, c: Result<Call, Response>, op: TaskOp) -> Response {
    match c {
        Ok(c) => push_op(surface, &c, op).await,
        Err(r) => r,
    }
}

async fn push_op(surface: &Surface, c: &Call, op: TaskOp) -> Response {
    let (envelope, answer) = ops::task(surface, &c.request, op).await;
    match answer {
        Ok(Value::Null) => ok(&envelope, serde_json::json!({})),
        Ok(v) => ok(&envelope, v),
        Err(e) => error(&envelope, e),
    }
}

async fn unknown_route(headers: HeaderMap) -> Response {
    error(
        &Envelope::from_headers(&headers),
        SurfaceError::protocol(
            code::METHOD_NOT_FOUND,
            "no such route in the HTTP+JSON binding",
        ),
    )
}
