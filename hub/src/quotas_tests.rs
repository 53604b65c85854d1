//! Quotas: the windows' arithmetic, the counters on both engines (one
//! statement per check, concurrent callers, a refused call not counted),
//! and the topology's `rate_limit` / `daily_quota` as the loader reads and
//! refuses them.

use super::*;
use crate::registry::load::{load_str, Issue};

const EDGE: Edge<'static> = Edge {
    consumer: "buyercorp",
    provider: "vendorcorp",
    capability: "orders.query",
};

/// 2026-12-03 10:00:00 UTC: 36 000 s into its day, a multiple of 60.
const T: u64 = 1_796_292_000;

fn rate(calls: u64, seconds: u64) -> Limits {
    Limits {
        rate: Some(RateLimit { calls, seconds }),
        daily: None,
    }
}

fn daily(quota: u64) -> Limits {
    Limits {
        rate: None,
        daily: Some(quota),
    }
}

#[test]
fn windows_are_fixed_and_retry_after_is_never_early() {
    let w = Window::rate(
        RateLimit {
            calls: 5,
            seconds: 60,
        },
        T + 48,
    );
    assert_eq!((w.start, w.end()), (T, T + 60));
    assert_eq!(w.retry_after(T + 48), 12);
    // The last second of a window: at least one second.
    assert_eq!(w.retry_after(T + 59), 1);
    let day = Window::day(3, T);
    assert_eq!(day.start % DAY_SECONDS, 0, "a day starts at 00:00 UTC");
    assert_eq!(day.retry_after(T), DAY_SECONDS - 36_000);
    assert_ne!(
        Window::rate(
            RateLimit {
                calls: 1,
                seconds: DAY_SECONDS
            },
            T
        )
        .kind,
        day.kind,
        "a day-long rate limit and the daily quota count apart"
    );
}

#[test]
fn a_refusal_names_the_limit_the_edge_and_when_to_retry() {
    let over = Over::Rate {
        limit: RateLimit {
            calls: 60,
            seconds: 60,
        },
        retry_after: 12,
    };
    let nc = over.refusal(EDGE);
    assert_eq!(nc.reason, ReasonCode::NotPermitted);
    assert_eq!(
        nc.detail,
        "over the rate limit of 60 calls per 60 s for orders.query at vendorcorp; retry after 12 s"
    );
    assert_eq!(nc.retry_after, Some(12));
    let day = Over::Daily {
        quota: 10_000,
        retry_after: 3_600,
    }
    .refusal(EDGE);
    assert!(
        day.detail
            .starts_with("over the daily quota of 10000 calls"),
        "{}",
        day.detail
    );
    assert_eq!(day.retry_after, Some(3_600));
}

#[tokio::test]
async fn a_rate_limit_counts_per_consumer_and_window() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        let q = Quotas::new(db.store.clone());
        let limits = rate(3, 10);
        for i in 0..3 {
            let taken = q.take(EDGE, limits, T + 1).await.expect("store");
            assert_eq!(taken, Ok(()), "{engine:?}: call {i}");
        }
        let refused = q.take(EDGE, limits, T + 4).await.expect("store");
        assert_eq!(
            refused,
            Err(Over::Rate {
                limit: RateLimit {
                    calls: 3,
                    seconds: 10
                },
                retry_after: 6
            }),
            "{engine:?}"
        );
        // A refused call is not counted.
        let counted = q.counted(EDGE, limits, T + 4).await.expect("store");
        assert_eq!(counted, (Some(3), None), "{engine:?}");
        // Another consumer of the same edge has counters of its own.
        let hub = Edge {
            consumer: "hub",
            ..EDGE
        };
        assert_eq!(q.take(hub, limits, T + 4).await.expect("store"), Ok(()));
        // The next window starts from zero.
        assert_eq!(q.take(EDGE, limits, T + 10).await.expect("store"), Ok(()));
    }
}

#[tokio::test]
async fn a_call_the_day_refuses_gives_its_rate_slot_back() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        let q = Quotas::new(db.store.clone());
        let limits = Limits {
            rate: Some(RateLimit {
                calls: 10,
                seconds: 60,
            }),
            daily: Some(2),
        };
        for _ in 0..2 {
            assert_eq!(q.take(EDGE, limits, T).await.expect("store"), Ok(()));
        }
        let refused = q.take(EDGE, limits, T).await.expect("store");
        assert_eq!(
            refused,
            Err(Over::Daily {
                quota: 2,
                retry_after: DAY_SECONDS - 36_000
            }),
            "{engine:?}"
        );
        let counted = q.counted(EDGE, limits, T).await.expect("store");
        assert_eq!(
            counted,
            (Some(2), Some(2)),
            "{engine:?}: neither counted it"
        );
        // Tomorrow, the quota is whole again.
        let tomorrow = T + DAY_SECONDS;
        assert_eq!(q.take(EDGE, limits, tomorrow).await.expect("store"), Ok(()));
        assert_eq!(
            q.take(EDGE, daily(2), tomorrow).await.expect("store"),
            Ok(())
        );
    }
}

#[tokio::test]
async fn concurrent_callers_never_get_more_than_the_limit() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        let q = Quotas::new(db.store.clone());
        let taken = futures::future::join_all((0..24).map(|_| {
            let q = q.clone();
            async move { q.take(EDGE, rate(6, 30), T).await.expect("store") }
        }))
        .await;
        let admitted = taken.iter().filter(|t| t.is_ok()).count();
        assert_eq!(admitted, 6, "{engine:?}: {taken:?}");
    }
}

#[tokio::test]
async fn windows_that_ended_a_day_ago_are_swept() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        let q = Quotas::new(db.store.clone());
        let limits = Limits {
            rate: Some(RateLimit {
                calls: 5,
                seconds: 60,
            }),
            daily: Some(5),
        };
        q.take(EDGE, limits, T)
            .await
            .expect("store")
            .expect("admitted");
        // A day later the minute's window is old; the day's ended just now.
        let later = T + DAY_SECONDS + 120;
        assert_eq!(q.sweep(later).await.expect("sweep"), 1, "{engine:?}");
        let counted = q.counted(EDGE, limits, T).await.expect("store");
        assert_eq!(counted, (Some(0), Some(1)), "{engine:?}");
        assert_eq!(
            q.sweep(later + DAY_SECONDS).await.expect("sweep"),
            1,
            "{engine:?}"
        );
    }
}

/// A valid topology with one limited rule; tests break one line of it.
const TOPOLOGY: &str = "\
version: 1
systems:
  - id: alpha
    name: Alpha
    base_url: http://127.0.0.1:3101
    token_env: WS_TOKEN_ALPHA
    ip_allowlist: [127.0.0.1/32]
    provides: [cap.one]
  - id: beta
    name: Beta
    base_url: http://127.0.0.1:3102
    token_env: WS_TOKEN_BETA
    ip_allowlist: [127.0.0.1/32]
capabilities:
  - id: cap.one
    kind: consult
    response_schema:
      type: object
rules:
  - capability: cap.one
    provider: alpha
    consumers: [beta]
    rate_limit: { calls: 60, seconds: 60 }
    daily_quota: 10000
  - capability: cap.one
    provider: alpha
    consumers: [hub]
";

fn issues_of(text: &str) -> Vec<Issue> {
    match load_str("config/topology.yaml", text) {
        Ok(_) => panic!("expected the file to be rejected"),
        Err(e) => e.issues().to_vec(),
    }
}

#[test]
fn a_rule_s_limits_apply_to_each_consumer_it_names() {
    let loaded = match load_str("config/topology.yaml", TOPOLOGY) {
        Ok(l) => l,
        Err(e) => panic!("{e}"),
    };
    let t = &loaded.topology;
    assert_eq!(
        t.limits("beta", "cap.one", "alpha"),
        Some(Limits {
            rate: Some(RateLimit {
                calls: 60,
                seconds: 60
            }),
            daily: Some(10_000),
        })
    );
    assert_eq!(
        t.limits("hub", "cap.one", "alpha"),
        None,
        "no limit, no count"
    );
    assert_eq!(t.limits("beta", "cap.nope", "alpha"), None);
}

#[test]
fn zero_limits_are_refused_where_they_are_written() {
    for (from, to, line, field) in [
        (
            "{ calls: 60, seconds: 60 }",
            "{ calls: 0, seconds: 60 }",
            23,
            "rules[0].rate_limit.calls",
        ),
        (
            "{ calls: 60, seconds: 60 }",
            "{ calls: 60, seconds: 0 }",
            23,
            "rules[0].rate_limit.seconds",
        ),
        (
            "daily_quota: 10000",
            "daily_quota: 0",
            24,
            "rules[0].daily_quota",
        ),
    ] {
        let issues = issues_of(&TOPOLOGY.replace(from, to));
        assert_eq!(issues.len(), 1, "{field}: {issues:#?}");
        assert_eq!(
            (issues[0].line, issues[0].field.as_str()),
            (line, field),
            "{issues:#?}"
        );
        assert_eq!(issues[0].message, "must be greater than 0");
    }
}

#[test]
fn limits_are_numbers_and_nothing_else() {
    for (to, field) in [
        (
            "{ calls: \"60\", seconds: 60 }",
            "rules[0].rate_limit.calls",
        ),
        (
            "{ calls: 60, seconds: 60, burst: 5 }",
            "rules[0].rate_limit",
        ),
        ("{ calls: -1, seconds: 60 }", "rules[0].rate_limit.calls"),
    ] {
        let issues = issues_of(&TOPOLOGY.replace("{ calls: 60, seconds: 60 }", to));
        assert_eq!(issues.len(), 1, "{to}: {issues:#?}");
        assert_eq!(issues[0].line, 23, "{to}: {issues:#?}");
        assert!(issues[0].field.starts_with(field), "{to}: {issues:#?}");
    }
}
