//! The people store: everybody who may use the canvas, with their role,
//! their scope (exchange-wide or one member's part) and how they log in.
//!
//! The people live in the hub's database (`people`), so every replica
//! knows the same ones and a change made on one reaches all of them (the
//! replica that changed the table announces it; the others re-read it).
//! Three roads lead in, each recorded as the person's [`Origin`]:
//!
//! - the UI users file an operator provisions (`--ui-users`): copied in at
//!   every start, its people made, updated, or removed when they left the
//!   file;
//! - an admin, from the canvas's people page or `hub people`;
//! - a member's own identity provider: a person who logs in there is made
//!   (or updated) at each login, bound to that member, with the role its
//!   claim names.
//!
//! Every request of a session reads its person here (from memory, kept
//! in step with the table): a person removed, or whose role or scope
//! changed, holds the new powers at the next request, and their open
//! event streams are closed ([`People::revocations`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use app::access::{Role, Scope};
use app::dto::PersonView;
use arc_swap::ArcSwap;
use exchange::db::Store;
use tokio::sync::broadcast;

use super::users::{FileUser, UiUsers};
use crate::cluster::{Change, Cluster};

/// How often every replica re-reads the table anyway (a change made with
/// `hub people` on the command line is announced to nobody).
pub const RELOAD_EVERY: std::time::Duration = std::time::Duration::from_secs(3);

/// Who made a person's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The UI users file: an operator's provisioning at start.
    File,
    /// An admin, from the canvas or the command line.
    Admin,
    /// A member's identity provider, at the person's login.
    IdentityProvider,
}

impl Origin {
    fn as_str(self) -> &'static str {
        match self {
            Origin::File => "file",
            Origin::Admin => "admin",
            Origin::IdentityProvider => "oidc",
        }
    }

    fn parse(s: &str) -> Origin {
        match s {
            "file" => Origin::File,
            "oidc" => Origin::IdentityProvider,
            _ => Origin::Admin,
        }
    }
}

/// A person, as every request of their session sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The username.
    pub username: String,
    /// What they may do.
    pub role: Role,
    /// Which part of the exchange.
    pub scope: Scope,
    /// Who made the entry.
    pub origin: Origin,
}

impl Person {
    /// What the people page shows of them.
    pub fn view(&self) -> PersonView {
        PersonView {
            username: self.username.clone(),
            role: self.role,
            system: self.scope.member().map(str::to_string),
            origin: self.origin.as_str().to_string(),
        }
    }
}

/// A row of `people`: username, password hash, role, member, origin.
type Row = (String, Option<String>, String, Option<String>, String);

/// One row, with the password hash that never leaves this module.
#[derive(Clone)]
struct Entry {
    person: Person,
    password_hash: Option<String>,
}

/// Why a change of the people was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum PeopleError {
    /// The store failed.
    #[error("the people store: {0}")]
    Store(#[from] sqlx::Error),
    /// A username that is not one.
    #[error("a username must be 1-64 characters of a-z, A-Z, 0-9, `.`, `_`, `-`, `@`")]
    BadUsername,
    /// The username is taken.
    #[error("`{0}` is already a person of this hub")]
    Exists(String),
    /// Nobody by that name.
    #[error("nobody is called `{0}` here")]
    Unknown(String),
    /// An admin bound to one member.
    #[error("an admin is exchange-wide; a member-scoped person is a viewer, operator or approver")]
    ScopedAdmin,
    /// The change would leave nobody able to manage people.
    #[error("this would leave the hub without an exchange-wide admin; make another admin first")]
    LastAdmin,
    /// The person comes from the UI users file, which an operator owns.
    #[error("`{0}` comes from the UI users file; change that file (the hub reads it at start)")]
    FromFile(String),
    /// Hashing a password failed.
    #[error(transparent)]
    Hash(#[from] super::users::HashError),
}

/// What changed of whom: an event stream of theirs ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    /// Everything of this person (removed, or a new role or scope).
    Person(String),
    /// One session (logged out): its key ([`super::session::stream_key`]).
    Session(String),
}

/// The people store (module doc). Cheap to clone.
#[derive(Clone)]
pub struct People {
    store: Store,
    by_name: Arc<ArcSwap<BTreeMap<String, Entry>>>,
    revoked: broadcast::Sender<Revocation>,
    /// The other replicas, told of every change.
    cluster: Cluster,
}

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("People")
            .field("count", &self.by_name.load().len())
            .finish_non_exhaustive()
    }
}

impl People {
    /// The people of `store`, after the UI users file's people were copied
    /// in (made, updated, and those who left the file removed).
    pub async fn open(store: Store, file: &UiUsers, cluster: Cluster) -> Result<Self, PeopleError> {
        let people = Self::load(store, cluster).await?;
        people.sync_file(file.people()).await?;
        people.reload().await?;
        Ok(people)
    }

    /// The people of `store` as they are (what `hub people` reads: it
    /// provisions nobody from a file).
    pub async fn load(store: Store, cluster: Cluster) -> Result<Self, PeopleError> {
        let people = Self {
            store,
            by_name: Arc::default(),
            revoked: broadcast::channel(256).0,
            cluster,
        };
        people.reload().await?;
        Ok(people)
    }

    async fn sync_file(&self, file: &[FileUser]) -> Result<(), PeopleError> {
        let mut tx = self.store.pool().begin().await?;
        let listed: Vec<&str> = file.iter().map(|u| u.username.as_str()).collect();
        let existing: Vec<(String, String)> = sqlx::query_as("SELECT username, origin FROM people")
            .fetch_all(&mut *tx)
            .await?;
        for (username, origin) in existing {
            if Origin::parse(&origin) == Origin::File && !listed.contains(&username.as_str()) {
                sqlx::query("DELETE FROM people WHERE username = $1")
                    .bind(&username)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        for u in file {
            upsert(
                &mut tx,
                &u.username,
                Some(&u.password_hash),
                u.role,
                &u.scope,
                Origin::File,
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Re-reads the table (at start, and when another replica announces a
    /// change); every person whose role or scope changed, or who is gone,
    /// has their event streams closed.
    pub async fn reload(&self) -> Result<(), PeopleError> {
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT username, password_hash, role, member, origin FROM people ORDER BY username",
        )
        .fetch_all(self.store.pool())
        .await?;
        let fresh: BTreeMap<String, Entry> = rows
            .into_iter()
            .filter_map(|(username, password_hash, role, member, origin)| {
                let Some(role) = Role::parse(&role) else {
                    tracing::warn!(%username, %role, "a person with an unknown role is left out");
                    return None;
                };
                let person = Person {
                    username: username.clone(),
                    role,
                    scope: member.map_or(Scope::Exchange, Scope::Member),
                    origin: Origin::parse(&origin),
                };
                Some((
                    username,
                    Entry {
                        person,
                        password_hash,
                    },
                ))
            })
            .collect();
        let before = self.by_name.swap(Arc::new(fresh));
        let now = self.by_name.load();
        for (name, old) in before.iter() {
            let same = now.get(name).is_some_and(|e| {
                e.person.role == old.person.role && e.person.scope == old.person.scope
            });
            if !same {
                let _ = self.revoked.send(Revocation::Person(name.clone()));
            }
        }
        Ok(())
    }

    /// `username`, if they are a person of this hub.
    pub fn get(&self, username: &str) -> Option<Person> {
        self.by_name.load().get(username).map(|e| e.person.clone())
    }

    /// Everybody, by username.
    pub fn list(&self) -> Vec<Person> {
        self.by_name
            .load()
            .values()
            .map(|e| e.person.clone())
            .collect()
    }

    /// Whether anybody may log in with a password.
    pub fn is_empty(&self) -> bool {
        self.by_name.load().is_empty()
    }

    /// Whether `password` is `username`'s. Slow by design (argon2): call
    /// it off the async runtime. An unknown user, or one who logs in only
    /// through an identity provider, costs the same argon2 run and fails.
    pub fn verify(&self, username: &str, password: &str) -> bool {
        let hash = self
            .by_name
            .load()
            .get(username)
            .and_then(|e| e.password_hash.clone());
        super::users::verify_password(hash.as_deref(), password)
    }

    /// The event streams to close: every session of a person whose role or
    /// scope changed or who was removed, and each session that logged out.
    pub fn revocations(&self) -> broadcast::Receiver<Revocation> {
        self.revoked.subscribe()
    }

    /// Closes the event streams of the session keyed `key` (a logout), on
    /// every replica.
    pub fn end_session(&self, key: String) {
        self.cluster
            .announce(Change::SessionEnded { key: key.clone() });
        self.session_ended(key);
    }

    /// Closes this replica's event streams of the session keyed `key`
    /// (another replica announced its logout).
    pub fn session_ended(&self, key: String) {
        let _ = self.revoked.send(Revocation::Session(key));
    }

    /// Re-reads the table after this replica changed it, and tells the
    /// others.
    async fn changed(&self) -> Result<(), PeopleError> {
        self.cluster.announce(Change::People);
        self.reload().await
    }

    /// Adds `username` with `role` and `scope` and a new password, which
    /// is returned (shown once); `password` when the admin gave one.
    pub async fn add(
        &self,
        username: &str,
        role: Role,
        scope: Scope,
        password: Option<&str>,
    ) -> Result<String, PeopleError> {
        check_person(username, role, &scope)?;
        if self.get(username).is_some() {
            return Err(PeopleError::Exists(username.to_string()));
        }
        let password = password.map_or_else(new_password, str::to_string);
        let hash = hash_off_runtime(password.clone()).await?;
        let mut tx = self.store.pool().begin().await?;
        let taken: Option<String> =
            sqlx::query_scalar("SELECT username FROM people WHERE username = $1")
                .bind(username)
                .fetch_optional(&mut *tx)
                .await?;
        if taken.is_some() {
            return Err(PeopleError::Exists(username.to_string()));
        }
        upsert(&mut tx, username, Some(&hash), role, &scope, Origin::Admin).await?;
        tx.commit().await?;
        self.changed().await?;
        Ok(password)
    }

    /// Gives `username` a new role and scope.
    pub async fn update(
        &self,
        username: &str,
        role: Role,
        scope: Scope,
    ) -> Result<(), PeopleError> {
        check_person(username, role, &scope)?;
        let current = self.editable(username)?;
        if current.role == Role::Admin
            && current.scope == Scope::Exchange
            && !(role == Role::Admin && scope == Scope::Exchange)
        {
            self.not_last_admin(username)?;
        }
        sqlx::query(
            "UPDATE people SET role = $1, member = $2, updated_at = $3 WHERE username = $4",
        )
        .bind(role.as_str())
        .bind(scope.member())
        .bind(exchange::audit::now())
        .bind(username)
        .execute(self.store.pool())
        .await?;
        self.changed().await
    }

    /// Removes `username`; their sessions end at their next request.
    pub async fn remove(&self, username: &str) -> Result<(), PeopleError> {
        let current = self.editable(username)?;
        if current.role == Role::Admin && current.scope == Scope::Exchange {
            self.not_last_admin(username)?;
        }
        sqlx::query("DELETE FROM people WHERE username = $1")
            .bind(username)
            .execute(self.store.pool())
            .await?;
        self.changed().await
    }

    /// A new password for `username`, returned (shown once).
    pub async fn reset_password(&self, username: &str) -> Result<String, PeopleError> {
        self.editable(username)?;
        let password = new_password();
        let hash = hash_off_runtime(password.clone()).await?;
        sqlx::query("UPDATE people SET password_hash = $1, updated_at = $2 WHERE username = $3")
            .bind(&hash)
            .bind(exchange::audit::now())
            .bind(username)
            .execute(self.store.pool())
            .await?;
        self.changed().await?;
        Ok(password)
    }

    /// A person who logged in through member `system`'s identity provider,
    /// made or updated with what that provider says now. A username the
    /// file or an admin made is never taken over.
    pub async fn from_identity_provider(
        &self,
        username: &str,
        role: Role,
        system: &str,
    ) -> Result<Person, PeopleError> {
        let scope = Scope::Member(system.to_string());
        check_person(username, role, &scope)?;
        if let Some(p) = self.get(username) {
            if p.origin != Origin::IdentityProvider {
                return Err(PeopleError::Exists(username.to_string()));
            }
        }
        let mut tx = self.store.pool().begin().await?;
        upsert(
            &mut tx,
            username,
            None,
            role,
            &scope,
            Origin::IdentityProvider,
        )
        .await?;
        tx.commit().await?;
        self.changed().await?;
        self.get(username)
            .ok_or_else(|| PeopleError::Unknown(username.to_string()))
    }

    /// `username`, if an admin may change them.
    fn editable(&self, username: &str) -> Result<Person, PeopleError> {
        match self.get(username) {
            None => Err(PeopleError::Unknown(username.to_string())),
            Some(p) if p.origin == Origin::File => Err(PeopleError::FromFile(username.to_string())),
            Some(p) => Ok(p),
        }
    }

    fn not_last_admin(&self, username: &str) -> Result<(), PeopleError> {
        let others = self
            .list()
            .into_iter()
            .any(|p| p.username != username && p.role == Role::Admin && p.scope == Scope::Exchange);
        if others {
            Ok(())
        } else {
            Err(PeopleError::LastAdmin)
        }
    }
}

#[async_trait::async_trait]
impl crate::cluster::PeopleSync for People {
    async fn reload(&self) {
        if let Err(e) = People::reload(self).await {
            tracing::warn!(error = %e, "re-reading the people another replica changed");
        }
    }

    fn session_ended(&self, key: String) {
        People::session_ended(self, key);
    }
}

fn check_person(username: &str, role: Role, scope: &Scope) -> Result<(), PeopleError> {
    if !super::users::valid_username(username) {
        return Err(PeopleError::BadUsername);
    }
    if role == Role::Admin && *scope != Scope::Exchange {
        return Err(PeopleError::ScopedAdmin);
    }
    Ok(())
}

async fn upsert(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    username: &str,
    password_hash: Option<&str>,
    role: Role,
    scope: &Scope,
    origin: Origin,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO people (username, password_hash, role, member, origin, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (username) DO UPDATE SET
           password_hash = COALESCE(excluded.password_hash, people.password_hash),
           role = excluded.role, member = excluded.member,
           origin = excluded.origin, updated_at = excluded.updated_at",
    )
    .bind(username)
    .bind(password_hash)
    .bind(role.as_str())
    .bind(scope.member())
    .bind(origin.as_str())
    .bind(exchange::audit::now())
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A password the hub makes for a person: 20 characters of an alphabet
/// without look-alikes (about 100 bits).
fn new_password() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rngs::OsRng;
    (0..20)
        .map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())]))
        .collect()
}

async fn hash_off_runtime(password: String) -> Result<String, PeopleError> {
    tokio::task::spawn_blocking(move || super::users::hash_password(&password))
        .await
        .map_err(|_| {
            PeopleError::Hash(super::users::HashError::Argon2(
                "the hashing task stopped".into(),
            ))
        })?
        .map_err(PeopleError::Hash)
}

#[cfg(test)]
#[path = "people_tests.rs"]
mod tests;
