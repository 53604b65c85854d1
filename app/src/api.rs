//! The browser's calls to the hub's `/api` (the BFF): JSON in, JSON out.
//!
//! The browser holds only its session cookie (HttpOnly, so this code never
//! sees it; `fetch` sends it by itself on same-origin calls) and the CSRF
//! token of that session, which every state-changing request carries in
//! [`CSRF_HEADER`]. A `401` means the session is gone: the page goes to the
//! login, which brings the user back afterwards.
//!
//! Everything here runs in the browser only. The functions exist in the
//! server build too (event handlers that call them are compiled there), but
//! there they answer "browser only" and are never reached.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::dto::{ApiError, ContractsView, NegotiateRequest, ReasonCode};
use crate::routes::{self, encode_segment, LOGIN_PAGE};

/// The header every POST/PUT/DELETE to `/api` (but the login) carries.
pub const CSRF_HEADER: &str = "X-CSRF-Token";

/// Why a call to the hub did not give the expected answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiFailure {
    /// HTTP status; 0 when there was no answer at all.
    pub status: u16,
    /// What the hub said (its `ApiError.error`), or what went wrong locally.
    pub message: String,
    /// The reason code when the hub gave one (e.g. `NOT_PERMITTED`).
    pub reason: Option<ReasonCode>,
}

impl ApiFailure {
    /// A failure with no HTTP answer behind it.
    pub fn local(message: impl Into<String>) -> Self {
        ApiFailure {
            status: 0,
            message: message.into(),
            reason: None,
        }
    }

    /// Reads a refusal body: an [`ApiError`] when the hub sent one, else
    /// the raw text (trimmed, so an HTML error page cannot flood the UI).
    pub fn from_body(status: u16, body: &str) -> Self {
        match serde_json::from_str::<ApiError>(body) {
            Ok(e) => ApiFailure {
                status,
                message: e.error,
                reason: e.reason,
            },
            Err(_) => {
                let text: String = body.trim().chars().take(200).collect();
                ApiFailure {
                    status,
                    message: if text.is_empty() {
                        format!("HTTP {status}")
                    } else {
                        text
                    },
                    reason: None,
                }
            }
        }
    }

    /// One line for the UI: the reason code first, since that is what an
    /// operator acts on.
    pub fn describe(&self) -> String {
        match self.reason {
            Some(r) => format!("{r}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// The state-changing methods the canvas uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Create or run something.
    Post,
    /// Replace something.
    Put,
    /// Remove something.
    Delete,
}

/// Where to go after logging in: only a path on this hub, so the login
/// cannot be turned into a redirect to somewhere else; anything else is
/// `/`. `next` is the query parameter as read (decoded once).
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if is_local_path(n) && !n.starts_with(LOGIN_PAGE) && stays_on_this_origin(n) => {
            n.to_string()
        }
        _ => "/".to_string(),
    }
}

/// Whether every browser reads `target` as a path on the page's own
/// origin (a WHATWG path-absolute URL), never as another host:
/// * it starts with one `/` followed by neither `/` nor `\` (`//host` is
///   a network-path reference, and browsers read `\` as `/`, so `/\host`
///   is one too);
/// * it holds no control character and no whitespace: the URL parser
///   drops tabs and newlines from anywhere in a URL (`/\t/evil.example`
///   is `//evil.example`) and trims controls and spaces at its ends, so
///   any of them could change what the rest means. A path of this hub
///   never holds one unencoded (the login's own redirect keeps the
///   target's percent-encoding).
pub fn is_local_path(target: &str) -> bool {
    let mut chars = target.chars();
    chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && !target.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// The browser's own word: `target` resolved against the page's address
/// keeps the page's origin (on the server, where nothing navigates,
/// [`is_local_path`] alone decides).
fn stays_on_this_origin(target: &str) -> bool {
    #[cfg(feature = "hydrate")]
    {
        let Ok(origin) = leptos::prelude::window().location().origin() else {
            return false;
        };
        web_sys::Url::new_with_base(target, &origin).is_ok_and(|url| url.origin() == origin)
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = target;
        true
    }
}

/// The login URL that brings the user back to `path` afterwards.
pub fn login_url(path: &str) -> String {
    format!(
        "{LOGIN_PAGE}?next={}",
        encode_segment(&safe_next(Some(path)))
    )
}

/// Remembers the session's CSRF token for the requests to come (browser
/// only; the server build keeps nothing, since its threads serve everyone).
pub fn set_csrf(token: Option<String>) {
    #[cfg(feature = "hydrate")]
    browser::CSRF.with(|c| *c.borrow_mut() = token);
    #[cfg(not(feature = "hydrate"))]
    let _ = token;
}

/// `GET` a JSON answer. A `401` sends the page to the login.
pub async fn get_json<T: DeserializeOwned>(path: &str) -> Result<T, ApiFailure> {
    #[cfg(feature = "hydrate")]
    {
        browser::get_json(path, true).await
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = path;
        Err(browser_only())
    }
}

/// `GET` a JSON answer without leaving the page on a `401` (the login page
/// asking whether someone is logged in).
pub async fn probe_json<T: DeserializeOwned>(path: &str) -> Result<T, ApiFailure> {
    #[cfg(feature = "hydrate")]
    {
        browser::get_json(path, false).await
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = path;
        Err(browser_only())
    }
}

/// Sends `body` as JSON with the CSRF token and reads a JSON answer
/// (`None` for `204 No Content`). A `401` sends the page to the login.
pub async fn send_json<B: Serialize, T: DeserializeOwned>(
    method: Method,
    path: &str,
    body: Option<&B>,
) -> Result<Option<T>, ApiFailure> {
    #[cfg(feature = "hydrate")]
    {
        browser::send_json(method, path, body, true).await
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (method, path, body.is_some());
        Err(browser_only())
    }
}

/// The login itself: a `401` here is "wrong username or password", shown
/// on the form, not a reason to reload the login page.
pub async fn login<B: Serialize, T: DeserializeOwned>(
    path: &str,
    body: &B,
) -> Result<T, ApiFailure> {
    #[cfg(feature = "hydrate")]
    {
        browser::send_json(Method::Post, path, Some(body), false)
            .await?
            .ok_or_else(|| ApiFailure::local("the hub answered the login without a session"))
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (path, serde_json::to_string(body).is_ok());
        Err(browser_only())
    }
}

/// `GET` what a data-share edge's drawer shows about its data contracts:
/// the consumer's and the hub's contract, run state and transcript.
pub async fn contract(edge_id: &str) -> Result<ContractsView, ApiFailure> {
    get_json::<ContractsView>(&routes::edge_contract(edge_id)).await
}

/// Has the hub negotiate its own contract for the data-share of
/// `edge_id`; the answer is the drawer's view once the negotiation ran.
pub async fn negotiate(edge_id: &str, req: &NegotiateRequest) -> Result<ContractsView, ApiFailure> {
    send_json::<_, ContractsView>(Method::Post, &routes::edge_negotiate(edge_id), Some(req))
        .await?
        .ok_or_else(|| ApiFailure::local("the hub sent an empty answer"))
}

/// Sends the browser to `url` with a full page load (after login and
/// logout: the server renders the next page with the new session).
pub fn go_to(url: &str) {
    #[cfg(feature = "hydrate")]
    {
        let _ = leptos::prelude::window().location().assign(url);
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = url;
}

/// The current path and query, to come back to after a login.
pub fn current_path() -> String {
    #[cfg(feature = "hydrate")]
    {
        let loc = leptos::prelude::window().location();
        format!(
            "{}{}",
            loc.pathname().unwrap_or_else(|_| "/".into()),
            loc.search().unwrap_or_default()
        )
    }
    #[cfg(not(feature = "hydrate"))]
    {
        "/".into()
    }
}

/// The query string of the current location (`?next=...`, or empty).
pub fn current_query() -> String {
    #[cfg(feature = "hydrate")]
    {
        leptos::prelude::window()
            .location()
            .search()
            .unwrap_or_default()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        String::new()
    }
}

#[cfg(not(feature = "hydrate"))]
fn browser_only() -> ApiFailure {
    ApiFailure::local("only the browser calls the hub's /api")
}

#[cfg(feature = "hydrate")]
mod browser {
    //! The request itself is not generic ([`request`]: method, path, body
    //! text in; status checked, body text out): its code, and the fetch
    //! and error handling in it, exist once in the wasm. Only the JSON
    //! (de)serialisation is per type (it keeps the bundle small).

    use std::cell::RefCell;

    use gloo_net::http::{Request, RequestBuilder};
    use serde::de::DeserializeOwned;
    use serde::Serialize;

    use super::{current_path, go_to, login_url, ApiFailure, Method, CSRF_HEADER};
    use crate::dto::SessionView;

    thread_local! {
        /// The session's CSRF token (wasm has one thread: the page's).
        pub(super) static CSRF: RefCell<Option<String>> = const { RefCell::new(None) };
    }

    fn network(e: gloo_net::Error) -> ApiFailure {
        ApiFailure::local(format!("the hub could not be reached: {e}"))
    }

    fn not_understood(e: serde_json::Error) -> ApiFailure {
        ApiFailure::local(format!("the hub's answer was not understood: {e}"))
    }

    fn empty_answer() -> ApiFailure {
        ApiFailure::local("the hub sent an empty answer")
    }

    /// The token, asking the hub for the session if the page has none yet.
    async fn csrf() -> Result<String, ApiFailure> {
        if let Some(t) = CSRF.with(|c| c.borrow().clone()) {
            return Ok(t);
        }
        let text = respond(get(crate::routes::SESSION).build(), true).await?;
        let s: SessionView = parse(text)?.ok_or_else(empty_answer)?;
        CSRF.with(|c| *c.borrow_mut() = Some(s.csrf_token.clone()));
        Ok(s.csrf_token)
    }

    /// A `GET` of `path` that asks for JSON.
    fn get(path: &str) -> RequestBuilder {
        Request::get(path).header("Accept", "application/json")
    }

    /// `GET` (`method` `None`) or a state-changing `method` with `body`
    /// (JSON text) and, when `leave_on_401` (every call but the login), the
    /// CSRF token.
    async fn request(
        method: Option<Method>,
        path: &str,
        body: Option<String>,
        leave_on_401: bool,
    ) -> Result<Option<String>, ApiFailure> {
        let builder = match method {
            None => get(path),
            Some(m) => {
                let builder = match m {
                    Method::Post => Request::post(path),
                    Method::Put => Request::put(path),
                    Method::Delete => Request::delete(path),
                };
                let builder = builder.header("Accept", "application/json");
                // The login has no session yet, so no token; everything
                // else does.
                if leave_on_401 {
                    builder.header(CSRF_HEADER, &csrf().await?)
                } else {
                    builder
                }
            }
        };
        let req = match body {
            Some(b) => builder.header("Content-Type", "application/json").body(b),
            None => builder.build(),
        };
        respond(req, leave_on_401).await
    }

    /// Sends `req`: the answer's text, `None` for `204` or an empty body.
    /// A `401` sends the page to the login when `leave_on_401`.
    async fn respond(
        req: Result<Request, gloo_net::Error>,
        leave_on_401: bool,
    ) -> Result<Option<String>, ApiFailure> {
        let req =
            req.map_err(|e| ApiFailure::local(format!("could not build the request: {e}")))?;
        let res = req.send().await.map_err(network)?;
        let status = res.status();
        if status == 401 && leave_on_401 {
            go_to(&login_url(&current_path()));
        }
        if !(200..300).contains(&status) {
            let body = res.text().await.unwrap_or_default();
            return Err(ApiFailure::from_body(status, &body));
        }
        if status == 204 {
            return Ok(None);
        }
        let text = res.text().await.map_err(network)?;
        Ok((!text.trim().is_empty()).then_some(text))
    }

    /// The answer as a `T` (`None` when there was none).
    fn parse<T: DeserializeOwned>(text: Option<String>) -> Result<Option<T>, ApiFailure> {
        text.map(|t| serde_json::from_str(&t).map_err(not_understood))
            .transpose()
    }

    pub(super) async fn get_json<T: DeserializeOwned>(
        path: &str,
        leave_on_401: bool,
    ) -> Result<T, ApiFailure> {
        let text = request(None, path, None, leave_on_401).await?;
        parse(text)?.ok_or_else(empty_answer)
    }

    pub(super) async fn send_json<B: Serialize, T: DeserializeOwned>(
        method: Method,
        path: &str,
        body: Option<&B>,
        leave_on_401: bool,
    ) -> Result<Option<T>, ApiFailure> {
        let body = body
            .map(|b| {
                serde_json::to_string(b)
                    .map_err(|e| ApiFailure::local(format!("could not build the request: {e}")))
            })
            .transpose()?;
        let text = request(Some(method), path, body, leave_on_401).await?;
        parse(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/")), "/");
        assert_eq!(safe_next(Some("/?x=1")), "/?x=1");
        assert_eq!(safe_next(Some("//evil.example")), "/");
        assert_eq!(safe_next(Some("https://evil.example")), "/");
        assert_eq!(safe_next(Some("/\\evil")), "/");
        assert_eq!(safe_next(Some("/login?next=/")), "/");
        assert_eq!(safe_next(None), "/");
        assert_eq!(login_url("/"), "/login?next=%2F");
    }

    /// Every form that sends a browser off the hub, as the login page reads
    /// `next` (the query parameter decoded once): each gives `/`.
    #[test]
    fn no_spelling_of_another_host_gets_through() {
        let attacks = [
            // What `?next=/%09/evil.example` reads as: the parser drops
            // the tab, leaving `//evil.example`.
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r\n/evil.example",
            "/\u{0}/evil.example",
            "/\u{7f}/evil.example",
            "//evil.example",
            "///evil.example",
            "/\\evil.example",
            "/\\/evil.example",
            "\\\\evil.example",
            "https://evil.example",
            "http:evil.example",
            "javascript:alert(1)",
            "evil.example",
            // `?next=%2F%2Fevil.example` decoded once.
            "//evil.example/%2F..",
            // Whitespace anywhere: leading, inside, Unicode.
            " /evil.example",
            "\t//evil.example",
            "/ /evil.example",
            "/\u{a0}/evil.example",
            "/\u{3000}/evil.example",
            "/\u{85}/evil.example",
            "/inbox\t",
            "",
        ];
        for attack in attacks {
            assert_eq!(safe_next(Some(attack)), "/", "{attack:?}");
            assert!(!is_local_path(attack), "{attack:?}");
        }
        // What the hub itself sends there still comes back: its own
        // paths, their queries percent-encoded as they were.
        for ok in [
            "/inbox",
            "/?edge=a%20b",
            "/%09/evil.example",
            "/a\\b",
            "/x//y",
        ] {
            assert_eq!(safe_next(Some(ok)), ok, "{ok:?}");
        }
    }

    /// The same attacks as they arrive, in the login page's query.
    #[test]
    fn next_is_read_from_the_query_and_refused_there() {
        for query in [
            "?next=/%09/evil.example",
            "?next=//evil.example",
            "?next=/%5Cevil.example",
            "?next=/%5C/evil.example",
            "?next=https://evil.example",
            "?next=https%3A%2F%2Fevil.example",
            "?next=%2F%2Fevil.example",
            "?next=/%0d%0a/evil.example",
            "?next=/%00/evil.example",
            "?next=%20/evil.example",
            "?next=/+/evil.example",
            "?next=/%E3%80%80/evil.example",
        ] {
            let next = routes::query_param(query, "next");
            assert_eq!(safe_next(next.as_deref()), "/", "{query} read as {next:?}");
        }
        let next = routes::query_param("?next=%2Finbox%3Fa%3D1", "next");
        assert_eq!(safe_next(next.as_deref()), "/inbox?a=1");
    }

    #[test]
    fn refusals_are_read_from_api_errors() {
        let f = ApiFailure::from_body(
            403,
            r#"{"error":"no rule lets helpdesk consume orders.query from vendorcorp","reason":"NOT_PERMITTED"}"#,
        );
        assert_eq!(f.reason, Some(ReasonCode::NotPermitted));
        assert!(f.describe().starts_with("NOT_PERMITTED: no rule"));
        let f = ApiFailure::from_body(500, "");
        assert_eq!(f.message, "HTTP 500");
    }
}
