//! The members' bearer tokens, read once per registry generation.
//!
//! A system's token lives in the environment variable its topology entry
//! names (`token_env`), or, for a variable the environment does not set,
//! in the hub's own credentials file (`super::credentials`: the tokens it
//! generated when a system was onboarded from the canvas); the topology
//! file never holds a secret. The variables are
//! read when a topology generation is loaded, not on every call: a call
//! then compares against this table, and a new generation (a reload, a
//! restart) reads them again. An unset or empty variable means "no token"
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

    /// The tokens of every system of `topology`: the environment's, else
    /// the hub-held one of `held`.
    pub fn read_all(topology: &Topology, held: &HeldTokens) -> Self {
        let by_system = topology
            .systems
            .iter()
            .filter_map(|s| Self::read(s, held).map(|t| (s.id.clone(), t)))
            .collect();
        Self { by_system }
    }

    /// `system`'s token as the environment holds it now, else as `held`
    /// does.
    pub fn read(system: &System, held: &HeldTokens) -> Option<String> {
        std::env::var(&system.token_env)
            .ok()
            .filter(|t| !t.trim().is_empty())
            .or_else(|| held.get(&system.token_env).map(str::to_string))
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
