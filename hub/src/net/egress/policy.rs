//! The egress policy: which socket addresses the hub may connect to, for
//! which purpose. [`Policy::check`] is the one function that decides;
//! everything that connects asks it about the address it is about to
//! connect to.
//!
//! - **Public** addresses are allowed.
//! - **Private** ones (loopback, RFC 1918, link-local, shared 100.64/10,
//!   unique-local and site-local IPv6) only when the operator lists their
//!   network for the purpose: `WS_MEMBER_NETWORKS`,
//!   `WS_IDENTITY_NETWORKS`, `WS_ONBOARD_NETWORKS` ([`Purpose::variable`];
//!   comma-separated CIDRs or addresses; unset: `127.0.0.1/32, ::1/128`,
//!   the address the demo's peers and identity provider listen on — other
//!   loopback addresses such as `127.0.0.2` are the hub's own host's, and
//!   refused).
//! - **Never**, whatever the lists say: unspecified, broadcast, multicast,
//!   reserved and cloud metadata addresses, and the hub's own listening
//!   sockets ([`Policy::listening_on`]: an `IP:port`, or any address of
//!   this host at that port when the hub listens on an unspecified
//!   address).
//!
//! An IPv6 address carrying an IPv4 address is judged by that address
//! ([`super::address::subjects`]).

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::address::{self, AddressKind};
use crate::net::networks::Networks;

/// Why the hub connects somewhere: each purpose has its own list of the
/// private networks it may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// A member's servers: the gateway's forwards, the prober (`/health`,
    /// the card, the card's JWKS), the MCP data planes.
    Member,
    /// A member's identity provider: OIDC discovery and its JWKS.
    Identity,
    /// A would-be member's card and `/health`, read for onboarding.
    Onboarding,
    /// A caller's webhook, where the push relay delivers its task's
    /// events: public addresses only unless `WS_PUSH_NETWORKS` lists some
    /// (its default is empty: a member cannot make the hub post into the
    /// hub's own network).
    Push,
}

impl Purpose {
    /// Every purpose.
    pub const ALL: [Purpose; 4] = [
        Purpose::Member,
        Purpose::Identity,
        Purpose::Onboarding,
        Purpose::Push,
    ];

    /// The variable listing the private networks this purpose may reach.
    pub fn variable(self) -> &'static str {
        match self {
            Self::Member => "WS_MEMBER_NETWORKS",
            Self::Identity => "WS_IDENTITY_NETWORKS",
            Self::Onboarding => "WS_ONBOARD_NETWORKS",
            Self::Push => "WS_PUSH_NETWORKS",
        }
    }

    /// The list when its variable is unset: [`DEFAULT_NETWORKS`], but none
    /// for push.
    pub fn default_networks(self) -> &'static str {
        match self {
            Self::Push => "",
            _ => DEFAULT_NETWORKS,
        }
    }

    fn index(self) -> usize {
        match self {
            Self::Member => 0,
            Self::Identity => 1,
            Self::Onboarding => 2,
            Self::Push => 3,
        }
    }
}

impl fmt::Display for Purpose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Member => "members",
            Self::Identity => "identity providers",
            Self::Onboarding => "onboarding",
            Self::Push => "push deliveries",
        })
    }
}

/// The list every purpose has when its variable is unset.
pub const DEFAULT_NETWORKS: &str = "127.0.0.1/32, ::1/128";

/// Why an address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Its kind is never reached.
    Never(AddressKind),
    /// A private kind whose network the purpose's variable does not list.
    NotListed(AddressKind),
    /// The hub itself listens there.
    OwnListener,
    /// The connection's far end could not be read, so it cannot be
    /// checked.
    UnknownPeer,
}

/// An address the policy refused: which, why, and for what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct Refusal {
    /// The address judged (an IPv4 address carried in an IPv6 one is
    /// named as such).
    pub ip: IpAddr,
    /// The port, when the address was judged with one.
    pub port: Option<u16>,
    /// What the connection was for.
    pub purpose: Purpose,
    /// Why it is refused.
    pub why: Why,
}

impl fmt::Display for Refusal {
    /// The whole refusal, address included: for the hub's log and its
    /// operator.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ip = self.ip;
        let var = self.purpose.variable();
        match self.why {
            Why::Never(kind) => write!(f, "{ip} is {kind}, which the hub's egress policy never reaches"),
            Why::NotListed(kind) => write!(
                f,
                "{ip} is {kind}, which the hub's egress policy does not allow for {} \
                 (the operator lists the private networks it may reach in {var})",
                self.purpose
            ),
            Why::OwnListener => match self.port {
                Some(port) => write!(
                    f,
                    "{} is where the hub itself listens, which the hub's egress policy never reaches",
                    SocketAddr::new(ip, port)
                ),
                None => write!(f, "{ip} is where the hub itself listens, which the hub's egress policy never reaches"),
            },
            Why::UnknownPeer => write!(
                f,
                "the far end of a connection could not be read, so the hub's egress policy refuses it"
            ),
        }
    }
}

impl Refusal {
    /// The refusal without the address: what a caller or a canvas may be
    /// told about a system (`its address is …`).
    pub fn public(&self) -> String {
        match self.why {
            Why::Never(kind) => format!("{kind}, which the hub never reaches"),
            Why::NotListed(kind) => format!("{kind} not listed in {}", self.purpose.variable()),
            Why::OwnListener => "the hub's own listening address".into(),
            Why::UnknownPeer => "an address the hub could not read".into(),
        }
    }

    /// A detail naming system `id` and the policy, never the address:
    /// `vendorcorp is refused by the hub's egress policy: its address is a
    /// loopback address not listed in WS_MEMBER_NETWORKS`.
    pub fn detail(&self, id: &str) -> String {
        format!(
            "{id} is refused by the hub's egress policy: its address is {}",
            self.public()
        )
    }
}

/// Why the policy could not be read from the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub String);

/// The private networks each purpose may reach, and where the hub itself
/// listens.
#[derive(Debug)]
pub struct Policy {
    networks: [Networks; 4],
    /// The hub's own listening sockets, registered once bound.
    own: ArcSwap<Vec<SocketAddr>>,
}

impl Default for Policy {
    /// Each purpose's [default](Purpose::default_networks).
    fn default() -> Self {
        Self::from_lists(|_| None)
            .unwrap_or_else(|_| unreachable!("the default lists are lists of networks"))
    }
}

impl Policy {
    /// The lists of [`Purpose::ALL`], in that order.
    pub fn new(networks: [Networks; 4]) -> Self {
        Self {
            networks,
            own: ArcSwap::from_pointee(Vec::new()),
        }
    }

    /// Each purpose's list from its variable ([`DEFAULT_NETWORKS`] when
    /// unset); an entry that is not a network is an error naming the
    /// variable and the entry.
    pub fn from_env() -> Result<Self, PolicyError> {
        Self::from_lists(|purpose| std::env::var(purpose.variable()).ok())
    }

    /// Each purpose's list as `list` gives it (`None`: the default).
    pub fn from_lists(list: impl Fn(Purpose) -> Option<String>) -> Result<Self, PolicyError> {
        let read = |purpose: Purpose| {
            let text = list(purpose).unwrap_or_else(|| purpose.default_networks().to_string());
            Networks::parse(purpose.variable(), &text).map_err(PolicyError)
        };
        Ok(Self::new([
            read(Purpose::Member)?,
            read(Purpose::Identity)?,
            read(Purpose::Onboarding)?,
            read(Purpose::Push)?,
        ]))
    }

    /// Registers a socket the hub listens on: from now on no purpose
    /// reaches it (an unspecified address: any address of this host at
    /// that port).
    pub fn listening_on(&self, addr: SocketAddr) {
        self.own.rcu(|own| {
            let mut next = Vec::clone(own);
            if !next.contains(&addr) {
                next.push(addr);
            }
            Arc::new(next)
        });
    }

    /// Whether the hub may connect to `addr` for `purpose`; the refusal
    /// names the address, its kind and the variable that would list it.
    pub fn check(&self, purpose: Purpose, addr: SocketAddr) -> Result<(), Refusal> {
        for ip in address::subjects(addr.ip()) {
            if self.is_own(ip, addr.port()) {
                return Err(Refusal {
                    ip,
                    port: Some(addr.port()),
                    purpose,
                    why: Why::OwnListener,
                });
            }
            self.judge(purpose, ip, Some(addr.port()))?;
        }
        Ok(())
    }

    /// [`Policy::check`] of an address whose port is not known yet (a
    /// resolver hands out addresses; the port comes with the connection):
    /// everything but the hub's own listeners, which are checked on the
    /// connection itself.
    pub fn check_ip(&self, purpose: Purpose, ip: IpAddr) -> Result<(), Refusal> {
        for ip in address::subjects(ip) {
            self.judge(purpose, ip, None)?;
        }
        Ok(())
    }

    fn judge(&self, purpose: Purpose, ip: IpAddr, port: Option<u16>) -> Result<(), Refusal> {
        let kind = address::kind(ip);
        let why = if kind.is_never() {
            Why::Never(kind)
        } else if kind.is_private() && !self.networks[purpose.index()].contains(ip) {
            Why::NotListed(kind)
        } else {
            return Ok(());
        };
        Err(Refusal {
            ip,
            port,
            purpose,
            why,
        })
    }

    /// Whether the hub listens at `ip:port`: a listener there, or one on
    /// the unspecified address of the family (`[::]` takes both) at that
    /// port while `ip` is an address of this host.
    fn is_own(&self, ip: IpAddr, port: u16) -> bool {
        let own = self.own.load();
        let mut wildcard = false;
        for listener in own.iter().filter(|l| l.port() == port) {
            if listener.ip() == ip {
                return true;
            }
            wildcard |= match listener.ip() {
                IpAddr::V4(v4) => v4.is_unspecified() && ip.is_ipv4(),
                IpAddr::V6(v6) => v6.is_unspecified(),
            };
        }
        wildcard && is_local(ip)
    }
}

/// Whether `ip` is an address of this host: loopback, or one a socket can
/// be bound to (the kernel knows its own addresses; no interface list
/// needed). Asked only when a port is one the hub listens on everywhere.
fn is_local(ip: IpAddr) -> bool {
    ip.is_loopback() || std::net::UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
