use super::*;
use exchange::reason::ReasonCode;
use tonic_types::StatusExt;

#[test]
fn a_refusal_carries_its_reason_code_and_a2as_own_in_its_details() {
    let envelope = Envelope::new_root();
    let refused = SurfaceError::call(
        ReasonCode::NotPermitted,
        "no rule".into(),
        StatusCode::FORBIDDEN,
    );
    let s = status(&envelope, &refused);
    assert_eq!(s.code(), Code::PermissionDenied);
    assert_eq!(s.message(), "no rule");
    let details = s.get_error_details_vec();
    let infos: Vec<_> = details
        .iter()
        .filter_map(|d| match d {
            tonic_types::ErrorDetail::ErrorInfo(i) => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(infos.len(), 1, "{details:?}");
    assert_eq!(infos[0].reason, "NOT_PERMITTED");
    assert_eq!(infos[0].domain, super::super::errors::EXCHANGE_DOMAIN);
    assert_eq!(
        infos[0].metadata.get("traceId"),
        Some(&envelope.trace.trace_id)
    );
    assert!(s.metadata().get(REQUEST_ID_HEADER).is_some());

    // A2A's own error: its code, and A2A's ErrorInfo after the exchange's.
    let malformed = SurfaceError::call(
        ReasonCode::SchemaInvalid,
        "bad answer".into(),
        StatusCode::BAD_GATEWAY,
    );
    let s = status(&envelope, &malformed);
    assert_eq!(s.code(), Code::Internal);
    let reasons: Vec<(String, String)> = s
        .get_error_details_vec()
        .into_iter()
        .filter_map(|d| match d {
            tonic_types::ErrorDetail::ErrorInfo(i) => Some((i.reason, i.domain)),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "SCHEMA_INVALID".to_string(),
                "wall-street.exchange".to_string()
            ),
            (
                "INVALID_AGENT_RESPONSE".to_string(),
                "a2a-protocol.org".to_string()
            ),
        ]
    );
}

#[test]
fn every_failure_has_the_grpc_code_of_its_class() {
    let code_of = |reason| {
        let http = StatusCode::from_u16(ReasonCode::http_status(reason)).expect("status");
        grpc_code(&SurfaceError::call(reason, String::new(), http))
    };
    assert_eq!(code_of(ReasonCode::AuthRejected), Code::Unauthenticated);
    assert_eq!(code_of(ReasonCode::NotPermitted), Code::PermissionDenied);
    assert_eq!(code_of(ReasonCode::UnknownPeer), Code::NotFound);
    assert_eq!(code_of(ReasonCode::PeerUnreachable), Code::Unavailable);
    assert_eq!(code_of(ReasonCode::Timeout), Code::DeadlineExceeded);
    assert_eq!(code_of(ReasonCode::VersionUnsupported), Code::Unimplemented);
    let quota = SurfaceError::call(
        ReasonCode::NotPermitted,
        String::new(),
        StatusCode::TOO_MANY_REQUESTS,
    );
    assert_eq!(grpc_code(&quota), Code::ResourceExhausted);
    for (c, want) in [
        (code::TASK_NOT_FOUND, Code::NotFound),
        (code::TASK_NOT_CANCELABLE, Code::FailedPrecondition),
        (code::PUSH_NOT_SUPPORTED, Code::Unimplemented),
        (code::UNSUPPORTED_OPERATION, Code::Unimplemented),
        (code::INVALID_PARAMS, Code::InvalidArgument),
    ] {
        assert_eq!(grpc_code(&SurfaceError::protocol(c, "x")), want, "{c}");
    }
}
