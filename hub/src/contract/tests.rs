//! Tests of the compiled contracts: schema checks, input grants, and the
//! contract checks the topology loader reports at file:line:field.

use super::*;
use crate::registry::load::load_str;
use serde_json::json;

fn contract() -> Contract {
    Contract::compile(&json!({
        "type": "object",
        "required": ["groups"],
        "properties": {"groups": {"type": "array", "items": {
            "type": "object", "properties": {"count": {"type": "integer"}}}}}
    }))
    .expect("schema compiles")
}

#[test]
fn violation_names_the_pointer_and_not_the_value() {
    let err = contract()
        .check(&json!({"groups": [{"count": 1}, {"count": "secret-ish"}]}))
        .expect_err("must fail");
    assert_eq!(err.pointer, "/groups/1/count");
    assert_eq!(err.keyword, "type");
    assert!(!err.to_string().contains("secret-ish"), "{err}");
}

#[test]
fn missing_field_is_reported_at_the_root() {
    let err = contract().check(&json!({})).expect_err("must fail");
    assert_eq!(err.pointer, "/");
    assert_eq!(err.keyword, "required");
    assert!(err.problem.contains("groups"));
}

#[test]
fn input_grants_list_the_string_enums_by_path() {
    let schema = json!({"type": "object", "properties": {
        "aggregate": {"properties": {"column": {"enum": ["order_value", "*", null]}}},
        "group_by": {"enum": ["region", "product", null]},
        "filters": {"type": "array", "items": {"properties": {"column": {"enum": ["region"]}}}}
    }});
    let mut grants = input_grants(&schema);
    grants.sort();
    assert_eq!(
        grants,
        vec![
            ("aggregate.column".into(), vec!["order_value".into()]),
            ("filters[].column".into(), vec!["region".into()]),
            ("group_by".into(), vec!["region".into(), "product".into()]),
        ]
    );
    assert!(input_grants(&json!({"type": "object"})).is_empty());
}

#[test]
fn valid_answer_passes_and_bad_schema_is_refused() {
    assert!(contract().check(&json!({"groups": []})).is_ok());
    assert!(Contract::compile(&json!({"type": "no-such-type"})).is_err());
}

// ---------------------------------------------------------------------
// Contract checks at load time, located
// ---------------------------------------------------------------------

/// A topology with one capability whose contract is `contract` (YAML lines
/// indented for the `contract:` block), for the loader's error messages.
fn topology_with(contract: &str) -> String {
    format!(
        "version: 1
systems:
  - id: alpha
    name: Alpha
    base_url: http://127.0.0.1:3101
    token_env: WS_TOKEN_ALPHA
    ip_allowlist: [127.0.0.1/32]
    provides: [cap.one]
capabilities:
  - id: cap.one
    kind: consult
    response_schema:
      type: object
      properties:
        answer: {{ type: string }}
        score: {{ type: number }}
        tags: {{ type: array, items: {{ type: string }} }}
        meta:
          type: object
          properties:
            owner: {{ type: string }}
    contract:
{contract}rules:
  - capability: cap.one
    provider: alpha
    consumers: [hub]
"
    )
}

fn load_issues(contract: &str) -> Vec<crate::registry::load::Issue> {
    match load_str("config/topology.yaml", &topology_with(contract)) {
        Ok(_) => panic!("expected a rejection for:\n{contract}"),
        Err(e) => e.issues().to_vec(),
    }
}

#[test]
fn a_good_contract_loads() {
    let ok = "      fields:\n        score: { round: 1 }\n        tags[]: keep\n        meta.owner: { mask: email }\n      untrusted: [answer]\n";
    assert!(load_str("config/topology.yaml", &topology_with(ok)).is_ok());
}

#[test]
fn contract_errors_name_file_line_and_field() {
    // Line 23 is the first line after `contract:`.
    let cases: [(&str, usize, &str, &str); 9] = [
        (
            "      fields:\n        nope: keep\n",
            24,
            "capabilities[0].contract.fields.nope",
            "`nope` is not in the response schema: the response has no property `nope`",
        ),
        (
            "      fields:\n        meta.who: keep\n",
            24,
            "capabilities[0].contract.fields.meta.who",
            "`meta` has no property `who`",
        ),
        (
            "      fields:\n        meta: keep\n",
            24,
            "capabilities[0].contract.fields.meta",
            "is an object or array",
        ),
        (
            "      fields:\n        tags: keep\n",
            24,
            "capabilities[0].contract.fields.tags",
            "list its fields (`tags.name`) or items (`tags[]`)",
        ),
        (
            "      fields:\n        answer: { round: 2 }\n",
            24,
            "capabilities[0].contract.fields.answer",
            "not a numeric field",
        ),
        (
            "      fields:\n        score: { mask: email }\n",
            24,
            "capabilities[0].contract.fields.score",
            "needs a string",
        ),
        (
            "      untrusted:\n        - answer\n        - score\n",
            25,
            "capabilities[0].contract.untrusted[1]",
            "`score` is not a string field",
        ),
        (
            "      fields:\n        answer: mask\n      untrusted: [answer]\n",
            24,
            "capabilities[0].contract.fields.answer",
            "is listed under untrusted",
        ),
        (
            "      fields:\n        meta: drop\n        meta.owner: keep\n",
            25,
            "capabilities[0].contract.fields.meta.owner",
            "under `meta`, which is dropped",
        ),
    ];
    for (contract, line, field, needle) in cases {
        let issues = load_issues(contract);
        assert_eq!(issues.len(), 1, "{contract}\n{issues:#?}");
        let i = &issues[0];
        assert_eq!(
            (i.line, i.field.as_str()),
            (line, field),
            "{contract}\n{i:?}"
        );
        assert!(i.message.contains(needle), "{contract}\n{}", i.message);
    }
}

#[test]
fn an_unknown_rule_is_a_located_parse_error() {
    let text = topology_with("      fields:\n        score: kep\n");
    let err = load_str("config/topology.yaml", &text).expect_err("rejected");
    let msg = err.to_string();
    assert!(msg.starts_with("config/topology.yaml:24:"), "{msg}");
    assert!(
        msg.contains("capabilities[0].contract.fields.score"),
        "{msg}"
    );
    assert!(msg.contains("unknown rule `kep`"), "{msg}");
}

#[test]
fn bad_paths_and_duplicates_are_reported() {
    let issues =
        load_issues("      fields:\n        \"a..b\": keep\n      untrusted: [answer, answer]\n");
    let msgs: Vec<&str> = issues.iter().map(|i| i.message.as_str()).collect();
    assert!(
        msgs.iter().any(|m| m.contains("is not a field path")),
        "{msgs:?}"
    );
    assert!(msgs.iter().any(|m| m.contains("listed twice")), "{msgs:?}");
}
