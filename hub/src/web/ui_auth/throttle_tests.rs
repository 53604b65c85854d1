//! The login limits: the policy on a clock the test moves, then the known
//! sources and the whole throttle (local and shared buckets) on both
//! engines, under attempts sent at once.

use super::*;
use std::sync::Arc;

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

fn account(name: &str) -> Budget {
    Budget::of(name, None, false)
}

fn known(name: &str, from: Option<IpAddr>) -> Budget {
    Budget::of(name, from, true)
}

/// An attempt whose password turns out wrong (its reserved token stays
/// spent).
fn wrong(t: &LocalThrottle, from: Option<IpAddr>, budget: &Budget, now: Instant) {
    assert!(
        t.admit(from, budget, now).is_ok(),
        "{budget:?} from {from:?}"
    );
    t.checked(budget, false, now);
}

#[test]
fn a_budget_is_the_accounts_unless_the_address_is_known() {
    assert_eq!(
        Budget::of(" Alice ", ip(1), false),
        Budget::Account("alice".into())
    );
    assert_eq!(
        Budget::of("Alice", ip(1), true),
        Budget::KnownSource("alice".into(), IpAddr::from([10, 0, 0, 1]))
    );
    // No address is never known.
    assert_eq!(Budget::of("alice", None, true), account("alice"));
    assert_eq!(account("a").limit(), Limit::User);
    assert_eq!(known("a", ip(1)).limit(), Limit::KnownSource);
}

#[test]
fn one_address_gets_its_burst_then_one_attempt_per_refill() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    for i in 0..ADDRESS_BURST {
        assert!(
            t.admit(ip(1), &account(&format!("user{i}")), t0).is_ok(),
            "attempt {i}"
        );
    }
    let refused = t
        .admit(ip(1), &account("another"), t0)
        .expect_err("over the burst");
    assert_eq!(refused.limit, Limit::Address);
    assert_eq!(refused.retry_after, ADDRESS_REFILL);
    assert!(refused
        .message()
        .contains("from this address; try again in 6 s"));
    // Another address is not held back.
    assert!(t.admit(ip(2), &account("another"), t0).is_ok());
    // A refill later, exactly one more.
    let later = t0 + ADDRESS_REFILL;
    assert!(t.admit(ip(1), &account("another"), later).is_ok());
    assert!(t.admit(ip(1), &account("another"), later).is_err());
}

#[test]
fn the_accounts_budget_is_reserved_before_the_check_and_a_right_password_gives_it_back() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    // Five attempts admitted at once, none checked yet: the sixth is
    // refused before any password ran, whichever address sends it.
    for i in 0..USER_BURST {
        assert!(
            t.admit(ip(100 + i as u8), &account("alice"), t0).is_ok(),
            "{i}"
        );
    }
    for (from, name) in [(ip(200), "alice"), (ip(201), " ALICE "), (None, "Alice")] {
        let refused = t
            .admit(from, &account(name), t0)
            .expect_err("the budget is reserved");
        assert_eq!(refused.limit, Limit::User, "{name}");
        assert_eq!(refused.retry_after, USER_REFILL);
    }
    // Four turn out right: their tokens come back, the fifth stays spent.
    for _ in 0..4 {
        t.checked(&account("alice"), true, t0);
    }
    t.checked(&account("alice"), false, t0);
    for i in 0..4 {
        assert!(t.admit(ip(210 + i), &account("alice"), t0).is_ok(), "{i}");
    }
    assert!(t.admit(ip(220), &account("alice"), t0).is_err());
    // Nobody else is affected.
    assert!(t.admit(ip(202), &account("bob"), t0).is_ok());
}

#[test]
fn right_passwords_never_spend_the_budget() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    for i in 0..50u8 {
        assert!(t.admit(ip(i), &account("operator"), t0).is_ok(), "{i}");
        t.checked(&account("operator"), true, t0);
    }
}

#[test]
fn a_spent_account_budget_refills_one_failure_per_refill() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    for i in 0..USER_BURST {
        wrong(&t, ip(100 + i as u8), &account("alice"), t0);
    }
    assert!(t.admit(ip(200), &account("alice"), t0).is_err());
    let later = t0 + USER_REFILL;
    wrong(&t, ip(203), &account("alice"), later);
    let refused = t.admit(ip(204), &account("alice"), later + USER_REFILL / 2);
    assert_eq!(
        refused.map_err(|r| r.retry_after),
        Err(USER_REFILL / 2),
        "half a refill to wait"
    );
}

#[test]
fn a_known_source_has_its_own_budget_while_strangers_spend_the_accounts() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    let home = ip(50);
    for i in 0..USER_BURST {
        wrong(&t, ip(i as u8 + 1), &account("operator"), t0);
    }
    let stranger = t
        .admit(ip(9), &account("operator"), t0)
        .expect_err("the account's budget is spent");
    assert_eq!(stranger.limit, Limit::User);
    // The known source logs in at once, as often as it is right.
    for _ in 0..3 {
        assert!(t.admit(home, &known("operator", home), t0).is_ok());
        t.checked(&known("operator", home), true, t0);
    }
    // Its own mistakes are bounded by its own budget.
    for _ in 0..USER_BURST {
        wrong(&t, home, &known("operator", home), t0);
    }
    let refused = t
        .admit(home, &known("operator", home), t0)
        .expect_err("its own budget is spent");
    assert_eq!(refused.limit, Limit::KnownSource);
    assert!(refused
        .message()
        .contains("for this user from this address"));
    // Another known source of the account is not.
    let office = ip(60);
    assert!(t.admit(office, &known("operator", office), t0).is_ok());
}

#[test]
fn a_refused_attempt_is_not_counted() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    for i in 0..ADDRESS_BURST {
        assert!(t.admit(ip(1), &account(&format!("u{i}")), t0).is_ok());
    }
    for _ in 0..50 {
        assert!(t.admit(ip(1), &account("u"), t0).is_err());
    }
    // Had the refusals counted, the address would owe 50 refills; had the
    // address's refusals reserved the account's budget, `u` would be spent.
    assert!(t.admit(ip(1), &account("u"), t0 + ADDRESS_REFILL).is_ok());
    for i in 0..4 {
        assert!(t.admit(ip(10 + i), &account("u"), t0).is_ok(), "{i}");
    }
}

#[test]
fn memory_is_bounded_and_full_buckets_are_dropped_first() {
    let t = LocalThrottle::default();
    let t0 = Instant::now();
    let addr = |n: usize| Some(IpAddr::from((n as u32 + 1).to_be_bytes()));
    for n in 0..MAX_KEYS {
        let budget = account(&format!("u{}", n % 100));
        assert!(t.admit(addr(n), &budget, t0).is_ok(), "{n}");
        t.checked(&budget, true, t0);
    }
    // Every tracked address is still draining: a new one is refused
    // rather than kept.
    let refused = t
        .admit(addr(MAX_KEYS), &account("u1"), t0)
        .expect_err("no room");
    assert_eq!(refused.limit, Limit::Capacity);
    // Once they have refilled they carry no information and make room.
    let later = t0 + ADDRESS_REFILL;
    assert!(t.admit(addr(MAX_KEYS), &account("u1"), later).is_ok());
    let state = t.state.lock().unwrap_or_else(|p| p.into_inner());
    assert_eq!(
        state.addresses.by_key.len(),
        1,
        "only the new address is kept"
    );
}

// ---- the known sources and the whole throttle, on both engines --------

fn addr(text: &str) -> IpAddr {
    text.parse().expect("an address")
}

#[tokio::test]
async fn a_known_source_is_an_address_the_account_logged_in_from_lately() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        let known = KnownSources::with_ttl(db.store.clone(), Duration::from_millis(300));
        let home = addr("127.0.0.50");
        assert!(!known.contains("operator", home).await.expect("read"));
        known.remember("operator", home).await.expect("write");
        known.remember("operator", home).await.expect("again");
        assert!(
            known.contains("operator", home).await.expect("read"),
            "{engine:?}"
        );
        // Per account and per address; an IPv4 client on a dual-stack
        // socket is the same address.
        assert!(!known.contains("alice", home).await.expect("read"));
        assert!(!known
            .contains("operator", addr("127.0.0.51"))
            .await
            .expect("read"));
        assert!(known
            .contains("operator", addr("::ffff:127.0.0.50"))
            .await
            .expect("read"));
        // Past its TTL it is a stranger again, and swept.
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(
            !known.contains("operator", home).await.expect("read"),
            "{engine:?}"
        );
        assert_eq!(
            known.forget_expired().await.expect("sweep"),
            1,
            "{engine:?}"
        );
    }
}

/// 100 wrong attempts at once from 20 addresses, counted by `throttle`:
/// how many were admitted (each would be one password check).
async fn parallel_attack(throttle: &Arc<LoginThrottle>) -> usize {
    let attempts = (0..100u8).map(|i| {
        let throttle = throttle.clone();
        async move {
            let from = IpAddr::from([127, 0, 0, 2 + i % 20]);
            match throttle.admit(Some(from), "operator").await {
                Ok(pass) => {
                    throttle.checked(pass, false).await;
                    1
                }
                Err(t) => {
                    assert_eq!(t.limit, Limit::User, "{t:?}");
                    0
                }
            }
        }
    });
    futures::future::join_all(attempts).await.into_iter().sum()
}

#[tokio::test]
async fn attempts_at_once_check_at_most_the_budget_and_a_known_source_still_logs_in() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        for shared in [false, true] {
            let limits = LoginLimits::default();
            let counters = LoginCounters::default();
            let throttle = Arc::new(
                if shared {
                    LoginThrottle::shared(limits, db.store.clone())
                } else {
                    LoginThrottle::new(limits, db.store.clone())
                }
                .with_counters(counters.clone()),
            );
            let user = if shared { "Operator" } else { "operator" };
            let home = addr("127.0.0.50");
            // The operator logged in from home once: a known source.
            let pass = throttle.admit(Some(home), user).await.expect("admitted");
            throttle.checked(pass, true).await;
            let admitted = parallel_attack(&throttle).await;
            assert_eq!(
                admitted, USER_BURST as usize,
                "{engine:?}, shared {shared}: the budget bounds the checks"
            );
            // A stranger is refused before any check; home is not.
            let refused = throttle
                .admit(Some(addr("127.0.0.99")), user)
                .await
                .expect_err("the account's budget is spent");
            assert_eq!(refused.limit, Limit::User);
            for _ in 0..3 {
                let pass = throttle
                    .admit(Some(home), user)
                    .await
                    .unwrap_or_else(|t| panic!("{engine:?}, shared {shared}: {t:?}"));
                throttle.checked(pass, true).await;
            }
            assert_eq!(
                counters.password_checks(),
                u64::from(1 + USER_BURST + 3),
                "{engine:?}, shared {shared}: checks counted"
            );
            // The next test of this store starts afresh.
            sqlx::query("DELETE FROM login_buckets")
                .execute(db.store.pool())
                .await
                .expect("clear");
            sqlx::query("DELETE FROM login_known_sources")
                .execute(db.store.pool())
                .await
                .expect("clear");
        }
    }
}

#[tokio::test]
async fn on_the_shared_buckets_an_address_refusal_gives_the_reservation_back() {
    for db in crate::store::test_stores().await {
        let engine = db.engine();
        let limits = LoginLimits {
            per_address: Allowance {
                count: 2,
                window: Duration::from_secs(600),
            },
            ..LoginLimits::default()
        };
        let throttle = LoginThrottle::shared(limits, db.store.clone());
        let from = Some(addr("127.0.0.7"));
        for _ in 0..2 {
            let pass = throttle.admit(from, "alice").await.expect("admitted");
            throttle.checked(pass, false).await;
        }
        for _ in 0..5 {
            let refused = throttle.admit(from, "alice").await.expect_err("address");
            assert_eq!(refused.limit, Limit::Address, "{engine:?}");
        }
        // Alice's budget lost the two wrong guesses only.
        for i in 0..3 {
            let pass = throttle
                .admit(Some(addr(&format!("127.0.1.{i}"))), "alice")
                .await
                .unwrap_or_else(|t| panic!("{engine:?}: {i}: {t:?}"));
            throttle.checked(pass, false).await;
        }
        let refused = throttle
            .admit(Some(addr("127.0.2.1")), "alice")
            .await
            .expect_err("spent");
        assert_eq!(refused.limit, Limit::User, "{engine:?}");
    }
}
