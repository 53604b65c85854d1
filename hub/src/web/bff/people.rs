//! People and roles, an admin's routes (the people page, and `hub people`
//! on the command line, change the same store):
//!
//! * `GET /api/people` — everybody, with their role, scope and origin;
//! * `POST /api/people` — a new person; the hub makes their password and
//!   shows it in this answer only (`no-store`);
//! * `PUT /api/people/{name}` — a new role or scope: their open event
//!   streams close, and their next request has the new powers;
//! * `DELETE /api/people/{name}` — removed: logged out at their next
//!   request, their streams closed;
//! * `POST /api/people/{name}/password` — a new password, shown once.
//!
//! Each change — made or refused — is a line of the hub's audit trail
//! naming the admin. A change that would leave no exchange-wide admin is
//! refused, as is a change of a person the UI users file provisions (its
//! operator owns those).

use app::access::Scope;
use app::dto::{NewPersonRequest, PasswordIssued, PeopleView, PersonUpdate, PersonView};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};

use super::BffState;
use crate::api::{ApiFailure, ApiJson, ApiPath};
use crate::web::ui_auth::people::{PeopleError, Person};

/// `GET /api/people`.
pub async fn list(State(state): State<BffState>) -> Json<PeopleView> {
    Json(PeopleView {
        people: state.people.list().iter().map(Person::view).collect(),
    })
}

/// `POST /api/people`: 201 with the new person's password.
pub async fn add(
    State(state): State<BffState>,
    Extension(admin): Extension<Person>,
    ApiJson(req): ApiJson<NewPersonRequest>,
) -> Result<Response, ApiFailure> {
    let scope = scope_of(&state, req.system.as_deref())?;
    let action = format!("add {} as {}", req.username, describe(req.role, &scope));
    let added = state.people.add(&req.username, req.role, scope, None).await;
    let password = audited(&state, &admin, &action, added).await?;
    Ok(shown_once(
        StatusCode::CREATED,
        PasswordIssued {
            username: req.username,
            password,
        },
    ))
}

/// `PUT /api/people/{name}`: the person as they are now.
pub async fn update(
    State(state): State<BffState>,
    Extension(admin): Extension<Person>,
    ApiPath(username): ApiPath<String>,
    ApiJson(req): ApiJson<PersonUpdate>,
) -> Result<Json<PersonView>, ApiFailure> {
    let scope = scope_of(&state, req.system.as_deref())?;
    let action = format!("make {username} {}", describe(req.role, &scope));
    let updated = state.people.update(&username, req.role, scope).await;
    audited(&state, &admin, &action, updated).await?;
    state
        .people
        .get(&username)
        .map(|p| Json(p.view()))
        .ok_or_else(|| ApiFailure::not_found(format!("nobody is called `{username}` here")))
}

/// `DELETE /api/people/{name}`: 204.
pub async fn remove(
    State(state): State<BffState>,
    Extension(admin): Extension<Person>,
    ApiPath(username): ApiPath<String>,
) -> Result<StatusCode, ApiFailure> {
    let removed = state.people.remove(&username).await;
    audited(&state, &admin, &format!("remove {username}"), removed).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/people/{name}/password`: 200 with the new password.
pub async fn reset_password(
    State(state): State<BffState>,
    Extension(admin): Extension<Person>,
    ApiPath(username): ApiPath<String>,
) -> Result<Response, ApiFailure> {
    let reset = state.people.reset_password(&username).await;
    let action = format!("give {username} a new password");
    let password = audited(&state, &admin, &action, reset).await?;
    Ok(shown_once(
        StatusCode::OK,
        PasswordIssued { username, password },
    ))
}

/// `system` as a scope: a member system the registry knows, or the whole
/// exchange.
fn scope_of(state: &BffState, system: Option<&str>) -> Result<Scope, ApiFailure> {
    match system.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(Scope::Exchange),
        Some(id) if state.registry.snapshot().topology.system(id).is_some() => {
            Ok(Scope::Member(id.to_string()))
        }
        Some(id) => Err(ApiFailure::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "no member system `{}` to bind a person to",
                exchange::text::clip(id, 64)
            ),
        )),
    }
}

fn describe(role: app::access::Role, scope: &Scope) -> String {
    match scope.member() {
        None => format!("{role} of the exchange"),
        Some(system) => format!("{role} of {system}"),
    }
}

/// An answer carrying a secret: never stored by a cache.
pub(super) fn shown_once<T: serde::Serialize>(status: StatusCode, body: T) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Audits a change of the people and turns a refusal into its answer.
async fn audited<T>(
    state: &BffState,
    admin: &Person,
    action: &str,
    done: Result<T, PeopleError>,
) -> Result<T, ApiFailure> {
    let (outcome, failure) = match &done {
        Ok(_) => (Ok(()), None),
        Err(e) => {
            let failure = people_failure(e);
            (Err(failure.body.error.clone()), Some(failure))
        }
    };
    let hub = state.registry.snapshot().topology.hub.id.clone();
    let outcome = match &outcome {
        Ok(()) => Ok(""),
        Err(why) => Err(why.as_str()),
    };
    super::audit::append(
        state,
        super::audit::Line {
            who: &admin.username,
            capability: "people",
            subject: &hub,
            action,
            outcome,
        },
    )
    .await;
    match (done, failure) {
        (Ok(v), _) => Ok(v),
        (Err(_), Some(f)) => Err(f),
        (Err(e), None) => Err(people_failure(&e)),
    }
}

fn people_failure(e: &PeopleError) -> ApiFailure {
    let status = match e {
        PeopleError::Store(_) | PeopleError::Hash(_) => {
            tracing::error!(error = %e, "changing the people");
            return ApiFailure::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the hub could not change its people store (see the hub log); nothing changed",
            );
        }
        PeopleError::Unknown(_) => StatusCode::NOT_FOUND,
        PeopleError::Exists(_) | PeopleError::LastAdmin | PeopleError::FromFile(_) => {
            StatusCode::CONFLICT
        }
        PeopleError::BadUsername | PeopleError::ScopedAdmin => StatusCode::UNPROCESSABLE_ENTITY,
    };
    ApiFailure::new(status, e.to_string())
}
