//! The routes of the hub's own agents (DESIGN.md §5). Dispatch starts at
//! the BFF's static route table: it picks the specialist, and the
//! specialist builds the orchestrator.
//!
//! * `GET /api/agents`: what the canvas may offer ([`AgentsView`]).
//! * `GET /api/recommendations`: the recommender.
//! * `POST /api/nodes/{id}/interpret`: the data interpreter.
//!
//! The prompts' language is the browser's (`Accept-Language`).

use app::dto::{AgentsView, InterpretationView, RecommendationsView};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;

use super::BffState;
use crate::agents::{self, interpreter, recommender, tools};
use crate::api::{ApiFailure, ApiPath};

/// What the agents' tools read, from the BFF's state.
pub fn tool_context(state: &BffState) -> tools::Context {
    tools::Context {
        registry: state.registry.clone(),
        edges: state.edges.clone(),
        board: state.board.clone(),
        gateway: state.gateway.clone(),
        audit: state.audit.clone(),
    }
}

/// `GET /api/agents`.
pub async fn agents(State(state): State<BffState>) -> Json<AgentsView> {
    Json(state.agents.view())
}

/// `GET /api/recommendations`.
pub async fn recommendations(
    State(state): State<BffState>,
    axum::Extension(person): axum::Extension<crate::web::ui_auth::people::Person>,
    headers: HeaderMap,
) -> Result<Json<RecommendationsView>, ApiFailure> {
    if !state.agents.view().recommender {
        return Err(ApiFailure::not_found("the recommender is switched off"));
    }
    let lang = agents::request_language(&headers);
    let mut view = recommender::recommend(&state.agents, &tool_context(&state), &lang).await;
    if person.scope.member().is_some() {
        // The orchestrator's run reads the whole exchange: not a member's.
        view.transcript = None;
    }
    Ok(Json(super::part::recommendations(view, &person.scope)))
}

/// `POST /api/nodes/{id}/interpret`.
pub async fn interpret(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
    headers: HeaderMap,
) -> Result<Json<InterpretationView>, ApiFailure> {
    let lang = agents::request_language(&headers);
    interpreter::interpret(&state.agents, &tool_context(&state), &id, &lang)
        .await
        .map(Json)
        .map_err(|e| ApiFailure::not_found(e.to_string()))
}
