//! The connection recommender (DESIGN.md §5): suggests legal connections
//! nobody has made yet.
//!
//! **Deterministic path** ([`candidates`]), which serves every request
//! when no tier is configured: the registry's provider/consumer
//! intersection — a rule lets the consumer use the capability of the
//! provider, the provider lists it under `provides` and the consumer
//! under `consumes` (the hub consumes whatever a rule names it for) —
//! minus the edges already made, minus negotiations (a negotiation is the
//! conversation behind a data-share edge, not an edge of its own), in the
//! registry's order.
//!
//! **Model path**: with a tier the recommender builds an orchestrator
//! run whose task lists exactly those candidates and whose tools read
//! (`list_candidates`, `node_metrics`); the model ranks and explains
//! them. Its ranking is then checked in code against the same
//! candidates: an edge id that is not one of them — a pair the registry
//! forbids, an edge already made, an invented id — is dropped and the
//! drop is written to the trail as a refused step. Candidates the model
//! left out follow in the registry's order. Accepting a suggestion is an
//! ordinary `POST /api/edges`, re-checked against the rules there.

use std::collections::BTreeSet;

use app::dto::{RankedBy, RecommendationsView, SuggestionView, UntrustedText};
use exchange::untrusted::Untrusted;
use serde_json::{json, Value};

use super::candidates::{candidates, Candidate};
use super::orchestrator;
use super::run::{RunOutcome, Step, Task};
use super::tools::{Context, Tool, ToolSet};
use super::transcript;
use super::{AgentName, Agents};
use crate::edge_calls::dto_kind;
use crate::redaction::view::untrusted_text;

fn suggestion(c: &Candidate, model_why: Option<UntrustedText>) -> SuggestionView {
    SuggestionView {
        edge: c.edge.clone(),
        consumer: c.consumer.clone(),
        provider: c.provider.clone(),
        capability: c.capability.clone(),
        kind: dto_kind(c.kind),
        why: c.why.clone(),
        model_why,
    }
}

/// The final answer a model's run must give.
fn ranking_schema() -> Value {
    json!({
        "type": "object",
        "required": ["ranking"],
        "additionalProperties": false,
        "properties": {"ranking": {"type": "array", "maxItems": 100, "items": {
            "type": "object",
            "required": ["edge", "why"],
            "additionalProperties": false,
            "properties": {"edge": {"type": "string"}, "why": {"type": "string"}}
        }}}
    })
}

/// `GET /api/recommendations`: the deterministic list, ranked by a model
/// when the recommender has a tier.
pub async fn recommend(agents: &Agents, ctx: &Context, lang: &str) -> RecommendationsView {
    let loaded = ctx.registry.snapshot();
    let t = &loaded.topology;
    let made = ctx.edges.visible(t);
    let list = candidates(t, &made);
    let rules_order = |note: Option<String>, transcript| RecommendationsView {
        suggestions: list.iter().map(|c| suggestion(c, None)).collect(),
        ranked_by: RankedBy::Rules,
        note,
        transcript,
    };
    // No tier: the orchestrator short-circuits before it runs.
    let Some(runner) = agents.runner(AgentName::Recommender) else {
        return rules_order(None, None);
    };
    if list.is_empty() {
        return rules_order(None, None);
    }
    let candidates_json: Vec<Value> = list
        .iter()
        .map(|c| json!({"edge": c.edge, "consumer": c.consumer, "provider": c.provider, "capability": c.capability, "why": c.why}))
        .collect();
    let canvas = json!({
        "nodes": t.systems.iter().map(|s| json!({"id": s.id, "name": s.name, "provides": s.provides, "consumes": s.consumes})).collect::<Vec<_>>(),
        "edges": made.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
    });
    let task_text = runner
        .set
        .prompt(lang, "recommender")
        .replace(
            "{candidates}",
            &serde_json::to_string_pretty(&candidates_json).unwrap_or_default(),
        )
        .replace("{canvas}", &canvas.to_string());
    let schema = ranking_schema();
    let mut run = orchestrator::run(
        Task {
            runner: &runner,
            lang,
            tools: ToolSet::of(&[Tool::ListCandidates, Tool::NodeMetrics]),
            task: task_text,
            final_schema: &schema,
        },
        ctx,
    )
    .await;
    let model = runner.source_label();
    if run.outcome != RunOutcome::Answered {
        let note = format!(
            "the model did not rank these ({}); they are in the registry's order",
            run.detail
        );
        let view = transcript::view(&run, AgentName::Recommender, &model);
        return rules_order(Some(note), Some(view));
    }
    // Checked after the model, in code: only the registry's candidates.
    let mut ranked = Vec::new();
    let mut taken = BTreeSet::new();
    let mut dropped = Vec::new();
    let entries = run
        .answer
        .as_ref()
        .and_then(|a| a["ranking"].as_array())
        .cloned()
        .unwrap_or_default();
    for entry in entries {
        let id = entry["edge"].as_str().unwrap_or_default();
        match list.iter().find(|c| c.edge == id) {
            Some(c) if taken.insert(c.edge.clone()) => {
                let why = entry["why"].as_str().unwrap_or_default();
                // Model output is untrusted text, shown as such.
                let why = Untrusted::new(why, model.clone());
                ranked.push(suggestion(c, Some(untrusted_text(&why, 400))));
            }
            Some(_) => {}
            None => dropped.push(exchange::text::clip(id, 200)),
        }
    }
    if !dropped.is_empty() {
        let step = Step {
            n: run.steps.len() as u32 + 1,
            thought: None,
            tool: Some("check_ranking".into()),
            arguments: Some(json!({ "dropped": dropped })),
            observation: None,
            refused: Some(format!(
                "not a connection the registry allows and nobody made yet, dropped: {}",
                dropped.join(", ")
            )),
            corrected: None,
            elapsed_ms: 0,
        };
        let trace = exchange::envelope::TraceParent {
            trace_id: run.trace_id.clone(),
            ..exchange::envelope::TraceParent::new_root()
        };
        transcript::Recorder::new(ctx, AgentName::Recommender, &trace)
            .step(&step)
            .await;
        run.steps.push(step);
    }
    for c in &list {
        if !taken.contains(&c.edge) {
            ranked.push(suggestion(c, None));
        }
    }
    RecommendationsView {
        suggestions: ranked,
        ranked_by: RankedBy::Model,
        note: None,
        transcript: Some(transcript::view(&run, AgentName::Recommender, &model)),
    }
}
