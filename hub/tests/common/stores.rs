//! Every store of a stack, dumped, so a test can prove that nothing was
//! written (the contract suite's "no write anywhere", and the hub's
//! agents'): tables compared row by row, the audit trails and sessions
//! left out (they change with every call by design), append-only tables
//! allowed to gain only pending or bookkeeping rows.

use std::collections::BTreeMap;

use exchange::db::Location;

use super::Stack;

/// Tables that change with every call or probe by design: the audit
/// trails (with their chain heads and checkpoints), sessions, and the
/// probe results replicas share.
pub fn is_trail_or_session(table: &str) -> bool {
    table.starts_with("audit_") || table.contains("session") || table == "peer_health"
}

/// Tables that may gain rows (and only gain them).
pub const APPEND_ONLY: [&str; 3] = ["approval_inbox", "idempotency", "task_owners"];

/// One store, canonical: table → its rows, each row as SQL literals.
pub type Dump = BTreeMap<String, Vec<String>>;

/// Dumps every table of the store at `location` (a SQLite file read-only,
/// or the hub's PostgreSQL database).
pub async fn dump(location: &Location) -> Dump {
    let store = open(location).await;
    let pool = store.pool();
    let list = match store.engine() {
        exchange::db::Engine::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        }
        exchange::db::Engine::Postgres => {
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = current_schema() ORDER BY table_name"
        }
    };
    let tables: Vec<String> = sqlx::query_scalar(list)
        .fetch_all(pool)
        .await
        .expect("list tables");
    let mut out = Dump::new();
    for table in tables {
        if is_trail_or_session(&table) {
            continue;
        }
        let (columns_sql, quote) = match store.engine() {
            exchange::db::Engine::Sqlite => (
                format!("SELECT name FROM pragma_table_info('{table}')"),
                "quote(\"{c}\")",
            ),
            exchange::db::Engine::Postgres => (
                format!(
                    "SELECT column_name::text FROM information_schema.columns
                     WHERE table_schema = current_schema() AND table_name = '{table}'
                     ORDER BY ordinal_position"
                ),
                "quote_nullable(\"{c}\"::text)",
            ),
        };
        let columns: Vec<String> = sqlx::query_scalar(&columns_sql)
            .fetch_all(pool)
            .await
            .expect("columns");
        let row_expr = columns
            .iter()
            .map(|c| quote.replace("{c}", c))
            .collect::<Vec<_>>()
            .join(" || '|' || ");
        let mut rows: Vec<String> =
            sqlx::query_scalar(&format!("SELECT {row_expr} FROM \"{table}\""))
                .fetch_all(pool)
                .await
                .unwrap_or_else(|e| panic!("dump {table}: {e}"));
        rows.sort();
        out.insert(table, rows);
    }
    store.close().await;
    out
}

async fn open(location: &Location) -> exchange::db::Store {
    match location {
        Location::File(path) => exchange::db::Store::open_read_only(path).await,
        other => exchange::db::Store::open(other).await,
    }
    .unwrap_or_else(|e| panic!("{location}: {e}"))
}

/// Row count of the audit trail in the store at `location`.
pub async fn trail_len(location: &Location) -> i64 {
    let store = open(location).await;
    let n = sqlx::query_scalar("SELECT COUNT(*) FROM audit_trail")
        .fetch_one(store.pool())
        .await
        .unwrap_or(0);
    store.close().await;
    n
}

/// Every store of the stack.
pub fn stores(stack: &Stack) -> Vec<(String, Location)> {
    let mut v = vec![("hub".to_string(), stack.hub_store.clone())];
    for id in ["vendorcorp", "buyercorp", "helpdesk"] {
        v.push((id.to_string(), Location::File(stack.peer_db(id))));
    }
    v
}

pub async fn snapshot(stack: &Stack) -> BTreeMap<String, (Dump, i64)> {
    let mut out = BTreeMap::new();
    for (name, path) in stores(stack) {
        out.insert(name, (dump(&path).await, trail_len(&path).await));
    }
    out
}

/// The pending inbox entries a store gained.
#[derive(Debug, Default)]
pub struct Gained {
    pub inbox: Vec<String>,
    pub replay: Vec<String>,
}

/// Asserts that nothing changed between `before` and `after` except the
/// audit trails (which must have grown where a call passed) and rows
/// appended to an inbox (pending) or to the replay cache. Returns what
/// each store gained.
pub fn assert_no_write(
    before: &BTreeMap<String, (Dump, i64)>,
    after: &BTreeMap<String, (Dump, i64)>,
) -> BTreeMap<String, Gained> {
    let mut gained = BTreeMap::new();
    for (store, (b, b_trail)) in before {
        let (a, a_trail) = &after[store];
        assert!(a_trail >= b_trail, "{store}: audit trail shrank");
        let tables: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
        let mut g = Gained::default();
        for t in tables {
            let empty = Vec::new();
            let (rb, ra) = (b.get(t).unwrap_or(&empty), a.get(t).unwrap_or(&empty));
            if APPEND_ONLY.contains(&t.as_str()) {
                for row in rb {
                    assert!(
                        ra.contains(row),
                        "{store}.{t}: an existing row changed or vanished: {row}"
                    );
                }
                let new: Vec<String> = ra.iter().filter(|r| !rb.contains(r)).cloned().collect();
                if t == "approval_inbox" {
                    for row in &new {
                        assert!(
                            row.contains("'pending'|NULL|NULL"),
                            "{store}: a new inbox entry is not pending and undecided: {row}"
                        );
                    }
                    g.inbox = new;
                } else {
                    // The hub's own bookkeeping: consult replays, and who
                    // created which provider task.
                    assert_eq!(store, "hub", "only the hub keeps replays and task owners");
                    g.replay.extend(new);
                }
            } else {
                assert_eq!(rb, ra, "{store}.{t} changed: a write happened");
            }
        }
        gained.insert(store.clone(), g);
    }
    gained
}
