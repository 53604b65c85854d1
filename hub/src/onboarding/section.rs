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

use exchange::located::{parse_yaml, Issue, Locator, Seg};
use exchange::text::clip;
use serde::{Deserialize, Serialize};

use crate::registry::credentials;
use crate::registry::model::{Capability, ConnectionRule, System};

/// One system's section.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub capability: String,
    pub provider: String,
}

impl Section {
    /// A section's JSON Schema (published beside the topology file's:
    /// [`crate::registry::schema`]).
    pub fn schema() -> serde_json::Value {
        schemars::schema_for!(Section).to_value()
    }

    /// Parses the operator's text and checks what a section may bring;
    /// the refusal names the line, the column and the field of the
    /// section:
    ///
    /// - its credential variable is the one the hub assigns to its id
    ///   (`WS_TOKEN_<ID>`), never another system's nor any other variable
    ///   of the hub's environment;
    /// - its rules are for capabilities it provides itself: a joining
    ///   system says who may call *it*, never who may call another.
    pub fn parse(text: &str) -> Result<Self, String> {
        let located = |i: Issue| {
            format!(
                "the section, line {} column {}: {}: {}",
                i.line, i.column, i.field, i.message
            )
        };
        let section = parse_yaml::<Section>(text).map_err(located)?;
        match section.problems(&Locator::new(text)).into_iter().next() {
            Some(issue) => Err(located(issue)),
            None => Ok(section),
        }
    }

    fn problems(&self, loc: &Locator) -> Vec<Issue> {
        let mut issues = Vec::new();
        let system = &self.system;
        let variable = credentials::variable_for(&system.id);
        if system.token_env != variable {
            issues.push(loc.issue(
                &[Seg::key("system"), Seg::key("token_env")],
                format!(
                    "must be `{variable}`: the hub makes the credential of a system it onboards \
                     and keeps it under the variable its id names"
                ),
            ));
        }
        for (i, rule) in self.rules.iter().enumerate() {
            if rule.provider != system.id {
                issues.push(loc.issue(
                    &[Seg::key("rules"), Seg::Index(i), Seg::key("provider")],
                    format!(
                        "must be `{}`: a joining system adds rules for what it provides, \
                         never for `{}`'s capabilities",
                        system.id,
                        clip(&rule.provider, 64)
                    ),
                ));
            } else if !system.provides.contains(&rule.capability) {
                issues.push(loc.issue(
                    &[Seg::key("rules"), Seg::Index(i), Seg::key("capability")],
                    format!(
                        "`{}` is not in `system.provides`: a joining system adds rules for \
                         what it provides only",
                        clip(&rule.capability, 64)
                    ),
                ));
            }
        }
        issues
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

    const GOOD: &str = "system:\n  id: shipping\n  name: Shipping\n  base_url: http://127.0.0.1:1\n  token_env: WS_TOKEN_SHIPPING\n  ip_allowlist: [127.0.0.1/32]\n  provides: [ship.quote]\nrules:\n  - capability: ship.quote\n    provider: shipping\n    consumers: [hub]\n";

    #[test]
    fn a_section_names_its_own_credential_variable_only() {
        assert!(Section::parse(GOOD).is_ok());
        for other in ["WS_TOKEN_VENDORCORP", "WS_HUB_DB", "WS_TOKEN_SHIPPING2"] {
            let text = GOOD.replace(
                "token_env: WS_TOKEN_SHIPPING",
                &format!("token_env: {other}"),
            );
            let e = Section::parse(&text).expect_err(other);
            assert!(
                e.starts_with(
                    "the section, line 5 column 3: system.token_env: must be `WS_TOKEN_SHIPPING`"
                ),
                "{e}"
            );
        }
    }

    #[test]
    fn a_section_adds_rules_for_what_it_provides_only() {
        let text = GOOD.replace("    provider: shipping", "    provider: vendorcorp");
        let e = Section::parse(&text).expect_err("another's rule");
        assert!(
            e.starts_with("the section, line 10 column 5: rules[0].provider: must be `shipping`"),
            "{e}"
        );
        let text = GOOD.replace("  - capability: ship.quote", "  - capability: orders.query");
        let e = Section::parse(&text).expect_err("not provided");
        assert!(
            e.contains("rules[0].capability: `orders.query` is not in `system.provides`"),
            "{e}"
        );
    }
}
