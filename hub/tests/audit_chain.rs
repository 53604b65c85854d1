//! The tamper-evident trail end to end, with real processes: a hub and its
//! peers write their trails under a few hundred concurrent calls, the hub
//! signs checkpoints, and the `hub` binary verifies the hub's and a peer's
//! trail, names the row edited or deleted by hand, and writes an export
//! for BuyerCorp that verifies from its directory alone — and names an
//! edited record there too. Then a trail cut short at its end — its last
//! rows, its head and the checkpoints after them deleted together — that
//! the store alone cannot tell, and the anchor the hub kept outside the
//! store (`WS_TRAIL_ANCHOR`) names. Then two replicas on PostgreSQL write
//! one chain.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{PeerSpec, Stack};
use exchange::db::{Engine, Store};
use serde_json::{json, Value};

/// Checkpoints every half second: the tests wait for one, not a minute.
const ENV: [(&str, &str); 1] = [("WS_TRAIL_CHECKPOINT_SECONDS", "0.5")];

/// `hub trail ARGS...`, its exit status and output.
fn hub_trail(args: &[&str]) -> (bool, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_hub"))
        .arg("trail")
        .args(args)
        .output()
        .expect("run hub trail");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// `n` calls from `workers` concurrent callers: a third BuyerCorp's
/// queries of VendorCorp, a third Helpdesk asking BuyerCorp's budget, a
/// third Helpdesk reading VendorCorp's orders (no rule: refused, recorded,
/// and none of BuyerCorp's business). Request ids name the kind.
async fn drive(stack: &Stack, n: usize, workers: usize) {
    let calls: Vec<_> = (0..n)
        .map(|i| match i % 3 {
            0 => stack
                .call("buyercorp", "vendorcorp", "orders.query")
                .header("x-request-id", &format!("ac-query-{i}"))
                .body(json!({"aggregate": {"op": "count"}})),
            1 => stack
                .call("helpdesk", "buyercorp", "budget.consult")
                .header("x-request-id", &format!("ac-consult-{i}"))
                .body(json!({"question": "How much of the marketing budget is left?"})),
            _ => stack
                .call("helpdesk", "vendorcorp", "orders.query")
                .header("x-request-id", &format!("ac-other-{i}"))
                .body(json!({"aggregate": {"op": "count"}})),
        })
        .collect();
    let queue = std::sync::Arc::new(std::sync::Mutex::new(calls));
    let mut handles = Vec::new();
    for _ in 0..workers {
        let queue = queue.clone();
        handles.push(tokio::spawn(async move {
            loop {
                let next = queue.lock().expect("queue").pop();
                let Some(call) = next else { break };
                call.send().await;
            }
        }));
    }
    for h in handles {
        h.await.expect("a caller");
    }
}

/// Waits until a checkpoint covers the hub's chain head.
async fn await_checkpoint(store: &Store) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let head: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM audit_chain_head")
            .fetch_one(store.pool())
            .await
            .expect("head");
        let signed: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM audit_checkpoints")
            .fetch_one(store.pool())
            .await
            .expect("checkpoints");
        if let (Some(h), Some(s)) = (head, signed) {
            if s >= h {
                return s;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no checkpoint covers the head: head {head:?}, checkpoints {signed:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn count(store: &Store, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(store.pool())
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The number after `label` in `text` (`verified: 1 chain, 412 records`).
fn number_before(text: &str, label: &str) -> Option<i64> {
    let at = text.find(label)?;
    text[..at]
        .split(|c: char| !c.is_ascii_digit())
        .rfind(|s| !s.is_empty())?
        .parse()
        .ok()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
}

#[tokio::test]
async fn a_trail_written_under_load_verifies_and_tampering_is_named_at_its_row() {
    let mut stack = Stack::start_with_env(
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(PeerSpec::stock)
            .to_vec(),
        &ENV,
    )
    .await;
    let started = Instant::now();
    drive(&stack, 300, 24).await;
    eprintln!("300 calls in {:?}", started.elapsed());
    let hub_db = stack.hub_store.to_argument();
    let store = stack.hub_store().await;
    let covered = await_checkpoint(&store).await;
    let rows = count(&store, "SELECT COUNT(*) FROM audit_trail").await;
    assert!(rows >= 300, "{rows} trail rows");

    // (a) The hub's trail verifies, with its checkpoints; so does a peer's.
    let (ok, text) = hub_trail(&["verify", "--db", &hub_db]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    assert!(text.contains("verified: 1 chain"), "{text}");
    assert_eq!(number_before(&text, " records, "), Some(rows), "{text}");
    assert!(
        number_before(&text, " checkpoints").is_some_and(|n| n >= 1),
        "{text}"
    );
    assert!(text.contains(&format!("covering seq {covered}")), "{text}");
    let vendor_db = stack.peer_db("vendorcorp");
    let (ok, text) = hub_trail(&["verify", "--db", &vendor_db.display().to_string()]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    assert!(
        text.contains("chain `vendorcorp`") && text.contains("no checkpoint"),
        "{text}"
    );
    // The old spelling of the rebuild still works.
    let (ok, text) = hub_trail(&["--trace-id", "0000", "--db", &hub_db]);
    assert!(!ok && text.contains("no record of trace 0000"), "{text}");

    // (c) BuyerCorp's export verifies in another directory, with no store.
    let dir = tempfile::tempdir().expect("dir");
    let (written, elsewhere) = (dir.path().join("written"), dir.path().join("elsewhere"));
    let (ok, text) = hub_trail(&[
        "export",
        "--db",
        &hub_db,
        "--counterparty",
        "buyercorp",
        "--out",
        &written.display().to_string(),
    ]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    copy_dir(&written, &elsewhere);
    let elsewhere_arg = elsewhere.display().to_string();
    let (ok, text) = hub_trail(&["verify", "--dir", &elsewhere_arg]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    assert!(text.contains("for `buyercorp`"), "{text}");
    // Nothing of calls BuyerCorp took no part in: their lines are hashes.
    let records = std::fs::read_to_string(elsewhere.join("records.jsonl")).expect("records");
    let (mut full, mut hidden) = (0, 0);
    for line in records.lines() {
        let v: Value = serde_json::from_str(line).expect("a JSON line");
        match v.get("record") {
            Some(r) => {
                full += 1;
                assert!(
                    r["caller"] == "buyercorp" || r["provider"] == "buyercorp",
                    "{line}"
                );
            }
            None => {
                hidden += 1;
                let mut keys: Vec<&str> = v
                    .as_object()
                    .map(|o| o.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                keys.sort_unstable();
                assert_eq!(keys, ["digest", "hash", "prev_hash", "seq"], "{line}");
            }
        }
    }
    assert!(full >= 200 && hidden >= 1, "{full} full, {hidden} hidden");
    assert!(
        !records.contains("ac-other-"),
        "a call BuyerCorp had no part in"
    );
    // One of its records edited in the export: named at that record.
    let (seq, request_id, edited) = {
        let mut lines: Vec<String> = records.lines().map(str::to_string).collect();
        let i = lines
            .iter()
            .position(|l| l.contains("ac-query-"))
            .expect("a query of buyercorp");
        let mut v: Value = serde_json::from_str(&lines[i]).expect("line");
        v["record"]["capability"] = json!("orders.export");
        lines[i] = v.to_string();
        (
            v["seq"].as_i64().expect("seq"),
            v["record"]["request_id"].as_str().expect("id").to_string(),
            lines.join("\n") + "\n",
        )
    };
    std::fs::write(elsewhere.join("records.jsonl"), edited).expect("write");
    let (ok, text) = hub_trail(&["verify", "--dir", &elsewhere_arg]);
    eprintln!("{text}");
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "broken at seq {seq} (request id {request_id}): content changed"
        )),
        "{text}"
    );

    // (b) The hub stopped, one row edited by hand: named by seq and id.
    stack.kill_hub();
    drop(store);
    let store = Store::open(&stack.hub_store)
        .await
        .expect("the hub's store");
    let (drop_update, drop_delete) = match store.engine() {
        Engine::Sqlite => (
            "DROP TRIGGER audit_trail_no_update",
            "DROP TRIGGER audit_trail_no_delete",
        ),
        Engine::Postgres => (
            "DROP TRIGGER audit_trail_no_change ON audit_trail",
            "SELECT 1",
        ),
    };
    sqlx::query(drop_update)
        .execute(store.pool())
        .await
        .expect("drop the trigger");
    let (seq, request_id, outcome): (i64, String, String) = sqlx::query_as(
        "SELECT seq, request_id, outcome FROM audit_trail
         WHERE request_id LIKE 'ac-consult-%'
           AND seq NOT IN (SELECT seq FROM audit_checkpoints)
         ORDER BY seq LIMIT 1 OFFSET 40",
    )
    .fetch_one(store.pool())
    .await
    .expect("a consult's row");
    let set = |outcome: &str| {
        sqlx::query("UPDATE audit_trail SET outcome = $1 WHERE seq = $2")
            .bind(outcome.to_string())
            .bind(seq)
    };
    set("refused").execute(store.pool()).await.expect("edit");
    let (ok, text) = hub_trail(&["verify", "--db", &hub_db]);
    eprintln!("{text}");
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "BROKEN: chain `hub` is broken at seq {seq} (request id {request_id}): content changed"
        )),
        "{text}"
    );
    // Put back, it verifies again; a row deleted is a gap at the next row
    // (a row a checkpoint signs would be named at its own seq).
    set(&outcome).execute(store.pool()).await.expect("restore");
    let (ok, text) = hub_trail(&["verify", "--db", &hub_db]);
    assert!(ok, "{text}");
    sqlx::query(drop_delete)
        .execute(store.pool())
        .await
        .expect("drop the trigger");
    sqlx::query("DELETE FROM audit_trail WHERE seq = $1")
        .bind(seq)
        .execute(store.pool())
        .await
        .expect("delete");
    let (next, next_id): (i64, String) = sqlx::query_as(
        "SELECT seq, request_id FROM audit_trail WHERE system = 'hub' AND seq > $1
         ORDER BY seq LIMIT 1",
    )
    .bind(seq)
    .fetch_one(store.pool())
    .await
    .expect("the next row");
    let (ok, text) = hub_trail(&["verify", "--db", &hub_db]);
    eprintln!("{text}");
    assert!(!ok, "{text}");
    assert!(
        text.contains(&format!(
            "broken at seq {next} (request id {next_id}): row missing (a gap in the chain)"
        )),
        "{text}"
    );
}

/// The triggers that keep the trail and its checkpoints append-only,
/// dropped (what the owner of the store can do).
async fn drop_append_only(store: &Store) {
    let statements: &[&str] = match store.engine() {
        Engine::Sqlite => &[
            "DROP TRIGGER audit_trail_no_delete",
            "DROP TRIGGER audit_checkpoints_no_delete",
        ],
        Engine::Postgres => &[
            "DROP TRIGGER audit_trail_no_change ON audit_trail",
            "DROP TRIGGER audit_checkpoints_no_change ON audit_checkpoints",
        ],
    };
    for sql in statements {
        sqlx::query(sql)
            .execute(store.pool())
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// Waits until the anchor file holds a checkpoint at `seq`; its line.
async fn await_anchored(anchor: &Path, seq: i64) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(anchor).unwrap_or_default();
        if let Some(line) = text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|c| c["seq"] == seq)
        {
            return line;
        }
        assert!(
            Instant::now() < deadline,
            "no anchored checkpoint at seq {seq}: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A trail cut short at its end: the store alone verifies (nothing left in
/// it disagrees), the anchor names the truncation at its newest
/// checkpoint; the intact trail verifies with its anchor.
#[tokio::test]
async fn a_trail_cut_short_verifies_alone_and_its_anchor_names_the_cut() {
    let outside = tempfile::tempdir().expect("a directory outside the store");
    let anchor = outside.path().join("trail-anchor.jsonl");
    let anchor_arg = anchor.display().to_string();
    let env = [ENV[0], ("WS_TRAIL_ANCHOR", anchor_arg.as_str())];
    let mut stack = Stack::start_with_env(
        ["vendorcorp", "buyercorp", "helpdesk"]
            .map(PeerSpec::stock)
            .to_vec(),
        &env,
    )
    .await;
    drive(&stack, 60, 8).await;
    let store = stack.hub_store().await;
    let kept = await_checkpoint(&store).await;
    await_anchored(&anchor, kept).await;
    drive(&stack, 30, 8).await;
    let newest = await_checkpoint(&store).await;
    let line = await_anchored(&anchor, newest).await;
    let signed = line["count"].as_u64().expect("an anchored count");
    let rows = count(
        &store,
        "SELECT COUNT(*) FROM audit_trail WHERE hash IS NOT NULL",
    )
    .await;
    assert_eq!(
        signed, rows as u64,
        "the checkpoint signs the chain's records: {line}"
    );
    stack.kill_hub();
    drop(store);
    let hub_db = stack.hub_store.to_argument();

    let (ok, text) = hub_trail(&["verify", "--db", &hub_db, "--anchor", &anchor_arg]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!("the newest at seq {newest}"))
            && text.contains("checkpoints held outside the store, every one reached"),
        "{text}"
    );

    // Cut: the rows after `kept`, the head, the checkpoints after it.
    let store = Store::open(&stack.hub_store)
        .await
        .expect("the hub's store");
    drop_append_only(&store).await;
    for sql in [
        "DELETE FROM audit_trail WHERE seq > $1",
        "DELETE FROM audit_checkpoints WHERE seq > $1",
    ] {
        sqlx::query(sql)
            .bind(kept)
            .execute(store.pool())
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    sqlx::query("DELETE FROM audit_chain_head")
        .execute(store.pool())
        .await
        .expect("delete the head");
    let left = count(&store, "SELECT COUNT(*) FROM audit_trail").await;
    store.close().await;

    // The store alone cannot tell: what is left agrees with itself.
    let (ok, text) = hub_trail(&["verify", "--db", &hub_db]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    assert_eq!(number_before(&text, " records, "), Some(left), "{text}");
    assert!(text.contains("without --anchor"), "{text}");

    // The anchor can.
    let (ok, text) = hub_trail(&["verify", "--db", &hub_db, "--anchor", &anchor_arg]);
    eprintln!("{text}");
    assert!(!ok, "{text}");
    let hash = line["hash"].as_str().expect("hash");
    assert!(
        text.contains(&format!(
            "BROKEN: chain `hub` is broken at seq {newest}: the anchored checkpoint (hash {hash}, {signed} records) does not hold: truncated: the store's chain ends at seq {kept} after {left} records"
        )),
        "{text}"
    );
}

/// Two replicas on one PostgreSQL database append to one chain at once
/// (their writers, behind nginx) and sign its checkpoints: it verifies.
#[tokio::test]
async fn two_replicas_write_one_chain_that_verifies() {
    if !exchange::testing::postgres_enabled() {
        eprintln!("WS_TEST_POSTGRES=0: no replicas");
        return;
    }
    let stack = Stack::start_replicas(2, &ENV).await;
    drive(&stack, 200, 16).await;
    let store = stack.hub_store().await;
    await_checkpoint(&store).await;
    let rows = count(&store, "SELECT COUNT(*) FROM audit_trail").await;
    let (ok, text) = hub_trail(&["verify", "--db", &stack.hub_store.to_argument()]);
    eprintln!("{text}");
    assert!(ok, "{text}");
    assert!(text.contains("verified: 1 chain"), "{text}");
    assert_eq!(number_before(&text, " records, "), Some(rows), "{text}");
}
