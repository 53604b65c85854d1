//! The hub's approval inbox as the canvas's inbox page uses it: the page's
//! data, and approve/reject by the logged-in user.
//!
//! A decision is taken by the session's user (never a name from the
//! request body), behind the CSRF guard like every state-changing `/api`
//! call. It is stored with who and when next to the proposal's trace id,
//! and appended to the hub's audit trail under that trace id. Approving
//! runs the hub's own local write ([`crate::store::budget_plans`]) in the same
//! transaction; nothing is sent to the system that proposed it.
//!
//! Status codes: 404 no such entry, 409 already decided the other way,
//! 422 this receiver cannot perform the proposal (it stays pending).
//! Repeating the same decision answers 200 with the first decision.

use app::dto::{HubEvent, InboxPageView, InboxPendingView, ProposedActionView};
use axum::extract::State;
use axum::http::StatusCode;
use axum::Extension;

use super::inbox_view::{action_view, inbox_page_view, inbox_view};
use super::{part, BffState};
use crate::api::{ApiFailure, ApiPath};
use crate::web::ui_auth::people::Person;
use crate::web::ui_auth::session::SessionUser;
use app::access::Scope;
use axum::Json;
use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::inbox::{InboxEntry, InboxError, Status};
use exchange::text::clip;

/// Most inbox entries one listing shows.
const MAX_INBOX: usize = 500;

/// `GET /api/inbox/page`: the hub's entries and its own budget plans (a
/// member-scoped person's part: what its system proposed).
pub async fn page(
    State(state): State<BffState>,
    Extension(person): Extension<Person>,
) -> Result<Json<InboxPageView>, ApiFailure> {
    let (entries, hub_id) = inbox_entries(&state, &person.scope).await?;
    let mut plans = crate::store::budget_plans::list(state.inbox.store().pool())
        .await
        .map_err(|e| ApiFailure::internal("reading the budget plans", &e))?;
    part::budget_plans(&mut plans, &person.scope);
    Ok(Json(inbox_page_view(&entries, &hub_id, &plans)))
}

/// `GET /api/inbox`: the hub's approval inbox, newest first.
pub async fn inbox(
    State(state): State<BffState>,
    Extension(person): Extension<Person>,
) -> Result<Json<Vec<ProposedActionView>>, ApiFailure> {
    let (entries, hub_id) = inbox_entries(&state, &person.scope).await?;
    Ok(Json(inbox_view(&entries, &hub_id)))
}

/// The hub's inbox entries of `scope`'s part (newest first, at most
/// [`MAX_INBOX`]) and its id.
pub(super) async fn inbox_entries(
    state: &BffState,
    scope: &Scope,
) -> Result<(Vec<exchange::inbox::InboxEntry>, String), ApiFailure> {
    let hub_id = state.registry.snapshot().topology.hub.id.clone();
    let mut entries = state
        .inbox
        .list(None)
        .await
        .map_err(|e| ApiFailure::internal("reading the inbox", &e))?;
    part::inbox_entries(&mut entries, scope);
    entries.truncate(MAX_INBOX);
    Ok((entries, hub_id))
}

/// `GET /api/inbox/pending`: the count the canvas's Inbox link shows (a
/// member-scoped person's: its own proposals that wait).
pub async fn pending(
    State(state): State<BffState>,
    Extension(person): Extension<Person>,
) -> Result<axum::Json<InboxPendingView>, ApiFailure> {
    let pending = match person.scope.member() {
        None => state.inbox.pending_count().await,
        Some(_) => state.inbox.list(Some(Status::Pending)).await.map(|mut e| {
            part::inbox_entries(&mut e, &person.scope);
            e.len() as u64
        }),
    }
    .map_err(|e| ApiFailure::internal("counting the inbox", &e))?;
    Ok(axum::Json(InboxPendingView { pending }))
}

/// Tells open pages how many proposals wait now (after one arrived or a
/// decision was taken), here and in the other replicas. A count that
/// cannot be read is only logged: the change itself already happened.
pub(super) async fn announce(state: &BffState) {
    state.cluster.announce(crate::cluster::Change::Inbox);
    match state.inbox.pending_count().await {
        Ok(pending) => state.events.publish(HubEvent::InboxChanged { pending }),
        Err(e) => tracing::warn!(error = %e, "could not count the inbox for the live channel"),
    }
}

/// `POST /api/inbox/{id}/approve`.
pub async fn approve(
    state: State<BffState>,
    user: Extension<SessionUser>,
    id: ApiPath<i64>,
) -> Result<Json<ProposedActionView>, ApiFailure> {
    decide(state, user, id, Status::Approved).await
}

/// `POST /api/inbox/{id}/reject`.
pub async fn reject(
    state: State<BffState>,
    user: Extension<SessionUser>,
    id: ApiPath<i64>,
) -> Result<Json<ProposedActionView>, ApiFailure> {
    decide(state, user, id, Status::Rejected).await
}

async fn decide(
    State(state): State<BffState>,
    Extension(user): Extension<SessionUser>,
    ApiPath(id): ApiPath<i64>,
    wanted: Status,
) -> Result<Json<ProposedActionView>, ApiFailure> {
    let hub_id = state.registry.snapshot().topology.hub.id.clone();
    let trail = state.audit.system().to_string();
    // The decision's trail line commits with the decision itself.
    let note = |entry: &InboxEntry| decision_line(&trail, &hub_id, entry);
    let decided = match wanted {
        Status::Approved => {
            state
                .inbox
                .approve_noted(id, &user.username, Some(&note))
                .await
        }
        _ => {
            state
                .inbox
                .reject_noted(id, &user.username, Some(&note))
                .await
        }
    }
    .map_err(failure)?;
    if decided.decided_now {
        announce(&state).await;
    }
    Ok(Json(action_view(&decided.entry, &hub_id)))
}

/// One line in the hub's trail (`trail`), under the proposal's trace id:
/// who decided what (the entry itself holds when).
fn decision_line(trail: &str, hub_id: &str, entry: &InboxEntry) -> AuditRecord {
    let (outcome, verb) = match entry.status {
        Status::Approved => (Outcome::Executed, "approved"),
        _ => (Outcome::Refused, "rejected"),
    };
    let detail = format!(
        "inbox entry {} ({}) {verb} by {}{}",
        entry.id,
        clip(&entry.action_type, 64),
        entry.decided_by.as_deref().unwrap_or("?"),
        entry
            .effect
            .as_deref()
            .map(|e| format!("; local write: {e}"))
            .unwrap_or_default()
    );
    AuditRecord {
        system: trail.to_string(),
        role: Role::Caller,
        at: exchange::audit::now(),
        caller: hub_id.to_string(),
        provider: clip(&entry.from_system, 64),
        capability: clip(&entry.capability, 64),
        request_id: entry.request_id.clone(),
        trace_id: entry.trace_id.clone(),
        outcome,
        reason: None,
        duration_ms: 0,
        detail,
    }
}

fn failure(e: InboxError) -> ApiFailure {
    match e {
        InboxError::NotFound(_) => ApiFailure::not_found(e.to_string()),
        InboxError::AlreadyDecided { .. } => ApiFailure::new(StatusCode::CONFLICT, e.to_string()),
        InboxError::NotExecutable { .. } => {
            ApiFailure::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
        }
        InboxError::NoDecider => ApiFailure::bad_request(e.to_string()),
        InboxError::Store(_) | InboxError::Corrupt(_) => ApiFailure::internal("the inbox", &e),
    }
}
