//! The peer's own server over TLS (`tls` in its config): `peer serve`
//! listens with rustls (on ring) on its `listen` address instead of plain
//! HTTP, the card, `/health` and `/a2a` alike.
//!
//! With `tls.client_ca` the handshake REQUIRES a client certificate that CA
//! issued (rustls' WebPKI verifier: chain, validity, client use): the hub
//! presents its own (`WS_TLS_CLIENT_CERT`), so only the hub gets in, and a
//! client without one fails the handshake before any request is read. The
//! bearer token is still checked on `/a2a` behind it: the certificate says
//! the connection comes from the hub, the token that the call does.
//!
//! Each handshake runs in a task of its own, bounded by
//! [`HANDSHAKE_TIMEOUT`], so a client that never finishes one holds up
//! nobody else; finished connections are handed to `axum::serve` through
//! [`TlsListener`].

use crate::config::ServeTlsConfig;
use anyhow::{anyhow, Context};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// How long a client may take to finish its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The rustls server configuration of `tls`: its certificate and key, and
/// with `client_ca` a client certificate that CA issued, required. An
/// unreadable or unusable file is named with its field.
pub fn server_config(tls: &ServeTlsConfig) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certificates(&tls.cert, "tls.cert")?;
    let key = PrivateKeyDer::from_pem_file(&tls.key).map_err(|e| {
        anyhow!(
            "{}: not a PEM private key (tls.key): {e}",
            tls.key.display()
        )
    })?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("rustls protocol versions")?;
    let builder = match &tls.client_ca {
        Some(ca) => {
            let unusable = |why: String| {
                anyhow!(
                    "{}: not a CA certificate rustls can verify with (tls.client_ca): {why}",
                    ca.display()
                )
            };
            let mut roots = RootCertStore::empty();
            for cert in certificates(ca, "tls.client_ca")? {
                roots.add(cert).map_err(|e| unusable(e.to_string()))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| unusable(e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .map_err(|e| anyhow!("tls.cert and tls.key do not make a server configuration: {e}"))?;
    // HTTP/1.1, what the peer's server speaks (and the hub's client asks).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The certificates of the PEM file at `path` (at least one); `field`
/// names it in an error.
fn certificates(path: &Path, field: &str) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| anyhow!("{}: cannot read ({field}): {e}", path.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("{}: not a PEM certificate ({field}): {e}", path.display()))?;
    if certs.is_empty() {
        return Err(anyhow!(
            "{}: holds no PEM certificate ({field})",
            path.display()
        ));
    }
    Ok(certs)
}

/// A TCP listener whose connections arrive with their TLS handshake done
/// (an `axum::serve` listener). Handshakes run in tasks of their own; one
/// that fails or takes longer than [`HANDSHAKE_TIMEOUT`] is logged and
/// dropped. Dropping the listener stops accepting.
pub struct TlsListener {
    addr: SocketAddr,
    accepted: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    accepting: JoinHandle<()>,
}

impl TlsListener {
    /// Accepts on `tcp` and shakes hands with `config`.
    pub fn new(tcp: TcpListener, config: Arc<rustls::ServerConfig>) -> std::io::Result<Self> {
        let addr = tcp.local_addr()?;
        let acceptor = TlsAcceptor::from(config);
        let (tx, accepted) = mpsc::channel(64);
        let accepting = tokio::spawn(async move {
            loop {
                let (stream, remote) = match tcp.accept().await {
                    Ok(pair) => pair,
                    Err(error) => {
                        // Out of file descriptors and the like: wait, retry.
                        tracing::warn!(%error, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            let _ = tx.send((stream, remote)).await;
                        }
                        Ok(Err(error)) => {
                            tracing::warn!(%remote, %error, "TLS handshake failed")
                        }
                        Err(_) => tracing::warn!(%remote, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(Self {
            addr,
            accepted,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.accepted.recv().await {
            Some(connection) => connection,
            // The accepting task is gone (it ends only when dropped).
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
