//! `peer inbox`: the proposed actions in this peer's approval inbox,
//! listed, approved or rejected; prints the result as JSON.

use anyhow::bail;
use clap::{Args, Subcommand};
use exchange::inbox::Status;
use peer::open_store;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct InboxArgs {
    #[arg(long)]
    pub config: PathBuf,
    #[arg(long, env = "PEER_DATABASE")]
    database: Option<PathBuf>,
    #[command(subcommand)]
    action: InboxAction,
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

/// Runs `peer inbox …`.
pub async fn run(args: InboxArgs) -> anyhow::Result<ExitCode> {
    let InboxArgs {
        config,
        database,
        action,
    } = args;
    let config = crate::load(&config)?;
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
        InboxAction::Approve { id, by } => serde_json::to_value(inbox.approve(id, &by).await?)?,
        InboxAction::Reject { id, by } => serde_json::to_value(inbox.reject(id, &by).await?)?,
    };
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::SUCCESS)
}
