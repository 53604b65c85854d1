//! The UI users file: who may log in to the canvas, with argon2 hashes.
//!
//! Separate from A2A tokens on purpose (DESIGN.md §2, "auth chain"): a
//! person's password opens the canvas and nothing else, and no peer token
//! opens the canvas. The file is YAML:
//!
//! ```yaml
//! users:
//!   - username: operator
//!     password_hash: "$argon2id$v=19$m=19456,t=2,p=1$..."
//! ```
//!
//! Hashes are argon2 PHC strings (`hub hash-password` prints one). The file
//! is validated at load, every problem named by file and field, so a typo
//! stops the hub instead of locking everybody out at the first login.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use serde::Deserialize;

/// Longest password the hub will hash or verify: argon2 takes any length,
/// but an unbounded input is a free CPU burner for anybody who can post.
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// Why the users file was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum UsersError {
    /// The file could not be read.
    #[error("{file}: cannot read the UI users file: {source}")]
    Read {
        /// The path as given.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not valid; one line per problem.
    #[error("{}", problems.iter().map(|p| format!("{file}: {p}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// The path as given.
        file: String,
        /// Each problem, `field: what is wrong`.
        problems: Vec<String>,
    },
}

/// Why a password could not be hashed.
#[derive(Debug, thiserror::Error)]
pub enum HashError {
    /// Empty or longer than [`MAX_PASSWORD_BYTES`].
    #[error("a password must be 1 to {MAX_PASSWORD_BYTES} bytes long")]
    BadLength,
    /// The argon2 implementation refused.
    #[error("hashing the password: {0}")]
    Argon2(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UsersFile {
    users: Vec<UserEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserEntry {
    username: String,
    password_hash: String,
}

/// The loaded users: username → PHC hash string (validated).
#[derive(Clone)]
pub struct UiUsers {
    hashes: BTreeMap<String, String>,
    /// Verified against when the username is unknown, so that an unknown
    /// user costs the same argon2 run as a wrong password.
    dummy: String,
}

impl std::fmt::Debug for UiUsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Hashes are not secrets in the token sense, but logs need none.
        f.debug_struct("UiUsers")
            .field("usernames", &self.hashes.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl UiUsers {
    /// No users: nobody can log in (a hub started without a users file).
    pub fn none() -> Self {
        Self {
            hashes: BTreeMap::new(),
            dummy: dummy_hash(),
        }
    }

    /// Reads and validates the users file at `path`.
    pub fn load(path: &Path) -> Result<Self, UsersError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| UsersError::Read {
            file: file.clone(),
            source,
        })?;
        Self::parse(&file, &text)
    }

    /// Parses and validates `text`; `file` is only used in messages.
    pub fn parse(file: &str, text: &str) -> Result<Self, UsersError> {
        let invalid = |problems| UsersError::Invalid {
            file: file.to_string(),
            problems,
        };
        let parsed: UsersFile = exchange::located::parse_yaml(text).map_err(|i| {
            invalid(vec![format!(
                "{}:{}: {}: {}",
                i.line, i.column, i.field, i.message
            )])
        })?;
        let mut problems = Vec::new();
        let mut hashes = BTreeMap::new();
        let mut seen = HashSet::new();
        for (i, u) in parsed.users.iter().enumerate() {
            if !valid_username(&u.username) {
                problems.push(format!(
                    "users[{i}].username: must be 1-64 characters of a-z, A-Z, 0-9, `.`, `_`, `-`, `@`"
                ));
            } else if !seen.insert(u.username.as_str()) {
                problems.push(format!(
                    "users[{i}].username: duplicate username `{}`",
                    u.username
                ));
            }
            match PasswordHash::new(&u.password_hash) {
                Err(e) => problems.push(format!(
                    "users[{i}].password_hash: not a PHC hash string ({e}); make one with `hub hash-password`"
                )),
                Ok(h) if !h.algorithm.as_str().starts_with("argon2") => problems.push(format!(
                    "users[{i}].password_hash: algorithm `{}` is not argon2",
                    h.algorithm
                )),
                Ok(h) if h.hash.is_none() => problems.push(format!(
                    "users[{i}].password_hash: the PHC string has no hash part"
                )),
                Ok(_) => {}
            }
            hashes.insert(u.username.clone(), u.password_hash.clone());
        }
        if parsed.users.is_empty() {
            problems.push("users: must list at least one user".into());
        }
        if !problems.is_empty() {
            return Err(invalid(problems));
        }
        Ok(Self {
            hashes,
            dummy: dummy_hash(),
        })
    }

    /// How many users may log in.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether nobody may log in.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Whether `username` is (still) a user: sessions of a user removed
    /// from the file end at the hub's next start.
    pub fn contains(&self, username: &str) -> bool {
        self.hashes.contains_key(username)
    }

    /// Whether `password` is `username`'s. Slow by design (argon2): call
    /// it off the async runtime. An unknown user runs the same argon2
    /// verification against a dummy hash, so timing does not tell a wrong
    /// username from a wrong password.
    pub fn verify(&self, username: &str, password: &str) -> bool {
        if password.len() > MAX_PASSWORD_BYTES {
            return false;
        }
        let (hash, known) = match self.hashes.get(username) {
            Some(h) => (h.as_str(), true),
            None => (self.dummy.as_str(), false),
        };
        let ok = PasswordHash::new(hash)
            .map(|h| {
                Argon2::default()
                    .verify_password(password.as_bytes(), &h)
                    .is_ok()
            })
            .unwrap_or(false);
        ok && known
    }
}

/// Hashes `password` with argon2id and a fresh random salt, as a PHC
/// string for the users file.
pub fn hash_password(password: &str) -> Result<String, HashError> {
    if password.is_empty() || password.len() > MAX_PASSWORD_BYTES {
        return Err(HashError::BadLength);
    }
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| HashError::Argon2(e.to_string()))
}

/// A hash of a random password nobody knows, with the same parameters as
/// real hashes.
fn dummy_hash() -> String {
    use rand::RngCore;
    let mut secret = [0u8; 24];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let secret: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    // Hashing a 48-byte ASCII string cannot fail; an empty dummy would
    // only make unknown users fail faster, never succeed.
    hash_password(&secret).unwrap_or_default()
}

fn valid_username(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_verifies_its_password_only() {
        let hash = hash_password("correct horse").expect("hashes");
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        let users = UiUsers::parse(
            "ui-users.yaml",
            &format!("users:\n  - username: operator\n    password_hash: \"{hash}\"\n"),
        )
        .expect("valid");
        assert_eq!(users.len(), 1);
        assert!(users.verify("operator", "correct horse"));
        assert!(!users.verify("operator", "wrong"));
        assert!(!users.verify("nobody", "correct horse"));
        assert!(!users.verify("operator", &"x".repeat(MAX_PASSWORD_BYTES + 1)));
        assert!(matches!(hash_password(""), Err(HashError::BadLength)));
        assert!(UiUsers::none().is_empty());
        assert!(!UiUsers::none().verify("operator", ""));
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let err = UiUsers::parse(
            "cfg/ui-users.yaml",
            "users:\n  - username: a\n    password_hash: nope\n  - username: a\n    password_hash: \"$pbkdf2-sha256$i=1000$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo\"\n",
        )
        .expect_err("invalid");
        let msg = err.to_string();
        let lines: Vec<&str> = msg.lines().collect();
        assert_eq!(lines.len(), 3, "{msg}");
        assert!(
            lines[0].starts_with("cfg/ui-users.yaml: users[0].password_hash: not a PHC"),
            "{msg}"
        );
        assert!(lines[1].contains("users[1].username: duplicate"), "{msg}");
        assert!(
            lines[2].contains("users[1].password_hash: algorithm `pbkdf2-sha256`"),
            "{msg}"
        );

        let err = UiUsers::parse("u.yaml", "users:\n  - username: a\n    pasword_hash: x\n")
            .expect_err("unknown field");
        let msg = err.to_string();
        assert!(msg.starts_with("u.yaml: 3:"), "{msg}");
        assert!(
            msg.contains("users[0].pasword_hash: unknown field"),
            "{msg}"
        );

        let err = UiUsers::parse("u.yaml", "users: []\n").expect_err("empty");
        assert!(err.to_string().contains("at least one user"));
    }
}
