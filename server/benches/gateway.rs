//! A direct call to a peer vs the same call through the hub's two doors,
//! in one run, at several concurrencies.
//!
//! Starts a real VendorCorp peer and a real hub (the release binaries of this
//! build) on loopback, then sends the same `orders.query` three ways:
//!
//! - **direct**: A2A v1.0 JSON-RPC `SendMessage` straight to the peer's
//!   `/a2a` endpoint with the peer's token;
//! - **/gateway/v1**: `POST {hub}/gateway/v1/vendorcorp/orders.query` with
//!   BuyerCorp's token and `X-Caller-System`;
//! - **hub A2A**: the same `SendMessage` body as *direct*, to the hub's A2A
//!   surface `POST {hub}/a2a/vendorcorp` with BuyerCorp's token.
//!
//! Both hub paths run the exchange pipeline (auth chain, rule check,
//! envelope, schema validation, hub audit trail) before forwarding to the
//! peer. Every `SendMessage` carries a fresh `messageId` (the surface uses
//! it as the request id, a consult's idempotency key). Every answer is
//! checked: a call that is not a success aborts the bench with its status
//! and body, since a benchmark of errors is worthless. Before each measured
//! run, the target is warmed at the same concurrency (connection pools on
//! both hops, SQLite page cache), and once at the start the three paths must
//! answer the same data.
//!
//! Prints p50/p99 latency and requests/s of each path per concurrency, side
//! by side, and the ratios. Figures, not assertions: this machine is shared
//! and noisy.
//!
//! `cargo bench -p server --bench gateway` (through `scripts/cargo-env` in
//! this repository). Env: `BENCH_REQUESTS` (measured calls per path and
//! concurrency, default 2000), `BENCH_CONCURRENCY` (a comma list, default
//! `8,64`). The peer binary must be built (`cargo build --release -p peer`).

#[path = "../tests/common/mod.rs"]
mod common;

use common::{PeerSpec, Stack};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Figures {
    p50: Duration,
    p99: Duration,
    rps: f64,
}

/// Which door a call goes through.
#[derive(Clone, Copy, PartialEq)]
enum Path {
    Direct,
    Gateway,
    HubA2a,
}

impl Path {
    const ALL: [Path; 3] = [Path::Direct, Path::Gateway, Path::HubA2a];

    fn name(self) -> &'static str {
        match self {
            Path::Direct => "direct",
            Path::Gateway => "/gateway/v1",
            Path::HubA2a => "hub A2A",
        }
    }
}

/// One target of the bench: where it sends, with which token.
struct Target {
    path: Path,
    url: String,
    token: String,
    client: reqwest::Client,
    input: Value,
}

/// Numbers every `messageId` and JSON-RPC id of this process.
static NEXT_CALL: AtomicU64 = AtomicU64::new(0);

impl Target {
    /// One call; the capability's result, or what went wrong with the body.
    async fn call(&self) -> Result<Value, String> {
        let n = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        let req = match self.path {
            // The peer reads the consumer from X-Caller-System (only the
            // hub holds its token and vouches for it), and answers under
            // that consumer's negotiated contract.
            Path::Direct => self
                .client
                .post(&self.url)
                .header("x-caller-system", "buyercorp"),
            Path::HubA2a => self.client.post(&self.url),
            Path::Gateway => self
                .client
                .post(&self.url)
                .header("x-caller-system", "buyercorp"),
        };
        let req = match self.path {
            Path::Direct | Path::HubA2a => req.json(&json!({
                "jsonrpc": "2.0", "id": n, "method": "SendMessage",
                "params": { "message": {
                    "messageId": format!("bench-{}-{n}", std::process::id()),
                    "role": "ROLE_USER",
                    "parts": [{ "data": { "capability": "orders.query", "input": self.input } }],
                } }
            })),
            Path::Gateway => req.json(&self.input),
        };
        let resp = req
            .bearer_auth(&self.token)
            .header("a2a-version", "1.0")
            .send()
            .await
            .map_err(|e| format!("no answer: {e}"))?;
        let status = resp.status();
        let body = resp
            .text()
            .await
            .map_err(|e| format!("HTTP {status}, body unreadable: {e}"))?;
        let fail = |why: &str| format!("{why}: HTTP {status}: {body}");
        let json: Value = serde_json::from_str(&body).map_err(|_| fail("not JSON"))?;
        if !status.is_success() {
            return Err(fail("not a 2xx"));
        }
        let result = match self.path {
            Path::Direct | Path::HubA2a => {
                if json.get("error").is_some() {
                    return Err(fail("a JSON-RPC error"));
                }
                json.pointer("/result/message/parts/0/data")
            }
            Path::Gateway => (json["status"] == "connected")
                .then(|| json.get("result"))
                .flatten(),
        };
        match result {
            Some(r) if r.is_object() => Ok(r.clone()),
            _ => Err(fail("no result")),
        }
    }
}

/// `requests` calls of `target`, `concurrency` at a time. Panics with the
/// body of the first failed call.
async fn run(target: &Arc<Target>, requests: usize, concurrency: usize) -> Figures {
    let next = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (target, next, failed) = (target.clone(), next.clone(), failed.clone());
        workers.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(requests / concurrency + 1);
            while !failed.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= requests {
                    break;
                }
                let t = Instant::now();
                if let Err(e) = target.call().await {
                    failed.store(true, Ordering::Relaxed);
                    return Err(format!("call {} of {requests}: {e}", i + 1));
                }
                lat.push(t.elapsed());
            }
            Ok(lat)
        }));
    }
    let mut all = Vec::with_capacity(requests);
    let mut errors = Vec::new();
    for w in workers {
        match w.await.expect("worker") {
            Ok(lat) => all.extend(lat),
            Err(e) => errors.push(e),
        }
    }
    let wall = started.elapsed();
    if let Some(first) = errors.first() {
        panic!(
            "{} at concurrency {concurrency} failed ({} worker(s) saw an error), first: {first}",
            target.path.name(),
            errors.len()
        );
    }
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
    let requests: usize = match std::env::var("BENCH_REQUESTS") {
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("BENCH_REQUESTS={v:?} is not a positive count")),
        Err(_) => 2000,
    };
    let concurrencies: Vec<usize> = match std::env::var("BENCH_CONCURRENCY") {
        Ok(v) => v
            .split(',')
            .map(|c| {
                c.trim().parse().ok().filter(|&n| n > 0).unwrap_or_else(|| {
                    panic!("BENCH_CONCURRENCY={v:?}: {c:?} is not a positive count")
                })
            })
            .collect(),
        Err(_) => vec![8, 64],
    };
    let stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");
    let input =
        json!({ "aggregate": { "op": "avg", "column": "order_value" }, "group_by": "region" });
    let target = |path: Path| {
        let (url, token) = match path {
            Path::Direct => (
                format!("{}/a2a", stack.peer_url("vendorcorp")),
                stack.token("vendorcorp"),
            ),
            Path::Gateway => (
                format!("{}/gateway/v1/vendorcorp/orders.query", stack.hub_url()),
                stack.token("buyercorp"),
            ),
            Path::HubA2a => (
                format!("{}/a2a/vendorcorp", stack.hub_url()),
                stack.token("buyercorp"),
            ),
        };
        Arc::new(Target {
            path,
            url,
            token,
            client: client.clone(),
            input: input.clone(),
        })
    };
    let targets: Vec<Arc<Target>> = Path::ALL.into_iter().map(target).collect();

    // The three doors must answer the same thing, or the figures compare
    // different work.
    let mut answers = Vec::new();
    for t in &targets {
        let answer = t
            .call()
            .await
            .unwrap_or_else(|e| panic!("{}: {e}\nhub log:\n{}", t.path.name(), stack.hub_log()));
        answers.push(answer);
    }
    for (t, a) in targets.iter().zip(&answers).skip(1) {
        assert_eq!(
            a,
            &answers[0],
            "{} answers other data than direct",
            t.path.name()
        );
    }

    println!(
        "gateway benchmark: {requests} x orders.query (avg by region) per path and concurrency"
    );
    let mut figures = Vec::new(); // [concurrency][path]
    for &c in &concurrencies {
        let mut row = Vec::new();
        for t in &targets {
            run(t, (4 * c).max(200), c).await;
            row.push(run(t, requests, c).await);
        }
        figures.push(row);
    }

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut line = format!("{:<18}", "");
    for &c in &concurrencies {
        line += &format!(" | {:^29}", format!("concurrency {c}"));
    }
    println!("{}", line.trim_end());
    let mut line = format!("{:<18}", "path");
    for _ in &concurrencies {
        line += &format!(" | {:>9} {:>9} {:>9}", "p50 ms", "p99 ms", "req/s");
    }
    println!("{line}");
    for (i, p) in Path::ALL.iter().enumerate() {
        let mut line = format!("{:<18}", p.name());
        for row in &figures {
            let f = &row[i];
            line += &format!(" | {:>9.2} {:>9.2} {:>9.0}", ms(f.p50), ms(f.p99), f.rps);
        }
        println!("{line}");
    }
    let ratio = |label: &str, over: Path, under: Path| {
        let (o, u) = (over as usize, under as usize);
        let mut line = format!("{label:<18}");
        for row in &figures {
            line += &format!(
                " | {:>8.2}x {:>8.2}x {:>8.2}x",
                ms(row[o].p50) / ms(row[u].p50),
                ms(row[o].p99) / ms(row[u].p99),
                row[o].rps / row[u].rps
            );
        }
        println!("{line}");
    };
    ratio("hub-A2A/direct", Path::HubA2a, Path::Direct);
    ratio("hub-A2A/gateway", Path::HubA2a, Path::Gateway);
    ratio("gateway/direct", Path::Gateway, Path::Direct);

    // What issue 13 added, measured in the same run.
    traced(&client, &input, requests, &concurrencies, &figures).await;
    observe_cost(&answers[0]);
}

/// The hub A2A path again, against a second stack whose hub and peer
/// export every span over OTLP/HTTP (to a sink in this process that
/// answers 200), beside the untraced figures above. `BENCH_TRACING=0`
/// skips it.
async fn traced(
    client: &reqwest::Client,
    input: &Value,
    requests: usize,
    concurrencies: &[usize],
    figures: &[Vec<Figures>],
) {
    if std::env::var("BENCH_TRACING").is_ok_and(|v| v.trim() == "0") {
        return;
    }
    let sink = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("sink");
    let sink_url = format!("http://{}", sink.local_addr().expect("addr"));
    let spans = Arc::new(AtomicU64::new(0));
    let counted = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let counted = counted.clone();
            async move {
                counted.fetch_add(body.len() as u64, Ordering::Relaxed);
                axum::http::StatusCode::OK
            }
        }),
    );
    tokio::spawn(async move { axum::serve(sink, app).await });
    let stack = Stack::start_with_env(
        vec![PeerSpec::stock("vendorcorp")],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", sink_url.as_str())],
    )
    .await;
    let target = Arc::new(Target {
        path: Path::HubA2a,
        url: format!("{}/a2a/vendorcorp", stack.hub_url()),
        token: stack.token("buyercorp"),
        client: client.clone(),
        input: input.clone(),
    });
    println!();
    println!("tracing: hub A2A with OTLP export on (a second stack) vs off (above)");
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (i, &c) in concurrencies.iter().enumerate() {
        run(&target, (4 * c).max(200), c).await;
        let on = run(&target, requests, c).await;
        let off = &figures[i][Path::HubA2a as usize];
        println!(
            "concurrency {c:>3}: off p50 {:.2} ms p99 {:.2} ms {:.0} req/s | on p50 {:.2} ms p99 {:.2} ms {:.0} req/s | on/off p50 {:.2}x req/s {:.2}x",
            ms(off.p50), ms(off.p99), off.rps, ms(on.p50), ms(on.p99), on.rps,
            ms(on.p50) / ms(off.p50), on.rps / off.rps
        );
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    println!(
        "  (the sink received {} KiB of OTLP protobuf)",
        spans.load(Ordering::Relaxed) / 1024
    );
}

/// The per-call work of metrics and the inspector, on the answer the
/// bench's calls get: counting it, and redacting it for the inspector.
/// A loop, no network: nanoseconds per call.
fn observe_cost(answer: &Value) {
    use server::traffic::{Exchange, Traffic};
    let text =
        std::fs::read_to_string(common::repo().join("config/topology.yaml")).expect("topology");
    for sys in ["VENDORCORP", "BUYERCORP", "HELPDESK"] {
        std::env::set_var(format!("WS_TOKEN_{sys}"), "bench");
    }
    let loaded = server::registry::load::load_str("topology.yaml", &text).expect("valid");
    let contract = loaded.contracts.get("orders.query").expect("contract");
    let traffic = Traffic::new();
    let envelope = exchange::envelope::Envelope::new_root();
    let n = 20_000u32;
    let started = Instant::now();
    for _ in 0..n {
        let response = server::redaction::redact(&contract, answer, "vendorcorp")
            .map(|r| server::redaction::view::inspector_payload(&r))
            .ok();
        traffic.observe(
            &loaded.topology,
            Exchange {
                caller: "buyercorp",
                provider: "vendorcorp",
                capability: "orders.query",
                method: "SendMessage",
                envelope: &envelope,
                http_status: 200,
                outcome: app::dto::TrafficOutcome::Connected,
                reason: None,
                duration: Duration::from_micros(1500),
                retry: false,
                task: None,
                request: None,
                response,
                payload_note: None,
            },
        );
    }
    let per = started.elapsed() / n;
    println!();
    println!(
        "metrics + inspector per call (count, window, histogram, redact the answer, keep it): {:.1} µs",
        per.as_secs_f64() * 1e6
    );
}
