//! The envelope every cross-system call carries (DESIGN.md §2).
//!
//! Three things travel with each call: the A2A protocol version, a request
//! id (which is also a consult's idempotency key), and a W3C `traceparent`
//! whose trace-id stays the same from caller through hub to responder. The
//! span-id changes at every hop; the trace-id never does.

use http::HeaderMap;
use rand::RngCore;

/// The A2A v1 version header.
pub const VERSION_HEADER: &str = "a2a-version";
/// The pre-v1 spelling, still accepted on the way in.
pub const LEGACY_VERSION_HEADER: &str = "x-a2a-version";
/// Request id / idempotency key.
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// W3C trace context.
pub const TRACEPARENT_HEADER: &str = "traceparent";
/// Names the calling system; the auth chain verifies the claim.
pub const CALLER_HEADER: &str = "x-caller-system";

/// The token an `Authorization: Bearer <token>` header presents (the scheme
/// in any case, surrounding blanks ignored); `None` for any other header.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let (scheme, token) = headers
        .get(http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .trim()
        .split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The caller a provider acts for: the hub's `X-Caller-System` claim (the
/// hub authenticated that system) when it is a valid id, else `unknown` —
/// which holds no contract, so reads nothing, and labels the trail safely.
pub fn caller_label(claim: Option<&str>) -> String {
    claim
        .map(str::trim)
        .filter(|v| crate::id::is_valid(v))
        .unwrap_or("unknown")
        .to_string()
}

/// The protocol versions this build speaks: v1.0, and v0.3 through the
/// hub's version bridge.
pub const SUPPORTED_VERSIONS: &[&str] = &["1.0", "0.3"];
/// The version sent on every outgoing call.
pub const CURRENT_VERSION: &str = "1.0";
/// What a call that declares no version speaks (A2A v1.0 §3.6.1: a missing
/// `A2A-Version` header means 0.3).
pub const UNDECLARED_VERSION: &str = "0.3";

/// An A2A protocol version this build speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum A2aVersion {
    /// A2A v0.3: `message/send`, `kind` discriminators, kebab-case states.
    V0_3,
    /// A2A v1.0: `SendMessage`, `ROLE_*` and `TASK_STATE_*` enums.
    V1_0,
}

impl A2aVersion {
    /// Reads a declared version: `1`, `1.N`, `1.N.N` are v1.0; `0.3` and
    /// `0.3.N` are v0.3 (surrounding whitespace ignored, every component a
    /// decimal number); anything else is not spoken here.
    pub fn parse(declared: &str) -> Option<Self> {
        let mut numbers = Vec::new();
        for piece in declared.trim().split('.') {
            if piece.is_empty() || !piece.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            numbers.push(piece.parse::<u64>().ok()?);
        }
        match numbers.as_slice() {
            [1] | [1, _] | [1, _, _] => Some(Self::V1_0),
            [0, 3] | [0, 3, _] => Some(Self::V0_3),
            _ => None,
        }
    }

    /// The header value that declares this version.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V0_3 => "0.3",
            Self::V1_0 => "1.0",
        }
    }
}

/// A parsed W3C `traceparent` (version 00).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// 32 lowercase hex digits, never all zero.
    pub trace_id: String,
    /// 16 lowercase hex digits, never all zero: the sender's span.
    pub span_id: String,
    /// Trace flags (bit 0: sampled).
    pub flags: u8,
}

impl TraceParent {
    /// Starts a new trace: used when a call arrives without one.
    pub fn new_root() -> Self {
        Self {
            trace_id: random_hex(16),
            span_id: random_hex(8),
            flags: 1,
        }
    }

    /// The same trace, a new span: what a hop forwards to the next one.
    pub fn child(&self) -> Self {
        Self {
            trace_id: self.trace_id.clone(),
            span_id: random_hex(8),
            flags: self.flags,
        }
    }

    /// Parses `00-<trace-id>-<span-id>-<flags>`; `None` if malformed, in
    /// which case W3C says to start a new trace.
    pub fn parse(value: &str) -> Option<Self> {
        let mut parts = value.trim().split('-');
        let version = parts.next()?;
        let trace_id = parts.next()?;
        let span_id = parts.next()?;
        let flags = parts.next()?;
        if parts.next().is_some() || version != "00" {
            return None;
        }
        let is_hex = |s: &str, len: usize| {
            s.len() == len
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        if !is_hex(trace_id, 32) || !is_hex(span_id, 16) || !is_hex(flags, 2) {
            return None;
        }
        if trace_id.bytes().all(|b| b == b'0') || span_id.bytes().all(|b| b == b'0') {
            return None;
        }
        Some(Self {
            trace_id: trace_id.to_string(),
            span_id: span_id.to_string(),
            flags: u8::from_str_radix(flags, 16).ok()?,
        })
    }

    /// The header value.
    pub fn to_header(&self) -> String {
        let mut out = String::with_capacity(8 + self.trace_id.len() + self.span_id.len());
        out.push_str("00-");
        out.push_str(&self.trace_id);
        out.push('-');
        out.push_str(&self.span_id);
        out.push('-');
        push_hex(&mut out, self.flags);
        out
    }
}

/// The envelope of one call, as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// The version the caller declared (`A2A-Version`, else `X-A2A-Version`,
    /// else [`UNDECLARED_VERSION`]: a caller that says nothing speaks 0.3).
    pub version: String,
    /// The caller's request id, or a fresh one if it sent none.
    pub request_id: String,
    /// Whether the caller sent its own request id (a consult is only
    /// idempotent when it did).
    pub request_id_from_caller: bool,
    /// The trace this call belongs to.
    pub trace: TraceParent,
}

impl Envelope {
    /// A fresh envelope for a call that starts here (the hub's own calls).
    pub fn new_root() -> Self {
        Self {
            version: CURRENT_VERSION.to_string(),
            request_id: uuid::Uuid::new_v4().to_string(),
            request_id_from_caller: false,
            trace: TraceParent::new_root(),
        }
    }

    /// Reads the envelope from request headers, filling in what is missing.
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let text = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let version = text(VERSION_HEADER)
            .or_else(|| text(LEGACY_VERSION_HEADER))
            .unwrap_or_else(|| UNDECLARED_VERSION.to_string());
        let caller_request_id = text(REQUEST_ID_HEADER).filter(|id| id.len() <= 128);
        let trace = text(TRACEPARENT_HEADER)
            .and_then(|v| TraceParent::parse(&v))
            .unwrap_or_else(TraceParent::new_root);
        Self {
            version,
            request_id_from_caller: caller_request_id.is_some(),
            request_id: caller_request_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            trace,
        }
    }

    /// The declared version, if this build speaks it.
    pub fn protocol(&self) -> Option<A2aVersion> {
        A2aVersion::parse(&self.version)
    }

    /// Whether this build speaks the declared version.
    pub fn version_supported(&self) -> bool {
        self.protocol().is_some()
    }

    /// The headers to forward to the next hop, which speaks `version`:
    /// same request id, same trace-id, a new span.
    pub fn forward_headers(&self, version: A2aVersion) -> Vec<(&'static str, String)> {
        vec![
            (VERSION_HEADER, version.as_str().to_string()),
            (REQUEST_ID_HEADER, self.request_id.clone()),
            (TRACEPARENT_HEADER, self.trace.child().to_header()),
        ]
    }
}

/// `bytes` (at most 16) random bytes as lowercase hex, never all zero. On
/// every call's path (a trace id, span ids): one fill of the thread's
/// generator and a table lookup per digit, no formatting machinery.
fn random_hex(bytes: usize) -> String {
    let mut buf = [0u8; 16];
    let buf = &mut buf[..bytes.min(16)];
    let mut rng = rand::thread_rng();
    loop {
        rng.fill_bytes(buf);
        if buf.iter().any(|b| *b != 0) {
            break;
        }
    }
    let mut out = String::with_capacity(2 * buf.len());
    for b in buf.iter() {
        push_hex(&mut out, *b);
    }
    out
}

/// Appends `byte` as two lowercase hex digits.
fn push_hex(out: &mut String, byte: u8) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.push(char::from(DIGITS[usize::from(byte >> 4)]));
    out.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn a_bearer_token_is_read_from_its_header_only() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                http::header::AUTHORIZATION,
                HeaderValue::from_str(v).expect("value"),
            );
            h
        };
        assert_eq!(bearer_token(&with("Bearer s3cret")), Some("s3cret"));
        assert_eq!(bearer_token(&with("  bearer   s3cret  ")), Some("s3cret"));
        assert_eq!(bearer_token(&with("Basic dXNlcg==")), None);
        assert_eq!(bearer_token(&with("Bearer")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
        assert_eq!(caller_label(Some(" buyercorp ")), "buyercorp");
        assert_eq!(caller_label(Some("Robert'); DROP")), "unknown");
        assert_eq!(caller_label(None), "unknown");
    }

    #[test]
    fn traceparent_round_trips_and_child_keeps_trace_id() {
        let tp =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(tp.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(
            tp.to_header(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        let child = tp.child();
        assert_eq!(child.trace_id, tp.trace_id);
        assert_ne!(child.span_id, tp.span_id);
    }

    #[test]
    fn malformed_traceparents_are_rejected() {
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        ] {
            assert!(
                TraceParent::parse(bad).is_none(),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn legacy_version_header_is_read_and_unknown_versions_flagged() {
        let mut h = HeaderMap::new();
        h.insert(LEGACY_VERSION_HEADER, HeaderValue::from_static("1.0"));
        assert!(Envelope::from_headers(&h).version_supported());
        h.insert(VERSION_HEADER, HeaderValue::from_static("0.2"));
        let env = Envelope::from_headers(&h);
        assert_eq!(env.version, "0.2", "the v1 header wins over the legacy one");
        assert!(!env.version_supported());
        for (declared, spoken) in [
            ("1.0.2", Some(A2aVersion::V1_0)),
            ("1", Some(A2aVersion::V1_0)),
            ("1.1", Some(A2aVersion::V1_0)),
            ("0.3", Some(A2aVersion::V0_3)),
            ("0.3.0", Some(A2aVersion::V0_3)),
            ("10", None),
            ("1.x", None),
            ("2.0", None),
            // Empty is absent: the legacy header (1.0 here) decides.
            ("", Some(A2aVersion::V1_0)),
        ] {
            h.insert(VERSION_HEADER, HeaderValue::from_static(declared));
            assert_eq!(
                Envelope::from_headers(&h).protocol(),
                spoken,
                "{declared:?}"
            );
        }
    }

    #[test]
    fn a_call_that_declares_no_version_speaks_0_3() {
        let env = Envelope::from_headers(&HeaderMap::new());
        assert_eq!(env.version, "0.3");
        assert_eq!(env.protocol(), Some(A2aVersion::V0_3));
    }

    #[test]
    fn missing_request_id_and_trace_are_generated() {
        let env = Envelope::from_headers(&HeaderMap::new());
        assert!(!env.request_id_from_caller);
        assert!(!env.request_id.is_empty());
        assert_eq!(env.trace.trace_id.len(), 32);
    }
}
