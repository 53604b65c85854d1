//! `peer negotiate`: a data contract negotiated with a provider through
//! the hub, this peer as the consumer.
//!
//! Exit codes: 0 a contract granted (printed), 1 a local error, 2 the
//! negotiation failed, 3 one side rejected it (no contract); the
//! transcript goes to stderr whenever the negotiation ran.

use anyhow::bail;
use clap::Args;
use exchange::envelope::TraceParent;
use exchange::negotiator::{NegotiationError, Outcome, Want};
use peer::client::HubCall;
use peer::hub_credentials::HubCredentials;
use peer::open_store;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct NegotiateArgs {
    #[arg(long)]
    pub config: PathBuf,
    /// The providing system's id.
    #[arg(long)]
    provider: String,
    /// The provider's negotiation capability (`orders.negotiate`).
    #[arg(long)]
    capability: String,
    /// The columns the question needs, comma-separated.
    #[arg(long, value_delimiter = ',')]
    columns: Vec<String>,
    /// Of those, the ones it cannot do without (default: all of them).
    #[arg(long, value_delimiter = ',')]
    require: Vec<String>,
    /// The purpose of record.
    #[arg(long)]
    purpose: String,
    /// How long the data is kept.
    #[arg(long, default_value_t = 30)]
    retention_days: u64,
    /// The negotiation's A2A contextId; a new one if absent.
    #[arg(long)]
    context_id: Option<String>,
    /// Give up on each message after this long.
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u64,
    #[arg(long, env = "PEER_HUB_URL")]
    hub_url: Option<String>,
    #[arg(long, env = "PEER_DATABASE")]
    database: Option<PathBuf>,
}

/// Runs `peer negotiate`: prints the grant, and the transcript to stderr.
pub async fn run(args: NegotiateArgs) -> anyhow::Result<ExitCode> {
    let NegotiateArgs {
        config,
        provider,
        capability,
        columns,
        require,
        purpose,
        retention_days,
        context_id,
        timeout_ms,
        hub_url,
        database,
    } = args;
    let config = crate::load(&config)?;
    let credentials = HubCredentials::from_config(&config)?;
    let http = credentials.http_client()?;
    for (flag, id) in [("--provider", &provider), ("--capability", &capability)] {
        if !exchange::id::is_valid(id) {
            bail!("{flag} `{id}` is not an id");
        }
    }
    if columns.is_empty() || purpose.trim().is_empty() {
        bail!("--columns and --purpose are required: what the question needs, and why");
    }
    if let Some(c) = require.iter().find(|c| !columns.contains(c)) {
        bail!("--require `{c}` is not one of --columns");
    }
    let database = database.unwrap_or_else(|| config.database.clone());
    let (_pool, trail, inbox) = open_store(&config, &database).await?;
    credentials.bearer.token().await?;
    let base = HubCall {
        hub_url: hub_url.unwrap_or_else(|| config.hub_url.clone()),
        bearer: credentials.bearer.clone(),
        caller: config.system.clone(),
        provider,
        capability,
        input: serde_json::Value::Null,
        request_id: String::new(),
        traceparent: TraceParent::new_root(),
        timeout: Duration::from_millis(timeout_ms),
        context_id,
    };
    let want = Want {
        required: if require.is_empty() {
            columns.clone()
        } else {
            require
        },
        columns,
        purpose,
        retention_days,
    };
    let outcome = peer::negotiation::run(&http, &base, &want, &trail, &inbox).await?;
    let (transcript, code) = match &outcome {
        Ok(Outcome::Granted { grant, transcript }) => {
            println!("{}", serde_json::to_string_pretty(grant)?);
            (transcript, ExitCode::SUCCESS)
        }
        Ok(Outcome::Rejected {
            by,
            rationale,
            transcript,
        }) => {
            eprintln!(
                "peer: no contract: rejected by the {}: {rationale}",
                by.as_str()
            );
            (transcript, ExitCode::from(3))
        }
        Err(e) => {
            eprintln!("peer: negotiation failed: {e}");
            let t = match e {
                NegotiationError::Protocol { transcript, .. }
                | NegotiationError::Failed { transcript, .. } => transcript,
            };
            (t, ExitCode::from(2))
        }
    };
    for line in peer::negotiation::transcript_lines(transcript) {
        eprintln!("{line}");
    }
    Ok(code)
}
