//! Why a cross-system call did not connect.
//!
//! DESIGN.md §1: every failed cross-system call collapses into one labelled
//! result, `not_connected`, carrying exactly one of nine reason codes. The
//! codes live in one enum so that no caller can invent a tenth as a string.

use serde::{Deserialize, Serialize};

/// The nine reasons a call can end `not_connected` (DESIGN.md §2).
///
/// Defined once in `app::dto` (the browser draws these codes too, and the
/// wire spelling must have a single source) and re-exported here so server
/// code keeps naming it `reason::ReasonCode`.
pub use app::dto::ReasonCode;

/// The one failure result of a cross-system call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("not_connected: {reason} ({detail})")]
pub struct NotConnected {
    /// Why.
    pub reason: ReasonCode,
    /// Human-readable detail for operators. Never carries a token or payload.
    pub detail: String,
}

impl NotConnected {
    /// Builds a failure with an operator-facing detail.
    pub fn new(reason: ReasonCode, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

/// What the gateway answers a caller: exactly one of two shapes, tagged by
/// `status`, always with the trace id and request id of the envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CallResult {
    /// The provider answered within the contract.
    Connected {
        trace_id: String,
        request_id: String,
        /// True when the answer came from the idempotency store, not a new execution.
        #[serde(default)]
        replayed: bool,
        result: serde_json::Value,
    },
    /// The call failed; `reason` says why.
    NotConnected {
        trace_id: String,
        request_id: String,
        reason: ReasonCode,
        detail: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_spelling_round_trips_for_all_nine() {
        for code in ReasonCode::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            let back: ReasonCode = serde_json::from_str(&json).unwrap();
            assert_eq!(back, code);
        }
    }

    #[test]
    fn not_connected_result_is_tagged() {
        let r = CallResult::NotConnected {
            trace_id: "t".into(),
            request_id: "r".into(),
            reason: ReasonCode::Timeout,
            detail: "deadline 2000ms".into(),
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["status"], "not_connected");
        assert_eq!(v["reason"], "TIMEOUT");
    }
}
