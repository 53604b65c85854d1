//! The gateway benchmark's load generator: Debian's `wrk`, a process of its
//! own, driven by a Lua script this file writes (NOTES.md, "The hub's hot
//! path"; DESIGN.md §4, the gateway measured against direct calls).
//!
//! Every request carries a fresh id (`<run>-<thread>-<n>`): in the A2A
//! body as `messageId` and JSON-RPC `id`, or as `X-Request-Id` for the
//! plain `/gateway/v1` binding, because the hub's surface uses it as the
//! request id and a consult's idempotency key. Every answer is checked in
//! the script (HTTP 200, the target's marker in the body, no `"error"`),
//! and a run with one bad answer or socket error aborts the bench: a
//! benchmark of errors is worthless.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What one run measured.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub p50: Duration,
    pub p99: Duration,
    pub rps: f64,
}

/// One thing to load: where, with which headers, which body.
#[derive(Clone)]
pub struct Load {
    /// Shown in the table and in errors.
    pub name: String,
    pub url: String,
    /// Sent on every request (`Content-Type` is always JSON).
    pub headers: Vec<(String, String)>,
    /// The body, with [`ID`] where each request's own id goes.
    pub body: String,
    /// `Some(name)`: the id also goes in this header.
    pub id_header: Option<&'static str>,
    /// A string every good answer contains.
    pub marker: &'static str,
}

/// Where a request's own id goes in [`Load::body`].
pub const ID: &str = "@ID@";

/// The `wrk` binary: `BENCH_WRK`, else on `PATH`.
pub fn find(name: &str, var: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A Lua long string holding `s` (no escaping needed).
fn lua_string(s: &str) -> String {
    let mut level = 0;
    while s.contains(&format!("]{}]", "=".repeat(level))) {
        level += 1;
    }
    let eq = "=".repeat(level);
    format!("[{eq}[{s}]{eq}]")
}

/// The script for `load`.
fn script(load: &Load) -> String {
    let parts: Vec<String> = load.body.split(ID).map(lua_string).collect();
    let mut headers = vec![format!(
        "[ {} ] = {}",
        lua_string("Content-Type"),
        lua_string("application/json")
    )];
    headers.extend(
        load.headers
            .iter()
            .map(|(k, v)| format!("[ {} ] = {}", lua_string(k), lua_string(v))),
    );
    let id_header = load.id_header.map_or("nil".to_string(), lua_string);
    format!(
        r#"-- Written by hub/benches/gateway/wrk.rs for one run.
local threads = {{}}
local count = 0
function setup(thread)
  count = count + 1
  thread:set("tid", count)
  table.insert(threads, thread)
end
local parts = {{ {parts} }}
local headers = {{ {headers} }}
local id_header = {id_header}
local marker = {marker}
function init(args)
  run = args[1]
  n = 0
  bad = 0
  first_bad = ""
end
function request()
  n = n + 1
  local id = run .. "-" .. tid .. "-" .. n
  if id_header then headers[id_header] = id end
  return wrk.format("POST", nil, headers, table.concat(parts, id))
end
function response(status, hdrs, body)
  if status ~= 200 or not string.find(body, marker, 1, true) or string.find(body, '"error"', 1, true) then
    bad = bad + 1
    if first_bad == "" then first_bad = status .. " " .. string.sub(body, 1, 400) end
  end
end
function done(summary, latency, requests)
  local b, fb = 0, ""
  for _, t in ipairs(threads) do
    b = b + t:get("bad")
    if fb == "" then fb = t:get("first_bad") end
  end
  local e = summary.errors
  io.write(string.format("WRK %d %d %d %d %d %d %d %d %d %d\n",
    latency:percentile(50), latency:percentile(99), summary.requests, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout, b))
  if fb ~= "" then io.write("WRKBAD " .. fb .. "\n") end
end
"#,
        parts = parts.join(", "),
        headers = headers.join(", "),
        marker = lua_string(load.marker),
    )
}

/// Runs `wrk` against `load` for `seconds` at `concurrency` (two
/// threads), `run` naming this run's ids. Panics on any bad answer.
pub fn run(
    wrk: &Path,
    dir: &Path,
    load: &Load,
    run: &str,
    concurrency: usize,
    seconds: u64,
) -> Figures {
    let path = dir.join(format!("{run}.lua"));
    std::fs::write(&path, script(load)).expect("write the wrk script");
    let threads = concurrency.clamp(1, 2);
    let out = Command::new(wrk)
        .arg(format!("-t{threads}"))
        .arg(format!("-c{concurrency}"))
        .arg(format!("-d{seconds}s"))
        .args(["--timeout", "5s", "-s"])
        .arg(&path)
        .arg(&load.url)
        .arg("--")
        .arg(run)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", wrk.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let fail = |why: &str| -> ! {
        panic!(
            "{} at concurrency {concurrency}: {why}\nwrk stdout:\n{stdout}\nwrk stderr:\n{}",
            load.name,
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let Some(line) = stdout.lines().find_map(|l| l.strip_prefix("WRK ")) else {
        fail("wrk printed no figures")
    };
    let n: Vec<u64> = line
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(u64::MAX))
        .collect();
    let [p50, p99, requests, duration, connect, read, write, status, timeout, bad] = n[..] else {
        fail("unreadable figures")
    };
    if connect + read + write + status + timeout + bad > 0 || requests == 0 {
        fail(&format!(
            "{requests} requests, errors: connect {connect}, read {read}, write {write}, \
             status {status}, timeout {timeout}, bad answers {bad}"
        ));
    }
    Figures {
        p50: Duration::from_micros(p50),
        p99: Duration::from_micros(p99),
        rps: requests as f64 / (duration as f64 / 1e6),
    }
}
