//! Negotiation turns through the gateway (NOTES.md, "Data contracts and
//! the data plane"): a call of a `negotiation` capability is forwarded like any
//! other — auth chain, rule, the hub's input schema, deadline, the
//! response schema, the audit record — and, because the hub is where both
//! sides' messages cross, each turn is also written to the hub's
//! negotiation record ([`crate::store::negotiations`]): what the drawer's
//! transcript and contract are rebuilt from.
//!
//! The hub negotiates for itself too ([`Gateway::negotiate_for_hub`]): the
//! same deterministic consumer agent a peer's operator runs
//! ([`exchange::negotiator`]), each message a gateway call as the hub, in
//! one `contextId`.

use std::collections::BTreeSet;

use super::answer::ProviderReply;
use serde_json::Value;

use super::call::{Call, Conversation};
use super::Gateway;
use crate::store::negotiations::TurnRecord;
use exchange::envelope::Envelope;
use exchange::negotiation::{columns_on_card, NegotiationMessage};
use exchange::negotiator::{negotiate, NegotiationError, Outcome, Sent, Want};
use exchange::reason::{CallResult, ReasonCode};

impl Gateway {
    /// Writes one turn of `call` to the negotiation record. The
    /// negotiation is the message's `contextId`, or the one the provider's
    /// answer names.
    pub(super) async fn record_turn(
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
    /// `contextId`. The provider's negotiable schema is read from its card
    /// on the status board.
    pub async fn negotiate_for_hub(
        &self,
        provider: &str,
        negotiation: &str,
        want: &Want,
    ) -> Result<Outcome, NegotiationError> {
        let hub = self.registry.snapshot().topology.hub.id.clone();
        let known = self.published_columns(provider, negotiation);
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
            let mut call = Call::new(
                self.registry.snapshot(),
                &hub,
                provider,
                negotiation,
                envelope,
            );
            call.conversation = Conversation {
                context_id: Some(context_id.clone()),
                task_id: None,
            };
            async move { Sent::from(self.call_as_hub(call, input).await) }
        };
        negotiate(want, &known, send).await
    }

    /// The column names `provider`'s card publishes on its `negotiation`
    /// skill (empty when there is no card yet).
    pub fn published_columns(&self, provider: &str, negotiation: &str) -> BTreeSet<String> {
        self.board
            .card(provider)
            .map(|card| columns_on_card(&card.card, negotiation))
            .unwrap_or_default()
    }
}
