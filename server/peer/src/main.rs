//! `peer`: one reference peer process, configured by its own YAML file.
//!
//! Thin on purpose: parsing arguments and printing; everything else lives
//! in the `peer` library so tests and benchmarks reach the same code.
//!
//! Exit codes: 0 success (a call connected), 1 local error (bad config,
//! missing token, bad arguments), 2 a call ended `not_connected`.

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};
use exchange::envelope::TraceParent;
use exchange::inbox::Status;
use exchange::reason::CallResult;
use peer::client::{self, HubCall};
use peer::config::{ConfigError, PeerConfig};
use peer::hub_credentials::HubCredentials;
use peer::{open_store, server as peer_server, Token};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "peer",
    version,
    about = "A Wall Street reference peer (one process per system)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the peer: agent card, /health and the A2A endpoint.
    Serve {
        /// The peer's YAML file.
        #[arg(long)]
        config: PathBuf,
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
    },
    /// Serve the peer's MCP data plane (the `mcp` section): its own
    /// process, `POST /mcp` and `/health`, over the same store as `serve`.
    Mcp {
        /// The peer's YAML file.
        #[arg(long)]
        config: PathBuf,
        /// Listen address, overriding the file's `mcp.listen`.
        #[arg(long, env = "PEER_MCP_LISTEN")]
        listen: Option<String>,
        /// SQLite file, overriding the file's `database` (the same file
        /// `serve` uses: the contracts live there).
        #[arg(long, env = "PEER_DATABASE")]
        database: Option<PathBuf>,
    },
    /// Serve a trivial echo provider (benchmarks): `/health`, a card and
    /// `POST /a2a` answering every `SendMessage` at once with its input.
    Echo {
        /// Its system id (the identity `/health` reports).
        #[arg(long)]
        system: String,
        /// Listen address (IP:port).
        #[arg(long)]
        listen: String,
        /// The env var holding its bearer token.
        #[arg(long)]
        token_env: String,
    },
    /// Call a capability of another peer through the hub; prints the hub's
    /// JSON answer.
    Call {
        #[arg(long)]
        config: PathBuf,
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
    },
    /// Negotiate a data contract with a provider through the hub (this
    /// peer as the consumer); prints the transcript and the grant.
    Negotiate {
        #[arg(long)]
        config: PathBuf,
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
    },
    /// Show or decide the proposed actions in this peer's approval inbox.
    Inbox {
        #[arg(long)]
        config: PathBuf,
        #[arg(long, env = "PEER_DATABASE")]
        database: Option<PathBuf>,
        #[command(subcommand)]
        action: InboxAction,
    },
    /// Print this peer's audit trail as JSON (one trace, or the latest).
    Trail {
        #[arg(long)]
        config: PathBuf,
        #[arg(long, env = "PEER_DATABASE")]
        database: Option<PathBuf>,
        #[arg(long)]
        trace_id: Option<String>,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Validate a config file and exit.
    Check {
        #[arg(long)]
        config: PathBuf,
    },
}

#[derive(Subcommand)]
enum InboxAction {
    /// List entries (newest first).
    List {
        /// Only entries in this status: pending, approved, rejected.
        #[arg(long)]
        status: Option<String>,
    },
    /// Approve a pending entry: records who and when and, in the same
    /// transaction, performs this peer's own local write (a budgets owner
    /// sets its own row); refused, and left pending, for a proposal this
    /// peer cannot perform.
    Approve {
        id: i64,
        #[arg(long)]
        by: String,
    },
    /// Reject a pending entry.
    Reject {
        id: i64,
        #[arg(long)]
        by: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let quiet = !matches!(cli.command, Command::Serve { .. });
    // The log lines (stderr), and OpenTelemetry spans when
    // OTEL_EXPORTER_OTLP_ENDPOINT is set, as `peer-<system>`; flushed
    // below, after a Ctrl-C or SIGTERM too (`serve` returns).
    let service = if exchange::telemetry::requested() {
        service_name(&cli.command)
    } else {
        String::new()
    };
    let telemetry = exchange::telemetry::init(
        &service,
        exchange::telemetry::Logs {
            default_filter: if quiet { "warn" } else { "info" },
            stderr: true,
        },
    );
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("peer: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let code = match runtime.block_on(run(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            match e.downcast_ref::<ConfigError>() {
                // `file:line:column: field: message`, one line a problem,
                // unprefixed so an editor can jump to each.
                Some(invalid @ ConfigError::Invalid { .. }) => eprintln!("{invalid}"),
                _ => eprintln!("peer: {e:#}"),
            }
            ExitCode::from(1)
        }
    };
    telemetry.shutdown();
    code
}

/// `peer-<system>`, the system read from the command's config file (a
/// file that does not load is reported by the command itself).
fn service_name(command: &Command) -> String {
    let config = match command {
        Command::Serve { config, .. }
        | Command::Mcp { config, .. }
        | Command::Call { config, .. }
        | Command::Negotiate { config, .. }
        | Command::Inbox { config, .. }
        | Command::Trail { config, .. }
        | Command::Check { config } => config,
        Command::Echo { system, .. } => return format!("peer-{system}"),
    };
    match PeerConfig::load(config) {
        Ok(c) => format!("peer-{}", c.system),
        Err(_) => "peer".to_string(),
    }
}

fn load(config: &Path) -> anyhow::Result<PeerConfig> {
    Ok(PeerConfig::load(config)?)
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Serve {
            config,
            listen,
            database,
            fault_stall_ms,
            fault_break_schema,
            fault_fail,
        } => {
            let mut config = load(&config)?;
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
            peer_server::serve(config, token, listen, &database).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp {
            config,
            listen,
            database,
        } => {
            let config = load(&config)?;
            let token = Token::from_env(&config.token_env)?;
            let database = database.unwrap_or_else(|| config.database.clone());
            peer::mcp::serve(config, token, listen, &database).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Echo {
            system,
            listen,
            token_env,
        } => {
            if !exchange::id::is_valid(&system) {
                bail!("--system `{system}` is not a system id");
            }
            let token = Token::from_env(&token_env)?;
            peer::echo::serve(peer::echo::Echo { system, token }, &listen).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            config,
            provider,
            capability,
            input,
            request_id,
            traceparent,
            timeout_ms,
            hub_url,
            database,
        } => {
            let config = load(&config)?;
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
                Some(tp) => TraceParent::parse(&tp)
                    .with_context(|| format!("--traceparent `{tp}` is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)"))?,
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
        Command::Negotiate {
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
        } => {
            let config = load(&config)?;
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
            let want = exchange::negotiator::Want {
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
                Ok(exchange::negotiator::Outcome::Granted { grant, transcript }) => {
                    println!("{}", serde_json::to_string_pretty(grant)?);
                    (transcript, ExitCode::SUCCESS)
                }
                Ok(exchange::negotiator::Outcome::Rejected {
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
                        exchange::negotiator::NegotiationError::Protocol { transcript, .. }
                        | exchange::negotiator::NegotiationError::Failed { transcript, .. } => {
                            transcript
                        }
                    };
                    (t, ExitCode::from(2))
                }
            };
            for line in peer::negotiation::transcript_lines(transcript) {
                eprintln!("{line}");
            }
            Ok(code)
        }
        Command::Inbox {
            config,
            database,
            action,
        } => {
            let config = load(&config)?;
            let database = database.unwrap_or_else(|| config.database.clone());
            let (_pool, _trail, inbox) = open_store(&config, &database).await?;
            let out = match action {
                InboxAction::List { status } => {
                    let status = match status.as_deref() {
                        None => None,
                        Some("pending") => Some(Status::Pending),
                        Some("approved") => Some(Status::Approved),
                        Some("rejected") => Some(Status::Rejected),
                        Some(other) => {
                            bail!("--status `{other}`: use pending, approved or rejected")
                        }
                    };
                    serde_json::to_value(inbox.list(status).await?)?
                }
                InboxAction::Approve { id, by } => {
                    serde_json::to_value(inbox.approve(id, &by).await?)?
                }
                InboxAction::Reject { id, by } => {
                    serde_json::to_value(inbox.reject(id, &by).await?)?
                }
            };
            println!("{}", serde_json::to_string_pretty(&out)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Trail {
            config,
            database,
            trace_id,
            limit,
        } => {
            let config = load(&config)?;
            let database = database.unwrap_or_else(|| config.database.clone());
            let (_pool, trail, _inbox) = open_store(&config, &database).await?;
            let records = match trace_id {
                Some(id) => trail.by_trace(&id).await?,
                None => trail.recent(limit).await?,
            };
            println!("{}", serde_json::to_string_pretty(&records)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { config } => {
            let c = load(&config)?;
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
    }
}
