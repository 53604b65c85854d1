//! `peer`: one reference peer process, configured by its own YAML file.
//!
//! Thin on purpose: parsing arguments and printing; everything else lives
//! in the `peer` library so tests and benchmarks reach the same code.
//!
//! Exit codes: 0 success (a call connected), 1 local error (bad config,
//! missing token, bad arguments), 2 a call ended `not_connected`.
//!
//! This file parses the command line and dispatches; each command, its
//! flags and what it does, is a file of `peer/` (`peer/serve.rs`, …).

use clap::{Parser, Subcommand};
use peer::config::{ConfigError, PeerConfig};
use std::path::Path;
use std::process::ExitCode;

#[path = "peer/call.rs"]
mod call;
#[path = "peer/check.rs"]
mod check;
#[path = "peer/echo.rs"]
mod echo;
#[path = "peer/inbox.rs"]
mod inbox;
#[path = "peer/mcp.rs"]
mod mcp;
#[path = "peer/negotiate.rs"]
mod negotiate;
#[path = "peer/schema.rs"]
mod schema;
#[path = "peer/serve.rs"]
mod serve;
#[path = "peer/trail.rs"]
mod trail;

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
    Serve(serve::ServeArgs),
    /// Serve the peer's MCP data plane (the `mcp` section): its own
    /// process, `POST /mcp` and `/health`, over the same store as `serve`.
    Mcp(mcp::McpArgs),
    /// Serve a trivial echo provider (benchmarks): `/health`, a card and
    /// `POST /a2a` answering every `SendMessage` at once with its input.
    Echo(echo::EchoArgs),
    /// Call a capability of another peer through the hub; prints the hub's
    /// JSON answer.
    Call(call::CallArgs),
    /// Negotiate a data contract with a provider through the hub (this
    /// peer as the consumer); prints the transcript and the grant.
    Negotiate(negotiate::NegotiateArgs),
    /// Show or decide the proposed actions in this peer's approval inbox.
    Inbox(inbox::InboxArgs),
    /// Print this peer's audit trail as JSON (one trace, or the latest).
    Trail(trail::TrailArgs),
    /// Validate a config file and exit.
    Check(check::CheckArgs),
    /// Print the config file's JSON Schema (published in `docs/schema/`).
    Schema {
        /// The file's reference page (Markdown, as the manual prints it)
        /// instead of the schema.
        #[arg(long)]
        markdown: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let quiet = !matches!(cli.command, Command::Serve(_));
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
        Command::Serve(args) => &args.config,
        Command::Mcp(args) => &args.config,
        Command::Call(args) => &args.config,
        Command::Negotiate(args) => &args.config,
        Command::Inbox(args) => &args.config,
        Command::Trail(args) => &args.config,
        Command::Check(args) => &args.config,
        Command::Echo(args) => return format!("peer-{}", args.system),
        Command::Schema { .. } => return "peer".into(),
    };
    match PeerConfig::load(config) {
        Ok(c) => format!("peer-{}", c.system),
        Err(_) => "peer".to_string(),
    }
}

/// The command's config file, loaded and validated (its problems are a
/// [`ConfigError`], which `main` prints one line a problem).
fn load(config: &Path) -> anyhow::Result<PeerConfig> {
    Ok(PeerConfig::load(config)?)
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Serve(args) => serve::run(args).await,
        Command::Mcp(args) => mcp::run(args).await,
        Command::Echo(args) => echo::run(args).await,
        Command::Call(args) => call::run(args).await,
        Command::Negotiate(args) => negotiate::run(args).await,
        Command::Inbox(args) => inbox::run(args).await,
        Command::Trail(args) => trail::run(args).await,
        Command::Check(args) => check::run(args),
        Command::Schema { markdown } => schema::run(markdown),
    }
}
