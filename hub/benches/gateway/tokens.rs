//! What a member's own access token costs a call, measured against the
//! static token in the same run: the same A2A call through the hub's door,
//! once with BuyerCorp's static token and once with a client-credentials
//! JWT (RS256) that its identity provider — panva's `oidc-provider`, as the
//! identity tests run it — issued. The hub verifies a token once and then
//! keeps it (`hub::identity`), so this is the steady state a client
//! sending one token for many calls sees.

use std::path::Path;

use serde_json::json;

use super::common::oidc::Issuer;
use super::common::Stack;
use super::wrk::{self, Figures, Load};
use super::{check, ms, run_id};

/// BuyerCorp's client at its identity provider.
const CLIENT: (&str, &str) = ("buyercorp-bench", "buyercorp-bench-secret");
const AUDIENCE: &str = "urn:wall-street:hub";

/// Registers BuyerCorp's issuer, gets a token, and runs `static_load` and
/// its JWT twin at each concurrency; prints the table.
pub async fn run(
    stack: &mut Stack,
    wrk_bin: &Path,
    static_load: &Load,
    concurrencies: &[usize],
    seconds: u64,
) {
    let issuer = Issuer::start(
        &json!([{"client_id": CLIENT.0, "client_secret": CLIENT.1, "scope": ""}]),
        AUDIENCE,
    );
    let oidc = serde_yaml_ng::to_value(json!({
        "issuer": issuer.url,
        "audience": [AUDIENCE],
        "client_ids": [CLIENT.0],
    }))
    .expect("YAML");
    stack
        .reload_topology(|stack| stack.system_mut("buyercorp")["oidc"] = oidc)
        .await;
    let token = issuer.token(CLIENT, None, None).await;
    let mut jwt_load = static_load.clone();
    jwt_load.name = format!("{} (JWT)", static_load.name);
    for (name, value) in &mut jwt_load.headers {
        if name == "authorization" {
            *value = format!("Bearer {token}");
        }
    }
    let client = reqwest::Client::new();
    let with_static = check(&client, static_load)
        .await
        .expect("the static token's call");
    let with_jwt = check(&client, &jwt_load)
        .await
        .unwrap_or_else(|e| panic!("the JWT's call: {e}\n{}", stack.hub_log()));
    assert_eq!(
        with_static, with_jwt,
        "both tokens must get the same answer"
    );

    println!();
    println!(
        "member identity: {} with BuyerCorp's static token vs a JWT (RS256) of its own \
         identity provider, wrk, {seconds} s per run",
        static_load.name
    );
    println!(
        "{:>11} | {:>12} {:>12} {:>10} | {:>11} {:>11} {:>10}",
        "concurrency", "static p50", "JWT p50", "Δ p50", "static rps", "JWT rps", "JWT/static"
    );
    for &c in concurrencies {
        let measure = |load: &Load| -> Figures {
            wrk::run(wrk_bin, stack.dir.path(), load, &run_id(), c, 2);
            wrk::run(wrk_bin, stack.dir.path(), load, &run_id(), c, seconds)
        };
        let s = measure(static_load);
        let j = measure(&jwt_load);
        println!(
            "{c:>11} | {:>9.2} ms {:>9.2} ms {:>+7.3} ms | {:>11.0} {:>11.0} {:>9.2}x",
            ms(s.p50),
            ms(j.p50),
            ms(j.p50) - ms(s.p50),
            s.rps,
            j.rps,
            j.rps / s.rps
        );
    }
}
