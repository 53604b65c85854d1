//! A tiny HTTP server on one loopback address for the egress tests: it
//! counts every connection it accepts and every request line it reads,
//! and answers each request as its script says — JSON, a redirect, a body
//! that does not end, or nothing at all. One request per connection
//! (`Connection: close`), so every request is a connection of its own.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a request is answered.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this JSON.
    Json(Value),
    /// A redirect (`status`, `Location`).
    Redirect { status: u16, location: String },
    /// 200 with a body that goes on (up to [`ENDLESS_BOUND`], a safety
    /// net) until the client stops reading.
    Endless,
    /// No answer, the connection held open for a minute.
    Hang,
}

/// The most an endless answer writes before it gives up by itself.
pub const ENDLESS_BOUND: usize = 64 * 1024 * 1024;

/// One request line, as read.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`…
    pub method: String,
    /// The path and query.
    pub path: String,
    /// Where it was sent: this server's `http://IP:PORT` (what an issuer
    /// names itself by).
    pub origin: String,
}

/// How an endless answer ended.
#[derive(Debug, Clone, Copy)]
pub struct EndlessRun {
    /// Body bytes written before the client stopped reading.
    pub written: usize,
    /// Whether the client closed the connection (a write failed) before
    /// [`ENDLESS_BOUND`].
    pub cut: bool,
    /// How long it went on.
    pub took: Duration,
}

type Script = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

/// The server (module doc); stops when dropped.
pub struct Listener {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Request>>>,
    endless: Arc<Mutex<Vec<EndlessRun>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listener {
    /// Listens at `addr` (`127.0.0.2:0`: any port of 127.0.0.2), answering
    /// by `script`.
    pub async fn bind(
        addr: &str,
        script: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Listener {
        let listener = TcpListener::bind(addr)
            .await
            .unwrap_or_else(|e| panic!("bind {addr}: {e}"));
        let addr = listener.local_addr().expect("bound address");
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let endless = Arc::new(Mutex::new(Vec::new()));
        let script: Script = Arc::new(script);
        let task = {
            let (connections, requests, endless) =
                (connections.clone(), requests.clone(), endless.clone());
            tokio::spawn(async move {
                let origin = format!("http://{addr}");
                while let Ok((stream, _)) = listener.accept().await {
                    connections.fetch_add(1, Ordering::SeqCst);
                    let (script, requests, endless) =
                        (script.clone(), requests.clone(), endless.clone());
                    tokio::spawn(serve(stream, origin.clone(), script, requests, endless));
                }
            })
        };
        Listener {
            addr,
            connections,
            requests,
            endless,
            task,
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://IP:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Requests read so far.
    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().expect("requests").clone()
    }

    /// Requests read so far whose path starts with `prefix`.
    pub fn count(&self, prefix: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.path.starts_with(prefix))
            .count()
    }

    /// The endless answers that ended so far.
    pub fn endless_runs(&self) -> Vec<EndlessRun> {
        self.endless.lock().expect("runs").clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    origin: String,
    script: Script,
    requests: Arc<Mutex<Vec<Request>>>,
    endless: Arc<Mutex<Vec<EndlessRun>>>,
) {
    let Some(request) = read_request(&mut stream, origin).await else {
        return;
    };
    requests.lock().expect("requests").push(request.clone());
    match script(&request) {
        Reply::Json(value) => {
            let body = value.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
        }
        Reply::Redirect { status, location } => {
            let head = format!(
                "HTTP/1.1 {status} Redirect\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(head.as_bytes()).await;
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        Reply::Endless => {
            let started = Instant::now();
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"keys\":[";
            let chunk = vec![b' '; 64 * 1024];
            let mut written = 0;
            let mut cut = stream.write_all(head.as_bytes()).await.is_err();
            while !cut && written < ENDLESS_BOUND {
                match stream.write_all(&chunk).await {
                    Ok(()) => written += chunk.len(),
                    Err(_) => cut = true,
                }
            }
            endless.lock().expect("runs").push(EndlessRun {
                written,
                cut,
                took: started.elapsed(),
            });
        }
    }
    let _ = stream.shutdown().await;
}

/// Reads one request's head (and its body, by `Content-Length`); `None`
/// if the client closed or sent no HTTP.
async fn read_request(stream: &mut TcpStream, origin: String) -> Option<Request> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1024];
    let end = loop {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut byte))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&byte[..n]);
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let mut line = head.lines().next()?.split_whitespace();
    let request = Request {
        method: line.next()?.to_string(),
        path: line.next()?.to_string(),
        origin,
    };
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = buf.len() - end;
    while body < length {
        let n = stream.read(&mut byte).await.ok()?;
        if n == 0 {
            break;
        }
        body += n;
    }
    Some(request)
}
