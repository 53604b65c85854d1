//! The hub's network plumbing: how connections come in, where the hub may
//! connect out, and what it calls itself.
//!
//! | room | where it is decided |
//! |---|---|
//! | [`listen`] | how connections are accepted: header timeout, connection caps, TLS; who is at the other end ([`listen::Peer`]) |
//! | [`tls`] | the hub's TLS: its listener's configuration, the client certificate a member presents, `hub certs` |
//! | [`networks`] | the networks an operator lists in a variable: trusted balancers, `/metrics` scrapers, each egress purpose's private reach |
//! | [`egress`] | where the hub may connect, for what: members, identity providers, would-be members; addresses checked at connect time, no redirects, bodies and time capped |
//! | [`machine`] | which paths are for programs, and that they answer JSON, never the login page; the hub's own public addresses (what its cards name and its signatures bind to) |
//! | [`provider_hosts`] | each provider at the root of a host of its own (`{provider}.{domain}`): its card at `/.well-known/agent-card.json`, its interfaces at `/` |
//!
//! Nothing here knows the registry's systems or the gateway: these rooms
//! are what the rest of the hub is built on.

pub mod egress;
pub mod listen;
pub mod machine;
pub mod networks;
pub mod provider_hosts;
pub mod tls;
