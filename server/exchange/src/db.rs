//! Opening a system's own SQLite store.
//!
//! Each system (the hub and every peer) has its own file: nobody shares a
//! database with anybody, which is what keeps the audit trails independent.

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// Errors opening a store: names the file so the operator knows which one.
#[derive(Debug, thiserror::Error)]
#[error("opening SQLite store {path}: {source}")]
pub struct OpenError {
    path: String,
    #[source]
    source: sqlx::Error,
}

/// Opens (creating if needed) the SQLite file at `path` in WAL mode, so a
/// second process (the trail rebuild command) can read while this one writes.
pub async fn open(path: &Path) -> Result<SqlitePool, OpenError> {
    let err = |source| OpenError {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(sqlx::Error::Io(e)))?;
    }
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .map_err(err)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5));
    SqlitePoolOptions::new()
        .max_connections(4)
        // A local file does not drop a connection the way a server does:
        // no ping (a round trip to the connection's thread) before every
        // use, which the audit trail's writer makes once per commit.
        .test_before_acquire(false)
        .connect_with(options)
        .await
        .map_err(err)
}

/// Opens an existing store read-only (the rebuild command must not create
/// an empty trail where a path was mistyped).
pub async fn open_read_only(path: &Path) -> Result<SqlitePool, OpenError> {
    let err = |source| OpenError {
        path: path.display().to_string(),
        source,
    };
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
        .map_err(err)?
        .read_only(true)
        .busy_timeout(Duration::from_secs(5));
    SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .map_err(err)
}

/// A private in-memory store with one connection (tests and throwaway
/// embeddings): the same SQLite engine, nothing on disk.
pub async fn memory() -> Result<SqlitePool, OpenError> {
    SqlitePoolOptions::new()
        .max_connections(1)
        .connect("sqlite::memory:")
        .await
        .map_err(|source| OpenError {
            path: ":memory:".into(),
            source,
        })
}
