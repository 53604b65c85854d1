//! What a data-share edge's drawer shows about data contracts (DESIGN.md
//! §4 "Open a data-share edge"): for the edge's
//! consumer and for the hub (whose drawer queries run as the hub, so need
//! a contract of their own), the newest contract granted, the newest
//! negotiation's transcript and the run state — all rebuilt from the hub's
//! negotiation record ([`crate::store::negotiations`]), in order, real messages
//! only; and the one action the hub may take: negotiate its own contract
//! (a member's operator starts theirs with `peer negotiate`: the hub never
//! commands a peer).
//!
//! The state is derived here from the recorded turns, never stored.
//! Everything a peer wrote goes through the redaction layer with the
//! negotiation capability's contract before it reaches the browser.

use app::dto::{ContractsView, NegotiateRequest, RunState};
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::BffState;
use crate::api::{ApiFailure, ApiJson, ApiPath};
use crate::redaction::view::{contracts_view, PartyInput, TurnInput};
use crate::redaction::{self, Redacted};
use crate::registry::model::{CapabilityKind, Topology};
use crate::store::negotiations::TurnRecord;
use exchange::negotiator::{NegotiationError, Outcome, Want};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;

/// Turns read per party (the newest negotiation is within them).
const TURNS: u32 = 200;

/// The data-share an edge reads and the negotiation capability for it.
struct Target {
    edge: String,
    consumer: String,
    provider: String,
    data_capability: String,
    negotiation: Option<String>,
    hub: String,
}

fn target(state: &BffState, id: &str) -> Result<Target, ApiFailure> {
    let loaded = state.registry.snapshot();
    let t = &loaded.topology;
    let not_found = || ApiFailure::not_found(format!("no edge {}", clip(id, 200)));
    let edge = state.edges.get(t, id).ok_or_else(not_found)?;
    let cap = t.capability(&edge.capability).ok_or_else(not_found)?;
    let data_capability = match cap.kind {
        CapabilityKind::DataShare => cap.id.clone(),
        CapabilityKind::Negotiation => cap.negotiates.clone().ok_or_else(not_found)?,
        CapabilityKind::Consult | CapabilityKind::Task => {
            return Err(ApiFailure::bad_request(format!(
                "{} is a {} edge: only a data-share has a data contract",
                edge.id,
                crate::registry::model::kind_name(cap.kind)
            )))
        }
    };
    Ok(Target {
        negotiation: negotiation_for(t, &edge.provider, &data_capability),
        edge: edge.id,
        consumer: edge.consumer,
        provider: edge.provider,
        data_capability,
        hub: t.hub.id.clone(),
    })
}

/// The negotiation capability `provider` offers for `data_capability`.
fn negotiation_for(t: &Topology, provider: &str, data_capability: &str) -> Option<String> {
    t.capabilities
        .iter()
        .filter(|c| c.kind == CapabilityKind::Negotiation)
        .filter(|c| c.negotiates.as_deref() == Some(data_capability))
        .find(|c| {
            t.rules
                .iter()
                .any(|r| r.capability == c.id && r.provider == provider)
        })
        .map(|c| c.id.clone())
}

/// `GET /api/edges/{id}/contract`.
pub async fn contract(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
) -> Result<Redacted<ContractsView>, ApiFailure> {
    let target = target(&state, &id)?;
    view(&state, &target).await
}

/// `POST /api/edges/{id}/negotiate`: the hub negotiates its own contract
/// for the edge's data-share, then answers the refreshed view.
pub async fn negotiate(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
    headers: axum::http::HeaderMap,
    ApiJson(req): ApiJson<NegotiateRequest>,
) -> Result<Redacted<ContractsView>, ApiFailure> {
    let target = target(&state, &id)?;
    let Some(negotiation) = target.negotiation.clone() else {
        return Err(ApiFailure::bad_request(format!(
            "{} offers no negotiation capability for {}",
            target.provider, target.data_capability
        )));
    };
    if req.columns.is_empty() || req.columns.len() > 64 {
        return Err(ApiFailure::bad_request(
            "columns: name 1 to 64 columns the hub's queries need",
        ));
    }
    if let Some(c) = req.columns.iter().find(|c| !is_column(c)) {
        return Err(ApiFailure::bad_request(format!(
            "columns: {:?} is not a column name",
            clip(c, 64)
        )));
    }
    let purpose = req.purpose.trim();
    if purpose.is_empty() || purpose.len() > 300 {
        return Err(ApiFailure::bad_request(
            "purpose: one sentence of 1 to 300 characters",
        ));
    }
    if !(1..=3650).contains(&req.retention_days) {
        return Err(ApiFailure::bad_request(
            "retention_days: a whole number of days from 1 to 3650",
        ));
    }
    let want = Want {
        required: req.columns.clone(),
        columns: req.columns,
        purpose: purpose.to_string(),
        retention_days: req.retention_days,
    };
    // With a tier, the hub's negotiator drafts the proposal; it is held
    // to the operator's request in code (`crate::agents::negotiator`).
    let published = crate::gateway::published_columns(&state.board, &target.provider, &negotiation);
    let (want, drafted) = crate::agents::negotiator::draft(
        &state.agents,
        &super::agents::tool_context(&state),
        &crate::agents::request_language(&headers),
        &target.provider,
        &target.data_capability,
        want,
        &published,
    )
    .await;
    if let Some(note) = drafted {
        tracing::info!(edge = %target.edge, "{note}");
    }
    // The outcome is in the record the view is rebuilt from; a failure
    // is logged here and shown there (state `error`).
    match state
        .gateway
        .negotiate_for_hub(&target.provider, &negotiation, &want)
        .await
    {
        Ok(Outcome::Granted { .. }) => {}
        Ok(Outcome::Rejected { rationale, .. }) => {
            tracing::info!(%rationale, "the hub's negotiation ended without a contract");
        }
        Err(e @ NegotiationError::Failed { .. }) | Err(e @ NegotiationError::Protocol { .. }) => {
            tracing::warn!(error = %e, "the hub's negotiation failed");
        }
    }
    view(&state, &target).await
}

/// A column name: letters, digits, `_` (the peer's own rule).
fn is_column(c: &str) -> bool {
    !c.is_empty() && c.len() <= 64 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

async fn view(state: &BffState, target: &Target) -> Result<Redacted<ContractsView>, ApiFailure> {
    let loaded = state.registry.snapshot();
    let contracts = &loaded.contracts;
    let mut consumers = vec![target.consumer.clone()];
    if target.consumer != target.hub {
        consumers.push(target.hub.clone());
    }
    let mut parties = Vec::new();
    for consumer in consumers {
        let turns = state
            .negotiations
            .turns(&consumer, &target.provider, &target.data_capability, TURNS)
            .await
            .map_err(|e| ApiFailure::internal("reading the negotiation record", &e))?;
        let may_negotiate = target
            .negotiation
            .as_deref()
            .is_some_and(|n| loaded.topology.permits(&consumer, n, &target.provider));
        let redact = |value: &Value, from: &str| match &target.negotiation {
            Some(n) => match contracts.get(n) {
                Some(c) => redaction::redact(&c, value, from),
                None => Err(NotConnected::new(
                    ReasonCode::SchemaInvalid,
                    format!("no contract for {n}"),
                )),
            },
            None => Err(NotConnected::new(
                ReasonCode::NotPermitted,
                "no negotiation capability",
            )),
        };
        let now = Utc::now();
        let contract = turns.iter().rev().find_map(|t| {
            let grant = t.grant()?;
            let expired = grant["expires_at"]
                .as_str()
                .and_then(|e| DateTime::parse_from_rfc3339(e).ok())
                .is_some_and(|e| e <= now);
            let answer = t.answer.as_ref()?;
            redact(answer, &target.provider).ok().map(|d| (d, expired))
        });
        let newest: Vec<&TurnRecord> = match turns.last() {
            Some(last) => turns
                .iter()
                .filter(|t| t.context_id == last.context_id)
                .collect(),
            None => Vec::new(),
        };
        let (run, detail) = derive_state(&newest, contract.as_ref().map(|(_, e)| *e));
        let turn_inputs = newest
            .iter()
            .map(|t| TurnInput {
                seq: t.seq,
                at: t.at.clone(),
                context_id: t.context_id.clone(),
                sent: redact(&json!({"reply": t.sent, "grant": null}), &consumer),
                answer: match (&t.answer, &t.reason) {
                    (Some(a), _) => redact(a, &target.provider),
                    (None, reason) => Err(NotConnected::new(
                        reason
                            .as_deref()
                            .and_then(|r| ReasonCode::ALL.into_iter().find(|c| c.as_str() == r))
                            .unwrap_or(ReasonCode::PeerError),
                        t.detail.clone(),
                    )),
                },
            })
            .collect();
        parties.push(PartyInput {
            is_hub: consumer == target.hub,
            consumer,
            may_negotiate,
            state: run,
            state_detail: detail,
            contract,
            turns: turn_inputs,
        });
    }
    Ok(contracts_view(
        &target.edge,
        &target.data_capability,
        &target.provider,
        target.negotiation.clone(),
        parties,
    ))
}

/// The run state of a consumer's newest negotiation, from its recorded
/// turns (derived, never stored) and whether the
/// newest contract has expired.
pub fn derive_state(newest: &[&TurnRecord], contract_expired: Option<bool>) -> (RunState, String) {
    let Some(last) = newest.last() else {
        return (
            RunState::Idle,
            "No negotiation has been recorded: nothing to show until one is started.".into(),
        );
    };
    if let Some(reason) = &last.reason {
        let protocol = reason == ReasonCode::SchemaInvalid.as_str() && newest.len() >= 2;
        return (
            RunState::Error,
            if protocol {
                format!("The negotiation ended with a protocol error: the provider's reply broke the schema again after one corrective request ({reason}).")
            } else {
                format!("The last message got no answer: {reason}.")
            },
        );
    }
    if last.grant().is_some() {
        return match contract_expired {
            Some(true) => (
                RunState::Idle,
                "The contract has expired: reads are refused until a new one is negotiated.".into(),
            ),
            _ => (
                RunState::Executing,
                "A contract is granted: reads run under it, decided by the provider on every call."
                    .into(),
            ),
        };
    }
    let intent = last
        .answer
        .as_ref()
        .and_then(|a| a["reply"]["intent"].as_str())
        .unwrap_or("");
    let sent = last.sent["intent"].as_str().unwrap_or("");
    if intent == "reject" || sent == "reject" {
        return (
            RunState::Idle,
            "The last negotiation ended without a contract (rejected).".into(),
        );
    }
    (
        RunState::Negotiating,
        format!("Messages are being exchanged: the provider's last reply was a {intent}."),
    )
}
