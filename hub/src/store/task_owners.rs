//! Whose task is it (DESIGN.md §2, "auth chain"; A2A v1.0 §3.3.2): the
//! hub remembers which caller created each task a provider answered with,
//! so that a task id is only ever usable by the system that made it.
//!
//! A provider knows only the hub (the hub is the one caller holding its
//! token), so it cannot tell two members' tasks apart: that is decided
//! here. Another caller's task id answers exactly like an id that does not
//! exist (`TaskNotFoundError`), never revealing that it does. The table
//! lives in the hub's store, so ownership survives a restart and is shared
//! by every replica.

use std::collections::HashSet;

use exchange::db::Store;

/// Why the ownership table could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("task ownership store: {0}")]
pub struct TaskOwnersError(#[from] sqlx::Error);

impl TaskOwnersError {
    /// The store is away for now: worth trying again shortly
    /// ([`exchange::db::is_unavailable`]).
    pub fn is_unavailable(&self) -> bool {
        exchange::db::is_unavailable(&self.0)
    }
}

/// The ownership table, inside the hub's database.
#[derive(Debug, Clone)]
pub struct TaskOwners {
    store: Store,
}

impl TaskOwners {
    /// The table in the hub's (migrated) database.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Records that `caller` created `task_id` at `provider`. The first
    /// owner stays the owner: a provider that reuses a task id for another
    /// caller cannot hand the first caller's task over.
    pub async fn record(
        &self,
        provider: &str,
        task_id: &str,
        caller: &str,
        capability: &str,
    ) -> Result<(), TaskOwnersError> {
        sqlx::query(
            "INSERT INTO task_owners (provider, task_id, caller, capability, created_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider, task_id) DO NOTHING",
        )
        .bind(provider)
        .bind(task_id)
        .bind(caller)
        .bind(capability)
        .bind(exchange::audit::now())
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// Whether `caller` created `task_id` at `provider`.
    pub async fn owns(
        &self,
        provider: &str,
        task_id: &str,
        caller: &str,
    ) -> Result<bool, TaskOwnersError> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM task_owners WHERE provider = $1 AND task_id = $2 AND caller = $3",
        )
        .bind(provider)
        .bind(task_id)
        .bind(caller)
        .fetch_one(self.store.pool())
        .await?;
        Ok(n > 0)
    }

    /// The ids of every task `caller` created at `provider`.
    pub async fn owned(
        &self,
        provider: &str,
        caller: &str,
    ) -> Result<HashSet<String>, TaskOwnersError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT task_id FROM task_owners WHERE provider = $1 AND caller = $2",
        )
        .bind(provider)
        .bind(caller)
        .fetch_all(self.store.pool())
        .await?;
        Ok(ids.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_belongs_to_its_first_caller_and_survives_a_reopen() {
        for db in crate::store::test_stores().await {
            first_caller_owns(db.store).await;
        }
    }

    async fn first_caller_owns(db: Store) {
        let owners = TaskOwners::new(db.clone());
        owners
            .record("helpdesk", "t-1", "buyercorp", "ticket.classify")
            .await
            .expect("record");
        // A second record of the same id does not change the owner.
        owners
            .record("helpdesk", "t-1", "vendorcorp", "ticket.classify")
            .await
            .expect("record");
        assert!(owners
            .owns("helpdesk", "t-1", "buyercorp")
            .await
            .expect("q"));
        assert!(!owners
            .owns("helpdesk", "t-1", "vendorcorp")
            .await
            .expect("q"));
        // The same id at another provider is another task.
        assert!(!owners
            .owns("buyercorp", "t-1", "buyercorp")
            .await
            .expect("q"));
        drop(owners);
        let reopened = TaskOwners::new(db);
        assert_eq!(
            reopened.owned("helpdesk", "buyercorp").await.expect("q"),
            HashSet::from(["t-1".to_string()])
        );
        assert!(reopened
            .owned("helpdesk", "vendorcorp")
            .await
            .expect("q")
            .is_empty());
    }
}
