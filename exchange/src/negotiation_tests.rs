use super::*;
use serde_json::json;

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

fn good() -> Value {
    json!({"from": "consumer", "intent": "propose",
               "scope": {"columns": ["region", "order_date", "order_value", "order_id"],
                         "purpose": "average order value by region for Q3", "retention_days": 30},
               "rationale": "The question needs region, date and value."})
}

fn with(path: &[&str], v: Option<Value>) -> Value {
    let mut m = good();
    let (last, parents) = path.split_last().expect("a path");
    let mut at = &mut m;
    for p in parents {
        at = &mut at[*p];
    }
    match v {
        Some(v) => at[*last] = v,
        None => {
            at.as_object_mut().expect("object").remove(*last);
        }
    }
    m
}

#[test]
fn a_valid_message_reads_and_round_trips() {
    let m = validate(&good(), Some(Party::Consumer), Some(&known())).expect("valid");
    assert_eq!((m.from, m.intent), (Party::Consumer, Intent::Propose));
    assert_eq!(m.scope.retention_days, 30);
    let back = serde_json::to_value(&m).expect("serialises");
    assert_eq!(back, good());
    assert_eq!(
        parse_text(&format!("  {}\n", good()), None, None).expect("text"),
        m
    );
    // An A2A data part carries 30 as the double 30.0; 30.5 is no count
    // of days.
    let mut doubled = good();
    doubled["scope"]["retention_days"] = serde_json::json!(30.0);
    assert_eq!(
        validate(&doubled, None, None)
            .expect("30.0")
            .scope
            .retention_days,
        30
    );
    doubled["scope"]["retention_days"] = serde_json::json!(30.5);
    assert!(validate(&doubled, None, None).is_err());
}

#[test]
fn every_departure_from_the_schema_names_the_key_and_the_allowed_set() {
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "extra key",
            with(&["urgency"], Some(json!("high"))),
            r#"unexpected key(s) ["urgency"] in the message; allowed: ["from", "intent", "scope", "rationale"]"#,
        ),
        (
            "missing key",
            with(&["rationale"], None),
            r#"missing key(s) ["rationale"] in the message; required: ["from", "intent", "scope", "rationale"]"#,
        ),
        (
            "extra scope key",
            with(&["scope", "rows"], Some(json!(10))),
            r#"unexpected key(s) ["rows"] in scope; allowed: ["columns", "purpose", "retention_days"]"#,
        ),
        (
            "missing scope key",
            with(&["scope", "purpose"], None),
            r#"missing key(s) ["purpose"] in scope; required: ["columns", "purpose", "retention_days"]"#,
        ),
        (
            "unknown intent",
            with(&["intent"], Some(json!("demand"))),
            r#"intent: "demand" is not one of ["propose", "counter", "accept", "reject", "request"]"#,
        ),
        (
            "unknown party",
            with(&["from"], Some(json!("buyer"))),
            r#"from: "buyer" is not one of ["consumer", "provider"]"#,
        ),
        (
            "intent not a string",
            with(&["intent"], Some(json!(1))),
            "intent: expected a string, got a number",
        ),
        (
            "scope not an object",
            with(&["scope"], Some(json!([]))),
            "scope: expected an object, got a list",
        ),
        (
            "empty columns",
            with(&["scope", "columns"], Some(json!([]))),
            "scope.columns: expected a non-empty list of distinct column names, got []",
        ),
        (
            "repeated column",
            with(&["scope", "columns"], Some(json!(["region", "region"]))),
            "scope.columns: expected a non-empty list of distinct column names",
        ),
        (
            "retention as text",
            with(&["scope", "retention_days"], Some(json!("30"))),
            "scope.retention_days: expected a whole number of days from 1 to 3650, got \"30\"",
        ),
        (
            "retention zero",
            with(&["scope", "retention_days"], Some(json!(0))),
            "scope.retention_days: expected a whole number of days",
        ),
        (
            "empty rationale",
            with(&["rationale"], Some(json!("  "))),
            "rationale: expected a non-empty string",
        ),
        (
            "unknown column",
            with(
                &["scope", "columns"],
                Some(json!(["region", "avg_order_value"])),
            ),
            r#"column(s) ["avg_order_value"] are not in the dataset schema ["customer_email", "order_date", "order_id", "order_value", "region"]"#,
        ),
        (
            "not an object",
            json!(["propose"]),
            "not a single JSON object: a list",
        ),
    ];
    for (name, message, want) in cases {
        let e = validate(&message, None, Some(&known())).expect_err(name);
        assert!(e.to_string().contains(want), "{name}: {e}");
    }
}

#[test]
fn a_card_publishes_its_negotiable_schema_as_column_tags() {
    let card = serde_json::json!({"skills": [
        {"id": "orders.query", "tags": ["data-share", "column:nope"]},
        {"id": "orders.negotiate", "tags": ["negotiation", "column:region", "column:", "column:order_id"]},
    ]});
    let cols = columns_on_card(&card, "orders.negotiate");
    assert_eq!(cols.into_iter().collect::<Vec<_>>(), ["order_id", "region"]);
    assert!(columns_on_card(&card, "shipments.negotiate").is_empty());
    assert!(columns_on_card(&serde_json::json!({}), "orders.negotiate").is_empty());
}

#[test]
fn a_reply_may_not_speak_for_the_other_party() {
    let e = validate(&good(), Some(Party::Provider), None).expect_err("wrong party");
    assert_eq!(
        e.to_string(),
        r#"expected "from": "provider", got "consumer" (a reply may not speak for the other party)"#
    );
    assert_eq!(Party::Consumer.other(), Party::Provider);
}

#[test]
fn text_must_be_exactly_one_object() {
    for text in [
        "Sure! Here it is: {\"from\": \"consumer\"}",
        "```json\n{}\n```",
        "",
        "{\"from\": \"consumer\"} {\"from\": \"provider\"}",
    ] {
        assert!(
            matches!(
                parse_text(text, None, None),
                Err(SchemaError::NotAnObject(_))
            ),
            "{text:?}"
        );
    }
}
