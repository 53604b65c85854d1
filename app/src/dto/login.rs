//! Logging in, and who is logged in: the login form's request, the members
//! whose own identity provider offers a login, and the session the pages
//! read. Built by the hub's `web::ui_auth` (its login, OIDC and session
//! rooms), outside the BFF.

use serde::{Deserialize, Serialize};

/// `POST /api/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginRequest {
    pub username: String,
    pub password: String,
}

/// `GET /api/session`: who is logged in, and the CSRF token every
/// state-changing request must carry in `X-CSRF-Token`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    pub username: String,
    pub csrf_token: String,
    /// What the person may do.
    pub role: crate::access::Role,
    /// The member system a member-scoped person is bound to.
    pub system: Option<String>,
}

/// A member whose own identity provider lets its people log in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginProviderView {
    pub system: String,
    /// Its display name.
    pub name: String,
}

/// `GET /api/login/providers` (public): who offers a login.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginProvidersView {
    pub providers: Vec<LoginProviderView>,
}
