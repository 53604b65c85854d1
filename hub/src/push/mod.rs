//! The push relay (DESIGN.md "push relay"): A2A push notifications for a
//! caller's task, without the provider ever learning where the caller
//! listens, and without the caller's webhook opening the hub's network.
//!
//! - **A caller registers** a push configuration for its own task at the
//!   hub (A2A's push-config operations on every binding; the task door's
//!   ownership check first: another caller's task is not found). The URL
//!   is checked at once against the egress policy for
//!   [push deliveries](crate::net::egress::Purpose::Push): `http(s)`,
//!   and every address its host resolves to allowed (public, or in
//!   `WS_PUSH_NETWORKS`; never loopback by default, never link-local,
//!   metadata or the hub's own listeners) — else the registration is
//!   refused with the reason. A caller sees, lists and deletes only its
//!   own configurations.
//! - **The hub registers its own webhook** with the provider, once per
//!   task ([`Relay`]): `{hub}/push/v1/{relay_id}` with a secret of its own
//!   as the notification token. The caller's URL and token never reach the
//!   provider.
//! - **The provider posts** each task event there ([`receive`]): the
//!   secret checked, the event's task the relay's, an event taken once
//!   (by the digest of its body: a provider's retry is not relayed twice).
//! - **The hub delivers** each event to every configuration of the task
//!   ([`deliver`]): through the push gate (the address checked at connect
//!   time, no redirects, time-limited), with the caller's own token and
//!   credentials, signed by the hub (`wall-street-push-signature`: a
//!   detached JWS over the body with the key of `/.well-known/jwks.json`).
//!   A failed delivery is retried with backoff; after the last attempt it
//!   is a dead letter: logged, kept in the store for the operator (`hub
//!   push dead-letters`, the newest 1000) and counted on `/metrics`
//!   (`wallstreet_push_deliveries_total{outcome}`).
//!
//! | room | what is decided there |
//! |---|---|
//! | `mod.rs` | [`PushRelay`]: the URL check, the relays, what a caller may see of a configuration |
//! | [`receive`] | the webhook a provider posts to |
//! | [`deliver`] | delivering one event to one configuration: signature, retries, dead letter |

pub mod deliver;
pub mod receive;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{AuthenticationInfo, TaskPushNotificationConfig};
use serde_json::Value;

use crate::identity::Identity;
use crate::net::egress::{Egress, Gate, Purpose};
use crate::signing::HubKeys;
use crate::store::push::{CallerConfig, PushTables, Relay};
use crate::traffic::prometheus::PushCounters;

pub use crate::store::push::DeadLetter;

/// Where a provider posts a task's events: `{PATH}/{relay_id}`.
pub const PATH: &str = "/push/v1";

/// A2A's push notification token header: the secret a provider presents
/// to the hub's webhook, and the caller's own token on a delivery.
pub const TOKEN_HEADER: &str = "a2a-notification-token";

/// The header of a delivery that carries the hub's signature of its body.
pub const SIGNATURE_HEADER: &str = "wall-street-push-signature";

/// How many times an event is tried at a receiver, and the wait before the
/// second try (doubled before each next one).
const ATTEMPTS: u32 = 4;
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// How long one delivery may take.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a registration is refused.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The URL is not one the hub delivers to.
    #[error("the push URL is refused: {0}")]
    Url(String),
    /// The store failed.
    #[error("the hub's push store: {0}")]
    Store(#[from] sqlx::Error),
}

/// The relay: its tables, its way out, its key.
pub struct PushRelay {
    tables: PushTables,
    gate: Gate,
    client: reqwest::Client,
    keys: Arc<HubKeys>,
    identity: Arc<Identity>,
    /// One queue per relay, so that a task's events reach a receiver in
    /// the order this replica took them.
    queues: Mutex<HashMap<String, tokio::sync::mpsc::UnboundedSender<deliver::Job>>>,
    counters: PushCounters,
}

impl std::fmt::Debug for PushRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushRelay").finish_non_exhaustive()
    }
}

impl PushRelay {
    /// The relay over the hub's store, going out by `egress`'s push gate,
    /// counting into `counters` (`/metrics`).
    pub fn new(
        tables: PushTables,
        egress: &Egress,
        keys: Arc<HubKeys>,
        identity: Arc<Identity>,
        counters: PushCounters,
    ) -> Arc<Self> {
        let gate = egress.gate(Purpose::Push);
        let client = crate::net::egress::clients::reqwest12(
            &gate,
            reqwest::Client::builder().timeout(DELIVERY_TIMEOUT),
        )
        .build()
        .unwrap_or_default();
        Arc::new(Self {
            tables,
            gate,
            client,
            keys,
            identity,
            queues: Mutex::default(),
            counters,
        })
    }

    /// The tables (the operator's view reads the dead letters).
    pub fn tables(&self) -> &PushTables {
        &self.tables
    }

    /// Whether the hub delivers to `url`: `http` or `https`, no userinfo,
    /// and every address its host resolves to allowed for push
    /// deliveries. The refusal says why, naming the address.
    pub async fn check_url(&self, url: &str) -> Result<(), PushError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| PushError::Url(format!("`{}` is not a URL: {e}", clip(url))))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(PushError::Url(format!(
                "`{}`: the scheme must be http or https",
                clip(url)
            )));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(PushError::Url(
                "a push URL carries no credentials: send them in `authentication`".into(),
            ));
        }
        let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default()) else {
            return Err(PushError::Url(format!("`{}` names no host", clip(url))));
        };
        let literal = host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok();
        self.gate
            .every_address(host, port)
            .await
            .map(drop)
            .map_err(|e| match literal {
                true => PushError::Url(e.to_string()),
                false => PushError::Url(format!("{host}: {e}")),
            })
    }

    /// The hub's relay for a task, if it registered one already.
    pub async fn relay_of(
        &self,
        provider: &str,
        task_id: &str,
    ) -> Result<Option<Relay>, PushError> {
        Ok(self.tables.relay_of(provider, task_id).await?)
    }

    /// A new relay for a task, not yet kept: its id, the secret the
    /// provider must present, and the configuration to register with the
    /// provider.
    pub fn new_relay(&self, provider: &str, task_id: &str) -> (Relay, TaskPushNotificationConfig) {
        let relay_id = format!("relay-{}", uuid::Uuid::new_v4().simple());
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let base = self
            .identity
            .public()
            .map(crate::net::machine::PublicUrls::primary)
            .unwrap_or_default();
        let config = TaskPushNotificationConfig {
            url: format!("{base}{PATH}/{relay_id}"),
            id: Some(relay_id.clone()),
            task_id: task_id.to_string(),
            token: Some(secret.clone()),
            authentication: None,
            tenant: None,
        };
        let relay = Relay {
            relay_id,
            provider: provider.to_string(),
            task_id: task_id.to_string(),
            secret_digest: exchange::wire::text_digest(&secret),
        };
        (relay, config)
    }

    /// Keeps a relay the provider accepted; the one kept first when
    /// another replica registered the task at the same time.
    pub async fn keep_relay(&self, relay: &Relay) -> Result<Relay, PushError> {
        Ok(self.tables.keep_relay(relay).await?)
    }

    /// Keeps a caller's configuration (the id it gave, or a new one) and
    /// answers it as the caller may see it.
    pub async fn keep_config(
        &self,
        provider: &str,
        caller: &str,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, PushError> {
        let kept = CallerConfig {
            provider: provider.to_string(),
            task_id: config.task_id.clone(),
            id: config
                .id
                .clone()
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            caller: caller.to_string(),
            url: config.url.clone(),
            token: config.token.clone(),
            auth: config
                .authentication
                .as_ref()
                .map(|a| (a.scheme.clone(), a.credentials.clone())),
        };
        self.tables.keep_config(&kept).await?;
        Ok(shown(&kept))
    }

    /// A task's configurations as the caller may see them.
    pub async fn configs(
        &self,
        provider: &str,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, PushError> {
        Ok(self
            .tables
            .configs(provider, task_id)
            .await?
            .iter()
            .map(shown)
            .collect())
    }

    /// Deletes a configuration of a task; whether there was one.
    pub async fn delete(&self, provider: &str, task_id: &str, id: &str) -> Result<bool, PushError> {
        Ok(self.tables.delete_config(provider, task_id, id).await?)
    }
}

/// A configuration as its caller sees it: everything it sent but the
/// credentials of its `authentication` (a secret is never echoed).
fn shown(config: &CallerConfig) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        url: config.url.clone(),
        id: Some(config.id.clone()),
        task_id: config.task_id.clone(),
        token: config.token.clone(),
        authentication: config.auth.as_ref().map(|(scheme, _)| AuthenticationInfo {
            scheme: scheme.clone(),
            credentials: None,
        }),
        tenant: None,
    }
}

fn clip(text: &str) -> String {
    exchange::text::clip(text, 200)
}

/// The task an A2A stream event (a task, a status update, an artifact
/// update) is about.
fn event_task(event: &Value) -> Option<&str> {
    event
        .pointer("/task/id")
        .or_else(|| event.pointer("/statusUpdate/taskId"))
        .or_else(|| event.pointer("/artifactUpdate/taskId"))?
        .as_str()
}
