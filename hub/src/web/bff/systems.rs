//! The operator changes the exchange from the canvas (the `onboarding`
//! module decides; these are its routes):
//!
//! * `POST /api/systems/discover` — the hub reads a would-be member's card
//!   and `/health` from its side and proposes a topology section;
//! * `POST /api/systems` — saves an edited section: the server's identity
//!   is checked again, the token generated, the file written; the answer
//!   carries the token, the only answer that ever does (`no-store`);
//! * `DELETE /api/systems/{id}` — removes a system and what names it;
//! * `PUT /api/rules/consumers` — a consumer added to a rule or taken off.
//!
//! Each write names the digest of the topology file the operator saw and
//! is refused (409) if the file changed since. Each is behind the session
//! guard with its CSRF and origin checks (a state-changing route of the
//! table), and each — written or refused — is a line of the hub's audit
//! trail naming the operator.

use app::dto::{
    AddSystemRequest, CredentialIssued, DiscoverRequest, OnboardingProposal, RuleConsumerRequest,
    SystemAdded, TopologyBase,
};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::{Extension, Json};
use exchange::text::clip;

use super::BffState;
use crate::api::{ApiFailure, ApiJson, ApiPath};
use crate::onboarding::fetch::{self, FetchError};
use crate::onboarding::section::Section;
use crate::onboarding::{changes, proposal};
use crate::registry::write::{WriteError, Written};
use crate::web::ui_auth::people::Person;
use crate::web::ui_auth::session::SessionUser;

/// What the audit trail names as the capability of a topology write.
const AUDIT_CAPABILITY: &str = "topology";

/// `POST /api/systems/discover`.
pub async fn discover(
    State(state): State<BffState>,
    Extension(user): Extension<SessionUser>,
    ApiJson(req): ApiJson<DiscoverRequest>,
) -> Result<Json<OnboardingProposal>, ApiFailure> {
    let fetched = fetch::discover(&state.onboarding, &req.base_url)
        .await
        .map_err(fetch_failure)?;
    let base = file_digest(&state).await?;
    let loaded = state.registry.snapshot();
    let t = &loaded.topology;
    if t.system(&fetched.system).is_some() {
        return Err(ApiFailure::new(
            StatusCode::CONFLICT,
            format!(
                "a system `{}` already exists ({} answers as it)",
                fetched.system, fetched.base_url
            ),
        ));
    }
    tracing::info!(operator = %user.username, system = %fetched.system, "card read for onboarding");
    Ok(Json(proposal::propose(&fetched, t, &base)))
}

/// `POST /api/systems`: 201 with the one-time credential.
pub async fn add(
    State(state): State<BffState>,
    Extension(user): Extension<SessionUser>,
    ApiJson(req): ApiJson<AddSystemRequest>,
) -> Result<Response, ApiFailure> {
    let section = Section::parse(&req.section)
        .map_err(|e| ApiFailure::new(StatusCode::UNPROCESSABLE_ENTITY, e))?;
    let id = section.system.id.clone();
    let token_env = section.system.token_env.clone();
    // Everything that can refuse the change without a request to the
    // system is asked first: a section that will not be written sends
    // nothing to the address it names.
    let dry = section.clone();
    let planned = state
        .registry
        .check_change(&req.base, move |loaded| {
            changes::join(&loaded.topology, dry, None)
        })
        .await;
    if let Err(e) = planned {
        let failure = write_failure(e);
        audit(&state, &user, "add", &id, Err(&failure.body.error)).await;
        return Err(failure);
    }
    let checked = async {
        let base = fetch::base_url(&section.system.base_url)?;
        let answered = fetch::identity(&state.onboarding, &base).await?;
        if answered != id {
            return Err(FetchError::Identity {
                why: format!(
                    "{} answers as system `{answered}`, not `{id}`",
                    base.as_str().trim_end_matches('/')
                ),
            });
        }
        Ok(())
    };
    if let Err(e) = checked.await {
        let failure = fetch_failure(e);
        audit(&state, &user, "add", &id, Err(&failure.body.error)).await;
        return Err(failure);
    }
    // The hub makes the system's credential and keeps it in its store;
    // whatever its environment holds under that name is never adopted.
    let credential = crate::registry::credentials::new_credential();
    let kept = Some(credential.clone());
    let written = state
        .registry
        .change(&req.base, move |loaded| {
            changes::join(&loaded.topology, section, kept)
        })
        .await;
    let written = audited(&state, &user, "add", &id, written).await?;
    credential_line(
        &state,
        &user.username,
        &id,
        &format!("make the credential {token_env} of"),
        Ok(""),
    )
    .await;
    Ok(super::people::shown_once(
        StatusCode::CREATED,
        SystemAdded {
            system: id,
            token_env,
            credential,
            base: written.after,
        },
    ))
}

/// `POST /api/systems/{id}/credential` (an admin's): the system's new
/// credential, kept in the hub's credential store and shown in this
/// answer only; the old one stops authenticating at once.
pub async fn rotate_credential(
    State(state): State<BffState>,
    Extension(admin): Extension<Person>,
    ApiPath(id): ApiPath<String>,
) -> Result<Response, ApiFailure> {
    let credential = crate::registry::credentials::new_credential();
    let kept = state
        .registry
        .keep_credential(&id, credential.clone())
        .await;
    let action = "rotate the credential of";
    match kept {
        Ok(token_env) => {
            let note = format!("{token_env} replaced");
            credential_line(&state, &admin.username, &id, action, Ok(&note)).await;
            let base = file_digest(&state).await?;
            Ok(super::people::shown_once(
                StatusCode::OK,
                CredentialIssued {
                    system: id,
                    token_env,
                    credential,
                    base,
                },
            ))
        }
        Err(e) => {
            let failure = match e {
                WriteError::Refused(_) => ApiFailure::not_found(e.to_string()),
                e => write_failure(e),
            };
            credential_line(
                &state,
                &admin.username,
                &id,
                action,
                Err(&failure.body.error),
            )
            .await;
            Err(failure)
        }
    }
}

/// A credential event of system `system` in the hub's trail (never the
/// credential).
async fn credential_line(
    state: &BffState,
    who: &str,
    system: &str,
    action: &str,
    outcome: Result<&str, &str>,
) {
    let action = format!("{action} {system}");
    super::audit::append(
        state,
        super::audit::Line {
            who,
            capability: "credential",
            subject: system,
            action: &action,
            outcome,
        },
    )
    .await;
}

/// `DELETE /api/systems/{id}`: 200 with the file's new digest.
pub async fn remove(
    State(state): State<BffState>,
    Extension(user): Extension<SessionUser>,
    ApiPath(id): ApiPath<String>,
    ApiJson(req): ApiJson<TopologyBase>,
) -> Result<Json<TopologyBase>, ApiFailure> {
    let target = id.clone();
    let written = state
        .registry
        .change(&req.base, move |loaded| {
            changes::leave(&loaded.topology, &target)
        })
        .await;
    let written = audited(&state, &user, "remove", &id, written).await?;
    credential_line(
        &state,
        &user.username,
        &id,
        "forget the credential of",
        Ok(""),
    )
    .await;
    Ok(Json(TopologyBase {
        base: written.after,
    }))
}

/// `PUT /api/rules/consumers`: 200 with the file's new digest.
pub async fn set_consumer(
    State(state): State<BffState>,
    Extension(user): Extension<SessionUser>,
    Extension(person): Extension<Person>,
    ApiJson(req): ApiJson<RuleConsumerRequest>,
) -> Result<Json<TopologyBase>, ApiFailure> {
    // A rule's provider decides who may call it: a member-scoped operator
    // edits the rules of what its own system provides.
    super::part::may_touch(&person, &[&req.provider])?;
    let action = if req.member {
        format!("let call {} of {}", req.capability, req.provider)
    } else {
        format!("stop calling {} of {}", req.capability, req.provider)
    };
    let consumer = req.consumer.clone();
    let written = state
        .registry
        .change(&req.base, move |loaded| {
            changes::set_consumer(
                &loaded.topology,
                &req.capability,
                &req.provider,
                &req.consumer,
                req.member,
            )
        })
        .await;
    let written = audited(&state, &user, &action, &consumer, written).await?;
    Ok(Json(TopologyBase {
        base: written.after,
    }))
}

/// The digest of the topology file as it is on disk now.
async fn file_digest(state: &BffState) -> Result<String, ApiFailure> {
    let text = tokio::fs::read_to_string(state.registry.source())
        .await
        .map_err(|e| ApiFailure::internal("reading the topology file", &e))?;
    Ok(exchange::wire::text_digest(&text))
}

/// Audits a write's outcome and turns a refusal into its answer.
async fn audited(
    state: &BffState,
    user: &SessionUser,
    action: &str,
    system: &str,
    written: Result<Written, WriteError>,
) -> Result<Written, ApiFailure> {
    match written {
        Ok(w) => {
            let detail = format!(
                "topology sha256 {} -> {}",
                clip(&w.before, 12),
                clip(&w.after, 12)
            );
            audit(state, user, action, system, Ok(&detail)).await;
            Ok(w)
        }
        Err(e) => {
            let failure = write_failure(e);
            audit(state, user, action, system, Err(&failure.body.error)).await;
            Err(failure)
        }
    }
}

/// One line of the hub's trail: operator `user` did (or tried) `action`
/// on `system`.
async fn audit(
    state: &BffState,
    user: &SessionUser,
    action: &str,
    system: &str,
    outcome: Result<&str, &str>,
) {
    let action = format!("{action} {system}");
    super::audit::append(
        state,
        super::audit::Line {
            who: &format!("operator {}", user.username),
            capability: AUDIT_CAPABILITY,
            subject: system,
            action: &action,
            outcome,
        },
    )
    .await;
}

fn fetch_failure(e: FetchError) -> ApiFailure {
    let status = match e {
        FetchError::BadUrl { .. } | FetchError::Address { .. } => StatusCode::BAD_REQUEST,
        FetchError::Unreachable { .. } | FetchError::Timeout { .. } => StatusCode::BAD_GATEWAY,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    ApiFailure::new(status, e.to_string())
}

fn write_failure(e: WriteError) -> ApiFailure {
    match e {
        WriteError::Changed | WriteError::CurrentInvalid(_) => {
            ApiFailure::new(StatusCode::CONFLICT, e.to_string())
        }
        WriteError::Invalid(ref load) => ApiFailure::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("{e}:\n{}", load.public_message()),
        ),
        WriteError::Refused(_) | WriteError::Edit(_) => {
            ApiFailure::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
        }
        WriteError::Credentials(_) | WriteError::Io { .. } | WriteError::Stopped => {
            tracing::error!(error = %e, "writing the topology file");
            ApiFailure::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the hub could not write its topology file (see the hub log); nothing changed",
            )
        }
    }
}
