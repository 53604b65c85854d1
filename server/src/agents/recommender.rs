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

use super::orchestrator::{self, RunOutcome, Task};
use super::tools::{Context, Tool, ToolSet};
use super::transcript::{self, Step};
use super::{AgentName, Agents};
use crate::bff::topology::dto_kind;
use crate::edges::Edge;
use crate::redaction::view::untrusted_text;
use crate::registry::model::{edge_id, CapabilityKind, Topology};

/// One legal connection not made yet, with the hub's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub edge: String,
    pub consumer: String,
    pub provider: String,
    pub capability: String,
    pub kind: CapabilityKind,
    /// Why the registry allows it, in the hub's words.
    pub why: String,
}

/// The registry's intersection minus the edges in `made`.
pub fn candidates(t: &Topology, made: &[Edge]) -> Vec<Candidate> {
    let made: BTreeSet<&str> = made.iter().map(|e| e.id.as_str()).collect();
    let name = |id: &str| {
        if id == t.hub.id {
            "the hub".to_string()
        } else {
            t.system(id)
                .map_or_else(|| id.to_string(), |s| s.name.clone())
        }
    };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for rule in &t.rules {
        let Some(cap) = t.capability(&rule.capability) else {
            continue;
        };
        if cap.kind == CapabilityKind::Negotiation {
            continue;
        }
        let Some(provider) = t.system(&rule.provider) else {
            continue;
        };
        if !provider.provides.contains(&rule.capability) {
            continue;
        }
        for consumer in &rule.consumers {
            let consumes = consumer == &t.hub.id
                || t.system(consumer)
                    .is_some_and(|s| s.consumes.contains(&rule.capability));
            if !consumes || consumer == &rule.provider {
                continue;
            }
            let edge = edge_id(consumer, &rule.provider, &rule.capability);
            if made.contains(edge.as_str()) || !seen.insert(edge.clone()) {
                continue;
            }
            let what = match cap.kind {
                CapabilityKind::DataShare => "read its data",
                _ => "ask it",
            };
            out.push(Candidate {
                why: format!(
                    "{} consumes {} and {} provides it; a rule lets {} {what}, and no edge is made yet.",
                    name(consumer),
                    rule.capability,
                    provider.name,
                    name(consumer),
                ),
                edge,
                consumer: consumer.clone(),
                provider: rule.provider.clone(),
                capability: rule.capability.clone(),
                kind: cap.kind,
            });
        }
    }
    out
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn topology() -> Topology {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/topology.yaml"),
        )
        .unwrap();
        crate::registry::load::load_str("topology.yaml", &text)
            .unwrap()
            .topology
    }

    fn edge(consumer: &str, provider: &str, capability: &str) -> Edge {
        Edge {
            id: edge_id(consumer, provider, capability),
            consumer: consumer.into(),
            provider: provider.into(),
            capability: capability.into(),
            created_at: String::new(),
        }
    }

    #[test]
    fn candidates_are_the_rules_intersection_minus_made_edges_and_negotiations() {
        let t = topology();
        let all: Vec<String> = candidates(&t, &[]).into_iter().map(|c| c.edge).collect();
        // Every rule consumer that declares the capability, for every
        // provider that provides it; no negotiation.
        let mut expected = Vec::new();
        for r in &t.rules {
            if t.capability(&r.capability).unwrap().kind == CapabilityKind::Negotiation {
                continue;
            }
            for c in &r.consumers {
                expected.push(edge_id(c, &r.provider, &r.capability));
            }
        }
        assert_eq!(all, expected);
        assert!(all.iter().all(|e| !e.contains("negotiate")));
        let made = [edge("buyercorp", "vendorcorp", "orders.query")];
        let left: Vec<String> = candidates(&t, &made).into_iter().map(|c| c.edge).collect();
        assert_eq!(left.len(), all.len() - 1);
        assert!(!left.contains(&made[0].id));
    }

    #[test]
    fn a_consumer_that_does_not_declare_the_capability_is_not_suggested() {
        let mut t = topology();
        let helpdesk = t.systems.iter_mut().find(|s| s.id == "helpdesk").unwrap();
        helpdesk.consumes.clear();
        let all = candidates(&t, &[]);
        assert!(all.iter().all(|c| c.consumer != "helpdesk"), "{all:?}");
        assert!(all.iter().any(|c| c.consumer == "hub"));
    }
}
