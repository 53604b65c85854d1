//! An issuer's fetch budget, and the refusals of the egress path as the
//! key cache meets them.

use super::*;

#[test]
fn an_issuer_is_fetched_at_most_so_often_in_any_minute() {
    let fetching = Fetching::default();
    let t0 = Instant::now();
    for i in 0..MAX_FETCHES_PER_MINUTE {
        assert!(
            fetching.admit(t0 + Duration::from_secs(i as u64)),
            "fetch {i}"
        );
    }
    let full = t0 + Duration::from_secs(30);
    assert!(!fetching.admit(full), "over the budget");
    assert!(!fetching.admit(t0 + Duration::from_secs(59)));
    // A minute after the first, its place is free again (one place only).
    let later = t0 + Duration::from_secs(60);
    assert!(fetching.admit(later));
    assert!(!fetching.admit(later));
}

#[tokio::test]
async fn an_issuer_on_a_refused_address_is_never_fetched_and_the_keys_stay() {
    let keys = IssuerKeys::default();
    let e = keys
        .fetch("http://169.254.169.254")
        .await
        .expect_err("refused");
    let text = e.to_string();
    assert!(
        text.starts_with(
            "fetching discovery document: 169.254.169.254 is a cloud metadata address"
        ),
        "{text}"
    );
    keys.ensure("http://10.1.2.3:8080", Some("k")).await;
    let set = keys
        .of("http://10.1.2.3:8080")
        .expect("a failed fetch is remembered");
    assert!(set.keys.is_empty());
    // Within MIN_REFETCH, another token's unknown key reads nothing.
    assert!(!keys.needs_fetch("http://10.1.2.3:8080", Some("other")));
}
