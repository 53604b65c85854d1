//! Calls refused before any caller was known (`gateway::strangers`), with
//! real processes: 500 requests from 20 loopback addresses at the three
//! doors (`/gateway/v1`, the A2A surface, the MCP front) with no
//! credential, a token nobody holds, a forged access token, an unknown
//! caller system, a member's name from the wrong address without its
//! token, an unsupported version. Each is refused as before; the hub's
//! trail grows by a summary row per interval instead of 500 rows;
//! `/metrics` counts all 500 by door, reason and credential; a member's
//! refused calls keep their own rows; the trail verifies.

mod common;

use std::net::IpAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{metric_samples, PeerSpec, Stack};
use serde_json::{json, Value};

/// One summary row per 3 s: the 500 calls take about a second, so they
/// land in one interval or two.
const ENV: [(&str, &str); 1] = [("WS_TRAIL_SUMMARY_SECONDS", "3")];

const CALLS: usize = 500;

/// A forged access token: a JWT's shape, an issuer no member has.
fn forged_jwt() -> String {
    use base64::Engine as _;
    let b64 = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
    format!(
        "{}.{}.{}",
        b64(r#"{"alg":"RS256","kid":"k1","typ":"JWT"}"#),
        b64(r#"{"iss":"https://idp.evil.example","sub":"buyercorp","aud":"hub"}"#),
        b64("not-a-signature")
    )
}

/// Request `i` of the crowd: its client (bound to its source address) and
/// the status it must be refused with.
fn knock(base: &str, client: &reqwest::Client, i: usize) -> (reqwest::RequestBuilder, u16) {
    let gateway = format!("{base}/gateway/v1/vendorcorp/orders.query");
    let body = json!({"aggregate": {"op": "count"}});
    match i % 6 {
        // No credential, claiming a member from an address not on its
        // allowlist.
        0 => (
            client
                .post(&gateway)
                .header("x-caller-system", "buyercorp")
                .header("a2a-version", "1.0")
                .json(&body),
            403,
        ),
        // A token nobody holds, an unknown caller system.
        1 => (
            client
                .post(&gateway)
                .bearer_auth("tok-nobody-holds-this")
                .header("x-caller-system", "mallory")
                .header("a2a-version", "1.0")
                .json(&body),
            401,
        ),
        // A forged access token.
        2 => (
            client
                .post(&gateway)
                .bearer_auth(forged_jwt())
                .header("a2a-version", "1.0")
                .json(&body),
            401,
        ),
        // An A2A version nobody speaks, no credential.
        3 => (
            client
                .post(&gateway)
                .header("a2a-version", "0.1")
                .json(&body),
            400,
        ),
        // The A2A surface without a token.
        4 => (
            client
                .post(format!("{base}/a2a/vendorcorp"))
                .header("a2a-version", "1.0")
                .json(&json!({"jsonrpc": "2.0", "id": i, "method": "SendMessage",
                    "params": common::a2a::send_message_params("orders.query", body)})),
            401,
        ),
        // The MCP front with a token nobody holds.
        _ => (
            client
                .post(format!("{base}/mcp/vendorcorp"))
                .bearer_auth("tok-nobody-holds-this")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "query_records", "arguments": {}}})),
            401,
        ),
    }
}

/// The summary rows of the hub's trail: their details.
async fn summaries(stack: &Stack) -> Vec<Value> {
    let store = stack.hub_store().await;
    let details: Vec<String> =
        sqlx::query_scalar("SELECT detail FROM audit_trail WHERE caller = '(unidentified)'")
            .fetch_all(store.pool())
            .await
            .expect("summary rows");
    store.close().await;
    details
        .iter()
        .map(|d| serde_json::from_str(d).expect("a summary's detail is JSON"))
        .collect()
}

/// The hub's rows with request id `id`: (reason, caller).
async fn rows_of(stack: &Stack, id: &str) -> Vec<(Option<String>, String)> {
    let store = stack.hub_store().await;
    let rows = sqlx::query_as("SELECT reason, caller FROM audit_trail WHERE request_id = $1")
        .bind(id)
        .fetch_all(store.pool())
        .await
        .expect("rows");
    store.close().await;
    rows
}

#[tokio::test]
async fn strangers_are_counted_and_summarised_and_members_keep_their_rows() {
    let stack = Stack::start_with_env(
        ["vendorcorp", "buyercorp"].map(PeerSpec::stock).to_vec(),
        &ENV,
    )
    .await;
    let base = stack.hub_url();
    let before = stack.hub_audit_count().await;

    let clients: Arc<Vec<reqwest::Client>> = Arc::new(
        (0..20u8)
            .map(|n| {
                reqwest::Client::builder()
                    .local_address(IpAddr::from([127, 0, 0, 2 + n]))
                    .timeout(Duration::from_secs(30))
                    .build()
                    .expect("client")
            })
            .collect(),
    );
    let started = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let workers = (0..16).map(|_| {
        let (clients, next, base) = (clients.clone(), next.clone(), base.clone());
        tokio::spawn(async move {
            let mut wrong = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= CALLS {
                    return wrong;
                }
                let (request, want) = knock(&base, &clients[i % 20], i);
                let got = request.send().await.expect("an answer").status().as_u16();
                if got != want {
                    wrong.push((i, got, want));
                }
            }
        })
    });
    for w in futures::future::join_all(workers).await {
        let wrong = w.expect("a worker");
        assert!(wrong.is_empty(), "refused otherwise than before: {wrong:?}");
    }
    let took = started.elapsed();

    // A member's refused calls: its own rows, as before.
    let not_permitted = stack
        .call("helpdesk", "vendorcorp", "orders.query")
        .header("x-request-id", "member-not-permitted")
        .body(json!({"aggregate": {"op": "count"}}))
        .send()
        .await;
    let wrong_address = stack
        .call("buyercorp", "vendorcorp", "orders.query")
        .header("x-request-id", "member-wrong-address")
        .source_ip("127.0.0.9")
        .send()
        .await;
    assert_eq!(
        (not_permitted.reason(), wrong_address.reason()),
        ("NOT_PERMITTED", "IP_NOT_ALLOWED")
    );
    for (id, reason, caller) in [
        ("member-not-permitted", "NOT_PERMITTED", "helpdesk"),
        ("member-wrong-address", "IP_NOT_ALLOWED", "buyercorp"),
    ] {
        assert_eq!(
            rows_of(&stack, id).await,
            [(Some(reason.to_string()), caller.to_string())],
            "{id}"
        );
    }

    // /metrics counted every stranger, by door, reason and credential.
    let by_kind = metric_samples(&base, "wallstreet_unidentified_refusals_total").await;
    let total: u64 = by_kind.values().sum();
    eprintln!("{CALLS} unidentified calls from 20 addresses in {took:?}; /metrics: {by_kind:#?}");
    assert_eq!(total, CALLS as u64, "{by_kind:#?}");
    for want in [
        r#"{door="gateway",reason="IP_NOT_ALLOWED",credential="no_credential"}"#,
        r#"{door="gateway",reason="AUTH_REJECTED",credential="unknown_token"}"#,
        r#"{door="gateway",reason="AUTH_REJECTED",credential="invalid_access_token"}"#,
        r#"{door="gateway",reason="VERSION_UNSUPPORTED",credential="no_credential"}"#,
        r#"{door="a2a",reason="AUTH_REJECTED",credential="no_credential"}"#,
        r#"{door="mcp",reason="AUTH_REJECTED",credential="unknown_token"}"#,
    ] {
        assert!(by_kind.contains_key(want), "{want} not in {by_kind:#?}");
    }

    // The trail: the members' two rows and a summary row or two.
    let deadline = Instant::now() + Duration::from_secs(15);
    let summed = loop {
        let rows = summaries(&stack).await;
        let summed: u64 = rows.iter().filter_map(|d| d["calls"].as_u64()).sum();
        if summed == CALLS as u64 {
            break rows;
        }
        assert!(Instant::now() < deadline, "summaries so far: {rows:#?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let grew = stack.hub_audit_count().await - before;
    eprintln!(
        "the trail grew by {grew} rows: 2 of the members, {} summaries: {summed:#?}",
        summed.len()
    );
    assert!(
        (1..=2).contains(&summed.len()),
        "{} summary rows",
        summed.len()
    );
    assert_eq!(grew, 2 + summed.len() as u64);
    let sources: u64 = summed
        .iter()
        .filter_map(|d| d["sources"].as_u64())
        .max()
        .unwrap_or(0);
    assert!((10..=20).contains(&sources), "{summed:#?}");

    // And it verifies.
    let out = Command::new(env!("CARGO_BIN_EXE_hub"))
        .args(["trail", "verify", "--db", &stack.hub_store.to_argument()])
        .output()
        .expect("hub trail verify");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
