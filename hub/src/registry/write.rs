//! Writing the topology file: the one road by which the hub changes it
//! (onboarding a system, removing one, a consumer added to or taken off a
//! rule). The file stays the single source of truth — a hand edit and a
//! canvas edit see each other — so every write is:
//!
//! 1. **locked**: an advisory lock on `.<file>.lock` beside the file, so
//!    two writers (two operators, two replicas on one file) go one after
//!    the other;
//! 2. **against what the writer saw**: the caller names the SHA-256 of the
//!    text its change was made from (`base`, the digest a topology view
//!    carries); if the file is not that text any more, nothing is written
//!    and the caller is told the file changed ([`WriteError::Changed`]);
//! 3. **validated** by the loader, exactly as a reload would be: a change
//!    that fails is refused with every problem located, nothing written;
//! 4. **atomic**: the previous text is kept beside the file
//!    (`<file>.previous`), the new text goes to a temporary file in the
//!    same directory, synced, renamed over the file;
//! 5. **reloaded** at once (the watcher would too, a moment later).
//!
//! A generated credential travels with the change ([`CredentialChange`]):
//! it is written to the hub's credentials file before the topology, and
//! put back if the topology write fails.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::credentials::{self, CredentialsError};
use super::edit::{self, Edit, EditError};
use super::load::{load_str, LoadError, Loaded};
use super::Registry;

/// The text a change is made of.
#[derive(Debug, Default)]
pub struct Change {
    /// The edits of the file's text.
    pub edits: Vec<Edit>,
    /// A hub-held token set or forgotten with it.
    pub credential: Option<CredentialChange>,
}

/// A token of the credentials file, set or forgotten with a change.
pub enum CredentialChange {
    /// Keep `token` under the variable `name`.
    Set { name: String, token: String },
    /// Forget the token under `name`.
    Forget { name: String },
}

impl std::fmt::Debug for CredentialChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CredentialChange::Set { name, .. } => write!(f, "Set({name})"),
            CredentialChange::Forget { name } => write!(f, "Forget({name})"),
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The digest of the file before.
    pub before: String,
    /// The digest of the file now (the next change's `base`).
    pub after: String,
}

/// Why nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("the topology file changed since this view of it was read (another operator saved, or it was edited by hand); nothing was written: reload and make the change again")]
    Changed,
    #[error("the topology file on disk does not load, so the hub will not edit it; fix it by hand first: {0}")]
    CurrentInvalid(String),
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("the change does not pass the topology's validation; nothing was written")]
    Invalid(LoadError),
    #[error("{0}")]
    Credentials(#[from] CredentialsError),
    #[error("writing the topology file {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the topology writer stopped")]
    Stopped,
}

impl WriteError {
    /// A refusal the change's author gets as it is.
    pub fn refused(why: impl Into<String>) -> Self {
        WriteError::Refused(why.into())
    }
}

impl Registry {
    /// Makes the change `plan` decides on the topology file as it is now,
    /// if that is still the text whose digest is `base`. `plan` sees the
    /// file's current topology and may refuse ([`WriteError::Refused`]).
    pub async fn change<F>(&self, base: &str, plan: F) -> Result<Written, WriteError>
    where
        F: FnOnce(&Loaded) -> Result<Change, WriteError> + Send + 'static,
    {
        let source = self.source.clone();
        let base = base.to_string();
        let written = tokio::task::spawn_blocking(move || write_locked(&source, &base, plan))
            .await
            .map_err(|_| WriteError::Stopped)??;
        if let Err(e) = self.reload() {
            // Validated a moment ago under the lock: only a hand edit in
            // between can fail here, and the reload keeps what was in force.
            tracing::warn!(error = %e, "the topology written from the canvas did not reload");
        }
        Ok(written)
    }
}

impl Registry {
    /// Whether the change `plan` decides would be written now: the same
    /// checks as [`Registry::change`] (the file is still `base`, `plan`
    /// accepts, the result validates), writing nothing. What a caller
    /// runs before anything with an outside effect (a request to the
    /// system being added), so a change that will be refused has none.
    pub async fn check_change<F>(&self, base: &str, plan: F) -> Result<(), WriteError>
    where
        F: FnOnce(&Loaded) -> Result<Change, WriteError> + Send + 'static,
    {
        let source = self.source.clone();
        let base = base.to_string();
        tokio::task::spawn_blocking(move || planned(&source, &base, plan).map(|_| ()))
            .await
            .map_err(|_| WriteError::Stopped)?
    }
}

impl Registry {
    /// Keeps `token` as system `id`'s credential in the hub's credential
    /// store (an admin's rotation, or a credential given once), under the
    /// writers' lock, and reloads: from the next call on, `token` is the
    /// only one that authenticates `id`. Returns the system's credential
    /// variable. The topology file is not touched.
    pub async fn keep_credential(&self, id: &str, token: String) -> Result<String, WriteError> {
        let source = self.source.clone();
        let id = id.to_string();
        let name = tokio::task::spawn_blocking(move || keep_credential_in(&source, &id, &token))
            .await
            .map_err(|_| WriteError::Stopped)??;
        if let Err(e) = self.reload() {
            tracing::warn!(error = %e, "the topology did not reload after a credential was kept");
        }
        Ok(name)
    }
}

/// Keeps `token` as system `id`'s credential in the store beside the
/// topology file `source`, under the writers' lock (what
/// [`Registry::keep_credential`] and `hub credentials` do); the system's
/// credential variable is returned. A running hub reads the store again
/// when it changes.
pub fn keep_credential_in(source: &Path, id: &str, token: &str) -> Result<String, WriteError> {
    let lock = lock_file(source)?;
    let text = std::fs::read_to_string(source).map_err(|e| WriteError::Io {
        path: source.display().to_string(),
        source: e,
    })?;
    let current = load_str(&source.display().to_string(), &text)
        .map_err(|e| WriteError::CurrentInvalid(e.public_message()))?;
    let name = current
        .topology
        .system(id)
        .map(|s| s.token_env.clone())
        .ok_or_else(|| WriteError::refused(format!("no system `{id}`")))?;
    credentials::set(source, &name, Some(token))?;
    drop(lock);
    Ok(name)
}

/// The writers' advisory lock on `.<file>.lock` beside `source`, held
/// until the returned file is dropped.
fn lock_file(source: &Path) -> Result<std::fs::File, WriteError> {
    let lock_path = sibling(source, ".", ".lock");
    let io = |e| WriteError::Io {
        path: lock_path.display().to_string(),
        source: e,
    };
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io)?;
    lock.lock().map_err(io)?;
    Ok(lock)
}

fn write_locked<F>(source: &Path, base: &str, plan: F) -> Result<Written, WriteError>
where
    F: FnOnce(&Loaded) -> Result<Change, WriteError>,
{
    let lock = lock_file(source)?;

    let Planned {
        text,
        before,
        new_text,
        credential,
    } = planned(source, base, plan)?;

    let restore = match &credential {
        Some(CredentialChange::Set { name, token }) => {
            Some(credentials::set(source, name, Some(token))?)
        }
        Some(CredentialChange::Forget { name }) => Some(credentials::set(source, name, None)?),
        None => None,
    };
    let result = replace(source, &text, &new_text);
    if let (Err(_), Some(previous)) = (&result, restore) {
        if let Err(e) = credentials::restore(source, previous.as_deref()) {
            tracing::error!(error = %e, "putting back the credentials file after a failed topology write");
        }
    }
    result?;
    drop(lock);
    Ok(Written {
        before,
        after: exchange::wire::text_digest(&new_text),
    })
}

/// A change made and validated, not yet written.
struct Planned {
    text: String,
    before: String,
    new_text: String,
    credential: Option<CredentialChange>,
}

/// Reads the file, checks it is still `base`, makes `plan`'s change of it
/// and validates the result as the loader would.
fn planned<F>(source: &Path, base: &str, plan: F) -> Result<Planned, WriteError>
where
    F: FnOnce(&Loaded) -> Result<Change, WriteError>,
{
    let text = std::fs::read_to_string(source).map_err(|e| WriteError::Io {
        path: source.display().to_string(),
        source: e,
    })?;
    let before = exchange::wire::text_digest(&text);
    if before != base {
        return Err(WriteError::Changed);
    }
    let file = source.display().to_string();
    let current =
        load_str(&file, &text).map_err(|e| WriteError::CurrentInvalid(e.public_message()))?;
    let change = plan(&current)?;
    let new_text = edit::apply(&text, &current.topology, change.edits)?;
    load_str(&file, &new_text).map_err(WriteError::Invalid)?;
    Ok(Planned {
        text,
        before,
        new_text,
        credential: change.credential,
    })
}

/// Keeps `old` as `<file>.previous`, then puts `new` in place atomically.
fn replace(source: &Path, old: &str, new: &str) -> Result<(), WriteError> {
    atomic_write(&sibling(source, "", ".previous"), old)?;
    atomic_write(source, new)
}

/// Writes `text` to a temporary file beside `path`, syncs it, renames it
/// over `path`, and syncs the directory.
fn atomic_write(path: &Path, text: &str) -> Result<(), WriteError> {
    let fail = |source| WriteError::Io {
        path: path.display().to_string(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".topology.")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(text.as_bytes()).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        // Best effort: the rename is durable once the directory is synced.
        let _ = d.sync_all();
    }
    Ok(())
}

/// `dir/<prefix><file name><suffix>` for the file at `path`.
fn sibling(path: &Path, prefix: &str, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "topology".into());
    path.with_file_name(format!("{prefix}{name}{suffix}"))
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
