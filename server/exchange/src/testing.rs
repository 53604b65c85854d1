//! Stores for tests, on both engines (feature `testing`; the store tests
//! of every crate run as a matrix: the same test body on a SQLite file and
//! on a PostgreSQL database).
//!
//! PostgreSQL is a real server: Debian's `postgresql` package, a
//! throwaway cluster made with `initdb` in a temporary directory and
//! started on a free loopback port (as the `postgres` user when the tests
//! run as root: `initdb` refuses root). `WS_TEST_PG_URL` points the tests
//! at a cluster that is already running instead (`scripts/test` starts one
//! for the whole run); each test gets a database of its own in it.
//! `WS_TEST_POSTGRES=0` leaves PostgreSQL out (a machine without it);
//! otherwise a missing server is an error, never a silent skip.
//!
//! A cluster this module starts dies with the test process: the server is
//! a child that receives SIGTERM when its parent thread ends
//! (`setpriv --pdeathsig`), and an exit hook stops it and removes its
//! directory.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
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
    let base = server_url();
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

/// A cluster started for this process.
#[derive(Debug)]
pub struct Cluster {
    /// Its loopback port.
    pub port: u16,
}

/// The directory of Debian's PostgreSQL binaries (`WS_PG_BIN`, or the
/// newest `/usr/lib/postgresql/*/bin` that has `initdb`).
pub fn bin_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("WS_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("no PostgreSQL server here (/usr/lib/postgresql: {e})"))?
        .filter_map(Result::ok)
        .filter_map(|d| {
            let version = d.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = d.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no PostgreSQL server here (no /usr/lib/postgresql/*/bin/initdb)".into())
}

/// Runs `program` as the `postgres` user when this process is root
/// (initdb and postgres refuse root), as this user otherwise. `parent`
/// death (the thread that spawned it) sends it SIGTERM.
pub fn as_server_user(program: &Path) -> Command {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=postgres",
            "--regid=postgres",
            "--init-groups",
            "--pdeathsig=TERM",
        ])
        .arg(program);
        c
    } else {
        Command::new(program)
    }
}

/// Gives `dir` to the `postgres` user when this process is root.
pub fn hand_to_server_user(dir: &Path) -> Result<(), String> {
    // SAFETY: as above.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(());
    }
    let status = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(dir)
        .status()
        .map_err(|e| format!("chown {}: {e}", dir.display()))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("chown {} failed ({status})", dir.display()))
}

impl Cluster {
    fn start() -> Result<Self, String> {
        let bin = bin_dir()?;
        let dir = std::env::temp_dir().join(format!(
            "ws-test-pg-{}-{:08x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        let data = dir.join("data");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        hand_to_server_user(&dir)?;
        let out = as_server_user(&bin.join("initdb"))
            .args([
                "--auth=trust",
                "--username=postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ])
            .arg("-D")
            .arg(&data)
            .stdout(Stdio::null())
            .output()
            .map_err(|e| format!("running initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let port = free_port()?;
        // Spawned and waited for by a thread of its own that lives as long
        // as the server: the parent-death signal follows the spawning
        // thread, not the process.
        let (tx, rx) = std::sync::mpsc::channel::<Result<u32, String>>();
        let (server, sock, log) = (bin.join("postgres"), dir.clone(), dir.join("server.log"));
        let data_dir = data.clone();
        std::thread::spawn(move || {
            let log = match std::fs::File::create(&log) {
                Ok(f) => f,
                Err(e) => {
                    let _ = tx.send(Err(format!("server log: {e}")));
                    return;
                }
            };
            let child: std::io::Result<Child> = as_server_user(&server)
                .arg("-D")
                .arg(&data_dir)
                .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-k"])
                .arg(&sock)
                // A test cluster: nothing here must survive a power cut.
                .args([
                    "-c",
                    "fsync=off",
                    "-c",
                    "full_page_writes=off",
                    "-c",
                    "max_connections=300",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn();
            match child {
                Ok(mut child) => {
                    let _ = tx.send(Ok(child.id()));
                    let _ = child.wait();
                }
                Err(e) => {
                    let _ = tx.send(Err(format!("starting postgres: {e}")));
                }
            }
        });
        let pid = rx
            .recv()
            .map_err(|_| "the server thread ended".to_string())??;
        if let Ok(mut running) = RUNNING.lock() {
            *running = Some((pid, dir.clone()));
        }
        // SAFETY: registering a plain extern "C" function with no
        // captured state.
        unsafe {
            libc::atexit(stop_at_exit);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                return Err(format!(
                    "the test PostgreSQL did not listen on {port}:\n{log}"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Cluster { port })
    }
}

extern "C" fn stop_at_exit() {
    let Ok(mut running) = RUNNING.lock() else {
        return;
    };
    if let Some((pid, dir)) = running.take() {
        // SAFETY: signalling our own child by pid.
        unsafe {
            // Immediate shutdown: nothing of a test cluster is kept.
            libc::kill(pid as libc::pid_t, libc::SIGQUIT);
        }
        for _ in 0..50 {
            // SAFETY: signal 0 only checks that the process exists.
            if unsafe { libc::kill(pid as libc::pid_t, 0) } != 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}
