//! The cluster's pieces against a real PostgreSQL: liveness by lock,
//! notifications in order, the shared probe rows.

use super::*;
use sqlx::postgres::PgListener;

#[test]
fn instance_ids_are_their_own_lock_keys() {
    for _ in 0..100 {
        let (id, key) = new_instance();
        assert_eq!(id.len(), 8);
        assert_eq!(lock_key(&id), Some(key), "{id}");
    }
    assert_eq!(lock_key("ffffffff"), Some(-1));
    for bad in ["", "xyz", "123456789", "1234567g"] {
        assert_eq!(lock_key(bad), None, "{bad}");
    }
}

#[test]
fn notices_and_stored_statuses_round_trip() {
    let n = Notice {
        from: "0000abcd".into(),
        change: Change::Call {
            system: "vendorcorp".into(),
            failure: Some(Failure {
                reason: ReasonCode::PeerUnreachable,
                detail: "refused".into(),
            }),
        },
    };
    let text = serde_json::to_string(&n).expect("json");
    assert!(text.contains(r#""kind":"call""#), "{text}");
    assert!(text.contains("PEER_UNREACHABLE"), "{text}");
    assert_eq!(serde_json::from_str::<Notice>(&text).expect("back"), n);
    let degraded = PeerStatus::Degraded {
        reason: ReasonCode::Timeout,
        detail: "x".repeat(1000),
        since: chrono::Utc::now(),
    };
    let stored = StoredStatus::from(&degraded);
    let StoredStatus::Degraded { detail, .. } = &stored else {
        panic!("{stored:?}")
    };
    assert!(detail.len() <= MAX_DETAIL + 4, "clipped: {}", detail.len());
    assert_eq!(stored.status().reason(), Some(ReasonCode::Timeout));
}

#[tokio::test]
async fn alone_only_this_process_is_alive() {
    let c = Cluster::solo();
    assert!(c.is_alive(c.instance()).await);
    assert!(!c.is_alive("0000abcd").await, "an earlier run of this hub");
    assert!(!c.is_shared());
}

/// Two replicas on one database: each sees the other alive until it is
/// gone; what one announces reaches a listener, in order, naming it.
#[tokio::test]
async fn replicas_see_each_other_live_and_die() {
    if !exchange::testing::postgres_enabled() {
        return;
    }
    let db = exchange::testing::postgres(&[&exchange::db::SCHEMA, &crate::store::SCHEMA]).await;
    let a = Cluster::join(&db.store).await.expect("a joins");
    let b = Cluster::join(&db.store).await.expect("b joins");
    assert!(a.is_shared() && b.is_shared());
    assert_ne!(a.instance(), b.instance());
    assert!(a.is_alive(b.instance()).await);
    assert!(b.is_alive(a.instance()).await);
    assert!(!a.is_alive("0000abcd").await, "nobody holds that lock");

    let Location::Postgres(url) = db.store.location().clone() else {
        panic!("a PostgreSQL store")
    };
    let mut listener = PgListener::connect(&url).await.expect("listener");
    listener.listen(CHANNEL).await.expect("listen");
    a.announce(Change::Edges);
    a.announce(Change::Inbox);
    for want in [Change::Edges, Change::Inbox] {
        let n = tokio::time::timeout(Duration::from_secs(5), listener.recv())
            .await
            .expect("in time")
            .expect("a notification");
        let notice: Notice = serde_json::from_str(n.payload()).expect("a notice");
        assert_eq!((notice.from.as_str(), notice.change), (a.instance(), want));
    }

    // A probe result shared by one is read back by the other.
    let snapshot = HealthSnapshot {
        probe: PeerStatus::Degraded {
            reason: ReasonCode::PeerUnreachable,
            detail: "connection refused".into(),
            since: chrono::Utc::now(),
        },
        card: Some(Arc::new(ProviderCard {
            version: exchange::envelope::A2aVersion::V1_0,
            card: serde_json::json!({"name": "VendorCorp"}),
            signature: exchange::jws::CardSignature::Verified { kid: "k1".into() },
            keys: None,
        })),
        plane: Some(PeerStatus::Healthy),
    };
    a.probed("vendorcorp", snapshot.clone());
    let n = tokio::time::timeout(Duration::from_secs(5), listener.recv())
        .await
        .expect("in time")
        .expect("a notification");
    assert!(
        n.payload().contains(r#""kind":"health""#),
        "{}",
        n.payload()
    );
    let read = read_health(&db.store, "vendorcorp")
        .await
        .expect("read")
        .expect("a row");
    assert_eq!(read.probe.reason(), Some(ReasonCode::PeerUnreachable));
    assert_eq!(read.card, snapshot.card);
    assert_eq!(read.plane, Some(PeerStatus::Healthy));

    // B ends (its process would exit): its lock goes with its connection.
    let gone = b.instance().to_string();
    drop(b);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while a.is_alive(&gone).await {
        assert!(tokio::time::Instant::now() < deadline, "b still alive");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
