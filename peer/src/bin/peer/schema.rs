//! `peer schema`: prints the peer file's JSON Schema, generated from the
//! types the peer reads it into (published as
//! `peer::config::SCHEMA_PUBLISHED`).

use std::process::ExitCode;

/// Runs `peer schema`.
pub fn run() -> anyhow::Result<ExitCode> {
    let schema = peer::config::PeerConfig::schema();
    println!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(ExitCode::SUCCESS)
}
