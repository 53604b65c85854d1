//! The published benchmark (`BENCH_SECTIONS=report`, which
//! `scripts/bench-gateway --report` sets): agentgateway's method as far as
//! one 2-core machine allows, written to `docs/benchmarks.md` with its
//! charts (`docs/benchmarks/*.svg`, drawn here) and every run's raw
//! figures (`docs/benchmarks/raw.jsonl`), so anyone can rerun it and put a
//! gateway of their own in the same table.
//!
//! - **Pinned.** The gateway under test (the hub, or nginx for its row)
//!   runs on one core, the backends and the load generator on the other
//!   (`taskset`, every thread). Direct calls have no gateway: the backend
//!   and the load generator share their core as in every other row.
//! - **Fixed rates, then saturation.** Each door at each rate
//!   (`BENCH_RATES`) for `BENCH_FIXED_SECONDS` after a 2 s warm-up, with
//!   `oha`'s latency correction; saturation is the highest rate a door
//!   keeps with p99 under 50 ms and at least 95 % of the rate achieved.
//! - **Passes.** The fixed-rate table is measured `BENCH_PASSES` times
//!   (default 3), the doors of a group in a rotated order each pass, so no
//!   door always runs first or last; a figure is the mean of the passes'
//!   (p99 the mean of per-run p99s), with the spread shown.
//! - **Errors disclosed, not hidden.** A run with answers other than 200
//!   or failed requests is kept and counted in the table (agentgateway's
//!   reports do the same); the `gateway` bench's other sections abort on
//!   them instead.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::fixed;
use crate::wrk::Load;

/// One row of a group: which backend, which door, what to send.
pub struct Row<'a> {
    pub backend: &'static str,
    pub door: &'static str,
    pub load: &'a Load,
}

/// Where the processes run.
pub struct Pinning {
    /// The gateway under test's core.
    pub gateway: usize,
    /// The backends' and the load generator's core.
    pub others: usize,
    /// Whether `taskset` pinned every process it was asked to.
    pub applied: bool,
    /// The machine's cores (read before anything is pinned: a pinned
    /// process sees one).
    pub cores: usize,
}

impl Pinning {
    /// The last core for the gateway, the first for everything else; not
    /// applied on a machine with one core.
    pub fn plan() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self {
            gateway: cores.saturating_sub(1),
            others: 0,
            applied: cores > 1,
            cores,
        }
    }

    /// Pins this process (and so what it starts from now on) to the
    /// others' core.
    pub fn pin_self(&mut self) {
        if self.applied {
            self.applied = pin(std::process::id(), self.others);
        }
    }

    /// Pins `pid`, every thread of it and of its children, to the
    /// gateway's core.
    pub fn pin_gateway(&mut self, pid: u32) {
        if self.applied {
            self.applied = pin(pid, self.gateway);
        }
    }
}

/// `taskset -a -p -c cpu` on `pid` and on each of its children.
fn pin(pid: u32, cpu: usize) -> bool {
    let children = Command::new("pgrep")
        .args(["-P", &pid.to_string()])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    std::iter::once(pid.to_string())
        .chain(children.split_whitespace().map(str::to_string))
        .all(|p| {
            Command::new("taskset")
                .args(["-a", "-p", "-c", &cpu.to_string(), &p])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

/// What the report says about the run besides its figures.
pub struct Context {
    /// The hub binary measured.
    pub hub: PathBuf,
    pub pinning: Pinning,
    /// Where the report goes (`docs/` of the repository).
    pub out: PathBuf,
}

/// Measures `groups` (each a backend's rows, direct first), keeps every
/// run's figures in `benchmarks/raw.jsonl` and renders the report from
/// them. Returns the report's path.
pub fn run(
    oha: &Path,
    groups: &[Vec<Row<'_>>],
    rates: &[u32],
    seconds: u64,
    context: &Context,
) -> PathBuf {
    let passes = crate::env_count("BENCH_PASSES", 3);
    let sat_seconds = crate::env_count("BENCH_SATURATION_SECONDS", 4) as u64;
    let bound = Duration::from_millis(50);
    let dir = context.out.join("benchmarks");
    std::fs::create_dir_all(&dir).expect("docs/benchmarks");
    let out = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let p = &context.pinning;
    let mut raw = String::new();
    let mut keep = |line: Value| {
        raw.push_str(&line.to_string());
        raw.push('\n');
    };
    keep(json!({"run": {
        "date": out("date", &["-u", "+%Y-%m-%d %H:%M"]),
        "commit": out("git", &["rev-parse", "--short", "HEAD"]),
        "hub": context.hub.display().to_string(),
        "cores": p.cores,
        "cpu": cpu,
        "pinned": p.applied, "gateway_core": p.gateway, "others_core": p.others,
        "passes": passes, "rates": rates, "seconds": seconds, "saturation_seconds": sat_seconds,
        "p99_bound_ms": bound.as_millis(),
    }}));
    for pass in 0..passes {
        for group in groups {
            crate::wait_idle();
            for &rate in rates {
                for k in 0..group.len() {
                    let row = &group[(k + pass) % group.len()];
                    fixed::run_raw(oha, row.load, &crate::run_id(), rate, 2);
                    let (rated, errors, summary) =
                        fixed::run_raw(oha, row.load, &crate::run_id(), rate, seconds);
                    if !fixed::sustained(&rated, bound) || errors > 0 {
                        std::thread::sleep(crate::DRAIN);
                    }
                    keep(json!({
                        "pass": pass + 1, "backend": row.backend, "door": row.door,
                        "rate": rate, "seconds": seconds, "achieved": rated.achieved,
                        "p50_ms": crate::ms(rated.p50), "p99_ms": crate::ms(rated.p99),
                        "p999_ms": crate::ms(rated.p999), "errors": errors, "oha": summary,
                    }));
                    println!(
                        "  pass {} {:<8} {:<14} {:>5}/s: p50 {:>6.2} p99 {:>6.2} ms, {:>6.0}/s, {} errors",
                        pass + 1,
                        row.backend,
                        row.door,
                        rate,
                        crate::ms(rated.p50),
                        crate::ms(rated.p99),
                        rated.achieved,
                        errors
                    );
                }
            }
        }
    }
    // Saturation once per door (a search is a dozen runs), in the groups'
    // order: the order the report's rows take.
    for group in groups {
        crate::wait_idle();
        for row in group {
            let s = fixed::saturation(
                oha,
                row.load,
                &mut crate::run_id,
                1000,
                bound,
                sat_seconds,
                crate::DRAIN,
            );
            println!("  saturation {:<8} {:<14} {s:>6}/s", row.backend, row.door);
            keep(json!({"backend": row.backend, "door": row.door, "saturation": s}));
        }
    }
    std::fs::write(dir.join("raw.jsonl"), &raw).expect("raw.jsonl");
    render(&context.out, &raw)
}

/// One door's runs at one rate.
#[derive(Default)]
struct Runs {
    p50: Vec<f64>,
    p99: Vec<f64>,
    p999: Vec<f64>,
    achieved: Vec<f64>,
    errors: u64,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn spread(v: &[f64]) -> (f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// A door of the report: its backend, its name, its saturation, its runs
/// by rate.
struct Door {
    backend: String,
    door: String,
    saturation: u32,
    runs: Vec<Runs>,
}

/// Writes `docs/benchmarks.md` and its charts from the raw results of one
/// sitting (`raw`: the lines of `raw.jsonl`), into `out`. The report is
/// always rendered from the raw file, so `BENCH_RENDER` can write it again
/// from kept results without measuring.
pub fn render(out: &Path, raw: &str) -> PathBuf {
    let lines: Vec<Value> = raw
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("raw.jsonl: a JSON object per line"))
        .collect();
    let run = lines
        .iter()
        .find_map(|l| l.get("run"))
        .cloned()
        .expect("raw.jsonl: the run's line");
    let rates: Vec<u64> = run["rates"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let passes = run["passes"].as_u64().unwrap_or(0);
    // The doors in report order: the saturation lines' order.
    let mut doors: Vec<Door> = lines
        .iter()
        .filter_map(|l| {
            Some(Door {
                backend: l.get("backend")?.as_str()?.to_string(),
                door: l.get("door")?.as_str()?.to_string(),
                saturation: u32::try_from(l.get("saturation")?.as_u64()?).ok()?,
                runs: rates.iter().map(|_| Runs::default()).collect(),
            })
        })
        .collect();
    for l in lines.iter().filter(|l| l.get("pass").is_some()) {
        let (Some(backend), Some(door), Some(rate)) = (
            l["backend"].as_str(),
            l["door"].as_str(),
            l["rate"].as_u64(),
        ) else {
            continue;
        };
        let Some(r) = rates.iter().position(|&x| x == rate) else {
            continue;
        };
        let Some(d) = doors
            .iter_mut()
            .find(|d| d.backend == backend && d.door == door)
        else {
            continue;
        };
        let m = &mut d.runs[r];
        let f = |k: &str| l[k].as_f64().unwrap_or(f64::NAN);
        m.p50.push(f("p50_ms"));
        m.p99.push(f("p99_ms"));
        m.p999.push(f("p999_ms"));
        m.achieved.push(f("achieved"));
        m.errors += l["errors"].as_u64().unwrap_or(0);
    }
    let mut backends: Vec<&str> = Vec::new();
    for d in &doors {
        if !backends.contains(&d.backend.as_str()) {
            backends.push(&d.backend);
        }
    }

    let mut md = String::new();
    header(&mut md, &run);
    let mut added_bars = Vec::new();
    let mut ratio_bars = Vec::new();
    // (backend, door) -> (p99 added at the first rate, saturation ratio)
    let mut first: Vec<(String, String, f64, Option<f64>)> = Vec::new();
    for backend in &backends {
        let group: Vec<&Door> = doors.iter().filter(|d| d.backend == *backend).collect();
        let _ = writeln!(md, "\n### {backend}\n");
        let _ = writeln!(
            md,
            "| door | rate/s | achieved/s | p50 ms | p99 ms (min–max) | p99.9 ms | p99 over direct | saturation/s | × direct | errors |"
        );
        let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let direct_sat = group.first().map_or(0, |d| d.saturation);
        for (r, rate) in rates.iter().enumerate() {
            let direct_p99 = group.first().map_or(f64::NAN, |d| mean(&d.runs[r].p99));
            for (i, d) in group.iter().enumerate() {
                let m = &d.runs[r];
                let p99 = mean(&m.p99);
                let (lo, hi) = spread(&m.p99);
                let added = p99 - direct_p99;
                let ratio =
                    (direct_sat > 0).then(|| f64::from(d.saturation) / f64::from(direct_sat));
                let _ = writeln!(
                    md,
                    "| {} | {rate} | {:.0} | {:.2} | {p99:.2} ({lo:.2}–{hi:.2}) | {:.2} | {} | {} | {} | {} |",
                    d.door,
                    mean(&m.achieved),
                    mean(&m.p50),
                    mean(&m.p999),
                    if i == 0 { "—".to_string() } else { format!("{added:+.2} ms") },
                    d.saturation,
                    match (i, ratio) {
                        (0, _) | (_, None) => "—".to_string(),
                        (_, Some(x)) => format!("{x:.2}×"),
                    },
                    m.errors
                );
                if r == 0 && i > 0 {
                    let label = format!("{backend} · {}", d.door);
                    added_bars.push((label.clone(), added));
                    if let Some(x) = ratio {
                        ratio_bars.push((label, x));
                    }
                    first.push((backend.to_string(), d.door.clone(), added, ratio));
                }
            }
        }
    }
    targets(&mut md, &first, rates.first().copied().unwrap_or(0));
    let dir = out.join("benchmarks");
    std::fs::create_dir_all(&dir).expect("docs/benchmarks");
    let first_rate = rates.first().copied().unwrap_or(0);
    std::fs::write(
        dir.join("p99-added.svg"),
        bars(
            &format!(
                "p99 added over direct at {first_rate} requests/s (ms, mean of {passes} passes)"
            ),
            &added_bars,
            None,
        ),
    )
    .expect("p99-added.svg");
    std::fs::write(
        dir.join("saturation.svg"),
        bars(
            "saturation as a share of direct's (p99 ≤ 50 ms)",
            &ratio_bars,
            Some((0.39, "agentgateway, plain forwarding: 0.39×")),
        ),
    )
    .expect("saturation.svg");
    let _ = writeln!(
        md,
        "\n![p99 added over direct](benchmarks/p99-added.svg)\n\n![saturation as a share of direct](benchmarks/saturation.svg)\n\n\
         Every run's figures, and `oha`'s summary of it, are in [`benchmarks/raw.jsonl`](benchmarks/raw.jsonl) \
         (one JSON object per line; the first says how the sitting ran). \
         `BENCH_RENDER=docs/benchmarks/raw.jsonl scripts/cargo-env cargo bench -p hub --bench gateway` writes this page again from them."
    );
    let path = out.join("benchmarks.md");
    std::fs::write(&path, md).expect("benchmarks.md");
    path
}

/// The hub's targets, read on the first rate: each met, or missed by how
/// much.
fn targets(md: &mut String, first: &[(String, String, f64, Option<f64>)], rate: u64) {
    let find = |b: &str, d: &str| first.iter().find(|(fb, fd, ..)| fb == b && fd == d);
    let mut lines = Vec::new();
    if let (Some(hub), Some(nginx)) = (find("echo", "hub A2A"), find("echo", "nginx")) {
        let (added, bound) = (hub.2, 2.0 * nginx.2.max(0.0));
        lines.push(format!(
            "- echo through the A2A surface adds {added:+.2} ms p99 at {rate}/s; twice what nginx adds is {bound:.2} ms: {}",
            if added <= bound { "met".to_string() } else { format!("missed by {:.2} ms", added - bound) }
        ));
        if let Some(r) = hub.3 {
            lines.push(format!(
                "- echo through the A2A surface keeps {r:.2}× of direct at saturation; the target is 0.39×: {}",
                if r >= 0.39 { "met".to_string() } else { format!("missed by {:.2}×", 0.39 - r) }
            ));
        }
    }
    for (b, d, target) in [("mcp", "hub MCP", 0.6), ("orders", "hub A2A", 0.8)] {
        if let Some(Some(r)) = find(b, d).map(|x| x.3) {
            lines.push(format!(
                "- {b} through the hub ({d}) keeps {r:.2}× of direct at saturation; the target is {target}×: {}",
                if r >= target { "met".to_string() } else { format!("missed by {:.2}×", target - r) }
            ));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(
            md,
            "\n### The hub's targets\n\n{}\n\nWhere the time of a call goes, and what is next, is in NOTES.md (\"Where the time goes: the profile\").",
            lines.join("\n")
        );
    }
}

/// The report's opening: what was measured, where, how (`run`: the raw
/// file's first line).
fn header(md: &mut String, run: &Value) {
    let text = |k: &str| run[k].as_str().unwrap_or("unknown").to_string();
    let num = |k: &str| run[k].as_u64().unwrap_or(0);
    let rates = run["rates"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let pinning = if run["pinned"].as_bool().unwrap_or(false) {
        format!(
            "the gateway under test (hub, nginx) on core {}, backends and the load generator on core {}",
            num("gateway_core"),
            num("others_core")
        )
    } else {
        "none (taskset unavailable or one core): every process shares the machine".to_string()
    };
    let _ = writeln!(
        md,
        "# The A2A gateway benchmark\n\n\
         What the Wall Street hub costs an A2A call, beside a direct call and nginx on the same machine, \
         measured the way agentgateway measures itself. Written by `scripts/bench-gateway --report` \
         (`hub/benches/gateway/report.rs`); rerun it to refresh every figure here.\n\n\
         - **Run:** {} UTC, commit `{}`, hub binary `{}`.\n\
         - **Machine:** {} cores ({}); shared and not isolated: figures move between sittings, \
         so compare rows of one report, not reports.\n\
         - **Pinning:** {pinning}.\n\
         - **Load:** `oha` at a fixed rate with latency correction (a request is timed from when it was due), \
         64 connections; {rates} requests/s, {} s per run after a 2 s warm-up, {} passes in rotated door order; \
         a figure is the mean of the passes (p99: the mean of per-run p99s, min–max beside it).\n\
         - **Saturation:** the highest rate with p99 ≤ {} ms and ≥ 95 % of the rate achieved ({} s runs; \
         a rate that fails is tried once more), found once per door.\n\
         - **Errors:** every answer other than HTTP 200 and every failed request is counted in the table.\n\n\
         ## The doors\n\n\
         - **direct**: A2A v1.0 JSON-RPC `SendMessage` straight to the backend with its token.\n\
         - **nginx**: the same request through Debian's nginx as a plain reverse proxy (the floor any proxy pays).\n\
         - **hub A2A**: the same `SendMessage` to the hub's surface `POST /a2a/{{provider}}` with the caller's token.\n\
         - **hub HTTP+JSON**: `POST /a2a/{{provider}}/rest/message:send`, the same pipeline.\n\
         - **/gateway/v1**: `POST /gateway/v1/{{provider}}/{{capability}}`, the plain binding.\n\
         - **MCP**: `tools/call query_records` (MCP 2026-07-28) straight to VendorCorp's data plane, and through the hub's MCP front.\n\n\
         Every hub door runs the whole pipeline: the auth chain, the rule, the input schema, the forward, the response \
         schema, the audit record committed to SQLite before the answer leaves, metrics and the inspector. \
         **echo** answers at once (the gateway's own cost); **orders** is VendorCorp's `orders.query` (an average by \
         region over its SQLite data). agentgateway's own published run (2 pinned cores, plain forwarding, no auth \
         and no audit) keeps 0.39× of direct at saturation and adds 0.3 ms p99 at 1,000/s; it did not measure A2A or MCP.\n\n\
         ## Results",
        text("date"),
        text("commit"),
        text("hub"),
        num("cores"),
        text("cpu"),
        num("seconds"),
        num("passes"),
        num("p99_bound_ms"),
        num("saturation_seconds"),
    );
}

/// A horizontal bar chart as SVG: one bar per `(label, value)`, an
/// optional reference line.
pub fn bars(title: &str, bars: &[(String, f64)], reference: Option<(f64, &str)>) -> String {
    let (left, width, bar, gap, top) = (230.0, 720.0, 22.0, 8.0, 48.0);
    let plot = width - left - 70.0;
    let height = top + bars.len() as f64 * (bar + gap) + 40.0;
    let max = bars
        .iter()
        .map(|(_, v)| v.abs())
        .chain(reference.map(|(r, _)| r))
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE)
        * 1.15;
    let x = |v: f64| left + v.max(0.0) / max * plot;
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        svg,
        r#"<text x="12" y="24" font-size="14" font-weight="bold">{}</text>"#,
        esc(title)
    );
    for (i, (label, value)) in bars.iter().enumerate() {
        let y = top + i as f64 * (bar + gap);
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y + bar * 0.7,
            esc(label)
        );
        let _ = writeln!(
            svg,
            r##"<rect x="{left}" y="{y:.1}" width="{:.1}" height="{bar}" fill="#3b6ea5"/>"##,
            (x(*value) - left).max(1.0)
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}">{value:.2}</text>"#,
            x(*value) + 6.0,
            y + bar * 0.7
        );
    }
    if let Some((r, label)) = reference {
        let bottom = top + bars.len() as f64 * (bar + gap);
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#c0392b" stroke-dasharray="4 3"/>"##,
            x(r),
            top - 6.0,
            bottom
        );
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" fill="#c0392b" text-anchor="middle">{}</text>"##,
            x(r),
            bottom + 16.0,
            esc(label)
        );
    }
    svg.push_str("</svg>\n");
    svg
}
