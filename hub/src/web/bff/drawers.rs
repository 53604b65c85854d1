//! What the canvas's drawers show: a data-share edge's query result, a
//! consult edge's answer, the hub's approval inbox, a node's audit lines.
//!
//! The hub is the caller of every drawer call (caller id = the hub's id),
//! through [`Gateway::call`](crate::gateway::Gateway::call) with a fresh
//! envelope ([`crate::edge_calls`], which the agents' read-only tools
//! share), so the rule check, the deadline, the response contract and
//! the hub's audit trail apply exactly as for a peer's call. A failed call
//! is an answer too (`outcome: not_connected` with its reason, HTTP 200):
//! the drawer shows it and everything else keeps working.
//!
//! Peer JSON never reaches the browser as such: every answer goes through
//! [`crate::redaction`] (schema check, then the capability's data-contract
//! whitelist and redaction), and the views these handlers answer with are
//! `Redacted<…View>`s that only the redaction layer can build. Free text
//! from a peer travels as `UntrustedText` (data, never instructions) and
//! proposed actions go to the hub's inbox, where nothing runs them until
//! a logged-in human approves one there ([`super::approvals`]).

use app::dto::{AskRequest, AuditEntryView, ConsultView, QueryRequest, QueryResultView};
use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::BffState;
use crate::api::{ApiFailure, ApiJson, ApiPath, ApiQuery};
use crate::edge_calls::{call_and_redact, check_query, query_input, MAX_QUESTION_BYTES};
use crate::redaction::{self, Redacted};
use crate::registry::model::CapabilityKind;
use crate::store::edges::Edge;
use exchange::envelope::Envelope;
use exchange::inbox::Origin;
use exchange::reason::CallResult;
use exchange::text::clip;

/// Audit lines a drawer gets by default, and at most.
const DEFAULT_AUDIT: u32 = 20;
const MAX_AUDIT: u32 = 200;

/// An edge the drawer may call, with the capability's kind.
fn callable_edge(state: &BffState, id: &str) -> Result<(Edge, CapabilityKind, String), ApiFailure> {
    let loaded = state.registry.snapshot();
    let t = &loaded.topology;
    let edge = state
        .edges
        .get(t, id)
        .ok_or_else(|| ApiFailure::not_found(format!("no edge {}", clip(id, 200))))?;
    let kind = t
        .capability(&edge.capability)
        .map(|c| c.kind)
        .ok_or_else(|| ApiFailure::not_found(format!("no edge {}", clip(id, 200))))?;
    Ok((edge, kind, t.hub.id.clone()))
}

/// `POST /api/edges/{id}/query` (data-share edges).
pub async fn query(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<QueryRequest>,
) -> Result<Redacted<QueryResultView>, ApiFailure> {
    let (edge, kind, _) = callable_edge(&state, &id)?;
    if kind != CapabilityKind::DataShare {
        return Err(ApiFailure::bad_request(format!(
            "{} is a consult edge: ask it a question instead",
            edge.id
        )));
    }
    check_query(&req)?;
    let (_, answer, meta) = call_and_redact(
        &state.gateway,
        &state.registry,
        &edge,
        query_input(&req),
        Envelope::new_root(),
    )
    .await;
    Ok(redaction::query_view(meta, answer.as_ref()))
}

/// `POST /api/edges/{id}/ask` (consult edges).
pub async fn ask(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<AskRequest>,
) -> Result<Redacted<ConsultView>, ApiFailure> {
    let (edge, kind, hub_id) = callable_edge(&state, &id)?;
    if kind != CapabilityKind::Consult {
        return Err(ApiFailure::bad_request(format!(
            "{} is a data-share edge: query it instead",
            edge.id
        )));
    }
    let question = req.question.trim();
    if question.is_empty() || question.len() > MAX_QUESTION_BYTES {
        return Err(ApiFailure::bad_request(format!(
            "a question must be 1 to {MAX_QUESTION_BYTES} bytes"
        )));
    }
    let input = json!({ "question": question });
    let (result, answer, meta) = call_and_redact(
        &state.gateway,
        &state.registry,
        &edge,
        input,
        Envelope::new_root(),
    )
    .await;
    let mut entries = Vec::new();
    if let (
        Ok(redacted),
        CallResult::Connected {
            request_id,
            trace_id,
            ..
        },
    ) = (&answer, &result)
    {
        // The hub asked, so the proposals land in the hub's own inbox,
        // pending; only what the contract kept is stored.
        let actions = redaction::proposed_actions(redacted);
        if !actions.is_empty() {
            let origin = Origin {
                trace_id,
                request_id,
                from_system: &edge.provider,
                capability: &edge.capability,
            };
            let ids = state
                .inbox
                .add_pending(&origin, &actions)
                .await
                .map_err(|e| ApiFailure::internal("storing proposed actions", &e))?;
            for id in ids {
                entries.push(
                    state
                        .inbox
                        .get(id)
                        .await
                        .map_err(|e| ApiFailure::internal("reading the inbox", &e))?,
                );
            }
            tracing::info!(
                edge = %edge.id,
                trace_id = %trace_id,
                count = entries.len(),
                "proposed actions stored in the hub's inbox, pending approval"
            );
            super::approvals::announce(&state).await;
        }
    }
    Ok(redaction::consult_view(
        meta,
        answer.as_ref(),
        super::inbox_view::inbox_view(&entries, &hub_id),
    ))
}

/// `?limit=` of the audit route.
#[derive(Debug, Deserialize)]
pub struct AuditQuery {
    limit: Option<u32>,
}

/// `GET /api/nodes/{id}/audit?limit=20`: the hub's trail lines where the
/// node's system was caller or provider, newest first, without detail.
pub async fn audit(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> Result<Json<Vec<AuditEntryView>>, ApiFailure> {
    let limit = q.limit.unwrap_or(DEFAULT_AUDIT).clamp(1, MAX_AUDIT);
    let system = {
        let loaded = state.registry.snapshot();
        let t = &loaded.topology;
        system_of_node(t, &id)
            .ok_or_else(|| ApiFailure::not_found(format!("no node {}", clip(&id, 200))))?
    };
    let records = state
        .audit
        .recent_involving(&system, limit)
        .await
        .map_err(|e| ApiFailure::internal("reading the audit trail", &e))?;
    Ok(Json(
        records
            .into_iter()
            .map(|r| AuditEntryView {
                at: r.at,
                caller: r.caller,
                provider: r.provider,
                capability: r.capability,
                outcome: r.outcome.as_str().to_string(),
                reason: r.reason,
                duration_ms: r.duration_ms,
                trace_id: r.trace_id,
            })
            .collect(),
    ))
}

/// What `GET /api/nodes/{id}/trail` answers: the export `hub trail
/// export --counterparty <system>` writes as four files, in one
/// document. `hub trail verify --bundle FILE` checks it with no access to
/// the hub.
pub const TRAIL_BUNDLE_FORMAT: &str = "wall-street-trail-bundle/1";

/// `GET /api/nodes/{id}/trail`: the system's part of the hub's trail as a
/// verifiable export (its own records in full, everybody else's as the
/// hashes that keep the chain whole, the signed checkpoints, the keys).
/// 409 while its newest record is newer than the newest checkpoint.
pub async fn trail(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
) -> Result<axum::response::Response, ApiFailure> {
    use axum::response::IntoResponse;
    use exchange::audit::export::ExportError;
    let system = {
        let loaded = state.registry.snapshot();
        system_of_node(&loaded.topology, &id)
            .ok_or_else(|| ApiFailure::not_found(format!("no node {}", clip(&id, 200))))?
    };
    let jwks = state.keys.jwks();
    let dir =
        tempfile::tempdir().map_err(|e| ApiFailure::internal("a directory for the export", &e))?;
    let store = state.audit.store().clone();
    let chain = state.audit.system().to_string();
    match exchange::audit::export::export(&store, Some(&chain), &system, &jwks, dir.path()).await {
        Ok(_) => {}
        Err(e @ (ExportError::NotCovered { .. } | ExportError::NoRecords { .. })) => {
            return Err(ApiFailure::new(
                axum::http::StatusCode::CONFLICT,
                e.to_string(),
            ))
        }
        Err(e) => return Err(ApiFailure::internal("exporting the trail", &e)),
    }
    let bundle = exchange::audit::export::read_bundle(dir.path(), TRAIL_BUNDLE_FORMAT)
        .map_err(|e| ApiFailure::internal("reading the export", &e))?;
    let mut response = Json(bundle).into_response();
    response.headers_mut().insert(
        axum::http::header::CONTENT_DISPOSITION,
        axum::http::HeaderValue::from_str(&format!(
            "attachment; filename=\"trail-{}.json\"",
            exchange::text::clip(&system, 64)
        ))
        .unwrap_or_else(|_| axum::http::HeaderValue::from_static("attachment")),
    );
    Ok(response)
}

/// The system a canvas node belongs to: itself for a system or the hub,
/// its owner for an agent or datasource (`<system>/agent/<id>`).
pub(crate) fn system_of_node(t: &crate::registry::model::Topology, id: &str) -> Option<String> {
    if id == t.hub.id || t.system(id).is_some() {
        return Some(id.to_string());
    }
    let mut parts = id.splitn(3, '/');
    let (system, segment, child) = (parts.next()?, parts.next()?, parts.next()?);
    let s = t.system(system)?;
    let exists = match segment {
        "agent" => s.agents.iter().any(|a| a.id == child),
        "datasource" => s.datasources.iter().any(|d| d.id == child),
        _ => false,
    };
    exists.then(|| system.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_map_to_their_system() {
        let t = crate::registry::load::load_str(
            "config/topology.yaml",
            include_str!("../../../../config/topology.yaml"),
        )
        .expect("valid")
        .topology;
        assert_eq!(system_of_node(&t, "hub").as_deref(), Some("hub"));
        assert_eq!(
            system_of_node(&t, "helpdesk/agent/triage-agent").as_deref(),
            Some("helpdesk")
        );
        assert_eq!(
            system_of_node(&t, "vendorcorp/datasource/orders-db").as_deref(),
            Some("vendorcorp")
        );
        assert_eq!(system_of_node(&t, "helpdesk/agent/nobody"), None);
        assert_eq!(system_of_node(&t, "nobody"), None);
    }
}
