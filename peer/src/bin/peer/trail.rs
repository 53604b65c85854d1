//! `peer trail`: this peer's audit trail as JSON, one trace's records or
//! the latest ones.

use clap::Args;
use peer::open_store;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct TrailArgs {
    #[arg(long)]
    pub config: PathBuf,
    #[arg(long, env = "PEER_DATABASE")]
    database: Option<PathBuf>,
    #[arg(long)]
    trace_id: Option<String>,
    #[arg(long, default_value_t = 50)]
    limit: u32,
}

/// Runs `peer trail`.
pub async fn run(args: TrailArgs) -> anyhow::Result<ExitCode> {
    let TrailArgs {
        config,
        database,
        trace_id,
        limit,
    } = args;
    let config = crate::load(&config)?;
    let database = database.unwrap_or_else(|| config.database.clone());
    let (_pool, trail, _inbox) = open_store(&config, &database).await?;
    let records = match trace_id {
        Some(id) => trail.by_trace(&id).await?,
        None => trail.recent(limit).await?,
    };
    println!("{}", serde_json::to_string_pretty(&records)?);
    Ok(ExitCode::SUCCESS)
}
