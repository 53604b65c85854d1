//! The login's limits against a guessing crowd, with real processes: a
//! hub (and two replicas behind nginx on PostgreSQL), real sockets bound
//! to loopback addresses of their own (127.0.0.2–127.0.0.21 for the
//! crowd, 127.0.0.50 for the operator's usual place).
//!
//! What must hold (`ui_auth::throttle`): 100 wrong passwords sent at once
//! from 20 addresses check at most the account's failure budget
//! (`wallstreet_login_password_checks_total`); the operator, from an
//! address it has logged in from before, logs in meanwhile and afterwards;
//! a stranger guessing every few seconds does not lock it out; an address
//! never seen succeeding is refused while the budget is spent.

mod common;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use common::{metric_samples, Stack, UI_USER};
use serde_json::json;

/// The account's failure budget (`WS_LOGIN_USER_LIMIT`'s default, 5 per
/// 5 minutes: one more a minute).
const BUDGET: u64 = 5;
const REFILL: Duration = Duration::from_secs(60);

/// The operator's usual place.
const HOME: &str = "127.0.0.50";

fn from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip.parse::<IpAddr>().expect("an address"))
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client")
}

/// `POST /api/login` from `ip`: the status, and the session cookie and
/// CSRF token of a 200.
async fn login(base: &str, ip: &str, password: &str) -> (u16, Option<(String, String)>) {
    let resp = from(ip)
        .post(format!("{base}/api/login"))
        .json(&json!({"username": UI_USER, "password": password}))
        .send()
        .await
        .expect("the hub answers a login");
    let status = resp.status().as_u16();
    if status != 200 {
        return (status, None);
    }
    let cookie = resp
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    let body: serde_json::Value = resp.json().await.expect("a session");
    let csrf = body["csrf_token"].as_str().unwrap_or_default().to_string();
    (status, Some((cookie, csrf)))
}

/// Logs in from `ip` with the right password (must answer 200) and out.
async fn operator_in_and_out(stack: &Stack, ip: &str, when: &str) {
    let base = stack.hub_url();
    let (status, session) = login(&base, ip, &stack.ui_password).await;
    assert_eq!(status, 200, "the operator from {ip} {when}");
    let (cookie, csrf) = session.expect("a session");
    let out = from(ip)
        .post(format!("{base}/api/logout"))
        .header("cookie", cookie)
        .header("x-csrf-token", csrf)
        .send()
        .await
        .expect("logout");
    assert_eq!(out.status().as_u16(), 204, "logout {when}");
}

/// The sum of the samples of `metric` labelled `labels` (`""` for none)
/// over `urls`' `/metrics` (each replica counts its own).
async fn metric(urls: &[String], metric: &str, labels: &str) -> u64 {
    let mut total = 0;
    for url in urls {
        total += metric_samples(url, metric)
            .await
            .get(labels)
            .copied()
            .unwrap_or(0);
    }
    total
}

/// The whole scenario against `stack`, whose processes' `/metrics` are at
/// `metrics` (the hub, or each replica).
async fn the_operator_keeps_its_door(stack: &Stack, metrics: &[String]) {
    let checks = "wallstreet_login_password_checks_total";
    let before = metric(metrics, checks, "").await;
    operator_in_and_out(stack, HOME, "the first time").await;

    // The crowd: 100 wrong passwords at once, five from each of 20
    // addresses; the operator logs in from home while they land.
    let started = Instant::now();
    let base = stack.hub_url();
    let crowd = (0..100).map(|i| {
        let base = base.clone();
        async move {
            let ip = format!("127.0.0.{}", 2 + i % 20);
            login(&base, &ip, &format!("guess-{i}")).await.0
        }
    });
    let crowd = futures::future::join_all(crowd);
    let meanwhile = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        operator_in_and_out(stack, HOME, "during the attack").await;
    };
    let (statuses, ()) = tokio::join!(crowd, meanwhile);
    let took = started.elapsed();
    let refused = statuses.iter().filter(|s| **s == 401).count() as u64;
    let throttled = statuses.iter().filter(|s| **s == 429).count() as u64;
    assert_eq!(refused + throttled, 100, "{statuses:?}");
    let refills = took.as_secs() / REFILL.as_secs();
    let evaluated = metric(metrics, checks, "").await - before;
    eprintln!(
        "100 wrong logins from 20 addresses in {took:?}: {refused} checked (401), \
         {throttled} refused before a check (429); password checks counted: {evaluated} \
         (2 of them the operator's)"
    );
    assert!(
        refused <= BUDGET + refills,
        "{refused} wrong passwords were checked: {statuses:?}"
    );
    assert_eq!(evaluated, refused + 2, "every check is counted, no more");

    // A never-seen address with the right password looks like the next
    // guess: refused until the budget refills.
    let (status, _) = login(&base, "127.0.0.40", &stack.ui_password).await;
    assert_eq!(status, 429, "an unknown address while the budget is spent");

    // A stranger keeps guessing every few seconds; home still logs in.
    for round in 0..3 {
        let (status, _) = login(&base, "127.0.0.30", "still-guessing").await;
        assert!(matches!(status, 401 | 429), "round {round}: {status}");
        operator_in_and_out(stack, HOME, &format!("after guess {round}")).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let evaluated = metric(metrics, checks, "").await - before;
    let stranger_checked = evaluated - refused - 2 - 3;
    assert!(
        refused + stranger_checked <= BUDGET + started.elapsed().as_secs() / REFILL.as_secs(),
        "{evaluated} checks"
    );
    let throttled_total = metric(
        metrics,
        "wallstreet_login_throttled_total",
        r#"{limit="user"}"#,
    )
    .await;
    assert!(throttled_total > throttled, "{throttled_total}");
}

#[tokio::test]
async fn a_guessing_crowd_checks_at_most_the_budget_and_the_operator_still_logs_in() {
    let stack = Stack::start_without_contracts(Vec::new()).await;
    the_operator_keeps_its_door(&stack, &[stack.hub_url()]).await;
}

#[tokio::test]
async fn the_same_across_two_replicas_on_postgresql() {
    if !exchange::testing::postgres_enabled() {
        eprintln!("WS_TEST_POSTGRES=0: no replicas");
        return;
    }
    let stack = Stack::start_replicas(2, &[]).await;
    let metrics: Vec<String> = (0..2).map(|i| stack.replica_url(i)).collect();
    the_operator_keeps_its_door(&stack, &metrics).await;
}
