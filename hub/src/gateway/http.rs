//! The HTTP binding of the gateway (DESIGN.md §4, "Peer to peer"):
//! `POST /gateway/v1/{provider}/{capability}`, the capability input as the
//! JSON body, the envelope and the caller's token as headers.
//!
//! This file only translates. On the way in, [`handler`] reads the body (at
//! most [`MAX_REQUEST_BODY`]) and the path into an [`Incoming`] and hands it
//! to [`Gateway::run`], the pipeline every binding shares; on the way out,
//! `respond` writes the [`CallResult`] as JSON with the status the pipeline
//! chose and the envelope echoed as headers. Every answer, a refusal
//! included, is that one JSON shape with its reason code (DESIGN.md §2):
//! there is no plain-text error on this route. A call refused over a rate
//! limit or a daily quota is answered with 429, a `Retry-After` header and
//! `retryAfter` (whole seconds) in the JSON. The call's signed receipt,
//! refusals included, is the `wall-street-receipt` header
//! ([`exchange::receipt`]).

use crate::net::listen::Peer;
use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::{Gateway, Incoming, Input};
use exchange::envelope::{Envelope, REQUEST_ID_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{CallResult, NotConnected, ReasonCode};

/// The field of a refusal's JSON that says, in whole seconds, when a call
/// refused over a quota may be sent again.
pub const RETRY_AFTER_FIELD: &str = "retryAfter";

/// Largest request body the gateway accepts from a caller.
pub const MAX_REQUEST_BODY: usize = 1024 * 1024;

/// `POST /gateway/v1/{provider}/{capability}`.
///
/// The pipeline runs on its own task ([`Gateway::run`]): a caller that
/// hangs up cannot cut a call short between forwarding and recording it.
pub async fn handler(
    State(gateway): State<Arc<Gateway>>,
    Path((provider, capability)): Path<(String, String)>,
    request: Request,
) -> Response {
    let peer = Peer::of(&request);
    let (parts, body) = request.into_parts();
    let input = match axum::body::to_bytes(body, MAX_REQUEST_BODY).await {
        Ok(body) => body_input(&body),
        Err(_) => Input::Unreadable {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            why: NotConnected::new(
                ReasonCode::PeerError,
                "request body unreadable or larger than 1 MiB",
            ),
        },
    };
    let incoming = Incoming::new(peer, parts.headers, provider, capability, input);
    let handled = gateway.run(incoming).await;
    let mut response = respond(
        handled.status,
        &handled.envelope,
        handled.result,
        handled.retry_after,
    );
    if let Some(v) = handled
        .receipt
        .and_then(|stamp| HeaderValue::from_str(&stamp.jws).ok())
    {
        response.headers_mut().insert(exchange::receipt::HEADER, v);
    }
    response
}

/// The capability input of a body: JSON, and an empty body is `{}` (a
/// capability without parameters needs no body). A body that is not JSON
/// is the caller's fault: 400.
pub(super) fn body_input(body: &[u8]) -> Input {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Input::Parsed(json!({}));
    }
    match serde_json::from_slice(body) {
        Ok(input) => Input::Parsed(input),
        Err(e) => Input::Invalid {
            status: StatusCode::BAD_REQUEST,
            why: NotConnected::new(
                ReasonCode::PeerError,
                format!("the caller's request body is not JSON: {e}"),
            ),
        },
    }
}

/// The HTTP answer: the JSON result, plus the envelope echoed as headers
/// (same trace-id, the hub's span; the request id), and when to retry a
/// call refused over a quota (`retryAfter`, `Retry-After`).
fn respond(
    status: StatusCode,
    envelope: &Envelope,
    result: CallResult,
    retry_after: Option<u64>,
) -> Response {
    let mut response = match retry_after {
        None => (status, Json(result)).into_response(),
        Some(seconds) => {
            let mut body = serde_json::to_value(&result).unwrap_or_else(|_| json!({}));
            if let Some(fields) = body.as_object_mut() {
                fields.insert(RETRY_AFTER_FIELD.into(), json!(seconds));
            }
            let mut response = (status, Json(body)).into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
            response
        }
    };
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&envelope.trace.child().to_header()) {
        headers.insert(TRACEPARENT_HEADER, v);
    }
    if let Ok(v) = HeaderValue::from_str(&envelope.request_id) {
        headers.insert(REQUEST_ID_HEADER, v);
    }
    response
}
