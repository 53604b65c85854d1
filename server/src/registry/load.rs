//! Loading and validating the topology file.
//!
//! An operator edits this file by hand, so every complaint names the file,
//! the line and the field (`config/topology.yaml:14:5: systems[1].base_url:
//! ...`), and validation reports every problem it finds, not just the first.
//! Parsing (types, unknown fields) is serde's job; the semantic checks
//! (duplicates, dangling references, URLs, schemas) are done here and point
//! back into the text with a small indentation-based locator.

use std::collections::HashSet;
use std::path::Path;

pub use exchange::located::Issue;
use exchange::located::{parse_yaml, render_issues, Locator, Seg};

use super::model::Topology;
use crate::contract::Contracts;

/// Why a topology file was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read at all.
    #[error("{file}: cannot read the topology file: {source}")]
    Read {
        /// The path as given.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file was read but is not a valid topology.
    #[error("{}", render_issues(file, issues))]
    Invalid {
        /// The path as given.
        file: String,
        /// Every problem found, in file order.
        issues: Vec<Issue>,
    },
}

impl LoadError {
    /// The located problems (empty for a read error).
    pub fn issues(&self) -> &[Issue] {
        match self {
            LoadError::Read { .. } => &[],
            LoadError::Invalid { issues, .. } => issues,
        }
    }

    /// The same message with the file named by its file name alone: what
    /// a browser may be shown (the hub's directory layout is not its
    /// business), while logs keep the full path.
    pub fn public_message(&self) -> String {
        let short = |file: &str| {
            Path::new(file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "topology file".to_string())
        };
        match self {
            LoadError::Read { file, source } => {
                format!("{}: cannot read the topology file: {source}", short(file))
            }
            LoadError::Invalid { file, issues } => render_issues(&short(file), issues),
        }
    }
}

/// A validated topology together with its compiled response contracts:
/// the two are built and swapped as one, so a call never sees a schema of
/// another generation.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The parsed file.
    pub topology: Topology,
    /// Compiled response schemas by capability id.
    pub contracts: Contracts,
}

/// Reads and validates the topology file at `path`.
pub fn load_file(path: &Path) -> Result<Loaded, LoadError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        file: file.clone(),
        source,
    })?;
    load_str(&file, &text)
}

/// Parses and validates topology `text`; `file` is only used in messages.
pub fn load_str(file: &str, text: &str) -> Result<Loaded, LoadError> {
    let invalid = |issues| LoadError::Invalid {
        file: file.to_string(),
        issues,
    };
    let topology: Topology = parse_yaml(text).map_err(|issue| invalid(vec![issue]))?;
    let locator = Locator::new(text);
    let mut issues = validate(&topology, &locator);
    // Contracts (schemas, whitelist, redaction, untrusted fields):
    // compiled once, every problem located (`crate::contract`).
    let contracts = match Contracts::compile(&topology) {
        Ok(c) => Some(c),
        Err(errors) => {
            for (path, message) in errors {
                issues.push(locator.issue(&path, message));
            }
            None
        }
    };
    issues.sort_by_key(|i| (i.line, i.column));
    match contracts {
        Some(contracts) if issues.is_empty() => Ok(Loaded {
            topology,
            contracts,
        }),
        _ => Err(invalid(issues)),
    }
}

/// Every semantic check, every problem collected.
fn validate(t: &Topology, loc: &Locator) -> Vec<Issue> {
    let key = |k: &'static str| Seg::key(k);
    let mut issues = Vec::new();
    let mut push = |path: &[Seg], msg: String| issues.push(loc.issue(path, msg));

    if t.version != 1 {
        push(
            &[key("version")],
            format!("unsupported version {}; only version 1 exists", t.version),
        );
    }
    if !exchange::id::is_valid(&t.hub.id) {
        push(&[key("hub"), key("id")], exchange::id::rule_for("hub id"));
    }
    for (field, value) in [
        ("default_deadline_ms", t.hub.default_deadline_ms),
        ("probe_interval_ms", t.hub.probe_interval_ms),
        ("probe_timeout_ms", t.hub.probe_timeout_ms),
    ] {
        if value == 0 {
            push(&[key("hub"), key(field)], "must be greater than 0".into());
        }
    }

    let capability_ids: HashSet<&str> = t.capabilities.iter().map(|c| c.id.as_str()).collect();
    let system_ids: HashSet<&str> = t.systems.iter().map(|s| s.id.as_str()).collect();

    let mut seen = HashSet::new();
    for (i, s) in t.systems.iter().enumerate() {
        let at = |rest: &[Seg<'static>]| -> Vec<Seg<'static>> {
            let mut p = vec![key("systems"), Seg::Index(i)];
            p.extend_from_slice(rest);
            p
        };
        if !exchange::id::is_valid(&s.id) {
            push(&at(&[key("id")]), exchange::id::rule_for("system id"));
        } else if !seen.insert(s.id.as_str()) {
            push(&at(&[key("id")]), format!("duplicate system id `{}`", s.id));
        } else if s.id == t.hub.id {
            push(
                &at(&[key("id")]),
                format!("`{}` is the hub's own id and cannot name a system", s.id),
            );
        }
        if s.name.trim().is_empty() {
            push(&at(&[key("name")]), "must not be empty".into());
        }
        if let Err(why) = check_base_url(&s.base_url) {
            push(&at(&[key("base_url")]), why);
        }
        if s.token_env.trim().is_empty() {
            push(
                &at(&[key("token_env")]),
                "must name the environment variable holding this system's token".into(),
            );
        } else if !s
            .token_env
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            push(
                &at(&[key("token_env")]),
                "must be an environment variable name (letters, digits, _)".into(),
            );
        }
        for (list, entries) in [("provides", &s.provides), ("consumes", &s.consumes)] {
            for (k, cap) in entries.iter().enumerate() {
                if !capability_ids.contains(cap.as_str()) {
                    push(
                        &at(&[key(list), Seg::Index(k)]),
                        format!("unknown capability `{cap}`"),
                    );
                }
            }
        }
        for (list, ids) in [
            (
                "agents",
                s.agents.iter().map(|a| a.id.as_str()).collect::<Vec<_>>(),
            ),
            (
                "datasources",
                s.datasources
                    .iter()
                    .map(|d| d.id.as_str())
                    .collect::<Vec<_>>(),
            ),
        ] {
            let mut seen_child = HashSet::new();
            for (k, id) in ids.into_iter().enumerate() {
                if !exchange::id::is_valid(id) {
                    push(
                        &at(&[key(list), Seg::Index(k), key("id")]),
                        exchange::id::rule_for("id"),
                    );
                } else if !seen_child.insert(id) {
                    push(
                        &at(&[key(list), Seg::Index(k), key("id")]),
                        format!("duplicate id `{id}` in {list} of `{}`", s.id),
                    );
                }
            }
        }
    }

    let mut seen = HashSet::new();
    for (i, c) in t.capabilities.iter().enumerate() {
        if !exchange::id::is_valid(&c.id) {
            push(
                &[key("capabilities"), Seg::Index(i), key("id")],
                exchange::id::rule_for("capability id"),
            );
        } else if !seen.insert(c.id.as_str()) {
            push(
                &[key("capabilities"), Seg::Index(i), key("id")],
                format!("duplicate capability id `{}`", c.id),
            );
        }
        if c.deadline_ms == Some(0) {
            push(
                &[key("capabilities"), Seg::Index(i), key("deadline_ms")],
                "must be greater than 0".into(),
            );
        }
    }

    for (i, r) in t.rules.iter().enumerate() {
        let at = |rest: &[Seg<'static>]| -> Vec<Seg<'static>> {
            let mut p = vec![key("rules"), Seg::Index(i)];
            p.extend_from_slice(rest);
            p
        };
        if !capability_ids.contains(r.capability.as_str()) {
            push(
                &at(&[key("capability")]),
                format!("unknown capability `{}`", r.capability),
            );
        }
        match t.system(&r.provider) {
            None => push(
                &at(&[key("provider")]),
                format!("unknown provider `{}`", r.provider),
            ),
            Some(p) => {
                if capability_ids.contains(r.capability.as_str())
                    && !p.provides.iter().any(|c| c == &r.capability)
                {
                    push(
                        &at(&[key("provider")]),
                        format!(
                            "`{}` does not list `{}` under provides",
                            r.provider, r.capability
                        ),
                    );
                }
            }
        }
        if r.consumers.is_empty() {
            push(
                &at(&[key("consumers")]),
                "must name at least one consumer".into(),
            );
        }
        for (k, consumer) in r.consumers.iter().enumerate() {
            if consumer != &t.hub.id && !system_ids.contains(consumer.as_str()) {
                push(
                    &at(&[key("consumers"), Seg::Index(k)]),
                    format!("unknown consumer `{consumer}`"),
                );
            } else if consumer == &r.provider {
                push(
                    &at(&[key("consumers"), Seg::Index(k)]),
                    format!("`{consumer}` cannot consume its own capability"),
                );
            }
        }
    }
    let mut seen = HashSet::new();
    for (i, e) in t.initial_edges.iter().enumerate() {
        let at = |field: &'static str| [key("initial_edges"), Seg::Index(i), key(field)];
        let consumer_known = e.consumer == t.hub.id || system_ids.contains(e.consumer.as_str());
        let provider_known = system_ids.contains(e.provider.as_str());
        let capability_known = capability_ids.contains(e.capability.as_str());
        if !consumer_known {
            push(
                &at("consumer"),
                format!("unknown consumer `{}`", e.consumer),
            );
        }
        if !provider_known {
            push(
                &at("provider"),
                format!("unknown provider `{}`", e.provider),
            );
        }
        if !capability_known {
            push(
                &at("capability"),
                format!("unknown capability `{}`", e.capability),
            );
        }
        if consumer_known && provider_known && capability_known {
            if !t.permits(&e.consumer, &e.capability, &e.provider) {
                push(
                    &[key("initial_edges"), Seg::Index(i)],
                    format!(
                        "no rule lets {} consume {} from {}",
                        e.consumer, e.capability, e.provider
                    ),
                );
            } else if !seen.insert(e.id()) {
                push(
                    &[key("initial_edges"), Seg::Index(i)],
                    format!("duplicate edge `{}`", e.id()),
                );
            }
        }
    }
    issues
}

/// `http://host:port`, optionally with a trailing `/`, nothing more. The
/// message never repeats the URL: base URLs are internal.
fn check_base_url(raw: &str) -> Result<(), String> {
    let rule = "must be http://host:port (no path, query, credentials or TLS)";
    let url = reqwest::Url::parse(raw).map_err(|e| format!("{rule}: {e}"))?;
    let ok = url.scheme() == "http"
        && url.host_str().is_some_and(|h| !h.is_empty())
        && url.port().is_some_and(|p| p != 0)
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        // `Url` normalises away a `/` the operator did not write; reject
        // any other path the operator did write.
        && {
            let after_scheme = raw.trim_start_matches("http://");
            let path_start = after_scheme.find('/').unwrap_or(after_scheme.len());
            matches!(&after_scheme[path_start..], "" | "/")
        };
    if ok {
        Ok(())
    } else {
        Err(rule.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "config/topology.yaml";

    /// A small valid file; tests break one line of it at a time. Line
    /// numbers in assertions refer to this text.
    const BASE: &str = "\
version: 1
systems:
  - id: alpha
    name: Alpha
    base_url: http://127.0.0.1:3101
    token_env: WS_TOKEN_ALPHA
    ip_allowlist: [127.0.0.1/32]
    provides: [cap.one]
  - id: beta
    name: Beta
    base_url: http://127.0.0.1:3102
    token_env: WS_TOKEN_BETA
    ip_allowlist: [127.0.0.1/32]
    consumes:
      - cap.one
capabilities:
  - id: cap.one
    kind: consult
    response_schema:
      type: object
rules:
  - capability: cap.one
    provider: alpha
    consumers: [beta, hub]
";

    fn issues_of(text: &str) -> Vec<Issue> {
        match load_str(FILE, text) {
            Ok(_) => panic!("expected the file to be rejected"),
            Err(e) => e.issues().to_vec(),
        }
    }

    fn one(text: &str) -> Issue {
        let issues = issues_of(text);
        assert_eq!(issues.len(), 1, "{issues:#?}");
        issues.into_iter().next().unwrap_or_else(|| unreachable!())
    }

    #[test]
    fn the_base_file_and_the_shipped_topology_load() {
        assert!(load_str(FILE, BASE).is_ok());
        let shipped = include_str!("../../../config/topology.yaml");
        match load_str(FILE, shipped) {
            Ok(l) => {
                assert_eq!(l.topology.systems.len(), 3);
                assert!(l
                    .topology
                    .permits("buyercorp", "orders.query", "vendorcorp"));
                assert!(l.topology.permits("hub", "ticket.classify", "helpdesk"));
                assert!(!l.topology.permits("helpdesk", "orders.query", "vendorcorp"));
            }
            Err(e) => panic!("shipped topology is invalid:\n{e}"),
        }
    }

    #[test]
    fn type_error_names_file_line_column_and_field() {
        let text = BASE.replace("base_url: http://127.0.0.1:3102", "base_url: [1, 2]");
        let err = load_str(FILE, &text).expect_err("rejected");
        let msg = err.to_string();
        assert!(
            msg.starts_with("config/topology.yaml:11:15: systems[1].base_url: invalid type"),
            "{msg}"
        );
    }

    #[test]
    fn unknown_field_and_missing_field_are_located() {
        let text = BASE.replace("    name: Beta\n", "    nmae: Beta\n");
        let issue = one(&text);
        assert_eq!(issue.line, 10, "{issue:?}");
        assert!(
            issue.message.starts_with("unknown field `nmae`"),
            "{issue:?}"
        );
        assert_eq!(issue.field, "systems[1].nmae");
    }

    #[test]
    fn syntax_error_is_located() {
        let text = BASE.replace("    provides: [cap.one]", "    provides: [cap.one");
        let issue = one(&text);
        assert!(issue.line >= 8, "{issue:?}");
    }

    #[test]
    fn duplicate_system_and_capability_ids() {
        let text = BASE.replace("  - id: beta", "  - id: alpha").replace(
            "rules:",
            "  - id: cap.one\n    kind: consult\n    response_schema: {}\nrules:",
        );
        let issues = issues_of(&text);
        let dup_sys = issues
            .iter()
            .find(|i| i.message.contains("duplicate system id"))
            .expect("duplicate system reported");
        assert_eq!((dup_sys.line, dup_sys.field.as_str()), (9, "systems[1].id"));
        let dup_cap = issues
            .iter()
            .find(|i| i.message.contains("duplicate capability id"))
            .expect("duplicate capability reported");
        assert_eq!(
            (dup_cap.line, dup_cap.field.as_str()),
            (21, "capabilities[1].id")
        );
    }

    #[test]
    fn rule_with_unknown_capability_provider_and_consumer() {
        let text = BASE
            .replace("  - capability: cap.one", "  - capability: cap.nope")
            .replace("    provider: alpha", "    provider: gamma")
            .replace("consumers: [beta, hub]", "consumers: [beta, zeta]");
        let issues = issues_of(&text);
        let lines: Vec<(usize, &str)> = issues.iter().map(|i| (i.line, i.field.as_str())).collect();
        assert_eq!(
            lines,
            vec![
                (22, "rules[0].capability"),
                (23, "rules[0].provider"),
                (24, "rules[0].consumers[1]"),
            ],
            "{issues:#?}"
        );
        assert!(issues[2].message.contains("zeta"));
    }

    #[test]
    fn provider_must_list_the_capability() {
        let text = BASE.replace("    provides: [cap.one]\n", "");
        let issue = one(&text);
        assert_eq!(
            (issue.line, issue.field.as_str()),
            (22, "rules[0].provider")
        );
        assert!(issue
            .message
            .contains("does not list `cap.one` under provides"));
    }

    #[test]
    fn provides_and_consumes_must_name_known_capabilities() {
        let text = BASE
            .replace(
                "    provides: [cap.one]",
                "    provides: [cap.one, cap.two]",
            )
            .replace("      - cap.one\n", "      - cap.one\n      - cap.three\n");
        let issues = issues_of(&text);
        let got: Vec<(usize, &str)> = issues.iter().map(|i| (i.line, i.field.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (8, "systems[0].provides[1]"),
                (16, "systems[1].consumes[1]")
            ]
        );
    }

    #[test]
    fn bad_base_urls_are_rejected_without_echoing_them() {
        for bad in [
            "https://127.0.0.1:3102",
            "http://127.0.0.1",
            "http://127.0.0.1:3102/a2a",
            "http://user:pw@127.0.0.1:3102",
            "127.0.0.1:3102",
        ] {
            let text = BASE.replace("http://127.0.0.1:3102", bad);
            let issue = one(&text);
            assert_eq!(
                (issue.line, issue.field.as_str()),
                (11, "systems[1].base_url"),
                "{bad}"
            );
            assert!(!issue.message.contains(bad), "{bad}: {}", issue.message);
        }
        let ok = BASE.replace("http://127.0.0.1:3102", "http://localhost:3102/");
        assert!(load_str(FILE, &ok).is_ok());
    }

    #[test]
    fn empty_token_env_is_rejected() {
        let text = BASE.replace("token_env: WS_TOKEN_BETA", "token_env: \"\"");
        let issue = one(&text);
        assert_eq!(
            (issue.line, issue.field.as_str()),
            (12, "systems[1].token_env")
        );
    }

    #[test]
    fn invalid_response_schema_is_rejected() {
        let text = BASE.replace("      type: object", "      type: 12");
        let issue = one(&text);
        assert_eq!(
            (issue.line, issue.field.as_str()),
            (19, "capabilities[0].response_schema")
        );
    }

    #[test]
    fn wrong_version_is_rejected() {
        let issue = one(&BASE.replace("version: 1", "version: 2"));
        assert_eq!((issue.line, issue.field.as_str()), (1, "version"));
    }

    #[test]
    fn all_errors_are_collected_in_line_order() {
        let text = BASE
            .replace("version: 1", "version: 3")
            .replace("token_env: WS_TOKEN_ALPHA", "token_env: \" \"")
            .replace("http://127.0.0.1:3102", "ftp://x:1")
            .replace("consumers: [beta, hub]", "consumers: [nobody]");
        let lines: Vec<usize> = issues_of(&text).iter().map(|i| i.line).collect();
        assert_eq!(lines, vec![1, 6, 11, 24]);
        let msg = load_str(FILE, &text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert_eq!(msg.lines().count(), 4, "{msg}");
        assert!(
            msg.lines().all(|l| l.starts_with("config/topology.yaml:")),
            "{msg}"
        );
    }

    #[test]
    fn initial_edges_must_be_known_and_permitted() {
        let ok = format!(
            "{BASE}initial_edges:\n  - {{consumer: beta, provider: alpha, capability: cap.one}}\n"
        );
        let loaded = load_str(FILE, &ok).expect("a permitted edge loads");
        assert_eq!(loaded.topology.initial_edges[0].id(), "beta->alpha:cap.one");
        let bad = format!(
            "{BASE}initial_edges:\n  - consumer: alpha\n    provider: beta\n    capability: cap.one\n  - consumer: zeta\n    provider: alpha\n    capability: cap.one\n"
        );
        let issues = issues_of(&bad);
        let got: Vec<(usize, &str)> = issues.iter().map(|i| (i.line, i.field.as_str())).collect();
        assert_eq!(
            got,
            vec![(26, "initial_edges[0]"), (29, "initial_edges[1].consumer")],
            "{issues:#?}"
        );
        assert_eq!(
            issues[0].message,
            "no rule lets alpha consume cap.one from beta"
        );
        let dup = format!(
            "{BASE}initial_edges:\n  - {{consumer: hub, provider: alpha, capability: cap.one}}\n  - {{consumer: hub, provider: alpha, capability: cap.one}}\n"
        );
        assert!(one(&dup)
            .message
            .contains("duplicate edge `hub->alpha:cap.one`"));
    }

    #[test]
    fn the_public_message_names_the_file_only() {
        let text = BASE.replace("version: 1", "version: 2");
        let err = load_str("/srv/secret/dir/topology.yaml", &text).expect_err("rejected");
        assert!(err.to_string().contains("/srv/secret/dir/"));
        let public = err.public_message();
        assert!(public.starts_with("topology.yaml:1:1: version"), "{public}");
        assert!(!public.contains("/srv"), "{public}");
    }
}
