//! The members' bearer tokens, read once per registry generation.
//!
//! A system's token is the one the hub's credential store holds under its
//! `token_env` (`super::credentials`), else the value of that variable in
//! the hub's environment (a system written into the topology by hand and
//! provisioned at start). The topology file never holds a secret, and the
//! variable is one of the reserved namespace (checked at load), never any
//! other of the hub's environment. The values are read when a topology
//! generation is loaded, not on every call: a call then compares against
//! this table, and a new generation (a reload, a restart, a credential
//! written) reads them again. An unset or empty value means "no token"
//! (an empty token would let an empty header through).
//!
//! The table is never printed: its `Debug` names the systems only.

use std::collections::HashMap;

use super::credentials::HeldTokens;
use super::model::{System, Topology};

/// Each system's token, by system id.
#[derive(Clone, Default)]
pub struct Tokens {
    by_system: HashMap<String, String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.by_system.keys()).finish()
    }
}

impl Tokens {
    /// The tokens of every system of `topology`, as the environment holds
    /// them now (the environment only).
    pub fn from_env(topology: &Topology) -> Self {
        Self::read_all(topology, &HeldTokens::default())
    }

    /// The tokens of every system of `topology`: the store's (`held`),
    /// else the environment's.
    pub fn read_all(topology: &Topology, held: &HeldTokens) -> Self {
        let by_system = topology
            .systems
            .iter()
            .filter_map(|s| Self::read(s, held).map(|t| (s.id.clone(), t)))
            .collect();
        Self { by_system }
    }

    /// `system`'s token as the store (`held`) holds it, else as the
    /// environment does now.
    pub fn read(system: &System, held: &HeldTokens) -> Option<String> {
        held.get(&system.token_env).map(str::to_string).or_else(|| {
            std::env::var(&system.token_env)
                .ok()
                .filter(|t| !t.trim().is_empty())
        })
    }

    /// Where `system`'s token comes from now (never the value).
    pub fn source(system: &System, held: &HeldTokens) -> CredentialSource {
        if held.holds(&system.token_env) {
            CredentialSource::Store
        } else if std::env::var(&system.token_env).is_ok_and(|t| !t.trim().is_empty()) {
            CredentialSource::Environment
        } else {
            CredentialSource::None
        }
    }

    /// The token of system `id`, if the hub holds one.
    pub fn of(&self, id: &str) -> Option<&str> {
        self.by_system.get(id).map(String::as_str)
    }

    /// Every system that holds a token, with it (for a comparison against
    /// each in turn).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.by_system
            .iter()
            .map(|(id, t)| (id.as_str(), t.as_str()))
    }
}

/// Where a system's credential comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialSource {
    /// The hub's credential store (made by the hub, or given once).
    Store,
    /// The hub's environment, provisioned at start.
    Environment,
    /// Nowhere: the system cannot authenticate with a static token.
    None,
}

impl CredentialSource {
    /// How `hub credentials list` and the audit trail name it.
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialSource::Store => "store",
            CredentialSource::Environment => "environment",
            CredentialSource::None => "none",
        }
    }
}
