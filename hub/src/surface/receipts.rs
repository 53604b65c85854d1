//! A party's receipts, by id: `GET /receipts/v1/{id}`, and by the request
//! id of the exchange (`GET /receipts/v1?request_id=X`: a provider knows
//! the envelope's request id, not the receipt's).
//!
//! The caller authenticates as for a call (the same auth chain, the same
//! refusals); it then sees only the receipts of exchanges it was the
//! caller or the provider of. Another party's receipt is answered exactly
//! as one that does not exist (404), so its id tells nobody anything.
//!
//! The answer is `{"id", "receipt"}` (the compact JWS as issued), or
//! `{"receipts": [...]}` of those, oldest first.

use axum::extract::{Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::ops::Request as SurfaceRequest;
use super::Surface;
use exchange::audit::KeptReceipt;

/// Where receipts are read.
pub use exchange::receipt::PATH;

/// `GET /receipts/v1?request_id=X`.
#[derive(Debug, Deserialize)]
pub struct ByRequest {
    request_id: String,
}

/// `GET /receipts/v1/{id}`.
pub async fn by_id(
    State(surface): State<Surface>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let party = match party(&surface, &request) {
        Ok(party) => party,
        Err(refused) => return refused,
    };
    match surface.trail.receipt(&id).await {
        Ok(Some(kept)) if shown_to(&kept, &party) => Json(entry(&kept)).into_response(),
        Ok(_) => crate::net::machine::error(
            StatusCode::NOT_FOUND,
            format!("no receipt `{}` of yours", exchange::text::clip(&id, 64)),
        ),
        Err(e) => unavailable(&e),
    }
}

/// `GET /receipts/v1?request_id=X`.
pub async fn by_request(
    State(surface): State<Surface>,
    Query(asked): Query<ByRequest>,
    request: Request,
) -> Response {
    let party = match party(&surface, &request) {
        Ok(party) => party,
        Err(refused) => return refused,
    };
    match surface.trail.receipts_of_request(&asked.request_id).await {
        Ok(kept) => {
            let receipts: Vec<_> = kept
                .iter()
                .filter(|k| shown_to(k, &party))
                .map(entry)
                .collect();
            Json(json!({ "receipts": receipts })).into_response()
        }
        Err(e) => unavailable(&e),
    }
}

/// The system the request's credential names, once the auth chain has
/// passed it; else the refusal, with its reason code.
// The error is the finished answer of a request that ends here: boxing it
// would only move it.
#[allow(clippy::result_large_err)]
fn party(surface: &Surface, request: &Request) -> Result<String, Response> {
    match SurfaceRequest::of(String::new(), request).authenticate(surface) {
        Ok((caller, _)) if !caller.is_empty() => Ok(caller),
        Ok(_) => Err(crate::net::machine::error(
            StatusCode::UNAUTHORIZED,
            "a receipt is shown to a party of its exchange: send your bearer token",
        )),
        Err(nc) => {
            let status =
                StatusCode::from_u16(nc.reason.http_status()).unwrap_or(StatusCode::UNAUTHORIZED);
            Err(crate::net::machine::error(
                status,
                format!("{}: {}", nc.reason.as_str(), nc.detail),
            ))
        }
    }
}

fn shown_to(kept: &KeptReceipt, party: &str) -> bool {
    kept.caller == party || kept.provider == party
}

fn entry(kept: &KeptReceipt) -> serde_json::Value {
    json!({"id": kept.id, "receipt": kept.jws})
}

fn unavailable(e: &exchange::audit::AuditError) -> Response {
    tracing::warn!(error = %e, "could not read receipts");
    crate::net::machine::error(
        StatusCode::SERVICE_UNAVAILABLE,
        "the hub's trail cannot be read now; try again",
    )
}
