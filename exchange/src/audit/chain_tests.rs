//! The tamper-evident trail: the hash's definition, chaining under
//! concurrent writers (on both engines, two stores on one database as two
//! replicas), checkpoints, what verification names for each kind of
//! tampering, and exports.

use super::anchor::{self, AnchorFile};
use super::chain::{self, ChainHash, Content, GENESIS};
use super::checkpoint;
use super::export;
use super::verify::{self, Problem};
use super::*;
use crate::jws::SigningKey;
use jsonwebtoken::jwk::JwkSet;
use sha2::Digest as _;

fn record(i: usize, caller: &str, provider: &str) -> AuditRecord {
    AuditRecord {
        system: "ignored".into(),
        role: Role::Hub,
        at: now(),
        caller: caller.into(),
        provider: provider.into(),
        capability: "orders.query".into(),
        request_id: format!("r{i}"),
        trace_id: format!("t{i}"),
        outcome: Outcome::Connected,
        reason: None,
        duration_ms: 7,
        detail: String::new(),
    }
}

fn keys_of(key: &SigningKey) -> JwkSet {
    serde_json::from_value(serde_json::json!({"keys": [key.public_jwk()]})).expect("a JWKS")
}

async fn seq_of(store: &Store, request_id: &str) -> i64 {
    sqlx::query_scalar("SELECT seq FROM audit_trail WHERE request_id = $1")
        .bind(request_id)
        .fetch_one(store.pool())
        .await
        .expect("the row")
}

/// The digest is SHA-256 of the JCS form of the twelve members, and the
/// link SHA-256 of the two raw hashes: what NOTES documents, computed here
/// by hand.
#[test]
fn the_hash_is_the_documented_one() {
    let mut r = record(1, "buyercorp", "vendorcorp");
    r.system = "hub".into();
    r.at = "2026-01-01T00:00:00.000Z".into();
    r.reason = Some(ReasonCode::Timeout);
    r.outcome = Outcome::NotConnected;
    r.detail = "é \"quoted\"".into();
    let canonical = concat!(
        r#"{"at":"2026-01-01T00:00:00.000Z","caller":"buyercorp","capability":"orders.query","#,
        r#""detail":"é \"quoted\"","duration_ms":7,"outcome":"not_connected","#,
        r#""provider":"vendorcorp","reason":"TIMEOUT","request_id":"r1","role":"hub","#,
        r#""system":"hub","trace_id":"t1"}"#
    );
    let digest = Content::of(&r).digest().expect("a digest");
    assert_eq!(digest.0, <[u8; 32]>::from(sha2::Sha256::digest(canonical)));
    // The export's JSON of the record gives the same digest.
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(
        Content::from_json(&json).and_then(|c| c.digest().ok()),
        Some(digest)
    );
    let mut both = GENESIS.0.to_vec();
    both.extend_from_slice(&digest.0);
    assert_eq!(
        chain::link(&GENESIS, &digest).0,
        <[u8; 32]>::from(sha2::Sha256::digest(&both))
    );
    assert_eq!(ChainHash::parse(&digest.hex()), Some(digest));
    assert_eq!(ChainHash::parse("zz"), None);
}

/// The writer task, direct transactions (what an inbox decision does) and
/// a second store on the same database (another replica, or process)
/// append to one chain at once: it verifies, in seq order, with its
/// checkpoints; a checkpoint is skipped while the head does not move.
#[tokio::test]
async fn concurrent_writers_make_one_chain_that_verifies_on_every_engine() {
    for t in crate::testing::engines(&[&crate::db::SCHEMA]).await {
        let engine = t.engine();
        let other = Store::open(t.store.location())
            .await
            .expect("a second store");
        let (a, b) = (
            AuditTrail::open(t.store.clone(), "hub"),
            AuditTrail::open(other.clone(), "hub"),
        );
        let key = SigningKey::generate("k1").expect("a key");
        let mut tasks = Vec::new();
        for i in 0..240 {
            let trail = if i % 2 == 0 { a.clone() } else { b.clone() };
            let direct = other.clone();
            tasks.push(tokio::spawn(async move {
                let mut r = record(i, "buyercorp", "vendorcorp");
                if i % 10 == 0 {
                    // An inbox decision's way: inside a transaction of its own.
                    r.system = "hub".into();
                    let mut tx = direct.pool().begin().await?;
                    insert_on(&mut tx, [&r]).await?;
                    tx.commit().await?;
                    Ok::<(), AuditError>(())
                } else {
                    trail.append(r).await
                }
            }));
        }
        for (i, t) in tasks.into_iter().enumerate() {
            if i == 120 {
                checkpoint::checkpoint(&other, "hub", &key)
                    .await
                    .unwrap_or_else(|e| panic!("{engine:?}: {e}"));
            }
            t.await
                .expect("task")
                .unwrap_or_else(|e| panic!("{engine:?}: {e}"));
        }
        a.append(record(240, "buyercorp", "vendorcorp"))
            .await
            .expect("append");
        let made = checkpoint::checkpoint(&t.store, "hub", &key)
            .await
            .expect("checkpoint");
        assert!(made.is_some(), "{engine:?}: the head moved");
        let again = checkpoint::checkpoint(&t.store, "hub", &key)
            .await
            .expect("checkpoint");
        assert!(again.is_none(), "{engine:?}: nothing new, no checkpoint");

        let v = verify::verify_store(&t.store, None, &keys_of(&key))
            .await
            .expect("verify");
        assert_eq!(v.broken, None, "{engine:?}");
        assert_eq!(v.records(), 241, "{engine:?}");
        assert_eq!(v.chains.len(), 1, "{engine:?}");
        let report = &v.chains[0];
        assert!(report.checkpoints >= 1, "{engine:?}: {report}");
        assert_eq!(report.uncovered, 0, "{engine:?}: {report}");
        assert_eq!(report.last_checkpoint, report.last_seq, "{engine:?}");

        // Another key does not verify the checkpoints.
        let stranger = SigningKey::generate("k1").expect("a key");
        let v = verify::verify_store(&t.store, None, &keys_of(&stranger))
            .await
            .expect("verify");
        assert!(
            matches!(
                v.broken.as_ref().map(|b| &b.problem),
                Some(Problem::CheckpointSignature(_))
            ),
            "{engine:?}: {:?}",
            v.broken
        );
        other.close().await;
    }
}

/// The store keeps the head: on both engines a chained row whose
/// `prev_hash` is not its chain's head is refused as a whole statement
/// (nothing written, the head unmoved), one linked from the head is
/// admitted and moves it; a writer whose remembered head went stale
/// (another store appended) falls back to taking the head and loses
/// nothing.
#[tokio::test]
async fn the_store_refuses_a_forked_link_and_a_stale_writer_takes_the_head() {
    for t in crate::testing::engines(&[&crate::db::SCHEMA]).await {
        let engine = t.engine();
        let trail = AuditTrail::open(t.store.clone(), "hub");
        for i in 0..3 {
            trail.append(record(i, "a", "b")).await.expect("append");
        }
        let before = chain::head(&t.store, "hub")
            .await
            .expect("head")
            .expect("a head");
        assert_eq!(before.count, 3, "{engine:?}");

        // Two rows in one statement, the second forking from GENESIS.
        let mut a = record(10, "a", "b");
        a.system = "hub".into();
        let mut b = record(11, "a", "b");
        b.system = "hub".into();
        let digest = |r: &AuditRecord| Content::of(r).digest().expect("digest");
        let first = chain::link(&before.hash, &digest(&a));
        let forked = chain::link(&GENESIS, &digest(&b));
        let insert = |rows: &[(&AuditRecord, ChainHash, ChainHash)]| {
            let values: Vec<String> = (0..rows.len())
                .map(|i| {
                    let n = i * 5;
                    format!(
                        "('hub', 'hub', ${}, 'a', 'b', 'orders.query', ${}, ${}, 'connected',
                          NULL, 7, '', ${}, ${})",
                        n + 1,
                        n + 2,
                        n + 3,
                        n + 4,
                        n + 5
                    )
                })
                .collect();
            let sql = format!(
                "INSERT INTO audit_trail (system, role, at, caller, provider, capability,
                    request_id, trace_id, outcome, reason, duration_ms, detail, prev_hash, hash)
                 VALUES {}",
                values.join(", ")
            );
            let binds: Vec<String> = rows
                .iter()
                .flat_map(|(r, prev, hash)| {
                    [
                        r.at.clone(),
                        r.request_id.clone(),
                        r.trace_id.clone(),
                        prev.hex(),
                        hash.hex(),
                    ]
                })
                .collect();
            (sql, binds)
        };
        let run = |(sql, binds): (String, Vec<String>)| {
            let store = t.store.clone();
            async move {
                let mut query = sqlx::query(&sql);
                for b in &binds {
                    query = query.bind(b);
                }
                query.execute(store.pool()).await
            }
        };
        let refused = run(insert(&[(&a, before.hash, first), (&b, GENESIS, forked)]))
            .await
            .expect_err("a forked link is refused");
        assert!(chain::head_moved(&refused), "{engine:?}: {refused}");
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM audit_trail")
            .fetch_one(t.store.pool())
            .await
            .expect("count");
        assert_eq!(n, 3, "{engine:?}: the whole statement is refused");
        let same = chain::head(&t.store, "hub")
            .await
            .expect("head")
            .expect("a head");
        assert_eq!(same, before, "{engine:?}: the head did not move");

        // Linked from the head: admitted, and the head follows it.
        run(insert(&[(&a, before.hash, first)]))
            .await
            .expect("a row linked from the head");
        let moved = chain::head(&t.store, "hub")
            .await
            .expect("head")
            .expect("a head");
        assert_eq!(moved.hash, first, "{engine:?}");
        assert_eq!(moved.count, 4, "{engine:?}");
        assert_eq!(moved.seq, seq_of(&t.store, "r10").await, "{engine:?}");

        // The writer still believes the head it left: its next batch is
        // refused by the store, then written after taking the head.
        for i in 20..23 {
            trail.append(record(i, "a", "b")).await.expect("append");
        }
        let v = verify::verify_store(&t.store, None, &JwkSet { keys: vec![] })
            .await
            .expect("verify");
        assert_eq!(v.broken, None, "{engine:?}");
        assert_eq!(v.records(), 7, "{engine:?}");
        let last = chain::head(&t.store, "hub")
            .await
            .expect("head")
            .expect("a head");
        assert_eq!(last.count, 7, "{engine:?}");
        assert_eq!(last.seq, seq_of(&t.store, "r22").await, "{engine:?}");
    }
}

/// Rows from before the chain are counted, not verified; one inserted
/// outside the chain after it began is named.
#[tokio::test]
async fn rows_before_the_chain_are_counted_and_a_row_outside_it_is_named() {
    let store = crate::db::memory().await.expect("store");
    let plain = "INSERT INTO audit_trail (system, role, at, caller, provider, capability,
        request_id, trace_id, outcome, reason, duration_ms, detail)
        VALUES ('hub', 'hub', 'x', 'a', 'b', 'c', $1, 't', 'connected', NULL, 1, '')";
    for id in ["old1", "old2"] {
        sqlx::query(plain)
            .bind(id)
            .execute(store.pool())
            .await
            .expect("insert");
    }
    let trail = AuditTrail::open(store.clone(), "hub");
    for i in 0..3 {
        trail.append(record(i, "a", "b")).await.expect("append");
    }
    let none = JwkSet { keys: vec![] };
    let v = verify::verify_store(&store, None, &none)
        .await
        .expect("verify");
    assert_eq!(v.broken, None);
    assert_eq!(v.chains[0].unchained_before, 2);
    assert_eq!(v.chains[0].records, 3);
    assert!(v.chains[0].to_string().contains("after 2 unchained rows"));
    sqlx::query(plain)
        .bind("forged")
        .execute(store.pool())
        .await
        .expect("insert");
    trail.append(record(9, "a", "b")).await.expect("append");
    let v = verify::verify_store(&store, None, &none)
        .await
        .expect("verify");
    let broken = v.broken.expect("broken");
    assert_eq!(broken.problem, Problem::Unchained);
    assert_eq!(broken.request_id.as_deref(), Some("forged"));
}

/// Each kind of tampering, named at its row: content edited, a row
/// deleted (a gap), the last row deleted, a row a checkpoint signs
/// deleted, `prev_hash` edited, a checkpoint edited.
#[tokio::test]
async fn verification_names_the_first_broken_link() {
    for tamper in [
        "content",
        "delete",
        "delete-last",
        "delete-checkpointed",
        "prev_hash",
        "checkpoint",
    ] {
        let store = crate::db::memory().await.expect("store");
        let trail = AuditTrail::open(store.clone(), "hub");
        for i in 0..20 {
            trail.append(record(i, "a", "b")).await.expect("append");
        }
        let key = SigningKey::generate("k").expect("key");
        checkpoint::checkpoint(&store, "hub", &key)
            .await
            .expect("checkpoint");
        for i in 20..25 {
            trail.append(record(i, "a", "b")).await.expect("append");
        }
        let keys = keys_of(&key);
        let clean = verify::verify_store(&store, None, &keys)
            .await
            .expect("verify");
        assert_eq!(clean.broken, None, "{tamper}");
        assert_eq!(clean.chains[0].uncovered, 5);
        for sql in [
            "DROP TRIGGER audit_trail_no_update",
            "DROP TRIGGER audit_trail_no_delete",
            "DROP TRIGGER audit_checkpoints_no_update",
        ] {
            sqlx::query(sql)
                .execute(store.pool())
                .await
                .expect("drop trigger");
        }
        let (seq7, seq8) = (seq_of(&store, "r7").await, seq_of(&store, "r8").await);
        let (sql, want_seq, want_id) = match tamper {
            "content" => (
                "UPDATE audit_trail SET outcome = 'not_connected' WHERE request_id = 'r7'",
                seq7,
                Some("r7"),
            ),
            "delete" => (
                "DELETE FROM audit_trail WHERE request_id = 'r7'",
                seq8,
                Some("r8"),
            ),
            "delete-last" => (
                "DELETE FROM audit_trail WHERE request_id = 'r24'",
                seq_of(&store, "r24").await,
                None,
            ),
            "delete-checkpointed" => (
                "DELETE FROM audit_trail WHERE request_id = 'r19'",
                seq_of(&store, "r19").await,
                None,
            ),
            "prev_hash" => (
                "UPDATE audit_trail SET prev_hash = hash WHERE request_id = 'r7'",
                seq7,
                Some("r7"),
            ),
            _ => (
                "UPDATE audit_checkpoints SET at = '2000-01-01T00:00:00.000Z'",
                seq_of(&store, "r19").await,
                Some("r19"),
            ),
        };
        sqlx::query(sql).execute(store.pool()).await.expect(sql);
        let v = verify::verify_store(&store, None, &keys)
            .await
            .expect("verify");
        let broken = v.broken.unwrap_or_else(|| panic!("{tamper}: not found"));
        assert_eq!(broken.seq, want_seq, "{tamper}: {broken}");
        assert_eq!(broken.request_id.as_deref(), want_id, "{tamper}: {broken}");
        let ok = match tamper {
            "content" => broken.problem == Problem::ContentChanged,
            "delete" => {
                broken.problem
                    == Problem::RowMissing {
                        after: Some(seq7 - 1),
                    }
            }
            "delete-last" => matches!(broken.problem, Problem::HeadMismatch { .. }),
            "delete-checkpointed" => broken.problem == Problem::CheckpointWithoutRecord,
            "prev_hash" => matches!(broken.problem, Problem::PrevHashDoesNotLink { .. }),
            _ => matches!(broken.problem, Problem::CheckpointSignature(_)),
        };
        assert!(ok, "{tamper}: {broken}");
    }
}

/// An export shows the counterparty's records in full and the others as
/// hashes; it verifies from the directory alone, and an edited record is
/// named; a last record no checkpoint covers is refused.
#[tokio::test]
async fn an_export_verifies_alone_and_names_an_edited_record() {
    let store = crate::db::memory().await.expect("store");
    let trail = AuditTrail::open(store.clone(), "hub");
    let key = SigningKey::generate("k").expect("key");
    let jwks = serde_json::json!({"keys": [key.public_jwk()]});
    let pairs = [
        ("helpdesk", "vendorcorp"),
        ("buyercorp", "vendorcorp"),
        ("helpdesk", "buyercorp"),
    ];
    for i in 0..30 {
        // buyercorp's first record is r11; checkpoints every 10 records.
        let (c, p) = if i > 10 { pairs[i % 3] } else { pairs[0] };
        trail.append(record(i, c, p)).await.expect("append");
        if i % 10 == 9 {
            checkpoint::checkpoint(&store, "hub", &key)
                .await
                .expect("checkpoint");
        }
    }
    trail
        .append(record(30, "buyercorp", "vendorcorp"))
        .await
        .expect("append");
    let dir = tempfile::tempdir().expect("dir");
    let out = dir.path().join("export");
    let refused = export::export(&store, None, "buyercorp", &jwks, &out).await;
    assert!(
        matches!(refused, Err(export::ExportError::NotCovered { .. })),
        "{refused:?}"
    );
    checkpoint::checkpoint(&store, "hub", &key)
        .await
        .expect("checkpoint");
    let manifest = export::export(&store, None, "buyercorp", &jwks, &out)
        .await
        .expect("export");
    assert_eq!(manifest.anchor.seq, seq_of(&store, "r9").await);
    assert_eq!(manifest.anchor.count, Some(10), "the anchor counts r0..r9");
    let signed = std::fs::read_to_string(out.join("checkpoints.jsonl")).expect("checkpoints");
    assert!(
        signed.lines().all(|l| l.contains(r#""count":"#)),
        "{signed}"
    );
    assert_eq!(manifest.last_seq, seq_of(&store, "r30").await);
    let v = export::verify_dir(&out, None).expect("verify");
    assert_eq!(v.broken, None);
    assert_eq!(v.full, manifest.full);
    let lines = std::fs::read_to_string(out.join("records.jsonl")).expect("records");
    for line in lines.lines() {
        let l: export::Line = serde_json::from_str(line).expect("a line");
        match &l.record {
            Some(r) => assert!(r["caller"] == "buyercorp" || r["provider"] == "buyercorp"),
            None => assert!(!line.contains("helpdesk") && !line.contains("request_id")),
        }
    }
    // One of buyercorp's records edited in the export.
    let edited = lines.replacen(r#""outcome":"connected""#, r#""outcome":"replayed""#, 1);
    std::fs::write(out.join("records.jsonl"), edited).expect("write");
    let v = export::verify_dir(&out, None).expect("verify");
    let broken = v.broken.expect("broken");
    assert_eq!(broken.problem, Problem::ContentChanged, "{broken}");
    assert_eq!(broken.seq, seq_of(&store, "r11").await, "{broken}");
    assert_eq!(broken.request_id.as_deref(), Some("r11"));
}

/// `n` records appended to a fresh in-memory store's `hub` chain.
async fn chain_of(n: usize) -> (Store, AuditTrail) {
    let store = crate::db::memory().await.expect("store");
    let trail = AuditTrail::open(store.clone(), "hub");
    for i in 0..n {
        trail.append(record(i, "a", "b")).await.expect("append");
    }
    (store, trail)
}

/// A checkpoint signed by `key` of what the caller says, stored as the
/// hub would (a forger holding the key, or a checkpoint from before
/// counts).
async fn store_signed(store: &Store, key: &SigningKey, seq: i64, hash: &str, count: Option<u64>) {
    let at = now();
    let payload = checkpoint::payload("hub", seq, hash, &at, count).expect("payload");
    let (protected, signature) = key
        .sign_detached(serde_json::json!({}), &payload)
        .expect("sign");
    sqlx::query(
        "INSERT INTO audit_checkpoints (system, seq, hash, at, kid, signature, count)
         VALUES ('hub', $1, $2, $3, $4, $5, $6)",
    )
    .bind(seq)
    .bind(hash)
    .bind(at)
    .bind(key.kid())
    .bind(format!("{protected}..{signature}"))
    .bind(count.map(|n| n as i64))
    .execute(store.pool())
    .await
    .expect("insert a checkpoint");
}

async fn hash_of(store: &Store, request_id: &str) -> String {
    sqlx::query_scalar("SELECT hash FROM audit_trail WHERE request_id = $1")
        .bind(request_id)
        .fetch_one(store.pool())
        .await
        .expect("the row")
}

/// The head counts its chain's records and a checkpoint signs the count;
/// a checkpoint from before counts (no `count`) still verifies; a count
/// that disagrees with the chain is named, in the head or a checkpoint.
#[tokio::test]
async fn checkpoints_sign_the_chains_count_and_old_ones_without_it_still_verify() {
    let (store, trail) = chain_of(12).await;
    let key = SigningKey::generate("k").expect("key");
    let keys = keys_of(&key);
    // A checkpoint as signed before counts existed, at r4.
    let (seq4, hash4) = (seq_of(&store, "r4").await, hash_of(&store, "r4").await);
    store_signed(&store, &key, seq4, &hash4, None).await;
    let made = checkpoint::checkpoint(&store, "hub", &key)
        .await
        .expect("checkpoint")
        .expect("the head moved");
    assert_eq!(made.count, Some(12));
    let head = chain::head(&store, "hub")
        .await
        .expect("head")
        .expect("a head");
    assert_eq!((head.seq, head.count), (made.seq, 12));
    let listed = checkpoint::list(&store, "hub", i64::MIN, i64::MAX)
        .await
        .expect("list");
    assert_eq!(
        listed.iter().map(|c| c.count).collect::<Vec<_>>(),
        [None, Some(12)]
    );
    let v = verify::verify_store(&store, None, &keys)
        .await
        .expect("verify");
    assert_eq!(v.broken, None);
    assert_eq!(v.checkpoints(), 2, "the old checkpoint verifies too");

    // A checkpoint whose count is not the chain's (signed with the key).
    trail.append(record(12, "a", "b")).await.expect("append");
    let (seq12, hash12) = (seq_of(&store, "r12").await, hash_of(&store, "r12").await);
    store_signed(&store, &key, seq12, &hash12, Some(12)).await;
    let broken = verify::verify_store(&store, None, &keys)
        .await
        .expect("verify")
        .broken
        .expect("broken");
    assert_eq!(broken.seq, seq12);
    assert_eq!(
        broken.problem,
        Problem::CheckpointCount {
            signed: 12,
            chain: 13
        },
        "{broken}"
    );
    assert!(broken
        .to_string()
        .contains("signs 12 records up to this seq, the chain holds 13"));

    // A head that counts otherwise than its chain.
    let (store, _) = chain_of(3).await;
    sqlx::query("UPDATE audit_chain_head SET count = 5")
        .execute(store.pool())
        .await
        .expect("edit the head");
    let broken = verify::verify_store(&store, None, &keys)
        .await
        .expect("verify")
        .broken
        .expect("broken");
    assert_eq!(broken.problem, Problem::HeadCount { head: 5, chain: 3 });
}

/// The anchor file: what was appended reads back in order; a last line
/// the writer did not finish is left out and said so; any other line that
/// is not a checkpoint is named.
#[tokio::test]
async fn an_anchor_reads_back_what_was_appended() {
    let (store, _) = chain_of(3).await;
    let key = SigningKey::generate("k").expect("key");
    let made = checkpoint::checkpoint(&store, "hub", &key)
        .await
        .expect("checkpoint")
        .expect("made");
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("anchor.jsonl");
    let file = AnchorFile::open(&path).expect("open");
    file.append(&made).expect("append");
    file.append(&made).expect("append");
    let read = anchor::read(&path).expect("read");
    assert_eq!(read.checkpoints, [made.clone(), made.clone()]);
    assert_eq!(read.of("hub"), std::slice::from_ref(&made), "one per seq");
    assert!(!read.torn_tail);
    std::fs::write(
        &path,
        format!(
            "{}\n{{\"system\":\"hub\",\"se",
            serde_json::to_string(&made).expect("json")
        ),
    )
    .expect("write");
    let read = anchor::read(&path).expect("read");
    assert_eq!((read.checkpoints.len(), read.torn_tail), (1, true));
    std::fs::write(&path, "not json\n{}\n").expect("write");
    let err = anchor::read(&path).expect_err("not a checkpoint");
    assert!(
        err.to_string().contains("line 1: not a checkpoint"),
        "{err}"
    );
}

/// The chain's last rows, its head and the checkpoints after them deleted
/// together: the store alone verifies (nothing in it is left to
/// disagree), the anchor names the truncation at the newest checkpoint it
/// holds. And what else an anchored checkpoint shows: a hash that
/// differs, a count short, a checkpoint the store no longer holds.
#[tokio::test]
async fn an_anchor_names_a_chain_cut_short_that_the_store_alone_cannot() {
    let key = SigningKey::generate("k").expect("key");
    let keys = keys_of(&key);
    let dir = tempfile::tempdir().expect("dir");
    for (n, tamper) in ["cut", "hash", "count", "unstored"].into_iter().enumerate() {
        let (store, trail) = chain_of(20).await;
        let path = dir.path().join(format!("anchor-{n}.jsonl"));
        let file = AnchorFile::open(&path).expect("open");
        let first = checkpoint::checkpoint(&store, "hub", &key)
            .await
            .expect("checkpoint")
            .expect("made");
        file.append(&first).expect("anchor");
        for i in 20..25 {
            trail.append(record(i, "a", "b")).await.expect("append");
        }
        let second = checkpoint::checkpoint(&store, "hub", &key)
            .await
            .expect("checkpoint")
            .expect("made");
        file.append(&second).expect("anchor");
        let intact = verify::verify_store_anchored(
            &store,
            None,
            &keys,
            Some(&anchor::read(&path).expect("read")),
        )
        .await
        .expect("verify");
        assert_eq!(intact.broken, None, "{tamper}");
        assert_eq!(intact.chains[0].anchored, 2);
        assert_eq!(intact.chains[0].last_anchored, Some(second.seq));
        assert!(intact.chains[0]
            .to_string()
            .contains("2 anchored checkpoints held"));

        for sql in [
            "DROP TRIGGER audit_trail_no_delete",
            "DROP TRIGGER audit_checkpoints_no_delete",
        ] {
            sqlx::query(sql).execute(store.pool()).await.expect(sql);
        }
        let last_kept = seq_of(&store, "r19").await;
        match tamper {
            "cut" => {
                for sql in [
                    "DELETE FROM audit_trail WHERE seq > $1",
                    "DELETE FROM audit_checkpoints WHERE seq > $1",
                ] {
                    sqlx::query(sql)
                        .bind(last_kept)
                        .execute(store.pool())
                        .await
                        .expect(sql);
                }
                sqlx::query("DELETE FROM audit_chain_head")
                    .execute(store.pool())
                    .await
                    .expect("delete the head");
            }
            "hash" | "count" => {
                // Checkpoints the store never made, signed with the key.
                let (hash, count) = if tamper == "hash" {
                    (hash_of(&store, "r3").await, Some(25))
                } else {
                    (second.hash.clone(), Some(24))
                };
                let mut forged = second.clone();
                forged.hash = hash;
                forged.count = count;
                let payload =
                    checkpoint::payload("hub", forged.seq, &forged.hash, &forged.at, count)
                        .expect("payload");
                let (protected, signature) = key
                    .sign_detached(serde_json::json!({}), &payload)
                    .expect("sign");
                forged.signature = format!("{protected}..{signature}");
                std::fs::write(&path, "").expect("empty");
                AnchorFile::open(&path)
                    .expect("open")
                    .append(&forged)
                    .expect("append");
            }
            _ => {
                sqlx::query("DELETE FROM audit_checkpoints WHERE seq > $1")
                    .bind(last_kept)
                    .execute(store.pool())
                    .await
                    .expect("delete");
            }
        }
        let alone = verify::verify_store(&store, None, &keys)
            .await
            .expect("verify");
        assert_eq!(
            alone.broken, None,
            "{tamper}: the store alone agrees with itself"
        );
        let anchored = anchor::read(&path).expect("read");
        let broken = verify::verify_store_anchored(&store, None, &keys, Some(&anchored))
            .await
            .expect("verify")
            .broken
            .unwrap_or_else(|| panic!("{tamper}: not found"));
        assert_eq!(broken.seq, second.seq, "{tamper}: {broken}");
        let problem = match &broken.problem {
            Problem::Anchored { problem, .. } => problem.clone(),
            other => panic!("{tamper}: {other:?}"),
        };
        let text = broken.to_string();
        match tamper {
            "cut" => {
                assert_eq!(
                    problem,
                    verify::AnchorProblem::Beyond {
                        last_seq: Some(last_kept),
                        records: 20
                    }
                );
                assert!(
                    text.contains(&format!("hash {}, 25 records", second.hash))
                        && text.contains(&format!(
                            "truncated: the store's chain ends at seq {last_kept} after 20 records"
                        )),
                    "{text}"
                );
            }
            "hash" => assert!(
                matches!(problem, verify::AnchorProblem::HashDiffers { .. }),
                "{text}"
            ),
            "count" => {
                assert_eq!(problem, verify::AnchorProblem::CountDiffers { chain: 25 });
                assert!(text.contains("count short"), "{text}");
            }
            _ => assert_eq!(problem, verify::AnchorProblem::NotStored, "{text}"),
        }
    }
}

/// A trail written while the store numbered its rows with `AUTOINCREMENT`
/// keeps every row, its seq and its chain through the migration that
/// numbers them by rowid alone; the next record takes the next seq, the
/// append-only triggers still hold, and no commit writes `sqlite_sequence`
/// for the trail again.
#[tokio::test]
async fn the_trail_keeps_its_rows_seqs_and_chain_when_its_numbering_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let before = dir.path().join("migrations-before");
    std::fs::create_dir(&before).expect("a directory");
    for (name, sql) in [
        (
            "1_audit_trail.sql",
            include_str!("../../migrations/sqlite/1_audit_trail.sql"),
        ),
        (
            "2_approval_inbox.sql",
            include_str!("../../migrations/sqlite/2_approval_inbox.sql"),
        ),
        (
            "3_audit_chain.sql",
            include_str!("../../migrations/sqlite/3_audit_chain.sql"),
        ),
        (
            "4_audit_chain_count.sql",
            include_str!("../../migrations/sqlite/4_audit_chain_count.sql"),
        ),
    ] {
        std::fs::write(before.join(name), sql).expect("a migration");
    }
    let location = crate::db::Location::File(dir.path().join("trail.db"));
    let store = Store::open(&location).await.expect("open");
    sqlx::migrate::Migrator::new(before.as_path())
        .await
        .expect("the earlier migrations")
        .run(store.pool())
        .await
        .expect("migrate to the earlier schema");
    let trail = AuditTrail::open(store.clone(), "hub");
    // Five records as the earlier code wrote them: its columns only (today's
    // writer also fills the receipt columns of migration 7).
    sqlx::query("INSERT INTO audit_chain_head (system, hash, seq) VALUES ('hub', $1, 0)")
        .bind(GENESIS.hex())
        .execute(store.pool())
        .await
        .expect("the chain's head, as the earlier appender made it");
    let mut prev = GENESIS;
    for i in 0..5 {
        let mut r = record(i, "a", "b");
        r.system = "hub".into();
        let hash = chain::link(&prev, &Content::of(&r).digest().expect("a digest"));
        sqlx::query(
            "INSERT INTO audit_trail (system, role, at, caller, provider, capability,
                request_id, trace_id, outcome, reason, duration_ms, detail, prev_hash, hash)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
        )
        .bind(&r.system)
        .bind(r.role.as_str())
        .bind(&r.at)
        .bind(&r.caller)
        .bind(&r.provider)
        .bind(&r.capability)
        .bind(&r.request_id)
        .bind(&r.trace_id)
        .bind(r.outcome.as_str())
        .bind(r.reason.map(|r| r.as_str()))
        .bind(i64::try_from(r.duration_ms).unwrap_or(i64::MAX))
        .bind(&r.detail)
        .bind(prev.hex())
        .bind(hash.hex())
        .execute(store.pool())
        .await
        .expect("an earlier append");
        prev = hash;
    }
    // Under the earlier schema the appender moved the head itself; today's
    // leaves that to the store's trigger (migration 6), so the test moves
    // it as the earlier code did.
    sqlx::query(
        "UPDATE audit_chain_head SET hash = (SELECT hash FROM audit_trail WHERE seq = 5),
            seq = 5, count = 5 WHERE system = 'hub'",
    )
    .execute(store.pool())
    .await
    .expect("the head as the earlier code left it");
    let sequenced = "SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'audit_trail'";
    let n: i64 = sqlx::query_scalar(sequenced)
        .fetch_one(store.pool())
        .await
        .expect("count");
    assert_eq!(
        n, 1,
        "the earlier schema numbers the trail with AUTOINCREMENT"
    );

    store
        .migrate(&[&crate::db::SCHEMA])
        .await
        .expect("migrate to the current schema");
    let sql: String = sqlx::query_scalar(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'audit_trail'",
    )
    .fetch_one(store.pool())
    .await
    .expect("the table");
    assert!(!sql.to_uppercase().contains("AUTOINCREMENT"), "{sql}");
    for i in 0..5 {
        assert_eq!(seq_of(&store, &format!("r{i}")).await, i64::from(i) + 1);
    }
    trail.append(record(5, "a", "b")).await.expect("append");
    assert_eq!(seq_of(&store, "r5").await, 6);
    let n: i64 = sqlx::query_scalar(sequenced)
        .fetch_one(store.pool())
        .await
        .expect("count");
    assert_eq!(n, 0, "no commit writes sqlite_sequence for the trail");
    let v = verify::verify_store(&store, None, &JwkSet { keys: vec![] })
        .await
        .expect("verify");
    assert_eq!(v.broken, None);
    assert_eq!(v.chains[0].records, 6);
    let head = chain::head(&store, "hub")
        .await
        .expect("head")
        .expect("a head");
    assert_eq!((head.seq, head.count), (6, 6));
    for refused in [
        "DELETE FROM audit_trail WHERE seq = 1",
        "UPDATE audit_trail SET detail = 'x' WHERE seq = 1",
    ] {
        let e = sqlx::query(refused)
            .execute(store.pool())
            .await
            .expect_err(refused);
        assert!(e.to_string().contains("append-only"), "{refused}: {e}");
    }
}

/// The digest written member by member is the digest of the content's
/// RFC 8785 form as a general canonicalizer writes it, for every kind of
/// text a member may hold and every duration.
#[test]
fn a_records_digest_is_its_jcs_forms_for_any_text_and_duration() {
    let texts = [
        "",
        "plain",
        "quote \" and backslash \\ and slash /",
        "controls \u{0} \u{1} \u{8} \t \n \u{b} \u{c} \r \u{1f} and \u{7f}",
        "unicode é 中文 \u{2028}\u{2029} 🦀",
        "</script><b>",
    ];
    let durations = [
        0,
        1,
        -1,
        1 << 53,
        -(1 << 53),
        (1 << 53) + 1,
        i64::MAX,
        i64::MIN,
    ];
    let mut checked = 0;
    for (i, text) in texts.iter().enumerate() {
        for (j, duration_ms) in durations.iter().enumerate() {
            let other = texts[(i + j + 1) % texts.len()];
            let content = Content {
                system: text,
                role: other,
                at: "2026-12-07T09:00:00.000Z",
                caller: other,
                provider: text,
                capability: text,
                request_id: other,
                trace_id: text,
                outcome: "connected",
                reason: (j % 2 == 0).then_some(other),
                duration_ms: *duration_ms,
                detail: text,
            };
            let jcs = serde_json_canonicalizer::to_vec(&content).expect("canonical");
            let expected = ChainHash::parse(&hex(&sha2::Sha256::digest(&jcs))).expect("hash");
            assert_eq!(
                content.digest().expect("digest"),
                expected,
                "{content:?}: JCS {}",
                String::from_utf8_lossy(&jcs)
            );
            checked += 1;
        }
    }
    assert_eq!(checked, texts.len() * durations.len());
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
