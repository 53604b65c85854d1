//! The hub's listener: how connections are accepted and how long a client
//! may take to say what it wants (DESIGN.md §1, reliability: one bad
//! client, like one dead peer, must not take the hub's door with it).
//!
//! `axum::serve` accepts every connection and waits for its request
//! headers forever, so a slow-loris client (headers one byte at a time) or
//! a flood of idle connections holds the hub's sockets and file
//! descriptors until nobody else gets in. This accept loop serves the same
//! router with three bounds ([`ConnectionLimits`]):
//! * a connection must send its request headers within
//!   [`ConnectionLimits::header_timeout`] (hyper's header read timeout;
//!   this covers a connection that sends nothing at all and an idle
//!   keep-alive connection between requests);
//! * at most [`ConnectionLimits::per_address`] connections from one client
//!   address at once: the next one is closed at accept, so one flooding
//!   machine cannot use up the hub's sockets for everyone else;
//! * at most [`ConnectionLimits::total`] connections in all, the same way.
//!
//! **Behind a load balancer** every connection comes from the balancer.
//! Its address is named in `WS_TRUSTED_PROXIES` ([`TrustedProxies`]); for
//! a request from such an address the client is the right-most address of
//! `X-Forwarded-For` that is not itself a trusted proxy (what the balancer
//! saw; anything a client wrote into the header stands left of it). That
//! address is the request's `ConnectInfo`, so the auth chain's IP
//! allowlist, the login limits and `/metrics`' door all see the client,
//! never the balancer. The connection caps count TCP connections, so
//! behind a balancer the per-address cap is raised to the total.
//!
//! **Over TLS** ([`serve_with`] with a [`ServerTls`], the hub's second
//! listener) each connection's handshake must end within the header
//! timeout, and the certificate the client presented rides on each of its
//! requests. A request's [`Peer`] is what the doors read of the other end:
//! its address (as above) and that certificate (`crate::net::tls`).
//!
//! **Two HTTP versions.** Browsers, SDKs and the balancer speak HTTP/1.1;
//! gRPC clients speak HTTP/2 (A2A's gRPC binding). Over TLS the client
//! says which by ALPN (`h2`); in the clear, a gRPC client opens with
//! HTTP/2's connection preface ("prior knowledge"), which [`sniff`] reads
//! within the header timeout before the connection is given to the
//! version's server. HTTP/2 carries the request's host as `:authority`,
//! not `Host`; the listener writes it into `Host`, which is what the hub
//! reads (its public addresses, a provider's own host).
//!
//! Request bodies and answers have their own bounds where they are read
//! (the gateway's body limit, the answer cap and every call's deadline).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::net::networks::Networks;
use axum::extract::ConnectInfo;
use axum::http::HeaderMap;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::net::tls::{ClientCertificate, ServerTls};

/// The header timeout's variable, in seconds.
pub const HEADER_TIMEOUT_ENV: &str = "WS_HEADER_TIMEOUT_SECS";
/// The per-address cap's variable.
pub const PER_ADDRESS_ENV: &str = "WS_MAX_CONNECTIONS_PER_ADDRESS";
/// The total cap's variable.
pub const TOTAL_ENV: &str = "WS_MAX_CONNECTIONS";
/// The trusted proxies' variable: CIDRs, comma-separated.
pub const TRUSTED_PROXIES_ENV: &str = "WS_TRUSTED_PROXIES";

/// The load balancers whose `X-Forwarded-For` names the client (none by
/// default: then every request's client is its TCP peer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Networks);

impl TrustedProxies {
    /// From [`TRUSTED_PROXIES_ENV`]; a bad entry is named.
    pub fn from_env() -> Result<Self, String> {
        Networks::from_env(TRUSTED_PROXIES_ENV, Networks::default()).map(Self)
    }

    /// `10.0.0.0/8, 127.0.0.1` (a bare address is one host).
    pub fn parse(list: &str) -> Result<Self, String> {
        Networks::parse(TRUSTED_PROXIES_ENV, list).map(Self)
    }

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.contains(ip)
    }

    /// The client of a request that arrived from `remote` with `headers`
    /// (port 0 when it comes from the header: the balancer knows it, the
    /// hub does not).
    pub fn client(&self, remote: SocketAddr, headers: &HeaderMap) -> SocketAddr {
        if !self.trusts(remote.ip()) {
            return remote;
        }
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        let mut client = remote;
        for hop in hops.iter().rev() {
            let ip = match hop.parse::<IpAddr>() {
                Ok(ip) => ip,
                Err(_) => match hop.parse::<SocketAddr>() {
                    Ok(a) => a.ip(),
                    // Garbage where the balancer writes: trust nothing
                    // further left.
                    Err(_) => return client,
                },
            };
            client = SocketAddr::new(ip, 0);
            if !self.trusts(ip) {
                break;
            }
        }
        client
    }
}

/// The bounds of the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// How long a connection may take to send a request's headers: 10 s.
    pub header_timeout: Duration,
    /// Connections from one address at once: 512.
    pub per_address: usize,
    /// Connections at once: 8,192.
    pub total: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            per_address: 512,
            total: 8_192,
        }
    }
}

impl ConnectionLimits {
    /// The defaults with [`HEADER_TIMEOUT_ENV`], [`PER_ADDRESS_ENV`] and
    /// [`TOTAL_ENV`] applied when set; a bad value is named.
    pub fn from_env() -> Result<Self, String> {
        let mut limits = Self::default();
        let read = |name: &str| -> Result<Option<u64>, String> {
            match std::env::var(name) {
                Err(_) => Ok(None),
                Ok(v) => match v.trim().parse::<u64>() {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => Err(format!(
                        "{name}: `{}` is not a whole number above zero",
                        exchange::text::clip(&v, 32)
                    )),
                },
            }
        };
        if let Some(secs) = read(HEADER_TIMEOUT_ENV)? {
            limits.header_timeout = Duration::from_secs(secs);
        }
        if let Some(n) = read(PER_ADDRESS_ENV)? {
            limits.per_address = usize::try_from(n).unwrap_or(usize::MAX);
        }
        if let Some(n) = read(TOTAL_ENV)? {
            limits.total = usize::try_from(n).unwrap_or(usize::MAX);
        }
        Ok(limits)
    }
}

/// Who holds connections right now.
#[derive(Debug, Default)]
struct Open {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// One admitted connection; dropping it frees its place.
struct Place {
    open: Arc<Mutex<Open>>,
    address: IpAddr,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.by_address.get_mut(&self.address) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

/// A place for a connection from `address`, or `None` over a cap.
fn admit(open: &Arc<Mutex<Open>>, limits: ConnectionLimits, address: IpAddr) -> Option<Place> {
    let mut state = open.lock().unwrap_or_else(|p| p.into_inner());
    let from_here = state.by_address.get(&address).copied().unwrap_or(0);
    if state.total >= limits.total || from_here >= limits.per_address {
        return None;
    }
    state.total += 1;
    *state.by_address.entry(address).or_insert(0) += 1;
    Some(Place {
        open: open.clone(),
        address,
    })
}

/// Serves `app` on `listener` within `limits` until `signal` completes,
/// then lets open connections finish their requests and returns. Each
/// request carries its `ConnectInfo<SocketAddr>` as with
/// `into_make_service_with_connect_info`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    proxies: TrustedProxies,
    signal: impl Future<Output = ()>,
) {
    serve_with(listener, app, limits, proxies, None, signal).await
}

/// [`serve`], over TLS when `tls` is given: each connection's handshake
/// must end within the header timeout, and the certificate the client
/// presented (if any) rides on each of its requests as its [`Peer`]'s.
pub async fn serve_with(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    proxies: TrustedProxies,
    tls: Option<ServerTls>,
    signal: impl Future<Output = ()>,
) {
    let acceptor = tls.map(|tls| tls.acceptor());
    let proxies = Arc::new(proxies);
    let open = Arc::new(Mutex::new(Open::default()));
    let graceful = GracefulShutdown::new();
    // HTTP/1.1, as `axum::serve` speaks it with axum's default features
    // (browsers, SDK clients and the load balancer all use it), and
    // HTTP/2 for gRPC clients.
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    let mut builder2 = http2::Builder::new(TokioExecutor::new());
    builder2
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.header_timeout))
        .keep_alive_timeout(limits.header_timeout);
    let builders = Builders {
        http1: builder,
        http2: builder2,
    };
    let mut signal = std::pin::pin!(signal);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    // Out of file descriptors and the like: wait, retry.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut signal => break,
        };
        let Some(place) = admit(&open, limits, remote.ip()) else {
            tracing::debug!(%remote, "connection refused: over the connection limits");
            drop(stream);
            continue;
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY");
        }
        let connection = Connection {
            app: app.clone(),
            proxies: proxies.clone(),
            builders: builders.clone(),
            remote,
            watcher: graceful.watcher(),
        };
        match &acceptor {
            None => {
                let timeout = limits.header_timeout;
                tokio::spawn(async move {
                    match sniff(&stream, timeout).await {
                        Some(version) => connection.serve(stream, version, None).await,
                        None => tracing::debug!(%remote, "no request within the header timeout"),
                    }
                    drop(place);
                });
            }
            Some(acceptor) => {
                let handshake = acceptor.accept(stream);
                let timeout = limits.header_timeout;
                tokio::spawn(async move {
                    match tokio::time::timeout(timeout, handshake).await {
                        Ok(Ok(stream)) => {
                            let session = stream.get_ref().1;
                            let certificate = session
                                .peer_certificates()
                                .and_then(ClientCertificate::presented);
                            let version = if session.alpn_protocol() == Some(b"h2") {
                                Version::Http2
                            } else {
                                Version::Http1
                            };
                            connection.serve(stream, version, certificate).await;
                        }
                        Ok(Err(error)) => tracing::debug!(%remote, %error, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%remote, "TLS handshake timed out"),
                    }
                    drop(place);
                });
            }
        }
    }
    drop(listener);
    graceful.shutdown().await;
}

/// The HTTP version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    Http1,
    Http2,
}

/// HTTP/2's connection preface: what a client that speaks HTTP/2 in the
/// clear sends first (RFC 9113 §3.4).
const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Which version a connection in the clear speaks, read from its first
/// bytes without consuming them: HTTP/2 when they are the preface,
/// HTTP/1.1 as soon as they cannot be; `None` when the client has not
/// said within `timeout`.
async fn sniff(stream: &tokio::net::TcpStream, timeout: Duration) -> Option<Version> {
    let read = async {
        let mut buf = [0u8; PREFACE.len()];
        let mut seen = 0;
        loop {
            let n = stream.peek(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            if buf[..n] != PREFACE[..n] {
                return Some(Version::Http1);
            }
            if n == PREFACE.len() {
                return Some(Version::Http2);
            }
            if n == seen {
                // Part of the preface and no more yet: peeking again at
                // once would spin on the same bytes.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            seen = n;
        }
    };
    tokio::time::timeout(timeout, read).await.ok().flatten()
}

/// The servers of both versions, configured once.
#[derive(Clone)]
struct Builders {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
}

/// One accepted connection and what serving it needs.
struct Connection {
    app: Router,
    proxies: Arc<TrustedProxies>,
    builders: Builders,
    remote: SocketAddr,
    watcher: hyper_util::server::graceful::Watcher,
}

impl Connection {
    /// Serves the connection's requests in `version` until it closes, each
    /// with its [`Peer`] (and `ConnectInfo`).
    async fn serve<I>(self, io: I, version: Version, certificate: Option<ClientCertificate>)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let Self {
            app,
            proxies,
            builders,
            remote,
            watcher,
        } = self;
        let service = app.map_request(move |mut request: hyper::Request<Incoming>| {
            let client = proxies.client(remote, request.headers());
            host_from_authority(&mut request);
            let extensions = request.extensions_mut();
            extensions.insert(ConnectInfo::<SocketAddr>(client));
            if let Some(certificate) = &certificate {
                extensions.insert(certificate.clone());
            }
            request.map(axum::body::Body::new)
        });
        let service = TowerToHyperService::new(service);
        let ended = match version {
            Version::Http1 => {
                let connection = builders.http1.serve_connection(TokioIo::new(io), service);
                watcher.watch(connection).await.map_err(|e| e.to_string())
            }
            Version::Http2 => {
                let connection = builders.http2.serve_connection(TokioIo::new(io), service);
                watcher.watch(connection).await.map_err(|e| e.to_string())
            }
        };
        if let Err(error) = ended {
            tracing::trace!(%error, "connection ended");
        }
    }
}

/// An HTTP/2 request's `:authority` as its `Host` header, when it has no
/// `Host` of its own.
fn host_from_authority<B>(request: &mut hyper::Request<B>) {
    if request.headers().contains_key(axum::http::header::HOST) {
        return;
    }
    let authority = request
        .uri()
        .authority()
        .and_then(|a| axum::http::HeaderValue::from_str(a.as_str()).ok());
    if let Some(host) = authority {
        request.headers_mut().insert(axum::http::header::HOST, host);
    }
}

/// Who is at the other end of a request: the client's address (behind a
/// trusted balancer, the one it names) and the certificate the client
/// presented over TLS. What the auth chain's IP allowlist and mTLS layer
/// read.
#[derive(Debug, Clone, Default)]
pub struct Peer {
    /// The client's address, when the server knows it.
    pub addr: Option<SocketAddr>,
    /// The client's certificate, when it connected over TLS with one.
    pub certificate: Option<ClientCertificate>,
}

impl Peer {
    /// The peer of `request`, as the listener recorded it.
    pub fn of<B>(request: &http::Request<B>) -> Self {
        Self::from_extensions(request.extensions())
    }

    /// The peer the listener put on a request's extensions (a binding
    /// that reads its request through another library, gRPC's, keeps
    /// them).
    pub fn from_extensions(extensions: &http::Extensions) -> Self {
        Self {
            addr: extensions.get::<ConnectInfo<SocketAddr>>().map(|ci| ci.0),
            certificate: extensions.get::<ClientCertificate>().cloned(),
        }
    }

    /// A peer at `addr` without a certificate.
    pub fn at(addr: SocketAddr) -> Self {
        Self {
            addr: Some(addr),
            certificate: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`sniff`] makes of a client that sends `bytes`, then waits.
    async fn sniffed(bytes: &'static [u8]) -> Option<Version> {
        use tokio::io::AsyncWriteExt;
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let at = listener.local_addr().expect("addr");
        let client = tokio::spawn(async move {
            let mut c = tokio::net::TcpStream::connect(at).await.expect("connect");
            c.write_all(bytes).await.expect("write");
            tokio::time::sleep(Duration::from_secs(2)).await;
        });
        let (server, _) = listener.accept().await.expect("accept");
        let version = sniff(&server, Duration::from_millis(300)).await;
        client.abort();
        version
    }

    #[tokio::test]
    async fn a_connection_says_its_version_with_its_first_bytes_or_is_closed() {
        assert_eq!(sniffed(b"GET / HTTP/1.1\r\n").await, Some(Version::Http1));
        assert_eq!(sniffed(PREFACE).await, Some(Version::Http2));
        // A prefix of something else is HTTP/1.1 at its first byte that
        // differs; half a preface, or nothing, is no request in time.
        assert_eq!(sniffed(b"PRX").await, Some(Version::Http1));
        assert_eq!(sniffed(b"PRI * HTTP").await, None);
        assert_eq!(sniffed(b"").await, None);
    }

    #[test]
    fn one_address_cannot_take_every_place_and_a_closed_one_frees_it() {
        let open = Arc::new(Mutex::new(Open::default()));
        let limits = ConnectionLimits {
            header_timeout: Duration::from_secs(1),
            per_address: 2,
            total: 3,
        };
        let a = IpAddr::from([127, 0, 0, 2]);
        let b = IpAddr::from([127, 0, 0, 3]);
        let first = admit(&open, limits, a).expect("first");
        let _second = admit(&open, limits, a).expect("second");
        assert!(admit(&open, limits, a).is_none(), "a's cap");
        let _third = admit(&open, limits, b).expect("b has its own");
        assert!(admit(&open, limits, b).is_none(), "the total cap");
        drop(first);
        assert!(
            admit(&open, limits, a).is_some(),
            "a closed connection frees its place"
        );
    }

    #[test]
    fn the_client_behind_a_trusted_balancer_is_the_last_hop_it_did_not_write() {
        let proxies = TrustedProxies::parse("127.0.0.1, 10.0.0.0/8").expect("valid");
        let balancer: SocketAddr = "127.0.0.1:50000".parse().expect("addr");
        let headers = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append("x-forwarded-for", v.parse().expect("header"));
            }
            h
        };
        let ip = |a: SocketAddr| a.ip().to_string();
        // The balancer appended the client.
        assert_eq!(
            ip(proxies.client(balancer, &headers(&["203.0.113.7"]))),
            "203.0.113.7"
        );
        // A client's own header stands left of what the balancer wrote.
        assert_eq!(
            ip(proxies.client(balancer, &headers(&["6.6.6.6, 203.0.113.7"]))),
            "203.0.113.7"
        );
        // A chain of trusted proxies is walked through.
        assert_eq!(
            ip(proxies.client(balancer, &headers(&["203.0.113.7", "10.1.2.3"]))),
            "203.0.113.7"
        );
        // No header, or garbage: the TCP peer.
        assert_eq!(proxies.client(balancer, &HeaderMap::new()), balancer);
        assert_eq!(proxies.client(balancer, &headers(&["not-an-ip"])), balancer);
        // From an untrusted address the header means nothing.
        let direct: SocketAddr = "198.51.100.1:4000".parse().expect("addr");
        assert_eq!(proxies.client(direct, &headers(&["127.0.0.1"])), direct);
        // Nobody is trusted by default.
        assert_eq!(
            TrustedProxies::default().client(balancer, &headers(&["203.0.113.7"])),
            balancer
        );
        assert_eq!(
            TrustedProxies::parse("10.0.0.0/33").expect_err("bad"),
            "WS_TRUSTED_PROXIES: `10.0.0.0/33` is not an address or a CIDR"
        );
    }

    #[test]
    fn limits_come_from_the_environment_and_bad_values_are_named() {
        // The variables are read by name; only this test sets them.
        std::env::set_var(HEADER_TIMEOUT_ENV, "3");
        std::env::set_var(PER_ADDRESS_ENV, "7");
        std::env::remove_var(TOTAL_ENV);
        let limits = ConnectionLimits::from_env().expect("valid");
        assert_eq!(limits.header_timeout, Duration::from_secs(3));
        assert_eq!(limits.per_address, 7);
        assert_eq!(limits.total, ConnectionLimits::default().total);
        std::env::set_var(PER_ADDRESS_ENV, "0");
        let err = ConnectionLimits::from_env().expect_err("zero");
        assert_eq!(
            err,
            "WS_MAX_CONNECTIONS_PER_ADDRESS: `0` is not a whole number above zero"
        );
        std::env::remove_var(HEADER_TIMEOUT_ENV);
        std::env::remove_var(PER_ADDRESS_ENV);
    }
}
