//! Why a cross-system call did not connect.
//!
//! DESIGN.md §1: every failed cross-system call collapses into one labelled
//! result, `not_connected`, carrying exactly one of nine reason codes. The
//! codes live in one enum so that no caller can invent a tenth as a string.

use serde::{Deserialize, Serialize};

/// The nine reasons a call can end `not_connected` (DESIGN.md §2).
///
/// Defined once, here: the hub produces the codes, peers read them and the
/// canvas draws them (`app::dto` re-exports this enum), so no two can
/// disagree on a spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReasonCode {
    /// The caller's bearer token is missing or wrong, or the caller is unknown.
    AuthRejected,
    /// The caller's source address is not in its IP allowlist.
    IpNotAllowed,
    /// No connection rule lets this consumer use this capability of this provider.
    NotPermitted,
    /// The provider is not in the registry (or a port answered as someone else).
    UnknownPeer,
    /// The provider could not be reached at all (refused, reset, DNS).
    PeerUnreachable,
    /// The provider did not answer before the deadline.
    Timeout,
    /// The caller spoke an A2A version the hub does not support.
    VersionUnsupported,
    /// The provider answered, but the answer broke the capability's contract.
    SchemaInvalid,
    /// The provider answered with an error.
    PeerError,
}

impl ReasonCode {
    /// Every code, in DESIGN.md order: handy for tests and documentation.
    pub const ALL: [ReasonCode; 9] = [
        ReasonCode::AuthRejected,
        ReasonCode::IpNotAllowed,
        ReasonCode::NotPermitted,
        ReasonCode::UnknownPeer,
        ReasonCode::PeerUnreachable,
        ReasonCode::Timeout,
        ReasonCode::VersionUnsupported,
        ReasonCode::SchemaInvalid,
        ReasonCode::PeerError,
    ];

    /// The wire spelling, e.g. `PEER_UNREACHABLE`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::AuthRejected => "AUTH_REJECTED",
            ReasonCode::IpNotAllowed => "IP_NOT_ALLOWED",
            ReasonCode::NotPermitted => "NOT_PERMITTED",
            ReasonCode::UnknownPeer => "UNKNOWN_PEER",
            ReasonCode::PeerUnreachable => "PEER_UNREACHABLE",
            ReasonCode::Timeout => "TIMEOUT",
            ReasonCode::VersionUnsupported => "VERSION_UNSUPPORTED",
            ReasonCode::SchemaInvalid => "SCHEMA_INVALID",
            ReasonCode::PeerError => "PEER_ERROR",
        }
    }

    /// The HTTP status the gateway answers with, so plain HTTP tooling sees
    /// the class of failure too. The JSON body stays the contract.
    pub fn http_status(self) -> u16 {
        match self {
            ReasonCode::AuthRejected => 401,
            ReasonCode::IpNotAllowed | ReasonCode::NotPermitted => 403,
            ReasonCode::UnknownPeer => 404,
            ReasonCode::VersionUnsupported => 400,
            ReasonCode::PeerUnreachable | ReasonCode::SchemaInvalid | ReasonCode::PeerError => 502,
            ReasonCode::Timeout => 504,
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The one failure result of a cross-system call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("not_connected: {reason} ({detail})")]
pub struct NotConnected {
    /// Why.
    pub reason: ReasonCode,
    /// Human-readable detail for operators. Never carries a token or payload.
    pub detail: String,
    /// When the refusal ends by itself, in whole seconds from now: a call
    /// over a rate limit or a daily quota may be sent again after it.
    /// `None` for every other failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

impl NotConnected {
    /// Builds a failure with an operator-facing detail.
    pub fn new(reason: ReasonCode, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
            retry_after: None,
        }
    }

    /// The same failure, to be retried after `seconds`.
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
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
