use super::*;
use serde_json::json;

fn meta(key: &str, value: Value) -> Metadata {
    let mut m = Metadata::new();
    m.insert(key.to_string(), value);
    m
}

#[test]
fn criteria_are_bounded_and_checked() {
    assert_eq!(Criteria::from_metadata(None), Ok(None));
    assert_eq!(Criteria::from_metadata(Some(&Metadata::new())), Ok(None));

    let c = Criteria::from_metadata(Some(&meta(CRITERIA_KEY, json!({"description": "ok"}))))
        .unwrap()
        .unwrap();
    assert_eq!(
        c.acceptance_timeout_seconds,
        Some(DEFAULT_TIMEOUT.as_secs())
    );
    assert_eq!(c.max_rejections(), DEFAULT_MAX_REJECTIONS);
    assert_eq!(c.evaluator, Evaluator::Client);

    // Numbers that crossed a protobuf Struct are doubles: whole ones count.
    let c = Criteria::from_metadata(Some(&meta(
        CRITERIA_KEY,
        json!({"acceptanceTimeoutSeconds": 60.0, "maxRejections": 2.0}),
    )))
    .unwrap()
    .unwrap();
    assert_eq!(
        (c.acceptance_timeout_seconds, c.max_rejections),
        (Some(60), Some(2))
    );

    for (bad, says) in [
        (
            json!({"acceptanceTimeoutSeconds": 0}),
            "acceptanceTimeoutSeconds must be 1",
        ),
        (
            json!({"acceptanceTimeoutSeconds": 999_999}),
            "acceptanceTimeoutSeconds must be 1",
        ),
        (
            json!({"maxRejections": 11}),
            "maxRejections must be at most 10",
        ),
        (
            json!({"evaluator": "agent"}),
            "evaluator `agent` is not offered",
        ),
        (json!({"evaluator": "robot"}), "unknown variant `robot`"),
        (
            json!({"artifactSchema": "string"}),
            "artifactSchema must be a JSON Schema",
        ),
        (json!({"deadline": 5}), "unknown field `deadline`"),
        (json!("yes"), "invalid type"),
        (
            json!({"maxRejections": 1.5}),
            "expected a whole number, not 1.5",
        ),
        (
            json!({"acceptanceTimeoutSeconds": -3}),
            "expected a whole number, not -3",
        ),
    ] {
        let e = Criteria::from_metadata(Some(&meta(CRITERIA_KEY, bad.clone()))).unwrap_err();
        assert_eq!(e.key, CRITERIA_KEY, "{bad}");
        assert!(e.to_string().contains(says), "{bad}: {e}");
    }
}

#[test]
fn decisions_need_their_reason_and_only_theirs() {
    let accept = Decision::from_metadata(Some(&Decision::accept().metadata()))
        .unwrap()
        .unwrap();
    assert_eq!(accept, Decision::accept());
    assert!(!accept.retry());
    assert_eq!(accept.describe(), "accept");

    let reject = Decision::from_metadata(Some(&meta(
        DECISION_KEY,
        json!({"action": "reject", "reason": "SCHEMA_MISMATCH"}),
    )))
    .unwrap()
    .unwrap();
    assert!(reject.retry(), "retry defaults to true");
    assert_eq!(reject.describe(), "reject SCHEMA_MISMATCH (retry)");
    assert_eq!(
        Decision::reject(RejectReason::OutOfScope, false).describe(),
        "reject OUT_OF_SCOPE (final)"
    );

    for (bad, says) in [
        (json!({"action": "reject"}), "a reject needs a `reason`"),
        (
            json!({"action": "accept", "reason": "OTHER"}),
            "`reason` belongs to a reject",
        ),
        (
            json!({"action": "accept", "retry": true}),
            "`retry` belongs to a reject",
        ),
        (json!({"action": "maybe"}), "unknown variant `maybe`"),
        (
            json!({"action": "reject", "reason": "TOO_LATE"}),
            "unknown variant `TOO_LATE`",
        ),
    ] {
        let e = Decision::from_metadata(Some(&meta(DECISION_KEY, bad.clone()))).unwrap_err();
        assert!(e.to_string().contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_pending_status_reads_back_and_nothing_else_is_pending() {
    let pending = Pending {
        attempt: 2,
        accept_by: DateTime::parse_from_rfc3339("2026-12-07T12:00:00.000Z")
            .unwrap()
            .with_timezone(&Utc),
    };
    let mut message = Message::new(a2a::Role::Agent, vec![a2a::Part::text("check it")]);
    pending.flag(&mut message);
    assert_eq!(
        message.extensions.as_deref(),
        Some(&[EXTENSION_URI.to_string()][..])
    );
    let mut status = TaskStatus {
        state: TaskState::InputRequired,
        message: Some(message.clone()),
        timestamp: None,
    };
    assert_eq!(Pending::of_status(&status), Ok(Some(pending)));

    // input-required for anything else (a question) is not a pending result
    status.message = Some(Message::new(
        a2a::Role::Agent,
        vec![a2a::Part::text("which?")],
    ));
    assert_eq!(Pending::of_status(&status), Ok(None));
    // a working task is not pending, whatever its message says
    status.state = TaskState::Working;
    status.message = Some(message.clone());
    assert_eq!(Pending::of_status(&status), Ok(None));

    // flagged, but the window is unreadable: an error naming the key
    let mut broken = message;
    broken
        .metadata
        .as_mut()
        .unwrap()
        .insert(ACCEPT_BY_KEY.into(), json!("tomorrow"));
    let status = TaskStatus {
        state: TaskState::InputRequired,
        message: Some(broken),
        timestamp: None,
    };
    assert_eq!(Pending::of_status(&status).unwrap_err().key, ACCEPT_BY_KEY);
}
