//! Where the hub may fetch a card from: the address policy of onboarding.
//!
//! Onboarding makes the hub send a request to a URL an operator typed, so
//! the hub's own network is what is at stake (a cloud's metadata address,
//! an admin port on the hub's host). A card's host is resolved once, every
//! address it resolves to is checked, and the request goes to a checked
//! address (never a second lookup a DNS answer could change):
//!
//! - an address of a **private** range — loopback, RFC 1918, link-local,
//!   shared (100.64/10), unique-local IPv6 — is allowed only when the
//!   operator lists its network in `WS_ONBOARD_NETWORKS` (comma-separated
//!   CIDRs; unset: loopback only, where the demo's peers run);
//! - an unspecified, multicast or broadcast address is never allowed;
//! - any other (public) address is allowed.

use std::net::IpAddr;

use ipnet::IpNet;

use crate::networks::Networks;

/// The environment variable listing the private networks onboarding may
/// reach.
pub const NETWORKS_ENV: &str = "WS_ONBOARD_NETWORKS";

/// The private networks a card may be fetched from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressPolicy {
    allowed: Networks,
}

impl Default for AddressPolicy {
    fn default() -> Self {
        Self::loopback()
    }
}

impl AddressPolicy {
    /// From `WS_ONBOARD_NETWORKS`; unset: loopback only. An entry that is
    /// not a network is an error naming it.
    pub fn from_env() -> Result<Self, String> {
        Networks::from_env(NETWORKS_ENV, Networks::loopback()).map(|allowed| Self { allowed })
    }

    /// Loopback only.
    pub fn loopback() -> Self {
        Self {
            allowed: Networks::loopback(),
        }
    }

    /// `10.20.0.0/16, 127.0.0.1/32` (empty: no private address at all).
    pub fn parse(list: &str) -> Result<Self, String> {
        Networks::parse(NETWORKS_ENV, list).map(|allowed| Self { allowed })
    }

    /// Whether `ip` may be reached; the refusal says why.
    pub fn check(&self, ip: IpAddr) -> Result<(), String> {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        if let Some(never) = never(ip) {
            return Err(format!(
                "{ip} is {never}, which onboarding never fetches from"
            ));
        }
        match private(ip) {
            Some(kind) if !self.allowed.contains(ip) => Err(format!(
                "{ip} is {kind}, which the hub's onboarding policy does not allow \
                 (the operator lists the private networks it may reach in {NETWORKS_ENV})"
            )),
            _ => Ok(()),
        }
    }
}

fn never(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => Some("the unspecified address"),
        IpAddr::V4(v4) if v4.is_broadcast() => Some("the broadcast address"),
        IpAddr::V4(v4) if v4.is_multicast() => Some("a multicast address"),
        IpAddr::V6(v6) if v6.is_unspecified() => Some("the unspecified address"),
        IpAddr::V6(v6) if v6.is_multicast() => Some("a multicast address"),
        _ => None,
    }
}

/// What kind of private address `ip` is, if it is one.
fn private(ip: IpAddr) -> Option<&'static str> {
    let within = |net: &str| {
        net.parse::<IpNet>()
            .map(|n| n.contains(&ip))
            .unwrap_or(false)
    };
    match ip {
        IpAddr::V4(v4) if v4.is_loopback() => Some("a loopback address"),
        IpAddr::V4(v4) if v4.is_private() => Some("a private (RFC 1918) address"),
        IpAddr::V4(v4) if v4.is_link_local() => Some("a link-local address"),
        IpAddr::V4(_) if within("100.64.0.0/10") => Some("a shared (carrier-grade NAT) address"),
        IpAddr::V4(_) if within("0.0.0.0/8") => Some("a this-network address"),
        IpAddr::V6(v6) if v6.is_loopback() => Some("a loopback address"),
        IpAddr::V6(_) if within("fc00::/7") => Some("a unique-local IPv6 address"),
        IpAddr::V6(_) if within("fe80::/10") => Some("a link-local address"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn loopback_by_default_private_ranges_only_when_listed() {
        let p = AddressPolicy::loopback();
        assert!(p.check(ip("127.0.0.1")).is_ok());
        assert!(p.check(ip("::1")).is_ok());
        assert!(p.check(ip("93.184.216.34")).is_ok(), "public");
        let why = p.check(ip("169.254.169.254")).expect_err("metadata");
        assert!(
            why.contains("link-local") && why.contains(NETWORKS_ENV),
            "{why}"
        );
        assert!(p
            .check(ip("10.1.2.3"))
            .expect_err("rfc1918")
            .contains("RFC 1918"));
        assert!(p.check(ip("::ffff:10.1.2.3")).is_err(), "mapped v4");
        assert!(p.check(ip("fd00::1")).is_err());
        assert!(p.check(ip("0.0.0.0")).expect_err("never").contains("never"));

        let p = AddressPolicy::parse("10.1.0.0/16").expect("policy");
        assert!(p.check(ip("10.1.2.3")).is_ok());
        assert!(p.check(ip("10.2.0.1")).is_err());
        assert!(p.check(ip("127.0.0.1")).is_err(), "loopback not listed");
    }

    #[test]
    fn a_bad_entry_is_named() {
        let e = AddressPolicy::parse("10.0.0.0/8, nonsense").expect_err("bad");
        assert!(e.contains("`nonsense`") && e.contains(NETWORKS_ENV), "{e}");
    }
}
