//! This peer negotiating a data contract as a consumer (`peer
//! negotiate`): its operator starts it, the hub never does.
//!
//! The provider's negotiable schema comes from its card *as the hub shows
//! it to this peer* (`GET /a2a/{provider}/.well-known/agent-card.json`,
//! the negotiation skill's `column:` tags); every message is one A2A
//! `SendMessage` through the hub's surface, all in one `contextId`, each
//! recorded in this peer's own trail ([`client::call_and_record`]). The
//! agent is the shared deterministic one ([`exchange::negotiator`]).

use std::collections::BTreeSet;

use anyhow::{bail, Context};
use serde_json::Value;

use crate::client::{self, HubCall};
use exchange::audit::AuditTrail;
use exchange::envelope::{TraceParent, CURRENT_VERSION, VERSION_HEADER};
use exchange::inbox::Inbox;
use exchange::negotiation::{columns_on_card, NegotiationMessage};
use exchange::negotiator::{negotiate, NegotiationError, Outcome, Sent, Step, Want};
use exchange::reason::ReasonCode;

/// Reads the negotiable schema of `capability` from `provider`'s card as
/// the hub shows it to this caller.
pub async fn published_columns(
    http: &reqwest::Client,
    base: &HubCall,
) -> anyhow::Result<BTreeSet<String>> {
    let url = format!(
        "{}/.well-known/agent-card.json",
        client::surface_url(&base.hub_url, &base.provider)
    );
    let token = base.bearer.token().await?;
    let resp = http
        .get(&url)
        .timeout(base.timeout)
        .bearer_auth(token.expose())
        .header(VERSION_HEADER, CURRENT_VERSION)
        .send()
        .await
        .with_context(|| format!("the hub at {} cannot be reached", base.hub_url))?;
    let status = resp.status();
    let card: Value = resp
        .json()
        .await
        .with_context(|| format!("the card at {url} is not JSON (HTTP {status})"))?;
    if !status.is_success() {
        bail!(
            "the hub refused the card of {} (HTTP {status}): {card}",
            base.provider
        );
    }
    let columns = columns_on_card(&card, &base.capability);
    if columns.is_empty() {
        bail!(
            "{}'s card shows this caller no skill {} publishing negotiable columns \
             (`column:` tags): no rule lets it negotiate, or the provider offers none",
            base.provider,
            base.capability
        );
    }
    Ok(columns)
}

/// Runs one negotiation through the hub. `base` names the hub, provider
/// and negotiation capability; every message gets its own request id and
/// the same `contextId` and trace.
pub async fn run(
    http: &reqwest::Client,
    base: &HubCall,
    want: &Want,
    trail: &AuditTrail,
    inbox: &Inbox,
) -> anyhow::Result<Result<Outcome, NegotiationError>> {
    let known = published_columns(http, base).await?;
    let context_id = base
        .context_id
        .clone()
        .unwrap_or_else(|| format!("neg-{}", uuid::Uuid::new_v4()));
    let trace = TraceParent::new_root();
    let send = |message: NegotiationMessage| {
        let call = HubCall {
            input: serde_json::to_value(&message).unwrap_or(Value::Null),
            request_id: uuid::Uuid::new_v4().to_string(),
            traceparent: trace.child(),
            context_id: Some(context_id.clone()),
            ..base.clone()
        };
        async move {
            match client::call_and_record(http, &call, trail, inbox).await {
                Ok((answer, _)) => Sent::from(answer.result),
                Err(e) => Sent::Failed {
                    reason: ReasonCode::PeerError.as_str().into(),
                    detail: format!("could not keep the trail: {e}"),
                },
            }
        }
    };
    Ok(negotiate(want, &known, send).await)
}

/// One line per step, as an operator reads a transcript.
pub fn transcript_lines(transcript: &[Step]) -> Vec<String> {
    let mut out = Vec::new();
    for step in transcript {
        out.push(format!(
            "-> consumer:{} {:?} ({} days) {}",
            step.sent.intent.as_str(),
            step.sent.scope.columns,
            step.sent.scope.retention_days,
            step.sent.rationale
        ));
        match &step.reply {
            Ok(r) => out.push(format!(
                "<- provider:{} {:?} ({} days) {}",
                r.intent.as_str(),
                r.scope.columns,
                r.scope.retention_days,
                r.rationale
            )),
            Err(e) => out.push(format!("<- invalid reply: {e}")),
        }
    }
    out
}
