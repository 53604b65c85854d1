//! The policy's verdicts: defaults, lists per purpose, the never-ranges,
//! embedded IPv4, the hub's own listeners, and what a refusal says.

use super::*;

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("a socket address")
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("an IP address")
}

#[test]
fn by_default_every_purpose_but_push_reaches_127_0_0_1_and_public_addresses_only() {
    let p = Policy::default();
    // Push deliveries reach no private network unless listed
    // (`each_purpose_reads_its_own_list`).
    for purpose in Purpose::ALL.into_iter().filter(|p| *p != Purpose::Push) {
        assert!(p.check(purpose, addr("127.0.0.1:3101")).is_ok());
        assert!(p.check(purpose, addr("[::1]:3101")).is_ok());
        assert!(p.check(purpose, addr("93.184.216.34:443")).is_ok());
        let e = p
            .check(purpose, addr("127.0.0.2:3101"))
            .expect_err("127.0.0.2");
        assert_eq!(e.why, Why::NotListed(AddressKind::Loopback));
        assert_eq!(e.purpose, purpose);
        for refused in [
            "10.0.0.1:80",
            "[fd00::1]:80",
            "[fe80::1]:80",
            "100.64.0.1:80",
        ] {
            assert!(p.check(purpose, addr(refused)).is_err(), "{refused}");
        }
    }
}

#[test]
fn each_purpose_reads_its_own_list() {
    let p = Policy::from_lists(|purpose| match purpose {
        Purpose::Member => Some("10.1.0.0/16".into()),
        Purpose::Identity => Some(String::new()),
        Purpose::Onboarding => None,
        Purpose::Push => Some("127.0.0.3".into()),
    })
    .expect("lists");
    assert!(p.check(Purpose::Push, addr("127.0.0.3:8080")).is_ok());
    assert!(p.check(Purpose::Push, addr("127.0.0.1:8080")).is_err());
    let defaults = Policy::from_lists(|_| None).expect("the defaults");
    assert!(
        defaults
            .check(Purpose::Push, addr("127.0.0.1:8080"))
            .is_err(),
        "push reaches no private network unless listed"
    );
    assert!(defaults
        .check(Purpose::Push, addr("93.184.216.34:443"))
        .is_ok());
    assert!(defaults
        .check(Purpose::Member, addr("127.0.0.1:8080"))
        .is_ok());
    assert!(p.check(Purpose::Member, addr("10.1.2.3:80")).is_ok());
    assert!(p.check(Purpose::Member, addr("10.2.0.1:80")).is_err());
    assert!(
        p.check(Purpose::Member, addr("127.0.0.1:80")).is_err(),
        "a list replaces the default"
    );
    assert!(
        p.check(Purpose::Identity, addr("127.0.0.1:80")).is_err(),
        "an empty list: no private address at all"
    );
    assert!(p.check(Purpose::Identity, addr("8.8.8.8:443")).is_ok());
    assert!(p.check(Purpose::Onboarding, addr("127.0.0.1:80")).is_ok());
    assert!(p.check(Purpose::Onboarding, addr("10.1.2.3:80")).is_err());
}

#[test]
fn a_bad_entry_names_its_variable() {
    let e = Policy::from_lists(|purpose| {
        (purpose == Purpose::Identity).then(|| "10.0.0.0/8, nonsense".to_string())
    })
    .expect_err("bad");
    assert_eq!(
        e.0,
        "WS_IDENTITY_NETWORKS: `nonsense` is not an address or a CIDR"
    );
}

#[test]
fn the_never_ranges_stay_refused_whatever_the_lists_say() {
    let everything = "0.0.0.0/0, ::/0".to_string();
    let p = Policy::from_lists(|_| Some(everything.clone())).expect("lists");
    for never in [
        "0.0.0.0:80",
        "0.1.2.3:80",
        "[::]:80",
        "255.255.255.255:80",
        "224.0.0.1:80",
        "[ff02::1]:80",
        "240.0.0.1:80",
        "169.254.169.254:80",
        "100.100.100.200:80",
        "[fd00:ec2::254]:80",
        "[::ffff:169.254.169.254]:80",
        "[64:ff9b::a9fe:a9fe]:80",
        "[2002:a9fe:a9fe::]:80",
    ] {
        let e = p.check(Purpose::Member, addr(never)).expect_err(never);
        assert!(matches!(e.why, Why::Never(_)), "{never}: {e}");
    }
    assert!(p.check(Purpose::Member, addr("10.0.0.1:80")).is_ok());
    assert!(p.check(Purpose::Member, addr("169.254.1.1:80")).is_ok());
}

#[test]
fn an_embedded_ipv4_address_is_judged_and_listed_as_itself() {
    let p = Policy::default();
    assert!(p
        .check(Purpose::Member, addr("[::ffff:127.0.0.1]:80"))
        .is_ok());
    let e = p
        .check(Purpose::Member, addr("[::ffff:127.0.0.2]:80"))
        .expect_err("mapped 127.0.0.2");
    assert_eq!(e.ip, ip("127.0.0.2"));
    assert!(p
        .check(Purpose::Member, addr("[::ffff:10.0.0.1]:80"))
        .is_err());
    assert!(p
        .check(Purpose::Member, addr("[64:ff9b::a00:1]:80"))
        .is_err());
    assert!(p
        .check(Purpose::Member, addr("[2002:a00:1::1]:80"))
        .is_err());
    // Teredo: a public server with a private client is refused.
    assert!(p
        .check(Purpose::Member, addr("[2001:0:5db8:d822::f5ff:fffe]:80"))
        .is_err());
    assert!(p
        .check(Purpose::Member, addr("[64:ff9b::5db8:d822]:80"))
        .is_ok());
}

#[test]
fn the_hubs_own_listeners_are_never_reached() {
    let p = Policy::default();
    p.listening_on(addr("127.0.0.1:3000"));
    let e = p
        .check(Purpose::Member, addr("127.0.0.1:3000"))
        .expect_err("own");
    assert_eq!(e.why, Why::OwnListener);
    assert!(
        e.to_string()
            .contains("127.0.0.1:3000 is where the hub itself listens"),
        "{e}"
    );
    assert!(p
        .check(Purpose::Member, addr("[::ffff:127.0.0.1]:3000"))
        .is_err());
    assert!(
        p.check(Purpose::Member, addr("127.0.0.1:3101")).is_ok(),
        "another port"
    );
    // The port is only known on the connection: a resolver's check lets it by.
    assert!(p.check_ip(Purpose::Member, ip("127.0.0.1")).is_ok());

    // On an unspecified address: every address of this host at that port.
    p.listening_on(addr("0.0.0.0:3443"));
    assert!(p.check(Purpose::Member, addr("127.0.0.1:3443")).is_err());
    assert!(
        p.check(Purpose::Member, addr("93.184.216.34:3443")).is_ok(),
        "not this host"
    );
    assert!(
        p.check(Purpose::Member, addr("[::1]:3443")).is_ok(),
        "an IPv4 listener"
    );
    p.listening_on(addr("[::]:4443"));
    assert!(p.check(Purpose::Member, addr("[::1]:4443")).is_err());
    assert!(
        p.check(Purpose::Member, addr("127.0.0.1:4443")).is_err(),
        "[::] takes IPv4 too"
    );
}

#[test]
fn a_refusal_names_the_address_its_kind_and_the_variable() {
    let p = Policy::default();
    let e = p
        .check(Purpose::Onboarding, addr("10.255.255.1:8080"))
        .expect_err("private");
    assert_eq!(
        e.to_string(),
        "10.255.255.1 is a private (RFC 1918) address, which the hub's egress policy does not \
         allow for onboarding (the operator lists the private networks it may reach in \
         WS_ONBOARD_NETWORKS)"
    );
    assert_eq!(
        e.detail("shipping"),
        "shipping is refused by the hub's egress policy: its address is a private (RFC 1918) \
         address not listed in WS_ONBOARD_NETWORKS"
    );
    assert!(
        !e.detail("shipping").contains("10.255"),
        "no address to a caller"
    );
    let e = p
        .check(Purpose::Identity, addr("169.254.169.254:80"))
        .expect_err("metadata");
    assert_eq!(
        e.to_string(),
        "169.254.169.254 is a cloud metadata address, which the hub's egress policy never reaches"
    );
    let e = p
        .check(Purpose::Member, addr("127.0.0.2:80"))
        .expect_err("loopback");
    assert!(e.to_string().contains("WS_MEMBER_NETWORKS"), "{e}");
}
