//! Logging in to the canvas through a member company's own identity
//! provider: OpenID Connect's authorization code flow with PKCE, the hub
//! a public client (it holds no secret of the company's).
//!
//! A member whose topology entry names `oidc.ui_login` offers it on the
//! login page ("Log in with BuyerCorp"):
//!
//! 1. `GET /login/oidc/{system}?next=/path` — the hub reads the issuer's
//!    discovery document (through its identity keys' cache), makes a
//!    `state`, a `nonce` and a PKCE verifier, keeps them in a short-lived
//!    cookie (`ws_oidc`: HttpOnly, `SameSite=Lax` so the provider's
//!    redirect back carries it, 10 minutes, path `/login/oidc`), and sends
//!    the browser to the provider's authorization endpoint;
//! 2. the person logs in there;
//! 3. `GET /login/oidc/callback?code&state` — the state must be the
//!    cookie's; the code is exchanged at the provider's token endpoint with
//!    the verifier (through the egress policy's identity purpose, like
//!    every fetch of an issuer's documents); the ID token is verified (the issuer's keys from its
//!    JWKS, an allowed `alg`, `iss`, `aud` = the hub's client, `exp`, the
//!    `nonce` sent in step 1). The person is then made or updated in the
//!    people store: `{preferred_username or sub}@{system}`, **bound to
//!    that system**, with the role the configured claim names (`viewer`,
//!    `operator` or `approver`; no claim: `viewer`; `admin` never: a
//!    company's provider cannot make anyone powerful over the whole
//!    exchange). A new session is logged in, and the answer is a small page
//!    that moves on to `next` from the hub's own origin (the session cookie
//!    is `SameSite=Strict`: a redirect that continues the provider's
//!    cross-site navigation would arrive without it).
//!
//! Every refusal is a page that says what was wrong (the provider's own
//! error, a state that does not match, a token that does not verify) and
//! logs nobody in.

use std::sync::Arc;

use app::access::Role;
use app::dto::{LoginProviderView, LoginProvidersView};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use base64::Engine;
use jsonwebtoken::{Algorithm, Validation};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use tower_sessions::Session;

use super::people::People;
use super::session;
use crate::identity::token::Peek;
use crate::identity::Identity;
use crate::registry::model::UiLogin;
use crate::registry::Registry;

/// Where a member's login starts (`{system}`: its id).
pub const START: &str = "/login/oidc/{system}";
/// Where the provider sends the browser back.
pub const CALLBACK: &str = "/login/oidc/callback";
/// The path prefix of both (public pages, outside `/api`).
pub const PREFIX: &str = "/login/oidc/";
/// The cookie holding a login in progress.
const COOKIE: &str = "ws_oidc";
/// How long a login in progress may take.
const PENDING_SECONDS: u64 = 600;
/// How long a request to the provider may take, and the largest answer
/// read: an identity fetch's.
const PROVIDER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);
const MAX_TOKEN_ANSWER: usize = 256 * 1024;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// What the login routes read.
#[derive(Clone)]
pub struct OidcLogin {
    /// Which members offer a login, and their issuers.
    pub registry: Arc<Registry>,
    /// The issuers' keys and endpoints, and the hub's public address.
    pub identity: Arc<Identity>,
    /// Where the person is made.
    pub people: People,
    /// The client that talks to the providers.
    pub http: reqwest::Client,
}

impl std::fmt::Debug for OidcLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcLogin").finish_non_exhaustive()
    }
}

impl OidcLogin {
    /// The routes of the module doc, and the login page's list of the
    /// members that offer a login (`GET /api/login/providers`, public).
    pub fn routes(self) -> Router {
        Router::new()
            .route(CALLBACK, get(callback))
            .route(START, get(start))
            .route(
                app::routes::ApiRoute::LoginProviders.template(),
                get(providers),
            )
            .with_state(self)
    }

    /// The member `system`'s login settings and issuer, if it offers one.
    fn login_of(&self, system: &str) -> Option<(String, UiLogin)> {
        let loaded = self.registry.snapshot();
        let oidc = loaded.topology.system(system)?.oidc.as_ref()?;
        Some((oidc.issuer.clone(), oidc.ui_login.clone()?))
    }
}

/// `GET /api/login/providers`: the members whose people may log in
/// through their own identity provider, by name.
async fn providers(State(login): State<OidcLogin>) -> axum::Json<LoginProvidersView> {
    let loaded = login.registry.snapshot();
    let providers = loaded
        .topology
        .systems
        .iter()
        .filter(|s| s.oidc.as_ref().is_some_and(|o| o.ui_login.is_some()))
        .map(|s| LoginProviderView {
            system: s.id.clone(),
            name: exchange::text::clip(&s.name, 80),
        })
        .collect();
    axum::Json(LoginProvidersView { providers })
}

/// A login in progress, kept in the [`COOKIE`].
#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    system: String,
    state: String,
    nonce: String,
    verifier: String,
    next: String,
    redirect_uri: String,
}

#[derive(Debug, Deserialize)]
struct StartQuery {
    #[serde(default)]
    next: Option<String>,
}

/// A refusal as the page the browser shows.
fn refused(status: StatusCode, why: &str) -> Response {
    let why = exchange::text::clip(why, 300)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    (
        status,
        Html(format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Log in — Wall Street</title></head>\
             <body><p data-testid=\"oidc-refused\">The login did not work: {why}</p>\
             <p><a href=\"/login\">Back to the login</a></p></body></html>"
        )),
    )
        .into_response()
}

/// `GET /login/oidc/{system}`: off to the member's identity provider.
async fn start(
    State(login): State<OidcLogin>,
    Path(system): Path<String>,
    Query(query): Query<StartQuery>,
    headers: HeaderMap,
) -> Response {
    let Some((issuer, ui)) = login.login_of(&system) else {
        return refused(
            StatusCode::NOT_FOUND,
            "no member of this exchange offers that login",
        );
    };
    login.identity.keys().ensure_discovered(&issuer).await;
    let Some(authorize) = login
        .identity
        .keys()
        .of(&issuer)
        .and_then(|set| set.authorization_endpoint.clone())
    else {
        return refused(
            StatusCode::BAD_GATEWAY,
            "the member's identity provider did not say where to log in",
        );
    };
    let secret = crate::registry::credentials::new_credential;
    let pending = Pending {
        system,
        state: secret(),
        nonce: secret(),
        verifier: secret(),
        next: app::api::safe_next(query.next.as_deref()),
        redirect_uri: format!("{}{CALLBACK}", login.identity.base(&headers)),
    };
    let challenge = B64.encode(sha2::Sha256::digest(pending.verifier.as_bytes()));
    let Ok(mut url) = url::Url::parse(&authorize) else {
        return refused(
            StatusCode::BAD_GATEWAY,
            "the member's identity provider names an authorization endpoint that is not a URL",
        );
    };
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &ui.client_id)
        .append_pair("redirect_uri", &pending.redirect_uri)
        .append_pair("scope", "openid")
        .append_pair("state", &pending.state)
        .append_pair("nonce", &pending.nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let cookie = format!(
        "{COOKIE}={}; Path={}; Max-Age={PENDING_SECONDS}; HttpOnly; SameSite=Lax{}",
        B64.encode(serde_json::to_vec(&pending).unwrap_or_default()),
        PREFIX.trim_end_matches('/'),
        if login.identity.public().is_some_and(|p| p.is_tls()) {
            "; Secure"
        } else {
            ""
        }
    );
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let (Ok(location), Ok(cookie)) = (
        HeaderValue::from_str(url.as_str()),
        HeaderValue::from_str(&cookie),
    ) {
        headers.insert(header::LOCATION, location);
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
}

#[derive(Debug, Deserialize)]
struct CallbackQuery {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TokenAnswer {
    id_token: String,
}

/// The pending login the browser's cookie holds.
fn pending(headers: &HeaderMap) -> Option<Pending> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .and_then(|(_, value)| B64.decode(value).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
}

/// `GET /login/oidc/callback`: the provider's answer.
async fn callback(
    State(login): State<OidcLogin>,
    Query(query): Query<CallbackQuery>,
    headers: HeaderMap,
    session: Session,
) -> Response {
    if let Some(error) = query.error {
        return refused(
            StatusCode::UNAUTHORIZED,
            &format!("the identity provider said `{error}`"),
        );
    }
    let Some(pending) = pending(&headers) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "no login was started from this browser (or it took longer than ten minutes)",
        );
    };
    let (Some(code), Some(state)) = (query.code, query.state) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "the identity provider sent no code",
        );
    };
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        state.as_bytes(),
        pending.state.as_bytes(),
    )) {
        return refused(
            StatusCode::BAD_REQUEST,
            "the answer is not for the login this browser started (state)",
        );
    }
    match finish(&login, &pending, &code).await {
        Ok(person) => match session::log_in(&session, &person.username).await {
            Ok(_) => {
                tracing::info!(username = %person.username, role = %person.role,
                    system = %pending.system, "UI login through a member's identity provider");
                moved_on(&pending.next)
            }
            Err(e) => refused(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        },
        Err(why) => {
            tracing::info!(system = %pending.system, %why, "a login through a member's identity provider was refused");
            refused(StatusCode::UNAUTHORIZED, &why)
        }
    }
}

/// The page that takes the browser on to `next` from the hub's own origin,
/// clearing the pending login's cookie.
fn moved_on(next: &str) -> Response {
    let next = app::api::safe_next(Some(next));
    let attr = next.replace('&', "&amp;").replace('"', "&quot;");
    let mut response = Html(format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"0;url={attr}\"><title>Logged in — Wall Street</title></head>\
         <body><p data-testid=\"oidc-logged-in\">Logged in. <a href=\"{attr}\">Continue</a></p></body></html>"
    ))
    .into_response();
    if let Ok(clear) = HeaderValue::from_str(&format!(
        "{COOKIE}=; Path={}; Max-Age=0; HttpOnly; SameSite=Lax",
        PREFIX.trim_end_matches('/')
    )) {
        response.headers_mut().insert(header::SET_COOKIE, clear);
    }
    response
}

/// The code exchanged, the ID token verified, the person made.
async fn finish(
    login: &OidcLogin,
    pending: &Pending,
    code: &str,
) -> Result<super::people::Person, String> {
    let (issuer, ui) = login
        .login_of(&pending.system)
        .ok_or("that member no longer offers a login")?;
    let token_endpoint = login
        .identity
        .keys()
        .token_endpoint(&issuer)
        .ok_or("the member's identity provider did not say where its token endpoint is")?;
    let answer = login
        .http
        .post(&token_endpoint)
        .timeout(PROVIDER_TIMEOUT)
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", pending.redirect_uri.as_str()),
            ("client_id", ui.client_id.as_str()),
            ("code_verifier", pending.verifier.as_str()),
        ])
        .send()
        .await
        .map_err(|e| format!("the identity provider's token endpoint: {e}"))?;
    if !answer.status().is_success() {
        return Err(format!(
            "the identity provider refused the code (HTTP {})",
            answer.status().as_u16()
        ));
    }
    let body =
        crate::net::egress::read_capped(http::Response::from(answer).into_body(), MAX_TOKEN_ANSWER)
            .await
            .map_err(|e| format!("reading the token answer: {e}"))?;
    let tokens: TokenAnswer = serde_json::from_slice(&body)
        .map_err(|_| "the token answer holds no ID token".to_string())?;
    let claims = verify_id_token(login, &issuer, &ui, &tokens.id_token, &pending.nonce).await?;
    let role = match claims.get(&ui.role_claim) {
        None | Some(serde_json::Value::Null) => Role::Viewer,
        Some(serde_json::Value::String(name)) => match Role::parse(name) {
            Some(Role::Admin) => {
                return Err(format!(
                "{}'s identity provider may make viewers, operators and approvers, never an admin",
                pending.system
            ))
            }
            Some(role) => role,
            None => {
                return Err(format!(
                    "the claim `{}` names no role (`{}`)",
                    ui.role_claim,
                    exchange::text::clip(name, 32)
                ))
            }
        },
        Some(_) => return Err(format!("the claim `{}` is not a role name", ui.role_claim)),
    };
    let who = claims
        .get("preferred_username")
        .and_then(|v| v.as_str())
        .filter(|n| super::users::valid_username(&format!("{n}@{}", pending.system)))
        .or_else(|| claims.get("sub").and_then(|v| v.as_str()))
        .ok_or("the ID token names nobody (no `sub`)")?;
    let username = format!("{who}@{}", pending.system);
    if !super::users::valid_username(&username) {
        return Err("the ID token's `sub` is not a name this hub can use".into());
    }
    login
        .people
        .from_identity_provider(&username, role, &pending.system)
        .await
        .map_err(|e| e.to_string())
}

/// The ID token's claims, once its signature, issuer, audience, expiry
/// and nonce check out.
async fn verify_id_token(
    login: &OidcLogin,
    issuer: &str,
    ui: &UiLogin,
    token: &str,
    nonce: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let peek = Peek::of(token).ok_or("the ID token is not a signed JWT")?;
    if peek.issuer != issuer {
        return Err("the ID token is from another issuer".into());
    }
    let alg: Algorithm = match peek.alg.parse() {
        Ok(Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512) | Err(_) => {
            return Err("the ID token's alg is not accepted".into())
        }
        Ok(alg) => alg,
    };
    login
        .identity
        .keys()
        .ensure(issuer, peek.kid.as_deref())
        .await;
    let set = login
        .identity
        .keys()
        .of(issuer)
        .ok_or("the identity provider's keys could not be read")?;
    let key = set
        .key(peek.kid.as_deref())
        .ok_or("the identity provider's keys do not include the ID token's key")?;
    if !key.algorithms.contains(&alg) {
        return Err("the ID token's alg does not fit its key".into());
    }
    let mut validation = Validation::new(alg);
    validation.algorithms = vec![alg];
    validation.leeway = crate::identity::token::CLOCK_SKEW_SECONDS;
    validation.set_issuer(&[issuer]);
    validation.set_audience(&[ui.client_id.as_str()]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let claims = jsonwebtoken::decode::<serde_json::Map<String, serde_json::Value>>(
        token,
        &key.decoding,
        &validation,
    )
    .map_err(|e| format!("the ID token does not verify: {e}"))?
    .claims;
    if claims.get("nonce").and_then(|n| n.as_str()) != Some(nonce) {
        return Err("the ID token is not for the login this browser started (nonce)".into());
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pending_login_round_trips_through_its_cookie_only() {
        let p = Pending {
            system: "buyercorp".into(),
            state: "s".into(),
            nonce: "n".into(),
            verifier: "v".into(),
            next: "/inbox".into(),
            redirect_uri: "http://hub/login/oidc/callback".into(),
        };
        let value = B64.encode(serde_json::to_vec(&p).expect("json"));
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("ws_session=x; {COOKIE}={value}")).expect("header"),
        );
        let back = pending(&headers).expect("read back");
        assert_eq!(back.state, "s");
        assert_eq!(back.next, "/inbox");
        headers.insert(header::COOKIE, HeaderValue::from_static("ws_oidc=garbage"));
        assert!(pending(&headers).is_none());
    }

    #[test]
    fn the_page_after_a_login_stays_on_the_hub() {
        for (next, expected) in [
            ("/inbox", "url=/inbox"),
            ("//evil.example", "url=/\""),
            ("https://evil.example", "url=/\""),
        ] {
            let response = moved_on(next);
            let cookie = response
                .headers()
                .get(header::SET_COOKIE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            assert!(cookie.contains("Max-Age=0"), "{cookie}");
            let body =
                futures::executor::block_on(axum::body::to_bytes(response.into_body(), 1 << 16))
                    .expect("body");
            let text = String::from_utf8_lossy(&body);
            assert!(text.contains(expected), "{next}: {text}");
        }
    }
}
