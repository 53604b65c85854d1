//! Direct call to a peer vs the same call through the hub, in one run.
//!
//! Starts a real VendorCorp peer and a real hub (the release binaries of this
//! build) on loopback, then sends the same `orders.query` both ways: straight
//! to the peer's A2A endpoint with its token, and through the gateway with
//! BuyerCorp's token (auth chain, rule check, envelope, schema validation,
//! hub audit trail). Prints p50/p99 latency and requests/s for each and the
//! ratios. Figures, not assertions: this machine is shared and noisy.
//!
//! `cargo bench -p server --bench gateway` (env BENCH_REQUESTS, BENCH_CONCURRENCY).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{PeerSpec, Stack};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Figures {
    p50: Duration,
    p99: Duration,
    rps: f64,
}

async fn run<F, Fut>(requests: usize, concurrency: usize, make: F) -> Figures
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let make = Arc::new(make);
    let per_worker = requests / concurrency;
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let make = make.clone();
        workers.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(per_worker);
            for _ in 0..per_worker {
                let t = Instant::now();
                let ok = make().await;
                assert!(ok, "a benchmark call failed");
                lat.push(t.elapsed());
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.await.expect("worker"));
    }
    let wall = started.elapsed();
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    Figures {
        p50: pct(0.50),
        p99: pct(0.99),
        rps: all.len() as f64 / wall.as_secs_f64(),
    }
}

#[tokio::main]
async fn main() {
    let requests: usize = std::env::var("BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let concurrency: usize = std::env::var("BENCH_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let client = reqwest::Client::new();
    let input =
        json!({ "aggregate": { "op": "avg", "column": "order_value" }, "group_by": "region" });

    let direct = {
        let client = client.clone();
        let url = format!("{}/a2a", stack.peer_url("vendorcorp"));
        let token = stack.token("vendorcorp");
        let input = input.clone();
        move || {
            let body = json!({
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": { "message": exchange::wire::call_message("orders.query", input.clone()) }
            });
            let req = client
                .post(&url)
                .bearer_auth(&token)
                .header("a2a-version", "1.0")
                .json(&body);
            async move {
                match req.send().await {
                    Ok(r) => r
                        .json::<serde_json::Value>()
                        .await
                        .map(|v| v.get("result").is_some())
                        .unwrap_or(false),
                    Err(_) => false,
                }
            }
        }
    };
    let via_hub = {
        let client = client.clone();
        let url = format!("{}/gateway/v1/vendorcorp/orders.query", stack.hub_url());
        let token = stack.token("buyercorp");
        let input = input.clone();
        move || {
            let req = client
                .post(&url)
                .bearer_auth(&token)
                .header("x-caller-system", "buyercorp")
                .header("a2a-version", "1.0")
                .json(&input);
            async move {
                match req.send().await {
                    Ok(r) => r
                        .json::<serde_json::Value>()
                        .await
                        .map(|v| v["status"] == "connected")
                        .unwrap_or(false),
                    Err(_) => false,
                }
            }
        }
    };
    // Warm both paths (connection pools, SQLite page cache).
    run(100, 4, direct.clone()).await;
    run(100, 4, via_hub.clone()).await;

    println!(
        "gateway benchmark: {requests} x orders.query (avg by region), concurrency {concurrency}"
    );
    let d = run(requests, concurrency, direct).await;
    let h = run(requests, concurrency, via_hub).await;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{:<12} {:>10} {:>10} {:>10}",
        "path", "p50 ms", "p99 ms", "req/s"
    );
    println!(
        "{:<12} {:>10.2} {:>10.2} {:>10.0}",
        "direct",
        ms(d.p50),
        ms(d.p99),
        d.rps
    );
    println!(
        "{:<12} {:>10.2} {:>10.2} {:>10.0}",
        "via hub",
        ms(h.p50),
        ms(h.p99),
        h.rps
    );
    println!(
        "{:<12} {:>9.2}x {:>9.2}x {:>9.2}x",
        "hub/direct",
        ms(h.p50) / ms(d.p50),
        ms(h.p99) / ms(d.p99),
        h.rps / d.rps
    );
}
