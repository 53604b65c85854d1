//! UI sessions: a cookie holding only a random id, the session itself in
//! the hub's store (DESIGN.md §3: sessions are hub state), so a hub
//! restart does not log anybody out, and every replica on one PostgreSQL
//! database knows every session (`tower-sessions-sqlx-store`'s SQLite or
//! PostgreSQL store, on a native pool of the same database).
//!
//! The cookie is `ws_session`, `HttpOnly` (no script reads it),
//! `SameSite=Strict` (no other site's page makes the browser send it),
//! path `/`, and expires after 8 hours without a request. It is `Secure`
//! when the hub is served over TLS: `WS_PUBLIC_URL` (the address people
//! open, at a TLS-terminating load balancer) starts with `https://`. The
//! loopback demo serves plain HTTP, where a `Secure` cookie would never be
//! sent back ([`SessionSettings::from_env`]).

use app::dto::SessionView;
use async_trait::async_trait;
use exchange::db::Location;
use serde::{Deserialize, Serialize};
use tower_sessions::cookie::SameSite;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store;
use tower_sessions::{ExpiredDeletion, Expiry, Session, SessionManagerLayer};
use tower_sessions_sqlx_store::{PostgresStore, SqliteStore};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "ws_session";
/// A session ends after this long without a request.
pub const IDLE_HOURS: i64 = 8;
/// Where in the session the logged-in user is kept.
const USER_KEY: &str = "ui_user";
/// How often expired sessions are swept from the store.
const SWEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(600);

/// Cookie settings that differ between the loopback demo and a deployment.
/// The default is the demo's: not `Secure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionSettings {
    /// Send the cookie over HTTPS only. Off for the loopback HTTP demo.
    pub secure: bool,
}

/// The hub's public address(es); an `https://` primary means TLS.
pub use crate::net::machine::PUBLIC_URL_ENV;

impl SessionSettings {
    /// From [`PUBLIC_URL_ENV`]: unset means the loopback demo (plain HTTP).
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(PUBLIC_URL_ENV) {
            Err(_) => Ok(Self::default()),
            Ok(url) => Self::for_public_url(&url),
        }
    }

    /// For a hub people reach at `urls` (its public addresses, the
    /// primary first: `http://…` or `https://…`).
    pub fn for_public_url(urls: &str) -> Result<Self, String> {
        crate::net::machine::PublicUrls::parse(urls).map(|p| Self { secure: p.is_tls() })
    }
}

/// Who is logged in to a session, and the session's CSRF token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionUser {
    /// The UI username.
    pub username: String,
    /// The token every state-changing request of this session must carry.
    pub csrf_token: String,
}

impl SessionUser {
    /// What `GET /api/session` answers, for the session's `person` as the
    /// people store knows them now.
    pub fn view(&self, person: &super::people::Person) -> SessionView {
        SessionView {
            username: self.username.clone(),
            csrf_token: self.csrf_token.clone(),
            role: person.role,
            system: person.scope.member().map(str::to_string),
        }
    }
}

/// What a session's event streams are known by when it ends: a digest of
/// its id (the id itself is the cookie's secret and travels nowhere else).
pub fn stream_key(session: &Session) -> Option<String> {
    use sha2::Digest;
    let id = session.id()?.to_string();
    let digest = sha2::Sha256::digest(id.as_bytes());
    Some(digest.iter().take(16).map(|b| format!("{b:02x}")).collect())
}

/// Why the session store failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Opening the store's database failed.
    #[error("session store: {0}")]
    Open(String),
    /// Creating the sessions table failed.
    #[error("session store: {0}")]
    Store(#[from] sqlx::Error),
    /// Reading or writing a session failed.
    #[error("session: {0}")]
    Session(#[from] tower_sessions::session::Error),
}

/// The session store in the hub's database: the crate's store for the
/// hub's engine.
#[derive(Debug, Clone)]
pub enum SessionStore {
    /// In the hub's SQLite file.
    Sqlite(SqliteStore),
    /// In the replicas' PostgreSQL database.
    Postgres(PostgresStore),
}

/// How many times creating the sessions table is tried: replicas starting
/// together race on PostgreSQL's `CREATE … IF NOT EXISTS`.
const MIGRATE_TRIES: u32 = 5;

impl SessionStore {
    /// Opens the store in the hub's database at `location` (a pool of its
    /// own: the crate's stores take a native one), creating its table.
    pub async fn open(location: &Location) -> Result<Self, SessionError> {
        let store = match location {
            Location::File(path) => Self::Sqlite(SqliteStore::new(
                exchange::db::open_sqlite(path)
                    .await
                    .map_err(|e| SessionError::Open(e.to_string()))?,
            )),
            Location::Memory => Self::Sqlite(SqliteStore::new(
                exchange::db::memory_sqlite()
                    .await
                    .map_err(|e| SessionError::Open(e.to_string()))?,
            )),
            Location::Postgres(url) => Self::Postgres(PostgresStore::new(
                sqlx::postgres::PgPoolOptions::new()
                    .max_connections(4)
                    .connect(url)
                    .await?,
            )),
        };
        let mut tries = 0;
        loop {
            let done = match &store {
                Self::Sqlite(s) => s.migrate().await,
                Self::Postgres(s) => s.migrate().await,
            };
            match done {
                Ok(()) => return Ok(store),
                Err(e) if tries + 1 < MIGRATE_TRIES => {
                    tracing::debug!(error = %e, "creating the sessions table; trying again");
                    tries += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The layer that loads a request's session and sets its cookie.
    pub fn layer(&self, settings: SessionSettings) -> SessionManagerLayer<SessionStore> {
        SessionManagerLayer::new(self.clone())
            .with_name(SESSION_COOKIE)
            .with_http_only(true)
            .with_same_site(SameSite::Strict)
            .with_secure(settings.secure)
            .with_path("/")
            .with_expiry(Expiry::OnInactivity(time::Duration::hours(IDLE_HOURS)))
            // Saving on every request is what moves the inactivity expiry
            // forward; without it a busy operator is logged out after 8 h.
            .with_always_save(true)
    }

    /// Deletes expired sessions now and then, forever (a background task).
    pub async fn sweep_expired(self) {
        if let Err(e) = self.continuously_delete_expired(SWEEP_EVERY).await {
            tracing::warn!(error = %e, "sweeping expired UI sessions stopped");
        }
    }
}

#[async_trait]
impl session_store::SessionStore for SessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        match self {
            Self::Sqlite(s) => s.create(record).await,
            Self::Postgres(s) => s.create(record).await,
        }
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        match self {
            Self::Sqlite(s) => s.save(record).await,
            Self::Postgres(s) => s.save(record).await,
        }
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self {
            Self::Sqlite(s) => s.load(id).await,
            Self::Postgres(s) => s.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        match self {
            Self::Sqlite(s) => s.delete(id).await,
            Self::Postgres(s) => s.delete(id).await,
        }
    }
}

#[async_trait]
impl ExpiredDeletion for SessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        match self {
            Self::Sqlite(s) => s.delete_expired().await,
            Self::Postgres(s) => s.delete_expired().await,
        }
    }
}

/// The logged-in user of `session`, if any.
pub async fn current_user(session: &Session) -> Result<Option<SessionUser>, SessionError> {
    Ok(session.get::<SessionUser>(USER_KEY).await?)
}

/// Logs `username` in: a new session id (so an id planted before login is
/// worthless after it), a new CSRF token.
pub async fn log_in(session: &Session, username: &str) -> Result<SessionUser, SessionError> {
    session.cycle_id().await?;
    let user = SessionUser {
        username: username.to_string(),
        csrf_token: super::csrf::new_token(),
    };
    session.insert(USER_KEY, &user).await?;
    Ok(user)
}

/// Ends the session: its data and its store record are gone, and the
/// cookie is removed from the browser.
pub async fn log_out(session: &Session) -> Result<(), SessionError> {
    Ok(session.flush().await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cookie_is_secure_exactly_when_the_public_url_is_https() {
        assert_eq!(
            SessionSettings::for_public_url("https://hub.example"),
            Ok(SessionSettings { secure: true })
        );
        assert_eq!(
            SessionSettings::for_public_url(" HTTPS://hub.example/ "),
            Ok(SessionSettings { secure: true })
        );
        assert_eq!(
            SessionSettings::for_public_url("http://127.0.0.1:3000"),
            Ok(SessionSettings { secure: false })
        );
        for bad in ["hub.example", "ftp://hub.example", ""] {
            let err = SessionSettings::for_public_url(bad).expect_err(bad);
            assert!(err.starts_with("WS_PUBLIC_URL: "), "{err}");
        }
    }
}
