//! Client certificates: what the handshake checks, and what a member's CA
//! decides later.
//!
//! [`Deferred`] is the listener's verifier. It asks every client for a
//! certificate, lets a client without one through, and accepts any chain
//! whose end entity signs the handshake (so the client holds the key of
//! the certificate it shows: a copied certificate is worth nothing). It
//! does not decide whose the certificate is: the auth chain does, per
//! call, by a pinned key or by [`MemberCa`].

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use super::{read_certificates, ClientCertificate, TlsError};

/// The handshake's verifier (module doc).
#[derive(Debug)]
pub struct Deferred {
    provider: Arc<CryptoProvider>,
}

impl Deferred {
    pub fn new(provider: Arc<CryptoProvider>) -> Self {
        Self { provider }
    }
}

impl ClientCertVerifier for Deferred {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        // Only that it is a certificate: whose it is, and whether its CA
        // vouches for it, is the auth chain's question.
        webpki::EndEntityCert::try_from(end_entity)
            .map(|_| ClientCertVerified::assertion())
            .map_err(|_| rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A member's own CA: a certificate it issued (valid now, for client
/// authentication) is that member's.
#[derive(Clone)]
pub struct MemberCa {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl std::fmt::Debug for MemberCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MemberCa")
    }
}

impl MemberCa {
    /// The CA certificates of the PEM file at `path`.
    pub fn from_pem_file(path: &Path) -> Result<Self, TlsError> {
        let ca_error = |why: String| TlsError::Ca {
            path: path.display().to_string(),
            why,
        };
        let mut roots = RootCertStore::empty();
        for cert in read_certificates(path)? {
            roots.add(cert).map_err(|e| ca_error(e.to_string()))?;
        }
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), super::provider())
                .build()
                .map_err(|e| ca_error(e.to_string()))?;
        Ok(Self { verifier })
    }

    /// Whether this CA issued `presented` (chain, validity, usage).
    pub fn issued(&self, presented: &ClientCertificate) -> bool {
        self.verifier
            .verify_client_cert(
                presented.end_entity(),
                presented.intermediates(),
                UnixTime::now(),
            )
            .is_ok()
    }
}
