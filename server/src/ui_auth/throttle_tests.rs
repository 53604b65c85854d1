//! The login limits, on a clock the test moves.

use super::*;

const ADDRESS_BURST: u32 = 10;
const ADDRESS_REFILL: Duration = Duration::from_secs(6);
const USER_BURST: u32 = 5;
const USER_REFILL: Duration = Duration::from_secs(60);

#[test]
fn the_defaults_are_ten_a_minute_per_address_and_five_failures_per_five_minutes() {
    let limits = LoginLimits::default();
    assert_eq!(limits.per_address.count, ADDRESS_BURST);
    assert_eq!(limits.per_address.refill(), ADDRESS_REFILL);
    assert_eq!(limits.per_user.count, USER_BURST);
    assert_eq!(limits.per_user.refill(), USER_REFILL);
}

#[test]
fn an_allowance_is_count_per_seconds_and_a_bad_one_is_named() {
    assert_eq!(
        Allowance::parse(" 100/10 ", "V"),
        Ok(Allowance {
            count: 100,
            window: Duration::from_secs(10)
        })
    );
    for bad in ["10", "0/60", "10/0", "ten/60", "-1/60", "10/60s", ""] {
        let err = Allowance::parse(bad, "WS_LOGIN_USER_LIMIT").expect_err(bad);
        assert!(
            err.starts_with("WS_LOGIN_USER_LIMIT: `") && err.contains("count/seconds"),
            "{err}"
        );
    }
}

fn ip(last: u8) -> Option<IpAddr> {
    Some(IpAddr::from([10, 0, 0, last]))
}

#[test]
fn one_address_gets_its_burst_then_one_attempt_per_refill() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    for i in 0..ADDRESS_BURST {
        assert!(
            t.admit(ip(1), &format!("user{i}"), t0).is_ok(),
            "attempt {i}"
        );
    }
    let refused = t.admit(ip(1), "another", t0).expect_err("over the burst");
    assert_eq!(refused.limit, Limit::Address);
    assert_eq!(refused.retry_after, ADDRESS_REFILL);
    assert!(refused
        .message()
        .contains("from this address; try again in 6 s"));
    // Another address is not held back.
    assert!(t.admit(ip(2), "another", t0).is_ok());
    // A refill later, exactly one more.
    let later = t0 + ADDRESS_REFILL;
    assert!(t.admit(ip(1), "another", later).is_ok());
    assert!(t.admit(ip(1), "another", later).is_err());
}

#[test]
fn failures_for_one_user_are_limited_across_addresses_and_successes_are_free() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    // Successful logins (no `failed`) never use up the user's bucket.
    for i in 0..20u8 {
        assert!(t.admit(ip(i), "operator", t0).is_ok());
    }
    for i in 0..USER_BURST {
        let from = ip(100 + i as u8);
        assert!(t.admit(from, "Alice", t0).is_ok(), "failure {i}");
        t.failed("Alice", t0);
    }
    // A sixth guess is refused from any address, in any spelling.
    for (from, name) in [(ip(200), "alice"), (ip(201), " ALICE "), (None, "Alice")] {
        let refused = t.admit(from, name, t0).expect_err("over the user's burst");
        assert_eq!(refused.limit, Limit::User, "{name}");
        assert_eq!(refused.retry_after, USER_REFILL);
    }
    // Nobody else is affected, and a refill later one more guess is allowed.
    assert!(t.admit(ip(202), "bob", t0).is_ok());
    let later = t0 + USER_REFILL;
    assert!(t.admit(ip(203), "alice", later).is_ok());
    t.failed("alice", later);
    let refused = t.admit(ip(204), "alice", later + USER_REFILL / 2);
    assert_eq!(
        refused.map_err(|r| r.retry_after),
        Err(USER_REFILL / 2),
        "half a refill to wait"
    );
}

#[test]
fn a_refused_attempt_is_not_counted() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    for _ in 0..ADDRESS_BURST {
        assert!(t.admit(ip(1), "u", t0).is_ok());
    }
    for _ in 0..50 {
        assert!(t.admit(ip(1), "u", t0).is_err());
    }
    // Had the refusals counted, the address would owe 50 refills.
    assert!(t.admit(ip(1), "u", t0 + ADDRESS_REFILL).is_ok());
}

#[test]
fn memory_is_bounded_and_full_buckets_are_dropped_first() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    let addr = |n: usize| Some(IpAddr::from((n as u32 + 1).to_be_bytes()));
    for n in 0..MAX_KEYS {
        assert!(t.admit(addr(n), "u", t0).is_ok());
    }
    // Every tracked bucket is still draining: a new address is refused
    // rather than kept.
    let refused = t.admit(addr(MAX_KEYS), "u", t0).expect_err("no room");
    assert_eq!(refused.limit, Limit::Capacity);
    // Once they have refilled they carry no information and make room.
    let later = t0 + ADDRESS_REFILL;
    assert!(t.admit(addr(MAX_KEYS), "u", later).is_ok());
    let state = t.state.lock().unwrap_or_else(|p| p.into_inner());
    assert_eq!(
        state.addresses.by_key.len(),
        1,
        "only the new address is kept"
    );
}
