//! Opening a system's own store (DESIGN.md §3: "State in SQLite by default
//! …; PostgreSQL when several hub replicas share one store behind a load
//! balancer").
//!
//! Each system (the hub and every peer) has its own store: nobody shares a
//! database with anybody, which is what keeps the audit trails
//! independent. Hub *replicas* are one system, so they share one
//! PostgreSQL database; everything else is a SQLite file.
//!
//! **One SQL text, two engines.** A [`Store`] is sqlx's `Any` pool plus the
//! [`Engine`] it runs on. Every query in this repository is written once,
//! in the dialect both engines read: `$1` placeholders, `ON CONFLICT`,
//! `COUNT(CASE …)`, no engine function. The few things that are not the
//! same SQL — the schema, advisory locks, `LISTEN/NOTIFY` — ask
//! [`Store::engine`] (or live in the hub's `cluster` module, PostgreSQL
//! only).
//!
//! **The schema is migrations**, one directory per engine for each crate
//! that owns tables ([`Schema`]): this crate's (`audit_trail` with its
//! `audit_chain_head` and `audit_checkpoints`, `approval_inbox`,
//! `inbox_effects`, versions 1–99) and the hub's
//! (versions 100 and up). [`Store::migrate`] runs several schemas on one
//! database; each ignores the others' versions. On PostgreSQL sqlx takes an
//! advisory lock while migrating, so replicas starting together migrate
//! once. A SQLite file from before migrations is adopted: its tables were
//! made `IF NOT EXISTS`-compatible, and [`Schema::adopt`] lets a crate
//! mend what its old code did in place.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
use sqlx::{AnyPool, ConnectOptions, Connection, Executor};

/// The pool sqlx's `Any` driver gives: every store's queries run on it.
pub use sqlx::AnyPool as Pool;

/// Which database engine a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// An embedded SQLite file (or memory): one process owns it.
    Sqlite,
    /// A PostgreSQL database: several hub replicas may share it.
    Postgres,
}

impl Engine {
    /// The engine's name as logs and figures print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

/// Where a store lives, as an operator names it (`--database`): a file
/// path (or `sqlite://PATH`), `sqlite::memory:`, or a
/// `postgres://…`/`postgresql://…` URL.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file, created if missing.
    File(PathBuf),
    /// A private in-memory SQLite database (tests and throwaway
    /// embeddings): one connection, gone when the store is.
    Memory,
    /// A PostgreSQL database URL (it may hold a password: never printed,
    /// see the `Display` impl).
    Postgres(String),
}

impl Location {
    /// The engine this location runs on.
    pub fn engine(&self) -> Engine {
        match self {
            Location::File(_) | Location::Memory => Engine::Sqlite,
            Location::Postgres(_) => Engine::Postgres,
        }
    }

    /// The location as `--database` reads it, password included: for
    /// handing to a child process, never for a log line (`Display` is).
    pub fn to_argument(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Memory => "sqlite::memory:".into(),
            Location::Postgres(url) => url.clone(),
        }
    }
}

/// What is wrong with a `--database` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocationError {
    /// Empty.
    #[error("the database location is empty: give a file path or a postgres:// URL")]
    Empty,
    /// A URL of another engine.
    #[error(
        "unsupported database URL scheme `{0}`: give a file path, sqlite://PATH, \
         sqlite::memory: or postgres://USER@HOST:PORT/DB"
    )]
    Scheme(String),
    /// A PostgreSQL URL that does not parse.
    #[error("the PostgreSQL URL is not a URL: {0}")]
    BadUrl(String),
}

impl FromStr for Location {
    type Err = LocationError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Err(LocationError::Empty);
        }
        if s == "sqlite::memory:" || s == ":memory:" {
            return Ok(Location::Memory);
        }
        if let Some(path) = s.strip_prefix("sqlite://") {
            return match path {
                "" => Err(LocationError::Empty),
                p => Ok(Location::File(PathBuf::from(p))),
            };
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return url::Url::parse(s)
                .map(|_| Location::Postgres(s.to_string()))
                // The parser's words only: the value may hold a password.
                .map_err(|e| LocationError::BadUrl(e.to_string()));
        }
        match s.split_once("://") {
            Some((scheme, _)) => Err(LocationError::Scheme(crate::text::clip(scheme, 32))),
            None => Ok(Location::File(PathBuf::from(s))),
        }
    }
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Self {
        Location::File(path.to_path_buf())
    }
}

impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Self {
        Location::File(path)
    }
}

/// Names the store without its secrets: `postgres://ws:***@host/db`, and
/// the query (which may carry `password=` or `sslpassword=`) and any
/// fragment as `?…`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(p) => write!(f, "{}", p.display()),
            Location::Memory => f.write_str("sqlite::memory:"),
            Location::Postgres(url) => match url::Url::parse(url) {
                Ok(mut u) => {
                    if u.password().is_some() {
                        let _ = u.set_password(Some("***"));
                    }
                    let options = u.query().is_some() || u.fragment().is_some();
                    u.set_query(None);
                    u.set_fragment(None);
                    write!(f, "{u}{}", if options { "?…" } else { "" })
                }
                Err(_) => f.write_str("postgres://(unparseable)"),
            },
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Location({self})")
    }
}

/// Errors opening or migrating a store: names the store (never its
/// password) so the operator knows which one.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// Connecting, or creating the file, failed.
    #[error("opening the {engine} store {location}: {source}")]
    Connect {
        /// The store.
        location: Location,
        /// Its engine's name.
        engine: &'static str,
        /// What failed.
        #[source]
        source: sqlx::Error,
    },
    /// Its schema could not be brought up to date.
    #[error("migrating the {engine} store {location}: {source}")]
    Migrate {
        /// The store.
        location: Location,
        /// Its engine's name.
        engine: &'static str,
        /// What failed.
        #[source]
        source: sqlx::migrate::MigrateError,
    },
}

/// A system's store: a pool of the `Any` driver and the engine under it.
/// Cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    engine: Engine,
    location: Location,
    /// A writable SQLite file's checkpointer, stopped when the last clone
    /// of the store is dropped.
    _checkpoints: Option<Arc<Checkpoints>>,
}

/// How often a SQLite store copies its write-ahead log into the database
/// file, off the path of every commit ([`Checkpoints`]).
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// The background task that checkpoints a SQLite file's write-ahead log.
///
/// SQLite checkpoints by itself when a commit leaves the log over 1,000
/// pages, *inside that commit*: the connection that crossed the line
/// copies the log into the database and syncs both files before its
/// commit returns. On the hub that connection is nearly always the audit
/// writer's, and every call waiting for its record waits for the copy —
/// a few milliseconds every few hundred commits, which is the tail of the
/// latency distribution. So every connection of a file store turns the
/// automatic checkpoint off, and this task runs a passive checkpoint on a
/// connection of its own every [`CHECKPOINT_EVERY`]: it copies what no
/// reader still needs and never blocks a writer, and the log is restarted
/// from its beginning by the next commit after it has been copied whole.
#[derive(Debug)]
struct Checkpoints(tokio::task::JoinHandle<()>);

impl Checkpoints {
    fn spawn(pool: AnyPool) -> Self {
        Self(tokio::spawn(async move {
            let mut every = tokio::time::interval(CHECKPOINT_EVERY);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                if pool.is_closed() {
                    return;
                }
                // A checkpoint that could not run (the file busy, a
                // connection lost) is simply the next tick's to do.
                let _ = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
                    .fetch_optional(&pool)
                    .await;
            }
        }))
    }
}

impl Drop for Checkpoints {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Most connections a PostgreSQL store keeps per process, unless
/// `WS_DB_MAX_CONNECTIONS` says otherwise.
pub const POSTGRES_CONNECTIONS: u32 = 16;

impl Store {
    /// Opens (creating a SQLite file if needed) the store at `location`,
    /// without touching its schema ([`Store::migrate`] does).
    ///
    /// A SQLite file is put in WAL mode, so a second process (the trail
    /// rebuild command, a peer's data plane) can read while this one
    /// writes, with `synchronous = NORMAL`: a committed transaction
    /// survives a crash of the process.
    pub async fn open(location: &Location) -> Result<Self, OpenError> {
        install_drivers();
        let err = |source| OpenError::Connect {
            location: location.clone(),
            engine: location.engine().as_str(),
            source,
        };
        let pool = match location {
            Location::File(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| err(sqlx::Error::Io(e)))?;
                }
                let native = SqliteConnectOptions::new()
                    .filename(path)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal);
                // The journal mode is the file's, once: set it natively
                // (the `Any` URL cannot carry it), then pool through `Any`.
                native
                    .connect()
                    .await
                    .map_err(err)?
                    .close()
                    .await
                    .map_err(err)?;
                let options = any_options(&native.to_url_lossy()).map_err(err)?;
                AnyPoolOptions::new()
                    .max_connections(4)
                    // A local file does not drop a connection the way a
                    // server does: no ping before every use.
                    .test_before_acquire(false)
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            conn.execute("PRAGMA synchronous = NORMAL").await?;
                            // The store's own task checkpoints instead
                            // (`Checkpoints`), never a commit.
                            conn.execute("PRAGMA wal_autocheckpoint = 0").await?;
                            Ok(())
                        })
                    })
                    .connect_with(options)
                    .await
                    .map_err(err)?
            }
            Location::Memory => AnyPoolOptions::new()
                // Each connection to `:memory:` is its own database.
                .max_connections(1)
                .test_before_acquire(false)
                .connect("sqlite::memory:")
                .await
                .map_err(err)?,
            Location::Postgres(url) => {
                let max = std::env::var("WS_DB_MAX_CONNECTIONS")
                    .ok()
                    .and_then(|v| v.parse::<u32>().ok())
                    .filter(|n| *n > 0)
                    .unwrap_or(POSTGRES_CONNECTIONS);
                AnyPoolOptions::new()
                    .max_connections(max)
                    .acquire_timeout(Duration::from_secs(10))
                    .connect_with(any_options_str(url).map_err(err)?)
                    .await
                    .map_err(err)?
            }
        };
        let checkpoints = matches!(location, Location::File(_))
            .then(|| Arc::new(Checkpoints::spawn(pool.clone())));
        Ok(Self {
            pool,
            engine: location.engine(),
            location: location.clone(),
            _checkpoints: checkpoints,
        })
    }

    /// Opens an existing SQLite file read-only (the rebuild command must
    /// not create an empty trail where a path was mistyped).
    pub async fn open_read_only(path: &Path) -> Result<Self, OpenError> {
        install_drivers();
        let location = Location::File(path.to_path_buf());
        let err = |source| OpenError::Connect {
            location: location.clone(),
            engine: Engine::Sqlite.as_str(),
            source,
        };
        let native = SqliteConnectOptions::new().filename(path).read_only(true);
        let pool = AnyPoolOptions::new()
            .max_connections(1)
            .connect_with(any_options(&native.to_url_lossy()).map_err(err)?)
            .await
            .map_err(err)?;
        Ok(Self {
            pool,
            engine: Engine::Sqlite,
            location,
            _checkpoints: None,
        })
    }

    /// A private in-memory SQLite store with one connection.
    pub async fn memory() -> Result<Self, OpenError> {
        Self::open(&Location::Memory).await
    }

    /// Brings the schema up to date: every schema of `schemas`, in order,
    /// for this store's engine. Each crate's migrations ignore versions
    /// they do not know (another crate's).
    pub async fn migrate(&self, schemas: &[&Schema]) -> Result<(), OpenError> {
        let failed = |source| OpenError::Connect {
            location: self.location.clone(),
            engine: self.engine.as_str(),
            source,
        };
        // A SQLite file with tables but no migration record was made by
        // code from before migrations.
        let legacy = self.engine == Engine::Sqlite
            && !self.has_table("_sqlx_migrations").await.map_err(failed)?;
        for schema in schemas {
            if let (true, Some(adopt)) = (legacy, schema.adopt) {
                adopt(self.pool.clone()).await.map_err(failed)?;
            }
            let mut migrator = match self.engine {
                Engine::Sqlite => (schema.sqlite)(),
                Engine::Postgres => (schema.postgres)(),
            };
            migrator.set_ignore_missing(true);
            migrator
                .run(&self.pool)
                .await
                .map_err(|source| OpenError::Migrate {
                    location: self.location.clone(),
                    engine: self.engine.as_str(),
                    source,
                })?;
        }
        Ok(())
    }

    /// Adds `column` (of SQL `decl`) to `table` if the table exists
    /// without it: what an adopt step does for a column the old code
    /// added in place. SQLite only (PostgreSQL stores were never made by
    /// that code).
    pub async fn add_column_if_missing(
        pool: &AnyPool,
        table: &str,
        column: &str,
        decl: &str,
    ) -> Result<(), sqlx::Error> {
        let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info($1)")
            .bind(table)
            .fetch_all(pool)
            .await?;
        if !columns.is_empty() && !columns.iter().any(|c| c == column) {
            pool.execute(
                format!("ALTER TABLE \"{table}\" ADD COLUMN \"{column}\" {decl}").as_str(),
            )
            .await?;
        }
        Ok(())
    }

    /// Whether a table of this name exists (either engine).
    pub async fn has_table(&self, name: &str) -> Result<bool, sqlx::Error> {
        let sql = match self.engine {
            Engine::Sqlite => {
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1"
            }
            Engine::Postgres => {
                "SELECT COUNT(*) FROM information_schema.tables
                 WHERE table_schema = current_schema() AND table_name = $1"
            }
        };
        let n: i64 = sqlx::query_scalar(sql)
            .bind(name)
            .fetch_one(&self.pool)
            .await?;
        Ok(n > 0)
    }

    /// The pool every query of this store runs on.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// The engine under the pool.
    pub fn engine(&self) -> Engine {
        self.engine
    }

    /// Where the store is (prints without a password).
    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Closes every connection (waits for those in use).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// What [`Schema::adopt`] returns.
pub type Adopting =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), sqlx::Error>> + Send>>;

/// The schema a crate owns: its migrations for each engine (sqlx's
/// `migrate!` of `migrations/sqlite` and `migrations/postgres`, embedded
/// at compile time), and what a SQLite file made before migrations needs
/// first.
pub struct Schema {
    /// The crate's SQLite migrations.
    pub sqlite: fn() -> Migrator,
    /// The same schema for PostgreSQL (same versions, same tables).
    pub postgres: fn() -> Migrator,
    /// Run once on a SQLite file that has no migration record yet, before
    /// its migrations (which are `IF NOT EXISTS`): mends tables the
    /// crate's code used to change in place.
    pub adopt: Option<fn(AnyPool) -> Adopting>,
}

/// This crate's tables: the audit trail (its chain heads and checkpoints)
/// and the approval inbox.
pub static SCHEMA: Schema = Schema {
    sqlite: || sqlx::migrate!("migrations/sqlite"),
    postgres: || sqlx::migrate!("migrations/postgres"),
    adopt: None,
};

/// Opens the store at `location` and brings this crate's tables up to
/// date: what a peer needs for its trail and inbox.
pub async fn open(location: impl Into<Location>) -> Result<Store, OpenError> {
    let store = Store::open(&location.into()).await?;
    store.migrate(&[&SCHEMA]).await?;
    Ok(store)
}

/// A private in-memory store with this crate's tables.
pub async fn memory() -> Result<Store, OpenError> {
    open(Location::Memory).await
}

/// A native SQLite pool on a file, for a peer's own tables (its dataset,
/// task keys, contracts): the same file the peer's [`Store`] opens, in
/// WAL mode, so both pools read and write it.
pub async fn open_sqlite(path: &Path) -> Result<sqlx::SqlitePool, OpenError> {
    let err = |source| OpenError::Connect {
        location: Location::File(path.to_path_buf()),
        engine: Engine::Sqlite.as_str(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(sqlx::Error::Io(e)))?;
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(sqlx::sqlite::SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5));
    sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(4)
        .test_before_acquire(false)
        .connect_with(options)
        .await
        .map_err(err)
}

/// A private in-memory native SQLite pool with one connection (a peer's
/// unit tests of its own tables).
pub async fn memory_sqlite() -> Result<sqlx::SqlitePool, OpenError> {
    sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .connect("sqlite::memory:")
        .await
        .map_err(|source| OpenError::Connect {
            location: Location::Memory,
            engine: Engine::Sqlite.as_str(),
            source,
        })
}

/// `($1, …, $c), ($c+1, …), …`: the `VALUES` of a multi-row `INSERT` of
/// `rows` rows of `columns` bound values each, in the placeholder syntax
/// both engines read (sqlx's `QueryBuilder` writes `?` for `Any`, which
/// PostgreSQL does not).
pub fn value_rows(rows: usize, columns: usize) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(rows * columns * 5);
    for r in 0..rows {
        out.push_str(if r == 0 { "(" } else { ", (" });
        for c in 0..columns {
            let sep = if c == 0 { "" } else { ", " };
            let _ = write!(out, "{sep}${}", r * columns + c + 1);
        }
        out.push(')');
    }
    out
}

/// Whether `e` says the store is away for now — the connection broke, no
/// connection could be had, the server is shutting down or starting up
/// (PostgreSQL classes `08` and `57P`), a SQLite file is busy — rather
/// than that it refused the query: trying again shortly may succeed.
pub fn is_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || code.starts_with("57P") || matches!(&*code, "5" | "6" | "517")
        }),
        _ => false,
    }
}

/// How long [`retry_while_unavailable`] waits between tries.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// Runs `op` again while it fails with an error `unavailable` calls the
/// store being away ([`is_unavailable`]), until `until`; any other result,
/// or the last error at `until`, is returned. For a write the caller is
/// about to be told about (an answer stored for replay, a task's record):
/// a short outage — a PostgreSQL restart cuts every connection — is waited
/// out instead of the write being lost. `op` must be safe to repeat (a
/// transaction whose commit may or may not have landed runs again).
pub async fn retry_while_unavailable<T, E, F, Fut>(
    until: tokio::time::Instant,
    unavailable: impl Fn(&E) -> bool,
    mut op: F,
) -> Result<T, E>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    loop {
        match op().await {
            Err(e) if unavailable(&e) && tokio::time::Instant::now() + RETRY_PAUSE < until => {
                tokio::time::sleep(RETRY_PAUSE).await;
            }
            done => return done,
        }
    }
}

fn any_options(url: &url::Url) -> Result<AnyConnectOptions, sqlx::Error> {
    AnyConnectOptions::from_url(url)
}

fn any_options_str(url: &str) -> Result<AnyConnectOptions, sqlx::Error> {
    AnyConnectOptions::from_str(url)
}

/// The `Any` driver needs its engines registered once per process.
fn install_drivers() {
    sqlx::any::install_default_drivers();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_store_that_is_away_is_tried_again_and_a_refusal_is_not() {
        // Away twice, then there: the third try's answer.
        let mut tries = 0;
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        let done: Result<u32, sqlx::Error> = retry_while_unavailable(until, is_unavailable, || {
            tries += 1;
            let n = tries;
            async move {
                if n < 3 {
                    Err(sqlx::Error::PoolTimedOut)
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(done.ok(), Some(3));

        // A query the store refuses (a real SQLite constraint error) is
        // not retried.
        let store = memory().await.expect("a memory store");
        sqlx::query("CREATE TABLE t (k TEXT PRIMARY KEY)")
            .execute(store.pool())
            .await
            .expect("create");
        sqlx::query("INSERT INTO t VALUES ('a')")
            .execute(store.pool())
            .await
            .expect("insert");
        let mut tries = 0;
        let refused = retry_while_unavailable(until, is_unavailable, || {
            tries += 1;
            sqlx::query("INSERT INTO t VALUES ('a')").execute(store.pool())
        })
        .await;
        let e = refused.expect_err("a duplicate key");
        assert!(!is_unavailable(&e), "{e}");
        assert_eq!(tries, 1);

        // Away for good: the last error once the time is up.
        let until = tokio::time::Instant::now() + Duration::from_millis(350);
        let mut tries = 0;
        let away: Result<(), sqlx::Error> = retry_while_unavailable(until, is_unavailable, || {
            tries += 1;
            async { Err(sqlx::Error::PoolClosed) }
        })
        .await;
        assert!(matches!(away, Err(sqlx::Error::PoolClosed)));
        // At most one try per pause (no busy loop); a loaded machine may
        // manage fewer, so no lower bound beyond the first.
        assert!((1..=4).contains(&tries), "{tries} tries in 350 ms");
    }

    #[test]
    fn locations_parse_and_never_print_a_password() {
        assert_eq!(
            "var/hub.db".parse::<Location>(),
            Ok(Location::File("var/hub.db".into()))
        );
        assert_eq!(
            "sqlite:///tmp/x.db".parse::<Location>(),
            Ok(Location::File("/tmp/x.db".into()))
        );
        assert_eq!("sqlite::memory:".parse::<Location>(), Ok(Location::Memory));
        let pg: Location = "postgres://ws:hunter2@127.0.0.1:5433/hub"
            .parse()
            .expect("a postgres URL");
        assert_eq!(pg.engine(), Engine::Postgres);
        let shown = pg.to_string();
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("127.0.0.1:5433/hub"), "{shown}");
        assert!(!format!("{pg:?}").contains("hunter2"));
        let options: Location = "postgres://ws@127.0.0.1/hub?password=hunter2&sslmode=disable"
            .parse()
            .expect("a postgres URL");
        assert_eq!(options.to_string(), "postgres://ws@127.0.0.1/hub?…");
        assert_eq!(
            "mysql://x/y".parse::<Location>(),
            Err(LocationError::Scheme("mysql".into()))
        );
        assert_eq!("  ".parse::<Location>(), Err(LocationError::Empty));
        assert!(matches!(
            "postgres://[::1".parse::<Location>(),
            Err(LocationError::BadUrl(_))
        ));
    }

    #[test]
    fn value_rows_number_every_placeholder_once() {
        assert_eq!(value_rows(1, 2), "($1, $2)");
        assert_eq!(value_rows(2, 3), "($1, $2, $3), ($4, $5, $6)");
    }

    #[tokio::test]
    async fn a_file_store_is_created_in_wal_mode_with_the_exchange_tables() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/peer.db");
        let store = open(path.as_path()).await.expect("open");
        assert_eq!(store.engine(), Engine::Sqlite);
        for table in ["audit_trail", "approval_inbox", "inbox_effects"] {
            assert!(store.has_table(table).await.expect("query"), "{table}");
        }
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(store.pool())
            .await
            .expect("pragma");
        assert_eq!(mode, "wal");
        store.close().await;
        // Migrating again changes nothing.
        let again = open(path.as_path()).await.expect("reopen");
        assert!(again.has_table("audit_trail").await.expect("query"));
        let ro = Store::open_read_only(&path).await.expect("read-only");
        assert!(sqlx::query("INSERT INTO approval_inbox (id) VALUES (1)")
            .execute(ro.pool())
            .await
            .is_err());
    }

    #[tokio::test]
    async fn a_file_store_checkpoints_in_the_background_and_never_in_a_commit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.db");
        let store = Store::open(&Location::File(path.clone()))
            .await
            .expect("open");
        // Every connection of the pool leaves checkpoints to the task.
        for _ in 0..3 {
            let pages: i64 = sqlx::query_scalar("PRAGMA wal_autocheckpoint")
                .fetch_one(store.pool())
                .await
                .expect("pragma");
            assert_eq!(pages, 0);
        }
        sqlx::query("CREATE TABLE t (v TEXT)")
            .execute(store.pool())
            .await
            .expect("create");
        // About 2 MiB in 64 commits: far past the 1,000 pages at which
        // SQLite would have checkpointed inside a commit by itself.
        let row = "x".repeat(32 * 1024);
        for _ in 0..64 {
            sqlx::query("INSERT INTO t VALUES ($1)")
                .bind(&row)
                .execute(store.pool())
                .await
                .expect("insert");
        }
        // Within a few ticks the log has been copied into the database
        // file, without anybody asking.
        let file = || std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let until = std::time::Instant::now() + CHECKPOINT_EVERY * 25;
        while file() < 2_000_000 && std::time::Instant::now() < until {
            tokio::time::sleep(CHECKPOINT_EVERY / 2).await;
        }
        assert!(
            file() >= 2_000_000,
            "the database file holds {} bytes: the log was not checkpointed",
            file()
        );
        // The last clone of the store stops its task.
        drop(store);
    }
}
