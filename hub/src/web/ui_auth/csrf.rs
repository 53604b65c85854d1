//! Cross-site request forgery defences for state-changing `/api` calls.
//!
//! Two independent checks, because each covers a gap of the other:
//! * **Token**: every state-changing request carries `X-CSRF-Token`, equal
//!   to the random token of its session. A page of another site can make a
//!   browser send the cookie, but cannot read the token (no CORS headers
//!   are ever sent, and `SameSite=Strict` keeps the cookie off cross-site
//!   requests anyway in browsers that honour it).
//! * **Origin**: when the browser says where the request comes from, it
//!   must be this hub (`Origin` host = `Host`). Browsers send `Origin` on
//!   every cross-origin POST, so a forged request is refused even before
//!   its token is looked at.

use axum::http::{header, HeaderMap, Method};
use subtle::ConstantTimeEq;

/// The header carrying the session's CSRF token.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The message of every CSRF refusal (403).
pub const CSRF_REFUSED: &str = "missing or wrong CSRF token";

/// A session's CSRF token: a fresh secret from the hub's one maker.
pub fn new_token() -> String {
    crate::registry::credentials::new_credential()
}

/// Whether `method` changes state (everything but GET, HEAD, OPTIONS).
pub fn is_state_changing(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Whether the request's `X-CSRF-Token` equals `expected`, compared in
/// constant time.
pub fn token_matches(headers: &HeaderMap, expected: &str) -> bool {
    let Some(presented) = headers.get(CSRF_HEADER).map(|v| v.as_bytes()) else {
        return false;
    };
    !expected.is_empty() && bool::from(presented.ct_eq(expected.as_bytes()))
}

/// Whether the `Origin` header, if any, names this hub: the request's
/// `Host` (or, over HTTP/2, the URI's `authority`). `Origin: null`
/// (sandboxed frames, some redirects) is not this hub.
pub fn origin_allowed(headers: &HeaderMap, authority: Option<&str>) -> Result<(), String> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().unwrap_or_default();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or(authority)
        .unwrap_or_default();
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or_default()
        .trim_end_matches('/');
    if !host.is_empty() && origin_host.eq_ignore_ascii_case(host) {
        Ok(())
    } else {
        Err("the request's Origin is not this hub".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).expect("header value"));
        }
        h
    }

    #[test]
    fn the_token_must_be_present_and_exact() {
        let t = new_token();
        assert_eq!(t.len(), 64);
        assert_ne!(t, new_token());
        assert!(token_matches(&headers(&[(CSRF_HEADER, &t)]), &t));
        assert!(!token_matches(&headers(&[(CSRF_HEADER, &t[..63])]), &t));
        assert!(!token_matches(&headers(&[]), &t));
        assert!(!token_matches(&headers(&[(CSRF_HEADER, "")]), ""));
    }

    #[test]
    fn origin_must_be_this_host_when_present() {
        assert!(origin_allowed(&headers(&[("host", "127.0.0.1:3000")]), None).is_ok());
        assert!(origin_allowed(
            &headers(&[
                ("host", "127.0.0.1:3000"),
                ("origin", "http://127.0.0.1:3000")
            ]),
            None
        )
        .is_ok());
        for bad in ["http://evil.example", "http://127.0.0.1:3001", "null", ""] {
            assert!(
                origin_allowed(
                    &headers(&[("host", "127.0.0.1:3000"), ("origin", bad)]),
                    None
                )
                .is_err(),
                "{bad}"
            );
        }
        let origin_only = headers(&[("origin", "http://127.0.0.1:3000")]);
        assert!(origin_allowed(&origin_only, None).is_err());
        assert!(origin_allowed(&origin_only, Some("127.0.0.1:3000")).is_ok());
    }

    #[test]
    fn only_reads_are_safe() {
        assert!(!is_state_changing(&Method::GET));
        assert!(!is_state_changing(&Method::HEAD));
        for m in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(is_state_changing(&m));
        }
    }
}
