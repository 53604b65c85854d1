//! A reference peer's configuration file.
//!
//! One YAML file per peer process. Everything that makes VendorCorp differ
//! from BuyerCorp lives here, so a fourth peer is added by writing a file,
//! not code (DESIGN.md §3). The file names its token by env var only: the
//! secret itself never sits in a file that may be committed.
//!
//! Loading validates structure (serde, `deny_unknown_fields`) and meaning
//! (ids, addresses, that each skill's handler fits the dataset), the way
//! the hub loads its topology file (`exchange::located`): every problem is
//! reported, in file order, as `config/peers/x.yaml:14:5: skills[0].table:
//! ...`, so an operator fixes the whole file in one pass without guessing.
//!
//! | module | what it decides |
//! |---|---|
//! | [`model`] | the file's shape: [`PeerConfig`] and its sections, their defaults and bounds, and its JSON Schema ([`PeerConfig::schema`]) |
//! | [`load`] | reading it: serde, then the semantic checks, every problem located `file:line:column: field` |
//! | `validate` | the semantic checks ([`PeerConfig::validate`]), one per concern, every problem collected; and [`is_sql_identifier`] |
//!
//! Everything other modules use is re-exported here
//! (`crate::config::PeerConfig`, `crate::config::ConfigError`, ...).

pub mod load;
pub mod model;
mod validate;

pub use load::ConfigError;
pub use model::{
    AgentConfig, AnswerAs, DatasetConfig, Faults, Handler, HubOidcConfig, HubTlsConfig, McpConfig,
    ModelConfig, NegotiationFault, PeerConfig, ServeTlsConfig, SkillConfig, SkillKind,
    DEFAULT_MAX_DEADLINE_MS, DEFAULT_WORK_MS, MAX_WORK_MS, REFERENCE_PUBLISHED, SCHEMA_PUBLISHED,
};
pub use validate::is_sql_identifier;

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
