//! The topology YAML (`registry::load::load_str`): the file an operator
//! edits by hand, parsed, validated and its contracts compiled.
//!
//! Properties beyond "no panic" (the loader's promise: every complaint
//! names the file, the line and the field):
//! - a refusal is `Invalid` with at least one issue, each with a line and
//!   a column from 1 and a message that is not empty;
//! - its `Display` is not empty and every issue's line starts with the
//!   file name given (`file:line:column: field: message`).
//!
//! [`check_file_error`] is shared with [`super::agents_config`].

use exchange::located::FileError;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;

use crate::gen;
use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "topology",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &[
        "config/topology.yaml",
        "config/peers/echo.topology.yaml",
        "config/peers/logistics.topology.yaml",
        "config/peers/ratesdesk.topology.yaml",
    ],
};

/// The file name every message must name.
const FILE: &str = "fuzz/topology.yaml";

const DICTIONARY: &[&str] = &[
    "\n- ",
    ": ",
    "  ",
    "[]",
    "{}",
    "null",
    "~",
    "&a ",
    "*a",
    "!!str ",
    "|\n",
    "'",
    "\"",
    "#",
    "version: 1\n",
    "systems:",
    "capabilities:",
    "rules:",
    "id: ",
    "base_url: ",
    "http://127.0.0.1:1",
    "token_env: ",
    "provides: ",
    "consumes: ",
    "response_schema:",
    "input_schema:",
    "type: object",
    "properties:",
    "items:",
    "[].",
    "keep",
    "{ round: 2 }",
    "9999999999999999999999",
    "-1",
    "0.0.0.0/0",
    "::/0",
];

/// The file's top-level keys.
const SECTIONS: &[&str] = &[
    "version",
    "hub",
    "systems",
    "capabilities",
    "rules",
    "initial_edges",
];

const KEYS: &[&str] = &[
    "version",
    "hub",
    "id",
    "default_deadline_ms",
    "probe_interval_ms",
    "probe_timeout_ms",
    "auth",
    "mtls",
    "systems",
    "name",
    "node_type",
    "base_url",
    "token_env",
    "ip_allowlist",
    "provides",
    "consumes",
    "agents",
    "datasources",
    "description",
    "data_plane",
    "capability",
    "capabilities",
    "provider",
    "consumers",
    "deadline_ms",
    "task_deadline_ms",
    "kind",
    "input_schema",
    "response_schema",
    "type",
    "properties",
    "items",
    "required",
    "enum",
    "fields",
    "untrusted",
    "negotiates",
    "rules",
    "consumer",
    "initial_edges",
    "from",
    "to",
    "answered_by",
    "reason_codes",
    "retention_days",
];

const WORDS: &[&str] = &[
    "hub",
    "vendorcorp",
    "buyercorp",
    "orders.query",
    "system",
    "http://127.0.0.1:3101",
    "WS_TOKEN_VENDORCORP",
    "127.0.0.1/32",
    "object",
    "array",
    "string",
    "integer",
    "number",
    "keep",
    "groups[].key",
    "groups",
    "key",
    "value",
    "data_share",
    "a2a",
];

fn run(input: &[u8]) -> Result<Class, Broken> {
    let text = match super::text(input) {
        Ok(text) => text,
        Err(class) => return Ok(class),
    };
    match hub::registry::load::load_str(FILE, text) {
        Ok(_) => Ok("ok".into()),
        Err(e) => check_file_error(FILE, SECTIONS, &e),
    }
}

/// The promise of a located refusal (see the module doc); its class is
/// the first issue's field (indices cut) and first words.
/// `sections` are the file's top-level keys: a class names one of them or
/// `other`.
pub fn check_file_error(file: &str, sections: &[&str], error: &FileError) -> Result<Class, Broken> {
    let FileError::Invalid {
        file: named,
        issues,
    } = error
    else {
        return Err(format!("a refusal of text that is not Invalid: {error}"));
    };
    if named != file {
        return Err(format!("the refusal names {named:?}, not {file:?}"));
    }
    let Some(first) = issues.first() else {
        return Err("Invalid with no issue".into());
    };
    for issue in issues {
        if issue.line == 0 || issue.column == 0 {
            return Err(format!(
                "issue at line {} column {}: {issue:?}",
                issue.line, issue.column
            ));
        }
        // The field may be empty: an unknown key `""` is the field `` (the
        // message still names it: "unknown field ``").
        if issue.message.trim().is_empty() {
            return Err(format!("issue with an empty message: {issue:?}"));
        }
    }
    let shown = error.to_string();
    if shown.trim().is_empty() {
        return Err("an empty Display".into());
    }
    let prefix = format!("{file}:");
    let lines_start = issues
        .iter()
        .map(|i| format!("{file}:{}:{}: ", i.line, i.column))
        .all(|head| shown.contains(&head));
    if !shown.starts_with(&prefix) || !lines_start {
        return Err(format!(
            "the Display does not name {file} on every issue: {shown:?}"
        ));
    }
    // The top-level section and the kind of complaint: the fuzzed names
    // and values stay out of the class.
    let top = first.field.split(['.', '[']).next().unwrap_or_default();
    let section = if sections.contains(&top) {
        top
    } else {
        "other"
    };
    Ok(format!(
        "{section}: {}",
        crate::first_words(&first.message, 2)
    ))
}

/// Seeds with nodes replaced, and topology-shaped YAML.
fn generate(seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        3 => gen::seed_variants(seeds, gen::parse_yaml, KEYS, WORDS).prop_map(|v| gen::to_yaml(&v)),
        1 => gen::yaml_bytes(KEYS, WORDS, 4),
    ]
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_reach_past_validation() {
        for seed in ["corpus/topology/small.yaml", "../config/topology.yaml"] {
            let text = std::fs::read(crate::crate_dir().join(seed)).expect("seed");
            assert_eq!(run(&text), Ok("ok".to_string()), "{seed}");
        }
        let unknown = b"version: 1\nnope: 2\n";
        assert!(run(unknown).is_ok_and(|class| class.starts_with("other: unknown field")));
    }
}
