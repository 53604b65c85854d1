//! `peer call`: one call of another peer's capability through the hub,
//! recorded in this peer's trail (and its inbox, for proposed actions).
//!
//! Exit codes: 0 the call connected, 1 a local error (bad config, missing
//! token, bad arguments), 2 the call ended `not_connected`.

use anyhow::{bail, Context};
use clap::Args;
use exchange::envelope::TraceParent;
use exchange::reason::CallResult;
use peer::client::{self, HubCall};
use peer::hub_credentials::HubCredentials;
use peer::open_store;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct CallArgs {
    #[arg(long)]
    pub config: PathBuf,
    /// The providing system's id.
    #[arg(long)]
    provider: String,
    /// The capability id (`orders.query`).
    #[arg(long)]
    capability: String,
    /// The capability input, as JSON.
    #[arg(long, default_value = "{}")]
    input: String,
    /// Request id (a consult's idempotency key); a new UUID if absent.
    #[arg(long)]
    request_id: Option<String>,
    /// W3C traceparent to continue; a new root trace if absent.
    #[arg(long)]
    traceparent: Option<String>,
    /// Give up on the hub after this long.
    #[arg(long, default_value_t = 10_000)]
    timeout_ms: u64,
    /// Hub base URL, overriding the file's `hub_url`.
    #[arg(long, env = "PEER_HUB_URL")]
    hub_url: Option<String>,
    #[arg(long, env = "PEER_DATABASE")]
    database: Option<PathBuf>,
}

/// Runs `peer call`: prints the hub's JSON answer.
pub async fn run(args: CallArgs) -> anyhow::Result<ExitCode> {
    let CallArgs {
        config,
        provider,
        capability,
        input,
        request_id,
        traceparent,
        timeout_ms,
        hub_url,
        database,
    } = args;
    let config = crate::load(&config)?;
    let credentials = HubCredentials::from_config(&config)?;
    let http = credentials.http_client()?;
    let input: serde_json::Value =
        serde_json::from_str(&input).context("--input is not valid JSON")?;
    if !exchange::id::is_valid(&provider) {
        bail!("--provider `{provider}` is not a system id");
    }
    if !exchange::id::is_valid(&capability) {
        bail!("--capability `{capability}` is not a capability id");
    }
    let traceparent = match traceparent {
        Some(tp) => TraceParent::parse(&tp).with_context(|| {
            format!("--traceparent `{tp}` is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)")
        })?,
        None => TraceParent::new_root(),
    };
    let request_id = request_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    if request_id.is_empty() || request_id.len() > 128 {
        bail!("--request-id must be 1 to 128 characters");
    }
    let database = database.unwrap_or_else(|| config.database.clone());
    let (_pool, trail, inbox) = open_store(&config, &database).await?;
    // A token that cannot be had is this peer's own problem (exit
    // 1), said before anything is sent; it is kept for the call.
    credentials.bearer.token().await?;
    let call = HubCall {
        hub_url: hub_url.unwrap_or_else(|| config.hub_url.clone()),
        bearer: credentials.bearer.clone(),
        caller: config.system.clone(),
        provider,
        capability,
        input,
        request_id,
        traceparent,
        timeout: Duration::from_millis(timeout_ms),
        context_id: None,
    };
    let (answer, inbox_ids) = client::call_and_record(&http, &call, &trail, &inbox).await?;
    println!("{}", serde_json::to_string_pretty(&answer.body)?);
    if !inbox_ids.is_empty() {
        eprintln!(
            "peer: {} proposed action(s) stored pending in the inbox: {inbox_ids:?}",
            inbox_ids.len()
        );
    }
    match &answer.result {
        CallResult::Connected { .. } => Ok(ExitCode::SUCCESS),
        CallResult::NotConnected { reason, detail, .. } => {
            eprintln!("peer: not_connected: {reason}: {detail}");
            Ok(ExitCode::from(2))
        }
    }
}
