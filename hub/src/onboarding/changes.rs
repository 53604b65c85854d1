//! The three changes an operator makes to the exchange from the canvas,
//! each as the edits of the topology file it takes (`registry::write`
//! applies them, validates the result and writes it):
//!
//! - [`join`]: a system's section appended — the system, the capabilities
//!   it brings, the rules of what it provides, and itself added to the
//!   rules it `calls`;
//! - [`leave`]: a system removed with everything that names it — its
//!   rules, the capabilities only it provided (and every `consumes` entry
//!   of them), its place among other rules' consumers, the seeded edges
//!   that name it, and its hub-held token;
//! - [`set_consumer`]: one consumer added to a rule or taken off it, the
//!   consumer's `consumes` list kept in step.
//!
//! Each refuses what it can tell is wrong with a sentence naming it; what
//! it cannot, the loader's validation of the result names, located.

use serde::Serialize;

use super::section::Section;
use crate::registry::edit::{Block, Edit};
use crate::registry::model::{System, Topology};
use crate::registry::write::{Change, CredentialChange, WriteError};

/// The edits that add `section` to `t`; `credential`: the token the hub
/// generated for it, kept under its `token_env`.
pub fn join(
    t: &Topology,
    section: Section,
    credential: Option<String>,
) -> Result<Change, WriteError> {
    let Section {
        mut system,
        capabilities,
        rules,
        calls,
    } = section;
    if t.system(&system.id).is_some() {
        return Err(WriteError::refused(format!(
            "a system `{}` already exists",
            system.id
        )));
    }
    if system.id == t.hub.id {
        return Err(WriteError::refused(format!(
            "`{}` is the hub's own id",
            system.id
        )));
    }
    let base = system.base_url.trim_end_matches('/');
    if let Some(other) = t
        .systems
        .iter()
        .find(|s| s.base_url.trim_end_matches('/') == base)
    {
        return Err(WriteError::refused(format!(
            "{base} is already the address of `{}`",
            other.id
        )));
    }
    if let Some(c) = capabilities.iter().find(|c| t.capability(&c.id).is_some()) {
        return Err(WriteError::refused(format!(
            "capability `{}` already exists: keep it in `provides` and drop its definition from `capabilities`",
            c.id
        )));
    }
    if let Some(r) = rules
        .iter()
        .find(|r| r.provider != system.id || !system.provides.contains(&r.capability))
    {
        return Err(WriteError::refused(format!(
            "the rule for `{}` of `{}` is not for what `{}` provides; a joining system adds rules for its own capabilities only",
            r.capability, r.provider, system.id
        )));
    }
    if let Some(r) = rules.iter().find(|r| {
        t.rules
            .iter()
            .any(|x| x.capability == r.capability && x.provider == r.provider)
    }) {
        return Err(WriteError::refused(format!(
            "a rule for `{}` of `{}` already exists",
            r.capability, r.provider
        )));
    }
    let mut edits = Vec::new();
    for call in &calls {
        let Some(index) = rule_index(t, &call.capability, &call.provider) else {
            return Err(WriteError::refused(format!(
                "`calls`: no rule lets anyone call `{}` of `{}`; a new system joins existing rules only",
                call.capability, call.provider
            )));
        };
        let rule = &t.rules[index];
        if !rule.consumers.contains(&system.id) {
            let mut rule = rule.clone();
            rule.consumers.push(system.id.clone());
            edits.push(Edit::SetList {
                block: Block::Rules,
                index,
                field: "consumers",
                values: rule.consumers.clone(),
                item: value(&rule)?,
            });
        }
        if !system.consumes.contains(&call.capability) {
            system.consumes.push(call.capability.clone());
        }
    }
    let token_env = system.token_env.clone();
    edits.push(Edit::Append {
        block: Block::Systems,
        item: value(&system)?,
    });
    for c in &capabilities {
        edits.push(Edit::Append {
            block: Block::Capabilities,
            item: value(c)?,
        });
    }
    for r in &rules {
        edits.push(Edit::Append {
            block: Block::Rules,
            item: value(r)?,
        });
    }
    Ok(Change {
        edits,
        credential: credential.map(|token| CredentialChange::Set {
            name: token_env,
            token,
        }),
    })
}

/// The edits that remove system `id` and everything that names it.
pub fn leave(t: &Topology, id: &str) -> Result<Change, WriteError> {
    let Some(index) = t.systems.iter().position(|s| s.id == id) else {
        return Err(WriteError::refused(format!("no system `{id}`")));
    };
    let system = &t.systems[index];
    let mut edits = vec![Edit::Remove {
        block: Block::Systems,
        index,
    }];
    // Capabilities no other system provides go with it.
    let orphaned: Vec<&str> = system
        .provides
        .iter()
        .filter(|c| {
            !t.systems
                .iter()
                .any(|s| s.id != id && s.provides.contains(*c))
        })
        .map(String::as_str)
        .collect();
    for (i, c) in t.capabilities.iter().enumerate() {
        if orphaned.contains(&c.id.as_str()) {
            edits.push(Edit::Remove {
                block: Block::Capabilities,
                index: i,
            });
        }
    }
    for (i, s) in t.systems.iter().enumerate() {
        if s.id == id {
            continue;
        }
        if s.consumes.iter().any(|c| orphaned.contains(&c.as_str())) {
            let mut s = s.clone();
            s.consumes.retain(|c| !orphaned.contains(&c.as_str()));
            edits.push(list_edit(Block::Systems, i, "consumes", &s.consumes, &s)?);
        }
    }
    for (i, r) in t.rules.iter().enumerate() {
        if r.provider == id || orphaned.contains(&r.capability.as_str()) {
            edits.push(Edit::Remove {
                block: Block::Rules,
                index: i,
            });
        } else if r.consumers.iter().any(|c| c == id) {
            let mut r = r.clone();
            r.consumers.retain(|c| c != id);
            edits.push(list_edit(Block::Rules, i, "consumers", &r.consumers, &r)?);
        }
    }
    for (i, e) in t.initial_edges.iter().enumerate() {
        if e.consumer == id || e.provider == id || orphaned.contains(&e.capability.as_str()) {
            edits.push(Edit::Remove {
                block: Block::InitialEdges,
                index: i,
            });
        }
    }
    Ok(Change {
        edits,
        credential: Some(CredentialChange::Forget {
            name: system.token_env.clone(),
        }),
    })
}

/// The edits that let `consumer` call `capability` of `provider`
/// (`member`), or stop it.
pub fn set_consumer(
    t: &Topology,
    capability: &str,
    provider: &str,
    consumer: &str,
    member: bool,
) -> Result<Change, WriteError> {
    let Some(index) = rule_index(t, capability, provider) else {
        return Err(WriteError::refused(format!(
            "no rule for `{capability}` of `{provider}`"
        )));
    };
    if consumer != t.hub.id && t.system(consumer).is_none() {
        return Err(WriteError::refused(format!("no system `{consumer}`")));
    }
    let mut rule = t.rules[index].clone();
    let listed = rule.consumers.iter().any(|c| c == consumer);
    match (member, listed) {
        (true, true) => {
            return Err(WriteError::refused(format!(
                "`{consumer}` may already call `{capability}` of `{provider}`"
            )))
        }
        (false, false) => {
            return Err(WriteError::refused(format!(
                "`{consumer}` is not among the consumers of `{capability}` of `{provider}`"
            )))
        }
        (true, false) => rule.consumers.push(consumer.to_string()),
        (false, true) => rule.consumers.retain(|c| c != consumer),
    }
    let mut edits = vec![list_edit(
        Block::Rules,
        index,
        "consumers",
        &rule.consumers,
        &rule,
    )?];
    if let Some(si) = t.systems.iter().position(|s| s.id == consumer) {
        let mut s: System = t.systems[si].clone();
        let still = t.rules.iter().enumerate().any(|(i, r)| {
            i != index && r.capability == capability && r.consumers.iter().any(|c| c == consumer)
        });
        let changed = if member && !s.consumes.iter().any(|c| c == capability) {
            s.consumes.push(capability.to_string());
            true
        } else if !member && !still && s.consumes.iter().any(|c| c == capability) {
            s.consumes.retain(|c| c != capability);
            true
        } else {
            false
        };
        if changed {
            edits.push(list_edit(Block::Systems, si, "consumes", &s.consumes, &s)?);
        }
    }
    Ok(Change {
        edits,
        credential: None,
    })
}

fn rule_index(t: &Topology, capability: &str, provider: &str) -> Option<usize> {
    t.rules
        .iter()
        .position(|r| r.capability == capability && r.provider == provider)
}

fn list_edit<T: Serialize>(
    block: Block,
    index: usize,
    field: &'static str,
    values: &[String],
    item: &T,
) -> Result<Edit, WriteError> {
    Ok(Edit::SetList {
        block,
        index,
        field,
        values: values.to_vec(),
        item: value(item)?,
    })
}

fn value<T: Serialize>(v: &T) -> Result<serde_yaml_ng::Value, WriteError> {
    serde_yaml_ng::to_value(v)
        .map_err(|e| WriteError::refused(format!("the change cannot be written: {e}")))
}

#[cfg(test)]
#[path = "changes_tests.rs"]
mod tests;
