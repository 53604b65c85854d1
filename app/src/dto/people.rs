//! The people page: the hub's people, their roles and scope, and a
//! password the hub made for one. Built by the hub's `web::bff::people`.

use serde::{Deserialize, Serialize};

/// A person of the hub, as the people page shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonView {
    pub username: String,
    pub role: crate::access::Role,
    /// The member system they are bound to; `None`: exchange-wide.
    pub system: Option<String>,
    /// Who made the entry: `file` (the UI users file), `admin`, `oidc`
    /// (a member's identity provider, at their login).
    pub origin: String,
}

/// `GET /api/people`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeopleView {
    pub people: Vec<PersonView>,
}

/// `POST /api/people`: a new person; the hub makes their password.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPersonRequest {
    pub username: String,
    pub role: crate::access::Role,
    /// Bind them to this member system; `None`: exchange-wide.
    #[serde(default)]
    pub system: Option<String>,
}

/// `PUT /api/people/{id}`: a person's new role and scope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonUpdate {
    pub role: crate::access::Role,
    #[serde(default)]
    pub system: Option<String>,
}

/// A password the hub made for a person, shown this once
/// (`Cache-Control: no-store`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasswordIssued {
    pub username: String,
    pub password: String,
}
