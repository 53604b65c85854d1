//! The classification of addresses, embedded IPv4 included, and URL hosts
//! read by the WHATWG parser.

use super::*;
use AddressKind as K;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("an IP address")
}

/// The kinds `s` is judged by.
fn judged(s: &str) -> Vec<AddressKind> {
    subjects(ip(s)).map(kind).collect()
}

#[test]
fn each_range_has_its_kind() {
    for (addr, expected) in [
        ("93.184.216.34", K::Public),
        ("2606:4700::1111", K::Public),
        ("127.0.0.1", K::Loopback),
        ("127.0.0.2", K::Loopback),
        ("::1", K::Loopback),
        ("10.1.2.3", K::Private),
        ("172.16.0.1", K::Private),
        ("172.32.0.1", K::Public),
        ("192.168.1.1", K::Private),
        ("169.254.1.1", K::LinkLocal),
        ("fe80::1", K::LinkLocal),
        ("febf::1", K::LinkLocal),
        ("fec0::1", K::SiteLocal),
        ("100.64.0.1", K::Shared),
        ("100.127.255.255", K::Shared),
        ("100.128.0.1", K::Public),
        ("fd12:3456::1", K::UniqueLocal),
        ("fc00::1", K::UniqueLocal),
        ("0.0.0.0", K::Unspecified),
        ("0.1.2.3", K::Unspecified),
        ("::", K::Unspecified),
        ("255.255.255.255", K::Broadcast),
        ("224.0.0.1", K::Multicast),
        ("ff02::1", K::Multicast),
        ("240.0.0.1", K::Reserved),
        ("169.254.169.254", K::Metadata),
        ("100.100.100.200", K::Metadata),
        ("fd00:ec2::254", K::Metadata),
    ] {
        assert_eq!(kind(ip(addr)), expected, "{addr}");
    }
}

#[test]
fn the_never_and_private_families() {
    assert!(K::Metadata.is_never() && !K::Metadata.is_private());
    assert!(K::Unspecified.is_never() && K::Broadcast.is_never() && K::Multicast.is_never());
    assert!(K::Loopback.is_private() && K::LinkLocal.is_private() && !K::Loopback.is_never());
    assert!(!K::Public.is_private() && !K::Public.is_never());
}

#[test]
fn an_ipv6_address_carrying_an_ipv4_one_is_judged_by_it() {
    for (addr, expected) in [
        ("::ffff:127.0.0.1", vec![K::Loopback]),
        ("::ffff:169.254.169.254", vec![K::Metadata]),
        ("::127.0.0.1", vec![K::Loopback]),
        ("::10.0.0.1", vec![K::Private]),
        ("::ffff:0:10.0.0.1", vec![K::Private]),
        ("64:ff9b::7f00:1", vec![K::Loopback]),
        ("64:ff9b::a9fe:a9fe", vec![K::Metadata]),
        ("64:ff9b:1:2:3:4:c0a8:101", vec![K::Private]),
        ("64:ff9b::5db8:d822", vec![K::Public]),
        ("2002:7f00:1::", vec![K::Loopback]),
        ("2002:a9fe:a9fe:1::1", vec![K::Metadata]),
        ("2002:5db8:d822::1", vec![K::Public]),
        // Teredo: server 127.0.0.1, client 10.0.0.1 stored inverted.
        ("2001:0:7f00:1:0:0:f5ff:fffe", vec![K::Loopback, K::Private]),
        ("2001:0:5db8:d822::a2a2:a2a2", vec![K::Public, K::Public]),
        // Not embedding anything.
        ("::", vec![K::Unspecified]),
        ("::1", vec![K::Loopback]),
        ("2001:db8::1", vec![K::Public]),
        ("64:ff9b:2::1", vec![K::Public]),
    ] {
        assert_eq!(judged(addr), expected, "{addr}");
    }
    // The zero-ish IPv4-compatible addresses are "this network".
    assert_eq!(judged("::2"), vec![K::Unspecified]);
}

#[test]
fn a_url_host_is_read_by_the_whatwg_parser_before_it_is_judged() {
    for (raw, expected) in [
        ("http://2130706433/", Some("127.0.0.1")),
        ("http://0177.0.0.1/", Some("127.0.0.1")),
        ("http://0x7f.1/", Some("127.0.0.1")),
        ("http://127.1/", Some("127.0.0.1")),
        ("http://0xa9.0xfe.0xa9.0xfe/", Some("169.254.169.254")),
        ("http://[::ffff:7f00:1]/", Some("::ffff:127.0.0.1")),
        ("http://[::1]:8080/", Some("::1")),
        ("http://member.test:8080/", None),
        ("http://LOCALHOST/", None),
    ] {
        let url = url::Url::parse(raw).expect(raw);
        assert_eq!(literal(&url), expected.map(ip), "{raw}");
    }
    assert_eq!(
        parse_host("0x7f.1").expect("a host"),
        url::Host::<String>::Ipv4(Ipv4Addr::LOCALHOST)
    );
    assert_eq!(
        parse_host("[::1]").expect("a host"),
        url::Host::<String>::Ipv6(Ipv6Addr::LOCALHOST)
    );
    assert!(matches!(parse_host("member.test"), Ok(url::Host::Domain(d)) if d == "member.test"));
}
