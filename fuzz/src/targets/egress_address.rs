//! The egress policy's verdict on an address (`hub::net::egress::Policy::
//! check`), for hosts as a URL spells them. The input is lines; each is a
//! host (with or without a port) read by the WHATWG URL parser
//! (`http://LINE/`), as every URL the hub fetches is: `2130706433`,
//! `0x7f.1`, `[::ffff:7f00:1]` all become addresses before the policy
//! sees them. Every whole 16 bytes of the input are also an IPv6 address
//! (any bit pattern), at the port of one of the hub's own listeners.
//!
//! Properties beyond "no panic":
//! - the policy's verdict — allowed, or refused as the hub's own
//!   listener, as never reachable, as a private address not listed —
//!   equals an oracle written independently here: ranges as `u128`
//!   intervals over the IPv4-mapped space, embedded IPv4 addresses found
//!   with masks, the lists as intervals;
//! - with every network listed for every purpose, nothing in a
//!   never-range is allowed;
//! - a refusal names the address it refused and, when a list would allow
//!   it, the purpose's variable;
//! - an IPv6 address written into a URL is read back as itself.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::OnceLock;

use hub::net::egress::{Policy, Purpose, Refusal, Why};
use hub::net::networks::Networks;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "egress_address",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &[],
};

const DICTIONARY: &[&str] = &[
    "127.0.0.1",
    "127.0.0.2",
    "[::1]",
    "[::ffff:",
    "[::",
    "0x7f.1",
    "0177.0.0.1",
    "2130706433",
    "169.254.169.254",
    "100.100.100.200",
    "[fd00:ec2::254]",
    "[64:ff9b::",
    "[64:ff9b:1:",
    "[2002:",
    "[2001:0:",
    "[fe80::1]",
    "[fc00::1]",
    "[fec0::1]",
    "[ff02::1]",
    "[::]",
    "0.0.0.0",
    "255.255.255.255",
    "224.0.0.1",
    "240.0.0.1",
    "10.",
    "172.16.",
    "192.168.",
    "100.64.",
    ":3000",
    ":3001",
    ":80",
    "]",
    ".",
    "\n",
];

/// Members: the default list. Identity providers: 10/8, link-local and
/// unique-local listed. Onboarding: nothing private.
const MEMBER_LIST: &str = "127.0.0.1/32, ::1/128";
const IDENTITY_LIST: &str = "10.0.0.0/8, 169.254.0.0/16, fc00::/7";
const ONBOARD_LIST: &str = "";
const PUSH_LIST: &str = "127.0.0.3/32";
/// Where "the hub" of this target listens.
const OWN: [(&str, u16); 2] = [("127.0.0.1", 3000), ("::1", 3001)];

fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let list = |text: &str| Networks::parse("test", text).unwrap_or_default();
        let policy = Policy::new([
            list(MEMBER_LIST),
            list(IDENTITY_LIST),
            list(ONBOARD_LIST),
            list(PUSH_LIST),
        ]);
        for (ip, port) in OWN {
            if let Ok(ip) = ip.parse::<IpAddr>() {
                policy.listening_on(SocketAddr::new(ip, port));
            }
        }
        policy
    })
}

/// A policy listing every network for every purpose.
fn open_policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let all = || Networks::parse("test", "0.0.0.0/0, ::/0").unwrap_or_default();
        Policy::new([all(), all(), all(), all()])
    })
}

fn run(input: &[u8]) -> Result<Class, Broken> {
    let mut classes = Vec::new();
    for chunk in input.chunks_exact(16) {
        let mut bits = [0u8; 16];
        bits.copy_from_slice(chunk);
        let v6 = Ipv6Addr::from(bits);
        round_trip(v6)?;
        classes.push(judge(SocketAddr::new(IpAddr::V6(v6), OWN[1].1))?);
    }
    let text = match super::text(input) {
        Ok(t) => t,
        Err(class) => {
            classes.push(class);
            return Ok(join(classes));
        }
    };
    for line in text.lines() {
        let Ok(url) = url::Url::parse(&format!("http://{line}/")) else {
            classes.push("not a URL".into());
            continue;
        };
        let ip = match url.host() {
            Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
            _ => {
                classes.push("a name".into());
                continue;
            }
        };
        let port = url.port_or_known_default().unwrap_or(80);
        if hub::net::egress::address::literal(&url) != Some(ip) {
            return Err(format!(
                "{line:?}: the policy's host reading differs from url's"
            ));
        }
        classes.push(judge(SocketAddr::new(ip, port))?);
    }
    Ok(join(classes))
}

fn join(mut classes: Vec<Class>) -> Class {
    classes.sort_unstable();
    classes.dedup();
    classes.join(", ")
}

/// The policy against the oracle for every purpose; the never-ranges
/// against a policy that lists everything.
fn judge(addr: SocketAddr) -> Result<Class, Broken> {
    let x = oracle::space(addr.ip());
    let mut class = String::new();
    for purpose in Purpose::ALL {
        let verdict = policy().check(purpose, addr);
        let got = verdict.as_ref().err().map(label);
        let expected = oracle::verdict(purpose, x, addr.port());
        if got != expected {
            return Err(format!(
                "{addr} for {purpose}: the policy says {got:?}, the oracle {expected:?}"
            ));
        }
        if let Err(refusal) = &verdict {
            check_words(refusal)?;
        }
        if purpose == Purpose::Member {
            class = got.map_or("allowed".into(), |g| format!("refused: {g}"));
        }
    }
    let never = oracle::subjects(x)
        .into_iter()
        .any(|s| oracle::within(s, oracle::NEVER));
    if never && open_policy().check(Purpose::Member, addr).is_ok() {
        return Err(format!("{addr} is in a never-range, yet allowed"));
    }
    Ok(class)
}

/// A refusal's category, as the oracle names them.
fn label(refusal: &Refusal) -> &'static str {
    match refusal.why {
        Why::OwnListener => "own listener",
        Why::Never(_) => "never",
        Why::NotListed(_) => "not listed",
        Why::UnknownPeer => "unknown peer",
    }
}

/// A refusal names the address it judged, and the variable when a list
/// would change it.
fn check_words(refusal: &Refusal) -> Result<(), Broken> {
    let text = refusal.to_string();
    if !text.contains(&refusal.ip.to_string()) {
        return Err(format!("{text:?} does not name {}", refusal.ip));
    }
    if matches!(refusal.why, Why::NotListed(_)) && !text.contains(refusal.purpose.variable()) {
        return Err(format!("{text:?} does not name its variable"));
    }
    // What a caller is told names no address (but a range's own name,
    // `0.0.0.0/8`, may spell one).
    let public = refusal.public();
    let rest = match refusal.why {
        Why::Never(kind) | Why::NotListed(kind) => public.replace(&kind.to_string(), ""),
        Why::OwnListener | Why::UnknownPeer => public.clone(),
    };
    if rest.contains(&refusal.ip.to_string()) {
        return Err(format!("{public:?} shows the address"));
    }
    Ok(())
}

/// An IPv6 address written into a URL reads back as itself.
fn round_trip(v6: Ipv6Addr) -> Result<(), Broken> {
    let url = url::Url::parse(&format!("http://[{v6}]:8080/"))
        .map_err(|e| format!("[{v6}] does not parse: {e}"))?;
    match hub::net::egress::address::literal(&url) {
        Some(IpAddr::V6(back)) if back == v6 => Ok(()),
        other => Err(format!("[{v6}] read back as {other:?}")),
    }
}

/// The oracle: addresses as `u128` in the IPv4-mapped IPv6 space, ranges
/// as inclusive intervals, written without the policy's code.
mod oracle {
    use std::net::IpAddr;

    use hub::net::egress::Purpose;

    const MAPPED: u128 = 0xffff << 32;

    /// `ip` in the mapped space (an IPv4 address as `::ffff:a.b.c.d`).
    pub fn space(ip: IpAddr) -> u128 {
        match ip {
            IpAddr::V4(v4) => MAPPED | u128::from(u32::from(v4)),
            IpAddr::V6(v6) => u128::from(v6),
        }
    }

    fn v4(a: u8, b: u8, c: u8, d: u8) -> u128 {
        MAPPED | u128::from(u32::from_be_bytes([a, b, c, d]))
    }

    /// `a.b.c.d/len` as an interval.
    const fn net4(a: u8, b: u8, c: u8, d: u8, len: u32) -> (u128, u128) {
        let base = (0xffffu128 << 32)
            | ((a as u128) << 24 | (b as u128) << 16 | (c as u128) << 8 | d as u128);
        let span = (1u128 << (32 - len)) - 1;
        (base & !span, (base & !span) + span)
    }

    /// `prefix/len` of IPv6 as an interval.
    const fn net6(prefix: u128, len: u32) -> (u128, u128) {
        let span = if len == 0 {
            u128::MAX
        } else {
            (1u128 << (128 - len)) - 1
        };
        (prefix & !span, (prefix & !span) | span)
    }

    pub const NEVER: &[(u128, u128)] = &[
        net4(0, 0, 0, 0, 8),
        net4(224, 0, 0, 0, 4),
        net4(240, 0, 0, 0, 4),
        net4(169, 254, 169, 254, 32),
        net4(100, 100, 100, 200, 32),
        net6(0, 128),
        net6(0xff00 << 112, 8),
        net6(0xfd00_0ec2_0000_0000_0000_0000_0000_0254, 128),
    ];

    const PRIVATE: &[(u128, u128)] = &[
        net4(127, 0, 0, 0, 8),
        net4(10, 0, 0, 0, 8),
        net4(172, 16, 0, 0, 12),
        net4(192, 168, 0, 0, 16),
        net4(169, 254, 0, 0, 16),
        net4(100, 64, 0, 0, 10),
        net6(1, 128),
        net6(0xfe80 << 112, 10),
        net6(0xfec0 << 112, 10),
        net6(0xfc00 << 112, 7),
    ];

    fn listed(purpose: Purpose) -> &'static [(u128, u128)] {
        const MEMBER: &[(u128, u128)] = &[net4(127, 0, 0, 1, 32), net6(1, 128)];
        const IDENTITY: &[(u128, u128)] = &[
            net4(10, 0, 0, 0, 8),
            net4(169, 254, 0, 0, 16),
            net6(0xfc00 << 112, 7),
        ];
        const PUSH: &[(u128, u128)] = &[net4(127, 0, 0, 3, 32)];
        match purpose {
            Purpose::Member => MEMBER,
            Purpose::Identity => IDENTITY,
            Purpose::Onboarding => &[],
            Purpose::Push => PUSH,
        }
    }

    pub fn within(x: u128, ranges: &[(u128, u128)]) -> bool {
        ranges.iter().any(|&(lo, hi)| lo <= x && x <= hi)
    }

    /// The addresses `x` is judged by: the IPv4 ones it carries, else
    /// itself.
    pub fn subjects(x: u128) -> Vec<u128> {
        let low = x & 0xffff_ffff;
        let map = |v: u128| MAPPED | (v & 0xffff_ffff);
        // Compatible (not `::`, `::1`), translated, NAT64 well-known and
        // local-use: the last 32 bits.
        let in_low = (x >> 32 == 0 && x > 1)
            || x >> 32 == 0xffff_0000
            || x >> 32 == 0x0064_ff9b_0000_0000_0000_0000
            || x >> 80 == 0x0064_ff9b_0001;
        if x >> 32 == 0xffff {
            vec![x]
        } else if in_low {
            vec![map(low)]
        } else if x >> 112 == 0x2002 {
            vec![map(x >> 80)]
        } else if x >> 96 == 0x2001_0000 {
            vec![map(x >> 64), map(!x)]
        } else {
            vec![x]
        }
    }

    /// What the policy should say: `None` allowed, else the category.
    pub fn verdict(purpose: Purpose, x: u128, port: u16) -> Option<&'static str> {
        let own = [(v4(127, 0, 0, 1), 3000), (1u128, 3001)];
        for s in subjects(x) {
            if own.contains(&(s, port)) {
                return Some("own listener");
            }
            if within(s, NEVER) {
                return Some("never");
            }
            if within(s, PRIVATE) && !within(s, listed(purpose)) {
                return Some("not listed");
            }
        }
        None
    }
}

/// Lines of hosts: IPv4 in its spellings, IPv6 near the interesting
/// prefixes, names, garbage; with or without a port.
fn generate(_seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    let octet = any::<u8>();
    let v4 = prop_oneof![
        (octet, octet, octet, octet).prop_map(|(a, b, c, d)| format!("{a}.{b}.{c}.{d}")),
        any::<u32>().prop_map(|n| n.to_string()),
        any::<u32>().prop_map(|n| format!("0x{n:x}")),
        (octet, any::<u32>()).prop_map(|(a, n)| format!("0{a:o}.{}", n & 0xff_ffff)),
        (octet, octet).prop_map(|(a, b)| format!("0x{a:x}.{b}")),
    ];
    let prefixes: &'static [u128] = &[
        0,
        0xffff << 32,
        0xffff_0000 << 32,
        0x0064_ff9b << 96,
        0x0064_ff9b_0001 << 80,
        0x2002 << 112,
        0x2001_0000 << 96,
        0xfe80 << 112,
        0xfc00 << 112,
        0xff00 << 112,
        0xfd00_0ec2_0000_0000_0000_0000_0000_0254,
    ];
    let v6 = (proptest::sample::select(prefixes), any::<u128>(), 0u32..128).prop_map(
        |(prefix, bits, keep)| {
            let low = if keep == 0 { 0 } else { bits >> (128 - keep) };
            format!("[{}]", Ipv6Addr::from(prefix | low))
        },
    );
    let port = prop_oneof![
        Just(String::new()),
        Just(":3000".to_string()),
        Just(":3001".to_string()),
        any::<u16>().prop_map(|p| format!(":{p}")),
    ];
    let host = prop_oneof![
        3 => v4,
        3 => v6,
        1 => "[a-z]{1,8}(\\.[a-z]{1,5})?",
        1 => "[ -~]{0,30}",
    ];
    vec((host, port).prop_map(|(h, p)| format!("{h}{p}")), 1..6)
        .prop_map(|lines| lines.join("\n").into_bytes())
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_embedded_addresses_and_own_listeners() {
        assert_eq!(
            run(b"2130706433:3000\n0x7f.1\n[::ffff:7f00:2]\n169.254.169.254\nmember.test"),
            Ok(
                "a name, allowed, refused: never, refused: not listed, refused: own listener"
                    .to_string()
            )
        );
        assert_eq!(
            run(b"[64:ff9b::a00:1]\n[2002:c0a8:101::]\n[2001:0:5db8:d822::a2a2:a2a2]"),
            Ok("allowed, refused: not listed".to_string())
        );
    }
}
