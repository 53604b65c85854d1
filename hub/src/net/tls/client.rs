//! The hub as a TLS client of its providers.
//!
//! A provider whose topology address is `https://` is called over TLS
//! (the gateway's forwards and the prober's probes). The hub trusts the
//! CAs its operator names for providers (`WS_TLS_PROVIDER_CA`, a PEM file
//! of one or more CA certificates: no system store, the members are known)
//! and presents its own client certificate when one is configured
//! (`WS_TLS_CLIENT_CERT` and `WS_TLS_CLIENT_KEY`), so a provider that asks
//! for one knows the call comes from the hub. The certificate is the
//! hub's credential alone: a caller's certificate ends at the hub's door
//! and never travels further.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::PrivateKeyDer;
use rustls::RootCertStore;

use super::{provider, read_certificates, read_key, TlsError};

/// The CA file's variable.
pub const PROVIDER_CA_ENV: &str = "WS_TLS_PROVIDER_CA";
/// The client certificate's variable.
pub const CLIENT_CERT_ENV: &str = "WS_TLS_CLIENT_CERT";
/// The client key's variable.
pub const CLIENT_KEY_ENV: &str = "WS_TLS_CLIENT_KEY";

/// What the hub trusts and presents as a TLS client (module doc).
#[derive(Clone)]
pub struct ProviderTls {
    config: Arc<rustls::ClientConfig>,
    /// The same material as PEM text, for reqwest's builder.
    roots_pem: Vec<u8>,
    identity_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for ProviderTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderTls")
            .field("client_certificate", &self.identity_pem.is_some())
            .finish()
    }
}

impl ProviderTls {
    /// From the environment: `None` when no variable is set; an error
    /// names the variable or the file that is wrong.
    pub fn from_env() -> Result<Option<Self>, TlsError> {
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        let ca = var(PROVIDER_CA_ENV);
        let identity = match (var(CLIENT_CERT_ENV), var(CLIENT_KEY_ENV)) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => {
                return Err(TlsError::Pem {
                    path: format!("{CLIENT_CERT_ENV}, {CLIENT_KEY_ENV}"),
                    what: "set both or neither".into(),
                })
            }
        };
        if ca.is_none() && identity.is_none() {
            return Ok(None);
        }
        let identity = identity.as_ref().map(|(c, k)| (c.as_path(), k.as_path()));
        Self::new(ca.as_deref(), identity).map(Some)
    }

    /// Trusting the CAs of `ca` (none: no https provider verifies),
    /// presenting `identity` (certificate and key PEM files) if given.
    pub fn new(ca: Option<&Path>, identity: Option<(&Path, &Path)>) -> Result<Self, TlsError> {
        let mut roots = RootCertStore::empty();
        let mut roots_pem = Vec::new();
        if let Some(ca) = ca {
            for cert in read_certificates(ca)? {
                roots.add(cert).map_err(|e| TlsError::Ca {
                    path: ca.display().to_string(),
                    why: e.to_string(),
                })?;
            }
            roots_pem = read_file(ca)?;
        }
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots);
        let (config, identity_pem) = match identity {
            Some((cert, key)) => {
                let chain = read_certificates(cert)?;
                let key_der: PrivateKeyDer<'static> = read_key(key)?;
                let mut pem = read_file(cert)?;
                pem.extend(read_file(key)?);
                (builder.with_client_auth_cert(chain, key_der)?, Some(pem))
            }
            None => (builder.with_no_client_auth(), None),
        };
        Ok(Self {
            config: Arc::new(config),
            roots_pem,
            identity_pem,
        })
    }

    /// The rustls configuration (the gateway's hyper client).
    pub fn rustls(&self) -> rustls::ClientConfig {
        self.config.as_ref().clone()
    }

    /// `builder` trusting the same CAs and presenting the same certificate
    /// (the prober's reqwest client).
    pub fn reqwest(
        &self,
        mut builder: reqwest::ClientBuilder,
    ) -> Result<reqwest::ClientBuilder, TlsError> {
        let reqwest_error = |e: reqwest::Error| TlsError::Client(e.to_string());
        builder = builder.use_rustls_tls().tls_built_in_root_certs(false);
        if !self.roots_pem.is_empty() {
            for cert in
                reqwest::Certificate::from_pem_bundle(&self.roots_pem).map_err(reqwest_error)?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        if let Some(pem) = &self.identity_pem {
            builder = builder.identity(reqwest::Identity::from_pem(pem).map_err(reqwest_error)?);
        }
        Ok(builder)
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|e| TlsError::Pem {
        path: path.display().to_string(),
        what: format!("cannot read: {e}"),
    })
}
