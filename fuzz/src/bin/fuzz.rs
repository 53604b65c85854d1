//! `cargo run --release -p fuzz -- [--seconds N] [--save] [TARGET...]`:
//! runs the fuzz targets (all of them, or those named) for N seconds each
//! after their corpus, and prints one table: target, corpus files,
//! executions, distinct outcomes, crashes, seconds. `--save` adds inputs
//! of a new outcome class to the target's corpus (at most
//! `fuzz::MAX_CORPUS_FILES` files, each at most `fuzz::MAX_SAVED_BYTES`).
//! Exits 1 if any target crashed, naming each crash file; 2 on bad usage.

use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let mut seconds = 10.0_f64;
    let mut save = false;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => match args.next().and_then(|s| s.parse::<f64>().ok()) {
                Some(s) if s >= 0.0 && s.is_finite() => seconds = s,
                _ => return usage("--seconds needs a number of seconds"),
            },
            "--save" => save = true,
            "-h" | "--help" => {
                println!("{}", help());
                return ExitCode::SUCCESS;
            }
            name if fuzz::target(name).is_some() => names.push(name.to_string()),
            other => return usage(&format!("unknown argument or target {other:?}")),
        }
    }
    let targets: Vec<&fuzz::Target> = if names.is_empty() {
        fuzz::targets::ALL.to_vec()
    } else {
        names.iter().filter_map(|n| fuzz::target(n)).collect()
    };
    let mut options = fuzz::Options::new(Duration::from_secs_f64(seconds));
    options.save = save;
    println!(
        "{:<14} {:>7} {:>11} {:>9} {:>8} {:>8}{}",
        "target",
        "corpus",
        "executions",
        "outcomes",
        "crashes",
        "seconds",
        if save { "   saved" } else { "" }
    );
    let mut crashes = Vec::new();
    for target in targets {
        let report = fuzz::run(target, &options);
        println!(
            "{:<14} {:>7} {:>11} {:>9} {:>8} {:>8.1}{}",
            report.target,
            report.corpus_files,
            report.executions,
            report.outcomes.len(),
            report.crashes.len(),
            report.seconds,
            if save {
                format!("{:>8}", report.saved)
            } else {
                String::new()
            }
        );
        crashes.extend(report.crashes.into_iter().map(|c| (report.target, c)));
    }
    if crashes.is_empty() {
        return ExitCode::SUCCESS;
    }
    for (target, (file, why)) in crashes.iter().take(20) {
        eprintln!("crash in {target}: {} — {why}", file.display());
    }
    ExitCode::FAILURE
}

fn help() -> String {
    let names: Vec<&str> = fuzz::targets::ALL.iter().map(|t| t.name).collect();
    format!(
        "usage: fuzz [--seconds N] [--save] [TARGET...]\ntargets: {}",
        names.join(" ")
    )
}

fn usage(why: &str) -> ExitCode {
    eprintln!("fuzz: {why}\n{}", help());
    ExitCode::from(2)
}
