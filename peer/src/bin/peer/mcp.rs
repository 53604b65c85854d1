//! `peer mcp`: the peer's MCP data plane, its own process over the same
//! store as `peer serve`.

use clap::Args;
use peer::Token;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct McpArgs {
    /// The peer's YAML file.
    #[arg(long)]
    pub config: PathBuf,
    /// Listen address, overriding the file's `mcp.listen`.
    #[arg(long, env = "PEER_MCP_LISTEN")]
    listen: Option<String>,
    /// SQLite file, overriding the file's `database` (the same file
    /// `serve` uses: the contracts live there).
    #[arg(long, env = "PEER_DATABASE")]
    database: Option<PathBuf>,
}

/// Runs `peer mcp`; returns when the data plane stops.
pub async fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    let McpArgs {
        config,
        listen,
        database,
    } = args;
    let config = crate::load(&config)?;
    let token = Token::from_env(&config.token_env)?;
    let database = database.unwrap_or_else(|| config.database.clone());
    peer::mcp::serve(config, token, listen, &database).await?;
    Ok(ExitCode::SUCCESS)
}
