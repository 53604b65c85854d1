//! Negotiation turns through the gateway (NOTES.md, "Data contracts and
//! the data plane"): a call of a `negotiation` capability is forwarded like any
//! other — auth chain, rule, the hub's input schema, deadline, the
//! response schema, the audit record — and, because the hub is where both
//! sides' messages cross, each turn is also written to the hub's
//! negotiation record ([`crate::store::negotiations`]): what the drawer's
//! transcript and contract are rebuilt from.
//!
//! The hub negotiates for itself too ([`Gateway::negotiate_for_hub`](super::Gateway::negotiate_for_hub)): the
//! same deterministic consumer agent a peer's operator runs
//! ([`exchange::negotiator`]), each message a gateway call as the hub, in
//! one `contextId`.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use super::answer::ProviderReply;
use super::call::{Call, Conversation};
use crate::health::StatusBoard;
use crate::registry::Registry;
use crate::store::negotiations::{Negotiations, TurnRecord};
use exchange::envelope::Envelope;
use exchange::negotiation::{columns_on_card, NegotiationMessage};
use exchange::negotiator::{negotiate, NegotiationError, Outcome, Sent, Want};
use exchange::reason::{CallResult, ReasonCode};

/// Negotiation turns, and what they read: the hub's negotiation record,
/// and the status board (the providers' cards, whose negotiation skills
/// publish the columns on offer).
pub(super) struct Turns {
    negotiations: Negotiations,
    board: Arc<StatusBoard>,
}

impl Turns {
    /// Turns written to `negotiations`, offers read from `board`.
    pub(super) fn new(negotiations: Negotiations, board: Arc<StatusBoard>) -> Self {
        Self {
            negotiations,
            board,
        }
    }

    /// Writes one turn of `call` to the negotiation record. The
    /// negotiation is the message's `contextId`, or the one the provider's
    /// answer names.
    pub(super) async fn record(
        &self,
        call: &Call,
        data_capability: String,
        sent: Value,
        reply: Option<&ProviderReply>,
        result: &CallResult,
    ) {
        let context_id = call
            .conversation
            .context_id
            .clone()
            .or_else(|| {
                reply
                    .and_then(ProviderReply::context_id)
                    .map(str::to_string)
            })
            .unwrap_or_default();
        let (answer, reason, detail, trace_id) = match result {
            CallResult::Connected {
                result, trace_id, ..
            } => (Some(result.clone()), None, String::new(), trace_id.clone()),
            CallResult::NotConnected {
                reason,
                detail,
                trace_id,
                ..
            } => (
                None,
                Some(reason.as_str().to_string()),
                detail.clone(),
                trace_id.clone(),
            ),
        };
        let turn = TurnRecord {
            seq: 0,
            at: String::new(),
            context_id,
            consumer: call.caller.clone(),
            provider: call.provider.clone(),
            capability: call.capability.clone(),
            data_capability,
            sent,
            answer,
            reason,
            detail,
            trace_id,
        };
        if let Err(e) = self.negotiations.record(&turn).await {
            tracing::warn!(error = %e, "could not record a negotiation turn");
        }
    }

    /// The hub negotiates its own contract for `data_capability` of
    /// `provider` (for its drawer queries), through `negotiation`, in a new
    /// `contextId`, each message a call `pass` runs as the hub. The
    /// provider's negotiable schema is read from its card on the status
    /// board.
    pub(super) async fn negotiate_as_hub<F, Fut>(
        &self,
        registry: &Registry,
        provider: &str,
        negotiation: &str,
        want: &Want,
        pass: F,
    ) -> Result<Outcome, NegotiationError>
    where
        F: Fn(Call, Value) -> Fut,
        Fut: Future<Output = CallResult>,
    {
        let hub = registry.snapshot().topology.hub.id.clone();
        let known = published_columns(&self.board, provider, negotiation);
        if known.is_empty() {
            return Err(NegotiationError::Failed {
                reason: ReasonCode::PeerUnreachable.as_str().into(),
                detail: format!(
                    "{provider}'s card (as the prober last read it) publishes no negotiable \
                     columns for {negotiation}"
                ),
                transcript: Vec::new(),
            });
        }
        let context_id = format!("neg-{}", uuid::Uuid::new_v4());
        let trace = exchange::envelope::TraceParent::new_root();
        let send = |message: NegotiationMessage| {
            let input = serde_json::to_value(&message).unwrap_or(Value::Null);
            let envelope = Envelope {
                trace: trace.child(),
                ..Envelope::new_root()
            };
            let mut call = Call::new(registry.snapshot(), &hub, provider, negotiation, envelope);
            call.conversation = Conversation {
                context_id: Some(context_id.clone()),
                task_id: None,
            };
            let passed = pass(call, input);
            async move { Sent::from(passed.await) }
        };
        negotiate(want, &known, send).await
    }
}

/// The column names `provider`'s card on `board` publishes on its
/// `negotiation` skill (empty when there is no card yet).
pub fn published_columns(
    board: &StatusBoard,
    provider: &str,
    negotiation: &str,
) -> BTreeSet<String> {
    board
        .card(provider)
        .map(|card| columns_on_card(&card.card, negotiation))
        .unwrap_or_default()
}
