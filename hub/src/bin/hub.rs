//! The hub binary.
//!
//! `hub` / `hub serve`: serves the canvas, the `/api` BFF and the A2A
//! gateway, and runs the prober and the topology watcher. The listen
//! address is Leptos' `site_addr` (`LEPTOS_SITE_ADDR`), as `scripts/stack`
//! sets it (with the site root `scripts/build` writes).
//!
//! `hub trail --trace-id X --db a.db --db b.db ...`: rebuilds one
//! interaction from several independent audit trails, read-only (a `--db`
//! may be the replicas' `postgres://` URL). `hub trail verify` checks a
//! trail's hash chains and signed checkpoints (or an export's), `hub trail
//! export` writes a counterparty's verifiable segment (`trail`).
//!
//! `hub receipt verify PATH... --jwks FILE|URL [--trail DIR]`: checks the
//! hub's signed receipts offline, and that each is in a trail export
//! (`receipt`).
//!
//! `hub push dead-letters --db X`: the push relay's deliveries that failed
//! every attempt (`push`).
//!
//! `hub hash-password`: reads a password from stdin (one line) and prints
//! its argon2 hash, for the UI users file (`--ui-users`).
//!
//! `hub people …` and `hub credentials …`: an admin's people, roles and
//! system credentials from the command line (`hub/people.rs`).

use std::path::PathBuf;
use std::time::Duration;

use exchange::db::Location;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use hub::hub::{Hub, HubConfig};
use leptos::prelude::get_configuration;
use trail::{trail, TrailArgs};

#[path = "hub/people.rs"]
mod people;
#[path = "hub/push.rs"]
mod push;
#[path = "hub/receipt.rs"]
mod receipt;
#[path = "hub/trail.rs"]
mod trail;

/// mimalloc instead of the system allocator: every call on the gateway's
/// hot path allocates and frees a few hundred small objects (JSON trees,
/// headers, futures) across threads, which glibc's malloc served at about
/// a quarter of the hub's instructions (in a callgrind profile of calls
/// through the gateway).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Wall Street: the A2A exchange hub.
#[derive(Debug, Parser)]
#[command(name = "hub", version, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// `serve` flags, when no subcommand is given.
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the hub (the default).
    Serve(ServeArgs),
    /// Audit trails: rebuild one interaction (`--trace-id`), `verify` a
    /// trail's chains or an export, `export` a counterparty's segment.
    Trail(TrailArgs),
    /// Receipts: `verify` the hub's signed receipts against its JWKS (and
    /// a trail export).
    Receipt(receipt::ReceiptArgs),
    /// The push relay: its `dead-letters`.
    Push(push::PushArgs),
    /// Read a password from stdin, print its argon2 hash (UI users file).
    HashPassword,
    /// People and roles: list, add, set, password, remove.
    People(people::PeopleArgs),
    /// Systems' credentials: list (never a value), rotate, set from stdin.
    Credentials(people::CredentialsArgs),
    /// Write demo certificates: the hub's, and a CA and a client
    /// certificate per system (never for production).
    Certs(CertsArgs),
    /// Print the JSON Schema of a configuration file, generated from the
    /// types the hub reads it into (published under `docs/schema/`).
    Schema {
        #[arg(value_enum)]
        file: SchemaFile,
        /// The file's reference page (Markdown, as the manual prints it)
        /// instead of the schema.
        #[arg(long)]
        markdown: bool,
    },
}

/// A configuration file with a published schema.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SchemaFile {
    /// The topology file (`config/topology.yaml`).
    Topology,
    /// One system's section (onboarding; `config/peers/*.topology.yaml`).
    Section,
}

#[derive(Debug, Clone, Args)]
struct CertsArgs {
    /// The directory to write them into (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// A member system to make a CA and a client certificate for (repeat).
    #[arg(long = "system")]
    systems: Vec<String>,
}

#[derive(Debug, Clone, Args)]
struct ServeArgs {
    /// The topology file.
    #[arg(long, env = "WS_TOPOLOGY", default_value = "config/topology.yaml")]
    topology: PathBuf,
    /// The hub's store: a SQLite file (the default), or a
    /// `postgres://USER@HOST:PORT/DB` URL that several hub replicas share.
    #[arg(long, env = "WS_HUB_DB", default_value = "var/hub.db")]
    database: Location,
    /// The UI users file (usernames and argon2 hashes). Without it nobody
    /// can log in to the canvas; the gateway works regardless.
    #[arg(long, env = "WS_UI_USERS")]
    ui_users: Option<PathBuf>,
    /// The hub's agent config (tiers, agents, prompt library). Re-read
    /// when it changes. Without it every agent runs its deterministic
    /// path and the interpreter is off.
    #[arg(long, env = "WS_AGENTS", default_value = "config/agents.yaml")]
    agents: PathBuf,
    /// Also listen with TLS at this address (`127.0.0.1:3443`), asking
    /// each client for its certificate (the auth chain's mTLS layer
    /// decides whose it is). Needs `--tls-cert` and `--tls-key`.
    #[arg(long, env = "WS_TLS_ADDR", requires_all = ["tls_cert", "tls_key"])]
    tls_addr: Option<std::net::SocketAddr>,
    /// The hub's TLS certificate chain (PEM).
    #[arg(long, env = "WS_TLS_CERT")]
    tls_cert: Option<PathBuf>,
    /// The hub's TLS private key (PEM).
    #[arg(long, env = "WS_TLS_KEY")]
    tls_key: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    // The log lines, and OpenTelemetry spans when OTEL_EXPORTER_OTLP_ENDPOINT
    // is set (flushed below, after a Ctrl-C or SIGTERM too: `serve` returns).
    let cli = Cli::parse();
    // A command that prints what a person reads (a password, a credential,
    // a verdict) keeps its stdout for that: its log lines go to stderr.
    let serving = matches!(cli.command, None | Some(Command::Serve(_)));
    let telemetry = exchange::telemetry::init(
        "wall-street-hub",
        exchange::telemetry::Logs {
            default_filter: "info,server=info,tower_http=warn",
            stderr: !serving,
        },
    );
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    let result = match cli.command {
        None => runtime.block_on(serve(cli.serve)),
        Some(Command::Serve(args)) => runtime.block_on(serve(args)),
        Some(Command::Trail(args)) => runtime.block_on(trail(args)),
        Some(Command::Receipt(args)) => runtime.block_on(receipt::receipt(args)),
        Some(Command::Push(args)) => runtime.block_on(push::push(args)),
        Some(Command::HashPassword) => hash_password(),
        Some(Command::People(args)) => runtime.block_on(people::people(args)),
        Some(Command::Credentials(args)) => runtime.block_on(people::credentials(args)),
        Some(Command::Certs(args)) => certs(args),
        Some(Command::Schema { file, markdown }) => schema(file, markdown),
    };
    telemetry.shutdown();
    result
}

/// `hub hash-password`: the first line of stdin, without its line break,
/// is the password. Nothing but the hash is printed (never the password).
fn hash_password() -> anyhow::Result<()> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .context("reading the password from stdin")?;
    let password = line.trim_end_matches(['\n', '\r']);
    let hash = hub::web::ui_auth::users::hash_password(password)?;
    println!("{hash}");
    Ok(())
}

/// `hub schema`: the schema, pretty-printed, as published; or the
/// reference page.
fn schema(file: SchemaFile, markdown: bool) -> anyhow::Result<()> {
    let schema = match file {
        SchemaFile::Topology if markdown => {
            print!("{}", hub::registry::schema::topology_reference());
            return Ok(());
        }
        SchemaFile::Section if markdown => {
            anyhow::bail!("a system's section is the topology file's `System`: see `hub schema topology --markdown`")
        }
        SchemaFile::Topology => hub::registry::schema::topology(),
        SchemaFile::Section => hub::onboarding::section::Section::schema(),
    };
    println!("{}", serde_json::to_string_pretty(&schema)?);
    Ok(())
}

/// `hub certs`: writes the certificates and prints each member's pin.
fn certs(args: CertsArgs) -> anyhow::Result<()> {
    let pins = hub::net::tls::dev_certs::write(&args.out, &args.systems)?;
    for (system, pin) in pins {
        println!("{system} spki_sha256: {pin}");
    }
    Ok(())
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // The topology first: an operator's typo should be the only message.
    let hub = Hub::build(&HubConfig {
        topology: args.topology.clone(),
        database: args.database.clone(),
        ui_users: args.ui_users.clone(),
        agents: Some(args.agents.clone()),
    })
    .await
    .context("starting the hub")?;
    if hub.ui.people.is_empty() {
        tracing::warn!(
            "nobody in the people store and no UI users file (--ui-users / WS_UI_USERS): \
             nobody can log in to the canvas (`hub people add` makes an admin)"
        );
    } else {
        tracing::info!(people = hub.ui.people.list().len(), "people loaded");
    }
    let conf = get_configuration(None).context("reading the LEPTOS_* configuration")?;
    let addr = conf.leptos_options.site_addr;
    let _background = hub
        .start_background()
        .context("starting background tasks")?;
    let limits = hub::net::listen::ConnectionLimits::from_env().map_err(anyhow::Error::msg)?;
    let proxies = hub::net::listen::TrustedProxies::from_env().map_err(anyhow::Error::msg)?;
    let app = hub.router(conf.leptos_options);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding the hub to {addr}"))?;
    // The bound address, not the configured one: with port 0 the system
    // picks it, and whoever started the hub reads it from this line.
    let addr = listener
        .local_addr()
        .context("reading the hub's bound address")?;
    // The egress policy never lets the hub connect to itself.
    hub.egress.listening_on(addr);
    tracing::info!(%addr, topology = %args.topology.display(), database = %args.database,
        instance = %hub.cluster.instance(), "hub listening on http://{addr}");

    // The TLS listener, beside the plain one: the same routes, each
    // request with the certificate its client presented.
    let (tls_server, tls_bound) = match (&args.tls_addr, &args.tls_cert, &args.tls_key) {
        (Some(tls_addr), Some(cert), Some(key)) => {
            let tls = hub::net::tls::ServerTls::from_pem_files(cert, key)?;
            let tls_listener = tokio::net::TcpListener::bind(tls_addr)
                .await
                .with_context(|| format!("binding the hub's TLS listener to {tls_addr}"))?;
            let tls_addr = tls_listener
                .local_addr()
                .context("reading the hub's bound TLS address")?;
            hub.egress.listening_on(tls_addr);
            tracing::info!(%tls_addr, "hub listening on https://{tls_addr}");
            let stopping = hub.shutdown.wait();
            let serving = tokio::spawn(hub::net::listen::serve_with(
                tls_listener,
                app.clone(),
                limits,
                proxies.clone(),
                Some(tls),
                stopping,
            ));
            (Some(serving), Some(tls_addr))
        }
        _ => (None, None),
    };
    // What the hub's cards name and its signatures bind to: its configured
    // public addresses, else the ones it listens on (never a request's Host).
    let public =
        hub::net::machine::PublicUrls::from_env(addr, tls_bound).map_err(anyhow::Error::msg)?;
    tracing::info!(public = ?public.all(), "the hub's public addresses");
    hub.identity.set_public(public);
    let shutdown = hub.shutdown.clone();
    let server = hub::net::listen::serve(listener, app, limits, proxies, async move {
        stop_signal().await;
        tracing::info!("shutting down");
        // Ends the event streams so open canvases do not hold the exit.
        shutdown.trigger();
    });
    let stopping = hub.shutdown.wait();
    let server = async move {
        server.await;
        if let Some(tls_server) = tls_server {
            let _ = tls_server.await;
        }
    };
    tokio::select! {
        () = server => {}
        // In-flight calls are bounded by their deadlines; give them time,
        // then leave even if a client keeps a connection open.
        _ = async {
            stopping.await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        } => tracing::warn!("graceful shutdown timed out"),
    }
    Ok(())
}

/// SIGINT (Ctrl-C) or SIGTERM.
async fn stop_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
