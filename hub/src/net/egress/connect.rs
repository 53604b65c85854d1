//! The connector under hyper's pooled client (the gateway's provider
//! leg): a `tower::Service<Uri>` that resolves the host itself (or takes
//! the address a URI names), keeps only the addresses the policy allows
//! for its purpose, and connects to those only — TCP with `TCP_NODELAY`,
//! each attempt within the connect timeout, in the resolver's order.
//!
//! It runs once per new connection (the pool reuses a connection without
//! asking it again), so a call on a kept connection costs nothing here.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::gate::{Gate, Unreachable};

/// The connector (module doc).
#[derive(Debug, Clone)]
pub struct Connector {
    gate: Gate,
    connect_timeout: Duration,
}

/// Why no connection was made.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No address the policy allows (or none at all).
    #[error("{0}")]
    Unreachable(#[from] Unreachable),
    /// The URI names no host.
    #[error("the URI names no host")]
    NoHost,
    /// Every allowed address failed; the last failure.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl Connector {
    /// Through `gate`, each TCP connect within `connect_timeout`.
    pub fn new(gate: Gate, connect_timeout: Duration) -> Self {
        Self {
            gate,
            connect_timeout,
        }
    }

    async fn connect(self, uri: Uri) -> Result<TokioIo<TcpStream>, ConnectError> {
        let host = uri.host().ok_or(ConnectError::NoHost)?;
        let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
            Some("https") => 443,
            _ => 80,
        });
        let addrs: Vec<SocketAddr> = self.gate.addresses(host, port).await?;
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        for addr in addrs {
            match tokio::time::timeout(self.connect_timeout, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => {
                    // Requests are small and answered at once: no Nagle delay.
                    if let Err(e) = stream.set_nodelay(true) {
                        tracing::debug!(error = %e, "TCP_NODELAY refused");
                    }
                    return Ok(TokioIo::new(stream));
                }
                Ok(Err(e)) => last = e,
                Err(_) => last = std::io::Error::from(std::io::ErrorKind::TimedOut),
            }
        }
        Err(ConnectError::Io(last))
    }
}

impl tower::Service<Uri> for Connector {
    type Response = TokioIo<TcpStream>;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        Box::pin(self.clone().connect(uri))
    }
}
