//! The one error shape of every `/api` route, and extractors that keep it;
//! and how a route of the shared route table gets its method.
//!
//! A browser gets `app::dto::ApiError` for every refusal, with a message a
//! person can act on and a reason code when one of the nine applies. axum's
//! own rejections (bad JSON, bad path) answer plain text, so the extractors
//! here wrap them into the same shape.
//!
//! Every `/api` route is one entry of `app::routes::ApiRoute`, whoever
//! serves it (the BFF, or the login routes of `ui_auth`): its method comes
//! from the table through [`method_filter`].

use app::dto::{ApiError, ReasonCode};
use app::routes::Verb;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::MethodFilter;
use axum::Json;
use serde::de::DeserializeOwned;

/// A refused `/api` request: status + `ApiError` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiFailure {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body.
    pub body: ApiError,
}

impl ApiFailure {
    /// A failure without a reason code.
    pub fn new(status: StatusCode, error: impl Into<String>) -> Self {
        Self {
            status,
            body: ApiError {
                error: error.into(),
                reason: None,
            },
        }
    }

    /// A failure carrying one of the nine reason codes.
    pub fn with_reason(status: StatusCode, reason: ReasonCode, error: impl Into<String>) -> Self {
        Self {
            status,
            body: ApiError {
                error: error.into(),
                reason: Some(reason),
            },
        }
    }

    /// 400.
    pub fn bad_request(error: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, error)
    }

    /// 404.
    pub fn not_found(error: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, error)
    }

    /// 500, for the hub's own store failing: the detail goes to the log,
    /// the browser gets a fixed sentence (SQL errors are not for it).
    pub fn internal(context: &str, error: &dyn std::fmt::Display) -> Self {
        tracing::error!(%error, "{context}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("{context}: the hub's store failed (see the hub log)"),
        )
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// A JSON body whose rejection is an [`ApiFailure`].
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiFailure;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Self(v)),
            Err(rejection) => Err(json_rejection(&rejection)),
        }
    }
}

fn json_rejection(rejection: &JsonRejection) -> ApiFailure {
    ApiFailure::new(
        rejection.status(),
        format!(
            "the request body is not what this route takes: {}",
            rejection.body_text()
        ),
    )
}

/// A path parameter whose rejection is an [`ApiFailure`].
#[derive(Debug, Clone)]
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiFailure;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Self(p.0))
            .map_err(|r: PathRejection| ApiFailure::new(r.status(), r.body_text()))
    }
}

/// A query string whose rejection is an [`ApiFailure`].
#[derive(Debug, Clone)]
pub struct ApiQuery<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiFailure;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|q| Self(q.0))
            .map_err(|r: QueryRejection| ApiFailure::new(r.status(), r.body_text()))
    }
}

/// axum's filter for a table [`Verb`].
pub fn method_filter(verb: Verb) -> MethodFilter {
    match verb {
        Verb::Get => MethodFilter::GET,
        Verb::Post => MethodFilter::POST,
        Verb::Put => MethodFilter::PUT,
        Verb::Delete => MethodFilter::DELETE,
    }
}
