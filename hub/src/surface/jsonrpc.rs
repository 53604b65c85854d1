//! The JSON-RPC binding of the A2A surface (A2A v1.0 §9, and v0.3 through
//! the [bridge](crate::bridge)): `POST /a2a/{provider}`.
//!
//! This file only translates, like the gateway's HTTP binding: bytes in,
//! one typed A2A request to an [operation](super::ops), one JSON-RPC
//! answer (or an SSE stream of them) out. The version the caller speaks is
//! its `A2A-Version` header, and a request without one speaks 0.3 (A2A
//! v1.0 §3.6.1): its method names, params and results go through the
//! bridge, so everything past this file speaks v1.0.
//!
//! Whatever arrives, the answer is one JSON-RPC response, never a panic
//! or a hang-up: not JSON is `-32700`; a batch, a notification (no `id`),
//! a wrong `jsonrpc` or a body over [`MAX_REQUEST_BODY`] is `-32600`; a
//! content type other than JSON `-32005` (HTTP 415, as A2A §5.4 pairs
//! them); an unknown method `-32601`; params of the
//! wrong shape `-32602`. None of these reaches the gateway, so nothing is
//! forwarded and nothing is written.

use std::convert::Infallible;

use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::stream::BoxStream;
use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::errors::{code, echo_envelope, SurfaceError};
use super::ops::{self, Request as SurfaceRequest};
use super::Surface;
use crate::bridge::{self, Method};
use crate::gateway::{TaskOp, MAX_REQUEST_BODY};
use crate::net::listen::Peer;
use exchange::envelope::{A2aVersion, Envelope};

/// `POST /a2a/{provider}`.
pub async fn handler(
    State(surface): State<Surface>,
    Path(provider): Path<String>,
    request: Request,
) -> Response {
    let peer = Peer::of(&request);
    let (parts, body) = request.into_parts();
    let envelope = Envelope::from_headers(&parts.headers);
    let reply = Reply {
        id: Value::Null,
        version: A2aVersion::V1_0,
        envelope: envelope.clone(),
    };
    if !is_json(&parts.headers) {
        return reply.error(
            SurfaceError::protocol(
                code::CONTENT_TYPE_NOT_SUPPORTED,
                "Content-Type must be application/json",
            )
            .with_http(StatusCode::UNSUPPORTED_MEDIA_TYPE),
        );
    }
    let Ok(body) = axum::body::to_bytes(body, MAX_REQUEST_BODY).await else {
        return reply.error(
            SurfaceError::protocol(
                code::INVALID_REQUEST,
                "request body unreadable or larger than 1 MiB",
            )
            .with_http(StatusCode::PAYLOAD_TOO_LARGE),
        );
    };
    let rpc = match parse_request(&body) {
        Ok(rpc) => rpc,
        Err((id, e)) => return Reply { id, ..reply }.error(e),
    };
    let declared = parts
        .headers
        .get(exchange::envelope::VERSION_HEADER)
        .or_else(|| parts.headers.get(exchange::envelope::LEGACY_VERSION_HEADER));
    // An unknown version still has its method read as v1.0, so that the
    // call reaches the pipeline and is refused there (VERSION_UNSUPPORTED),
    // with its audit record.
    let version = envelope.protocol();
    let mut reply = Reply {
        id: rpc.id.clone(),
        version: version.unwrap_or(A2aVersion::V1_0),
        envelope,
    };
    let Some(method) = Method::from_name(reply.version, &rpc.method) else {
        return reply.error(SurfaceError::protocol(
            code::METHOD_NOT_FOUND,
            format!(
                "no method `{}` in A2A {}{}",
                exchange::text::clip(&rpc.method, 64),
                reply.version.as_str(),
                if declared.is_none() {
                    " (a request without an A2A-Version header speaks 0.3)"
                } else {
                    ""
                }
            ),
        ));
    };
    let params = match reply.version {
        A2aVersion::V1_0 => Ok(rpc.params),
        A2aVersion::V0_3 => bridge::params_to_v1(method, rpc.params)
            .map_err(|e| SurfaceError::protocol(code::INVALID_PARAMS, e.to_string())),
    };
    let params = match params {
        Ok(p) => p,
        Err(e) => return reply.error(e),
    };
    let request = SurfaceRequest {
        provider,
        peer,
        headers: parts.headers,
    };
    match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            let params = match typed(params) {
                Ok(p) => p,
                Err(e) => return reply.error(e),
            };
            let (envelope, answer) = ops::send_message(&surface, &request, params).await;
            reply.envelope = envelope;
            match (method, answer) {
                (_, Err(e)) => reply.error(e),
                // The hot path: the typed answer straight to bytes.
                (Method::SendMessage, Ok(a)) if reply.version == A2aVersion::V1_0 => {
                    reply.typed_result(&a)
                }
                (Method::SendMessage, Ok(a)) => match to_json(&a) {
                    Ok(v) => reply.result(method, v),
                    Err(e) => reply.error(e),
                },
                (_, Ok(a)) => match to_json(&a) {
                    Ok(event) => reply.stream(futures::stream::once(async { event }).boxed()),
                    Err(e) => reply.error(e),
                },
            }
        }
        Method::GetTask
        | Method::CancelTask
        | Method::ListTasks
        | Method::CreatePushConfig
        | Method::GetPushConfig
        | Method::ListPushConfigs
        | Method::DeletePushConfig => {
            let op = match method {
                Method::GetTask => typed(params).map(TaskOp::Get),
                Method::CancelTask => typed(params).map(TaskOp::Cancel),
                Method::CreatePushConfig => typed(params).map(TaskOp::CreatePush),
                Method::GetPushConfig => typed(params).map(TaskOp::GetPush),
                Method::ListPushConfigs => typed(params).map(TaskOp::ListPush),
                Method::DeletePushConfig => typed(params).map(TaskOp::DeletePush),
                _ => typed(params).map(TaskOp::List),
            };
            let op = match op {
                Ok(op) => op,
                Err(e) => return reply.error(e),
            };
            let (envelope, answer) = ops::task(&surface, &request, op).await;
            reply.envelope = envelope;
            match answer {
                Ok(v) => reply.result(method, v),
                Err(e) => reply.error(e),
            }
        }
        Method::SubscribeToTask => {
            let params: a2a::SubscribeToTaskRequest = match typed(params) {
                Ok(p) => p,
                Err(e) => return reply.error(e),
            };
            let (envelope, events) = ops::subscribe(surface, request, params.id).await;
            reply.envelope = envelope;
            match events {
                Ok(events) => reply.stream(events),
                Err(e) => reply.error(e),
            }
        }
        Method::GetExtendedAgentCard => match super::discovery::extended_card(&surface, &request) {
            Ok(card) => match to_json(&card) {
                Ok(mut v) => {
                    super::discovery::sign(&surface, &request.headers, &mut v);
                    reply.result(method, v)
                }
                Err(e) => reply.error(e),
            },
            Err(e) => reply.error(e),
        },
    }
}

/// Whether the request declares a JSON body (`application/json`, with or
/// without parameters, or an `application/*+json` type).
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .is_some_and(|m| {
            m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
        })
}

/// A JSON-RPC request, as far as this binding reads it.
pub struct RpcRequest {
    /// A string, a number or null.
    pub id: Value,
    /// As sent; not yet known to name a method.
    pub method: String,
    /// An object (`{}` when absent or null).
    pub params: Value,
}

/// Reads one JSON-RPC 2.0 request; on failure the id to answer with (when
/// it could be read) and the error. Public so that the fuzz crate
/// (`fuzz`) drives it with arbitrary bodies.
pub fn parse_request(body: &[u8]) -> Result<RpcRequest, (Value, SurfaceError)> {
    let invalid = |id: Value, why: &str| {
        (
            id,
            SurfaceError::protocol(code::INVALID_REQUEST, why.to_string()),
        )
    };
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        (
            Value::Null,
            SurfaceError::protocol(code::PARSE_ERROR, format!("the body is not JSON: {e}")),
        )
    })?;
    let mut obj: Map<String, Value> = match value {
        Value::Object(obj) => obj,
        Value::Array(_) => {
            return Err(invalid(
                Value::Null,
                "batch requests are not supported: send one request per HTTP request",
            ))
        }
        _ => return Err(invalid(Value::Null, "a JSON-RPC request is a JSON object")),
    };
    let id = match obj.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id.clone(),
        Some(_) => {
            return Err(invalid(
                Value::Null,
                "`id` must be a string, a number or null",
            ))
        }
        None => {
            return Err(invalid(
                Value::Null,
                "notifications (requests without an `id`) are not supported",
            ))
        }
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(id, "`jsonrpc` must be \"2.0\""));
    }
    let Some(method) = obj
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Err(invalid(id, "`method` must be a string"));
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => json!({}),
        Some(p @ Value::Object(_)) => p,
        Some(_) => {
            return Err((
                id,
                SurfaceError::protocol(code::INVALID_PARAMS, "`params` must be an object"),
            ))
        }
    };
    Ok(RpcRequest { id, method, params })
}

/// Params as the typed v1.0 request, or invalid params naming the field.
pub(super) fn typed<T: DeserializeOwned>(params: Value) -> Result<T, SurfaceError> {
    serde_json::from_value(params)
        .map_err(|e| SurfaceError::protocol(code::INVALID_PARAMS, format!("invalid params: {e}")))
}

/// A typed answer as JSON.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> Result<Value, SurfaceError> {
    serde_json::to_value(value)
        .map_err(|e| SurfaceError::protocol(code::INTERNAL_ERROR, format!("encoding: {e}")))
}

/// How to answer one request: its id, the caller's version, the envelope.
struct Reply {
    id: Value,
    version: A2aVersion,
    envelope: Envelope,
}

impl Reply {
    fn result(&self, method: Method, result: Value) -> Response {
        let result = match self.version {
            A2aVersion::V1_0 => Ok(result),
            A2aVersion::V0_3 => bridge::result_to_v03(method, result),
        };
        match result {
            Ok(result) => self.respond(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": self.id, "result": result}),
            ),
            Err(e) => self.error(SurfaceError::protocol(
                code::INTERNAL_ERROR,
                format!("the answer has no v0.3 form: {e}"),
            )),
        }
    }

    /// A v1.0 result serialised from its type, without a JSON tree in
    /// between.
    fn typed_result<T: serde::Serialize>(&self, result: &T) -> Response {
        #[derive(serde::Serialize)]
        struct Success<'a, T> {
            jsonrpc: &'static str,
            id: &'a Value,
            result: &'a T,
        }
        let mut response = Json(Success {
            jsonrpc: "2.0",
            id: &self.id,
            result,
        })
        .into_response();
        echo_envelope(response.headers_mut(), &self.envelope);
        response
    }

    fn error(&self, e: SurfaceError) -> Response {
        // JSON-RPC answers errors with 200, except where HTTP itself has
        // the answer: not authenticated, a body too large, not JSON.
        let status = match e.http {
            // A part's media type is refused in the call's answer; the
            // request's own Content-Type is HTTP's to refuse.
            StatusCode::UNSUPPORTED_MEDIA_TYPE if e.reason.is_some() => StatusCode::OK,
            s @ (StatusCode::UNAUTHORIZED
            | StatusCode::PAYLOAD_TOO_LARGE
            | StatusCode::UNSUPPORTED_MEDIA_TYPE) => s,
            _ => StatusCode::OK,
        };
        let mut response = self.respond(
            status,
            json!({"jsonrpc": "2.0", "id": self.id, "error": e.to_jsonrpc(&self.envelope)}),
        );
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }

    fn respond(&self, status: StatusCode, body: Value) -> Response {
        let mut response = (status, Json(body)).into_response();
        echo_envelope(response.headers_mut(), &self.envelope);
        response
    }

    /// An SSE stream: one JSON-RPC response per event (A2A v1.0 §9.4.2).
    fn stream(self, events: BoxStream<'static, Value>) -> Response {
        let Reply {
            id,
            version,
            envelope,
        } = self;
        let mut headers = HeaderMap::new();
        echo_envelope(&mut headers, &envelope);
        let events = events.map(move |event| {
            let body = match version {
                A2aVersion::V1_0 => Ok(event),
                A2aVersion::V0_3 => bridge::event_to_v03(event),
            };
            let body = match body {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": SurfaceError::protocol(
                    code::INTERNAL_ERROR, format!("the event has no v0.3 form: {e}")).to_jsonrpc(&envelope)}),
            };
            Ok::<_, Infallible>(Event::default().data(body.to_string()))
        });
        let mut response = Sse::new(events).into_response();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        response.headers_mut().extend(headers);
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_requests_are_clean_errors() {
        let cases: [(&[u8], i64); 9] = [
            (b"{not json", code::PARSE_ERROR),
            (b"", code::PARSE_ERROR),
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"SendMessage"}]"#,
                code::INVALID_REQUEST,
            ),
            (b"42", code::INVALID_REQUEST),
            (
                br#"{"jsonrpc":"2.0","method":"SendMessage"}"#,
                code::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"1.0","id":1,"method":"SendMessage"}"#,
                code::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":{"a":1},"method":"SendMessage"}"#,
                code::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                code::INVALID_REQUEST,
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":[1]}"#,
                code::INVALID_PARAMS,
            ),
        ];
        for (body, want) in cases {
            match parse_request(body) {
                Err((_, e)) => assert_eq!(e.code, want, "{}", String::from_utf8_lossy(body)),
                Ok(_) => panic!("accepted {}", String::from_utf8_lossy(body)),
            }
        }
        let ok = parse_request(br#"{"jsonrpc":"2.0","id":"a","method":"SendMessage"}"#)
            .unwrap_or_else(|_| panic!("a valid request"));
        assert_eq!(
            (ok.id, ok.method, ok.params),
            (json!("a"), "SendMessage".into(), json!({}))
        );
    }

    #[test]
    fn json_content_types() {
        for (ct, ok) in [
            ("application/json", true),
            ("application/json; charset=utf-8", true),
            ("application/a2a+json", true),
            ("text/plain", false),
            ("application/x-www-form-urlencoded", false),
        ] {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
            assert_eq!(is_json(&h), ok, "{ct}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }
}
