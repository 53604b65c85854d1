//! Traffic's counts, windows and labels, without a network.

use super::*;
use std::time::Duration;

pub(super) fn topology() -> Topology {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../config/topology.yaml"
    ))
    .expect("topology");
    for sys in ["VENDORCORP", "BUYERCORP", "HELPDESK"] {
        std::env::set_var(format!("WS_TOKEN_{sys}"), "t");
    }
    crate::registry::load::load_str("topology.yaml", &text)
        .expect("valid")
        .topology
}

pub(super) fn exchange<'a>(
    env: &'a Envelope,
    caller: &'a str,
    outcome: TrafficOutcome,
    reason: Option<ReasonCode>,
    ms: u64,
) -> Exchange<'a> {
    Exchange {
        caller,
        provider: "vendorcorp",
        capability: "orders.query",
        method: "SendMessage",
        envelope: env,
        http_status: if reason.is_some() { 502 } else { 200 },
        outcome,
        reason,
        duration: Duration::from_millis(ms),
        retry: outcome == TrafficOutcome::Replayed,
        task: None,
    }
}

#[test]
fn counts_by_edge_and_reason_with_percentiles() {
    let t = topology();
    let traffic = Traffic::new();
    let env = Envelope::new_root();
    for ms in 1..=20 {
        traffic.observe(
            &t,
            exchange(&env, "buyercorp", TrafficOutcome::Connected, None, ms),
            Payload::default,
        );
    }
    traffic.observe(
        &t,
        exchange(&env, "buyercorp", TrafficOutcome::Replayed, None, 1),
        Payload::default,
    );
    traffic.observe(
        &t,
        exchange(
            &env,
            "buyercorp",
            TrafficOutcome::NotConnected,
            Some(ReasonCode::Timeout),
            2000,
        ),
        Payload::default,
    );
    traffic.observe(
        &t,
        exchange(
            &env,
            "buyercorp",
            TrafficOutcome::NotConnected,
            Some(ReasonCode::Timeout),
            2000,
        ),
        Payload::default,
    );
    traffic.observe(
        &t,
        exchange(
            &env,
            "hub",
            TrafficOutcome::NotConnected,
            Some(ReasonCode::PeerUnreachable),
            3,
        ),
        Payload::default,
    );
    let edge = Labels::of(&t, "buyercorp", "vendorcorp", "orders.query");
    let m = traffic.edge_metrics(&edge);
    assert_eq!((m.calls, m.succeeded, m.retries), (23, 21, 1));
    assert_eq!(m.failures.len(), 1);
    assert_eq!(
        (m.failures[0].reason, m.failures[0].count),
        (ReasonCode::Timeout, 2)
    );
    assert_eq!(m.wait_p50_ms, Some(11));
    assert_eq!(m.wait_p95_ms, Some(2000));
    let sys = traffic.system_metrics("vendorcorp");
    assert_eq!(sys.calls, 24, "the system counts every edge it answers");
    let view = traffic.edge(&edge);
    assert_eq!((view.calls, view.failures), (23, 2));
    assert_eq!(
        view.last.as_ref().map(|l| l.reason),
        Some(Some(ReasonCode::Timeout))
    );
    // Both edges changed; after draining, nothing is pending.
    let changed = traffic.drain_changed();
    assert_eq!(changed.len(), 2);
    assert!(traffic.drain_changed().is_empty());
    // The inspector keeps at most its capacity, newest first.
    assert_eq!(traffic.inspector(&edge).len(), inspector::CAPACITY);
    assert_eq!(
        traffic.inspector(&edge)[0].reason,
        Some(ReasonCode::Timeout)
    );
}

#[test]
fn ids_the_registry_does_not_know_are_unknown_and_draw_no_edge() {
    let t = topology();
    let traffic = Traffic::new();
    let env = Envelope::new_root();
    let mut ex = exchange(
        &env,
        "Bearer sk-secret",
        TrafficOutcome::NotConnected,
        Some(ReasonCode::AuthRejected),
        1,
    );
    ex.provider = "http://10.0.0.1/internal";
    traffic.observe(&t, ex, Payload::default);
    assert!(traffic.drain_changed().is_empty());
    let text = traffic
        .prometheus()
        .render(&prometheus::Snapshot::default())
        .expect("render");
    assert!(
        !text.contains("sk-secret") && !text.contains("10.0.0.1"),
        "{text}"
    );
    assert!(
        text.contains(r#"wallstreet_call_failures_total{caller="unknown",provider="unknown",capability="orders.query",reason="AUTH_REJECTED"} 1"#),
        "{text}"
    );
}

#[test]
fn an_edge_nobody_called_says_so() {
    let t = topology();
    let traffic = Traffic::new();
    let edge = Labels::of(&t, "hub", "helpdesk", "ticket.classify");
    let view = traffic.edge(&edge);
    assert_eq!((view.calls, view.failures, view.last), (0, 0, None));
    let m = traffic.edge_metrics(&edge);
    assert_eq!((m.calls, m.success_rate, m.wait_p50_ms), (0, None, None));
}

/// What other replicas counted is added to this one's labels: calls and
/// failures summed, the newest last call; a replica's counts replace its
/// earlier ones, and another edge is untouched.
#[test]
fn the_other_replicas_counts_are_added_to_the_labels() {
    let t = topology();
    let traffic = Traffic::new();
    let env = Envelope::new_root();
    for _ in 0..3 {
        traffic.observe(
            &t,
            exchange(&env, "buyercorp", TrafficOutcome::Connected, None, 5),
            Payload::default,
        );
    }
    let labels = Labels::of(&t, "buyercorp", "vendorcorp", "orders.query");
    let edge = labels.edge_id();
    let mine = traffic.edge(&labels);
    assert_eq!((mine.calls, mine.failures), (3, 0));
    let theirs = |calls, failures, at: &str| EdgeTrafficView {
        edge: edge.clone(),
        window_secs: mine.window_secs,
        calls,
        failures,
        last: Some(LastCallView {
            at: at.into(),
            outcome: TrafficOutcome::NotConnected,
            reason: Some(ReasonCode::Timeout),
            duration_ms: 2000,
        }),
    };
    let told = traffic.apply_remote("0000000b", vec![theirs(4, 1, "2999-01-01T00:00:00.000Z")]);
    assert_eq!(told.len(), 1);
    assert_eq!((told[0].calls, told[0].failures), (7, 1));
    assert_eq!(
        told[0].last.as_ref().map(|l| l.reason),
        Some(Some(ReasonCode::Timeout)),
        "the newest last call is the other replica's"
    );
    // The same replica again: its counts replace, not add.
    traffic.apply_remote("0000000b", vec![theirs(5, 0, "2999-01-01T00:00:01.000Z")]);
    // A third replica adds its own.
    traffic.apply_remote("0000000c", vec![theirs(1, 1, "1999-01-01T00:00:00.000Z")]);
    let all = traffic.edge(&labels);
    assert_eq!((all.calls, all.failures), (3 + 5 + 1, 1));
    assert_eq!(
        all.last.as_ref().map(|l| l.at.as_str()),
        Some("2999-01-01T00:00:01.000Z")
    );
    let other = Labels::of(&t, "buyercorp", "helpdesk", "ticket.classify");
    assert_eq!(traffic.edge(&other).calls, 0, "another edge is untouched");
}

#[test]
fn a_busy_edge_is_counted_whole_and_sampled_into_the_inspector() {
    // The budget: twice the ring at once, the ring's size a second after.
    let mut stats = stats::EdgeStats::default();
    let start = Instant::now();
    let burst = 2 * inspector::CAPACITY;
    let taken = (0..burst + 5).filter(|_| stats.take_entry(start)).count();
    assert_eq!(taken, burst);
    assert!(!stats.take_entry(start + Duration::from_millis(10)));
    let later = start + Duration::from_secs(1);
    let taken = (0..burst).filter(|_| stats.take_entry(later)).count();
    assert_eq!(
        taken,
        inspector::CAPACITY,
        "a second refills the ring's size"
    );

    // Through the traffic: every call counted, the payload worked out
    // only for the exchanges the inspector keeps.
    let t = topology();
    let traffic = Traffic::new();
    let env = Envelope::new_root();
    let worked = std::cell::Cell::new(0);
    for ms in 0..200 {
        traffic.observe(
            &t,
            exchange(&env, "buyercorp", TrafficOutcome::Connected, None, ms),
            || {
                worked.set(worked.get() + 1);
                Payload::default()
            },
        );
    }
    let edge = Labels::of(&t, "buyercorp", "vendorcorp", "orders.query");
    assert_eq!(traffic.edge_metrics(&edge).calls, 200);
    // A slow machine refills a little while the loop runs.
    assert!(
        (burst..burst + 10).contains(&worked.get()),
        "{} payloads worked out for 200 calls",
        worked.get()
    );
    assert_eq!(traffic.inspector(&edge).len(), inspector::CAPACITY);
}
