use super::*;

async fn trail(system: &str) -> AuditTrail {
    AuditTrail::open(crate::db::memory().await.unwrap(), system)
}

/// The trail's promises on both engines: read back by trace, filtered
/// by system, counted, and never rewritten.
#[tokio::test]
async fn the_trail_keeps_its_promises_on_every_engine() {
    for t in crate::testing::engines(&[&crate::db::SCHEMA]).await {
        let engine = t.engine();
        let trail = AuditTrail::open(t.store.clone(), "hub");
        // Concurrent appends share commits and all land.
        let appends = (0..300).map(|i| {
            let trail = trail.clone();
            async move {
                let mut r = record(&format!("t{}", i % 3), Outcome::Connected);
                r.request_id = format!("r{i}");
                trail.append(r).await
            }
        });
        for done in futures_join_all(appends).await {
            done.unwrap_or_else(|e| panic!("{engine:?}: {e}"));
        }
        assert_eq!(trail.by_trace("t1").await.unwrap().len(), 100, "{engine:?}");
        assert_eq!(trail.recent(5).await.unwrap().len(), 5, "{engine:?}");
        assert_eq!(
            trail.count("r7", Outcome::Connected).await.unwrap(),
            1,
            "{engine:?}"
        );
        let reason = record("nc", Outcome::NotConnected);
        trail.append(reason).await.unwrap();
        let got = trail.by_trace("nc").await.unwrap();
        assert_eq!(got[0].reason, Some(ReasonCode::Timeout), "{engine:?}");
        assert_eq!(got[0].duration_ms, 12, "{engine:?}");
        for sql in [
            "UPDATE audit_trail SET outcome = 'replayed'",
            "DELETE FROM audit_trail",
        ] {
            assert!(
                sqlx::query(sql).execute(t.store.pool()).await.is_err(),
                "{engine:?}: {sql} must be refused"
            );
        }
        assert_eq!(
            trail
                .recent_involving("vendorcorp", 1000)
                .await
                .unwrap()
                .len(),
            301,
            "{engine:?}"
        );
    }
}

async fn futures_join_all<F>(fs: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = fs.map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.expect("task"));
    }
    out
}

fn record(trace: &str, outcome: Outcome) -> AuditRecord {
    AuditRecord {
        system: "ignored".into(),
        role: Role::Hub,
        at: now(),
        caller: "buyercorp".into(),
        provider: "vendorcorp".into(),
        capability: "orders.query".into(),
        request_id: "r1".into(),
        trace_id: trace.into(),
        outcome,
        reason: (outcome == Outcome::NotConnected).then_some(ReasonCode::Timeout),
        duration_ms: 12,
        detail: String::new(),
    }
}

#[test]
fn now_is_rfc3339_utc_with_milliseconds_and_moves_on() {
    let first = now();
    assert!(
        chrono::DateTime::parse_from_rfc3339(&first).is_ok(),
        "{first}"
    );
    assert!(first.ends_with('Z') && first.len() == 24, "{first}");
    std::thread::sleep(std::time::Duration::from_millis(2));
    assert!(now() > first, "a later millisecond is a later text");
}

#[tokio::test]
async fn append_then_read_back_by_trace() {
    let t = trail("hub").await;
    t.append(record("aaa", Outcome::Connected)).await.unwrap();
    t.append(record("bbb", Outcome::NotConnected))
        .await
        .unwrap();
    let got = t.by_trace("bbb").await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].system, "hub", "the trail names its owner");
    assert_eq!(got[0].reason, Some(ReasonCode::Timeout));
    assert_eq!(t.count("r1", Outcome::Connected).await.unwrap(), 1);
}

#[tokio::test]
async fn recent_involving_filters_by_caller_or_provider() {
    let t = trail("hub").await;
    t.append(record("aaa", Outcome::Connected)).await.unwrap();
    let mut other = record("bbb", Outcome::Connected);
    other.caller = "hub".into();
    other.provider = "helpdesk".into();
    t.append(other).await.unwrap();
    let got = t.recent_involving("vendorcorp", 10).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].trace_id, "aaa");
    let got = t.recent_involving("hub", 10).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(t.recent_involving("buyercorp", 1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_store_refuses_to_rewrite_history() {
    let t = trail("hub").await;
    t.append(record("aaa", Outcome::Connected)).await.unwrap();
    let upd = sqlx::query("UPDATE audit_trail SET outcome = 'replayed'")
        .execute(t.store.pool())
        .await;
    assert!(upd.is_err());
    let del = sqlx::query("DELETE FROM audit_trail")
        .execute(t.store.pool())
        .await;
    assert!(del.is_err());
    assert_eq!(t.by_trace("aaa").await.unwrap().len(), 1);
}

#[tokio::test]
async fn rebuild_merges_trails_in_time_order() {
    let (a, b) = (trail("buyercorp").await, trail("vendorcorp").await);
    let mut first = record("ttt", Outcome::Connected);
    first.at = "2026-01-01T00:00:00.001Z".into();
    let mut second = record("ttt", Outcome::Executed);
    second.at = "2026-01-01T00:00:00.002Z".into();
    b.append(second).await.unwrap();
    a.append(first).await.unwrap();
    let got = rebuild(&[b, a], "ttt").await.unwrap();
    assert_eq!(
        got.iter().map(|r| r.system.as_str()).collect::<Vec<_>>(),
        ["buyercorp", "vendorcorp"]
    );
}
