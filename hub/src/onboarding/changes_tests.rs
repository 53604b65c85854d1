use super::*;
use crate::onboarding::section::Call;
use crate::registry::edit::apply;
use crate::registry::load::load_str;

const DEMO: &str = include_str!("../../../config/topology.yaml");
const LOGISTICS: &str = include_str!("../../../config/peers/logistics.topology.yaml");
const FILE: &str = "config/topology.yaml";

fn topology(text: &str) -> Topology {
    match load_str(FILE, text) {
        Ok(l) => l.topology,
        Err(e) => panic!("{e}\n{text}"),
    }
}

/// `text` with `change` applied, validated by the loader.
fn changed(text: &str, change: Change) -> String {
    let t = topology(text);
    let out = apply(text, &t, change.edits).expect("edits apply");
    topology(&out);
    out
}

fn logistics() -> Section {
    let mut s = Section::parse(LOGISTICS).expect("the peer's section file is a section");
    s.calls.push(Call {
        capability: "orders.query".into(),
        provider: "vendorcorp".into(),
    });
    s
}

#[test]
fn a_system_joins_and_leaves_and_the_file_is_as_it_was() {
    let t = topology(DEMO);
    let change = join(&t, logistics(), Some("tok".into())).expect("join");
    assert!(matches!(
        &change.credential,
        Some(CredentialChange::Set { name, token }) if name == "WS_TOKEN_LOGISTICS" && token == "tok"
    ));
    let joined = changed(DEMO, change);
    let after = topology(&joined);
    let logistics = after.system("logistics").expect("joined");
    assert_eq!(logistics.consumes, ["orders.query"]);
    assert!(after.permits("logistics", "orders.query", "vendorcorp"));
    assert!(after.permits("hub", "shipments.query", "logistics"));
    assert!(joined.contains("    consumers: [buyercorp, hub, logistics]\n"));

    let change = leave(&after, "logistics").expect("leave");
    assert!(matches!(
        &change.credential,
        Some(CredentialChange::Forget { name }) if name == "WS_TOKEN_LOGISTICS"
    ));
    assert_eq!(changed(&joined, change), DEMO, "byte for byte");
}

#[test]
fn a_member_leaves_with_everything_that_names_it() {
    let t = topology(DEMO);
    let out = changed(DEMO, leave(&t, "helpdesk").expect("leave"));
    let after = topology(&out);
    assert!(after.system("helpdesk").is_none());
    assert!(after.capability("ticket.classify").is_none());
    assert!(after
        .rules
        .iter()
        .all(|r| r.provider != "helpdesk" && !r.consumers.iter().any(|c| c == "helpdesk")));
    let buyer = after.system("buyercorp").expect("stays");
    assert_eq!(buyer.consumes, ["orders.query", "orders.negotiate"]);
    assert!(after.initial_edges.iter().all(|e| e.provider != "helpdesk"));
    // Comments elsewhere are untouched.
    assert!(out.contains("# Connection rules: capability + provider + legal consumers."));
}

#[test]
fn a_consumer_is_added_and_taken_off_with_its_consumes_entry() {
    let t = topology(DEMO);
    let out = changed(
        DEMO,
        set_consumer(&t, "orders.query", "vendorcorp", "helpdesk", true).expect("add"),
    );
    let after = topology(&out);
    assert!(after.permits("helpdesk", "orders.query", "vendorcorp"));
    assert!(after
        .system("helpdesk")
        .expect("helpdesk")
        .consumes
        .contains(&"orders.query".to_string()));
    let back = changed(
        &out,
        set_consumer(&after, "orders.query", "vendorcorp", "helpdesk", false).expect("remove"),
    );
    assert_eq!(back, DEMO);
    // The hub as a consumer has no `consumes` list to keep.
    let out = changed(
        DEMO,
        set_consumer(&t, "budget.consult", "buyercorp", "hub", false).expect("hub off"),
    );
    assert!(!topology(&out).permits("hub", "budget.consult", "buyercorp"));
}

#[test]
fn what_a_change_can_tell_is_wrong_is_refused_by_name() {
    let t = topology(DEMO);
    let refused = |r: Result<Change, WriteError>| r.expect_err("refused").to_string();

    let mut s = logistics();
    s.system.id = "helpdesk".into();
    assert_eq!(
        refused(join(&t, s, None)),
        "a system `helpdesk` already exists"
    );
    let mut s = logistics();
    s.system.base_url = "http://127.0.0.1:3101".into();
    assert!(refused(join(&t, s, None)).contains("already the address of `vendorcorp`"));
    let mut s = logistics();
    s.capabilities[0].id = "orders.query".into();
    assert!(refused(join(&t, s, None)).contains("capability `orders.query` already exists"));
    let mut s = logistics();
    s.rules[0].provider = "vendorcorp".into();
    assert!(refused(join(&t, s, None))
        .contains("a joining system adds rules for its own capabilities only"));
    let mut s = logistics();
    s.calls[0].provider = "helpdesk".into();
    assert!(refused(join(&t, s, None))
        .contains("no rule lets anyone call `orders.query` of `helpdesk`"));

    assert_eq!(refused(leave(&t, "nobody")), "no system `nobody`");
    assert!(refused(set_consumer(
        &t,
        "orders.query",
        "vendorcorp",
        "buyercorp",
        true
    ))
    .contains("may already call"));
    assert!(refused(set_consumer(
        &t,
        "orders.query",
        "vendorcorp",
        "ghost",
        true
    ))
    .contains("no system `ghost`"));
    assert!(refused(set_consumer(
        &t,
        "orders.query",
        "helpdesk",
        "buyercorp",
        true
    ))
    .contains("no rule for `orders.query` of `helpdesk`"));
}
