//! `hub push dead-letters --db X [--limit N]`: the push relay's dead
//! letters, newest first: deliveries to a caller's webhook that failed
//! every attempt (`hub::push`), one JSON object a line.

use anyhow::Context;
use clap::{Args, Subcommand};
use exchange::db::{Location, Store};

/// `hub push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    #[command(subcommand)]
    command: PushCommand,
}

#[derive(Debug, Subcommand)]
enum PushCommand {
    /// The deliveries that failed every attempt, newest first.
    DeadLetters {
        /// The hub's store (a SQLite file, or the replicas' `postgres://`).
        #[arg(long)]
        db: Location,
        /// At most this many.
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
}

/// Runs `hub push`.
pub async fn push(args: PushArgs) -> anyhow::Result<()> {
    match args.command {
        PushCommand::DeadLetters { db, limit } => {
            let store = match &db {
                Location::File(path) => Store::open_read_only(path).await?,
                other => Store::open(other).await?,
            };
            let letters = hub::store::push::PushTables::new(store)
                .dead_letters(limit)
                .await
                .context("reading the dead letters")?;
            for letter in &letters {
                println!("{}", serde_json::to_string(letter)?);
            }
            eprintln!("{} dead letters", letters.len());
            Ok(())
        }
    }
}
