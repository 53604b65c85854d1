use super::*;
use crate::registry::load::load_str;
use crate::registry::model::{ConnectionRule, System};

const DEMO: &str = include_str!("../../../config/topology.yaml");
const FILE: &str = "config/topology.yaml";

fn parsed(text: &str) -> Topology {
    match load_str(FILE, text) {
        Ok(l) => l.topology,
        Err(e) => panic!("{e}\n{text}"),
    }
}

fn value<T: serde::Serialize>(v: &T) -> Value {
    serde_yaml_ng::to_value(v).expect("to value")
}

fn logistics() -> System {
    let mut s = parsed(DEMO).systems[2].clone();
    s.id = "logistics".into();
    s.name = "Logistics: \"north\" #1".into();
    s.base_url = "http://127.0.0.1:3104".into();
    s.token_env = "WS_TOKEN_LOGISTICS".into();
    s.provides = vec![];
    s.consumes = vec!["orders.query".into()];
    s
}

#[test]
fn every_item_of_the_demo_renders_back_to_itself() {
    let t = parsed(DEMO);
    for s in &t.systems {
        let back: System = serde_yaml_ng::from_str(&render(&value(s))).expect("system");
        assert_eq!(&back, s);
    }
    for c in &t.capabilities {
        let text = render(&value(c));
        let back: crate::registry::model::Capability =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(&back, c);
    }
    for r in &t.rules {
        let back: ConnectionRule = serde_yaml_ng::from_str(&render(&value(r))).expect("rule");
        assert_eq!(&back, r);
    }
}

#[test]
fn an_appended_system_lands_at_the_end_of_systems_and_nothing_else_moves() {
    let t = parsed(DEMO);
    let out = apply(
        DEMO,
        &t,
        vec![Edit::Append {
            block: Block::Systems,
            item: value(&logistics()),
        }],
    )
    .expect("edit");
    let after = parsed(&out);
    assert_eq!(after.systems.len(), 4);
    assert_eq!(after.systems[3], logistics());
    // Only lines were added: every original line is still there, in order.
    let mut rest = out.lines();
    for line in DEMO.lines() {
        assert!(rest.any(|l| l == line), "lost line {line:?}");
    }
    // Before the comment that opens the capabilities.
    let new = out.find("  - id: logistics").expect("new item");
    let caps = out.find("# Every capability").expect("comment");
    assert!(new < caps);
}

#[test]
fn removing_an_item_takes_its_lines_only() {
    let t = parsed(DEMO);
    let out = apply(
        DEMO,
        &t,
        vec![Edit::Remove {
            block: Block::InitialEdges,
            index: 0,
        }],
    )
    .expect("edit");
    let after = parsed(&out);
    assert_eq!(after.initial_edges.len(), 1);
    assert_eq!(after.initial_edges[0].consumer, "hub");
    assert_eq!(DEMO.lines().count() - out.lines().count(), 3);
}

#[test]
fn removing_the_last_item_leaves_an_empty_list() {
    let t = parsed(DEMO);
    let out = apply(
        DEMO,
        &t,
        vec![
            Edit::Remove {
                block: Block::InitialEdges,
                index: 0,
            },
            Edit::Remove {
                block: Block::InitialEdges,
                index: 1,
            },
        ],
    )
    .expect("edit");
    assert!(out.contains("\ninitial_edges: []\n"), "{out}");
    assert!(parsed(&out).initial_edges.is_empty());
}

#[test]
fn a_flow_list_field_is_rewritten_on_its_line() {
    let t = parsed(DEMO);
    let mut rule = t.rules[0].clone();
    rule.consumers.push("helpdesk".into());
    let out = apply(
        DEMO,
        &t,
        vec![Edit::SetList {
            block: Block::Rules,
            index: 0,
            field: "consumers",
            values: rule.consumers.clone(),
            item: value(&rule),
        }],
    )
    .expect("edit");
    assert!(out.contains("    consumers: [buyercorp, hub, helpdesk]\n"));
    assert_eq!(DEMO.lines().count(), out.lines().count());
    assert_eq!(parsed(&out).rules[0], rule);
}

#[test]
fn a_block_list_field_replaces_the_item() {
    let t = parsed(DEMO);
    // BuyerCorp's `consumes` is a flow list; write the rule's consumers as
    // a block list first.
    let text = DEMO.replace(
        "    provider: helpdesk\n    consumers: [hub, buyercorp]\n\n  - capability: ticket.triage",
        "    provider: helpdesk\n    consumers:\n      - hub\n      - buyercorp\n\n  - capability: ticket.triage",
    );
    assert_ne!(text, DEMO);
    let t2 = parsed(&text);
    assert_eq!(t2, t);
    let mut rule = t.rules[3].clone();
    rule.consumers.retain(|c| c != "buyercorp");
    let out = apply(
        &text,
        &t2,
        vec![Edit::SetList {
            block: Block::Rules,
            index: 3,
            field: "consumers",
            values: rule.consumers.clone(),
            item: value(&rule),
        }],
    )
    .expect("edit");
    assert_eq!(parsed(&out).rules[3], rule);
    assert_eq!(parsed(&out).rules[4], t.rules[4]);
}

#[test]
fn a_list_not_written_one_item_per_line_is_refused() {
    let text = DEMO.replace(
        "initial_edges:\n  - consumer: buyercorp\n    provider: vendorcorp\n    capability: orders.query\n  - consumer: hub\n    provider: helpdesk\n    capability: ticket.classify\n",
        "initial_edges: [{consumer: buyercorp, provider: vendorcorp, capability: orders.query}]\n",
    );
    let t = parsed(&text);
    let err = apply(
        &text,
        &t,
        vec![Edit::Remove {
            block: Block::InitialEdges,
            index: 0,
        }],
    )
    .expect_err("refused");
    assert_eq!(err, EditError::NotBlockList("initial_edges"));
    assert!(err.to_string().contains("by hand"));
}

#[test]
fn indexes_mean_the_original_items_whatever_the_order_of_edits() {
    let t = parsed(DEMO);
    let out = apply(
        DEMO,
        &t,
        vec![
            Edit::Remove {
                block: Block::Rules,
                index: 1,
            },
            Edit::Remove {
                block: Block::Rules,
                index: 3,
            },
        ],
    )
    .expect("edit");
    // The file is no longer consistent (BuyerCorp's edge and VendorCorp's
    // `provides` name removed rules), so it is read without validation.
    let after: Topology = serde_yaml_ng::from_str(&out).expect("parses");
    let caps: Vec<&str> = after.rules.iter().map(|r| r.capability.as_str()).collect();
    assert_eq!(caps, ["orders.query", "budget.consult", "ticket.triage"]);
}

#[test]
fn a_file_written_by_a_program_with_items_at_column_zero_is_edited_too() {
    let t = parsed(DEMO);
    let text = serde_yaml_ng::to_string(&t).expect("yaml");
    assert!(text.contains("\nsystems:\n- id: vendorcorp\n"), "{text}");
    let mut rule = t.rules[0].clone();
    rule.consumers.push("helpdesk".into());
    let out = apply(
        &text,
        &t,
        vec![
            Edit::Append {
                block: Block::Systems,
                item: value(&logistics()),
            },
            Edit::Remove {
                block: Block::InitialEdges,
                index: 1,
            },
            Edit::SetList {
                block: Block::Rules,
                index: 0,
                field: "consumers",
                values: rule.consumers.clone(),
                item: value(&rule),
            },
        ],
    )
    .expect("edit");
    let after = parsed(&out);
    assert_eq!(after.systems.len(), 4);
    assert_eq!(after.systems[3], logistics());
    assert_eq!(after.rules[0], rule);
    assert_eq!(after.rules[1..], t.rules[1..]);
    assert_eq!(after.initial_edges, t.initial_edges[..1]);
}
