//! The hub's hot path beside its anchors, in one run (NOTES.md, "The hub's
//! hot path"; DESIGN.md §4, "Peer to peer": what the gateway costs a call).
//!
//! Starts a real VendorCorp peer, the echo provider (`peer echo`: answers
//! every `SendMessage` at once, so the peer's SQL does not hide the hub's
//! cost; registered from `config/peers/echo.topology.yaml` like any peer)
//! and a real hub (the release binaries of this build) on loopback, then
//! Debian's `nginx` as a plain reverse proxy in front of both backends. For
//! each backend it loads four doors with Debian's `wrk` (a process of its
//! own, a fresh `messageId` per request):
//!
//! - **direct**: A2A v1.0 JSON-RPC `SendMessage` straight to the backend's
//!   `/a2a` with its token (and `X-Caller-System`, the consumer the
//!   VendorCorp peer answers under);
//! - **nginx**: the same request through nginx (the floor any proxy pays);
//! - **hub A2A**: the same `SendMessage` to the hub's surface
//!   `POST {hub}/a2a/{provider}` with BuyerCorp's token;
//! - **/gateway/v1**: `POST {hub}/gateway/v1/{provider}/{capability}`, the
//!   plain binding over the same pipeline.
//!
//! Both hub doors run the whole pipeline: auth chain, rule check, input
//! schema, forward, response schema, audit record, metrics and inspector.
//! `orders.query` (avg by region) and `echo.data` are both data-shares, so
//! every call executes (no replay). Before the measured runs, every door of
//! a backend must answer the same data; every answer of every run is
//! checked by the wrk script (a bad one aborts the bench).
//!
//! Prints p50/p99/req/s per door, backend and concurrency, side by side,
//! then what the hub and nginx add over direct (p50), the hub/nginx ratio
//! of that, throughput relative to direct, and the targets on the
//! echo backend. Figures, not assertions: this machine is shared and noisy
//! (the load average at the start is printed).
//!
//! `scripts/bench-gateway` (installs nginx and wrk if missing, builds, runs
//! this), or `cargo bench -p hub --bench gateway` through
//! `scripts/cargo-env` with the release binaries built. Env:
//! `BENCH_SECONDS` (per measured run, default 8; a 2 s warm-up precedes
//! each), `BENCH_CONCURRENCY` (a comma list, default `8,64`),
//! `BENCH_ROUNDS` (repeat the whole table, print medians; default 1),
//! `BENCH_TRACING=0` (skip the OTLP section), `BENCH_WRK`, `BENCH_NGINX`
//! (the binaries, else found on `PATH`).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "gateway/fixed.rs"]
mod fixed;
#[path = "gateway/mcp.rs"]
mod mcp;
#[path = "gateway/nginx.rs"]
mod nginx;
#[path = "gateway/report.rs"]
mod report;
#[path = "gateway/tokens.rs"]
mod tokens;
#[path = "gateway/wrk.rs"]
mod wrk;

use common::{PeerSpec, Stack};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use wrk::{Figures, Load, ID};

/// Which door a call goes through.
#[derive(Clone, Copy, PartialEq)]
enum Door {
    Direct,
    Nginx,
    HubA2a,
    HubRest,
    Gateway,
}

impl Door {
    const ALL: [Door; 5] = [
        Door::Direct,
        Door::Nginx,
        Door::HubA2a,
        Door::HubRest,
        Door::Gateway,
    ];

    fn name(self) -> &'static str {
        match self {
            Door::Direct => "direct",
            Door::Nginx => "nginx",
            Door::HubA2a => "hub A2A",
            Door::HubRest => "hub HTTP+JSON",
            Door::Gateway => "/gateway/v1",
        }
    }
}

/// A provider the bench calls, and what it asks it.
struct Backend {
    name: &'static str,
    provider: &'static str,
    capability: &'static str,
    input: Value,
    /// The nginx port in front of it.
    nginx_port: u16,
}

/// Numbers the runs (and the ids of the check calls) of this process.
static NEXT_RUN: AtomicU64 = AtomicU64::new(0);

fn run_id() -> String {
    format!(
        "bench-{}-{}",
        std::process::id(),
        NEXT_RUN.fetch_add(1, Ordering::Relaxed)
    )
}

/// The `wrk` load of one door of one backend.
fn load(stack: &Stack, b: &Backend, door: Door) -> Load {
    let params = json!({ "message": {
        "messageId": ID,
        "role": "ROLE_USER",
        "parts": [{ "data": { "capability": b.capability, "input": b.input } }],
    } });
    let a2a_body = json!({
        "jsonrpc": "2.0", "id": ID, "method": "SendMessage", "params": params,
    })
    .to_string();
    let bearer = |id: &str| {
        (
            "authorization".to_string(),
            format!("Bearer {}", stack.token(id)),
        )
    };
    let version = ("a2a-version".to_string(), "1.0".to_string());
    // The VendorCorp peer reads the consumer from X-Caller-System (only
    // the hub holds its token and vouches for it), and answers under that
    // consumer's negotiated contract.
    let caller = ("x-caller-system".to_string(), "buyercorp".to_string());
    let direct_headers = vec![bearer(b.provider), caller.clone(), version.clone()];
    let (url, headers, body, id_header, marker) = match door {
        Door::Direct => (
            format!("{}/a2a", stack.peer_url(b.provider)),
            direct_headers,
            a2a_body,
            None,
            "\"parts\"",
        ),
        Door::Nginx => (
            format!("http://127.0.0.1:{}/a2a", b.nginx_port),
            direct_headers,
            a2a_body,
            None,
            "\"parts\"",
        ),
        Door::HubA2a => (
            format!("{}/a2a/{}", stack.hub_url(), b.provider),
            vec![bearer("buyercorp"), version.clone()],
            a2a_body,
            None,
            "\"parts\"",
        ),
        Door::HubRest => (
            format!("{}/a2a/{}/rest/message:send", stack.hub_url(), b.provider),
            vec![bearer("buyercorp"), version],
            params.to_string(),
            None,
            "\"parts\"",
        ),
        Door::Gateway => (
            format!(
                "{}/gateway/v1/{}/{}",
                stack.hub_url(),
                b.provider,
                b.capability
            ),
            vec![bearer("buyercorp"), caller, version],
            b.input.to_string(),
            Some("x-request-id"),
            "\"status\":\"connected\"",
        ),
    };
    Load {
        name: format!("{} {}", b.name, door.name()),
        url,
        headers,
        body,
        id_header,
        marker,
    }
}

/// One call of `load` from this process: the capability result, or what
/// went wrong with the body.
async fn check(client: &reqwest::Client, load: &Load) -> Result<Value, String> {
    let id = run_id();
    let mut req = client
        .post(&load.url)
        .header("content-type", "application/json")
        .body(load.body.replace(ID, &id));
    for (k, v) in &load.headers {
        req = req.header(k, v);
    }
    if let Some(h) = load.id_header {
        req = req.header(h, &id);
    }
    let resp = req.send().await.map_err(|e| format!("no answer: {e}"))?;
    let status = resp.status();
    let body = resp
        .text()
        .await
        .map_err(|e| format!("HTTP {status}, body unreadable: {e}"))?;
    let fail = |why: &str| format!("{why}: HTTP {status}: {body}");
    let json: Value = serde_json::from_str(&body).map_err(|_| fail("not JSON"))?;
    if !status.is_success() || json.get("error").is_some() {
        return Err(fail("not a success"));
    }
    let result = match load.id_header {
        None if load.url.ends_with("/message:send") => json.pointer("/message/parts/0/data"),
        None => json.pointer("/result/message/parts/0/data"),
        Some(_) => (json["status"] == "connected")
            .then(|| json.get("result"))
            .flatten(),
    };
    match result {
        Some(r) if r.is_object() => Ok(r.clone()),
        _ => Err(fail("no result")),
    }
}

fn env_count(var: &str, default: usize) -> usize {
    match std::env::var(var) {
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .unwrap_or_else(|| panic!("{var}={v:?} is not a positive count")),
        Err(_) => default,
    }
}

fn tool(name: &str, var: &str) -> PathBuf {
    wrk::find(name, var).unwrap_or_else(|| {
        panic!("`{name}` not found (set {var}, or run scripts/bench-gateway, which installs it)")
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median of each figure over the rounds.
fn median(runs: &[Figures]) -> Figures {
    let mid = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Figures {
        p50: Duration::from_secs_f64(mid(runs.iter().map(|f| f.p50.as_secs_f64()).collect())),
        p99: Duration::from_secs_f64(mid(runs.iter().map(|f| f.p99.as_secs_f64()).collect())),
        rps: mid(runs.iter().map(|f| f.rps).collect()),
    }
}

/// Where the published report goes: `BENCH_REPORT_DIR`, else the
/// repository's `docs/`.
fn report_dir() -> PathBuf {
    std::env::var_os("BENCH_REPORT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs"))
}

#[tokio::main]
async fn main() {
    // `BENCH_RENDER=<raw.jsonl>`: the report written again from kept
    // results, nothing measured.
    if let Some(raw) = std::env::var_os("BENCH_RENDER") {
        // A relative path is the repository's (cargo runs a bench in its
        // package's directory).
        let raw = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(raw);
        let text = std::fs::read_to_string(&raw)
            .unwrap_or_else(|e| panic!("BENCH_RENDER={}: {e}", raw.display()));
        let path = report::render(&report_dir(), &text);
        println!("report written: {}", path.display());
        return;
    }
    let seconds = env_count("BENCH_SECONDS", 8) as u64;
    let rounds = env_count("BENCH_ROUNDS", 1);
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
    let wrk_bin = tool("wrk", "BENCH_WRK");
    let nginx_bin = tool("nginx", "BENCH_NGINX");
    let sections = Sections::from_env();
    // The published report pins: everything this process starts on one
    // core, then the gateway under test moved to the other.
    let mut pinning = report::Pinning::plan();
    if sections.report {
        pinning.pin_self();
    }
    let mut stack = Stack::start(vec![PeerSpec::stock("vendorcorp")]).await;
    stack.add_echo("echo").await;
    let backends = [
        Backend {
            name: "orders",
            provider: "vendorcorp",
            capability: "orders.query",
            input: json!({ "aggregate": { "op": "avg", "column": "order_value" }, "group_by": "region" }),
            nginx_port: common::free_port(),
        },
        Backend {
            name: "echo",
            provider: "echo",
            capability: "echo.data",
            input: json!({ "text": "hello, hub", "n": 1 }),
            nginx_port: common::free_port(),
        },
    ];
    let routes: Vec<(u16, u16)> = backends
        .iter()
        .map(|b| (b.nginx_port, stack.peer_ports[b.provider]))
        .collect();
    let proxy = nginx::Nginx::start(&nginx_bin, stack.dir.path(), &routes);
    if sections.report {
        if let Some(pid) = stack.hub_pid() {
            pinning.pin_gateway(pid);
        }
        pinning.pin_gateway(proxy.pid());
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client");

    // Every door of a backend must answer the same thing, or the figures
    // compare different work.
    let mut loads = Vec::new(); // [backend][door]
    let mut answers = Vec::new(); // [backend]
    for b in &backends {
        let row: Vec<Load> = Door::ALL.iter().map(|&d| load(&stack, b, d)).collect();
        let mut first: Option<Value> = None;
        for l in &row {
            let answer = check(&client, l).await.unwrap_or_else(|e| {
                panic!(
                    "{}: {e}\nhub log:\n{}\nnginx log:\n{}",
                    l.name,
                    stack.hub_log(),
                    proxy.log()
                )
            });
            match &first {
                None => first = Some(answer),
                Some(a) => assert_eq!(&answer, a, "{} answers other data than direct", l.name),
            }
        }
        answers.push(first.expect("an answer"));
        loads.push(row);
    }

    // The MCP rows: both doors must give the same structured content.
    let mcp_loads = mcp::loads(&stack);
    let mut first: Option<Value> = None;
    for l in &mcp_loads {
        let answer = mcp::check(&client, l, &run_id())
            .await
            .unwrap_or_else(|e| panic!("{}: {e}\nhub log:\n{}", l.name, stack.hub_log()));
        match &first {
            None => first = Some(answer),
            Some(a) => assert_eq!(&answer, a, "{} answers other data than direct", l.name),
        }
    }

    let load_avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "gateway benchmark: hub {}; load average at start: {}",
        common::hub_bin().display(),
        load_avg
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    // A peer seeds its dataset when it starts: figures taken while it
    // does would be its, not the doors'.
    wait_idle();
    if sections.report {
        let Some(oha) = oha() else {
            panic!("the report needs `oha`: scripts/bench-gateway installs it");
        };
        let rates = rates();
        let seconds = env_count("BENCH_FIXED_SECONDS", 5) as u64;
        // echo first (the gateway's own cost), then orders, then MCP.
        let mut groups = Vec::new();
        for (b, row) in backends.iter().zip(&loads).rev() {
            groups.push(
                Door::ALL
                    .iter()
                    .map(|&d| report::Row {
                        backend: b.name,
                        door: d.name(),
                        load: &row[d as usize],
                    })
                    .collect::<Vec<_>>(),
            );
        }
        groups.push(
            mcp_loads
                .iter()
                .zip(["direct", "hub MCP"])
                .map(|(l, door)| report::Row {
                    backend: "mcp",
                    door,
                    load: l,
                })
                .collect(),
        );
        // `BENCH_BACKENDS` (say `echo`): only those groups, for a quick
        // sitting that compares two builds on the gateway's own cost.
        if let Ok(wanted) = std::env::var("BENCH_BACKENDS") {
            let wanted: Vec<&str> = wanted.split(',').map(str::trim).collect();
            groups.retain(|g| g.first().is_some_and(|r| wanted.contains(&r.backend)));
        }
        let context = report::Context {
            hub: common::hub_bin(),
            pinning,
            // `BENCH_REPORT_DIR`: elsewhere than the repository's docs
            // (an earlier build's figures, say).
            out: report_dir(),
        };
        let path = report::run(&oha, &groups, &rates, seconds, &context);
        println!("report written: {}", path.display());
        return;
    }
    if sections.fixed {
        // The echo backend first (the targets are read on it), then
        // orders, then MCP; nginx is a floor, not a door of the hub's.
        let doors = [Door::Direct, Door::Nginx, Door::HubA2a];
        let mut groups: Vec<Vec<&Load>> = (0..backends.len())
            .rev()
            .map(|b| doors.iter().map(|&d| &loads[b][d as usize]).collect())
            .collect();
        groups.push(mcp_loads.iter().collect());
        fixed_rate(&groups);
    }
    // What a member's own access token costs against the static token.
    if sections.tokens {
        let echo = &loads[1][Door::HubA2a as usize];
        tokens::run(&mut stack, &wrk_bin, echo, &concurrencies, seconds).await;
    }
    if !sections.wrk {
        return;
    }
    println!();
    println!(
        "closed loop: wrk, {seconds} s per run after a 2 s warm-up, {rounds} round(s){}",
        if rounds > 1 { " (medians)" } else { "" },
    );
    // runs[round][concurrency][backend][door]
    let mut runs: Vec<Vec<Vec<Vec<Figures>>>> = Vec::new();
    for _ in 0..rounds {
        let mut by_c = Vec::new();
        for &c in &concurrencies {
            let mut by_b = Vec::new();
            for row in &loads {
                let mut by_d = Vec::new();
                for l in row {
                    wrk::run(&wrk_bin, stack.dir.path(), l, &run_id(), c, 2);
                    by_d.push(wrk::run(
                        &wrk_bin,
                        stack.dir.path(),
                        l,
                        &run_id(),
                        c,
                        seconds,
                    ));
                }
                by_b.push(by_d);
            }
            by_c.push(by_b);
        }
        runs.push(by_c);
    }
    // figures[concurrency][backend][door]
    let figures: Vec<Vec<Vec<Figures>>> = (0..concurrencies.len())
        .map(|c| {
            (0..backends.len())
                .map(|b| {
                    (0..Door::ALL.len())
                        .map(|d| median(&runs.iter().map(|r| r[c][b][d]).collect::<Vec<_>>()))
                        .collect()
                })
                .collect()
        })
        .collect();
    print_table(&concurrencies, &backends, &figures);
    mcp_closed_loop(
        &wrk_bin,
        stack.dir.path(),
        &mcp_loads,
        &concurrencies,
        seconds,
    );
    drop(proxy);

    // What tracing and the traffic cost, measured in the same run.
    if sections.tracing {
        traced(&wrk_bin, &backends[0], seconds, &concurrencies, &figures).await;
    }
    observe_cost(&answers[0]);
}

/// Which parts of the bench run (`BENCH_SECTIONS`, a comma list of
/// `fixed`, `wrk`, `tokens`, `tracing`; all by default; `BENCH_TRACING=0`
/// drops `tracing`; `report` alone writes the published report, see
/// `gateway/report.rs`).
struct Sections {
    report: bool,
    fixed: bool,
    wrk: bool,
    tokens: bool,
    tracing: bool,
}

impl Sections {
    fn from_env() -> Self {
        let asked =
            std::env::var("BENCH_SECTIONS").unwrap_or_else(|_| "fixed,wrk,tokens,tracing".into());
        let has = |s: &str| asked.split(',').any(|a| a.trim() == s);
        Self {
            report: has("report"),
            fixed: has("fixed"),
            wrk: has("wrk"),
            tokens: has("tokens"),
            tracing: has("tracing")
                && !std::env::var("BENCH_TRACING").is_ok_and(|v| v.trim() == "0"),
        }
    }
}

/// Waits (up to a minute) until the machine's CPUs are at least 85 % idle
/// over a second, and prints how long that took.
fn wait_idle() {
    let busy_idle = || -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let cpu: Vec<u64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|v| v.parse().ok())
            .collect();
        let idle = cpu.get(3)? + cpu.get(4).copied().unwrap_or(0);
        Some((cpu.iter().sum::<u64>(), idle))
    };
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        let Some((t0, i0)) = busy_idle() else { return };
        std::thread::sleep(Duration::from_secs(1));
        let Some((t1, i1)) = busy_idle() else { return };
        let idle = (i1 - i0) as f64 / ((t1 - t0).max(1)) as f64;
        if idle >= 0.85 {
            println!(
                "(machine idle after {:.0} s of waiting)",
                started.elapsed().as_secs_f64()
            );
            return;
        }
    }
    println!("(machine still busy after 60 s of waiting: figures below are noisy)");
}

/// `oha`: `BENCH_OHA`, on `PATH`, or where `cargo install` put it.
fn oha() -> Option<PathBuf> {
    wrk::find("oha", "BENCH_OHA").or_else(|| {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
        Some(home.join("bin/oha")).filter(|p| p.is_file())
    })
}

/// The fixed rates (`BENCH_RATES`, a comma list; default 1000,2000,3000).
fn rates() -> Vec<u32> {
    std::env::var("BENCH_RATES")
        .unwrap_or_else(|_| "1000,2000,3000".into())
        .split(',')
        .filter_map(|r| r.trim().parse().ok())
        .collect()
}

/// How long the backends get to finish what an overloaded run left
/// queued (longer than the capabilities' deadlines).
const DRAIN: Duration = Duration::from_secs(6);

/// agentgateway's method: each door at fixed rates (`BENCH_RATES`,
/// default 1000,2000,3000 requests/s, `BENCH_FIXED_SECONDS` each, default
/// 5, after a 2 s warm-up), p50/p99/p99.9 and what a door adds to
/// direct's p99; then each door's saturation (the highest rate with p99
/// under 50 ms) as a ratio of direct's. `groups` are the row groups
/// (a backend's doors, direct first), in the order they run; the first
/// is the one the targets are read on.
fn fixed_rate(groups: &[Vec<&Load>]) {
    let Some(oha) = oha() else {
        println!("fixed rate: skipped (no `oha`: scripts/bench-gateway installs it)");
        return;
    };
    let seconds = env_count("BENCH_FIXED_SECONDS", 5) as u64;
    let rates = rates();
    let bound = Duration::from_millis(50);
    println!();
    println!(
        "fixed rate: oha --qps with latency correction, {} connections, {seconds} s per run after a 2 s warm-up",
        64
    );
    println!(
        "{:<22} | {:>7} | {:>9} {:>8} {:>8} {:>9} | {:>13}",
        "backend / door", "rate/s", "achieved", "p50 ms", "p99 ms", "p99.9 ms", "p99 over dir."
    );
    // p99 over direct of each door of the first group, per rate.
    let mut first_added: Vec<(String, u32, f64)> = Vec::new();
    // A run over a backend's capacity leaves calls queued behind it (in
    // the hub, until their deadline), which must not load the runs after
    // it: an unsustained run is followed by a pause.
    for (g, group) in groups.iter().enumerate() {
        wait_idle();
        for &rate in &rates {
            let mut direct_p99 = None;
            for l in group {
                fixed::run(&oha, l, &run_id(), rate, 2);
                let r = fixed::run(&oha, l, &run_id(), rate, seconds);
                if !fixed::sustained(&r, bound) {
                    std::thread::sleep(DRAIN);
                }
                let over = match direct_p99 {
                    None => {
                        direct_p99 = Some(r.p99);
                        String::from("-")
                    }
                    Some(d) => {
                        let added = ms(r.p99) - ms(d);
                        if g == 0 {
                            first_added.push((l.name.clone(), rate, added));
                        }
                        format!("{added:+.2} ms")
                    }
                };
                println!(
                    "{:<22} | {:>7} | {:>9.0} {:>8.2} {:>8.2} {:>9.2} | {:>13}",
                    l.name,
                    rate,
                    r.achieved,
                    ms(r.p50),
                    ms(r.p99),
                    ms(r.p999),
                    over
                );
            }
        }
    }
    if std::env::var("BENCH_SATURATION").is_ok_and(|v| v.trim() == "0") {
        return;
    }
    let sat_seconds = env_count("BENCH_SATURATION_SECONDS", 4) as u64;
    println!();
    println!(
        "saturation: the highest rate with p99 <= {} ms and >= 95 % of the rate achieved ({sat_seconds} s runs; a rate that fails is tried once more)",
        bound.as_millis()
    );
    let mut first_ratio: Vec<(String, f64)> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let mut direct = None;
        for l in group {
            let sat = fixed::saturation(&oha, l, &mut run_id, 1000, bound, sat_seconds, DRAIN);
            let ratio = match direct {
                None => {
                    direct = Some(sat);
                    String::new()
                }
                Some(d) if d > 0 => {
                    let r = f64::from(sat) / f64::from(d);
                    if g == 0 {
                        first_ratio.push((l.name.clone(), r));
                    }
                    format!(" ({r:.2}x direct)")
                }
                Some(_) => String::new(),
            };
            println!("  {:<22} {:>7} req/s{ratio}", l.name, sat);
        }
    }
    // agentgateway's own figures (no auth, no logging), which the issue
    // sets as the hub's targets with the whole pipeline on.
    let verdict = |ok: bool| if ok { "met" } else { "NOT met" };
    println!();
    println!("targets (p99 over direct <= +0.30 ms at every rate; saturation >= 0.33x direct):");
    for (name, rate, added) in &first_added {
        println!(
            "  {name:<22} at {rate:>5}/s adds {added:+.2} ms p99: {}",
            verdict(*added <= 0.3)
        );
    }
    for (name, ratio) in &first_ratio {
        println!(
            "  {name:<22} saturation {ratio:.2}x direct: {}",
            verdict(*ratio >= 0.33)
        );
    }
}

/// The MCP rows closed-loop: each door at each concurrency, and the
/// hub's throughput as a share of the data plane's.
fn mcp_closed_loop(
    wrk_bin: &std::path::Path,
    dir: &std::path::Path,
    loads: &[Load],
    concurrencies: &[usize],
    seconds: u64,
) {
    println!();
    for &c in concurrencies {
        let figures: Vec<Figures> = loads
            .iter()
            .map(|l| {
                wrk::run(wrk_bin, dir, l, &run_id(), c, 2);
                wrk::run(wrk_bin, dir, l, &run_id(), c, seconds)
            })
            .collect();
        for (l, f) in loads.iter().zip(&figures) {
            println!(
                "{:<22} | c={c:<3} | {:>8.2} {:>8.2} {:>8.0}",
                l.name,
                ms(f.p50),
                ms(f.p99),
                f.rps
            );
        }
        if let [direct, hub] = figures.as_slice() {
            println!(
                "mcp: req/s hub/direct at c={c}: {:.2}x; hub adds p50 {:+.2} ms",
                hub.rps / direct.rps,
                ms(hub.p50) - ms(direct.p50)
            );
        }
    }
}

/// A row's label and how it reads a door's figures.
type Cell<'a> = Box<dyn Fn(&[Figures]) -> String + 'a>;

fn print_table(concurrencies: &[usize], backends: &[Backend], figures: &[Vec<Vec<Figures>>]) {
    let label = 22;
    let mut line = format!("{:<label$}", "");
    for &c in concurrencies {
        line += &format!(" | {:^26}", format!("concurrency {c}"));
    }
    println!("{}", line.trim_end());
    let mut line = format!("{:<label$}", "backend / door");
    for _ in concurrencies {
        line += &format!(" | {:>8} {:>8} {:>8}", "p50 ms", "p99 ms", "req/s");
    }
    println!("{line}");
    for (b, backend) in backends.iter().enumerate() {
        for (d, door) in Door::ALL.iter().enumerate() {
            let mut line = format!("{:<label$}", format!("{} {}", backend.name, door.name()));
            for row in figures {
                let f = &row[b][d];
                line += &format!(" | {:>8.2} {:>8.2} {:>8.0}", ms(f.p50), ms(f.p99), f.rps);
            }
            println!("{line}");
        }
    }
    println!();
    let added = |f: &[Figures], d: Door| ms(f[d as usize].p50) - ms(f[Door::Direct as usize].p50);
    let rel = |f: &[Figures], d: Door| f[d as usize].rps / f[Door::Direct as usize].rps;
    for (b, backend) in backends.iter().enumerate() {
        let name = backend.name;
        let rows: [(String, Cell<'_>); 6] = [
            (
                format!("{name}: hub A2A adds p50"),
                Box::new(|f| format!("{:+.2} ms", added(f, Door::HubA2a))),
            ),
            (
                format!("{name}: /gateway/v1 adds p50"),
                Box::new(|f| format!("{:+.2} ms", added(f, Door::Gateway))),
            ),
            (
                format!("{name}: nginx adds p50"),
                Box::new(|f| format!("{:+.2} ms", added(f, Door::Nginx))),
            ),
            (
                format!("{name}: hub/nginx added"),
                Box::new(|f| {
                    let n = added(f, Door::Nginx);
                    if n > 0.0 {
                        format!("{:.2}x", added(f, Door::HubA2a) / n)
                    } else {
                        "n/a (nginx adds <= 0)".to_string()
                    }
                }),
            ),
            (
                format!("{name}: req/s hub A2A/direct"),
                Box::new(|f| format!("{:.2}x", rel(f, Door::HubA2a))),
            ),
            (
                format!("{name}: req/s nginx/direct"),
                Box::new(|f| format!("{:.2}x", rel(f, Door::Nginx))),
            ),
        ];
        for (label_text, value) in rows {
            let mut line = format!("{label_text:<30}");
            for row in figures {
                line += &format!(" | {:>22}", value(&row[b]));
            }
            println!("{line}");
        }
    }
}

/// The hub A2A door of `backend` again, against a second stack whose hub
/// and peer export every span over OTLP/HTTP (to a sink in this process
/// that answers 200), beside the untraced figures above. `BENCH_TRACING=0`
/// skips it.
async fn traced(
    wrk_bin: &std::path::Path,
    backend: &Backend,
    seconds: u64,
    concurrencies: &[usize],
    figures: &[Vec<Vec<Figures>>],
) {
    let sink = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("sink");
    let sink_url = format!("http://{}", sink.local_addr().expect("addr"));
    let spans = std::sync::Arc::new(AtomicU64::new(0));
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
        vec![PeerSpec::stock(backend.provider)],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", sink_url.as_str())],
    )
    .await;
    let target = load(&stack, backend, Door::HubA2a);
    println!();
    println!(
        "tracing: {} hub A2A with OTLP export on (a second stack) vs off (above)",
        backend.name
    );
    for (i, &c) in concurrencies.iter().enumerate() {
        wrk::run(wrk_bin, stack.dir.path(), &target, &run_id(), c, 2);
        let on = wrk::run(wrk_bin, stack.dir.path(), &target, &run_id(), c, seconds);
        let off = &figures[i][0][Door::HubA2a as usize];
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
/// bench's calls get: counting it, and redacting it for the inspector
/// when the edge's sampling keeps it (a busy edge: a sample), then the
/// redaction alone, as a quiet edge pays it on every call. Loops, no
/// network: nanoseconds per call.
fn observe_cost(answer: &Value) {
    use hub::traffic::{Exchange, Payload, Traffic};
    let text =
        std::fs::read_to_string(common::repo().join("config/topology.yaml")).expect("topology");
    for sys in ["VENDORCORP", "BUYERCORP", "HELPDESK"] {
        std::env::set_var(format!("WS_TOKEN_{sys}"), "bench");
    }
    let loaded = hub::registry::load::load_str("topology.yaml", &text).expect("valid");
    let contract = loaded.contracts.get("orders.query").expect("contract");
    let traffic = Traffic::new();
    let envelope = exchange::envelope::Envelope::new_root();
    // The forward checked the answer already: the inspector only applies
    // the whitelist.
    let redacted = || {
        hub::redaction::view::inspector_payload(hub::redaction::redact_valid(
            &contract,
            answer,
            "vendorcorp",
        ))
    };
    let n = 20_000u32;
    let started = Instant::now();
    for _ in 0..n {
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
            },
            || Payload {
                response: Some(redacted()),
                ..Payload::default()
            },
        );
    }
    let per = started.elapsed() / n;
    let started = Instant::now();
    for _ in 0..n {
        std::hint::black_box(redacted());
    }
    let redact = started.elapsed() / n;
    println!();
    println!(
        "metrics + inspector per call on a busy edge (count every call, redact and keep a sample): {:.1} µs; redacting one answer: {:.1} µs",
        per.as_secs_f64() * 1e6,
        redact.as_secs_f64() * 1e6
    );
}
