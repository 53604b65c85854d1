//! Making and removing edges from the canvas, and saving node positions
//! (DESIGN.md §4, "Drag a connection": the server re-checks the rule; the
//! browser is never trusted).

use app::dto::{CreateEdgeRequest, EdgeView, HubEvent, ReasonCode, SavePositionsRequest};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::topology::edge_view;
use super::BffState;
use crate::api::{ApiFailure, ApiJson, ApiPath};
use crate::cluster::Change;
use crate::store::edges::EdgeError;
use crate::web::ui_auth::people::Person;
use axum::Extension;

/// `POST /api/edges`: 201 with the edge, or the reason it was refused.
pub async fn create(
    State(state): State<BffState>,
    Extension(person): Extension<Person>,
    ApiJson(req): ApiJson<CreateEdgeRequest>,
) -> Result<(StatusCode, Json<EdgeView>), ApiFailure> {
    super::part::may_touch(&person, &[&req.consumer, &req.provider])?;
    let loaded = state.registry.snapshot();
    let t = &loaded.topology;
    let edge = state
        .edges
        .create(&loaded, &req.consumer, &req.provider, &req.capability)
        .await
        .map_err(edge_failure)?;
    tracing::info!(edge = %edge.id, "edge established");
    state.events.publish(HubEvent::TopologyChanged);
    state.cluster.announce(Change::Edges);
    let view = edge_view(t, &state.board, &edge).ok_or_else(|| {
        ApiFailure::new(
            StatusCode::CONFLICT,
            "the capability left the registry while the edge was made",
        )
    })?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// `DELETE /api/edges/{id}`: 204, or 404 when there is no such edge.
pub async fn remove(
    State(state): State<BffState>,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiFailure> {
    state.edges.delete(&id).await.map_err(edge_failure)?;
    tracing::info!(edge = %id, "edge removed");
    state.events.publish(HubEvent::TopologyChanged);
    state.cluster.announce(Change::Edges);
    Ok(StatusCode::NO_CONTENT)
}

/// `PUT /api/positions`: 204; merged with the stored positions.
pub async fn save_positions(
    State(state): State<BffState>,
    ApiJson(req): ApiJson<SavePositionsRequest>,
) -> Result<StatusCode, ApiFailure> {
    let positions: Vec<(String, f64, f64)> = req
        .positions
        .into_iter()
        .map(|p| (p.node, p.x, p.y))
        .collect();
    state
        .edges
        .save_positions(&positions)
        .await
        .map_err(edge_failure)?;
    state.cluster.announce(Change::Edges);
    Ok(StatusCode::NO_CONTENT)
}

/// The HTTP face of each refusal: the registry's verdicts carry their
/// reason code, the store's failure does not reach the browser.
fn edge_failure(e: EdgeError) -> ApiFailure {
    match &e {
        EdgeError::UnknownSystem(_) => ApiFailure::with_reason(
            StatusCode::NOT_FOUND,
            ReasonCode::UnknownPeer,
            e.to_string(),
        ),
        EdgeError::Refused(nc) => ApiFailure::with_reason(
            if nc.reason == ReasonCode::UnknownPeer {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::FORBIDDEN
            },
            nc.reason,
            e.to_string(),
        ),
        EdgeError::Exists(_) => ApiFailure::new(StatusCode::CONFLICT, e.to_string()),
        EdgeError::NotFound(_) => ApiFailure::not_found(e.to_string()),
        EdgeError::BadPosition(_) => ApiFailure::bad_request(e.to_string()),
        EdgeError::Store(_) => ApiFailure::internal("the edge store", &e),
    }
}
