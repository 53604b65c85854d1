//! `peer serve`: the peer itself (its agent card, `/health` and the A2A
//! endpoint), with the test-only faults its flags turn on.

use clap::Args;
use peer::Token;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ServeArgs {
    /// The peer's YAML file.
    #[arg(long)]
    pub config: PathBuf,
    /// Listen address, overriding the file's `listen`.
    #[arg(long, env = "PEER_LISTEN")]
    listen: Option<String>,
    /// SQLite file, overriding the file's `database`.
    #[arg(long, env = "PEER_DATABASE")]
    database: Option<PathBuf>,
    /// Test-only: sleep this long before every answer (overrides
    /// `faults.stall_ms`).
    #[arg(long)]
    fault_stall_ms: Option<u64>,
    /// Test-only: answer with results that break the contract.
    #[arg(long)]
    fault_break_schema: bool,
    /// Test-only: answer every call with an A2A internal error.
    #[arg(long)]
    fault_fail: bool,
}

/// Runs `peer serve`; returns when the server stops.
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let ServeArgs {
        config,
        listen,
        database,
        fault_stall_ms,
        fault_break_schema,
        fault_fail,
    } = args;
    let mut config = crate::load(&config)?;
    if let Some(ms) = fault_stall_ms {
        config.faults.stall_ms = ms;
    }
    config.faults.break_schema |= fault_break_schema;
    config.faults.fail |= fault_fail;
    if config.faults != Default::default() {
        tracing::warn!(faults = ?config.faults, "fault injection is ON (test only)");
    }
    let token = Token::from_env(&config.token_env)?;
    let database = database.unwrap_or_else(|| config.database.clone());
    peer::server::serve(config, token, listen, &database).await?;
    Ok(ExitCode::SUCCESS)
}
