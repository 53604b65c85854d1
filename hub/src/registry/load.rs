//! Loading and validating the topology file.
//!
//! An operator edits this file by hand, so every complaint names the file,
//! the line and the field (`config/topology.yaml:14:5: systems[1].base_url:
//! ...`), and validation reports every problem it finds, not just the first.
//! Parsing (types, unknown fields) is serde's job; the semantic checks
//! (duplicates, dangling references, URLs) are `super::validate`'s, the
//! contracts (schemas, whitelists) `crate::contract`'s; all of them point
//! back into the text with the shared locator (`exchange::located`). This
//! file only runs the three and keeps what they built together.

use std::path::Path;

pub use exchange::located::Issue;
use exchange::located::{parse_yaml, Locator, Seg};

use super::credentials::HeldTokens;
use super::member_cas::MemberCas;
use super::model::Topology;
use super::tokens::Tokens;
use crate::contract::Contracts;

/// Why a topology file was not accepted (`FileError::Read` or
/// `FileError::Invalid` with every problem located).
pub type LoadError = exchange::located::FileError;

/// A validated topology together with its compiled response contracts:
/// the two are built and swapped as one, so a call never sees a schema of
/// another generation.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The parsed file.
    pub topology: Topology,
    /// Compiled response schemas by capability id.
    pub contracts: Contracts,
    /// SHA-256 of the text it was loaded from: replicas compare it to see
    /// that they run the same topology.
    pub digest: String,
    /// The members' tokens, read from the environment (else the hub's
    /// credentials file beside the topology file) with this generation.
    pub tokens: Tokens,
    /// The members' CAs (`mtls.ca`), read with this generation.
    pub member_cas: MemberCas,
}

/// Reads and validates the topology file at `path`.
pub fn load_file(path: &Path) -> Result<Loaded, LoadError> {
    let text = LoadError::read(path, "topology file")?;
    load_str(&path.display().to_string(), &text)
}

/// Parses and validates topology `text`; `file` is only used in messages.
pub fn load_str(file: &str, text: &str) -> Result<Loaded, LoadError> {
    let invalid = |issues| LoadError::Invalid {
        file: file.to_string(),
        issues,
    };
    let topology: Topology = parse_yaml(text).map_err(|issue| invalid(vec![issue]))?;
    let locator = Locator::new(text);
    let mut issues = super::validate::validate(&topology, &locator);
    // Contracts (schemas, whitelist, redaction, untrusted fields):
    // compiled once, every problem located (`crate::contract`).
    let specs = topology
        .capabilities
        .iter()
        .map(|c| (c.id.as_str(), c.contract_spec()));
    let contracts = match Contracts::compile(specs) {
        Ok(c) => Some(c),
        Err(errors) => {
            for (i, problem) in errors {
                let mut path = vec![Seg::key("capabilities"), Seg::Index(i)];
                path.extend(problem.path);
                issues.push(locator.issue(&path, problem.message));
            }
            None
        }
    };
    // A CA file is named relative to the topology file.
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    let member_cas = MemberCas::read(&topology, dir, &locator).unwrap_or_else(|more| {
        issues.extend(more);
        MemberCas::default()
    });
    issues.sort_by_key(|i| (i.line, i.column));
    match contracts {
        Some(contracts) if issues.is_empty() => Ok(Loaded {
            contracts,
            member_cas,
            digest: exchange::wire::text_digest(text),
            tokens: Tokens::read_all(&topology, &HeldTokens::read(dir)),
            topology,
        }),
        _ => Err(invalid(issues)),
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
