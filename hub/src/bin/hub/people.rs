//! `hub people` and `hub credentials`: what an admin does from the command
//! line, on the same stores the canvas changes (the running hubs pick a
//! change up within seconds), each action a line of the hub's trail.
//!
//! - `hub people list`
//! - `hub people add NAME --role R [--system S]`: prints the password the
//!   hub made, once (or reads one from stdin with `--password-stdin`)
//! - `hub people set NAME --role R [--system S]`
//! - `hub people password NAME`: a new password, printed once
//! - `hub people remove NAME`
//! - `hub credentials list`: each system's credential variable and where
//!   its value comes from (the store, the environment, nowhere) — never a
//!   value
//! - `hub credentials rotate SYSTEM`: a new credential, kept in the store
//!   and printed once
//! - `hub credentials set SYSTEM`: keeps the credential read from stdin
//!   (never echoed, never an argument: argv is visible to every process)

use std::path::PathBuf;

use anyhow::{bail, Context};
use app::access::{Role, Scope};
use clap::{Args, Subcommand};
use exchange::audit::AuditTrail;
use exchange::db::Location;
use hub::cluster::Cluster;
use hub::registry::credentials;
use hub::registry::tokens::Tokens;
use hub::web::bff::audit::{record, Line};
use hub::web::ui_auth::people::People;

/// Where the hub's state is (the same flags and variables as `serve`).
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The topology file (its hub id names the trail; the credential store
    /// sits beside it).
    #[arg(long, env = "WS_TOPOLOGY", default_value = "config/topology.yaml")]
    topology: PathBuf,
    /// The hub's store.
    #[arg(long, env = "WS_HUB_DB", default_value = "var/hub.db")]
    database: Location,
}

/// `hub people`.
#[derive(Debug, Args)]
pub struct PeopleArgs {
    #[command(flatten)]
    at: StoreArgs,
    #[command(subcommand)]
    command: PeopleCommand,
}

#[derive(Debug, Subcommand)]
enum PeopleCommand {
    /// Everybody, with their role and scope.
    List,
    /// A new person; the hub makes the password and prints it once.
    Add {
        /// The username.
        name: String,
        /// viewer, operator, approver or admin.
        #[arg(long)]
        role: String,
        /// Bind them to one member system's part.
        #[arg(long)]
        system: Option<String>,
        /// Read the password from stdin (one line) instead.
        #[arg(long)]
        password_stdin: bool,
    },
    /// A new role or scope.
    Set {
        /// The username.
        name: String,
        /// viewer, operator, approver or admin.
        #[arg(long)]
        role: String,
        /// Bind them to one member system's part (none: the exchange).
        #[arg(long)]
        system: Option<String>,
    },
    /// A new password, printed once.
    Password {
        /// The username.
        name: String,
    },
    /// Removes a person.
    Remove {
        /// The username.
        name: String,
    },
}

/// `hub credentials`.
#[derive(Debug, Args)]
pub struct CredentialsArgs {
    #[command(flatten)]
    at: StoreArgs,
    #[command(subcommand)]
    command: CredentialsCommand,
}

#[derive(Debug, Subcommand)]
enum CredentialsCommand {
    /// Each system's credential variable and where its value comes from.
    List,
    /// A new credential for a system, kept in the store, printed once.
    Rotate {
        /// The system id.
        system: String,
    },
    /// Keeps the credential read from stdin (one line) for a system.
    Set {
        /// The system id.
        system: String,
    },
}

/// The hub's trail, and who acts ("admin <login> (command line)").
struct Trail {
    hub: String,
    trail: AuditTrail,
    who: String,
}

impl Trail {
    async fn open(at: &StoreArgs, store: exchange::db::Store) -> anyhow::Result<Self> {
        let loaded = hub::registry::load::load_file(&at.topology)
            .with_context(|| format!("reading {}", at.topology.display()))?;
        let hub = loaded.topology.hub.id.clone();
        let login = std::env::var("USER").unwrap_or_else(|_| "unknown".into());
        Ok(Self {
            trail: AuditTrail::open(store, hub.clone()),
            hub,
            who: format!("admin {login} (command line)"),
        })
    }

    async fn line(
        &self,
        capability: &'static str,
        subject: &str,
        action: &str,
        outcome: Result<&str, &str>,
    ) -> anyhow::Result<()> {
        let line = Line {
            who: &self.who,
            capability,
            subject,
            action,
            outcome,
        };
        self.trail
            .append(record(&self.hub, self.trail.system(), &line))
            .await
            .context("writing the hub's audit trail")
    }
}

fn role(name: &str) -> anyhow::Result<Role> {
    Role::parse(name).with_context(|| {
        format!("`{name}` is not a role: one of viewer, operator, approver, admin")
    })
}

fn scope(system: Option<String>) -> Scope {
    system.map_or(Scope::Exchange, Scope::Member)
}

fn stdin_line(what: &str) -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .with_context(|| format!("reading {what} from stdin"))?;
    let value = line.trim_end_matches(['\n', '\r']).to_string();
    if value.trim().is_empty() {
        bail!("{what} on stdin is empty");
    }
    Ok(value)
}

/// `hub people …`.
pub async fn people(args: PeopleArgs) -> anyhow::Result<()> {
    let store = hub::store::open(&args.at.database)
        .await
        .with_context(|| format!("opening the hub's store {}", args.at.database))?;
    let trail = Trail::open(&args.at, store.clone()).await?;
    let people = People::load(store, Cluster::solo())
        .await
        .context("reading the people store")?;
    let hub = trail.hub.clone();
    let (action, done) = match args.command {
        PeopleCommand::List => {
            for p in people.list() {
                let v = p.view();
                println!(
                    "{}\t{}\t{}\t{}",
                    v.username,
                    v.role,
                    v.system.as_deref().unwrap_or("(exchange)"),
                    v.origin
                );
            }
            return Ok(());
        }
        PeopleCommand::Add {
            name,
            role: r,
            system,
            password_stdin,
        } => {
            let given = password_stdin
                .then(|| stdin_line("the password"))
                .transpose()?;
            let (role, scope) = (role(&r)?, scope(system));
            let action = format!("add {name} as {role}");
            let done = people.add(&name, role, scope, given.as_deref()).await;
            if let (Ok(password), None) = (&done, &given) {
                println!("{password}");
            }
            (action, done.map(|_| ()))
        }
        PeopleCommand::Set {
            name,
            role: r,
            system,
        } => {
            let role = role(&r)?;
            let action = format!("make {name} {role}");
            let done = people.update(&name, role, scope(system)).await;
            (action, done)
        }
        PeopleCommand::Password { name } => {
            let action = format!("give {name} a new password");
            let done = people.reset_password(&name).await;
            if let Ok(password) = &done {
                println!("{password}");
            }
            (action, done.map(|_| ()))
        }
        PeopleCommand::Remove { name } => {
            let action = format!("remove {name}");
            (action, people.remove(&name).await)
        }
    };
    match done {
        Ok(()) => {
            trail.line("people", &hub, &action, Ok("")).await?;
            eprintln!("done: {action} (running hubs pick it up within seconds)");
            Ok(())
        }
        Err(e) => {
            let why = e.to_string();
            trail.line("people", &hub, &action, Err(&why)).await?;
            bail!("{why}")
        }
    }
}

/// `hub credentials …`.
pub async fn credentials(args: CredentialsArgs) -> anyhow::Result<()> {
    let loaded = hub::registry::load::load_file(&args.at.topology)
        .with_context(|| format!("reading {}", args.at.topology.display()))?;
    let dir = args
        .at
        .topology
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    if let CredentialsCommand::List = args.command {
        let held = credentials::HeldTokens::read(&dir);
        for s in &loaded.topology.systems {
            println!(
                "{}\t{}\t{}",
                s.id,
                s.token_env,
                Tokens::source(s, &held).as_str()
            );
        }
        return Ok(());
    }
    let store = hub::store::open(&args.at.database)
        .await
        .with_context(|| format!("opening the hub's store {}", args.at.database))?;
    let trail = Trail::open(&args.at, store).await?;
    let (system, action, credential, print) = match args.command {
        CredentialsCommand::List => return Ok(()),
        CredentialsCommand::Rotate { system } => (
            system,
            "rotate the credential of",
            credentials::new_credential(),
            true,
        ),
        CredentialsCommand::Set { system } => (
            system,
            "set the credential given on stdin for",
            stdin_line("the credential")?,
            false,
        ),
    };
    let action = format!("{action} {system}");
    let name =
        match hub::registry::write::keep_credential_in(&args.at.topology, &system, &credential) {
            Ok(name) => name,
            Err(e) => {
                let why = e.to_string();
                trail
                    .line("credential", &system, &action, Err(&why))
                    .await?;
                bail!("{why}");
            }
        };
    let note = format!("{name} kept in the credential store");
    trail
        .line("credential", &system, &action, Ok(&note))
        .await?;
    if print {
        println!("{credential}");
    }
    eprintln!("done: {note} (the running hubs read it within a second)");
    Ok(())
}
