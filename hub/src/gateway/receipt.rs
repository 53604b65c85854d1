//! The receipt of an exchange (part of step 10 of the [pipeline](super)):
//! what the hub signs for both parties once it has recorded a call, kept
//! in the record's own row of the trail ([`exchange::receipt`] says what a
//! receipt is and how a third party verifies it).
//!
//! A receipt is issued for every call the trail records (granted, refused
//! or replayed; a consult, a task submission, a task operation, an MCP
//! tool call, the hub's own calls), not for a stranger's call, which has no
//! record of its own. One that cannot be signed is logged and the call is
//! answered without it: a receipt is evidence about a call, never a
//! condition of it.

use std::sync::Arc;

use serde_json::Value;

use super::call::Call;
use crate::health::StatusBoard;
use crate::identity::Identity;
use crate::net::machine::PublicUrls;
use crate::signing::HubKeys;
use crate::store::task_records::RecordState;
use a2a::Task;
use exchange::audit::chain::Content;
use exchange::audit::{AuditRecord, Stamp};
use exchange::receipt::{self, ProviderSignature, Receipt, TaskState, Terms, TrailRef};

/// What signs receipts, and where the hub is (the names they carry).
#[derive(Clone)]
pub(super) struct Issuer {
    keys: Arc<HubKeys>,
    identity: Arc<Identity>,
    /// The providers' cards, with the keys that verified them.
    board: Arc<StatusBoard>,
}

/// What a receipt says of a call besides its record: the digests of what
/// crossed the hub.
#[derive(Debug, Default)]
pub(crate) struct Crossed<'a> {
    /// The digest of the input as forwarded.
    pub(crate) request: Option<String>,
    /// The capability result as delivered.
    pub(crate) answer: Option<&'a Value>,
    /// The task the answer is.
    pub(crate) task: Option<&'a Task>,
    /// The provider's own signature of the answer, as it sent it.
    pub(crate) provider_signature: Option<String>,
}

impl Issuer {
    /// Receipts signed by `keys`, issued as the hub at the primary public
    /// address `identity` knows (its `jku` the JWKS there); a provider's
    /// signature of its answer checked against the keys `board` holds for
    /// its card.
    pub(super) fn new(
        keys: Arc<HubKeys>,
        identity: Arc<Identity>,
        board: Arc<StatusBoard>,
    ) -> Self {
        Self {
            keys,
            identity,
            board,
        }
    }

    /// The provider's signature of `answer`, when it sent one that the
    /// keys of its verified card verify (one that does not is logged and
    /// left out: the receipt then proves only what the hub relayed).
    fn provider_signature(
        &self,
        provider: &str,
        jws: &str,
        answer: &Value,
    ) -> Option<ProviderSignature> {
        let card = self.board.card(provider);
        let Some(keys) = card.as_ref().and_then(|c| c.keys.as_ref()) else {
            tracing::info!(
                provider,
                "an answer signature from a provider whose card is not verified"
            );
            return None;
        };
        match receipt::verify_answer(jws, answer, keys) {
            Ok(kid) => Some(ProviderSignature {
                jws: jws.to_string(),
                kid,
            }),
            Err(why) => {
                tracing::warn!(provider, %why, "a provider's answer signature does not verify");
                None
            }
        }
    }

    /// The receipt of `call`, recorded as `record` (whose `system` is the
    /// trail's owner), or `None` when it cannot be made (logged).
    pub(super) fn issue(
        &self,
        call: &Call,
        record: &AuditRecord,
        method: &str,
        crossed: &Crossed<'_>,
    ) -> Option<Stamp> {
        let made = || -> Result<Stamp, receipt::ReceiptError> {
            let answer = crossed
                .answer
                .filter(|a| !a.is_null())
                .map(receipt::digest)
                .transpose()?;
            let record_digest = Content::of(record)
                .digest()
                .map_err(|e| receipt::ReceiptError::Canonical(e.to_string()))?;
            let id = format!("rcpt-{}", uuid::Uuid::new_v4().simple());
            let issuer = self
                .identity
                .public()
                .map(PublicUrls::primary)
                .unwrap_or_default();
            let receipt = Receipt {
                form: receipt::TYPE.into(),
                id: id.clone(),
                issuer: issuer.to_string(),
                issued_at: record.at.clone(),
                caller: record.caller.clone(),
                provider: record.provider.clone(),
                capability: record.capability.clone(),
                method: method.to_string(),
                request_id: record.request_id.clone(),
                trace_id: record.trace_id.clone(),
                outcome: record.outcome,
                reason: record.reason,
                request: crossed.request.clone(),
                answer,
                task: crossed.task.map(|t| TaskState {
                    id: t.id.clone(),
                    state: RecordState::of_task(&t.status.state).as_str().into(),
                }),
                terms: Terms {
                    registry: call.registry.digest.clone(),
                    contract: call
                        .registry
                        .contracts
                        .of(&call.capability)
                        .map(|c| c.digest().to_string()),
                },
                trail: TrailRef {
                    chain: record.system.clone(),
                    record: record_digest.hex(),
                },
                provider_signature: match (&crossed.provider_signature, crossed.answer) {
                    (Some(jws), Some(answer)) => {
                        self.provider_signature(&record.provider, jws, answer)
                    }
                    _ => None,
                },
            };
            let jku = format!("{issuer}{}", crate::signing::JWKS_PATH);
            let jws = self.keys.sign_receipt(&receipt, &jku)?;
            Ok(Stamp {
                id,
                jws,
                record: record_digest,
            })
        };
        match made() {
            Ok(stamp) => Some(stamp),
            Err(e) => {
                tracing::warn!(error = %e, "could not issue a receipt; answering without one");
                None
            }
        }
    }
}
