//! The peer file, loaded: its shape, every problem located at its line and
//! field, and what is checked beyond the shape.

use super::*;
use exchange::located::Issue;
use std::path::Path;

const GOOD: &str = r#"
system: vendorcorp
name: VendorCorp
listen: 127.0.0.1:3101
token_env: WS_TOKEN_VENDORCORP
hub_url: http://127.0.0.1:3000
database: var/vendorcorp.db
dataset: { kind: orders, seed: 42, rows: 624 }
skills:
  - capability: orders.query
    kind: data-share
    handler: table_query
    table: orders
    negotiable_columns: [region, order_date, order_value, product]
agents: [ {id: data-steward, name: "Data Steward"} ]
"#;

const FILE: &str = "peers/x.yaml";

fn err(text: &str) -> String {
    PeerConfig::parse(text, FILE).unwrap_err().to_string()
}

fn issues(text: &str) -> Vec<Issue> {
    match PeerConfig::parse(text, FILE) {
        Ok(_) => panic!("expected the file to be rejected"),
        Err(e) => e.issues().to_vec(),
    }
}

/// Asserts the `(line, field)` of each issue, in the order reported.
#[track_caller]
fn assert_located(text: &str, want: &[(usize, &str)]) {
    let got = issues(text);
    let located: Vec<(usize, &str)> = got.iter().map(|i| (i.line, i.field.as_str())).collect();
    assert_eq!(located, want, "{got:#?}");
}

#[test]
fn good_file_loads_with_defaults() {
    let c = PeerConfig::parse(GOOD, "x.yaml").unwrap();
    assert_eq!(c.system, "vendorcorp");
    assert_eq!(
        c.dataset,
        DatasetConfig::Orders {
            seed: 42,
            rows: 624
        }
    );
    assert_eq!(c.faults, Faults::default());
    assert!(c.skill("orders.query").is_some());
}

#[test]
fn unknown_field_is_named_with_the_file() {
    let e = err(&GOOD.replace("name: VendorCorp", "name: VendorCorp\ncolour: red"));
    assert!(e.starts_with("peers/x.yaml:4:1: colour: "), "{e}");
    assert!(e.contains("colour"), "{e}");
}

#[test]
fn unknown_dataset_field_is_named() {
    let e = err(&GOOD.replace("rows: 624", "rowz: 624"));
    assert!(e.contains("rowz"), "{e}");
    assert!(e.starts_with("peers/x.yaml:8:1: dataset: "), "{e}");
    // Block style: still the dataset's own line, not the document's.
    let block = GOOD.replace(
        "dataset: { kind: orders, seed: 42, rows: 624 }",
        "dataset:\n  kind: orders\n  rowz: 624",
    );
    assert!(
        err(&block).starts_with("peers/x.yaml:8:"),
        "{}",
        err(&block)
    );
}

#[test]
fn missing_field_is_named() {
    let e = err(&GOOD.replace("token_env: WS_TOKEN_VENDORCORP\n", ""));
    assert!(e.contains("token_env"), "{e}");
    assert!(e.starts_with("peers/x.yaml:"), "{e}");
}

#[test]
fn type_and_syntax_errors_are_one_located_issue() {
    let typed = issues(&GOOD.replace("agents: [", "faults: { stall_ms: soon }\nagents: ["));
    assert_eq!(typed.len(), 1, "{typed:?}");
    assert_eq!(
        (typed[0].line, typed[0].field.as_str()),
        (15, "faults.stall_ms")
    );
    let syntax = issues(&GOOD.replace("agents: [ {", "agents: [ {{"));
    assert_eq!(syntax.len(), 1, "{syntax:?}");
    assert!(syntax[0].line >= 15, "{syntax:?}");
}

#[test]
fn semantic_errors_name_the_field() {
    // (broken text, field path, line of GOOD it sits on)
    let cases = [
        (
            GOOD.replace("listen: 127.0.0.1:3101", "listen: nowhere"),
            "listen",
            4,
        ),
        (
            GOOD.replace("system: vendorcorp", "system: Vendor Corp"),
            "system",
            2,
        ),
        (
            GOOD.replace("table: orders", "table: budgets"),
            "skills[0].table",
            13,
        ),
        (
            GOOD.replace("kind: data-share", "kind: consult"),
            "skills[0].kind",
            11,
        ),
        (
            GOOD.replace("hub_url: http://127.0.0.1:3000", "hub_url: 127.0.0.1:3000"),
            "hub_url",
            6,
        ),
        (
            GOOD.replace("token_env: WS_TOKEN_VENDORCORP", "token_env: ws-token"),
            "token_env",
            5,
        ),
        (GOOD.replace("rows: 624", "rows: 0"), "dataset.rows", 8),
        (
            GOOD.replace(
                "handler: table_query\n    table: orders",
                "handler: budget_consult",
            ),
            "skills[0].handler",
            12,
        ),
        (
            GOOD.replace(
                "    negotiable_columns: [region, order_date, order_value, product]\n",
                "",
            ),
            // Absent: located at the skill it is missing from.
            "skills[0].negotiable_columns",
            10,
        ),
        (
            GOOD.replace("[region, order_date,", "[region, \"date; drop\","),
            "skills[0].negotiable_columns[1]",
            14,
        ),
    ];
    for (text, field, line) in cases {
        let e = err(&text);
        assert!(
            e.contains(&format!(": {field}: ")),
            "expected {field} in: {e}"
        );
        assert!(
            e.lines().any(|l| l.starts_with(&format!("{FILE}:{line}:"))
                && l.contains(&format!(": {field}: "))),
            "expected {field} at line {line} in: {e}"
        );
        assert!(e.lines().all(|l| l.starts_with("peers/x.yaml:")), "{e}");
    }
}

#[test]
fn every_problem_is_reported_in_line_order() {
    let text = GOOD
        .replace("agents: [ {id: data-steward", "agents: [ {id: Data Steward")
        .replace("[region, order_date,", "[region, \"date; drop\",")
        .replace("table: orders", "table: budgets")
        .replace("rows: 624", "rows: 0")
        .replace(
            "hub_url: http://127.0.0.1:3000",
            "hub_url: ftp://user:pw@hub",
        )
        .replace("token_env: WS_TOKEN_VENDORCORP", "token_env: sk-live-0123")
        .replace("system: vendorcorp", "system: Vendor Corp");
    assert_located(
        &text,
        &[
            (2, "system"),
            (5, "token_env"),
            (6, "hub_url"),
            (8, "dataset.rows"),
            (13, "skills[0].table"),
            (14, "skills[0].negotiable_columns[1]"),
            (15, "agents[0].id"),
        ],
    );
    let e = err(&text);
    assert_eq!(e.lines().count(), 7, "{e}");
    assert!(e.lines().all(|l| l.starts_with("peers/x.yaml:")), "{e}");
    // Neither a would-be token nor a URL (credentials) is repeated.
    assert!(!e.contains("sk-live-0123") && !e.contains("user:pw"), "{e}");
}

#[test]
fn one_mistake_reports_each_consequence_but_no_follow_up_noise() {
    // A consult handler on a data-share skill with a grant: the kind,
    // the dataset and the grant are each wrong.
    let text = GOOD.replace(
        "handler: table_query\n    table: orders",
        "handler: budget_consult",
    );
    assert_located(
        &text,
        &[
            (11, "skills[0].kind"),
            (12, "skills[0].handler"),
            (13, "skills[0].negotiable_columns"),
        ],
    );
    // An invalid id is not also a duplicate; a reserved dataset table
    // is not also compared with the skill's table.
    let second = "  - capability: Orders.Query\n    kind: consult\n    handler: \
                  ticket_classify\nagents:";
    let text = GOOD
        .replace("capability: orders.query", "capability: Orders.Query")
        .replace("agents:", second)
        .replace(
            "dataset: { kind: orders, seed: 42, rows: 624 }",
            "dataset: { kind: csv, path: d.csv, table: dataset_meta }",
        );
    assert_located(
        &text,
        &[
            (8, "dataset.table"),
            (10, "skills[0].capability"),
            (15, "skills[1].capability"),
            (17, "skills[1].handler"),
        ],
    );
}

#[test]
fn a_model_tier_is_optional_and_checked_at_its_lines() {
    assert_eq!(PeerConfig::parse(GOOD, FILE).unwrap().model, None);
    let with = |model: &str| GOOD.replace("agents: [", &format!("{model}\nagents: ["));
    let ok = PeerConfig::parse(
        &with("model:\n  tier: { id: local, base_url: \"http://127.0.0.1:8080/v1\", model: m }\n  prompts: ../prompts"),
        FILE,
    )
    .unwrap();
    let model = ok.model.unwrap();
    assert_eq!((model.deadline_ms, model.language.as_str()), (5_000, "en"));
    let text = with("model:\n  tier:\n    id: local\n    base_url: ftp://x\n    model: m\n    api_key_env: sk-1\n  prompts: p\n  deadline_ms: 1");
    let e = err(&text);
    assert!(
        e.contains("model.tier.base_url: must be an http:// or https:// URL"),
        "{e}"
    );
    assert!(
        e.contains("model.tier.api_key_env: must be the name of an environment variable"),
        "{e}"
    );
    assert!(
        e.contains("model.deadline_ms: must be between 100 and 120000"),
        "{e}"
    );
    let lines: Vec<usize> = issues(&text).iter().map(|i| i.line).collect();
    let base = issues(&text)[0].line;
    assert_eq!(lines, [base, base + 2, base + 4], "{e}");
}

#[test]
fn mcp_section_is_optional_and_checked() {
    // Absent: no data plane.
    assert_eq!(PeerConfig::parse(GOOD, FILE).unwrap().mcp, None);
    let with = |mcp: &str| {
        GOOD.replace(
            "agents: [",
            &format!(
                "  - {{ capability: orders.negotiate, kind: negotiation, handler: negotiate,\n      \
                 negotiates: orders.query }}\n{mcp}\nagents: ["
            ),
        )
    };
    let ok = PeerConfig::parse(
        &with("mcp: { listen: 127.0.0.1:3111, capability: orders.query }"),
        FILE,
    )
    .unwrap();
    assert_eq!(
        ok.mcp,
        Some(McpConfig {
            listen: "127.0.0.1:3111".into(),
            capability: "orders.query".into()
        })
    );
    // Every problem, located at its field (the mcp section is line 17).
    let text = with("mcp:\n  listen: nowhere\n  capability: weather.query");
    assert_located(&text, &[(18, "mcp.listen"), (19, "mcp.capability")]);
    let e = err(&text);
    assert!(e.contains("`nowhere` is not an IP:port address"), "{e}");
    assert!(
        e.contains("`weather.query` is not a capability of this peer (it provides: orders.query, orders.negotiate)"),
        "{e}"
    );
    // A capability that is not a table_query; the A2A server's port.
    let text = with("mcp:\n  listen: 127.0.0.1:3101\n  capability: orders.negotiate");
    assert_located(&text, &[(18, "mcp.listen"), (19, "mcp.capability")]);
    let e = err(&text);
    assert!(e.contains("is the A2A server's `listen`"), "{e}");
    assert!(
        e.contains("`orders.negotiate` is a negotiate; the data plane serves a table_query"),
        "{e}"
    );
    // Unknown keys are refused like everywhere else in the file.
    let e = err(&with(
        "mcp: { listen: 127.0.0.1:3111, capability: orders.query, tools: [] }",
    ));
    assert!(e.contains("tools"), "{e}");
    // A missing key is named.
    let e = err(&with("mcp: { listen: 127.0.0.1:3111 }"));
    assert!(e.contains("capability"), "{e}");
}

const HELPDESK: &str = r#"
system: helpdesk
name: Helpdesk
listen: 127.0.0.1:3103
token_env: WS_TOKEN_HELPDESK
hub_url: http://127.0.0.1:3000
database: var/helpdesk.db
dataset: { kind: tickets, seed: 42, rows: 40 }
skills:
  - capability: ticket.classify
    kind: consult
    handler: ticket_classify
  - capability: ticket.triage
    kind: task
    handler: ticket_triage
"#;

#[test]
fn a_task_skill_has_a_work_time_and_a_life_cap() {
    let c = PeerConfig::parse(HELPDESK, FILE).unwrap();
    let t = c.skill("ticket.triage").unwrap();
    assert_eq!(
        (t.kind, t.handler),
        (SkillKind::Task, Handler::TicketTriage)
    );
    assert_eq!(
        (t.work_ms(), t.max_deadline_ms()),
        (DEFAULT_WORK_MS, DEFAULT_MAX_DEADLINE_MS)
    );
    assert_eq!((DEFAULT_WORK_MS, DEFAULT_MAX_DEADLINE_MS), (1_500, 30_000));
    assert_eq!(c.faults.accept_stall_ms, 0);
    let set = HELPDESK.replace(
        "handler: ticket_triage\n",
        "handler: ticket_triage\n    work_ms: 0\n    max_deadline_ms: 300\n",
    );
    let c = PeerConfig::parse(&set, FILE).unwrap();
    let t = c.skill("ticket.triage").unwrap();
    assert_eq!((t.work_ms(), t.max_deadline_ms()), (0, 300));
    // The shipped helpdesk provides both, classify unchanged.
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/peers/helpdesk.yaml");
    let c = PeerConfig::load(&shipped).unwrap_or_else(|e| panic!("{e}"));
    let classify = c.skill("ticket.classify").unwrap();
    assert_eq!(
        (classify.kind, classify.answer),
        (SkillKind::Consult, AnswerAs::Task)
    );
    assert_eq!(c.skill("ticket.triage").unwrap().kind, SkillKind::Task);
}

#[test]
fn task_settings_are_checked_at_their_lines() {
    let text = HELPDESK.replace(
        "handler: ticket_triage\n",
        "handler: ticket_triage\n    work_ms: 60001\n    max_deadline_ms: 50\n",
    );
    assert_located(
        &text,
        &[(16, "skills[1].work_ms"), (17, "skills[1].max_deadline_ms")],
    );
    let e = err(&text);
    assert!(
        e.contains("skills[1].work_ms: 60001 must be at most 60000"),
        "{e}"
    );
    assert!(
        e.contains("skills[1].max_deadline_ms: 50 must be between 100 and 3600000"),
        "{e}"
    );
    // Only a task skill takes them.
    let text = HELPDESK.replace(
        "handler: ticket_classify\n",
        "handler: ticket_classify\n    max_deadline_ms: 1000\n",
    );
    assert_located(&text, &[(13, "skills[0].max_deadline_ms")]);
    assert!(
        err(&text).contains("only a task skill takes max_deadline_ms, not ticket_classify"),
        "{}",
        err(&text)
    );
    // The handler serves tasks, not consults; and needs tickets.
    let text = HELPDESK.replace("kind: task", "kind: consult");
    assert_located(&text, &[(14, "skills[1].kind")]);
    assert!(
        err(&text).contains("handler ticket_triage serves task capabilities, not consult"),
        "{}",
        err(&text)
    );
    let text = HELPDESK
        .replace(
            "dataset: { kind: tickets, seed: 42, rows: 40 }",
            "dataset: { kind: budgets }",
        )
        .replace("handler: ticket_classify", "handler: budget_consult");
    assert_located(&text, &[(15, "skills[1].handler")]);
    // The fault is bounded like stall_ms.
    let text = format!("{HELPDESK}faults: {{ accept_stall_ms: 700000 }}\n");
    assert_located(&text, &[(16, "faults.accept_stall_ms")]);
    let ok = format!("{HELPDESK}faults: {{ accept_stall_ms: 3000 }}\n");
    assert_eq!(
        PeerConfig::parse(&ok, FILE).unwrap().faults.accept_stall_ms,
        3000
    );
}

#[test]
fn shipped_configs_are_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/peers");
    for name in ["vendorcorp", "buyercorp", "helpdesk", "logistics"] {
        let path = dir.join(format!("{name}.yaml"));
        let c = PeerConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.system, name);
    }
}

/// GOOD calling a TLS hub, with `extra` appended (a `hub_tls` or
/// `hub_oidc` section).
fn secure(extra: &str) -> String {
    GOOD.replace(
        "hub_url: http://127.0.0.1:3000",
        "hub_url: https://localhost:3443",
    ) + extra
}

#[test]
fn hub_credentials_are_optional_and_checked_at_their_lines() {
    // GOOD's last line is 15, so a section appended starts on line 16.
    let c = PeerConfig::parse(GOOD, FILE).unwrap();
    assert_eq!((c.hub_tls, c.hub_oidc), (None, None));
    let oidc = "hub_oidc:\n  token_url: https://login.buyercorp.example/token\n  client_id: buyercorp\n  client_secret_env: BUYERCORP_OIDC_SECRET\n";
    let c = PeerConfig::parse(&secure(oidc), FILE).unwrap();
    let o = c.hub_oidc.unwrap();
    assert_eq!(
        (o.client_id.as_str(), o.scope, o.resource),
        ("buyercorp", None, None)
    );

    // No client_secret_env: the shape error, in the section (serde places
    // it at the mapping's first key).
    let e = err(&secure(
        "hub_oidc:\n  token_url: https://login.buyercorp.example/token\n  client_id: buyercorp\n",
    ));
    assert_eq!(
        e,
        "peers/x.yaml:17:3: hub_oidc: missing field `client_secret_env`"
    );

    // The secret pasted where its env var's name goes is not repeated.
    let pasted = oidc.replace("BUYERCORP_OIDC_SECRET", "hunter2-s3cret");
    let got = issues(&secure(&pasted));
    assert_eq!(
        got.iter()
            .map(|i| (i.line, i.field.as_str()))
            .collect::<Vec<_>>(),
        [(19, "hub_oidc.client_secret_env")],
        "{got:#?}"
    );
    assert!(!err(&secure(&pasted)).contains("hunter2"));
    assert_located(
        &secure(&oidc.replace("https://login.buyercorp.example/token", "login")),
        &[(17, "hub_oidc.token_url")],
    );

    // A certificate without its key; TLS settings for a plain-HTTP hub.
    assert_located(
        &secure("hub_tls:\n  ca: hub-ca.pem\n  cert: buyercorp.pem\n"),
        &[(18, "hub_tls.cert")],
    );
    assert_located(
        &(GOOD.to_string() + "hub_tls: { ca: hub-ca.pem }\n"),
        &[(16, "hub_tls")],
    );
    assert_located(&secure("hub_tls: {}\n"), &[(16, "hub_tls")]);
}

#[test]
fn hub_tls_files_are_resolved_against_the_file_and_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("certs")).unwrap();
    for f in ["hub-ca.pem", "buyercorp.pem"] {
        std::fs::write(dir.path().join("certs").join(f), "PEM").unwrap();
    }
    let path = dir.path().join("peer.yaml");
    std::fs::write(
        &path,
        secure(
            "hub_tls:\n  ca: certs/hub-ca.pem\n  cert: certs/buyercorp.pem\n  key: certs/buyercorp-key.pem\n",
        ),
    )
    .unwrap();
    let e = PeerConfig::load(&path).unwrap_err();
    let missing = dir.path().join("certs/buyercorp-key.pem");
    assert_eq!(
        e.issues()
            .iter()
            .map(|i| (i.line, i.field.as_str(), i.message.clone()))
            .collect::<Vec<_>>(),
        [(
            19,
            "hub_tls.key",
            format!("{}: no such file", missing.display())
        )],
    );
    assert!(
        e.to_string()
            .starts_with(&format!("{}:19:", path.display())),
        "{e}"
    );

    std::fs::write(&missing, "PEM").unwrap();
    let c = PeerConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let tls = c.hub_tls.unwrap();
    assert_eq!(tls.ca, Some(dir.path().join("certs/hub-ca.pem")));
    assert_eq!(tls.key, Some(missing));
}

#[test]
fn serve_tls_is_optional_and_checked_at_its_lines() {
    // GOOD's last line is 15, so a section appended starts on line 16.
    assert_eq!(PeerConfig::parse(GOOD, FILE).unwrap().tls, None);
    let c = PeerConfig::parse(
        &(GOOD.to_string() + "tls:\n  cert: vendorcorp.pem\n  key: vendorcorp-key.pem\n"),
        FILE,
    )
    .unwrap();
    assert_eq!(
        c.tls,
        Some(ServeTlsConfig {
            cert: "vendorcorp.pem".into(),
            key: "vendorcorp-key.pem".into(),
            client_ca: None,
        })
    );

    // A certificate without its key: the shape error, in the section.
    let e = err(&(GOOD.to_string() + "tls:\n  cert: vendorcorp.pem\n"));
    assert_eq!(e, "peers/x.yaml:17:3: tls: missing field `key`");
    // `ca` is `hub_tls`'s word: here it is `client_ca`.
    let e = err(&(GOOD.to_string() + "tls: { cert: c.pem, key: k.pem, ca: hub-ca.pem }\n"));
    assert!(e.starts_with("peers/x.yaml:16:"), "{e}");
    assert!(e.contains("unknown field `ca`"), "{e}");
    // Empty paths, each at its line.
    assert_located(
        &(GOOD.to_string() + "tls:\n  cert: \"\"\n  key: k.pem\n  client_ca: \"\"\n"),
        &[(17, "tls.cert"), (19, "tls.client_ca")],
    );
}

#[test]
fn serve_tls_files_are_resolved_against_the_file_and_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("certs")).unwrap();
    for f in ["vendorcorp.pem", "vendorcorp-key.pem"] {
        std::fs::write(dir.path().join("certs").join(f), "PEM").unwrap();
    }
    let path = dir.path().join("peer.yaml");
    std::fs::write(
        &path,
        GOOD.to_string()
            + "tls:\n  cert: certs/vendorcorp.pem\n  key: certs/vendorcorp-key.pem\n  client_ca: certs/hub-ca.pem\n",
    )
    .unwrap();
    let e = PeerConfig::load(&path).unwrap_err();
    let missing = dir.path().join("certs/hub-ca.pem");
    assert_eq!(
        e.issues()
            .iter()
            .map(|i| (i.line, i.field.as_str(), i.message.clone()))
            .collect::<Vec<_>>(),
        [(
            19,
            "tls.client_ca",
            format!("{}: no such file", missing.display())
        )],
    );
    assert!(
        e.to_string()
            .starts_with(&format!("{}:19:", path.display())),
        "{e}"
    );
    // A directory where a file goes.
    std::fs::create_dir(&missing).unwrap();
    let e = PeerConfig::load(&path).unwrap_err();
    assert_eq!(
        e.issues()[0].message,
        format!("{}: is not a file", missing.display())
    );
    std::fs::remove_dir(&missing).unwrap();

    std::fs::write(&missing, "PEM").unwrap();
    let c = PeerConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let tls = c.tls.unwrap();
    assert_eq!(tls.cert, dir.path().join("certs/vendorcorp.pem"));
    assert_eq!(tls.key, dir.path().join("certs/vendorcorp-key.pem"));
    assert_eq!(tls.client_ca, Some(missing));
}
