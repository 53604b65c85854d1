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
//! The nonce is fresh per request. The middleware puts it in the request's
//! extensions as a Leptos [`Nonce`]; `web::ui_router` hands it to the page
//! render, so the inline scripts Leptos writes carry the nonce this
//! response's header names.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue};
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
/// `nonce`.
pub fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'none'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; \
         frame-ancestors 'none'; object-src 'none'"
    )
}

/// The middleware: a fresh nonce for the request, the headers on its
/// answer (see the module doc).
pub async fn security_headers(
    State(policy): State<HeaderPolicy>,
    mut request: Request,
    next: Next,
) -> Response {
    let nonce = Nonce::new();
    let is_api = super::is_api(request.uri().path());
    request.extensions_mut().insert(nonce.clone());
    let mut response = next.run(request).await;
    apply(response.headers_mut(), policy, &nonce, is_api);
    response
}

/// Sets the headers of the module doc on `headers`; a handler's own
/// `Cache-Control` is kept.
fn apply(headers: &mut HeaderMap, policy: HeaderPolicy, nonce: &str, is_api: bool) {
    if let Ok(csp) = HeaderValue::from_str(&content_security_policy(nonce)) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
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
        apply(&mut h, policy, "n0nce", is_api);
        h
    }

    fn get<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
        h.get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn the_policy_names_the_nonce_and_allows_nothing_foreign() {
        let csp = content_security_policy("abc");
        assert!(
            csp.contains("script-src 'self' 'nonce-abc' 'wasm-unsafe-eval';"),
            "{csp}"
        );
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
    fn every_answer_gets_the_standard_headers() {
        let h = applied(HeaderPolicy::default(), false, &[]);
        assert_eq!(get(&h, "x-content-type-options"), Some("nosniff"));
        assert_eq!(get(&h, "x-frame-options"), Some("DENY"));
        assert_eq!(get(&h, "referrer-policy"), Some("no-referrer"));
        assert!(get(&h, "content-security-policy").is_some_and(|c| c.contains("'nonce-n0nce'")));
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
