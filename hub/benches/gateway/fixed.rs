//! The gateway benchmark measured the way agentgateway measures itself: a
//! **fixed request rate** (not a fixed number of connections), latency
//! percentiles at that rate, and **saturation**, the highest rate a door
//! sustains with p99 under a bound, as a ratio of direct's.
//!
//! The load generator is `oha` (crates.io) in its constant-rate mode
//! (`--qps`) with latency correction: a request is timed from when it was
//! due, not from when a busy connection got round to sending it, so a
//! stalled door cannot hide its queue (coordinated omission). [`run`]
//! aborts the bench on a run in which any answer is not HTTP 200 or any
//! request failed (a table of errors is worthless); [`run_raw`] counts
//! them instead, for the published report, which discloses them.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::wrk::{Load, ID};

/// What one fixed-rate run measured.
#[derive(Debug, Clone, Copy)]
pub struct Rated {
    /// The rate asked for.
    pub asked: u32,
    /// The rate achieved (answers per second).
    pub achieved: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub p999: Duration,
}

/// The connections `oha` keeps open: enough that a rate is never capped
/// by connections waiting on slow answers (64 × 1 / 10 ms = 6,400/s).
const CONNECTIONS: usize = 64;

/// One run of `load` at `rate` requests per second for `seconds`; a run
/// with any answer other than 200 or any failed request aborts the bench.
pub fn run(oha: &Path, load: &Load, id: &str, rate: u32, seconds: u64) -> Rated {
    let (rated, errors, summary) = run_raw(oha, load, id, rate, seconds);
    assert!(
        errors == 0,
        "{} at {rate}/s: answers other than 200 or failures: {}",
        load.name,
        summary
    );
    rated
}

/// One run, its errors counted instead of aborting: the figures, how many
/// answers were not 200 or failed, and `oha`'s summary with the status
/// codes and errors it saw.
pub fn run_raw(oha: &Path, load: &Load, id: &str, rate: u32, seconds: u64) -> (Rated, u64, Value) {
    let mut cmd = Command::new(oha);
    cmd.args([
        "--no-tui",
        "--output-format",
        "json",
        "--latency-correction",
        "-z",
        &format!("{seconds}s"),
        "-q",
        &rate.to_string(),
        "-c",
        &CONNECTIONS.to_string(),
        "-m",
        "POST",
        "-T",
        "application/json",
        "-d",
        &load.body.replace(ID, id),
    ]);
    for (k, v) in &load.headers {
        cmd.args(["-H", &format!("{k}: {v}")]);
    }
    if let Some(h) = load.id_header {
        cmd.args(["-H", &format!("{h}: {id}")]);
    }
    cmd.arg(&load.url);
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{}: oha did not run: {e}", load.name));
    let text = String::from_utf8_lossy(&out.stdout);
    let json: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{}: oha's output is not JSON ({e}): {text}\n{}",
            load.name,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let codes = json["statusCodeDistribution"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let count = |v: &Value| v.as_u64().unwrap_or(0);
    let bad: u64 = codes
        .iter()
        .filter(|(code, _)| code.as_str() != "200")
        .map(|(_, n)| count(n))
        .sum();
    let errors = json["errorDistribution"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    // A request cut off when the run's time is up is not a failure.
    let failed: u64 = errors
        .iter()
        .filter(|(e, _)| !e.contains("aborted due to deadline"))
        .map(|(_, n)| count(n))
        .sum();
    let secs = |v: &Value| Duration::from_secs_f64(v.as_f64().unwrap_or(f64::NAN).max(0.0));
    let p = &json["latencyPercentiles"];
    let rated = Rated {
        asked: rate,
        achieved: json["summary"]["requestsPerSec"].as_f64().unwrap_or(0.0),
        p50: secs(&p["p50"]),
        p99: secs(&p["p99"]),
        p999: secs(&p["p99.9"]),
    };
    let summary = serde_json::json!({
        "summary": json["summary"],
        "latencyPercentiles": json["latencyPercentiles"],
        "statusCodeDistribution": codes,
        "errorDistribution": errors,
    });
    (rated, bad + failed, summary)
}

/// Whether a run kept up: the rate achieved within 5 % of the rate asked,
/// with p99 under `bound`.
pub fn sustained(r: &Rated, bound: Duration) -> bool {
    r.achieved >= 0.95 * f64::from(r.asked) && r.p99 <= bound
}

/// The highest rate `load` sustains (see [`sustained`]): doubling from
/// `start` until a rate fails, then halving the gap between the last
/// rate that held and the first that failed, to within 5 %. A rate fails
/// only if it fails twice (one stall of a shared machine must not end the
/// search); after a run that failed, `drain` passes before the next (what
/// it left queued must not load the next).
pub fn saturation(
    oha: &Path,
    load: &Load,
    id: &mut dyn FnMut() -> String,
    start: u32,
    bound: Duration,
    seconds: u64,
    drain: Duration,
) -> u32 {
    let mut holds = |rate: u32| {
        (0..2).any(|_| {
            let (rated, errors, _) = run_raw(oha, load, &id(), rate, seconds);
            let ok = errors == 0 && sustained(&rated, bound);
            if !ok {
                std::thread::sleep(drain);
            }
            ok
        })
    };
    let mut held = 0u32;
    let mut rate = start.max(50);
    let mut failed = loop {
        if !holds(rate) {
            break rate;
        }
        held = rate;
        if rate >= 64_000 {
            return held;
        }
        rate = rate.saturating_mul(2);
    };
    while failed - held > (failed / 20).max(25) {
        let mid = held + (failed - held) / 2;
        if holds(mid) {
            held = mid;
        } else {
            failed = mid;
        }
    }
    held
}
