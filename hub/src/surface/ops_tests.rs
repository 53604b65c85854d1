//! How a message names its capability: table of messages and what each
//! selects (or why it selects nothing).

use super::*;
use a2a::{Part, Role};

fn topology() -> Topology {
    let text = include_str!("../../../config/topology.yaml");
    crate::registry::load::load_str("topology.yaml", text)
        .expect("shipped topology")
        .topology
}

fn message(parts: Vec<Part>, skill: Option<Value>) -> Message {
    let mut m = Message::new(Role::User, parts);
    m.metadata = skill.map(|s| std::collections::HashMap::from([("skill".to_string(), s)]));
    m
}

/// (case, provider, message, the selection or a word of the refusal).
type Case = (
    &'static str,
    &'static str,
    Message,
    Result<(&'static str, Value), &'static str>,
);

#[test]
fn a_message_selects_its_capability_and_input() {
    let t = topology();
    let count = json!({"aggregate": {"op": "count"}});
    let cases: Vec<Case> = vec![
        (
            "data part naming the capability",
            "vendorcorp",
            message(
                vec![Part::data(
                    json!({"capability": "orders.query", "input": count}),
                )],
                None,
            ),
            Ok(("orders.query", count.clone())),
        ),
        (
            "bare data part, one capability",
            "vendorcorp",
            message(vec![Part::data(count.clone())], None),
            Ok(("orders.query", count.clone())),
        ),
        (
            "metadata.skill with a bare data part",
            "vendorcorp",
            message(vec![Part::data(count.clone())], Some(json!("orders.query"))),
            Ok(("orders.query", count.clone())),
        ),
        (
            "text to a consult provider is the question",
            "buyercorp",
            message(vec![Part::text("How much does marketing have left?")], None),
            Ok((
                "budget.consult",
                json!({"question": "How much does marketing have left?"}),
            )),
        ),
        (
            "text to a data-share",
            "vendorcorp",
            message(vec![Part::text("count the orders")], None),
            Err("needs data"),
        ),
        (
            "metadata and data part disagree",
            "vendorcorp",
            message(
                vec![Part::data(
                    json!({"capability": "orders.query", "input": {}}),
                )],
                Some(json!("budget.consult")),
            ),
            Err("differ"),
        ),
        (
            "metadata.skill not a string",
            "vendorcorp",
            message(vec![Part::data(count.clone())], Some(json!(7))),
            Err("must be a skill id"),
        ),
        (
            "no parts",
            "vendorcorp",
            message(vec![], None),
            Err("neither a text nor a data part"),
        ),
        (
            "unknown provider: left to the pipeline",
            "nobody",
            message(vec![Part::text("hi")], None),
            Ok(("unknown", json!({}))),
        ),
    ];
    for (name, provider, msg, expected) in cases {
        let got = select(&msg, provider, &t);
        match (got, expected) {
            (Ok((cap, input)), Ok((want_cap, want_input))) => {
                assert_eq!((cap.as_str(), &input), (want_cap, &want_input), "{name}")
            }
            (Err(Unselectable::Invalid(why)), Err(want)) => {
                assert!(why.contains(want), "{name}: {why}")
            }
            (Err(Unselectable::NeedsData(cap)), Err("needs data")) => {
                assert_eq!(cap, "orders.query", "{name}")
            }
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn a_part_of_a_media_type_nobody_takes_is_refused() {
    let t = topology();
    let mut part = Part::text("x");
    part.media_type = Some("application/x-unsupported".into());
    let got = select(&message(vec![part], None), "buyercorp", &t);
    assert!(
        matches!(&got, Err(Unselectable::ContentType(why)) if why.contains("application/x-unsupported")),
        "{got:?}"
    );
    let mut json_part = Part::data(json!({"question": "q"}));
    json_part.media_type = Some("application/json; charset=utf-8".into());
    assert!(select(&message(vec![json_part], None), "buyercorp", &t).is_ok());
}
