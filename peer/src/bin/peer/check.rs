//! `peer check`: validates a config file, prints a one-line summary and
//! exits (its problems, one line each, are `main`'s to print).

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct CheckArgs {
    #[arg(long)]
    pub config: PathBuf,
}

/// Runs `peer check`.
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let CheckArgs { config } = args;
    let c = crate::load(&config)?;
    println!(
        "{}: ok ({} {}, provides {})",
        config.display(),
        c.system,
        c.listen,
        c.skills
            .iter()
            .map(|s| s.capability.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(ExitCode::SUCCESS)
}
