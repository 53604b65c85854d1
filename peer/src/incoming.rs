//! What an incoming A2A request's headers say, as the peer reads them:
//! the envelope (version, request id, `traceparent`) and the calling
//! system (`X-Caller-System`, set by the hub that authenticated it).
//! Both a message-answered call ([`crate::executor`]) and a task skill's
//! call ([`crate::tasks`]) read them here, the same way.

use a2a_server::ServiceParams;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use exchange::envelope;

/// Copies the envelope headers out of the service params, so the shared
/// [`Envelope::from_headers`](envelope::Envelope::from_headers) parses them exactly as the hub does.
pub(crate) fn envelope_headers(params: &ServiceParams) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for name in [
        envelope::VERSION_HEADER,
        envelope::LEGACY_VERSION_HEADER,
        envelope::REQUEST_ID_HEADER,
        envelope::TRACEPARENT_HEADER,
    ] {
        let value = params
            .get(name)
            .and_then(|v| v.first())
            .and_then(|v| HeaderValue::from_str(v).ok());
        if let Some(v) = value {
            headers.insert(HeaderName::from_static(name), v);
        }
    }
    headers
}

/// The `X-Caller-System` claim (set by the hub), if it looks like a system
/// id; "unknown" otherwise. Only ever used as a label in the trail.
pub(crate) fn caller_of(params: &ServiceParams) -> String {
    envelope::caller_label(
        params
            .get(envelope::CALLER_HEADER)
            .and_then(|v| v.first())
            .map(String::as_str),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use exchange::envelope::Envelope;

    #[test]
    fn envelope_and_caller_come_from_service_params() {
        let mut p = ServiceParams::new();
        p.insert(
            "traceparent".into(),
            vec!["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into()],
        );
        p.insert("x-request-id".into(), vec!["req-1".into()]);
        p.insert("x-caller-system".into(), vec!["buyercorp".into()]);
        let env = Envelope::from_headers(&envelope_headers(&p));
        assert_eq!(env.trace.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(env.request_id, "req-1");
        assert_eq!(caller_of(&p), "buyercorp");
        p.insert("x-caller-system".into(), vec!["Robert'); DROP".into()]);
        assert_eq!(caller_of(&p), "unknown");
        assert_eq!(caller_of(&ServiceParams::new()), "unknown");
    }
}
