//! The credential store: the tokens the hub made (or was given once) for
//! systems, kept beside the topology file.
//!
//! A system's credential is named by its `token_env`, a variable of the
//! hub's reserved namespace ([`NAMESPACE`], checked when the topology
//! loads; each system has its own). Where its value comes from:
//!
//! 1. this store, `credentials.env` in the topology file's directory,
//!    when it holds the name: the hub wrote it when the system was
//!    onboarded from the canvas, or when an admin rotated or set the
//!    system's credential (`POST /api/systems/{id}/credential`, `hub
//!    credentials rotate|set`);
//! 2. else the hub's environment, for a system an operator wrote into
//!    the topology file by hand and provisioned at start.
//!
//! The store wins: a credential the hub made is never replaced by a
//! variable that happens to be set in its environment, and onboarding
//! always makes a new one rather than adopting whatever the environment
//! holds under the proposed name.
//!
//! No topology file, page, API answer or log line carries a value, except
//! the one answer that shows a new credential to the person who made it.
//! The format is the env-file one, `NAME=value` per line, `#` comments;
//! nothing else is understood. Writes replace the file atomically (a
//! temporary file renamed over it, mode 600), so a reader sees the old
//! file or the new one.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file name, in the topology file's directory.
pub const FILE_NAME: &str = "credentials.env";

/// The prefix of every credential variable: a system's `token_env` is
/// `WS_TOKEN_` and capitals, digits or `_`.
pub const NAMESPACE: &str = "WS_TOKEN_";

/// Why the credentials file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// A new credential: 32 random bytes from the operating system, as 64
/// hex digits (the hub's one secret maker: a session's CSRF token is one
/// too).
pub fn new_credential() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The credential variable of system `id`: [`NAMESPACE`] and the id in
/// capitals, every other character `_` (`logistics` → `WS_TOKEN_LOGISTICS`).
/// A system onboarded from the canvas has exactly this one.
pub fn variable_for(id: &str) -> String {
    let upper: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{NAMESPACE}{upper}")
}

/// The hub-held tokens, by environment variable name. `Debug` names the
/// variables only.
#[derive(Clone, Default)]
pub struct HeldTokens {
    by_name: HashMap<String, String>,
}

impl std::fmt::Debug for HeldTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.by_name.keys()).finish()
    }
}

impl HeldTokens {
    /// Reads `credentials.env` in `dir`; a missing file holds nothing, an
    /// unreadable one is logged and holds nothing (the environment still
    /// names every token an operator set).
    pub fn read(dir: &Path) -> Self {
        let path = dir.join(FILE_NAME);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::default(),
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "the hub's credentials file is unreadable; using the environment only");
                Self::default()
            }
        }
    }

    /// Parses env-file text: `NAME=value` lines; blank lines, `#`
    /// comments and lines without `=` are skipped.
    pub fn parse(text: &str) -> Self {
        let by_name = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
            .collect();
        Self { by_name }
    }

    /// The token the file holds under `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.by_name.get(name).map(String::as_str)
    }

    /// Whether the file holds `name`.
    pub fn holds(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    fn render(&self) -> String {
        let mut names: Vec<&String> = self.by_name.keys().collect();
        names.sort();
        let mut out = String::from(
            "# The hub's credential store: the systems' tokens it made or was given\n\
             # (NOTES.md, \"Credentials\"). It wins over the hub's environment.\n\
             # Keep it private: mode 600.\n",
        );
        for name in names {
            out.push_str(&format!("{name}={}\n", self.by_name[name]));
        }
        out
    }
}

/// The credentials file of the topology file at `topology`.
pub fn path_beside(topology: &Path) -> PathBuf {
    topology.parent().unwrap_or(Path::new("")).join(FILE_NAME)
}

/// Sets (`Some`) or forgets (`None`) the token under `name` in the
/// credentials file beside `topology`, replacing the file atomically with
/// mode 600. Returns the file's previous text, to put back if what this
/// write was for fails.
pub fn set(
    topology: &Path,
    name: &str,
    token: Option<&str>,
) -> Result<Option<String>, CredentialsError> {
    let path = path_beside(topology);
    let previous = std::fs::read_to_string(&path).ok();
    let mut held = previous
        .as_deref()
        .map(HeldTokens::parse)
        .unwrap_or_default();
    match token {
        Some(t) => {
            held.by_name.insert(name.to_string(), t.to_string());
        }
        None => {
            if held.by_name.remove(name).is_none() {
                return Ok(previous);
            }
        }
    }
    write_private(&path, &held.render())?;
    Ok(previous)
}

/// Puts back the text [`set`] returned (`None`: the file did not exist).
pub fn restore(topology: &Path, previous: Option<&str>) -> Result<(), CredentialsError> {
    let path = path_beside(topology);
    match previous {
        Some(text) => write_private(&path, text),
        None => match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(CredentialsError::Write {
                path: path.display().to_string(),
                source,
            }),
        },
    }
}

/// Writes `text` to `path` through a temporary file in the same directory
/// (mode 600 from its creation), synced, then renamed over `path`.
fn write_private(path: &Path, text: &str) -> Result<(), CredentialsError> {
    let fail = |source| CredentialsError::Write {
        path: path.display().to_string(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".credentials.");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o600));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(fail)?;
    tmp.write_all(text.as_bytes()).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_and_forget_keep_other_lines_and_mode_600() {
        let dir = tempfile::tempdir().expect("tempdir");
        let topology = dir.path().join("topology.yaml");
        assert!(set(&topology, "WS_TOKEN_A", Some("aaa"))
            .expect("set")
            .is_none());
        set(&topology, "WS_TOKEN_B", Some("bbb")).expect("set");
        let held = HeldTokens::read(dir.path());
        assert_eq!(held.get("WS_TOKEN_A"), Some("aaa"));
        assert_eq!(held.get("WS_TOKEN_B"), Some("bbb"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path_beside(&topology))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let before = set(&topology, "WS_TOKEN_A", None).expect("forget");
        let held = HeldTokens::read(dir.path());
        assert!(!held.holds("WS_TOKEN_A"));
        assert_eq!(held.get("WS_TOKEN_B"), Some("bbb"));
        restore(&topology, before.as_deref()).expect("restore");
        assert_eq!(HeldTokens::read(dir.path()).get("WS_TOKEN_A"), Some("aaa"));
        assert!(!format!("{:?}", HeldTokens::read(dir.path())).contains("aaa"));
    }

    #[test]
    fn parse_skips_comments_and_empty_values() {
        let held = HeldTokens::parse("# c\n\nA=1\nB=\nnot a line\n C = 3 \n");
        assert_eq!(held.get("A"), Some("1"));
        assert!(!held.holds("B"));
        assert_eq!(held.get("C"), Some("3"));
    }
}
