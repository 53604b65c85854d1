//! The standard security headers on every answer of the hub, and the
//! Content-Security-Policy of its pages (DESIGN.md §3, "browser": the
//! browser is the least trusted party of the hub).
//!
//! Every response gets:
//! * `Content-Security-Policy`: scripts only from the hub itself or inline
//!   with this response's nonce (the hydration script), WebAssembly
//!   compiled from those, connections only back to the hub, no frames, no
//!   plugins, no `<base>`, forms only to the hub. Styles may be inline
//!   because the canvas positions nodes with `style` attributes; no style
//!   can run code.
//! * `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`,
//!   `Referrer-Policy: no-referrer`, `Cross-Origin-Opener-Policy` and
//!   `Cross-Origin-Resource-Policy: same-origin`, a `Permissions-Policy`
//!   that turns off the device APIs the canvas never uses.
//! * `Cache-Control: no-store` on `/api` answers that set none (they carry
//!   the session's view; no shared cache may keep them).
//! * `Strict-Transport-Security` when the hub is served over TLS
//!   ([`HeaderPolicy::tls`]).
//!
//! The nonce is fresh per page request (a `GET` or `HEAD` outside `/api`
//! and the A2A doors: only those render HTML). The middleware puts it in
//! the request's extensions as a Leptos [`Nonce`]; `web::ui_router` hands
//! it to the page render, so the inline scripts Leptos writes carry the
//! nonce this response's header names. Every other answer (the gateway's
//! hot path among them) gets the same policy without a nonce, built once.

use axum::extract::{Request, State};
use std::sync::LazyLock;

use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use leptos::nonce::Nonce;

/// What differs between deployments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeaderPolicy {
    /// The hub is reached over HTTPS (at a TLS-terminating load balancer):
    /// browsers are told to use nothing else.
    pub tls: bool,
}

/// `Permissions-Policy`: device and tracking APIs the canvas never uses.
const PERMISSIONS: &str = "camera=(), microphone=(), geolocation=(), payment=(), usb=(), \
                           interest-cohort=()";
/// `Strict-Transport-Security` over TLS: one year.
const HSTS: &str = "max-age=31536000";

/// The Content-Security-Policy of a response whose inline scripts carry
/// `nonce`; with `None`, of an answer that has no inline script.
pub fn content_security_policy(nonce: Option<&str>) -> String {
    let inline = nonce.map(|n| format!(" 'nonce-{n}'")).unwrap_or_default();
    format!(
        "default-src 'none'; script-src 'self'{inline} 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; \
         frame-ancestors 'none'; object-src 'none'"
    )
}

/// The policy of every answer that is not a page, built once.
static NO_NONCE_POLICY: LazyLock<Option<HeaderValue>> =
    LazyLock::new(|| HeaderValue::from_str(&content_security_policy(None)).ok());

/// Whether the request may render a page (and so needs a nonce).
fn renders_page(method: &Method, path: &str) -> bool {
    matches!(*method, Method::GET | Method::HEAD)
        && !super::is_api(path)
        && !path.starts_with("/gateway/")
        && !path.starts_with("/a2a/")
}

/// The middleware: a fresh nonce for a page request, the headers on every
/// answer (see the module doc).
pub async fn security_headers(
    State(policy): State<HeaderPolicy>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    let is_api = super::is_api(path);
    let nonce = renders_page(request.method(), path).then(Nonce::new);
    if let Some(nonce) = &nonce {
        request.extensions_mut().insert(nonce.clone());
    }
    let mut response = next.run(request).await;
    let csp = match &nonce {
        Some(n) => HeaderValue::from_str(&content_security_policy(Some(n))).ok(),
        None => NO_NONCE_POLICY.clone(),
    };
    if let Some(csp) = csp {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    apply(response.headers_mut(), policy, is_api);
    response
}

/// Sets the headers of the module doc but the policy on `headers`; a
/// handler's own `Cache-Control` is kept.
fn apply(headers: &mut HeaderMap, policy: HeaderPolicy, is_api: bool) {
    let fixed: [(HeaderName, &'static str); 6] = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (
            HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ),
        (
            HeaderName::from_static("cross-origin-resource-policy"),
            "same-origin",
        ),
        (HeaderName::from_static("permissions-policy"), PERMISSIONS),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if is_api && !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if policy.tls {
        headers.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(HSTS),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(
        policy: HeaderPolicy,
        is_api: bool,
        pre: &[(HeaderName, &'static str)],
    ) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pre {
            h.insert(k.clone(), HeaderValue::from_static(v));
        }
        apply(&mut h, policy, is_api);
        h
    }

    fn get<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
        h.get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn the_policy_names_the_nonce_and_allows_nothing_foreign() {
        let csp = content_security_policy(Some("abc"));
        assert!(
            csp.contains("script-src 'self' 'nonce-abc' 'wasm-unsafe-eval';"),
            "{csp}"
        );
        // Without a nonce: the same policy, no inline script allowed.
        let without = content_security_policy(None);
        assert_eq!(without, csp.replace(" 'nonce-abc'", ""));
        assert!(NO_NONCE_POLICY.is_some(), "a valid header value");
        for directive in [
            "default-src 'none'",
            "connect-src 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
            "base-uri 'none'",
        ] {
            assert!(csp.contains(directive), "{directive} in {csp}");
        }
        assert!(!csp.contains(" 'unsafe-eval'"), "no eval: {csp}");
        assert!(!csp.contains('*'), "no wildcard source: {csp}");
    }

    #[test]
    fn only_page_requests_get_a_nonce() {
        for (method, path) in [
            (Method::GET, "/"),
            (Method::GET, "/inbox"),
            (Method::HEAD, "/x"),
        ] {
            assert!(renders_page(&method, path), "{method} {path}");
        }
        for (method, path) in [
            (Method::POST, "/gateway/v1/vendorcorp/orders.query"),
            (Method::POST, "/a2a/vendorcorp"),
            (Method::GET, "/api/topology"),
            (Method::POST, "/api/fn/topology"),
            (Method::POST, "/"),
        ] {
            assert!(!renders_page(&method, path), "{method} {path}");
        }
    }

    #[test]
    fn every_answer_gets_the_standard_headers() {
        let h = applied(HeaderPolicy::default(), false, &[]);
        assert_eq!(get(&h, "x-content-type-options"), Some("nosniff"));
        assert_eq!(get(&h, "x-frame-options"), Some("DENY"));
        assert_eq!(get(&h, "referrer-policy"), Some("no-referrer"));
        assert_eq!(get(&h, "strict-transport-security"), None, "plain HTTP");
        assert_eq!(get(&h, "cache-control"), None, "pages keep the default");
    }

    #[test]
    fn api_answers_are_not_stored_unless_they_say_otherwise_and_tls_adds_hsts() {
        let h = applied(HeaderPolicy { tls: true }, true, &[]);
        assert_eq!(get(&h, "cache-control"), Some("no-store"));
        assert_eq!(get(&h, "strict-transport-security"), Some(HSTS));
        let sse = applied(
            HeaderPolicy::default(),
            true,
            &[(header::CACHE_CONTROL, "no-cache")],
        );
        assert_eq!(get(&sse, "cache-control"), Some("no-cache"));
    }
}
