use super::*;
use crate::contract::Spec;
use a2a::{Artifact, TaskState, TaskStatus};
use serde_json::json;

/// `ticket.triage`'s contract: a priority of three values.
fn contracts() -> Contracts {
    let schema = json!({
        "type": "object",
        "required": ["priority"],
        "properties": {"priority": {"enum": ["P1", "P2", "P3"]}},
    });
    let spec = Spec {
        response_schema: &schema,
        input_schema: None,
        contract: None,
    };
    Contracts::compile([("ticket.triage", spec)]).expect("compiles")
}

fn artifact(name: &str, attempt: Option<u64>, data: Value) -> Artifact {
    Artifact {
        artifact_id: a2a::new_artifact_id(),
        name: Some(name.into()),
        description: None,
        parts: vec![Part::data(data)],
        metadata: attempt.map(|n| [(ATTEMPT_KEY.to_string(), Value::from(n))].into()),
        extensions: None,
    }
}

fn task(artifacts: Vec<Artifact>) -> Task {
    Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: TaskStatus {
            state: TaskState::InputRequired,
            message: None,
            timestamp: None,
        },
        artifacts: Some(artifacts),
        history: None,
        metadata: None,
    }
}

#[test]
fn a_result_is_checked_against_the_contract_then_the_requesters_schema() {
    let c = contracts();
    let none = Criteria::default();
    let good = task(vec![artifact("result", Some(1), json!({"priority": "P2"}))]);
    assert_eq!(unmet(&good, 1, "ticket.triage", &c, &none), None);

    // The contract first: the registry's response schema.
    let bad = task(vec![artifact(
        "result",
        Some(1),
        json!({"priority": "urgent"}),
    )]);
    let u = unmet(&bad, 1, "ticket.triage", &c, &none).expect("unmet");
    assert_eq!(u.reason, RejectReason::SchemaMismatch);
    assert!(
        u.why.contains("breaks the contract of ticket.triage"),
        "{}",
        u.why
    );

    // Then the requester's own schema.
    let strict = Criteria {
        artifact_schema: Some(json!({"properties": {"priority": {"const": "P1"}}})),
        ..Criteria::default()
    };
    let u = unmet(&good, 1, "ticket.triage", &c, &strict).expect("unmet");
    assert!(
        u.why.contains("the requester's artifactSchema"),
        "{}",
        u.why
    );

    // Only this attempt's artifacts count: an older, broken result does
    // not fail the new one.
    let revised = task(vec![
        artifact("result", Some(1), json!({"priority": "urgent"})),
        artifact("result", Some(2), json!({"priority": "P1"})),
    ]);
    assert_eq!(unmet(&revised, 2, "ticket.triage", &c, &strict), None);
    assert!(unmet(&revised, 1, "ticket.triage", &c, &strict).is_some());
}

#[test]
fn required_artifacts_and_data_must_be_there() {
    let c = contracts();
    let wants = Criteria {
        required_artifacts: vec!["summary".into()],
        ..Criteria::default()
    };
    let t = task(vec![artifact("result", None, json!({"priority": "P2"}))]);
    let u = unmet(&t, 1, "ticket.triage", &c, &wants).expect("unmet");
    assert_eq!(u.reason, RejectReason::MissingArtifact);
    assert!(u.why.contains("no artifact named `summary`"), "{}", u.why);

    let empty = task(Vec::new());
    let u = unmet(&empty, 1, "ticket.triage", &c, &Criteria::default()).expect("unmet");
    assert_eq!(u.reason, RejectReason::MissingArtifact);
}

#[test]
fn feedback_keeps_words_and_data_and_drops_files() {
    let long = "x".repeat(MAX_FEEDBACK + 10);
    let parts = vec![
        Part::text("first\nline"),
        Part::data(json!({"field": "priority"})),
        Part {
            content: PartContent::Url("file:///etc/passwd".into()),
            ..Part::text("")
        },
        Part::text(long),
    ];
    let kept = feedback_parts(&parts);
    assert_eq!(kept.len(), 3, "{kept:?}");
    assert!(matches!(&kept[0].content, PartContent::Text(t) if t == "first\nline"));
    assert!(matches!(&kept[1].content, PartContent::Data(_)));
    let total: usize = kept
        .iter()
        .map(|p| match &p.content {
            PartContent::Text(t) => t.chars().count(),
            _ => 0,
        })
        .sum();
    assert_eq!(total, MAX_FEEDBACK);
}

#[test]
fn criteria_with_a_schema_that_does_not_compile_are_refused() {
    let mut m = exchange::acceptance::Metadata::new();
    m.insert(CRITERIA_KEY.into(), json!({"artifactSchema": {"type": 12}}));
    let e = criteria_of(Some(&m)).unwrap_err();
    assert!(
        e.contains(CRITERIA_KEY) && e.contains("artifactSchema"),
        "{e}"
    );
    m.insert(
        CRITERIA_KEY.into(),
        json!({"artifactSchema": {"type": "object"}}),
    );
    assert!(criteria_of(Some(&m)).expect("fine").is_some());
}
