//! The agent config's checks, each problem located at file:line:field.

use super::*;

const GOOD: &str = "\
version: 1
prompts: prompts
tiers:
  - id: local
    base_url: http://127.0.0.1:3120/v1
    model: standin
agents:
  orchestrator: { enabled: true, tier: local, max_steps: 4 }
  recommender: { enabled: true }
  interpreter: { enabled: true }
  narrator: { enabled: false }
  negotiator: { enabled: true }
";

fn problems(text: &str) -> String {
    load_str("agents.yaml", text).unwrap_err().to_string()
}

#[test]
fn a_good_file_loads_and_specialists_inherit_the_orchestrators_tier() {
    let f = load_str("agents.yaml", GOOD).unwrap();
    assert_eq!(f.agents.orchestrator.max_steps, 4);
    assert_eq!(f.agents.recommender.deadline_ms, 20_000);
    assert_eq!(
        f.effective_tier(AgentName::Interpreter)
            .map(|t| t.id.as_str()),
        Some("local")
    );
}

#[test]
fn the_narrator_switched_on_is_a_located_error() {
    let text = GOOD.replace(
        "narrator: { enabled: false }",
        "narrator: { enabled: true }",
    );
    assert_eq!(
        problems(&text),
        "agents.yaml:11:3: agents.narrator.enabled: the insight narrator is not implemented yet (cross-node narrative synthesis): keep it `enabled: false`"
    );
}

#[test]
fn the_interpreter_without_any_tier_is_a_located_error() {
    let text = GOOD.replace("enabled: true, tier: local,", "enabled: true,");
    let p = problems(&text);
    assert!(
        p.starts_with(
            "agents.yaml:10:3: agents.interpreter.enabled: the data interpreter has no rule path"
        ),
        "{p}"
    );
}

#[test]
fn every_problem_is_reported_at_its_line() {
    let text = "\
version: 2
prompts: prompts
tiers:
  - id: local
    base_url: ftp://x
    model: ''
    api_key_env: sk-live-123
agents:
  orchestrator: { enabled: true, tier: nope, temperature: 3 }
  recommender: { enabled: true, max_steps: 0 }
  interpreter: { enabled: false }
  narrator: { enabled: false }
  negotiator: { enabled: true, deadline_ms: 5 }
";
    let p = problems(text);
    let lines: Vec<&str> = p.lines().collect();
    assert_eq!(lines.len(), 8, "{p}");
    for expected in [
        "agents.yaml:1:1: version: unsupported version 2",
        "agents.yaml:5:5: tiers[0].base_url: must be an http:// or https:// URL",
        "agents.yaml:6:5: tiers[0].model: must name the model",
        "agents.yaml:7:5: tiers[0].api_key_env: must be the name of an environment variable",
        "agents.yaml:9:3: agents.orchestrator.tier: unknown tier `nope`",
        "agents.yaml:9:3: agents.orchestrator.temperature: must be between 0 and 2",
        "agents.yaml:10:3: agents.recommender.max_steps: must be between 1 and 20",
        "agents.yaml:13:3: agents.negotiator.deadline_ms: must be between 100",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(expected)),
            "missing {expected:?} in:\n{p}"
        );
    }
}

#[test]
fn a_missing_agent_or_an_unknown_field_is_named() {
    let text = GOOD.replace("  negotiator: { enabled: true }\n", "");
    let p = problems(&text);
    assert!(p.contains("agents: missing field `negotiator`"), "{p}");
    let text = GOOD.replace("model: standin", "model: standin\n    api_key: sk-123");
    let p = problems(&text);
    assert!(p.starts_with("agents.yaml:7:5: tiers[0]"), "{p}");
    assert!(p.contains("unknown field `api_key`"), "{p}");
}

#[test]
fn the_shipped_files_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for name in ["agents.yaml", "agents.standin.yaml"] {
        let f = load_file(&root.join("config").join(name))
            .unwrap_or_else(|e| panic!("config/{name}: {e}"));
        assert!(f.prompts.ends_with("prompts"), "{name}");
        assert!(!f.agents.narrator.enabled);
    }
    let shipped = load_file(&root.join("config/agents.yaml")).unwrap();
    assert!(
        shipped.tiers.is_empty(),
        "the default deployment has no model"
    );
    assert!(!shipped.agents.interpreter.enabled);
}
