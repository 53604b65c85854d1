//! The UI users file: the people an operator provisions at start, with
//! their roles and argon2 hashes (the hub copies them into its people
//! store, `super::people`, where people added from the canvas or the CLI
//! live too).
//!
//! Separate from A2A tokens on purpose (DESIGN.md §2, "auth chain"): a
//! person's password opens the canvas and nothing else, and no peer token
//! opens the canvas. The file is YAML:
//!
//! ```yaml
//! users:
//!   - username: operator
//!     password_hash: "$argon2id$v=19$m=19456,t=2,p=1$..."
//!     role: admin              # viewer | operator | approver | admin
//!   - username: ann
//!     password_hash: "$argon2id$..."
//!     role: operator
//!     system: buyercorp        # member-scoped: BuyerCorp's part only
//! ```
//!
//! Hashes are argon2 PHC strings (`hub hash-password` prints one). Every
//! entry names its role: nobody gets a power by default. The file is
//! validated at load, every problem named by file and field, so a typo
//! stops the hub instead of locking everybody out at the first login.

use std::collections::HashSet;
use std::path::Path;

use app::access::{Role, Scope};
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
    role: String,
    #[serde(default)]
    system: Option<String>,
}

/// One person of the file, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUser {
    /// The username.
    pub username: String,
    /// The argon2 PHC hash.
    pub password_hash: String,
    /// What the person may do.
    pub role: Role,
    /// The part of the exchange the person is bound to.
    pub scope: Scope,
}

/// The loaded users file (validated).
#[derive(Clone, Default)]
pub struct UiUsers {
    /// Every person of the file, in its order.
    people: Vec<FileUser>,
}

impl std::fmt::Debug for UiUsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Hashes are not secrets in the token sense, but logs need none.
        f.debug_struct("UiUsers")
            .field(
                "usernames",
                &self.people.iter().map(|p| &p.username).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl UiUsers {
    /// No users: nobody can log in (a hub started without a users file).
    pub fn none() -> Self {
        Self::default()
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
        let mut people = Vec::new();
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
            let role = Role::parse(&u.role).unwrap_or_else(|| {
                problems.push(format!(
                    "users[{i}].role: `{}` is not a role; one of viewer, operator, approver, admin",
                    exchange::text::clip(&u.role, 32)
                ));
                Role::Viewer
            });
            let scope = match &u.system {
                None => Scope::Exchange,
                Some(system) if exchange::id::is_valid(system) => Scope::Member(system.clone()),
                Some(_) => {
                    problems.push(format!(
                        "users[{i}].system: {}",
                        exchange::id::rule_for("a system id")
                    ));
                    Scope::Exchange
                }
            };
            if role == Role::Admin && scope != Scope::Exchange {
                problems.push(format!(
                    "users[{i}].role: an admin is exchange-wide; a member-scoped person is a viewer, operator or approver"
                ));
            }
            people.push(FileUser {
                username: u.username.clone(),
                password_hash: u.password_hash.clone(),
                role,
                scope,
            });
        }
        if parsed.users.is_empty() {
            problems.push("users: must list at least one user".into());
        }
        if !problems.is_empty() {
            return Err(invalid(problems));
        }
        Ok(Self { people })
    }

    /// Every person of the file, in its order.
    pub fn people(&self) -> &[FileUser] {
        &self.people
    }

    /// How many users the file lists.
    pub fn len(&self) -> usize {
        self.people.len()
    }

    /// Whether the file lists nobody.
    pub fn is_empty(&self) -> bool {
        self.people.is_empty()
    }
}

/// Whether `password` matches `hash` (`None`: a person without a password,
/// or nobody: the check still runs, against a hash of a random password,
/// so an unknown username costs the same argon2 run as a wrong password and
/// timing does not tell them apart). Slow by design (argon2): call it off
/// the async runtime.
pub fn verify_password(hash: Option<&str>, password: &str) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if password.len() > MAX_PASSWORD_BYTES {
        return false;
    }
    let (hash, known) = match hash {
        Some(h) => (h, true),
        None => (DUMMY.get_or_init(dummy_hash).as_str(), false),
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

/// Whether `name` may be a username.
pub fn valid_username(name: &str) -> bool {
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
            &format!("users:\n  - username: operator\n    password_hash: \"{hash}\"\n    role: admin\n  - username: ann\n    password_hash: \"{hash}\"\n    role: viewer\n    system: buyercorp\n"),
        )
        .expect("valid");
        assert_eq!(users.len(), 2);
        assert_eq!(users.people()[0].role, Role::Admin);
        assert_eq!(users.people()[0].scope, Scope::Exchange);
        assert_eq!(users.people()[1].scope, Scope::Member("buyercorp".into()));
        let stored = Some(users.people()[0].password_hash.as_str());
        assert!(verify_password(stored, "correct horse"));
        assert!(!verify_password(stored, "wrong"));
        assert!(!verify_password(None, "correct horse"));
        assert!(!verify_password(
            stored,
            &"x".repeat(MAX_PASSWORD_BYTES + 1)
        ));
        assert!(matches!(hash_password(""), Err(HashError::BadLength)));
        assert!(UiUsers::none().is_empty());
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let err = UiUsers::parse(
            "cfg/ui-users.yaml",
            "users:\n  - username: a\n    password_hash: nope\n    role: admin\n  - username: a\n    password_hash: \"$pbkdf2-sha256$i=1000$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo\"\n    role: root\n  - username: b\n    password_hash: nope\n    role: admin\n    system: buyercorp\n",
        )
        .expect_err("invalid");
        let msg = err.to_string();
        let lines: Vec<&str> = msg.lines().collect();
        assert_eq!(lines.len(), 6, "{msg}");
        assert!(
            lines[3].contains("users[1].role: `root` is not a role"),
            "{msg}"
        );
        assert!(
            lines[5].contains("users[2].role: an admin is exchange-wide"),
            "{msg}"
        );
        assert!(
            lines[0].starts_with("cfg/ui-users.yaml: users[0].password_hash: not a PHC"),
            "{msg}"
        );
        assert!(lines[1].contains("users[1].username: duplicate"), "{msg}");
        assert!(
            lines[2].contains("users[1].password_hash: algorithm `pbkdf2-sha256`"),
            "{msg}"
        );

        let err = UiUsers::parse(
            "u.yaml",
            "users:\n  - username: a\n    pasword_hash: x\n    role: admin\n",
        )
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
