//! The reference peer: one independent system with its own A2A server
//! (DESIGN.md §3, "reference peers").
//!
//! One binary, one process per peer, one YAML file per peer. The three demo
//! peers (VendorCorp, BuyerCorp, Helpdesk) and any fourth one differ only in
//! their config: the dataset they own, the capabilities they provide, and the
//! token env var. They double as the reference server for contract tests.
//!
//! Its own package: the peer links the shared `exchange` library (what both
//! sides speak) and nothing of the hub — no registry, no BFF, no UI login —
//! and the hub links nothing of it, so the compiler proves the hub knows no
//! peer's tables.
//!
//! Layout:
//!
//! | module | what it decides |
//! |---|---|
//! | [`config`] | the peer's YAML file, every problem reported as `file:line:column: field` |
//! | [`datasets`] | the data it owns: generated from a seed, hostile fixtures, read from CSV, seeded into its store |
//! | [`skills`] | the answers: the table query within the grant (`skills::query`), budgets, tickets — deterministic |
//! | [`executor`] | the A2A entry point: which skill answers a message |
//! | `incoming` | what an incoming A2A request's headers say: the envelope, the caller (crate-private) |
//! | [`card`] | its agent card: one skill per capability, granted columns only |
//! | [`echo`] | `peer echo`: a trivial provider answering every `SendMessage` at once (the gateway benchmark's backend) |
//! | [`server`] | HTTP: the card, `/health` with its identity, `/a2a` behind the bearer check |
//! | [`tls`] | that server over TLS (`tls`), requiring the hub's client certificate when `client_ca` is set |
//! | [`mcp`] | the MCP data plane (`peer mcp`, its own process): `query_records`, decided against the caller's contract on every call |
//! | [`tasks`] | task skills as real A2A tasks: lifecycle, deadline, idempotency keys, cancel, and the bounded A2A task store (also at its older path, [`task_store`]) |
//! | [`approvals`] | what an approval lets this peer's own code write |
//! | [`contracts`] | data contracts: its side of a negotiation, its policy, the one read decision, the gate both doors call, its store |
//! | [`client`] | this peer calling another through the hub (`peer call`) |
//! | [`hub_credentials`] | what it presents to the hub: the static token or an access token from its own OpenID provider, and its TLS client certificate |
//! | [`negotiation`] | this peer negotiating a contract as a consumer (`peer negotiate`) |
//!
//! Proposed actions this peer received as an asker sit in its own
//! [`exchange::inbox::Inbox`], in its own store.

#![warn(missing_docs)]

pub mod approvals;
pub mod card;
pub mod client;
pub mod config;
pub mod contracts;
pub mod datasets;
pub mod echo;
pub mod executor;
pub mod hub_credentials;
mod incoming;
pub mod mcp;
pub mod negotiation;
pub mod server;
pub mod skills;
pub mod tasks;
pub mod tls;

/// The bounded A2A task store, under its older name: it lives in
/// [`tasks::bounded`], underneath the task bookkeeping.
pub use tasks::bounded as task_store;

use config::PeerConfig;
use datasets::TableSchema;
use exchange::audit::AuditTrail;
use exchange::inbox::Inbox;
use sqlx::SqlitePool;
use std::path::Path;
use subtle::ConstantTimeEq;

/// The build version reported by `/health` and the agent card.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A bearer token. Never printed: `Debug` redacts it, and there is no
/// `Display`.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(***)")
    }
}

/// Why a token could not be read.
#[derive(Debug, thiserror::Error)]
#[error("env var {var} is not set or is empty: it must hold this peer's bearer token")]
pub struct TokenError {
    /// The env var the config names.
    pub var: String,
}

impl Token {
    /// Wraps a token (tests, embedders).
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    /// Reads the token from the env var the config names; missing or empty
    /// is an error naming the var (never the value).
    pub fn from_env(var: &str) -> Result<Self, TokenError> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Self(v.trim().to_string())),
            _ => Err(TokenError {
                var: var.to_string(),
            }),
        }
    }

    /// Constant-time comparison with a presented token (DESIGN.md §2, "auth
    /// chain"): timing does not reveal how much of a guess was right.
    pub fn matches(&self, presented: &[u8]) -> bool {
        bool::from(self.0.as_bytes().ct_eq(presented))
    }

    /// The secret, for the one place that sends it (an Authorization header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Everything a running peer holds.
pub struct PeerState {
    /// The validated config file.
    pub config: PeerConfig,
    /// This peer's bearer token.
    pub token: Token,
    /// The peer's own SQLite store: dataset, audit trail, inbox.
    pub pool: SqlitePool,
    /// The peer's own audit trail.
    pub trail: AuditTrail,
    /// Proposed actions received as an asker.
    pub inbox: Inbox,
    /// Columns of the dataset table, read once at startup.
    pub schema: TableSchema,
    /// Negotiation offers and granted contracts, in the peer's store.
    pub contracts: contracts::store::ContractStore,
    /// The negotiation agent's model, when the config names a tier.
    pub drafter: Option<contracts::draft::ModelDrafter>,
    /// The key its card is signed with, when the config says to sign
    /// (set once the router knows the peer's public address): it signs
    /// each answer too ([`exchange::receipt::ANSWER_SIGNATURE_KEY`]).
    pub signer: std::sync::OnceLock<Signer>,
}

/// A key the peer signs with, and where its JWKS is published.
pub struct Signer {
    /// The key (its public half is the JWKS at `jku`).
    pub key: exchange::jws::SigningKey,
    /// The peer's JWKS URL.
    pub jku: String,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("kid", &self.key.kid())
            .field("jku", &self.jku)
            .finish()
    }
}

impl PeerState {
    /// Opens the store at `database`, seeds the dataset if needed and
    /// prepares the trail and inbox.
    pub async fn open(config: PeerConfig, token: Token, database: &Path) -> anyhow::Result<Self> {
        let (pool, trail, inbox) = open_store(&config, database).await?;
        let report = datasets::ensure_seeded(&pool, &config.dataset).await?;
        tracing::info!(
            table = %report.table,
            rows = report.rows,
            created = report.created,
            "dataset ready"
        );
        let schema = datasets::table_schema(&pool, config.dataset.table()).await?;
        check_grants(&config, &schema)?;
        let contracts = contracts::store::ContractStore::open(pool.clone()).await?;
        let drafter = config
            .model
            .as_ref()
            .map(contracts::draft::ModelDrafter::open)
            .transpose()?;
        Ok(Self {
            config,
            token,
            pool,
            trail,
            inbox,
            schema,
            contracts,
            drafter,
            signer: std::sync::OnceLock::new(),
        })
    }
}

/// Every granted column must exist in the table: a typo in a grant would
/// otherwise surface only as a refusal at call time.
fn check_grants(config: &PeerConfig, schema: &TableSchema) -> anyhow::Result<()> {
    for skill in &config.skills {
        if let Some(c) = skill
            .negotiable_columns
            .iter()
            .chain(&skill.personal_columns)
            .find(|c| schema.column(c).is_none())
        {
            anyhow::bail!(
                "skill {}: column {c:?} is not a column of table {} (columns: {})",
                skill.capability,
                schema.table,
                schema.column_list()
            );
        }
    }
    Ok(())
}

/// Opens the peer's store with its trail and inbox, without touching the
/// dataset: what `peer call` and the inbox commands need. One SQLite file,
/// two pools on it: a native one for the peer's own tables, and the
/// exchange's store (its `Any` pool, its migrations) for the trail and
/// the inbox, whose approval writes the peer's own row in the same
/// transaction.
pub async fn open_store(
    config: &PeerConfig,
    database: &Path,
) -> anyhow::Result<(SqlitePool, AuditTrail, Inbox)> {
    let pool = exchange::db::open_sqlite(database).await?;
    let store = exchange::db::open(database).await?;
    let trail = AuditTrail::open(store.clone(), config.system.clone());
    let inbox = Inbox::open(store, approvals::local_effects(config));
    Ok((pool, trail, inbox))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_never_shows_and_compares_exactly() {
        let t = Token::new("s3cret");
        assert_eq!(format!("{t:?}"), "Token(***)");
        assert!(t.matches(b"s3cret"));
        assert!(!t.matches(b"s3cre"));
        assert!(!t.matches(b"s3cret2"));
        assert!(!t.matches(b""));
    }

    #[test]
    fn missing_token_names_the_var() {
        let e = Token::from_env("WS_TOKEN_DEFINITELY_NOT_SET_4711").unwrap_err();
        assert!(e.to_string().contains("WS_TOKEN_DEFINITELY_NOT_SET_4711"));
    }
}
