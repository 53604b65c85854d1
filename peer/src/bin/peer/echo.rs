//! `peer echo`: a trivial echo provider for benchmarks, with no config
//! file.

use anyhow::bail;
use clap::Args;
use peer::Token;
use std::process::ExitCode;

#[derive(Args)]
pub struct EchoArgs {
    /// Its system id (the identity `/health` reports).
    #[arg(long)]
    pub system: String,
    /// Listen address (IP:port).
    #[arg(long)]
    listen: String,
    /// The env var holding its bearer token.
    #[arg(long)]
    token_env: String,
}

/// Runs `peer echo`; returns when the server stops.
pub async fn run(args: EchoArgs) -> anyhow::Result<ExitCode> {
    let EchoArgs {
        system,
        listen,
        token_env,
    } = args;
    if !exchange::id::is_valid(&system) {
        bail!("--system `{system}` is not a system id");
    }
    let token = Token::from_env(&token_env)?;
    peer::echo::serve(peer::echo::Echo { system, token }, &listen).await?;
    Ok(ExitCode::SUCCESS)
}
