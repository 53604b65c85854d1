//! The topology section of one system: what onboarding proposes from a
//! card and what the operator edits and saves. It has the shape of the
//! section files beside the reference peers' configs
//! (`config/peers/*.topology.yaml`), plus `calls`:
//!
//! ```yaml
//! system: { id, name, base_url, token_env, ip_allowlist, provides, … }
//! capabilities: [ … ]   # the ones it brings that the registry lacks
//! rules: [ … ]          # who may call what it provides
//! calls:                # existing rules it joins as a consumer
//!   - { capability: orders.query, provider: vendorcorp }
//! ```
//!
//! Parsing is serde's with the field path located in the section's own
//! text; the merged file is then validated by the loader like any edit.

use exchange::located::parse_yaml;
use serde::{Deserialize, Serialize};

use crate::registry::model::{Capability, ConnectionRule, System};

/// One system's section.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    pub system: System,
    #[serde(default)]
    pub capabilities: Vec<Capability>,
    #[serde(default)]
    pub rules: Vec<ConnectionRule>,
    #[serde(default)]
    pub calls: Vec<Call>,
}

/// An existing rule the new system joins as a consumer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub capability: String,
    pub provider: String,
}

impl Section {
    /// Parses the operator's text; the refusal names the line, the column
    /// and the field of the section.
    pub fn parse(text: &str) -> Result<Self, String> {
        parse_yaml::<Section>(text).map_err(|i| {
            format!(
                "the section, line {} column {}: {}: {}",
                i.line, i.column, i.field, i.message
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_located_refusal_names_the_sections_line_and_field() {
        let text = "system:\n  id: x\n  name: X\n  base_url: http://127.0.0.1:1\n  token_env: T\n  ip_allowlist: [not-a-cidr]\n";
        let e = Section::parse(text).expect_err("refused");
        assert!(e.starts_with("the section, line 6"), "{e}");
        assert!(e.contains("system.ip_allowlist"), "{e}");
        let e = Section::parse("system: {}\nextra: 1\n").expect_err("refused");
        assert!(e.contains("the section, line"), "{e}");
    }
}
