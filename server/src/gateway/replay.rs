//! At most one execution of a consult per request id (DESIGN.md §2,
//! "envelope": a repeated `X-Request-Id` returns the stored answer, never a
//! second execution).
//!
//! Only a consult is replayable, and only when the caller sent its own
//! request id ([`key`]): a data-share is a read of live data and runs every
//! time, and an id the hub made up cannot be repeated by anyone. For such a
//! consult, [`Gateway::at_most_once`] does, in order:
//!
//! 1. look the key up in the idempotency store: a stored answer for the
//!    same input is the answer (`replayed: true`); a stored answer for
//!    *another* input refuses the call with 409, because a retry must
//!    repeat its input and a new question needs a new id;
//! 2. take the key's slot in the in-flight map, waiting at most until the
//!    call's deadline: a duplicate that arrives while the first is still
//!    running waits here instead of executing too;
//! 3. look up again (the first may have finished while this one waited);
//! 4. forward, and store a successful answer for the next replay.
//!
//! The store is the hub's SQLite file, so a replay survives a restart; the
//! in-flight map only lives in memory, and its lock is held just long
//! enough to find the slot, never across a wait (DESIGN.md §1).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use serde_json::Value;

use super::forward::Leg;
use super::pipeline::{Answered, Done};
use super::Gateway;
use crate::idempotency::{input_digest, IdempotencyKey};
use crate::registry::model::CapabilityKind;
use exchange::envelope::Envelope;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// One async lock per consult key currently running. The map's own lock is
/// only held to look an entry up, never across an await.
#[derive(Default)]
pub(super) struct InFlight(Mutex<HashMap<IdempotencyKey, Arc<tokio::sync::Mutex<()>>>>);

impl InFlight {
    /// The key's entry, made if it is the first.
    fn slot(&self, key: &IdempotencyKey) -> Slot<'_> {
        let lock = match self.0.lock() {
            Ok(mut map) => map.entry(key.clone()).or_default().clone(),
            // A poisoned map only loses de-duplication of concurrent
            // duplicates; the stored-answer check still applies.
            Err(_) => Arc::default(),
        };
        Slot {
            map: self,
            key: key.clone(),
            lock,
        }
    }
}

/// An entry of the in-flight map; removes itself when the last user of the
/// key is done, even if the call was cancelled midway.
struct Slot<'a> {
    map: &'a InFlight,
    key: IdempotencyKey,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Ok(mut map) = self.map.0.lock() {
            // Two holders left: the map and this slot. Nobody else can
            // clone it without taking the map lock we hold.
            if Arc::strong_count(&self.lock) == 2 {
                map.remove(&self.key);
            }
        }
    }
}

/// The idempotency key of a call, if it is replayable: a consult with the
/// caller's own request id.
pub(super) fn key(
    kind: CapabilityKind,
    caller: &str,
    provider: &str,
    capability: &str,
    envelope: &Envelope,
) -> Option<IdempotencyKey> {
    (kind == CapabilityKind::Consult && envelope.request_id_from_caller).then(|| IdempotencyKey {
        caller: caller.to_string(),
        provider: provider.to_string(),
        capability: capability.to_string(),
        request_id: envelope.request_id.clone(),
    })
}

impl Gateway {
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
        if let Some(done) = self.replay(key, &digest).await {
            return done;
        }
        let slot = self.in_flight.slot(key);
        let Ok(_guard) = tokio::time::timeout_at(leg.deadline, slot.lock.lock()).await else {
            return Done::fail(NotConnected::new(
                ReasonCode::Timeout,
                format!(
                    "an identical consult is still running after {} ms",
                    leg.deadline_ms
                ),
            ));
        };
        if let Some(done) = self.replay(key, &digest).await {
            return done;
        }
        let result = self.forward_checked(leg, input).await;
        if let Ok(reply) = &result {
            if let Err(e) = self
                .idempotency
                .put(
                    key,
                    &digest,
                    &reply.result,
                    serde_json::to_value(&reply.response).ok().as_ref(),
                    &leg.envelope.trace.trace_id,
                )
                .await
            {
                tracing::warn!(error = %e, "could not store a consult answer for replay");
            }
        }
        Done::forwarded(result)
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
                    reply: stored.reply.and_then(|r| serde_json::from_value(r).ok()),
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
