//! The meaning of a topology file, checked (DESIGN.md §2 "topology file",
//! §1 rule 2): what serde cannot see — duplicate ids, rules and edges that
//! name systems or capabilities that do not exist, a provider that does not
//! list what a rule says it provides, base URLs, token env var names.
//!
//! Every problem is collected, located at its line through the text's
//! [`Locator`], never only the first; no message echoes a base URL or a
//! token env var's value. The loader (`super::load`) runs this after serde
//! accepted the file's shape, together with the contract checks
//! (`crate::contract`).
//!
//! [`validate`] runs one check per section of the file, in file order:
//! [`head`] (the version and the `hub` section), [`systems`],
//! [`capabilities`], [`rules`] and [`initial_edges`]. Each check pushes
//! what it finds through the one locating `push` it is given.

mod capabilities;
mod head;
mod initial_edges;
mod rules;
mod systems;

use std::collections::HashSet;

use exchange::located::{Issue, Locator, Seg};

use super::model::Topology;

/// Every semantic check, every problem collected.
pub(super) fn validate(t: &Topology, loc: &Locator) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut push = |path: &[Seg], msg: String| issues.push(loc.issue(path, msg));

    head::check(t, &mut push);
    systems::check(t, &mut push);
    capabilities::check(t, &mut push);
    rules::check(t, &mut push);
    initial_edges::check(t, &mut push);
    issues
}

/// A mapping key of a problem's path.
fn key(k: &'static str) -> Seg<'static> {
    Seg::key(k)
}

/// The ids the file's capabilities have.
fn capability_ids(t: &Topology) -> HashSet<&str> {
    t.capabilities.iter().map(|c| c.id.as_str()).collect()
}

/// The ids the file's systems have.
fn system_ids(t: &Topology) -> HashSet<&str> {
    t.systems.iter().map(|s| s.id.as_str()).collect()
}

/// Whether `name` may be a system's credential variable: one of the
/// hub's reserved namespace, `WS_TOKEN_` followed by capitals, digits and
/// `_` (`super::credentials::NAMESPACE`). No system can name any other
/// variable of the hub's environment (its database URL, a model key) as
/// its credential.
pub(super) fn credential_variable(name: &str) -> Result<(), String> {
    use super::credentials::NAMESPACE;
    let rest = name.strip_prefix(NAMESPACE).unwrap_or_default();
    if rest.is_empty()
        || !rest
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(format!(
            "must be a credential variable of the hub's reserved namespace: `{NAMESPACE}` \
             then capitals, digits or `_` (like `{NAMESPACE}VENDORCORP`)"
        ));
    }
    Ok(())
}
