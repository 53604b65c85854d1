//! TLS at the hub's door, and the client certificate a member presents.
//!
//! The hub can listen with TLS ([`ServerTls`], `--tls-addr` with
//! `--tls-cert` and `--tls-key`) beside its plain listener. A TLS client is
//! asked for a certificate but not made to present one, and any
//! certificate it presents is accepted at the handshake once it proves it
//! holds the certificate's key ([`client_auth::Deferred`]). Which system a
//! certificate belongs to is the auth chain's decision (the `auth` module's
//! mTLS layer), taken per call against the topology the call runs under:
//! so a refusal is an `AUTH_REJECTED` the caller can read, with the same
//! message on every binding, instead of a handshake that fails with
//! nothing said, and a topology reload changes who is who without a
//! restart.
//!
//! | room | what it holds |
//! |---|---|
//! | here | [`ClientCertificate`] (what a connection presented, with its SPKI pin), [`ServerTls`] (the listener's config), PEM reading |
//! | [`client_auth`] | the handshake's verifier, and a member's CA check ([`client_auth::MemberCa`]) |
//! | [`client`] | the hub as a TLS client of an `https://` provider: the CAs it trusts, the certificate it presents |
//! | [`dev_certs`] | `hub certs`: a CA per system, their client certificates and the hub's own, for the demo and tests |

pub mod client;
pub mod client_auth;
pub mod dev_certs;

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};

/// Why TLS material could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file is missing, unreadable or holds nothing of the kind asked.
    #[error("{path}: {what}")]
    Pem { path: String, what: String },
    /// rustls refused the certificate and key together.
    #[error("the TLS certificate and key do not make a server configuration: {0}")]
    Config(#[from] rustls::Error),
    /// A member CA cannot verify anything (an empty or unusable store).
    #[error("{path}: not a CA certificate rustls can verify with: {why}")]
    Ca { path: String, why: String },
    /// A TLS client could not be built from the material.
    #[error("building the hub's TLS client: {0}")]
    Client(String),
    /// Generating the demo certificates failed.
    #[error("generating certificates: {0}")]
    Generate(String),
}

/// The certificates of a PEM file (at least one).
pub fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem_error = |what: String| TlsError::Pem {
        path: path.display().to_string(),
        what,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| pem_error(format!("cannot read certificates: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(format!("not a PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(pem_error("holds no certificate".into()));
    }
    Ok(certs)
}

/// The private key of a PEM file.
pub fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::Pem {
        path: path.display().to_string(),
        what: format!("not a PEM private key: {e}"),
    })
}

/// The ring provider every TLS configuration of the hub is built on.
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The certificate chain a TLS client presented, as the listener saw it
/// after the handshake. Cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct ClientCertificate(Arc<Presented>);

struct Presented {
    chain: Vec<CertificateDer<'static>>,
    spki_sha256: Option<String>,
}

impl std::fmt::Debug for ClientCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCertificate")
            .field("spki_sha256", &self.0.spki_sha256)
            .field("chain", &self.0.chain.len())
            .finish()
    }
}

impl ClientCertificate {
    /// What a connection presented; `None` for an empty chain.
    pub fn presented(chain: &[CertificateDer<'static>]) -> Option<Self> {
        let end_entity = chain.first()?;
        Some(Self(Arc::new(Presented {
            spki_sha256: spki_sha256(end_entity),
            chain: chain.to_vec(),
        })))
    }

    /// The end-entity certificate (the client's own).
    pub fn end_entity(&self) -> &CertificateDer<'static> {
        &self.0.chain[0]
    }

    /// The certificates the client sent after its own.
    pub fn intermediates(&self) -> &[CertificateDer<'static>] {
        &self.0.chain[1..]
    }

    /// The base64 SHA-256 of the certificate's SubjectPublicKeyInfo (the
    /// pin a topology names; `None` if the certificate does not parse).
    pub fn spki_sha256(&self) -> Option<&str> {
        self.0.spki_sha256.as_deref()
    }
}

/// The SPKI pin of a DER certificate: base64 (standard, padded) of the
/// SHA-256 of its SubjectPublicKeyInfo, as `curl --pinnedpubkey` and
/// `openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl
/// dgst -sha256 -binary | base64` print it.
pub fn spki_sha256(cert: &CertificateDer<'_>) -> Option<String> {
    let parsed = webpki::EndEntityCert::try_from(cert).ok()?;
    let spki = parsed.subject_public_key_info();
    Some(base64::engine::general_purpose::STANDARD.encode(Sha256::digest(spki.as_ref())))
}

/// The TLS listener's configuration: the hub's certificate and key, and a
/// client certificate asked of every client (never required at the
/// handshake: see the module doc).
#[derive(Clone)]
pub struct ServerTls {
    config: Arc<rustls::ServerConfig>,
}

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerTls")
    }
}

impl ServerTls {
    /// From PEM files: the hub's certificate chain and its private key.
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, TlsError> {
        let chain = read_certificates(cert)?;
        let key = read_key(key)?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_client_cert_verifier(Arc::new(client_auth::Deferred::new(provider())))
            .with_single_cert(chain, key)?;
        // HTTP/2 for gRPC clients (which ask for it by ALPN), HTTP/1.1 for
        // everyone else.
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Self {
            config: Arc::new(config),
        })
    }

    /// The acceptor the listener wraps each connection with.
    pub fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(self.config.clone())
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;
