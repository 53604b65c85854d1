//! What kind of address an IP is, as far as the egress policy cares: the
//! one classification every check goes through.
//!
//! An IPv6 address that carries an IPv4 address inside it is judged by
//! that IPv4 address ([`subjects`]), since that is where a packet to it
//! ends up (or may): IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
//! `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 (`64:ff9b::/96`,
//! and the local-use `64:ff9b:1::/48` read with the /96 layout of
//! RFC 6052, the address in the last 32 bits), 6to4 (`2002:AABB:CCDD::`)
//! and Teredo (`2001:0:SSSS:SSSS:…:CCCC:CCCC`: its server and its
//! client, whose address is stored inverted; both are judged).
//!
//! Host names are never classified here: a URL's host is read by the
//! WHATWG URL parser (`url`), which turns `2130706433`, `0177.0.0.1` and
//! `0x7f.1` into `127.0.0.1` before anything looks at it
//! ([`literal`]); a name is resolved and its addresses are classified.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of an address. Three families: public (reachable), private
/// (reachable when the operator lists its network for the purpose), and
/// never reachable whatever the lists say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressKind {
    /// Anything not named below.
    Public,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// `169.254/16` (but the metadata address), `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64/10` (but the metadata address).
    Shared,
    /// Unique-local IPv6, `fc00::/7` (but the metadata address).
    UniqueLocal,
    /// The deprecated site-local IPv6 range, `fec0::/10`.
    SiteLocal,
    /// `0.0.0.0/8` and `::`: "this host" to a socket, never a peer.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `240/4` (the broadcast address aside): not routable.
    Reserved,
    /// A cloud's instance metadata service: `169.254.169.254`,
    /// `fd00:ec2::254`, `100.100.100.200`.
    Metadata,
}

impl AddressKind {
    /// Never reachable, whatever an operator lists.
    pub fn is_never(self) -> bool {
        matches!(
            self,
            Self::Unspecified | Self::Broadcast | Self::Multicast | Self::Reserved | Self::Metadata
        )
    }

    /// Reachable only when the operator lists its network.
    pub fn is_private(self) -> bool {
        matches!(
            self,
            Self::Loopback
                | Self::Private
                | Self::LinkLocal
                | Self::Shared
                | Self::UniqueLocal
                | Self::SiteLocal
        )
    }
}

impl fmt::Display for AddressKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Public => "a public address",
            Self::Loopback => "a loopback address",
            Self::Private => "a private (RFC 1918) address",
            Self::LinkLocal => "a link-local address",
            Self::Shared => "a shared (carrier-grade NAT) address",
            Self::UniqueLocal => "a unique-local IPv6 address",
            Self::SiteLocal => "a site-local IPv6 address",
            Self::Unspecified => "an unspecified address (0.0.0.0/8, ::)",
            Self::Broadcast => "the broadcast address",
            Self::Multicast => "a multicast address",
            Self::Reserved => "a reserved address (240.0.0.0/4)",
            Self::Metadata => "a cloud metadata address",
        })
    }
}

/// The kind of `ip` itself, without looking for an address inside it
/// (see [`subjects`] for that).
pub fn kind(ip: IpAddr) -> AddressKind {
    match ip {
        IpAddr::V4(v4) => kind_v4(v4),
        IpAddr::V6(v6) => kind_v6(v6),
    }
}

fn kind_v4(ip: Ipv4Addr) -> AddressKind {
    let [a, b, _, _] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        AddressKind::Metadata
    } else if a == 0 {
        AddressKind::Unspecified
    } else if ip.is_broadcast() {
        AddressKind::Broadcast
    } else if ip.is_multicast() {
        AddressKind::Multicast
    } else if a >= 240 {
        AddressKind::Reserved
    } else if ip.is_loopback() {
        AddressKind::Loopback
    } else if ip.is_private() {
        AddressKind::Private
    } else if ip.is_link_local() {
        AddressKind::LinkLocal
    } else if a == 100 && (b & 0xc0) == 64 {
        AddressKind::Shared
    } else {
        AddressKind::Public
    }
}

fn kind_v6(ip: Ipv6Addr) -> AddressKind {
    let first = ip.segments()[0];
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        AddressKind::Metadata
    } else if ip.is_unspecified() {
        AddressKind::Unspecified
    } else if ip.is_loopback() {
        AddressKind::Loopback
    } else if ip.is_multicast() {
        AddressKind::Multicast
    } else if first & 0xffc0 == 0xfe80 {
        AddressKind::LinkLocal
    } else if first & 0xffc0 == 0xfec0 {
        AddressKind::SiteLocal
    } else if first & 0xfe00 == 0xfc00 {
        AddressKind::UniqueLocal
    } else {
        AddressKind::Public
    }
}

/// The addresses whose kinds decide about `ip`: the IPv4 addresses an
/// IPv6 address carries (module doc), else `ip` itself. One or two.
pub fn subjects(ip: IpAddr) -> Subjects {
    let IpAddr::V6(v6) = ip else {
        return Subjects::one(ip);
    };
    let bits = u128::from(v6);
    let low = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    let s = v6.segments();
    let embedded = match s {
        // `::` and `::1` are themselves, not IPv4-compatible addresses.
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => None,
        // IPv4-compatible, IPv4-mapped, IPv4-translated.
        [0, 0, 0, 0, 0, 0, _, _]
        | [0, 0, 0, 0, 0, 0xffff, _, _]
        | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(low),
        // NAT64, well-known and local-use prefixes.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] | [0x64, 0xff9b, 1, _, _, _, _, _] => Some(low),
        // 6to4: the IPv4 address follows the prefix.
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))),
        // Teredo: the server, then the client (inverted) at the end.
        [0x2001, 0, hi, lo, ..] => {
            let server = Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
            let client = Ipv4Addr::from(!((bits & 0xffff_ffff) as u32));
            return Subjects([Some(IpAddr::V4(server)), Some(IpAddr::V4(client))]);
        }
        _ => None,
    };
    Subjects::one(embedded.map_or(ip, IpAddr::V4))
}

/// The one or two addresses [`subjects`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subjects([Option<IpAddr>; 2]);

impl Subjects {
    fn one(ip: IpAddr) -> Self {
        Self([Some(ip), None])
    }
}

impl Iterator for Subjects {
    type Item = IpAddr;

    fn next(&mut self) -> Option<IpAddr> {
        let next = self.0[0].take();
        self.0.swap(0, 1);
        next
    }
}

/// The IP address a URL's host is, when it is one (after the WHATWG
/// parser's normalization); `None` for a name.
pub fn literal(url: &url::Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
        url::Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        url::Host::Domain(_) => None,
    }
}

/// A host as an HTTP URI spells it (`[::1]` bracketed), read by the
/// WHATWG host parser: an IP address, or a name to resolve.
pub fn parse_host(host: &str) -> Result<url::Host<String>, url::ParseError> {
    url::Host::parse(host)
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
