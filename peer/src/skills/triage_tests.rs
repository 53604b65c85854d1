//! Ticket triage: queues and SLAs by classification, the input checked
//! field by field, deadlines capped and defaulted, a seeded ticket triaged.

use super::*;
use crate::config::DatasetConfig;
use crate::datasets::{ensure_seeded, generate_tickets};

#[test]
fn queues_and_slas_follow_the_classification() {
    let cases = [
        // (subject, content, category, priority, queue, sla)
        (
            "无法登录管理后台",
            "昨天开始持续返回 403",
            "access_control",
            Priority::High,
            "identity-access",
            4,
        ),
        (
            "Account compromised",
            "Our admin login was hacked, we see a breach",
            "access_control",
            Priority::Critical,
            "security-response",
            1,
        ),
        (
            "API is down",
            "All users get a 503 since this morning",
            "outage",
            Priority::Critical,
            "incident-response",
            1,
        ),
        (
            "Charged twice for invoice INV-1234",
            "Please refund the duplicate charge.",
            "billing",
            Priority::High,
            "billing",
            4,
        ),
        (
            "Password reset link not working",
            "I am locked out",
            "account",
            Priority::Medium,
            "account-services",
            24,
        ),
        (
            "Feature request: dark mode",
            "It would be great to have dark mode",
            "feature_request",
            Priority::Low,
            "product-feedback",
            72,
        ),
        (
            "Change of address",
            "Please update our postal address",
            "other",
            Priority::Low,
            "general-support",
            72,
        ),
    ];
    for (subject, content, category, priority, queue, sla) in cases {
        let t = triage_text(subject, content);
        assert_eq!(t.classification, classify(subject, content), "{subject}");
        assert_eq!(t.classification.category, category, "{subject}");
        assert_eq!(t.priority, priority, "{subject}");
        assert_eq!(t.queue.as_str(), queue, "{subject}");
        assert_eq!(t.sla_hours, sla, "{subject}");
    }
    // A more urgent ticket never gets a longer SLA.
    let order = [
        Priority::Low,
        Priority::Medium,
        Priority::High,
        Priority::Critical,
    ];
    for pair in order.windows(2) {
        assert!(pair[0].sla_hours() > pair[1].sla_hours(), "{pair:?}");
    }
}

#[test]
fn inputs_are_checked_field_by_field() {
    assert_eq!(
        parse_input(&json!({"ticket_id": "T-1003"})).unwrap(),
        TriageInput {
            ticket_id: "T-1003".into(),
            work_ms: None
        }
    );
    // Numbers cross A2A as doubles.
    assert_eq!(
        parse_input(&json!({"ticket_id": "T-1003", "work_ms": 250.0}))
            .unwrap()
            .work_ms,
        Some(250)
    );
    let code = |input: Value| match parse_input(&input) {
        Err(SkillError::InvalidParams { code, message }) => (code, message),
        other => panic!("{input} was accepted: {other:?}"),
    };
    let (c, m) = code(json!({}));
    assert_eq!(c, "missing_field");
    assert!(m.contains("`ticket_id` is required"), "{m}");
    assert_eq!(code(json!({"ticket_id": "T-12"})).0, "bad_ticket_id");
    assert_eq!(code(json!({"ticket_id": "T-12345"})).0, "bad_ticket_id");
    assert_eq!(code(json!({"ticket_id": "t-1003"})).0, "bad_ticket_id");
    assert_eq!(code(json!({"ticket_id": 1003})).0, "wrong_type");
    for bad in [json!(-1), json!(60_001), json!(2.5), json!("fast")] {
        let (c, m) = code(json!({"ticket_id": "T-1003", "work_ms": bad}));
        assert_eq!(c, "bad_work_ms");
        assert!(m.contains("`work_ms`"), "{m}");
    }
    assert_eq!(
        code(json!({"ticket_id": "T-1003", "priority": "high"})).0,
        "unknown_field"
    );
    assert_eq!(code(json!("T-1003")).0, "input_not_object");
}

#[test]
fn deadlines_are_capped_and_defaulted() {
    let now = DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
    // Absent: now + the cap.
    let d = deadline(None, now, 30_000).unwrap();
    assert_eq!((d.at, d.capped), (at("2026-03-01T12:00:30Z"), true));
    assert_eq!(d.to_rfc3339(), "2026-03-01T12:00:30.000Z");
    assert_eq!(deadline(Some(&Value::Null), now, 30_000).unwrap(), d);
    // Sooner than the cap: kept, in UTC whatever the offset.
    let d = deadline(Some(&json!("2026-03-01T13:00:10+01:00")), now, 30_000).unwrap();
    assert_eq!((d.at, d.capped), (at("2026-03-01T12:00:10Z"), false));
    // Later than the cap: capped.
    let d = deadline(Some(&json!("2026-03-02T00:00:00Z")), now, 30_000).unwrap();
    assert_eq!((d.at, d.capped), (at("2026-03-01T12:00:30Z"), true));
    // Exactly the cap is not "capped".
    let d = deadline(Some(&json!("2026-03-01T12:00:30Z")), now, 30_000).unwrap();
    assert!(!d.capped);
    // Already past: kept (the task fails at once).
    let d = deadline(Some(&json!("2026-03-01T11:00:00Z")), now, 30_000).unwrap();
    assert_eq!(d.at, at("2026-03-01T11:00:00Z"));
    assert_eq!(
        deadline(Some(&json!("tomorrow")), now, 30_000),
        Err(DeadlineError::NotRfc3339)
    );
    assert_eq!(
        deadline(Some(&json!(1_700_000_000)), now, 30_000),
        Err(DeadlineError::NotAString("number"))
    );
}

#[tokio::test]
async fn a_seeded_ticket_is_triaged_with_its_requester() {
    let pool = exchange::db::memory_sqlite().await.unwrap();
    ensure_seeded(&pool, &DatasetConfig::Tickets { seed: 42, rows: 40 })
        .await
        .unwrap();
    let generated = generate_tickets(42, 40);
    let ticket = find_ticket(&pool, "T-1003").await.unwrap().unwrap();
    let out = triage(&ticket);
    let want = classify(&generated[2].subject, &generated[2].content);
    assert_eq!(out.result["ticket_id"], "T-1003");
    assert_eq!(out.result["subject"], generated[2].subject.as_str());
    assert_eq!(out.result["category"], want.category);
    assert_eq!(out.result["category"], "billing");
    assert_eq!(out.result["priority"], want.priority);
    assert_eq!(out.result["queue"], "billing");
    assert_eq!(out.result["sla_hours"], 4);
    assert_eq!(
        out.result["requester_email"],
        generated[2].requester_email.as_str()
    );
    assert!(out.text.starts_with("T-1003: billing"), "{}", out.text);
    assert_eq!(find_ticket(&pool, "T-9999").await.unwrap(), None);
    // The id is bound, not interpolated.
    assert_eq!(find_ticket(&pool, "T-1003' OR '1'='1").await.unwrap(), None);
}
