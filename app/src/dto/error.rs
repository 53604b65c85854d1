//! The body of every refused `/api` request: the hub's `api::ApiFailure`
//! writes it, the browser's `api` reads it.

use exchange::reason::ReasonCode;
use serde::{Deserialize, Serialize};

/// The body of every refused `/api` request: what was wrong, and the
/// reason code when one of the nine applies (e.g. `NOT_PERMITTED`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    pub error: String,
    pub reason: Option<ReasonCode>,
}
