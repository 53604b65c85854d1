//! Stores for tests, on both engines (the store tests of every crate run as
//! a matrix: the same test body on a SQLite file and on a PostgreSQL
//! database). Only tests call it; it is compiled with the runtime so that
//! the binaries and the tests share one build of this crate.
//!
//! PostgreSQL is a real server: Debian's `postgresql` package, a
//! throwaway cluster made with `initdb` in a temporary directory and
//! started on a free loopback port by `scripts/pg-cluster` (as the
//! `postgres` user when the tests run as root: `initdb` refuses root). `WS_TEST_PG_URL` points the tests
//! at a cluster that is already running instead (`scripts/test` starts one
//! for the whole run); each test gets a database of its own in it.
//! `WS_TEST_POSTGRES=0` leaves PostgreSQL out (a machine without it);
//! otherwise a missing server is an error, never a silent skip.
//!
//! A cluster this module starts dies with the test process: the server is
//! a child that receives SIGTERM when its parent thread ends (the
//! parent-death signal, kept across the script's `setpriv`), and an exit
//! hook stops it and removes its directory.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use sqlx::{Connection, Executor};

use crate::db::{Engine, Location, Schema, Store};

/// A fresh, migrated store of one engine, and what keeps it alive.
#[derive(Debug)]
pub struct TestStore {
    /// The store.
    pub store: Store,
    /// Its SQLite file's directory (removed when dropped).
    _dir: Option<tempfile::TempDir>,
}

impl TestStore {
    /// The engine, for assertion messages.
    pub fn engine(&self) -> Engine {
        self.store.engine()
    }
}

/// Whether the PostgreSQL half of the matrix runs (`WS_TEST_POSTGRES=0`
/// turns it off).
pub fn postgres_enabled() -> bool {
    std::env::var("WS_TEST_POSTGRES").map_or(true, |v| v != "0")
}

/// One fresh store per engine the tests run on, each migrated with
/// `schemas`: a SQLite file, then (unless turned off) a new PostgreSQL
/// database.
pub async fn engines(schemas: &[&Schema]) -> Vec<TestStore> {
    let mut out = vec![sqlite(schemas).await];
    if postgres_enabled() {
        out.push(postgres(schemas).await);
    }
    out
}

/// A fresh SQLite file store in a temporary directory.
pub async fn sqlite(schemas: &[&Schema]) -> TestStore {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Store::open(&Location::File(dir.path().join("test.db")))
        .await
        .expect("open a SQLite store");
    store.migrate(schemas).await.expect("migrate SQLite");
    TestStore {
        store,
        _dir: Some(dir),
    }
}

/// A fresh PostgreSQL database, migrated.
pub async fn postgres(schemas: &[&Schema]) -> TestStore {
    let location = fresh_database().await;
    let store = Store::open(&location)
        .await
        .expect("open a PostgreSQL store");
    store.migrate(schemas).await.expect("migrate PostgreSQL");
    TestStore { store, _dir: None }
}

/// The URL of a new, empty database in the test cluster.
pub async fn fresh_database() -> Location {
    create_database(&server_url()).await
}

/// A new, empty database on the server at `base` (`postgres://…:PORT`).
async fn create_database(base: &str) -> Location {
    let name = format!("ws_{:016x}", rand::random::<u64>());
    let admin = format!("{base}/postgres");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut conn = loop {
        match sqlx::PgConnection::connect(&admin).await {
            Ok(c) => break c,
            // The server may still be starting.
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("connecting to the test PostgreSQL at {base}: {e}"),
        }
    };
    conn.execute(format!("CREATE DATABASE \"{name}\"").as_str())
        .await
        .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
    let _ = conn.close().await;
    Location::Postgres(format!("{base}/{name}"))
}

/// `postgres://postgres@127.0.0.1:PORT` of the test cluster (without a
/// database): `WS_TEST_PG_URL`, or a cluster started for this process.
pub fn server_url() -> String {
    if let Ok(url) = std::env::var("WS_TEST_PG_URL") {
        return url.trim_end_matches('/').to_string();
    }
    match CLUSTER.get_or_init(Cluster::start) {
        Ok(c) => format!("postgres://postgres@127.0.0.1:{}", c.port),
        Err(e) => panic!(
            "{e}\nThe store tests run on PostgreSQL too: install Debian's postgresql \
             (scripts/setup test does), point WS_TEST_PG_URL at a running server, \
             or set WS_TEST_POSTGRES=0 to leave it out."
        ),
    }
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();

/// The server's process and data directory, for the exit hook.
static RUNNING: Mutex<Option<(u32, PathBuf)>> = Mutex::new(None);

/// A cluster started for this process: the one the tests share
/// ([`server_url`]), or one a test owns ([`Cluster::own`]) to stop and
/// start again under load.
#[derive(Debug)]
pub struct Cluster {
    /// Its loopback port (the same after a restart).
    pub port: u16,
    /// Its directory: the data, the socket, the server's log.
    dir: PathBuf,
    /// The postmaster's pid, while it runs.
    pid: Option<u32>,
}

/// The repository's cluster script (`scripts/pg-cluster`): initdb and the
/// server in the foreground, as the `postgres` user when run as root. One
/// home for how a throwaway cluster is made, for the tests and the
/// replica stack alike.
const CLUSTER_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/pg-cluster");

impl Cluster {
    /// The cluster the tests share, stopped by the exit hook.
    fn start() -> Result<Self, String> {
        let cluster = Self::new()?;
        if let (Some(pid), Ok(mut running)) = (cluster.pid, RUNNING.lock()) {
            *running = Some((pid, cluster.dir.clone()));
        }
        // SAFETY: registering a plain extern "C" function with no
        // captured state.
        unsafe {
            libc::atexit(stop_at_exit);
        }
        Ok(cluster)
    }

    /// A cluster of the caller's own, for a test that stops the server
    /// under load ([`Cluster::stop`], [`Cluster::start_again`]); stopped
    /// and removed when dropped. Panics, naming why, when no server can
    /// start here.
    pub fn own() -> Self {
        Self::new().unwrap_or_else(|e| panic!("a PostgreSQL cluster of the test's own: {e}"))
    }

    /// `postgres://postgres@127.0.0.1:PORT`, without a database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}", self.port)
    }

    /// A new, empty database on this cluster.
    pub async fn fresh_database(&self) -> Location {
        create_database(&self.url()).await
    }

    /// A fast shutdown (SIGINT: every client connection is cut, what was
    /// committed is kept), waiting until the server has exited.
    pub fn stop(&mut self) {
        if let Some(pid) = self.pid.take() {
            signal_and_wait(pid, libc::SIGINT, Duration::from_secs(30));
        }
    }

    /// The server again, on the same data and port, once it listens.
    pub fn start_again(&mut self) {
        if self.pid.is_none() {
            let pid = spawn_server(&self.dir, self.port)
                .unwrap_or_else(|e| panic!("restarting the test PostgreSQL: {e}"));
            self.pid = Some(pid);
        }
    }

    fn new() -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!(
            "ws-test-pg-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let port = free_port()?;
        let pid = spawn_server(&dir, port)?;
        Ok(Cluster {
            port,
            dir,
            pid: Some(pid),
        })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(pid) = self.pid.take() {
            // Immediate shutdown: nothing of a test cluster is kept.
            signal_and_wait(pid, libc::SIGQUIT, Duration::from_secs(1));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `scripts/pg-cluster run DIR PORT` (initdb on the first run), as a child
/// that dies with this process; returns the postmaster's pid once the
/// server accepts connections.
fn spawn_server(dir: &std::path::Path, port: u16) -> Result<u32, String> {
    let dir = dir.to_path_buf();
    // Spawned and waited for by a thread of its own that lives as long
    // as the server: the parent-death signal follows the spawning
    // thread, not the process.
    let (tx, rx) = std::sync::mpsc::channel::<Result<u32, String>>();
    let (sock, log) = (dir.clone(), dir.join("server.log"));
    std::thread::spawn(move || {
        let log = match std::fs::File::create(&log) {
            Ok(f) => f,
            Err(e) => {
                let _ = tx.send(Err(format!("server log: {e}")));
                return;
            }
        };
        let mut command = Command::new("bash");
        command
            .arg(CLUSTER_SCRIPT)
            .arg("run")
            .arg(&sock)
            .arg(port.to_string())
            // A test cluster: nothing here must survive a power cut.
            .args(["-c", "fsync=off", "-c", "full_page_writes=off"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: prctl in the child before exec, async-signal-safe.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        match command.spawn() {
            Ok(mut child) => {
                let _ = tx.send(Ok(child.id()));
                let _ = child.wait();
            }
            Err(e) => {
                let _ = tx.send(Err(format!("starting {CLUSTER_SCRIPT}: {e}")));
            }
        }
    });
    let pid = rx
        .recv()
        .map_err(|_| "the server thread ended".to_string())??;
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
            return Err(format!(
                "the test PostgreSQL did not listen on {port}:\n{log}"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(pid)
}

/// Sends `signal` to our child `pid` and waits up to `within` for it to
/// exit.
fn signal_and_wait(pid: u32, signal: libc::c_int, within: Duration) {
    // SAFETY: signalling our own child by pid.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
    let deadline = Instant::now() + within;
    // SAFETY: signal 0 only checks that the process exists.
    while unsafe { libc::kill(pid as libc::pid_t, 0) } == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

extern "C" fn stop_at_exit() {
    let Ok(mut running) = RUNNING.lock() else {
        return;
    };
    if let Some((pid, dir)) = running.take() {
        // Immediate shutdown: nothing of a test cluster is kept.
        signal_and_wait(pid, libc::SIGQUIT, Duration::from_secs(1));
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}
