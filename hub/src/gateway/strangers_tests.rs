//! The strangers' window: what one summary row says of many refusals, and
//! that an interval nobody knocked in writes none.

use super::*;

fn stranger(front: Front, credential: Unidentified, last: u8) -> Stranger {
    Stranger {
        front,
        credential,
        from: Some(IpAddr::from([127, 0, 0, last])),
    }
}

#[test]
fn many_refusals_make_one_summary_row_and_a_quiet_interval_none() {
    let s = Strangers::default();
    assert!(s.take().is_none(), "nobody knocked: no row");
    for i in 0..500u32 {
        let (front, credential) = match i % 5 {
            0 => (Front::A2a, Unidentified::InvalidAccessToken),
            1 => (Front::Mcp, Unidentified::UnknownToken),
            _ => (Front::Gateway, Unidentified::NoCredential),
        };
        let reason = if i % 50 == 0 {
            ReasonCode::VersionUnsupported
        } else {
            ReasonCode::AuthRejected
        };
        s.note(&stranger(front, credential, (i % 20) as u8 + 2), reason);
    }
    let row = s.take().expect("a summary row");
    assert_eq!(row.caller, SUMMARY_CALLER);
    assert!(
        !exchange::id::is_valid(&row.caller),
        "no system is called so"
    );
    assert_eq!(row.outcome, Outcome::NotConnected);
    assert_eq!(row.reason, Some(ReasonCode::AuthRejected), "the commonest");
    let detail: serde_json::Value = serde_json::from_str(&row.detail).expect("JSON");
    assert_eq!(detail["calls"], 500);
    assert_eq!(detail["sources"], 20);
    assert_eq!(detail["sources_at_least"], false);
    let by = detail["by"].as_array().expect("by");
    let total: u64 = by.iter().filter_map(|k| k["calls"].as_u64()).sum();
    assert_eq!(total, 500);
    assert!(by.iter().any(|k| k["door"] == "mcp"
        && k["credential"] == "unknown_token"
        && k["reason"] == "AUTH_REJECTED"
        && k["calls"] == 100));
    assert!(by
        .iter()
        .any(|k| k["reason"] == "VERSION_UNSUPPORTED" && k["calls"] == 10));
    assert!(s.take().is_none(), "the window starts afresh");
}

#[test]
fn distinct_sources_are_counted_up_to_a_bound() {
    let s = Strangers::default();
    for n in 0..(MAX_SOURCES as u32 + 10) {
        let from = Some(IpAddr::from(n.to_be_bytes()));
        s.note(
            &Stranger {
                front: Front::Gateway,
                credential: Unidentified::NoCredential,
                from,
            },
            ReasonCode::AuthRejected,
        );
    }
    let detail: serde_json::Value =
        serde_json::from_str(&s.take().expect("a row").detail).expect("JSON");
    assert_eq!(detail["sources"], MAX_SOURCES);
    assert_eq!(detail["sources_at_least"], true);
}

#[test]
fn the_interval_is_seconds_and_a_bad_one_is_named() {
    std::env::remove_var(SUMMARY_ENV);
    assert_eq!(summary_interval(), Ok(Duration::from_secs(60)));
    std::env::set_var(SUMMARY_ENV, "0.5");
    assert_eq!(summary_interval(), Ok(Duration::from_millis(500)));
    for bad in ["0", "-1", "soon", "inf"] {
        std::env::set_var(SUMMARY_ENV, bad);
        let err = summary_interval().expect_err(bad);
        assert!(err.starts_with("WS_TRAIL_SUMMARY_SECONDS: `"), "{err}");
    }
    std::env::remove_var(SUMMARY_ENV);
}
