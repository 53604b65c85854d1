//! At most one execution of a consult per request id (DESIGN.md §2,
//! "envelope": a repeated `X-Request-Id` returns the stored answer, never a
//! second execution), in one hub process or across replicas.
//!
//! Only a consult is replayable, and only when the caller sent its own
//! request id (the pipeline's `Plan::Consult`): a data-share is a read of live data and runs every
//! time, and an id the hub made up cannot be repeated by anyone. For such a
//! consult, [`Replay::at_most_once`] loops, until the call's deadline:
//!
//! 1. look the key up in the idempotency store: a stored answer for the
//!    same input is the answer (`replayed: true`); a stored answer for
//!    *another* input refuses the call with 409, because a retry must
//!    repeat its input and a new question needs a new id;
//! 2. claim the key (`idempotency_claims`, a unique key in the shared
//!    store): the one call that inserts the claim forwards, stores a
//!    successful answer and releases the claim in one transaction (a
//!    failure releases it alone: the key stays retryable);
//! 3. a claim held by a hub process that is gone ([`Cluster::is_alive`]:
//!    a replica killed mid-call, or this hub before a restart) is taken
//!    over by one waiter, which then forwards;
//! 4. a claim held by a live process means an identical consult is
//!    running: wait, and look again (a duplicate never executes, and gets
//!    the first call's answer once it is stored).
//!
//! No lock is held across a wait on a peer (DESIGN.md §1): waiting is
//! polling the store, bounded by the call's deadline.
//!
//! [`Cluster::is_alive`]: crate::cluster::Cluster::is_alive

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::Value;
use tokio::time::Instant;

use super::answer::ProviderReply;
use super::call::{Answered, Done};
use super::forward::{Forwarder, Leg};
use crate::cluster::Cluster;
use crate::store::idempotency::{
    input_digest, Claim, IdempotencyError, IdempotencyKey, IdempotencyStore,
};
use exchange::db::retry_while_unavailable;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// How often a duplicate looks for the first call's answer.
const POLL: Duration = Duration::from_millis(20);

/// At most one execution per request id, and what it takes: the shared
/// idempotency store, this process among the replicas (whose claim is
/// whose, and whether its holder still runs), and the forward it guards.
pub(super) struct Replay {
    idempotency: IdempotencyStore,
    cluster: Cluster,
    forwarder: Arc<Forwarder>,
}

impl Replay {
    /// Replays from `idempotency`, claiming as this process of `cluster`,
    /// forwarding by `forwarder`.
    pub(super) fn new(
        idempotency: IdempotencyStore,
        cluster: Cluster,
        forwarder: Arc<Forwarder>,
    ) -> Self {
        Self {
            idempotency,
            cluster,
            forwarder,
        }
    }

    /// Forwards `input` along `leg` unless the answer for `key` is stored
    /// or being made, and stores a successful answer: at most one
    /// execution, and only ever for the input the id was first used with.
    pub(super) async fn at_most_once(
        &self,
        key: &IdempotencyKey,
        leg: &Leg<'_>,
        input: Value,
    ) -> Done {
        let digest = input_digest(&input);
        let me = self.cluster.instance();
        loop {
            if let Some(done) = self.replay(key, &digest).await {
                return done;
            }
            let won = match self.idempotency.claim(key, me).await {
                Ok(Claim::Won) => true,
                Ok(Claim::HeldBy(holder)) if !self.cluster.is_alive(&holder).await => {
                    match self.idempotency.take_over(key, &holder, me).await {
                        Ok(won) => {
                            if won {
                                tracing::info!(request_id = %key.request_id, dead = %holder,
                                    "took over a consult whose hub process is gone");
                            }
                            won
                        }
                        Err(e) => return self.unclaimed(key, leg, input, &digest, e).await,
                    }
                }
                Ok(Claim::HeldBy(_)) => false,
                Err(e) => return self.unclaimed(key, leg, input, &digest, e).await,
            };
            if won {
                // The first call may have stored its answer just before
                // this claim: look once more, then run.
                if let Some(done) = self.replay(key, &digest).await {
                    self.release(key).await;
                    return done;
                }
                return self.run_claimed(key, leg, input, &digest).await;
            }
            if Instant::now() + POLL > leg.deadline {
                return Done::fail(NotConnected::new(
                    ReasonCode::Timeout,
                    format!(
                        "an identical consult is still running after {} ms",
                        leg.route.deadline_ms
                    ),
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Forwards under this process's claim; stores a successful answer
    /// (releasing the claim with it), or releases the claim.
    async fn run_claimed(
        &self,
        key: &IdempotencyKey,
        leg: &Leg<'_>,
        input: Value,
        digest: &str,
    ) -> Done {
        let result = self.forwarder.forward_checked(leg, input).await;
        match &result {
            Ok(reply) => {
                // The answer is stored before the caller has it; a store
                // that is away (a PostgreSQL restart) is waited for until
                // the call's deadline, then the answer goes out unstored.
                let response = reply.response.to_value().ok();
                let stored =
                    retry_while_unavailable(leg.deadline, IdempotencyError::is_unavailable, || {
                        self.idempotency.put(
                            key,
                            self.cluster.instance(),
                            digest,
                            &reply.result,
                            response.as_ref(),
                            &leg.call.envelope.trace.trace_id,
                        )
                    })
                    .await;
                if let Err(e) = stored {
                    tracing::warn!(error = %e, "could not store a consult answer for replay");
                    self.release(key).await;
                }
            }
            Err(_) => self.release(key).await,
        }
        Done::forwarded(result)
    }

    /// The store cannot be asked: losing the ability to replay must not
    /// turn into losing the call (as before claims, it runs).
    async fn unclaimed(
        &self,
        key: &IdempotencyKey,
        leg: &Leg<'_>,
        input: Value,
        digest: &str,
        e: IdempotencyError,
    ) -> Done {
        tracing::warn!(error = %e, "idempotency claim failed; executing");
        self.run_claimed(key, leg, input, digest).await
    }

    async fn release(&self, key: &IdempotencyKey) {
        if let Err(e) = self.idempotency.release(key, self.cluster.instance()).await {
            tracing::warn!(error = %e, "could not release a consult's claim");
        }
    }

    /// The stored answer for `key` if it was given for this input; a
    /// refusal (409) if the key was first used with another input.
    async fn replay(&self, key: &IdempotencyKey, digest: &str) -> Option<Done> {
        match self.idempotency.get(key).await {
            Ok(Some(stored)) if stored.input_digest.as_deref().is_some_and(|d| d != digest) => {
                Some(Done {
                    result: Err(NotConnected::new(
                        ReasonCode::PeerError,
                        format!(
                            "X-Request-Id {} was first used with a different input for {}; \
                             a retry must repeat the same input, a new request needs a new id",
                            clip(&key.request_id, 64),
                            key.capability
                        ),
                    )),
                    note: format!(
                        "request id reused with another input (first trace {})",
                        stored.trace_id
                    ),
                    status: Some(StatusCode::CONFLICT),
                    provider_code: None,
                })
            }
            Ok(Some(stored)) => Some(Done {
                result: Ok(Answered {
                    result: stored.answer,
                    replayed: true,
                    // The provider's answer as first sent, when stored.
                    reply: stored
                        .reply
                        .and_then(|r| serde_json::from_value(r).ok())
                        .map(ProviderReply::Typed),
                }),
                note: format!("replay of trace {}", stored.trace_id),
                status: None,
                provider_code: None,
            }),
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "idempotency lookup failed; executing");
                None
            }
        }
    }
}
