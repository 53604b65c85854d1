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

/// The path of A2A's gRPC service (`lf.a2a.v1.A2AService` of the
/// official `a2a.proto`): every method of the gRPC binding is under it.
pub const GRPC_SERVICE: &str = "/lf.a2a.v1.A2AService";

/// The path prefixes that are machine paths (each also as a whole path).
pub const PREFIXES: [&str; 8] = [
    "/a2a",
    "/mcp",
    "/gateway",
    "/.well-known",
    "/metrics",
    "/receipts",
    "/push",
    GRPC_SERVICE,
];

/// The variable naming the hub's public address(es).
pub const PUBLIC_URL_ENV: &str = "WS_PUBLIC_URL";

/// The variable naming the domain under which each provider has a host of
/// its own ([`super::provider_hosts`]).
pub const PROVIDER_DOMAIN_ENV: &str = "WS_PROVIDER_DOMAIN";

/// The provider domain of a hub known by its listening addresses: names
/// under `.localhost` are loopback (RFC 6761), as those addresses are.
pub const LOCAL_PROVIDER_DOMAIN: &str = "localhost";

/// The addresses the hub is known by: what its cards name, what its
/// signatures bind to (a card's interfaces and its JWS header's `jku`),
/// and the audience a member's access token must name.
///
/// They are configured, never taken from a request: `WS_PUBLIC_URL` (one
/// or more `http(s)://host[:port]`, comma-separated, the first the
/// primary), else the hub's own listening addresses (`http://` its plain
/// one, `https://` its TLS one; an unspecified listening address stands
/// for `127.0.0.1`). A request whose `Host` is one of them is answered
/// with that one (a client that came over TLS gets the TLS door's URLs);
/// any other `Host` — a forged one, or a name the operator did not list —
/// gets the primary. So the hub never signs a card naming an address
/// that is not its own, and never refuses a card for the name it was
/// reached by.
///
/// Each provider is also known at the root of a host of its own,
/// `{provider}.{domain}` on each of these addresses' schemes and ports
/// ([`super::provider_hosts`]): `domain` is `WS_PROVIDER_DOMAIN`, else
/// `localhost` for a hub known by its listening addresses, else none (an
/// operator who names the hub's addresses names the providers' domain
/// too). Such a host is one of the hub's addresses as well: a request
/// that came by it is answered with the address of the same scheme and
/// port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrls {
    /// `scheme://authority`, lowercase, no trailing slash; the primary
    /// first.
    urls: Vec<String>,
    /// The providers' domain, lowercase, no port.
    provider_domain: Option<String>,
}

/// A request's `Host` as a provider's own host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderHost<'a> {
    /// The provider the host names (its first label).
    pub provider: String,
    /// `scheme://{provider}.{domain}[:port]`: what the provider's card
    /// names as its interfaces when asked at this host.
    pub origin: String,
    /// The hub's public address of the same scheme and port.
    pub hub: &'a str,
}

impl PublicUrls {
    /// From [`PUBLIC_URL_ENV`], else the listening addresses `plain` and
    /// `tls`; an entry that is not an `http(s)://` origin is an error
    /// naming it.
    pub fn from_env(
        plain: std::net::SocketAddr,
        tls: Option<std::net::SocketAddr>,
    ) -> Result<Self, String> {
        let domain = std::env::var(PROVIDER_DOMAIN_ENV).ok();
        let urls = match std::env::var(PUBLIC_URL_ENV) {
            Ok(list) => Self::parse(&list)?,
            Err(_) => Self::listening(plain, tls),
        };
        match domain {
            Some(domain) => urls.with_provider_domain(&domain),
            None => Ok(urls),
        }
    }

    /// The same addresses, providers under `domain` (a DNS name, no port);
    /// an empty `domain` gives providers no host of their own.
    pub fn with_provider_domain(mut self, domain: &str) -> Result<Self, String> {
        let domain = domain.trim().trim_end_matches('.').to_ascii_lowercase();
        if domain.is_empty() {
            self.provider_domain = None;
            return Ok(self);
        }
        if !domain.split('.').all(is_dns_label) {
            return Err(format!(
                "{PROVIDER_DOMAIN_ENV}: `{}` is not a DNS name (labels of letters, digits and `-`; no scheme, no port)",
                exchange::text::clip(&domain, 64)
            ));
        }
        self.provider_domain = Some(domain);
        Ok(self)
    }

    /// The hub's own listening addresses as its public ones.
    pub fn listening(plain: std::net::SocketAddr, tls: Option<std::net::SocketAddr>) -> Self {
        let origin = |scheme: &str, addr: std::net::SocketAddr| {
            let ip = if addr.ip().is_unspecified() {
                std::net::IpAddr::from([127, 0, 0, 1])
            } else {
                addr.ip()
            };
            format!("{scheme}://{}", std::net::SocketAddr::new(ip, addr.port()))
        };
        let mut urls = vec![origin("http", plain)];
        urls.extend(tls.map(|t| origin("https", t)));
        Self {
            urls,
            provider_domain: Some(LOCAL_PROVIDER_DOMAIN.to_string()),
        }
    }

    /// `list`: comma-separated `http(s)://host[:port]` origins.
    pub fn parse(list: &str) -> Result<Self, String> {
        let urls = list
            .split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|entry| {
                let bad = || {
                    format!(
                        "{PUBLIC_URL_ENV}: `{}` is not an http:// or https:// address (scheme, host, port; no path)",
                        exchange::text::clip(entry, 64)
                    )
                };
                let url = url::Url::parse(entry).map_err(|_| bad())?;
                let path_ok = matches!(url.path(), "" | "/");
                if !matches!(url.scheme(), "http" | "https")
                    || url.host_str().is_none()
                    || !path_ok
                    || url.query().is_some()
                    || url.fragment().is_some()
                    || !url.username().is_empty()
                {
                    return Err(bad());
                }
                Ok(url.origin().ascii_serialization())
            })
            .collect::<Result<Vec<_>, _>>()?;
        if urls.is_empty() {
            return Err(format!("{PUBLIC_URL_ENV}: names no address"));
        }
        Ok(Self {
            urls,
            provider_domain: None,
        })
    }

    /// The primary address.
    pub fn primary(&self) -> &str {
        &self.urls[0]
    }

    /// Every address, the primary first.
    pub fn all(&self) -> &[String] {
        &self.urls
    }

    /// Whether the primary is `https://` (the UI cookie is then `Secure`).
    pub fn is_tls(&self) -> bool {
        self.primary().starts_with("https://")
    }

    /// The address a request reached the hub by, when its `Host` is one
    /// of the hub's; otherwise the primary (never the `Host` itself).
    pub fn for_request(&self, headers: &HeaderMap) -> &str {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase);
        host.and_then(|host| {
            self.urls.iter().find(|u| {
                let authority = u.split_once("://").map_or(u.as_str(), |(_, a)| a);
                authority == host
                    || default_port(u).is_some_and(|port| format!("{authority}:{port}") == host)
            })
        })
        .map(String::as_str)
        .or_else(|| self.provider_host(headers).map(|h| h.hub))
        .unwrap_or(self.primary())
    }

    /// The providers' domain, when providers have hosts of their own.
    pub fn provider_domain(&self) -> Option<&str> {
        self.provider_domain.as_deref()
    }

    /// `provider`'s own host on the scheme and port of the hub's address
    /// `hub` (`http://vendorcorp.localhost:3000`), when providers have
    /// hosts of their own.
    pub fn provider_origin(&self, hub: &str, provider: &str) -> Option<String> {
        let domain = self.provider_domain.as_deref()?;
        Some(origin_under(hub, provider, domain))
    }

    /// The request's `Host` as a provider's own host: `{label}.{domain}`
    /// with the port of one of the hub's addresses (none for a default
    /// port). `None` for any other name, or when providers have no hosts.
    /// Whether the provider exists is the registry's to say.
    pub fn provider_host(&self, headers: &HeaderMap) -> Option<ProviderHost<'_>> {
        // Every request passes here: nothing is allocated for one that
        // is not a provider's host.
        let domain = self.provider_domain.as_deref()?;
        let host = headers.get(header::HOST)?.to_str().ok()?;
        let (name, port) = match host.rsplit_once(':') {
            Some((name, port)) => (name, Some(port.parse::<u16>().ok()?)),
            None => (host, None),
        };
        let cut = name.len().checked_sub(domain.len() + 1)?;
        let (label, suffix) = (name.get(..cut)?, name.get(cut..)?);
        let under = suffix
            .strip_prefix('.')
            .is_some_and(|d| d.eq_ignore_ascii_case(domain));
        if !under || !is_dns_label(label) {
            return None;
        }
        let hub = self.urls.iter().find(|u| explicit_port(u) == port)?;
        let label = label.to_ascii_lowercase();
        Some(ProviderHost {
            origin: origin_under(hub, &label, domain),
            provider: label,
            hub,
        })
    }
}

/// `scheme://{provider}.{domain}[:port]` on the scheme and port of `hub`.
fn origin_under(hub: &str, provider: &str, domain: &str) -> String {
    let scheme = hub.split_once("://").map_or("http", |(s, _)| s);
    match explicit_port(hub) {
        Some(port) => format!("{scheme}://{provider}.{domain}:{port}"),
        None => format!("{scheme}://{provider}.{domain}"),
    }
}

/// The port an origin names, when it names one.
fn explicit_port(origin: &str) -> Option<u16> {
    let authority = origin.split_once("://").map_or(origin, |(_, a)| a);
    if authority.ends_with(']') {
        return None;
    }
    authority.rsplit_once(':').and_then(|(_, p)| p.parse().ok())
}

/// One DNS label: 1 to 63 letters, digits and inner `-`.
fn is_dns_label(label: &str) -> bool {
    (1..=63).contains(&label.len())
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// The port an origin leaves out (`http`: 80, `https`: 443), when it does.
fn default_port(origin: &str) -> Option<u16> {
    let (scheme, authority) = origin.split_once("://")?;
    if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        return None;
    }
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
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

    fn host(h: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(header::HOST, h.parse().expect("header"));
        m
    }

    #[test]
    fn a_request_gets_one_of_the_hubs_own_addresses_never_its_host() {
        let p = PublicUrls::parse("https://hub.example, http://127.0.0.1:3000").expect("valid");
        assert_eq!(p.for_request(&host("evil.example")), "https://hub.example");
        assert_eq!(p.for_request(&host("hub.example")), "https://hub.example");
        assert_eq!(
            p.for_request(&host("hub.example:443")),
            "https://hub.example"
        );
        assert_eq!(
            p.for_request(&host("127.0.0.1:3000")),
            "http://127.0.0.1:3000"
        );
        assert_eq!(
            p.for_request(&host("127.0.0.1:3001")),
            "https://hub.example"
        );
        assert_eq!(p.for_request(&HeaderMap::new()), "https://hub.example");
        assert!(p.is_tls());
        let l = PublicUrls::listening(
            "0.0.0.0:3000".parse().expect("addr"),
            Some("127.0.0.1:3443".parse().expect("addr")),
        );
        assert_eq!(l.all(), ["http://127.0.0.1:3000", "https://127.0.0.1:3443"]);
        assert_eq!(
            l.for_request(&host("127.0.0.1:3443")),
            "https://127.0.0.1:3443"
        );
        for bad in ["ftp://x", "http://x/path", "nonsense", "", "http://u:p@x"] {
            let e = PublicUrls::parse(bad).expect_err(bad);
            assert!(e.starts_with("WS_PUBLIC_URL: "), "{e}");
        }
    }
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
