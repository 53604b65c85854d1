//! The gateway's HTTP client for the provider's leg of a call (DESIGN.md
//! §4, "Peer to peer": forward with envelope; §1: a provider can be down,
//! slow or lying).
//!
//! hyper's pooled HTTP/1.1 client (`hyper-util`'s, the one reqwest is built
//! on) used directly: a provider is `http://host:port` or `https://` (the
//! registry refuses anything else), so none of reqwest's layers is needed
//! — no redirects (the registry says where a provider is; a hub never
//! follows one elsewhere with the provider's token), no proxy — and each
//! of those layers cost every call (reqwest parses the URL twice more per
//! request, for its redirect policy; measured on the hot path). An
//! `https://` provider is reached through rustls with what
//! [`ProviderTls`] says: the CAs the hub trusts for providers and the
//! client certificate it presents; a plain one is not touched by it.
//!
//! Connections are made by the egress path's connector
//! ([`crate::net::egress::connect::Connector`], purpose `Member`): the host
//! resolved once per new connection, only the addresses the egress policy
//! allows connected to. A kept connection is reused without asking it.
//!
//! What this file promises the caller (`forward`): the answer is read up
//! to a limit and no further, and a failure becomes one reason code with a
//! detail naming the provider, never its URL
//! ([`exchange::http::transport_failure_of`]; a refusal of the egress
//! policy names the policy and the kind of address, never the address).
//! The deadline is the caller's: it wraps the whole exchange.

use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, StatusCode, Uri};
use http_body_util::Full;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use crate::net::egress::connect::Connector;
use crate::net::egress::{read_capped, refusal_in, BodyError, Egress, Purpose};
use crate::net::tls::client::ProviderTls;
use exchange::http::transport_failure_of;
use exchange::reason::{NotConnected, ReasonCode};

/// The pooled client, one for every provider.
pub(super) struct Providers {
    client: Client<HttpsConnector<Connector>, Full<Bytes>>,
    /// Provider URLs already parsed (they come from the registry and the
    /// providers' cards, never from a caller); emptied if it ever holds
    /// [`Providers::MAX_URLS`].
    uris: RwLock<HashMap<String, Uri>>,
}

/// What came back: the status and the body, `None` when it is larger
/// than the limit.
pub(super) type Answer = (StatusCode, Option<Vec<u8>>);

impl Providers {
    /// More distinct URLs than any registry has providers.
    const MAX_URLS: usize = 1024;

    /// A client that connects through `egress` within `connect_timeout`
    /// and keeps up to `max_idle` idle connections per provider for 30 s;
    /// an `https://` provider with `tls` (without it, with no CA trusted:
    /// such a provider cannot be reached).
    pub(super) fn new(
        connect_timeout: Duration,
        max_idle: usize,
        tls: Option<&ProviderTls>,
        egress: &Egress,
    ) -> Self {
        let http = Connector::new(egress.gate(Purpose::Member), connect_timeout);
        let config = match tls {
            Some(tls) => tls.rustls(),
            None => rustls::ClientConfig::builder_with_provider(crate::net::tls::provider())
                .with_safe_default_protocol_versions()
                .map(|b| {
                    b.with_root_certificates(rustls::RootCertStore::empty())
                        .with_no_client_auth()
                })
                .unwrap_or_else(|_| unreachable!("ring supports the default protocol versions")),
        };
        let connector = HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(max_idle)
            .build(connector);
        Self {
            client,
            uris: RwLock::new(HashMap::new()),
        }
    }

    /// `url` parsed, from the map when it was parsed before; `None` if it
    /// is not a URL.
    pub(super) fn uri(&self, url: &str) -> Option<Uri> {
        if let Some(known) = self.uris.read().ok().and_then(|m| m.get(url).cloned()) {
            return Some(known);
        }
        let parsed: Uri = url.parse().ok()?;
        if let Ok(mut map) = self.uris.write() {
            if map.len() >= Self::MAX_URLS {
                map.clear();
            }
            map.insert(url.to_string(), parsed.clone());
        }
        Some(parsed)
    }

    /// Sends `request` and reads the answer's body up to `limit` bytes;
    /// a transport failure is the reason code for provider `id`.
    pub(super) async fn send(
        &self,
        id: &str,
        request: Request<Full<Bytes>>,
        limit: usize,
    ) -> Result<Answer, NotConnected> {
        let resp = self
            .client
            .request(request)
            .await
            .map_err(|e| match refusal_in(&e) {
                Some(refusal) => NotConnected::new(ReasonCode::PeerUnreachable, refusal.detail(id)),
                None => transport_failure_of(id, &e, e.is_connect()),
            })?;
        let status = resp.status();
        match read_capped(resp.into_body(), limit).await {
            Ok(body) => Ok((status, Some(body))),
            Err(BodyError::TooLarge { .. }) => Ok((status, None)),
            Err(BodyError::Transport(e)) => Err(transport_failure_of(id, &e, false)),
        }
    }
}
