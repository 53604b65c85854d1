//! The hub's store (DESIGN.md §3, "hub": state in SQLite by default;
//! PostgreSQL when several hub replicas share one store behind a load
//! balancer).
//!
//! One database holds everything the hub persists: the exchange crate's
//! tables (audit trail, inbox: `exchange::db::SCHEMA`) and the hub's own
//! ([`SCHEMA`], `hub/migrations/{sqlite,postgres}`): idempotency records
//! and claims, edges and positions, tasks and their owners, negotiation
//! turns, budget plans, the shared probe results. UI sessions live there
//! too, in the table `tower-sessions-sqlx-store` makes
//! (`ui_auth::session`). The engine is chosen by the location an operator
//! gives (`--database` / `WS_HUB_DB`): a file path is SQLite, a
//! `postgres://` URL is PostgreSQL.
//!
//! # Rooms
//!
//! This file opens the store and migrates it; each table the hub keeps has
//! its own room, which owns its SQL:
//!
//! | room | what it keeps |
//! |---|---|
//! | [`edges`] | the connections made on the canvas, and node positions |
//! | [`idempotency`] | a consult's stored answer by request id, and who runs it now |
//! | [`task_records`] | every task the hub forwarded, its state and deadline |
//! | [`task_owners`] | whose task is it: the caller that created each task id |
//! | [`negotiations`] | every negotiation turn that crossed the hub |
//! | [`budget_plans`] | the hub's own local write when its operator approves a proposal |
//! | [`push`] | the push relay's: callers' push configurations, the hub's registrations with providers, events taken, dead letters |

pub mod budget_plans;
pub mod edges;
pub mod idempotency;
pub mod negotiations;
pub mod push;
pub mod task_owners;
pub mod task_records;

use exchange::db::{Adopting, Location, OpenError, Schema, Store};
use sqlx::AnyPool;

/// The hub's own tables.
pub static SCHEMA: Schema = Schema {
    sqlite: || sqlx::migrate!("migrations/sqlite"),
    postgres: || sqlx::migrate!("migrations/postgres"),
    adopt: Some(adopt),
};

/// Opens the hub's store at `location` and brings every table up to date.
pub async fn open(location: &Location) -> Result<Store, OpenError> {
    let store = Store::open(location).await?;
    store.migrate(&[&exchange::db::SCHEMA, &SCHEMA]).await?;
    Ok(store)
}

/// What a SQLite file made by the hub before migrations needs: the
/// columns its code added in place, and the mark that its edges were
/// seeded (the old code seeded when it created the table).
fn adopt(pool: AnyPool) -> Adopting {
    Box::pin(async move {
        for (table, column) in [
            ("idempotency", "input_digest"),
            ("idempotency", "reply"),
            ("tasks", "claimed_by"),
        ] {
            Store::add_column_if_missing(&pool, table, column, "TEXT").await?;
        }
        let edges: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'edges'",
        )
        .fetch_one(&pool)
        .await?;
        if edges > 0 {
            sqlx::query(
                "CREATE TABLE IF NOT EXISTS hub_marks (name TEXT PRIMARY KEY, at TEXT NOT NULL)",
            )
            .execute(&pool)
            .await?;
            sqlx::query(
                "INSERT INTO hub_marks (name, at) VALUES ('edges_seeded', $1)
                 ON CONFLICT (name) DO NOTHING",
            )
            .bind(exchange::audit::now())
            .execute(&pool)
            .await?;
        }
        Ok(())
    })
}

/// The hub's store for a test: `exchange::testing`'s matrix with the
/// hub's schema.
#[cfg(test)]
pub async fn test_stores() -> Vec<exchange::testing::TestStore> {
    exchange::testing::engines(&[&exchange::db::SCHEMA, &SCHEMA]).await
}
