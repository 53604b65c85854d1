//! The machine door: which paths are for programs, not people, and what a
//! program hears when it asks for something the hub does not have.
//!
//! A2A and MCP clients, scrapers and scripts reach the hub under
//! [`PREFIXES`]. They hold no UI session, read JSON, and follow whatever
//! URL they were given, trailing slash and all. So the hub routes a
//! request in two rooms ([`split`]):
//!
//! * a **machine path** goes to the machine routes only (gateway, A2A
//!   surface, MCP front, `/metrics`), never to the canvas, its session
//!   guard or its login page. A trailing slash is dropped before routing
//!   (`/a2a/vendorcorp/` is `/a2a/vendorcorp`); a path no route has is a
//!   JSON 404, a method a route does not take a JSON 405 with `Allow`;
//!   and any other error answer that is not JSON (a library's plain-text
//!   415, say) is given a JSON body with the same status;
//! * everything else is the browser's.
//!
//! The error body is the HTTP+JSON binding's `google.rpc.Status` shape
//! (`{"error": {"code", "status", "message"}}`), which A2A clients read.

use std::convert::Infallible;

use axum::extract::Request;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::json;
use tower::ServiceExt;

/// The path prefixes that are machine paths (each also as a whole path).
pub const PREFIXES: [&str; 5] = ["/a2a", "/mcp", "/gateway", "/.well-known", "/metrics"];

/// The base URL the caller reached the hub at (`http://{Host}`), for the
/// URLs a card advertises and the resource identifiers of the hub's doors
/// (unless `WS_PUBLIC_URL` names the hub's public address). A forged `Host` misleads only its sender.
pub fn hub_base(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        })
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

/// Whether `path` is a machine path.
pub fn is_machine(path: &str) -> bool {
    PREFIXES.iter().any(|prefix| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

/// One router from the machine routes and the browser's: a request goes
/// to one of them by its path, as the module doc says.
pub fn split(machine: Router, browser: Router) -> Router {
    let machine = machine
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    Router::new().fallback_service(tower::service_fn(move |request: Request| {
        let (machine, browser) = (machine.clone(), browser.clone());
        async move {
            if !is_machine(request.uri().path()) {
                return browser.oneshot(request).await;
            }
            let path = request.uri().path().to_string();
            let response = machine.oneshot(without_trailing_slash(request)).await?;
            Ok::<_, Infallible>(json_errors(&path, response))
        }
    }))
}

/// The request with its path's trailing slashes dropped.
fn without_trailing_slash(mut request: Request) -> Request {
    let path = request.uri().path();
    if path.len() > 1 && path.ends_with('/') {
        let trimmed = path.trim_end_matches('/');
        let rebuilt = match request.uri().query() {
            Some(q) => format!("{trimmed}?{q}"),
            None => trimmed.to_string(),
        };
        let mut parts = request.uri().clone().into_parts();
        if let Ok(pq) = rebuilt.parse() {
            parts.path_and_query = Some(pq);
            if let Ok(uri) = Uri::from_parts(parts) {
                *request.uri_mut() = uri;
            }
        }
    }
    request
}

/// The `google.rpc.Status` body of an error on a machine path.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let body = json!({"error": {
        "code": status.as_u16(),
        "status": status_name(status),
        "message": message.into(),
    }});
    (status, axum::Json(body)).into_response()
}

async fn not_found(request: Request) -> Response {
    let path = exchange::text::clip(request.uri().path(), 120);
    let hint = if path.ends_with(exchange::health::CARD_PATH) && path.starts_with("/a2a/") {
        " (a provider's card is at /a2a/{provider}/.well-known/agent-card.json: give a client \
         that resolves `.well-known/agent-card.json` against its URL the provider's URL with a \
         trailing `/`)"
    } else {
        ""
    };
    error(
        StatusCode::NOT_FOUND,
        format!("no route for {path} on this hub{hint}"),
    )
}

async fn method_not_allowed(request: Request) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} is not a method of {}",
            request.method(),
            exchange::text::clip(request.uri().path(), 120)
        ),
    )
}

/// An error answer of a machine route that is not JSON, made JSON (same
/// status, same `Allow`).
fn json_errors(path: &str, response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.contains("json") || ct.starts_with("text/event-stream"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let www = response.headers().get(header::WWW_AUTHENTICATE).cloned();
    let (parts, body) = response.into_parts();
    drop(body);
    let message = match status {
        StatusCode::NOT_FOUND => format!(
            "no route for {} on this hub",
            exchange::text::clip(path, 120)
        ),
        StatusCode::METHOD_NOT_ALLOWED => format!(
            "not a method of {}{}",
            exchange::text::clip(path, 120),
            allow
                .as_ref()
                .and_then(|a| a.to_str().ok())
                .map(|a| format!(" (allowed: {a})"))
                .unwrap_or_default()
        ),
        other => other
            .canonical_reason()
            .unwrap_or("request refused")
            .to_string(),
    };
    let mut fixed = error(status, message);
    for (name, value) in [(header::ALLOW, allow), (header::WWW_AUTHENTICATE, www)] {
        if let Some(value) = value {
            fixed.headers_mut().insert(name, value);
        }
    }
    // The request's own headers the route set (envelope echo, CORS) stay.
    for (name, value) in parts.headers.iter() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            fixed.headers_mut().entry(name).or_insert(value.clone());
        }
    }
    fixed
}

/// The `google.rpc.Code` name of an HTTP status, as the HTTP+JSON binding
/// writes it.
fn status_name(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "INVALID_ARGUMENT",
        StatusCode::UNAUTHORIZED => "UNAUTHENTICATED",
        StatusCode::FORBIDDEN => "PERMISSION_DENIED",
        StatusCode::NOT_FOUND => "NOT_FOUND",
        StatusCode::CONFLICT => "ALREADY_EXISTS",
        StatusCode::TOO_MANY_REQUESTS => "RESOURCE_EXHAUSTED",
        StatusCode::NOT_IMPLEMENTED | StatusCode::METHOD_NOT_ALLOWED => "UNIMPLEMENTED",
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::BAD_GATEWAY => "UNAVAILABLE",
        StatusCode::GATEWAY_TIMEOUT => "DEADLINE_EXCEEDED",
        s if s.is_client_error() => "FAILED_PRECONDITION",
        _ => "INTERNAL",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::HeaderValue;

    /// A body-less stand-in, for tests of [`json_errors`].
    fn plain(status: StatusCode, content_type: Option<&'static str>) -> Response {
        let mut r = Response::new(Body::from("nope"));
        *r.status_mut() = status;
        if let Some(ct) = content_type {
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
        }
        r
    }

    #[test]
    fn machine_paths_by_prefix() {
        for p in [
            "/a2a",
            "/a2a/x",
            "/a2a/.well-known/agent-card.json",
            "/mcp/vendorcorp/",
            "/gateway/v1/a/b",
            "/.well-known/agent-card.json",
            "/metrics",
            "/metrics/",
        ] {
            assert!(is_machine(p), "{p}");
        }
        for p in [
            "/",
            "/a2ax",
            "/inbox",
            "/api/topology",
            "/login",
            "/metricsx",
            "/pkg/a.js",
        ] {
            assert!(!is_machine(p), "{p}");
        }
    }

    #[test]
    fn a_trailing_slash_is_dropped_and_the_query_kept() {
        let r = Request::builder()
            .uri("/a2a/vendorcorp/rest/tasks/?pageSize=2")
            .body(Body::empty())
            .expect("request");
        assert_eq!(
            without_trailing_slash(r).uri().to_string(),
            "/a2a/vendorcorp/rest/tasks?pageSize=2"
        );
        let r = Request::builder()
            .uri("/a2a/vendorcorp")
            .body(Body::empty())
            .expect("request");
        assert_eq!(
            without_trailing_slash(r).uri().to_string(),
            "/a2a/vendorcorp"
        );
    }

    #[tokio::test]
    async fn error_answers_that_are_not_json_become_json_with_their_status() {
        for (status, ct) in [
            (StatusCode::NOT_FOUND, None),
            (StatusCode::METHOD_NOT_ALLOWED, Some("text/plain")),
            (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                Some("text/plain; charset=utf-8"),
            ),
            (StatusCode::UNAUTHORIZED, Some("text/html")),
        ] {
            let fixed = json_errors("/mcp/x", plain(status, ct));
            assert_eq!(fixed.status(), status);
            assert_eq!(
                fixed
                    .headers()
                    .get(header::CONTENT_TYPE)
                    .map(|v| v.as_bytes()),
                Some(&b"application/json"[..])
            );
            let body = axum::body::to_bytes(fixed.into_body(), 4096)
                .await
                .expect("body");
            let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(v["error"]["code"], status.as_u16());
        }
        // A JSON error and a success pass as they are.
        for (status, ct) in [
            (StatusCode::NOT_FOUND, Some("application/json")),
            (StatusCode::OK, Some("text/plain")),
        ] {
            let same = json_errors("/mcp/x", plain(status, ct));
            let body = axum::body::to_bytes(same.into_body(), 4096)
                .await
                .expect("body");
            assert_eq!(&body[..], b"nope");
        }
    }
}
