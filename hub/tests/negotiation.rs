//! Negotiated data contracts end to end (NOTES.md, "Data contracts and
//! the data plane"), real processes: the hub, VendorCorp and the `peer
//! negotiate` command as BuyerCorp's operator runs it.
//!
//! - the demo's transcript: BuyerCorp proposes region, order_date,
//!   order_value, order_id; VendorCorp counters without order_id; BuyerCorp
//!   accepts; a grant with 30 days' retention; the aggregate read under it
//!   equals an independent recomputation over VendorCorp's rows;
//! - every read refusal from its real cause, in the provider's words, with
//!   the provider's trail showing no row read;
//! - an accept that widens the scope is rejected;
//! - a provider whose replies break the protocol gets one corrective
//!   request, then the negotiation ends with a protocol error.

mod common;

use common::contracts::message;
use common::{peer_bin, Faults, PeerSpec, Stack};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::Command;

/// Runs `peer negotiate` as BuyerCorp's operator against `provider`.
fn negotiate(stack: &Stack, provider: &str, columns: &str) -> (i32, String, String) {
    let out = Command::new(peer_bin())
        .args(["negotiate", "--config"])
        .arg(stack.peer_config("buyercorp"))
        .args(["--database"])
        .arg(stack.dir.path().join("buyercorp-operator.db"))
        .args(["--provider", provider, "--capability", "orders.negotiate"])
        .args([
            "--columns",
            columns,
            "--require",
            "region,order_date,order_value",
        ])
        .args(["--purpose", "average order value by region for Q3 2025"])
        .args(["--retention-days", "30", "--hub-url", &stack.hub_url()])
        .envs(stack.tokens.iter().map(|(k, v)| (k.clone(), v.clone())))
        .current_dir(common::repo())
        .output()
        .expect("run peer negotiate");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A read of orders through the hub as `caller`: the labelled result.
async fn read(stack: &Stack, caller: &str, input: Value) -> (u16, Value) {
    let answer = stack
        .call(caller, "vendorcorp", "orders.query")
        .body(input)
        .send()
        .await;
    (answer.status, answer.json.clone())
}

/// VendorCorp's own trail records for orders.query, oldest first.
async fn provider_reads(stack: &Stack) -> Vec<String> {
    let url = format!("sqlite://{}?mode=ro", stack.peer_db("vendorcorp").display());
    let pool = sqlx::SqlitePool::connect(&url).await.expect("vendor db");
    let rows: Vec<(String,)> = sqlx::query_as(
        "SELECT detail FROM audit_trail WHERE capability = 'orders.query' ORDER BY seq",
    )
    .fetch_all(&pool)
    .await
    .expect("trail");
    rows.into_iter().map(|r| r.0).collect()
}

#[tokio::test]
async fn the_seed_transcript_then_every_refusal_in_the_providers_words() {
    let stack =
        Stack::start_without_contracts(["vendorcorp", "buyercorp"].map(PeerSpec::stock).to_vec())
            .await;
    // Before any negotiation: no contract, in VendorCorp's words.
    let avg_q3 = json!({"aggregate": {"op": "avg", "column": "order_value"}, "group_by": "region",
        "filters": [{"column": "order_date", "op": "gte", "value": "2025-07-01"},
                    {"column": "order_date", "op": "lt", "value": "2025-10-01"}]});
    let (_, body) = read(&stack, "buyercorp", avg_q3.clone()).await;
    assert_eq!(body["status"], "not_connected", "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or("")
            .contains("NO_CONTRACT: "),
        "{body}"
    );

    stack
        .wait_for_negotiable_card("buyercorp", "vendorcorp")
        .await;
    let (code, stdout, stderr) = negotiate(
        &stack,
        "vendorcorp",
        "region,order_date,order_value,order_id",
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}\n{}", stack.hub_log());
    let grant: Value = serde_json::from_str(&stdout).expect("the grant as JSON");
    let id = grant["contract_id"].as_str().expect("contract id");
    assert!(id.starts_with("c-") && id.len() == 14, "{id}");
    assert_eq!(
        grant["columns"],
        json!(["region", "order_date", "order_value"])
    );
    assert_eq!(grant["retention_days"].as_f64(), Some(30.0));
    assert_eq!(grant["consumer"], "buyercorp");
    // The transcript the operator sees: propose 4 → counter 3 → accept → grant.
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines[0].starts_with(
            "-> consumer:propose [\"region\", \"order_date\", \"order_value\", \"order_id\"]"
        ),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("<- provider:counter [\"region\", \"order_date\", \"order_value\"]"),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with("-> consumer:accept [\"region\", \"order_date\", \"order_value\"]"),
        "{stderr}"
    );
    assert!(
        lines[3].starts_with("<- provider:accept") && lines[3].contains(id),
        "{stderr}"
    );
    // The provider's trail logged the policy filter.
    let url = format!("sqlite://{}?mode=ro", stack.peer_db("vendorcorp").display());
    let pool = sqlx::SqlitePool::connect(&url).await.expect("vendor db");
    let turns: Vec<(String,)> = sqlx::query_as(
        "SELECT detail FROM audit_trail WHERE capability = 'orders.negotiate' ORDER BY seq",
    )
    .fetch_all(&pool)
    .await
    .expect("trail");
    assert!(
        turns[0]
            .0
            .contains("policy-filter not-negotiable [\"order_id\"]"),
        "{turns:?}"
    );
    assert!(turns[1].0.contains(&format!("grant {id}")), "{turns:?}");

    // The granted read equals an independent recomputation over the rows.
    let (status, body) = read(&stack, "buyercorp", avg_q3.clone()).await;
    assert_eq!(
        (status, &body["status"]),
        (200, &json!("connected")),
        "{body}"
    );
    let rows: Vec<(String, f64, String)> =
        sqlx::query_as("SELECT region, order_value, order_date FROM orders")
            .fetch_all(&pool)
            .await
            .expect("rows");
    let mut sums: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    for (region, value, date) in &rows {
        if date.as_str() >= "2025-07-01" && date.as_str() < "2025-10-01" {
            let e = sums.entry(region.clone()).or_default();
            e.0 += value;
            e.1 += 1;
        }
    }
    let groups = body["result"]["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), sums.len(), "{body}");
    let covered: u64 = sums.values().map(|(_, n)| n).sum();
    assert!(covered > 0 && covered < rows.len() as u64);
    assert_eq!(body["result"]["row_count"].as_f64(), Some(covered as f64));
    for g in groups {
        let (sum, n) = sums[g["key"].as_str().expect("key")];
        let expected = ((sum / n as f64) * 100.0).round() / 100.0;
        assert!(
            (g["value"].as_f64().expect("value") - expected).abs() < 0.006,
            "{g} vs {expected}"
        );
    }

    // Each refusal from its real cause, each before a row is read.
    let before = provider_reads(&stack).await.len();
    let cases = [
        // A column the dataset lacks never leaves the hub (its half of the
        // grant); the provider's own UNKNOWN_COLUMN is tested at its doors.
        (
            "buyercorp",
            json!({"aggregate": {"op": "count"}, "group_by": "colour"}),
            "the input is outside the contract at /group_by",
        ),
        (
            "buyercorp",
            json!({"aggregate": {"op": "count"}, "group_by": "product"}),
            "SCOPE_DENIED: [\"product\"] was not granted by contract",
        ),
    ];
    for (caller, input, words) in &cases {
        let (_, body) = read(&stack, caller, input.clone()).await;
        assert_eq!(body["status"], "not_connected", "{body}");
        let detail = body["detail"].as_str().unwrap_or("");
        assert!(detail.contains(words), "{caller}: {detail}");
    }
    let (_, body) = read(
        &stack,
        "buyercorp",
        json!({"aggregate": {"op": "count"}, "group_by": "product"}),
    )
    .await;
    let detail = body["detail"].as_str().unwrap_or("");
    assert!(
        detail.contains("Granted columns: {\"order_date\", \"order_value\", \"region\"}"),
        "{detail}"
    );
    assert!(
        detail.contains("Purpose of record: \"average order value by region for Q3 2025\""),
        "{detail}"
    );
    let reads = provider_reads(&stack).await;
    for d in &reads[before..] {
        assert!(d.contains("rows_read 0"), "a refusal read rows: {reads:?}");
    }
    assert_eq!(
        reads.len() - before,
        2,
        "the hub's refusal reached no provider: {reads:?}"
    );
    assert!(
        reads[before].contains(&format!("refused SCOPE_DENIED contract {id}")),
        "{reads:?}"
    );

    // An expired contract: CONTRACT_EXPIRED, again before any row.
    sqlx::query("UPDATE contracts SET expires_at = '2020-01-01T00:00:00+00:00'")
        .execute(
            &sqlx::SqlitePool::connect(&format!(
                "sqlite://{}",
                stack.peer_db("vendorcorp").display()
            ))
            .await
            .expect("rw"),
        )
        .await
        .expect("expire");
    let (_, body) = read(&stack, "buyercorp", avg_q3).await;
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or("")
            .contains(&format!("CONTRACT_EXPIRED: {id} expired at")),
        "{body}"
    );
    assert!(provider_reads(&stack)
        .await
        .last()
        .expect("record")
        .contains("rows_read 0"));
}

#[tokio::test]
async fn an_accept_that_widens_the_scope_is_rejected() {
    let stack = Stack::start_without_contracts(vec![PeerSpec::stock("vendorcorp")]).await;
    let ctx = "ctx-widen";
    let purpose = "average order value by region";
    let answer = stack
        .negotiation_turn(
            "buyercorp",
            "vendorcorp",
            ctx,
            message(
                "propose",
                &["region", "order_value", "customer_email"],
                purpose,
                365,
            ),
        )
        .await;
    let result = &answer.result()["message"]["parts"][0]["data"];
    assert_eq!(result["reply"]["intent"], "counter", "{result}");
    assert_eq!(
        result["reply"]["scope"]["columns"],
        json!(["region", "order_value"])
    );
    assert_eq!(
        result["reply"]["scope"]["retention_days"].as_f64(),
        Some(90.0),
        "capped"
    );
    let answer = stack
        .negotiation_turn(
            "buyercorp",
            "vendorcorp",
            ctx,
            message(
                "accept",
                &["region", "order_value", "customer_email"],
                purpose,
                90,
            ),
        )
        .await;
    let result = &answer.result()["message"]["parts"][0]["data"];
    assert_eq!(result["reply"]["intent"], "reject", "{result}");
    assert!(result["grant"].is_null());
    assert!(
        result["reply"]["rationale"]
            .as_str()
            .unwrap_or("")
            .contains("[\"customer_email\"] was never offered"),
        "{result}"
    );
    // A system no rule lets negotiate is refused at the hub.
    let answer = stack
        .negotiation_turn(
            "helpdesk",
            "vendorcorp",
            ctx,
            message("accept", &["region"], purpose, 30),
        )
        .await;
    assert_eq!(answer.reason(), "NOT_PERMITTED", "{:?}", answer.json);
}

#[tokio::test]
async fn a_provider_that_breaks_the_protocol_gets_one_correction_then_a_protocol_error() {
    let faults = [
        ("wrong_party", "may not speak for the other party"),
        // The hub's half of the schema catches these first.
        (
            "extra_key",
            "answer breaks the contract at /reply: fails `additionalProperties`",
        ),
        ("unknown_column", "avg_order_value"),
        ("unparseable", "answer breaks the contract at /reply"),
    ];
    // One stack: every broken provider a clone of VendorCorp, and one that
    // breaks only its first reply.
    let mut specs: Vec<PeerSpec> = faults
        .iter()
        .map(|(fault, _)| {
            PeerSpec::clone_of(
                &format!("broken{}", fault.replace('_', "")),
                "vendorcorp",
                Faults {
                    negotiation: Some(fault),
                    ..Faults::default()
                },
            )
        })
        .collect();
    specs.push(PeerSpec::clone_of(
        "flaky",
        "vendorcorp",
        Faults {
            negotiation: Some("extra_key"),
            negotiation_times: 1,
            ..Faults::default()
        },
    ));
    specs.push(PeerSpec::stock("buyercorp"));
    let stack = Stack::start(specs).await;
    for (fault, needle) in faults {
        let id = format!("broken{}", fault.replace('_', ""));
        stack.wait_for_negotiable_card("buyercorp", &id).await;
        let (code, stdout, stderr) = negotiate(&stack, &id, "region,order_date,order_value");
        assert_eq!(code, 2, "{fault}: {stdout}\n{stderr}");
        assert!(
            stderr.contains("negotiation failed: protocol error"),
            "{fault}: {stderr}"
        );
        assert!(stderr.contains(needle), "{fault}: {stderr}");
        let sent: Vec<&str> = stderr.lines().filter(|l| l.starts_with("-> ")).collect();
        assert_eq!(
            sent.len(),
            2,
            "{fault}: one message and one correction: {stderr}"
        );
        assert!(
            sent[1].starts_with("-> consumer:request"),
            "{fault}: {stderr}"
        );
    }
    // Broken once: the correction recovers and a contract is granted.
    stack.wait_for_negotiable_card("buyercorp", "flaky").await;
    let (code, stdout, stderr) = negotiate(&stack, "flaky", "region,order_date,order_value");
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("-> consumer:request"), "{stderr}");
}
