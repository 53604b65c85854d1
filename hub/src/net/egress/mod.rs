//! The egress policy (DESIGN.md §2): the one path for everything the hub
//! fetches or forwards to — members' servers and data planes, identity
//! providers and their keys, would-be members' cards. Addresses are
//! checked when a connection is made, per purpose; no redirect is
//! followed (onboarding's same-origin ones are followed by onboarding,
//! each hop a new request through this path); bodies and time are capped.
//!
//! | room | what is decided there |
//! |---|---|
//! | [`address`] | what kind of address an IP is (embedded IPv4 judged as itself); a URL's host read by the WHATWG parser |
//! | [`policy`] | which addresses each [`Purpose`] may reach ([`Policy::check`], the one verdict), the operator's lists, the hub's own listeners, what a [`Refusal`] says |
//! | [`resolve`] | how a name becomes addresses: the system's resolver, or the DNS server `WS_EGRESS_DNS` names, without a cache |
//! | [`gate`] | one purpose's way out: a host's allowed addresses, a URL's address checked before a request, a made connection checked on its far end |
//! | [`connect`] | the connector under hyper's client (the gateway's provider leg) |
//! | [`clients`] | reqwest 0.12 and 0.13 clients through a gate (the prober, onboarding, identity; the data planes under rmcp) |
//! | [`body`] | a body read under a cap, streaming; each purpose's limits |
//! | [`fetch`] | one capped GET through a gate, which the prober, onboarding and the identity keys share |
//!
//! # Checked on the address actually connected to
//!
//! Nothing looks a name up, checks the answer, and then lets something
//! else look it up again to connect: the lookup that finds the addresses
//! is the one whose addresses are checked and connected to.
//!
//! - **hyper** (the gateway): [`connect::Connector`] resolves the host
//!   itself, checks every address (port included) and opens the TCP
//!   connection to an allowed one.
//! - **reqwest** resolves names through the gate's resolver, which hands
//!   back only allowed addresses; an address in the URL (reqwest skips
//!   every resolver then) is checked before each request
//!   ([`Gate::admit`]); and every connection reqwest makes is checked on
//!   its socket's far end before a byte of a request is written on it
//!   (the hub's own listeners are caught there: a resolver never sees a
//!   port).
//!
//! A connection pool keeps a connection only to the address it was
//! checked at; every new connection is resolved and checked again, so a
//! DNS answer that changes (rebinding) is judged when it is used.
//!
//! # Who holds what
//!
//! The hub builds one [`Egress`] from the environment
//! ([`Egress::from_env`]) and hands it to the gateway, the prober, the
//! identity keys and onboarding; each makes its client through
//! [`Egress::gate`] for its purpose. The hub binary registers its
//! listening sockets ([`Egress::listening_on`]) once bound.

pub mod address;
pub mod body;
pub mod clients;
pub mod connect;
pub mod fetch;
pub mod gate;
pub mod policy;
pub mod resolve;

use std::net::SocketAddr;
use std::sync::Arc;

pub use body::{read_capped, BodyError, Limits};
pub use fetch::{FetchError, Fetched, Fetcher};
pub use gate::{refusal_in, Gate, Unreachable};
pub use policy::{Policy, Purpose, Refusal, Why};
pub use resolve::Resolver;

/// The hub's way out: the policy and the resolver, shared by every
/// client the hub makes.
#[derive(Debug, Clone, Default)]
pub struct Egress {
    policy: Arc<Policy>,
    resolver: Resolver,
}

/// Why the egress configuration could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    /// A `WS_*_NETWORKS` entry is not a network.
    #[error(transparent)]
    Policy(#[from] policy::PolicyError),
    /// `WS_EGRESS_DNS` is not usable.
    #[error(transparent)]
    Resolver(#[from] resolve::ResolveError),
}

impl Egress {
    /// The policy and resolver the environment configures
    /// (`WS_MEMBER_NETWORKS`, `WS_IDENTITY_NETWORKS`,
    /// `WS_ONBOARD_NETWORKS`, `WS_EGRESS_DNS`).
    pub fn from_env() -> Result<Self, EgressError> {
        Ok(Self::new(Policy::from_env()?, Resolver::from_env()?))
    }

    /// `policy`, names resolved by `resolver`.
    pub fn new(policy: Policy, resolver: Resolver) -> Self {
        Self {
            policy: Arc::new(policy),
            resolver,
        }
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Registers a socket the hub listens on: never reached from now on.
    pub fn listening_on(&self, addr: SocketAddr) {
        self.policy.listening_on(addr);
    }

    /// The way out for `purpose`.
    pub fn gate(&self, purpose: Purpose) -> Gate {
        Gate {
            policy: self.policy.clone(),
            resolver: self.resolver.clone(),
            purpose,
        }
    }

    /// A GET client for `purpose`, built from `builder` (TLS, pool).
    pub fn fetcher(
        &self,
        purpose: Purpose,
        builder: reqwest::ClientBuilder,
    ) -> Result<Fetcher, reqwest::Error> {
        Fetcher::new(self.gate(purpose), builder)
    }
}
