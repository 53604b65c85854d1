use super::*;
use serde_json::json;
use std::sync::{Arc, Mutex};

fn known() -> BTreeSet<String> {
    [
        "region",
        "order_date",
        "order_value",
        "order_id",
        "customer_email",
    ]
    .map(String::from)
    .into()
}

fn want() -> Want {
    Want {
        columns: ["region", "order_date", "order_value", "order_id"]
            .map(String::from)
            .to_vec(),
        required: ["region", "order_date", "order_value"]
            .map(String::from)
            .to_vec(),
        purpose: "average order value by region for Q3".into(),
        retention_days: 30,
    }
}

fn reply(intent: &str, cols: &[&str]) -> Value {
    json!({"from": "provider", "intent": intent,
               "scope": {"columns": cols, "purpose": "p", "retention_days": 30},
               "rationale": "r"})
}

/// A scripted provider: answers in order, records what it was sent.
fn scripted(
    answers: Vec<Sent>,
) -> (
    Arc<Mutex<Vec<NegotiationMessage>>>,
    impl FnMut(NegotiationMessage) -> std::future::Ready<Sent>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let mut answers = answers.into_iter();
    let send = move |m: NegotiationMessage| {
        log.lock().expect("log").push(m);
        std::future::ready(answers.next().unwrap_or(Sent::Failed {
            reason: "TEST".into(),
            detail: "script ran out".into(),
        }))
    };
    (seen, send)
}

#[tokio::test]
async fn a_counter_that_covers_the_question_is_accepted_then_granted() {
    let (seen, send) = scripted(vec![
        Sent::Answered(
            json!({"reply": reply("counter", &["region", "order_date", "order_value"]), "grant": null}),
        ),
        Sent::Answered(
            json!({"reply": reply("accept", &["region", "order_date", "order_value"]), "grant": {"contract_id": "c-1"}}),
        ),
    ]);
    let out = negotiate(&want(), &known(), send).await.expect("granted");
    let Outcome::Granted { grant, transcript } = out else {
        panic!("{out:?}")
    };
    assert_eq!(grant["contract_id"], "c-1");
    assert_eq!(transcript.len(), 2);
    let seen = seen.lock().expect("log");
    assert_eq!(seen[0].intent, Intent::Propose);
    assert_eq!(seen[0].scope.columns.len(), 4);
    assert_eq!(
        (seen[1].intent, seen[1].scope.columns.len()),
        (Intent::Accept, 3)
    );
}

#[tokio::test]
async fn an_invalid_reply_gets_one_corrective_request_then_a_protocol_error() {
    let bad = |v: Value| Sent::Answered(json!({"reply": v, "grant": null}));
    let mut wrong_party = reply("counter", &["region"]);
    wrong_party["from"] = json!("consumer");
    let mut extra = reply("counter", &["region"]);
    extra["urgency"] = json!("high");
    let unknown = reply("counter", &["avg_order_value"]);
    let prose = json!("Sure! {\"from\": \"provider\"}");
    for (case, broken, needle) in [
        (
            "wrong party",
            wrong_party,
            "may not speak for the other party",
        ),
        ("extra key", extra, "urgency"),
        ("unknown column", unknown, "avg_order_value"),
        ("unparseable", prose, "not a single JSON object"),
    ] {
        let (seen, send) = scripted(vec![bad(broken.clone()), bad(broken)]);
        let err = negotiate(&want(), &known(), send).await.expect_err(case);
        let NegotiationError::Protocol { error, transcript } = err else {
            panic!("{case}: {err:?}")
        };
        assert!(error.contains(needle), "{case}: {error}");
        assert_eq!(transcript.len(), 2, "{case}: exactly one retry");
        let seen = seen.lock().expect("log");
        assert_eq!(seen[1].intent, Intent::Request, "{case}");
        assert!(
            seen[1].rationale.contains(needle),
            "{case}: the correction quotes the error"
        );
    }
    // One bad reply, then a good one: the negotiation goes on.
    let mut wrong = reply("counter", &["region", "order_date", "order_value"]);
    wrong["from"] = json!("consumer");
    let (_, send) = scripted(vec![
        bad(wrong),
        Sent::Answered(
            json!({"reply": reply("counter", &["region", "order_date", "order_value"]), "grant": null}),
        ),
        Sent::Answered(
            json!({"reply": reply("accept", &["region", "order_date", "order_value"]), "grant": {"contract_id": "c-2"}}),
        ),
    ]);
    assert!(matches!(
        negotiate(&want(), &known(), send).await,
        Ok(Outcome::Granted { .. })
    ));
    // The hub's own finding counts as an invalid reply too.
    let (_, send) = scripted(vec![
        Sent::InvalidReply("SCHEMA_INVALID: /reply is not an object".into()),
        Sent::InvalidReply("SCHEMA_INVALID: /reply is not an object".into()),
    ]);
    assert!(matches!(
        negotiate(&want(), &known(), send).await,
        Err(NegotiationError::Protocol { .. })
    ));
}

#[tokio::test]
async fn an_offer_without_a_required_column_is_rejected_and_a_failure_ends_it() {
    let (seen, send) = scripted(vec![
        Sent::Answered(json!({"reply": reply("counter", &["region"]), "grant": null})),
        Sent::Answered(json!({"reply": reply("reject", &["region"]), "grant": null})),
    ]);
    let out = negotiate(&want(), &known(), send).await.expect("ends");
    assert!(
        matches!(
            out,
            Outcome::Rejected {
                by: Party::Consumer,
                ..
            }
        ),
        "{out:?}"
    );
    assert_eq!(seen.lock().expect("log")[1].intent, Intent::Reject);
    let (_, send) = scripted(vec![Sent::Failed {
        reason: "PEER_UNREACHABLE".into(),
        detail: "connection refused".into(),
    }]);
    let err = negotiate(&want(), &known(), send)
        .await
        .expect_err("failed");
    assert!(
        matches!(err, NegotiationError::Failed { ref reason, .. } if reason == "PEER_UNREACHABLE")
    );
    // A grant must come with an accept, and an accept with a grant.
    let (_, send) = scripted(vec![
        Sent::Answered(json!({"reply": reply("accept", &["region"]), "grant": null})),
        Sent::Answered(json!({"reply": reply("accept", &["region"]), "grant": null})),
    ]);
    assert!(matches!(
        negotiate(&want(), &known(), send).await,
        Err(NegotiationError::Protocol { .. })
    ));
}
