//! `peer schema`: prints the peer file's JSON Schema, generated from the
//! types the peer reads it into (published as
//! `peer::config::SCHEMA_PUBLISHED`).

use std::process::ExitCode;

/// Runs `peer schema`; with `markdown`, the reference page instead
/// (`peer::config::REFERENCE_PUBLISHED`).
pub fn run(markdown: bool) -> anyhow::Result<ExitCode> {
    if markdown {
        print!("{}", peer::config::PeerConfig::reference());
        return Ok(ExitCode::SUCCESS);
    }
    let schema = peer::config::PeerConfig::schema();
    println!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(ExitCode::SUCCESS)
}
