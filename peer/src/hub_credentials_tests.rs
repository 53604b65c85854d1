//! The OpenID client against a stand-in token endpoint: what it sends,
//! how long it keeps a token, and what a refusal says (never the secret).

use super::*;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;
use std::sync::Mutex;

const SECRET: &str = "s3cret:with spaces&more";

/// What the stand-in endpoint saw: the Authorization header and the form.
#[derive(Default)]
struct Seen {
    requests: Vec<(String, String)>,
}

/// A token endpoint answering `status` and `answer` (`{n}` in an
/// `access_token` becomes the request's number); returns its URL.
async fn token_endpoint(status: u16, answer: Value) -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s = seen.clone();
    let app = Router::new().route(
        "/token",
        post(move |headers: HeaderMap, body: String| {
            let s = s.clone();
            let mut answer = answer.clone();
            async move {
                let mut seen = s.lock().unwrap();
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                seen.requests.push((auth, body));
                let n = seen.requests.len();
                if let Some(t) = answer["access_token"].as_str() {
                    answer["access_token"] = json!(t.replace("{n}", &n.to_string()));
                }
                (StatusCode::from_u16(status).unwrap(), Json(answer))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });
    (format!("http://{addr}/token"), seen)
}

fn client(token_url: &str, scope: Option<&str>) -> OidcClient {
    OidcClient::with_secret(
        &HubOidcConfig {
            token_url: token_url.into(),
            client_id: "buyercorp".into(),
            client_secret_env: "UNUSED".into(),
            scope: scope.map(str::to_string),
            resource: Some("urn:wall-street:hub".into()),
        },
        Token::new(SECRET),
    )
}

#[tokio::test]
async fn a_token_is_asked_with_client_credentials_and_kept_until_30s_before_it_expires() {
    let (url, seen) = token_endpoint(
        200,
        json!({"access_token": "at-{n}", "token_type": "Bearer", "expires_in": 300}),
    )
    .await;
    let oidc = client(&url, Some("orders.read tickets.classify"));
    assert_eq!(oidc.token().await.unwrap().expose(), "at-1");
    assert_eq!(oidc.token().await.unwrap().expose(), "at-1", "kept");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.requests.len(), 1);
    let (auth, form) = &seen.requests[0];
    // client_secret_basic, id and secret form-encoded first (RFC 6749 §2.3.1).
    let expected = reqwest::Client::new()
        .get("http://x.invalid")
        .basic_auth("buyercorp", Some("s3cret%3Awith+spaces%26more"))
        .build()
        .unwrap();
    assert_eq!(auth, expected.headers()["authorization"].to_str().unwrap());
    assert!(form.contains("grant_type=client_credentials"), "{form}");
    assert!(
        form.contains("scope=orders.read+tickets.classify"),
        "{form}"
    );
    assert!(form.contains("resource=urn%3Awall-street%3Ahub"), "{form}");
    assert!(
        !form.contains("s3cret"),
        "the secret is not in the form: {form}"
    );
}

#[tokio::test]
async fn a_token_within_30s_of_expiring_is_fetched_again() {
    let (url, seen) = token_endpoint(
        200,
        json!({"access_token": "at-{n}", "token_type": "bearer", "expires_in": 30}),
    )
    .await;
    let oidc = client(&url, None);
    assert_eq!(oidc.token().await.unwrap().expose(), "at-1");
    assert_eq!(oidc.token().await.unwrap().expose(), "at-2");
    assert_eq!(seen.lock().unwrap().requests.len(), 2);
    assert!(!seen.lock().unwrap().requests[0].1.contains("scope="));
}

#[tokio::test]
async fn a_cached_token_expires_by_the_clock() {
    let (url, _seen) =
        token_endpoint(200, json!({"access_token": "at-{n}", "expires_in": 3600})).await;
    let oidc = client(&url, None);
    assert_eq!(oidc.token().await.unwrap().expose(), "at-1");
    // As if the hour had passed.
    oidc.cached.lock().await.as_mut().unwrap().until = Instant::now();
    assert_eq!(oidc.token().await.unwrap().expose(), "at-2");
}

#[tokio::test]
async fn a_refusal_names_the_endpoint_and_status_never_the_secret() {
    let (url, _) = token_endpoint(
        401,
        json!({"error": "invalid_client", "error_description": "no such client"}),
    )
    .await;
    let e = client(&url, None).token().await.unwrap_err().to_string();
    assert_eq!(
        e,
        format!("no access token for the hub: the token endpoint {url} answered HTTP 401 (invalid_client)")
    );
    assert!(!e.contains("s3cret"), "{e}");

    let (url, _) = token_endpoint(200, json!({"token_type": "Bearer"})).await;
    let e = client(&url, None).token().await.unwrap_err().to_string();
    assert!(
        e.ends_with("answered HTTP 200 without an access_token"),
        "{e}"
    );

    let (url, _) = token_endpoint(200, json!({"access_token": "x", "token_type": "mac"})).await;
    let e = client(&url, None).token().await.unwrap_err().to_string();
    assert!(e.contains("token_type other than Bearer"), "{e}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/token", listener.local_addr().unwrap());
    drop(listener);
    let e = client(&url, None).token().await.unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "no access token for the hub: the token endpoint {url} cannot be reached"
        )),
        "{e}"
    );
}

#[tokio::test]
async fn a_call_without_a_token_is_not_connected_and_never_sent() {
    let (url, _) = token_endpoint(401, json!({"error": "invalid_client"})).await;
    let call = crate::client::HubCall {
        hub_url: "http://127.0.0.1:9".into(),
        bearer: Bearer::Oidc(Arc::new(client(&url, None))),
        caller: "buyercorp".into(),
        provider: "vendorcorp".into(),
        capability: "orders.query".into(),
        input: json!({}),
        request_id: "r-1".into(),
        traceparent: exchange::envelope::TraceParent::new_root(),
        timeout: Duration::from_secs(5),
        context_id: None,
    };
    let answer = crate::client::call_via_hub(&crate::client::http_client(), &call).await;
    assert_eq!(answer.http_status, None);
    match &answer.result {
        exchange::reason::CallResult::NotConnected { reason, detail, .. } => {
            assert_eq!(*reason, exchange::reason::ReasonCode::AuthRejected);
            assert!(detail.contains("answered HTTP 401"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn debug_shows_neither_secret_nor_token() {
    let oidc = client("http://127.0.0.1:9/token", None);
    let shown = format!("{:?}", Bearer::Oidc(Arc::new(oidc)));
    assert!(!shown.contains("s3cret"), "{shown}");
    assert!(shown.contains("buyercorp"), "{shown}");
}

#[test]
fn form_encoding_keeps_unreserved_bytes() {
    assert_eq!(form_encode("abc-XYZ_0.9*"), "abc-XYZ_0.9*");
    assert_eq!(form_encode("a b:c/é"), "a+b%3Ac%2F%C3%A9");
}
