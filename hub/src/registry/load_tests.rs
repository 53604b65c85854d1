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
        "ftp://127.0.0.1:3102",
        "https://127.0.0.1",
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
    for ok in ["http://localhost:3102/", "https://localhost:3102"] {
        let text = BASE.replace("http://127.0.0.1:3102", ok);
        assert!(load_str(FILE, &text).is_ok(), "{ok}");
    }
}

#[test]
fn a_data_plane_stays_plain_http() {
    let with_plane = |url: &str| {
        BASE.replace(
                "    provides: [cap.one]\n",
                &format!(
                    "    provides: [cap.one]\n    data_plane: {{base_url: \"{url}\", capability: cap.one}}\n"
                ),
            )
    };
    let url_issues = |url: &str| {
        let text = with_plane(url);
        let issues = match load_str(FILE, &text) {
            Ok(_) => Vec::new(),
            Err(e) => e.issues().to_vec(),
        };
        issues
            .into_iter()
            .filter(|i| i.field == "systems[0].data_plane.base_url")
            .map(|i| i.message)
            .collect::<Vec<_>>()
    };
    let refused = url_issues("https://127.0.0.1:3111");
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("plain HTTP only"), "{refused:?}");
    assert!(url_issues("http://127.0.0.1:3111").is_empty());
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
