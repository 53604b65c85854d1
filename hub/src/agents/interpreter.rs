//! The data interpreter (DESIGN.md §5): one sentence about a node's
//! redacted metrics.
//!
//! It has **no rule path** by design: with no tier it returns nothing,
//! `GET /api/agents` says so and the canvas does not offer it. With a
//! tier it builds an orchestrator run whose tools read only what a
//! browser could see — the node's status and call counts
//! (`node_metrics`), and queries and questions along the hub's own edges
//! touching the node, redacted by their data contracts (`query_edge`,
//! `ask_edge`) — and whose final answer is `{"sentence": ...}`. The
//! sentence is model output: untrusted text in the browser.

use app::dto::InterpretationView;
use exchange::untrusted::Untrusted;
use serde_json::{json, Value};

use crate::redaction::view::untrusted_text;

use super::orchestrator;
use super::run::{RunOutcome, Task};
use super::tools::{Context, Tool, ToolSet};
use super::transcript;
use super::{AgentName, Agents};

/// Longest sentence kept.
const MAX_SENTENCE: usize = 600;

fn sentence_schema() -> Value {
    json!({
        "type": "object",
        "required": ["sentence"],
        "additionalProperties": false,
        "properties": {"sentence": {"type": "string", "minLength": 1}}
    })
}

/// Why a node cannot be interpreted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InterpretError {
    /// No node has this id.
    #[error("there is no node {0}")]
    UnknownNode(String),
}

/// `POST /api/nodes/{id}/interpret`.
pub async fn interpret(
    agents: &Agents,
    ctx: &Context,
    node: &str,
    lang: &str,
) -> Result<InterpretationView, InterpretError> {
    let loaded = ctx.registry.snapshot();
    let t = &loaded.topology;
    let mut parts = node.split('/');
    let system_id = parts.next().unwrap_or_default();
    let child = parts.nth(1);
    let system = t.system(system_id);
    let node_name = match (system, child) {
        (Some(s), None) => s.name.clone(),
        (Some(s), Some(c)) => s
            .agents
            .iter()
            .map(|a| (&a.id, &a.name))
            .chain(s.datasources.iter().map(|d| (&d.id, &d.name)))
            .find(|(id, _)| id.as_str() == c)
            .map(|(_, n)| format!("{n} of {}", s.name))
            .ok_or_else(|| InterpretError::UnknownNode(exchange::text::clip(node, 200)))?,
        (None, _) if node == t.hub.id => "the hub".into(),
        (None, _) => return Err(InterpretError::UnknownNode(exchange::text::clip(node, 200))),
    };
    let nothing = InterpretationView {
        node: node.to_string(),
        sentence: None,
        note: None,
        transcript: None,
    };
    // No rule path: without a tier there is nothing to say.
    let Some(runner) = agents.runner(AgentName::Interpreter) else {
        return Ok(nothing);
    };
    let edges: Vec<Value> = ctx
        .edges
        .visible(t)
        .into_iter()
        .filter(|e| {
            t.permits(&t.hub.id, &e.capability, &e.provider)
                && (e.provider == system_id || e.consumer == system_id || node == t.hub.id)
        })
        .map(|e| {
            let kind = t.capability(&e.capability).map(|c| c.kind);
            json!({"edge": e.id, "provider": e.provider, "capability": e.capability,
                   "kind": crate::edge_calls::dto_kind(kind.unwrap_or(crate::registry::model::CapabilityKind::Consult))})
        })
        .collect();
    let task_text = runner
        .set
        .prompt(lang, "interpreter")
        .replace("{node}", node)
        .replace("{node_name}", &node_name)
        .replace("{edges}", &Value::Array(edges).to_string());
    let schema = sentence_schema();
    let run = orchestrator::run(
        Task {
            runner: &runner,
            lang,
            tools: ToolSet::of(&[Tool::NodeMetrics, Tool::QueryEdge, Tool::AskEdge]),
            task: task_text,
            final_schema: &schema,
        },
        ctx,
    )
    .await;
    let model = runner.source_label();
    let view = transcript::view(&run, AgentName::Interpreter, &model);
    if run.outcome != RunOutcome::Answered {
        return Ok(InterpretationView {
            note: Some(format!("no interpretation: {}", run.detail)),
            transcript: Some(view),
            ..nothing
        });
    }
    let sentence = run
        .answer
        .as_ref()
        .and_then(|a| a["sentence"].as_str())
        .map(|s| untrusted_text(&Untrusted::new(s.trim(), model), MAX_SENTENCE));
    Ok(InterpretationView {
        sentence,
        transcript: Some(view),
        ..nothing
    })
}
