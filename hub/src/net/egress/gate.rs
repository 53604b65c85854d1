//! The gate every connection of one purpose passes: a host turned into
//! the addresses the policy allows (resolved here, never again between
//! the check and the connect), a URL whose host is an address checked
//! before a request, and a made connection checked on its far end.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use super::address;
use super::policy::{Policy, Purpose, Refusal, Why};
use super::resolve::{ResolveError, Resolver};

/// One purpose's way out: the policy, the resolver, the purpose.
#[derive(Debug, Clone)]
pub struct Gate {
    pub(super) policy: Arc<Policy>,
    pub(super) resolver: Resolver,
    pub(super) purpose: Purpose,
}

/// Why a host gave no address to connect to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreachable {
    /// Every address was refused: the first refusal.
    #[error("{0}")]
    Refused(#[from] Refusal),
    /// The name does not resolve.
    #[error("{0}")]
    Resolve(#[from] ResolveError),
    /// The host is neither an address nor a name.
    #[error("`{0}` is not a host")]
    BadHost(String),
}

impl Gate {
    /// What it is for.
    pub fn purpose(&self) -> Purpose {
        self.purpose
    }

    /// The addresses of `host` (as an HTTP URI spells it, `[::1]`
    /// bracketed) at `port` the policy allows, in the resolver's order;
    /// the first refusal when it allows none.
    pub async fn addresses(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Unreachable> {
        let addrs = self
            .ips(host)
            .await?
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port));
        only_allowed(addrs, |addr| self.policy.check(self.purpose, addr))
    }

    /// Every address of `host` at `port`, when the policy allows each of
    /// them; else the first refusal (a name that resolves to one allowed
    /// address and one refused is refused: what registers a webhook).
    pub async fn every_address(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, Unreachable> {
        let addrs: Vec<SocketAddr> = self
            .ips(host)
            .await?
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect();
        for addr in &addrs {
            self.policy.check(self.purpose, *addr)?;
        }
        Ok(addrs)
    }

    /// The addresses of name `name` the policy allows, port not known yet
    /// (reqwest's resolvers: the port is checked on the connection, see
    /// [`Gate::connected`]).
    pub async fn resolve(&self, name: &str) -> Result<Vec<IpAddr>, Unreachable> {
        let ips = self.ips(name).await?;
        only_allowed(ips, |ip| self.policy.check_ip(self.purpose, ip))
    }

    /// `host` read by the WHATWG host parser: its address, or its name's.
    async fn ips(&self, host: &str) -> Result<Vec<IpAddr>, Unreachable> {
        match address::parse_host(host) {
            Ok(url::Host::Ipv4(v4)) => Ok(vec![IpAddr::V4(v4)]),
            Ok(url::Host::Ipv6(v6)) => Ok(vec![IpAddr::V6(v6)]),
            Ok(url::Host::Domain(name)) => Ok(self.resolver.lookup(&name).await?),
            Err(_) => Err(Unreachable::BadHost(exchange::text::clip(host, 100))),
        }
    }

    /// Before a request to `url`: when its host is an address (a client
    /// connects to it without asking any resolver), that address and the
    /// URL's port are checked.
    pub fn admit(&self, url: &url::Url) -> Result<(), Refusal> {
        let verdict = match (address::literal(url), url.port_or_known_default()) {
            (Some(ip), Some(port)) => self.policy.check(self.purpose, SocketAddr::new(ip, port)),
            (Some(ip), None) => self.policy.check_ip(self.purpose, ip),
            (None, _) => Ok(()),
        };
        verdict.inspect_err(logged)
    }

    /// A connection just made, before a byte of a request goes over it:
    /// its far end `remote` (`None`: not known, refused).
    pub fn connected(&self, remote: Option<SocketAddr>) -> Result<(), Refusal> {
        let verdict = match remote {
            Some(addr) => self.policy.check(self.purpose, addr),
            None => Err(Refusal {
                ip: IpAddr::from([0, 0, 0, 0]),
                port: None,
                purpose: self.purpose,
                why: Why::UnknownPeer,
            }),
        };
        verdict.inspect_err(logged)
    }
}

/// Every refusal, with its address, at debug level (`RUST_LOG=
/// hub::net::egress=debug`): callers tell their own story without it.
fn logged(refusal: &Refusal) {
    tracing::debug!(%refusal, purpose = %refusal.purpose, "egress: refused");
}

/// The addresses `check` allows, in order; the first refusal when it
/// allows none.
fn only_allowed<T: Copy + std::fmt::Debug>(
    candidates: impl IntoIterator<Item = T>,
    check: impl Fn(T) -> Result<(), Refusal>,
) -> Result<Vec<T>, Unreachable> {
    let mut first = None;
    let allowed: Vec<T> = candidates
        .into_iter()
        .filter(|&candidate| match check(candidate) {
            Ok(()) => true,
            Err(refusal) => {
                logged(&refusal);
                first.get_or_insert(refusal);
                false
            }
        })
        .collect();
    match (allowed.is_empty(), first) {
        (true, Some(refusal)) => Err(refusal.into()),
        _ => Ok(allowed),
    }
}

/// The refusal somewhere in an error's chain of sources, if the egress
/// policy is why it failed (as reqwest, hyper and rmcp wrap it).
pub fn refusal_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Refusal> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(r) = e.downcast_ref::<Refusal>() {
            return Some(r);
        }
        if let Some(Unreachable::Refused(r)) = e.downcast_ref::<Unreachable>() {
            return Some(r);
        }
        // An I/O error's source skips the error it wraps: look inside.
        if let Some(inner) = e
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
        {
            if let Some(r) = refusal_in(inner) {
                return Some(r);
            }
        }
        next = e.source();
    }
    None
}
