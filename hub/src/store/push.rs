//! The push relay's tables ([`crate::push`]): callers' push
//! configurations, the hub's registrations with providers, the events
//! already taken, and the dead letters. Migration `130_push.sql`.

use exchange::db::Store;
use sqlx::Row;

/// Most dead letters kept: the newest.
pub const DEAD_LETTERS_KEPT: i64 = 1000;

/// A caller's push configuration for one of its tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallerConfig {
    pub provider: String,
    pub task_id: String,
    /// The configuration's id (the caller's, or one the hub gave it).
    pub id: String,
    pub caller: String,
    /// Where the hub delivers.
    pub url: String,
    /// The caller's token for its receiver (`A2A-Notification-Token`).
    pub token: Option<String>,
    /// The scheme and credentials the receiver asks (`Authorization`).
    pub auth: Option<(String, Option<String>)>,
}

/// The hub's registration with a provider for one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relay {
    pub relay_id: String,
    pub provider: String,
    pub task_id: String,
    /// SHA-256 (hex) of the secret the provider presents.
    pub secret_digest: String,
}

/// A delivery that failed every attempt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeadLetter {
    pub failed_at: String,
    pub caller: String,
    pub provider: String,
    pub task_id: String,
    pub config_id: String,
    pub url: String,
    pub attempts: i64,
    pub last_error: String,
}

/// The tables, in the hub's store.
#[derive(Debug, Clone)]
pub struct PushTables {
    store: Store,
}

impl PushTables {
    /// The tables in the hub's (migrated) store.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Keeps `config`, replacing one of the same task and id.
    pub async fn keep_config(&self, config: &CallerConfig) -> Result<(), sqlx::Error> {
        let mut tx = self.store.pool().begin().await?;
        sqlx::query("DELETE FROM push_configs WHERE provider = $1 AND task_id = $2 AND id = $3")
            .bind(&config.provider)
            .bind(&config.task_id)
            .bind(&config.id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO push_configs (provider, task_id, id, caller, url, token, auth_scheme,
                auth_credentials, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&config.provider)
        .bind(&config.task_id)
        .bind(&config.id)
        .bind(&config.caller)
        .bind(&config.url)
        .bind(config.token.as_deref())
        .bind(config.auth.as_ref().map(|(s, _)| s.as_str()))
        .bind(config.auth.as_ref().and_then(|(_, c)| c.as_deref()))
        .bind(exchange::audit::now())
        .execute(&mut *tx)
        .await?;
        tx.commit().await
    }

    /// The configurations of a task, oldest first.
    pub async fn configs(
        &self,
        provider: &str,
        task_id: &str,
    ) -> Result<Vec<CallerConfig>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT provider, task_id, id, caller, url, token, auth_scheme, auth_credentials
             FROM push_configs WHERE provider = $1 AND task_id = $2 ORDER BY created_at, id",
        )
        .bind(provider)
        .bind(task_id)
        .fetch_all(self.store.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let scheme: Option<String> = r.try_get(6)?;
                Ok(CallerConfig {
                    provider: r.try_get(0)?,
                    task_id: r.try_get(1)?,
                    id: r.try_get(2)?,
                    caller: r.try_get(3)?,
                    url: r.try_get(4)?,
                    token: r.try_get(5)?,
                    auth: match scheme {
                        Some(s) => Some((s, r.try_get(7)?)),
                        None => None,
                    },
                })
            })
            .collect()
    }

    /// Deletes a configuration; whether there was one.
    pub async fn delete_config(
        &self,
        provider: &str,
        task_id: &str,
        id: &str,
    ) -> Result<bool, sqlx::Error> {
        let done = sqlx::query(
            "DELETE FROM push_configs WHERE provider = $1 AND task_id = $2 AND id = $3",
        )
        .bind(provider)
        .bind(task_id)
        .bind(id)
        .execute(self.store.pool())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// The relay of a task, if the hub registered one.
    pub async fn relay_of(
        &self,
        provider: &str,
        task_id: &str,
    ) -> Result<Option<Relay>, sqlx::Error> {
        self.relay("WHERE provider = $1 AND task_id = $2", &[provider, task_id])
            .await
    }

    async fn relay(&self, filter: &str, values: &[&str]) -> Result<Option<Relay>, sqlx::Error> {
        let sql =
            format!("SELECT relay_id, provider, task_id, secret_digest FROM push_relays {filter}");
        let mut query = sqlx::query(&sql);
        for v in values {
            query = query.bind(*v);
        }
        let Some(r) = query.fetch_optional(self.store.pool()).await? else {
            return Ok(None);
        };
        Ok(Some(Relay {
            relay_id: r.try_get(0)?,
            provider: r.try_get(1)?,
            task_id: r.try_get(2)?,
            secret_digest: r.try_get(3)?,
        }))
    }

    /// The relay of webhook id `relay_id`.
    pub async fn relay_by_id(&self, relay_id: &str) -> Result<Option<Relay>, sqlx::Error> {
        self.relay("WHERE relay_id = $1", &[relay_id]).await
    }

    /// Keeps `relay`; the one already kept for its task when another
    /// replica registered first (the provider then has both; the other's
    /// id is what the hub answers to).
    pub async fn keep_relay(&self, relay: &Relay) -> Result<Relay, sqlx::Error> {
        sqlx::query(
            "INSERT INTO push_relays (relay_id, provider, task_id, secret_digest, created_at)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider, task_id) DO NOTHING",
        )
        .bind(&relay.relay_id)
        .bind(&relay.provider)
        .bind(&relay.task_id)
        .bind(&relay.secret_digest)
        .bind(exchange::audit::now())
        .execute(self.store.pool())
        .await?;
        Ok(self
            .relay_of(&relay.provider, &relay.task_id)
            .await?
            .unwrap_or_else(|| relay.clone()))
    }

    /// Notes an event of `relay_id` by its digest: `false` when it was
    /// taken before (a provider's retry).
    pub async fn first_time(&self, relay_id: &str, digest: &str) -> Result<bool, sqlx::Error> {
        let done = sqlx::query(
            "INSERT INTO push_events (relay_id, digest, received_at) VALUES ($1, $2, $3)
             ON CONFLICT (relay_id, digest) DO NOTHING",
        )
        .bind(relay_id)
        .bind(digest)
        .bind(exchange::audit::now())
        .execute(self.store.pool())
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Keeps a dead letter, and only the newest [`DEAD_LETTERS_KEPT`].
    pub async fn bury(&self, letter: &DeadLetter) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO push_dead_letters (id, failed_at, caller, provider, task_id, config_id,
                url, attempts, last_error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(&letter.failed_at)
        .bind(&letter.caller)
        .bind(&letter.provider)
        .bind(&letter.task_id)
        .bind(&letter.config_id)
        .bind(&letter.url)
        .bind(letter.attempts)
        .bind(&letter.last_error)
        .execute(self.store.pool())
        .await?;
        sqlx::query(
            "DELETE FROM push_dead_letters WHERE id NOT IN
             (SELECT id FROM push_dead_letters ORDER BY failed_at DESC LIMIT $1)",
        )
        .bind(DEAD_LETTERS_KEPT)
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// The dead letters, newest first.
    pub async fn dead_letters(&self, limit: i64) -> Result<Vec<DeadLetter>, sqlx::Error> {
        let rows = sqlx::query(
            "SELECT failed_at, caller, provider, task_id, config_id, url, attempts, last_error
             FROM push_dead_letters ORDER BY failed_at DESC LIMIT $1",
        )
        .bind(limit)
        .fetch_all(self.store.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(DeadLetter {
                    failed_at: r.try_get(0)?,
                    caller: r.try_get(1)?,
                    provider: r.try_get(2)?,
                    task_id: r.try_get(3)?,
                    config_id: r.try_get(4)?,
                    url: r.try_get(5)?,
                    attempts: r.try_get(6)?,
                    last_error: r.try_get(7)?,
                })
            })
            .collect()
    }
}
