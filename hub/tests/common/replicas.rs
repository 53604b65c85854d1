//! Hub replicas for the tests: several `hub` processes of this build on
//! one PostgreSQL database (a fresh one of the test cluster), behind
//! Debian's nginx configured from `config/nginx/replicas.conf` — the same
//! template `scripts/stack start --replicas N` fills in. Peers and clients
//! talk to the balancer; a test may also reach one replica directly, or
//! kill one (SIGKILL).
//!
//! A replica binds port 0 when first started and names its port in its
//! log, like a lone hub; nginx cannot (it refuses port 0), so the balancer
//! alone listens on a [`free_port`] picked just before it starts.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use super::{free_port, hub_reports_its_port, repo, reported_port, wait_answering, Stack};

/// The replica processes and the balancer of a stack.
pub struct Replicas {
    /// Each replica's port; 0 until it first runs.
    ports: Vec<u16>,
    hubs: Vec<Option<Child>>,
    nginx: Option<Child>,
}

impl Replicas {
    /// `count` replicas, none started yet.
    pub fn new(count: usize) -> Self {
        Self {
            ports: vec![0; count],
            hubs: (0..count).map(|_| None).collect(),
            nginx: None,
        }
    }

    /// How many replicas.
    pub fn len(&self) -> usize {
        self.ports.len()
    }

    /// Whether any replica runs.
    pub fn running(&self) -> bool {
        self.hubs.iter().any(Option::is_some)
    }

    /// Kills every replica and the balancer.
    pub fn kill_all(&mut self) {
        for hub in self.hubs.iter_mut() {
            if let Some(mut c) = hub.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        if let Some(c) = self.nginx.take() {
            stop_nginx(c);
        }
    }
}

/// Stops nginx the way that takes its workers along: SIGTERM to the master
/// (a SIGKILLed master leaves its workers holding the port).
fn stop_nginx(mut master: Child) {
    // SAFETY: signalling our own child by its pid.
    unsafe {
        libc::kill(master.id() as libc::pid_t, libc::SIGTERM);
    }
    for _ in 0..100 {
        if matches!(master.try_wait(), Ok(Some(_))) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = master.kill();
    let _ = master.wait();
}

/// Debian's nginx (`WS_NGINX` overrides).
pub fn nginx_bin() -> PathBuf {
    std::env::var_os("WS_NGINX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/sbin/nginx"))
}

impl Stack {
    fn replicas_ref(&self) -> &Replicas {
        self.replicas
            .as_ref()
            .expect("a stack started with Stack::start_replicas")
    }

    fn replicas_mut(&mut self) -> &mut Replicas {
        self.replicas
            .as_mut()
            .expect("a stack started with Stack::start_replicas")
    }

    /// Replica `i`'s own address (not the balancer's).
    pub fn replica_url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}", self.replicas_ref().ports[i])
    }

    /// Replica `i`'s log file.
    pub fn replica_log(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("hub-{i}.log"))
    }

    /// Replica `i`'s process id, while it runs.
    pub fn replica_pid(&self, i: usize) -> Option<u32> {
        self.replicas_ref().hubs[i].as_ref().map(Child::id)
    }

    /// How many replicas the stack has.
    pub fn replica_count(&self) -> usize {
        self.replicas_ref().len()
    }

    /// Starts (or restarts) replica `i` on the shared database — on port 0
    /// the first time, then on the port it got — and waits until it guards
    /// its door.
    pub async fn start_replica(&mut self, i: usize) {
        self.kill_replica(i);
        let known = self.replicas_ref().ports[i];
        let port = if known == 0 && !hub_reports_its_port() {
            free_port()
        } else {
            known
        };
        let log = self.replica_log(i);
        // The balancer's port is the stack's address: chosen now if the
        // balancer has not started yet, so each replica names it as its
        // public address (what its cards say and its signatures bind to).
        if self.hub_port == 0 {
            self.hub_port = free_port();
        }
        let env = [
            (
                "WS_PUBLIC_URL".to_string(),
                format!("http://127.0.0.1:{}", self.hub_port),
            ),
            // The balancer is the one proxy whose X-Forwarded-For counts.
            ("WS_TRUSTED_PROXIES".to_string(), "127.0.0.1/32".to_string()),
            // Every connection comes from the balancer.
            (
                "WS_MAX_CONNECTIONS_PER_ADDRESS".to_string(),
                "8192".to_string(),
            ),
        ];
        let child = self.spawn_hub(port, &log, &env);
        let child = self.replicas_mut().hubs[i].insert(child);
        let port = if hub_reports_its_port() {
            reported_port(child, &log, "hub listening on ").await
        } else {
            port
        };
        self.replicas_mut().ports[i] = port;
        wait_answering(&format!("http://127.0.0.1:{port}/api/session"), 401, &log).await;
    }

    /// Kills replica `i` (SIGKILL: its connections, its locks, its
    /// in-flight calls die with it).
    pub fn kill_replica(&mut self, i: usize) {
        if let Some(r) = self.replicas.as_mut() {
            if let Some(mut c) = r.hubs[i].take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    /// Starts nginx on the stack's hub port in front of every replica: a
    /// [`free_port`] the first time (nginx refuses port 0), then the same.
    pub(super) async fn start_balancer(&mut self) {
        if self.hub_port == 0 {
            self.hub_port = free_port();
        }
        let state = self.dir.path().join("nginx");
        std::fs::create_dir_all(&state).expect("nginx dir");
        let servers = self
            .replicas_ref()
            .ports
            .iter()
            .map(|p| format!("server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;"))
            .collect::<Vec<_>>()
            .join("\n        ");
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let conf = std::fs::read_to_string(repo().join("config/nginx/replicas.conf"))
            .expect("config/nginx/replicas.conf")
            .replace("@USER@", if root { "user root;" } else { "" })
            .replace("@STATE@", &state.display().to_string())
            .replace("@LISTEN@", &format!("127.0.0.1:{}", self.hub_port))
            .replace("@SERVERS@", &servers);
        let conf_path = state.join("nginx.conf");
        std::fs::write(&conf_path, conf).expect("write nginx.conf");
        let log = std::fs::File::create(state.join("nginx.out")).expect("log");
        let child = Command::new(nginx_bin())
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(&state)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "starting nginx ({}): {e} — scripts/setup test installs it",
                    nginx_bin().display()
                )
            });
        self.replicas_mut().nginx = Some(child);
        wait_answering(
            &format!("{}/api/session", self.hub_url()),
            401,
            &state.join("nginx.out"),
        )
        .await;
    }
}
