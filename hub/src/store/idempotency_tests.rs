use super::*;
use serde_json::json;

fn key(id: &str) -> IdempotencyKey {
    IdempotencyKey {
        caller: "helpdesk".into(),
        provider: "buyercorp".into(),
        capability: "budget.consult".into(),
        request_id: id.into(),
    }
}

#[tokio::test]
async fn answers_survive_reopening_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = exchange::db::Location::File(dir.path().join("hub.db"));
    {
        let store = IdempotencyStore::new(crate::store::open(&path).await.expect("open"));
        store
            .put(
                &key("r1"),
                "me",
                "d1",
                &json!({"answer": "first"}),
                Some(&json!({"message": {}})),
                "t1",
            )
            .await
            .expect("put");
        store.store.close().await;
    }
    let store = IdempotencyStore::new(crate::store::open(&path).await.expect("reopen"));
    let got = store.get(&key("r1")).await.expect("get").expect("stored");
    assert_eq!(got.answer, json!({"answer": "first"}));
    assert_eq!(got.trace_id, "t1");
}

/// The store's promises on both engines: the first answer wins, a key
/// is per caller, exactly one claim wins, a dead claim is taken over
/// once, an answer releases its claim.
#[tokio::test]
async fn one_claim_wins_and_the_first_answer_stays_on_every_engine() {
    for t in crate::store::test_stores().await {
        let engine = t.engine();
        let store = IdempotencyStore::new(t.store.clone());
        // Eight concurrent claims of one key: one wins.
        let claims = (0..8).map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.claim(&key("r1"), &format!("p{i}")).await })
        });
        let mut won = Vec::new();
        for (i, c) in claims.enumerate() {
            if c.await.expect("task").expect("claim") == Claim::Won {
                won.push(format!("p{i}"));
            }
        }
        assert_eq!(won.len(), 1, "{engine:?}: exactly one claim wins");
        let holder = won[0].clone();
        assert_eq!(
            store.claim(&key("r1"), "late").await.expect("claim"),
            Claim::HeldBy(holder.clone()),
            "{engine:?}"
        );
        // Its process died: two take over, one wins.
        let a = store.take_over(&key("r1"), &holder, "a").await.expect("a");
        let b = store.take_over(&key("r1"), &holder, "b").await.expect("b");
        assert!(a ^ b, "{engine:?}: one take-over wins ({a}, {b})");
        store
            .put(
                &key("r1"),
                "a",
                "d1",
                &json!({"answer": "first"}),
                Some(&json!({"m": 1})),
                "t1",
            )
            .await
            .expect("put");
        assert_eq!(
            store.claim(&key("r1"), "c").await.expect("claim"),
            Claim::Won,
            "{engine:?}: the answer released the claim"
        );
        store.release(&key("r1"), "c").await.expect("release");
        store
            .put(
                &key("r1"),
                "x",
                "d2",
                &json!({"answer": "second"}),
                None,
                "t2",
            )
            .await
            .expect("put");
        let got = store.get(&key("r1")).await.expect("get").expect("stored");
        assert_eq!(
            got.answer,
            json!({"answer": "first"}),
            "{engine:?}: first answer wins"
        );
        assert_eq!(got.trace_id, "t1");
        assert_eq!(got.input_digest.as_deref(), Some("d1"));
        assert_eq!(got.reply, Some(json!({"m": 1})));
        assert!(store.get(&key("r2")).await.expect("get").is_none());
        let mut other_caller = key("r1");
        other_caller.caller = "hub".into();
        assert!(
            store.get(&other_caller).await.expect("get").is_none(),
            "{engine:?}"
        );
    }
}

#[test]
fn the_digest_ignores_key_order_and_sees_every_value() {
    let a = input_digest(&json!({"question": "q", "opts": {"x": 1, "y": [1, 2]}}));
    let b = input_digest(&json!({"opts": {"y": [1, 2], "x": 1}, "question": "q"}));
    assert_eq!(a, b);
    assert_eq!(a.len(), 64);
    assert_ne!(
        a,
        input_digest(&json!({"question": "q", "opts": {"x": 1, "y": [2, 1]}}))
    );
    assert_ne!(
        a,
        input_digest(&json!({"question": "Q", "opts": {"x": 1, "y": [1, 2]}}))
    );
}

#[tokio::test]
async fn a_file_from_before_migrations_is_adopted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.db");
    {
        let old = exchange::db::open_sqlite(&path).await.expect("open");
        // The tables as the hub's code made them before migrations.
        for sql in [
                "CREATE TABLE idempotency (caller TEXT NOT NULL, provider TEXT NOT NULL,
                    capability TEXT NOT NULL, request_id TEXT NOT NULL, answer TEXT NOT NULL,
                    trace_id TEXT NOT NULL, created_at TEXT NOT NULL,
                    PRIMARY KEY (caller, provider, capability, request_id))",
                "INSERT INTO idempotency VALUES ('helpdesk', 'buyercorp', 'budget.consult', 'old', '{}', 't0', 'then')",
                "CREATE TABLE edges (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
                    consumer TEXT NOT NULL, provider TEXT NOT NULL, capability TEXT NOT NULL,
                    created_at TEXT NOT NULL)",
            ] {
                sqlx::query(sql).execute(&old).await.expect("old schema");
            }
        old.close().await;
    }
    let store = crate::store::open(&exchange::db::Location::File(path))
        .await
        .expect("adopts");
    let marks: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM hub_marks WHERE name = 'edges_seeded'")
            .fetch_one(store.pool())
            .await
            .expect("marks");
    assert_eq!(marks, 1, "edges made by the old code count as seeded");
    let store = IdempotencyStore::new(store);
    let old = store.get(&key("old")).await.expect("get").expect("row");
    assert_eq!(
        old.input_digest, None,
        "old rows keep replaying for any input"
    );
    assert_eq!(old.reply, None);
}
