//! What a refusal looks like on the A2A surface (DESIGN.md §2, "reason
//! code"; A2A v1.0 §9.5 and §11.6, error details).
//!
//! Two kinds of error leave the surface, and both carry one
//! `google.rpc.ErrorInfo` in the error's details, with the envelope's
//! trace id and request id in its `metadata`:
//!
//! * a **refused or failed call**: one of the nine reason codes, the
//!   `ErrorInfo.reason`, in domain [`EXCHANGE_DOMAIN`]. Every one of them
//!   left an audit record. The JSON-RPC code is A2A's own where A2A has one
//!   (`VERSION_UNSUPPORTED` is `-32009`, `SCHEMA_INVALID` is
//!   `InvalidAgentResponseError` `-32006`, a provider's error `-32603`, a
//!   caller's input the provider refused `-32602`), else one of the
//!   server-defined codes below;
//! * a **protocol error**, a request that never became a call: a body
//!   that is not JSON-RPC, a batch, an unknown method, params of the wrong
//!   shape, a task id the caller does not own. A2A's own code and
//!   `ErrorInfo.reason` (`TASK_NOT_FOUND`, ...), domain
//!   `a2a-protocol.org`, as the A2A SDKs write them. Nothing is forwarded
//!   and nothing is written for these.
//!
//! A call refused over a rate limit or a daily quota (`crate::quotas`) is
//! `NOT_PERMITTED` with `retryAfter` (whole seconds, as a decimal string:
//! `ErrorInfo.metadata` is a map of strings) beside the trace and request
//! id; the HTTP+JSON binding answers it with 429 and `Retry-After`.
//!
//! The same error renders as a JSON-RPC error object (`data` = the details
//! list) or as the HTTP+JSON binding's `google.rpc.Status` body. A caller
//! whose token identifies no system gets HTTP 401 on both bindings, the
//! same answer for every provider path whether the provider exists or not
//! (A2A v1.0 §3.3.2: nothing about a resource before authentication).

use std::collections::HashMap;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use a2a::errordetails::{TypedDetail, PROTOCOL_DOMAIN};
use exchange::envelope::{Envelope, REQUEST_ID_HEADER, TRACEPARENT_HEADER};
use exchange::reason::ReasonCode;

/// The `ErrorInfo.domain` of the nine reason codes.
pub const EXCHANGE_DOMAIN: &str = "wall-street.exchange";

/// The `ErrorInfo.metadata` key of the seconds after which a call refused
/// over a quota may be sent again.
pub const RETRY_AFTER_KEY: &str = "retryAfter";

/// A2A and JSON-RPC error codes the surface answers with.
pub mod code {
    /// Not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, not a JSON-RPC request (or a batch).
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method in the caller's A2A version.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Params of the wrong shape, or an input the provider refused.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The provider failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// No task of this caller has this id.
    pub const TASK_NOT_FOUND: i64 = -32001;
    /// A provider's task that has already ended (relayed).
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    /// Push notifications: not offered by the hub.
    pub const PUSH_NOT_SUPPORTED: i64 = -32003;
    /// An operation the surface does not offer (e.g. subscribing to a
    /// task that has already ended).
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    /// A part whose media type no skill accepts.
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    /// The provider's answer broke the capability's contract.
    pub const INVALID_AGENT_RESPONSE: i64 = -32006;
    /// An A2A version the hub does not speak.
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
    /// Server-defined (JSON-RPC's -32000..-32099): the caller is not
    /// authenticated.
    pub const AUTH_REJECTED: i64 = -32010;
    /// Server-defined: the caller's address is not in its allowlist.
    pub const IP_NOT_ALLOWED: i64 = -32011;
    /// Server-defined: no rule lets the caller use this capability.
    pub const NOT_PERMITTED: i64 = -32012;
    /// Server-defined: no such provider.
    pub const UNKNOWN_PEER: i64 = -32013;
    /// Server-defined: the provider cannot be reached.
    pub const PEER_UNREACHABLE: i64 = -32014;
    /// Server-defined: the provider did not answer in time.
    pub const TIMEOUT: i64 = -32015;
}

/// One `google.rpc.ErrorInfo` of an error.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorInfo {
    /// The reason: a reason code, or A2A's name of its own error.
    pub reason: String,
    /// [`EXCHANGE_DOMAIN`] or A2A's.
    pub domain: &'static str,
    /// The trace and request id, and `retryAfter` where it applies.
    pub metadata: HashMap<String, String>,
}

/// One error of the surface.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceError {
    /// The JSON-RPC code.
    pub code: i64,
    /// What went wrong, for the caller (no token, no payload).
    pub message: String,
    /// The reason code, for a refused or failed call.
    pub reason: Option<ReasonCode>,
    /// The HTTP status of the HTTP+JSON binding (and of JSON-RPC for 401).
    pub http: StatusCode,
    /// Whole seconds until a call refused over a quota may be sent again.
    pub retry_after: Option<u64>,
}

impl SurfaceError {
    /// A refused or failed call. `status` is what the pipeline chose: a
    /// 4xx `PEER_ERROR` is the caller's input refused (invalid params).
    pub fn call(reason: ReasonCode, detail: String, status: StatusCode) -> Self {
        let code = match reason {
            ReasonCode::AuthRejected => code::AUTH_REJECTED,
            ReasonCode::IpNotAllowed => code::IP_NOT_ALLOWED,
            ReasonCode::NotPermitted => code::NOT_PERMITTED,
            ReasonCode::UnknownPeer => code::UNKNOWN_PEER,
            ReasonCode::PeerUnreachable => code::PEER_UNREACHABLE,
            ReasonCode::Timeout => code::TIMEOUT,
            ReasonCode::VersionUnsupported => code::VERSION_NOT_SUPPORTED,
            ReasonCode::SchemaInvalid => code::INVALID_AGENT_RESPONSE,
            ReasonCode::PeerError if status == StatusCode::UNSUPPORTED_MEDIA_TYPE => {
                code::CONTENT_TYPE_NOT_SUPPORTED
            }
            ReasonCode::PeerError if status.is_client_error() => code::INVALID_PARAMS,
            ReasonCode::PeerError => code::INTERNAL_ERROR,
        };
        let http = if status.is_client_error() || status.is_server_error() {
            status
        } else {
            StatusCode::from_u16(reason.http_status()).unwrap_or(StatusCode::BAD_GATEWAY)
        };
        Self {
            code,
            message: detail,
            reason: Some(reason),
            http,
            retry_after: None,
        }
    }

    /// A protocol error with A2A's own code.
    pub fn protocol(code: i64, message: impl Into<String>) -> Self {
        let http = match code {
            code::TASK_NOT_FOUND => StatusCode::NOT_FOUND,
            code::UNSUPPORTED_OPERATION | code::PUSH_NOT_SUPPORTED => StatusCode::BAD_REQUEST,
            code::CONTENT_TYPE_NOT_SUPPORTED => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            code::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        Self {
            code,
            message: message.into(),
            reason: None,
            http,
            retry_after: None,
        }
    }

    /// The same error answered with another HTTP status (a body too large,
    /// a wrong content type).
    pub fn with_http(mut self, http: StatusCode) -> Self {
        self.http = http;
        self
    }

    /// The same error, to be retried after `seconds` (a call refused over
    /// a quota); `None` leaves it as it is.
    pub fn with_retry_after(mut self, seconds: Option<u64>) -> Self {
        if seconds.is_some() {
            self.retry_after = seconds;
        }
        self
    }

    /// The `google.rpc.ErrorInfo`s of this error, with the trace and
    /// request id: the reason code's (domain [`EXCHANGE_DOMAIN`]) first for
    /// a call, then A2A's own (domain `a2a-protocol.org`) whenever the code
    /// is one of A2A's, so an A2A client finds the reason the spec gives
    /// its code too. Each binding writes them its way (JSON here, protobuf
    /// in the gRPC binding).
    pub fn error_infos(&self, envelope: &Envelope) -> Vec<ErrorInfo> {
        let mut metadata = HashMap::from([
            ("traceId".to_string(), envelope.trace.trace_id.clone()),
            ("requestId".to_string(), envelope.request_id.clone()),
        ]);
        if let Some(seconds) = self.retry_after {
            metadata.insert(RETRY_AFTER_KEY.to_string(), seconds.to_string());
        }
        let info = |reason: &str, domain: &'static str| ErrorInfo {
            reason: reason.to_string(),
            domain,
            metadata: metadata.clone(),
        };
        let mut infos = Vec::new();
        if let Some(r) = self.reason {
            infos.push(info(r.as_str(), EXCHANGE_DOMAIN));
        }
        if let Some(a2a) = protocol_reason(self.code) {
            infos.push(info(a2a, PROTOCOL_DOMAIN));
        }
        infos
    }

    /// The details as JSON (`@type` `google.rpc.ErrorInfo`).
    fn details(&self, envelope: &Envelope) -> Vec<Value> {
        self.error_infos(envelope)
            .into_iter()
            .map(|i| {
                serde_json::to_value(TypedDetail::error_info(
                    &i.reason,
                    i.domain,
                    Some(i.metadata),
                ))
                .unwrap_or(Value::Null)
            })
            .collect()
    }

    /// The JSON-RPC error object.
    pub fn to_jsonrpc(&self, envelope: &Envelope) -> Value {
        json!({
            "code": self.code,
            "message": self.message,
            "data": self.details(envelope),
        })
    }

    /// The HTTP+JSON binding's body (`google.rpc.Status` in an `error`).
    pub fn to_rest(&self, envelope: &Envelope) -> Value {
        json!({
            "error": {
                "code": self.http.as_u16(),
                "status": grpc_status(self.http),
                "message": self.message,
                "details": self.details(envelope),
            }
        })
    }
}

/// An error as the HTTP+JSON binding answers it (and discovery, whose
/// documents are plain HTTP): the `google.rpc.Status` body, the envelope
/// echoed, `WWW-Authenticate` on 401, `Retry-After` on a refusal that
/// ends by itself.
pub fn rest_error(envelope: &Envelope, e: SurfaceError) -> Response {
    let mut response = (e.http, Json(e.to_rest(envelope))).into_response();
    echo_envelope(response.headers_mut(), envelope);
    if e.http == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    if let Some(seconds) = e.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// The envelope echoed on an answer: the trace with the hub's span, the
/// request id.
pub fn echo_envelope(headers: &mut HeaderMap, envelope: &Envelope) {
    if let Ok(v) = HeaderValue::from_str(&envelope.trace.child().to_header()) {
        headers.insert(TRACEPARENT_HEADER, v);
    }
    if let Ok(v) = HeaderValue::from_str(&envelope.request_id) {
        headers.insert(REQUEST_ID_HEADER, v);
    }
}

/// A2A's `ErrorInfo.reason` for its own codes (A2A v1.0 §11.6).
fn protocol_reason(code: i64) -> Option<&'static str> {
    Some(match code {
        code::PARSE_ERROR => "PARSE_ERROR",
        code::INVALID_REQUEST => "INVALID_REQUEST",
        code::METHOD_NOT_FOUND => "METHOD_NOT_FOUND",
        code::INVALID_PARAMS => "INVALID_PARAMS",
        code::INTERNAL_ERROR => "INTERNAL",
        code::TASK_NOT_FOUND => "TASK_NOT_FOUND",
        code::TASK_NOT_CANCELABLE => "TASK_NOT_CANCELABLE",
        code::PUSH_NOT_SUPPORTED => "PUSH_NOTIFICATION_NOT_SUPPORTED",
        code::UNSUPPORTED_OPERATION => "UNSUPPORTED_OPERATION",
        code::CONTENT_TYPE_NOT_SUPPORTED => "CONTENT_TYPE_NOT_SUPPORTED",
        code::INVALID_AGENT_RESPONSE => "INVALID_AGENT_RESPONSE",
        code::VERSION_NOT_SUPPORTED => "VERSION_NOT_SUPPORTED",
        _ => return None,
    })
}

/// The `google.rpc.Code` name of an HTTP status, for the REST body.
fn grpc_status(http: StatusCode) -> &'static str {
    match http.as_u16() {
        400 | 413 | 415 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        501 => "UNIMPLEMENTED",
        502 | 503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_code_becomes_an_error_with_its_error_info() {
        let envelope = Envelope::new_root();
        let mut codes = std::collections::HashSet::new();
        for reason in ReasonCode::ALL {
            let status = StatusCode::from_u16(reason.http_status()).expect("status");
            let e = SurfaceError::call(reason, "why".into(), status);
            codes.insert(e.code);
            let rpc = e.to_jsonrpc(&envelope);
            // A2A's own ErrorInfo follows where the code is A2A's.
            let a2a_code = matches!(
                reason,
                ReasonCode::VersionUnsupported | ReasonCode::SchemaInvalid | ReasonCode::PeerError
            );
            let details = rpc["data"].as_array().map(Vec::len);
            assert_eq!(details, Some(1 + usize::from(a2a_code)), "{rpc}");
            if a2a_code {
                assert_eq!(rpc["data"][1]["domain"], "a2a-protocol.org");
            }
            assert_eq!(rpc["data"][0]["@type"], a2a::errordetails::ERROR_INFO_TYPE);
            assert_eq!(rpc["data"][0]["reason"], reason.as_str());
            assert_eq!(rpc["data"][0]["domain"], EXCHANGE_DOMAIN);
            assert_eq!(
                rpc["data"][0]["metadata"]["traceId"],
                envelope.trace.trace_id
            );
            let rest = e.to_rest(&envelope);
            assert_eq!(rest["error"]["code"], reason.http_status());
            assert_eq!(rest["error"]["details"][0]["reason"], reason.as_str());
        }
        assert_eq!(codes.len(), 9, "one JSON-RPC code per reason code");
        // A caller's input the provider refused is invalid params.
        let bad_input =
            SurfaceError::call(ReasonCode::PeerError, "x".into(), StatusCode::BAD_REQUEST);
        assert_eq!(bad_input.code, code::INVALID_PARAMS);
    }

    #[test]
    fn a_refusal_over_a_quota_carries_retry_after() {
        let envelope = Envelope::new_root();
        let e = SurfaceError::call(
            ReasonCode::NotPermitted,
            "over the rate limit".into(),
            StatusCode::TOO_MANY_REQUESTS,
        )
        .with_retry_after(Some(12));
        assert_eq!(
            (e.code, e.http),
            (code::NOT_PERMITTED, StatusCode::TOO_MANY_REQUESTS)
        );
        let rpc = e.to_jsonrpc(&envelope);
        assert_eq!(rpc["data"][0]["metadata"][RETRY_AFTER_KEY], "12", "{rpc}");
        let rest = e.to_rest(&envelope);
        assert_eq!(rest["error"]["status"], "RESOURCE_EXHAUSTED");
        let response = rest_error(&envelope, e);
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            response
                .headers()
                .get(header::RETRY_AFTER)
                .map(|v| v.as_bytes()),
            Some(&b"12"[..])
        );
        // Any other refusal has no retryAfter.
        let plain = SurfaceError::call(
            ReasonCode::NotPermitted,
            "no rule".into(),
            StatusCode::FORBIDDEN,
        );
        let rpc = plain.to_jsonrpc(&envelope);
        assert!(rpc["data"][0]["metadata"].get(RETRY_AFTER_KEY).is_none());
    }

    #[test]
    fn protocol_errors_use_a2a_reasons() {
        let e = SurfaceError::protocol(code::TASK_NOT_FOUND, "no such task");
        let rpc = e.to_jsonrpc(&Envelope::new_root());
        assert_eq!(rpc["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(rpc["data"][0]["domain"], "a2a-protocol.org");
        assert_eq!(e.http, StatusCode::NOT_FOUND);
    }
}
