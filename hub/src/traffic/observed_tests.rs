//! Which triples are observed edges, and how an observed edge resolves.

use super::*;
use crate::traffic::tests::{exchange, topology};
use crate::traffic::{Payload, Traffic};
use app::dto::{LastCallView, TrafficOutcome};
use exchange::envelope::Envelope;
use exchange::reason::ReasonCode;

fn ends(v: &ObservedEdgeView) -> (&str, &str, &str) {
    (&v.consumer, &v.provider, &v.capability)
}

/// Answered and refused calls on known ids are observed edges, the hub's
/// own calls too; a call whose labels are not all known is none.
#[test]
fn known_triples_with_calls_are_observed_edges_answered_or_refused() {
    let t = topology();
    let traffic = Traffic::new();
    let env = Envelope::new_root();
    traffic.observe(
        &t,
        exchange(&env, "buyercorp", TrafficOutcome::Connected, None, 4),
        Payload::default,
    );
    // No rule lets Helpdesk read orders: refused, but every id is known.
    traffic.observe(
        &t,
        exchange(
            &env,
            "helpdesk",
            TrafficOutcome::NotConnected,
            Some(ReasonCode::NotPermitted),
            1,
        ),
        Payload::default,
    );
    traffic.observe(
        &t,
        exchange(&env, "hub", TrafficOutcome::Connected, None, 2),
        Payload::default,
    );
    // A caller the registry does not know: counted, never drawn.
    traffic.observe(
        &t,
        exchange(
            &env,
            "intruder",
            TrafficOutcome::NotConnected,
            Some(ReasonCode::AuthRejected),
            1,
        ),
        Payload::default,
    );
    let changed = traffic.drain_changed();
    let seen = observed(&t, &changed);
    let got: Vec<_> = seen.iter().map(ends).collect();
    assert_eq!(
        got,
        vec![
            ("buyercorp", "vendorcorp", "orders.query"),
            ("helpdesk", "vendorcorp", "orders.query"),
            ("hub", "vendorcorp", "orders.query"),
        ]
    );
    for v in &seen {
        assert_eq!(v.id, edge_id(&v.consumer, &v.provider, &v.capability));
    }
    let refused = changed
        .iter()
        .find(|v| v.edge == "helpdesk->vendorcorp:orders.query")
        .and_then(|v| v.last.as_ref())
        .map(|l| (l.outcome, l.reason));
    assert_eq!(
        refused,
        Some((TrafficOutcome::NotConnected, Some(ReasonCode::NotPermitted)))
    );
    // `GET /api/traffic` reads the same edges.
    let recent = traffic.recent();
    assert_eq!(observed(&t, &recent), seen);
    match event(&t, changed) {
        HubEvent::Traffic { edges, observed } => {
            assert_eq!(edges.len(), 3);
            assert_eq!(observed, seen);
        }
        other => panic!("a traffic event, not {other:?}"),
    }
}

fn edge_id(c: &str, p: &str, cap: &str) -> String {
    crate::registry::model::edge_id(c, p, cap)
}

fn view(edge: &str, calls: u32) -> EdgeTrafficView {
    EdgeTrafficView {
        edge: edge.into(),
        window_secs: 60,
        calls,
        failures: calls,
        last: Some(LastCallView {
            at: "2999-01-01T00:00:00.000Z".into(),
            outcome: TrafficOutcome::NotConnected,
            reason: Some(ReasonCode::NotPermitted),
            duration_ms: 1,
        }),
    }
}

/// The window emptied (the publisher's last push, count zero), an id the
/// topology does not know (any more), a malformed id: none is observed.
#[test]
fn an_empty_window_or_an_unknown_id_is_no_observed_edge() {
    let t = topology();
    let views = [
        view("helpdesk->vendorcorp:orders.query", 0),
        view("gone->vendorcorp:orders.query", 3),
        view("helpdesk->vendorcorp:orders.query:x", 3),
        view("helpdesk-vendorcorp:orders.query", 3),
        view("unknown->vendorcorp:orders.query", 3),
        view("helpdesk->vendorcorp:orders.query", 2),
    ];
    let seen = observed(&t, &views);
    assert_eq!(seen.len(), 1);
    assert_eq!(ends(&seen[0]), ("helpdesk", "vendorcorp", "orders.query"));
    match event(&t, vec![views[0].clone()]) {
        HubEvent::Traffic { edges, observed } => {
            assert_eq!(edges.len(), 1, "the zero is pushed");
            assert!(observed.is_empty(), "but names no observed edge");
        }
        other => panic!("a traffic event, not {other:?}"),
    }
}

/// An edge only another replica called is an observed edge here too,
/// summed with this replica's counts, and its drawer resolves; an id the
/// hub never saw does not.
#[test]
fn another_replicas_calls_are_observed_and_resolve() {
    let t = topology();
    let traffic = Traffic::new();
    let env = Envelope::new_root();
    traffic.observe(
        &t,
        exchange(&env, "buyercorp", TrafficOutcome::Connected, None, 4),
        Payload::default,
    );
    let only_there = "helpdesk->vendorcorp:orders.query";
    let both = "buyercorp->vendorcorp:orders.query";
    traffic.apply_remote("0000000b", vec![view(only_there, 2), view(both, 3)]);
    let recent = traffic.recent();
    let calls: Vec<_> = recent.iter().map(|v| (v.edge.as_str(), v.calls)).collect();
    assert_eq!(calls, vec![(both, 4), (only_there, 2)]);
    assert_eq!(observed(&t, &recent).len(), 2);

    let here = traffic.seen(&t, both).map(|l| l.edge_id());
    assert_eq!(here.as_deref(), Some(both));
    let there = traffic.seen(&t, only_there).map(|l| l.edge_id());
    assert_eq!(there.as_deref(), Some(only_there));
    assert!(traffic.seen(&t, "hub->helpdesk:ticket.classify").is_none());
    assert!(traffic
        .seen(&t, "nobody->vendorcorp:orders.query")
        .is_none());
}

#[test]
fn an_edge_id_parses_back_only_to_known_labels() {
    let t = topology();
    let l = Labels::of_edge_id(&t, "hub->helpdesk:ticket.classify");
    assert_eq!(
        l,
        Some(Labels::of(&t, "hub", "helpdesk", "ticket.classify"))
    );
    for bad in [
        "",
        "hub",
        "hub->helpdesk",
        "hub->helpdesk:",
        "hub->helpdesk:nope",
        "hub->hub->helpdesk:ticket.classify",
        "unknown->helpdesk:ticket.classify",
    ] {
        assert_eq!(Labels::of_edge_id(&t, bad), None, "{bad}");
    }
}
