//! The bounded CI run of every fuzz target: each runs its
//! committed corpus, then `WS_FUZZ_SECONDS` seconds (default 5) of
//! generated input, and must not crash. One test per target, so they run
//! in parallel and a failure names its target and the crash files.

use std::time::Duration;

fn budget() -> Duration {
    let seconds = std::env::var("WS_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(5.0);
    Duration::from_secs_f64(seconds)
}

fn fuzz(name: &str) {
    let target = fuzz::target(name).expect("a target of that name");
    let report = fuzz::run(target, &fuzz::Options::new(budget()));
    println!(
        "{name}: {} corpus files, {} executions, {} outcomes, {:.1} s",
        report.corpus_files,
        report.executions,
        report.outcomes.len(),
        report.seconds
    );
    assert!(report.corpus_files > 0, "{name} has no committed corpus");
    // The budget was spent on generated inputs, not only on the corpus.
    if !budget().is_zero() {
        assert!(
            report.executions > 10 * report.corpus_files as u64,
            "{name}: only {} executions for {} corpus files",
            report.executions,
            report.corpus_files
        );
    }
    // Both the accepted and the refused side of the parser were reached.
    assert!(
        report.outcomes.len() >= 2,
        "{name}: one outcome only: {:?}",
        report.outcomes
    );
    let crashes: Vec<String> = report
        .crashes
        .iter()
        .map(|(file, why)| format!("{}: {why}", file.display()))
        .collect();
    assert!(
        crashes.is_empty(),
        "{name}: {} crashes\n{}",
        crashes.len(),
        crashes.join("\n")
    );
}

#[test]
fn envelope() {
    fuzz("envelope");
}

#[test]
fn jsonrpc() {
    fuzz("jsonrpc");
}

#[test]
fn bridge() {
    fuzz("bridge");
}

#[test]
fn topology() {
    fuzz("topology");
}

#[test]
fn agents_config() {
    fuzz("agents_config");
}

#[test]
fn contract_path() {
    fuzz("contract_path");
}

#[test]
fn mcp_args() {
    fuzz("mcp_args");
}

#[test]
fn forwarded() {
    fuzz("forwarded");
}

#[test]
fn access() {
    fuzz("access");
}

#[test]
fn egress_address() {
    fuzz("egress_address");
}

#[test]
fn every_target_has_a_test() {
    let names: Vec<&str> = fuzz::targets::ALL.iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "envelope",
            "jsonrpc",
            "bridge",
            "topology",
            "agents_config",
            "contract_path",
            "mcp_args",
            "forwarded",
            "access",
            "egress_address"
        ]
    );
}
