//! The gateway benchmark's floor: Debian's `nginx` as a plain reverse proxy
//! in front of the same backends (NOTES.md, "The hub's hot path": what
//! any proxy pays; DESIGN.md §4).
//!
//! One nginx, a temporary config in the bench's own directory, one loopback
//! port per backend, kept-alive upstream connections (as the hub keeps its
//! pool), no access log. Dropping it stops the process.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running nginx; dropping it kills it.
pub struct Nginx {
    child: Child,
    dir: PathBuf,
}

impl Nginx {
    /// The master process's id (its workers are its children).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts `nginx` with one `(listen_port, upstream_port)` per backend,
    /// and waits until every listen port answers.
    pub fn start(nginx: &Path, dir: &Path, routes: &[(u16, u16)]) -> Nginx {
        let dir = dir.join("nginx");
        std::fs::create_dir_all(dir.join("tmp")).expect("nginx dir");
        let mut http = String::new();
        for (i, (listen, upstream)) in routes.iter().enumerate() {
            http += &format!(
                "  upstream backend{i} {{ server 127.0.0.1:{upstream}; keepalive 128; keepalive_requests 1000000; keepalive_timeout 60s; }}\n\
                 \x20 server {{\n\
                 \x20   listen 127.0.0.1:{listen};\n\
                 \x20   keepalive_requests 1000000;\n\
                 \x20   location / {{\n\
                 \x20     proxy_pass http://backend{i};\n\
                 \x20     proxy_http_version 1.1;\n\
                 \x20     proxy_set_header Connection \"\";\n\
                 \x20   }}\n\
                 \x20 }}\n"
            );
        }
        let d = dir.display();
        let conf = format!(
            "# Written by hub/benches/gateway/nginx.rs for one bench run.\n\
             worker_processes auto;\n\
             daemon off;\n\
             pid {d}/nginx.pid;\n\
             error_log {d}/error.log warn;\n\
             events {{ worker_connections 4096; }}\n\
             http {{\n\
             \x20 access_log off;\n\
             \x20 client_body_temp_path {d}/tmp/body;\n\
             \x20 proxy_temp_path {d}/tmp/proxy;\n\
             \x20 fastcgi_temp_path {d}/tmp/fastcgi;\n\
             \x20 uwsgi_temp_path {d}/tmp/uwsgi;\n\
             \x20 scgi_temp_path {d}/tmp/scgi;\n\
             {http}}}\n"
        );
        let path = dir.join("nginx.conf");
        std::fs::write(&path, conf).expect("write nginx.conf");
        let log = std::fs::File::create(dir.join("stderr.log")).expect("nginx log");
        let child = Command::new(nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", nginx.display()));
        let mut me = Nginx { child, dir };
        let until = Instant::now() + Duration::from_secs(10);
        for (listen, _) in routes {
            while std::net::TcpStream::connect(("127.0.0.1", *listen)).is_err() {
                if Instant::now() > until || me.child.try_wait().ok().flatten().is_some() {
                    panic!("nginx did not start: {}", me.log());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        me
    }

    /// Its error log and stderr, for a panic message.
    pub fn log(&self) -> String {
        ["error.log", "stderr.log"]
            .iter()
            .map(|f| std::fs::read_to_string(self.dir.join(f)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGKILL reaches the master only: SIGTERM lets it stop its
        // workers first.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
