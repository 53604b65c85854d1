//! reqwest clients (0.12 for the prober, onboarding and identity; 0.13
//! under rmcp for the data planes) through a [`Gate`].
//!
//! reqwest connects in three ways, and each is checked:
//! - a host **name** goes to the resolver, which is the gate's: only the
//!   allowed addresses come back, and hyper connects to exactly those;
//! - a host that is an **address** skips every resolver: the caller asks
//!   [`Gate::admit`] before each request (the URL's port included);
//! - either way, the **connection just made** is checked on its far end
//!   (its socket's peer address, with the port) by a connector layer
//!   before the client writes a byte of the request on it: the hub's own
//!   listening sockets, whose port a resolver never sees, are caught
//!   there.
//!
//! Each builder also gets `no_proxy()` (a proxy would connect elsewhere
//! for it) and no redirects.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::{Connection, HttpInfo};

use super::gate::Gate;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// What reqwest's resolvers (either version) answer: allowed addresses.
type Resolving = Pin<
    Box<dyn Future<Output = Result<Box<dyn Iterator<Item = SocketAddr> + Send>, BoxError>> + Send>,
>;

/// A reqwest 0.12 client builder that goes out through `gate` only.
pub fn reqwest12(gate: &Gate, builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    builder
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(Names(gate.clone())))
        .connector_layer(CheckConnected(gate.clone()))
}

/// A reqwest 0.13 client builder that goes out through `gate` only.
pub fn reqwest13(gate: &Gate, builder: reqwest13::ClientBuilder) -> reqwest13::ClientBuilder {
    builder
        .no_proxy()
        .redirect(reqwest13::redirect::Policy::none())
        .dns_resolver(Arc::new(Names(gate.clone())))
        .connector_layer(CheckConnected(gate.clone()))
}

/// reqwest's resolver: a name's allowed addresses (the port is the
/// URL's; reqwest sets it).
#[derive(Debug, Clone)]
struct Names(Gate);

impl Names {
    fn lookup(&self, name: &str) -> Resolving {
        let (gate, name) = (self.0.clone(), name.to_string());
        Box::pin(async move {
            let ips = gate
                .resolve(&name)
                .await
                .map_err(|e| Box::new(e) as BoxError)?;
            let addrs = ips.into_iter().map(|ip| SocketAddr::new(ip, 0));
            Ok(Box::new(addrs) as Box<dyn Iterator<Item = SocketAddr> + Send>)
        })
    }
}

impl reqwest::dns::Resolve for Names {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        self.lookup(name.as_str())
    }
}

impl reqwest13::dns::Resolve for Names {
    fn resolve(&self, name: reqwest13::dns::Name) -> reqwest13::dns::Resolving {
        self.lookup(name.as_str())
    }
}

/// The connector layer checking each new connection's far end.
#[derive(Debug, Clone)]
struct CheckConnected(Gate);

impl<S> tower::Layer<S> for CheckConnected {
    type Service = Checked<S>;

    fn layer(&self, inner: S) -> Checked<S> {
        Checked {
            inner,
            gate: self.0.clone(),
        }
    }
}

/// A connector whose connections are checked before they are used.
#[derive(Debug, Clone)]
struct Checked<S> {
    inner: S,
    gate: Gate,
}

impl<S, R> tower::Service<R> for Checked<S>
where
    S: tower::Service<R>,
    S::Response: Connection + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let connecting = self.inner.call(request);
        let gate = self.gate.clone();
        Box::pin(async move {
            let conn = connecting.await.map_err(Into::into)?;
            let mut extras = http::Extensions::new();
            conn.connected().get_extras(&mut extras);
            let remote = extras.get::<HttpInfo>().map(HttpInfo::remote_addr);
            // Refused: the connection is dropped unused.
            gate.connected(remote)
                .map_err(|r| Box::new(r) as BoxError)?;
            Ok(conn)
        })
    }
}
