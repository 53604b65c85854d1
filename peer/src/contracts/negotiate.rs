//! The provider's side of a negotiation: one turn
//! per A2A message, one negotiation per `contextId`.
//!
//! A turn: the consumer's message is validated by the shared validator
//! ([`exchange::negotiation::validate`], `from` must be the consumer, the
//! columns must be in the schema this peer publishes on its card); the
//! deterministic agent drafts a reply (it would accept the scope as asked);
//! the [`Policy`] then narrows the draft in code — whatever drafted it — and
//! a narrowed draft is a `counter`, remembered as the last offer of this
//! negotiation. An `accept` from the consumer confirms only that last offer
//! ([`confirm_accept`]); the grant is [`policy::grant`]: deterministic,
//! written to this peer's store, answered as the provider's `accept` with
//! the contract beside it.
//!
//! The answer is the capability result `{"reply": <message>, "grant":
//! <contract> | null}`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};

use chrono::Utc;
use serde_json::{json, Value};

use super::policy::{self, confirm_accept, Narrowed, Policy};
use super::store::ContractStoreError;
use super::Contract;
use crate::config::{NegotiationFault, SkillConfig};
use crate::skills::SkillError;
use crate::PeerState;
use exchange::negotiation::{validate, Intent, NegotiationMessage, Party, Scope};

/// One answered turn.
#[derive(Debug)]
pub struct Turn {
    /// The capability result: `{"reply", "grant"}`.
    pub result: Value,
    /// One line for generic A2A clients.
    pub text: String,
    /// A payload-free line for the provider's trail (intents, columns
    /// removed by policy, the contract granted).
    pub trail: String,
}

impl From<ContractStoreError> for SkillError {
    fn from(e: ContractStoreError) -> Self {
        SkillError::Internal(e.to_string())
    }
}

/// The policy of a negotiate skill: its personal columns, and the
/// negotiable columns of the data-share it negotiates.
pub fn policy_of(state: &PeerState, skill: &SkillConfig) -> Policy {
    let negotiable = skill
        .negotiates
        .as_deref()
        .and_then(|c| state.config.skill(c))
        .map(|t| t.negotiable_columns.iter().cloned().collect())
        .unwrap_or_default();
    Policy {
        personal_columns: skill.personal_columns.iter().cloned().collect(),
        negotiable_columns: negotiable,
    }
}

/// The column names this peer publishes as its negotiable schema (every
/// column of its dataset: names only, never a value).
pub fn published_columns(state: &PeerState) -> BTreeSet<String> {
    state
        .schema
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect()
}

/// Answers one message of `consumer` in negotiation `context_id`.
pub async fn turn(
    state: &PeerState,
    skill: &SkillConfig,
    consumer: &str,
    context_id: &str,
    input: &Value,
) -> Result<Turn, SkillError> {
    let known = published_columns(state);
    let incoming = validate(input, Some(Party::Consumer), Some(&known))
        .map_err(|e| SkillError::invalid("negotiation_schema", e.to_string()))?;
    let data_capability = skill.negotiates.clone().unwrap_or_default();
    let policy = policy_of(state, skill);
    let store = &state.contracts;
    let mut drafted_by: Option<String> = None;
    let (reply, narrowed, grant) = match incoming.intent {
        Intent::Propose | Intent::Counter | Intent::Request => {
            let (draft, by) = draft_reply(state, consumer, &incoming, &known, &policy).await;
            drafted_by = by;
            let (reply, narrowed) = policy.apply(draft);
            if reply.scope.columns.is_empty() {
                let reject = NegotiationMessage {
                    intent: Intent::Reject,
                    rationale: "Nothing in this scope can be granted: every column asked for \
                                is personal or beyond what this dataset shares."
                        .into(),
                    ..reply
                };
                (reject, narrowed, None)
            } else if reply.intent == Intent::Accept {
                // Taken as asked: agreed, so granted at once.
                let contract =
                    grant_scope(state, &data_capability, consumer, context_id, reply.scope).await?;
                (granted_reply(&contract), narrowed, Some(contract))
            } else {
                store
                    .record_offer(context_id, consumer, &reply.scope)
                    .await?;
                (reply, narrowed, None)
            }
        }
        Intent::Accept => {
            let last = store.last_offer(context_id, consumer).await?;
            match confirm_accept(&incoming, last.as_ref()) {
                Ok(scope) => {
                    let contract =
                        grant_scope(state, &data_capability, consumer, context_id, scope).await?;
                    (
                        granted_reply(&contract),
                        Narrowed::default(),
                        Some(contract),
                    )
                }
                Err(reject) => (reject, Narrowed::default(), None),
            }
        }
        Intent::Reject => {
            let last = store.last_offer(context_id, consumer).await?;
            let reply = NegotiationMessage {
                from: Party::Provider,
                intent: Intent::Reject,
                scope: last.unwrap_or_else(|| incoming.scope.clone()),
                rationale: "Understood: this negotiation ends without a contract.".into(),
            };
            (reply, Narrowed::default(), None)
        }
    };
    let mut trail = trail_line(&incoming, &reply, &narrowed, grant.as_ref());
    if let Some(by) = drafted_by {
        trail.push_str(&format!(" drafted-by {by}"));
    }
    let text = match &grant {
        Some(c) => format!(
            "{}: granted contract {} for {} until {}",
            state.config.name,
            c.id,
            c.scope.columns.join(", "),
            c.expires_at.to_rfc3339()
        ),
        None => format!(
            "{}: {} {}",
            state.config.name,
            reply.intent.as_str(),
            reply.scope.columns.join(", ")
        ),
    };
    let mut reply_value = serde_json::to_value(&reply)
        .map_err(|e| SkillError::Internal(format!("reply not serialisable: {e}")))?;
    if let Some(fault) = state.config.faults.negotiation {
        if should_break(state.config.faults.negotiation_times) {
            reply_value = broken(fault, reply_value);
        }
    }
    Ok(Turn {
        result: json!({
            "reply": reply_value,
            "grant": grant.as_ref().map(contract_json),
        }),
        text,
        trail,
    })
}

/// The draft of a reply: the model's when the peer has a tier and the
/// model answered a valid message, else the deterministic agent's. The
/// second value names the model's tier when it drafted (for the trail).
async fn draft_reply(
    state: &PeerState,
    consumer: &str,
    incoming: &NegotiationMessage,
    known: &BTreeSet<String>,
    policy: &Policy,
) -> (NegotiationMessage, Option<String>) {
    let Some(drafter) = &state.drafter else {
        return (agent_reply(incoming), None);
    };
    match drafter
        .draft(
            &state.config.name,
            consumer,
            incoming,
            known,
            &policy.negotiable_columns,
        )
        .await
    {
        Ok(draft) => (draft, Some(format!("model:{}", drafter.tier_id()))),
        Err(e) => {
            tracing::warn!(error = %e, "the model's draft was not usable; the deterministic agent drafts");
            (agent_reply(incoming), Some("rules (model failed)".into()))
        }
    }
}

/// The deterministic agent: it would take the scope as asked. The policy,
/// applied after it, decides what is actually offered.
fn agent_reply(incoming: &NegotiationMessage) -> NegotiationMessage {
    NegotiationMessage {
        from: Party::Provider,
        intent: Intent::Accept,
        scope: incoming.scope.clone(),
        rationale: "The columns that can be shared for this purpose, within the retention cap."
            .into(),
    }
}

async fn grant_scope(
    state: &PeerState,
    capability: &str,
    consumer: &str,
    context_id: &str,
    scope: Scope,
) -> Result<Contract, SkillError> {
    let contract = policy::grant(
        scope,
        capability,
        &state.config.system,
        consumer,
        context_id,
        Utc::now(),
    );
    state.contracts.grant(&contract).await?;
    Ok(contract)
}

fn granted_reply(c: &Contract) -> NegotiationMessage {
    NegotiationMessage {
        from: Party::Provider,
        intent: Intent::Accept,
        scope: c.scope.clone(),
        rationale: format!(
            "Granted as contract {}, valid until {}.",
            c.id,
            c.expires_at.to_rfc3339()
        ),
    }
}

/// The contract as the grant field of the answer.
pub fn contract_json(c: &Contract) -> Value {
    json!({
        "contract_id": c.id,
        "capability": c.capability,
        "provider": c.provider,
        "consumer": c.consumer,
        "columns": c.scope.columns,
        "purpose": c.scope.purpose,
        "retention_days": c.scope.retention_days,
        "context_id": c.context_id,
        "granted_at": c.granted_at.to_rfc3339(),
        "expires_at": c.expires_at.to_rfc3339(),
    })
}

fn trail_line(
    incoming: &NegotiationMessage,
    reply: &NegotiationMessage,
    narrowed: &Narrowed,
    grant: Option<&Contract>,
) -> String {
    let mut line = format!(
        "negotiation {} -> {}",
        incoming.intent.as_str(),
        reply.intent.as_str()
    );
    if !narrowed.removed.is_empty() {
        line.push_str(&format!(" policy-filter personal {:?}", narrowed.removed));
    }
    if !narrowed.not_negotiable.is_empty() {
        line.push_str(&format!(
            " policy-filter not-negotiable {:?}",
            narrowed.not_negotiable
        ));
    }
    if let Some(days) = narrowed.retention_capped_from {
        line.push_str(&format!(" retention-capped-from {days}"));
    }
    if let Some(c) = grant {
        line.push_str(&format!(" grant {}", c.id));
    }
    line
}

/// Broken replies served so far (test faults only).
static BROKEN: AtomicU32 = AtomicU32::new(0);

fn should_break(times: u32) -> bool {
    times == 0 || BROKEN.fetch_add(1, Ordering::SeqCst) < times
}

/// A reply broken the way the fault says.
fn broken(fault: NegotiationFault, mut reply: Value) -> Value {
    match fault {
        NegotiationFault::WrongParty => reply["from"] = json!("consumer"),
        NegotiationFault::ExtraKey => reply["urgency"] = json!("high"),
        NegotiationFault::UnknownColumn => {
            if let Some(cols) = reply["scope"]["columns"].as_array_mut() {
                cols.push(json!("avg_order_value"));
            }
        }
        NegotiationFault::Unparseable => {
            reply = json!(format!("Happy to help! Here is my answer: {reply}"));
        }
    }
    reply
}
