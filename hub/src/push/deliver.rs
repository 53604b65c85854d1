//! Delivering one event to one caller's configuration: the body as the
//! provider sent it, `Content-Type: application/json`, the caller's own
//! `A2A-Notification-Token` and `Authorization` (its `authentication`
//! scheme `Bearer` or `Basic`), and [`SIGNATURE_HEADER`]: the hub's
//! detached JWS (`protected..signature`, RFC 7515 appendix F) over the
//! body's bytes, whose protected header names the key (`kid`) and the
//! hub's JWKS (`jku`). A receiver verifies it with any JOSE library.
//!
//! Through the push gate, so the address is checked when the connection
//! is made (a name that rebinds to a refused address fails there), no
//! redirect is followed, and a delivery takes at most 10 s. A delivery
//! that fails (no connection, a refused address, a status that is not
//! 2xx) is tried [`ATTEMPTS`] times, waiting 250 ms, then twice as long
//! each time; then it is a dead letter.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::{PushRelay, ATTEMPTS, FIRST_BACKOFF, SIGNATURE_HEADER, TOKEN_HEADER};
use crate::store::push::{CallerConfig, DeadLetter};
use crate::traffic::prometheus::PushCounters;

/// One event for one configuration.
#[derive(Debug, Clone)]
pub struct Job {
    pub config: CallerConfig,
    /// The event as the provider sent it.
    pub body: Arc<[u8]>,
}

impl PushRelay {
    /// Queues `job` behind the other events of `relay_id`, starting the
    /// relay's worker when it has none.
    pub(super) fn enqueue(self: &PushRelay, relay_id: &str, job: Job) {
        let Ok(mut queues) = self.queues.lock() else {
            return;
        };
        let job = match queues.get(relay_id) {
            Some(queue) => match queue.send(job) {
                Ok(()) => return,
                Err(mpsc::error::SendError(job)) => job,
            },
            None => job,
        };
        let (queue, jobs) = mpsc::unbounded_channel();
        let _ = queue.send(job);
        queues.insert(relay_id.to_string(), queue);
        let worker = Worker {
            client: self.client.clone(),
            gate: self.gate.clone(),
            keys: self.keys.clone(),
            tables: self.tables.clone(),
            counters: self.counters.clone(),
            jku: format!(
                "{}{}",
                self.identity
                    .public()
                    .map(crate::net::machine::PublicUrls::primary)
                    .unwrap_or_default(),
                crate::signing::JWKS_PATH
            ),
        };
        tokio::spawn(worker.run(jobs));
    }
}

/// Delivers one relay's events, in order.
struct Worker {
    client: reqwest::Client,
    gate: crate::net::egress::Gate,
    keys: Arc<crate::signing::HubKeys>,
    tables: crate::store::push::PushTables,
    counters: PushCounters,
    jku: String,
}

impl Worker {
    async fn run(self, mut jobs: mpsc::UnboundedReceiver<Job>) {
        while let Some(job) = jobs.recv().await {
            self.deliver(&job).await;
        }
    }

    async fn deliver(&self, job: &Job) {
        let signature = match self.keys.sign_detached(&job.body, &self.jku) {
            Ok(signature) => signature,
            Err(e) => {
                tracing::warn!(error = %e, "push relay: could not sign an event");
                String::new()
            }
        };
        let mut wait = FIRST_BACKOFF;
        let mut last_error = String::new();
        for attempt in 1..=ATTEMPTS {
            match self.attempt(job, &signature).await {
                Ok(()) => {
                    self.counters.count("delivered");
                    return;
                }
                Err(why) => last_error = why,
            }
            if attempt < ATTEMPTS {
                self.counters.count("retried");
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
        }
        self.counters.count("dead_letter");
        let c = &job.config;
        tracing::warn!(
            caller = %c.caller, provider = %c.provider, task = %c.task_id,
            error = %last_error, "push relay: a delivery failed every attempt"
        );
        let letter = DeadLetter {
            failed_at: exchange::audit::now(),
            caller: c.caller.clone(),
            provider: c.provider.clone(),
            task_id: c.task_id.clone(),
            config_id: c.id.clone(),
            url: c.url.clone(),
            attempts: i64::from(ATTEMPTS),
            last_error: exchange::text::clip(&last_error, 500),
        };
        if let Err(e) = self.tables.bury(&letter).await {
            tracing::warn!(error = %e, "push relay: could not keep a dead letter");
        }
    }

    /// One attempt: `Ok` for a 2xx answer, else why not.
    async fn attempt(&self, job: &Job, signature: &str) -> Result<(), String> {
        let c = &job.config;
        let url = url::Url::parse(&c.url).map_err(|e| e.to_string())?;
        // A host that is an address skips the gate's resolver: checked here.
        self.gate_admit(&url)?;
        let mut request = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(job.body.to_vec());
        if !signature.is_empty() {
            request = request.header(SIGNATURE_HEADER, signature);
        }
        if let Some(token) = &c.token {
            request = request.header(TOKEN_HEADER, token);
        }
        if let Some((scheme, Some(credentials))) = &c.auth {
            match scheme.to_ascii_lowercase().as_str() {
                "bearer" => request = request.bearer_auth(credentials),
                "basic" => {
                    request = request.header("authorization", format!("Basic {credentials}"))
                }
                _ => {}
            }
        }
        let answer =
            request
                .send()
                .await
                .map_err(|e| match crate::net::egress::refusal_in(&e) {
                    Some(refusal) => refusal.to_string(),
                    None => format!("no answer: {e}"),
                })?;
        if answer.status().is_success() {
            Ok(())
        } else {
            Err(format!("the receiver answered {}", answer.status()))
        }
    }

    fn gate_admit(&self, url: &url::Url) -> Result<(), String> {
        self.gate.admit(url).map_err(|r| r.to_string())
    }
}
