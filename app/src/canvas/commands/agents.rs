//! The hub's own agents (DESIGN.md §5) as the canvas uses them: which of
//! them the hub offers, the connection recommender's suggestions, accepting
//! one, and the data interpreter's sentence about a node.
//!
//! Nothing here decides what is legal: a suggestion is a connection the
//! registry allows, and accepting it is the very create a drag makes
//! ([`create_edge_then`]), re-checked by the hub. An agent the hub does not
//! offer has no entry on the canvas at all, so with no model tier (the
//! default deployment) the interpreter is simply absent. What the agents
//! said lands in the page-wide [`AgentsState`](crate::canvas::state::AgentsState),
//! so a redraw of the scene loses none of it.

use leptos::prelude::*;

use crate::api::{self, ApiFailure, Method};
use crate::canvas::commands::edges::create_edge_then;
use crate::canvas::connect::Candidate;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::CanvasCtx;
use crate::dto::{AgentsView, InterpretationView, RecommendationsView, SuggestionView};
use crate::routes;

/// The `ctx.running` entry of accepting suggestion `edge`.
pub(crate) fn accept_key(edge: &str) -> String {
    format!("{edge}#accept")
}

/// The `ctx.running` entry of interpreting node `node`.
pub(crate) fn interpret_key(node: &str) -> String {
    format!("{node}#interpret")
}

/// The `ctx.running` entry of the recommender's list on its way.
pub(crate) const RECOMMENDATIONS_KEY: &str = "#recommendations";

/// The connection a suggestion stands for, as the drag would make it.
pub(crate) fn candidate(s: &SuggestionView) -> Candidate {
    Candidate {
        consumer: s.consumer.clone(),
        provider: s.provider.clone(),
        capability: s.capability.clone(),
        kind: s.kind,
    }
}

/// Reads which agents the hub offers once the page is hydrated, and again
/// whenever [`CanvasCtx::refetch_agents`] is asked (browser only: effects
/// do not run on the server). The latest request wins; a failed read
/// keeps what is shown (at first: nothing offered). An agent switched off
/// closes what it had open.
pub(crate) fn follow_agents(ctx: CanvasCtx) {
    let issued = StoredValue::new(0u64);
    Effect::new(move |_| {
        ctx.agents.refresh.track();
        let Some(ticket) = issued.try_update_value(|n| {
            *n += 1;
            *n
        }) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let Ok(view) = api::get_json::<AgentsView>(routes::AGENTS).await else {
                return;
            };
            if issued.try_get_value() != Some(ticket) {
                return;
            }
            if ctx.agents.offered.try_get_untracked() != Some(view) {
                ctx.agents.offered.try_set(view);
            }
            if !view.recommender {
                ctx.agents.suggestions_open.try_set(false);
            }
        });
    });
}

/// Reads the recommender's suggestions (browser only). The previous list
/// stays on screen while the new one is on its way; an older request
/// answering late never overwrites a newer one.
pub(crate) fn load_recommendations(ctx: CanvasCtx) {
    let Some(seq) = ctx.agents.recommendations_seq.try_update_value(|n| {
        *n += 1;
        *n
    }) else {
        return;
    };
    ctx.running.update(|r| {
        r.insert(RECOMMENDATIONS_KEY.to_string());
    });
    leptos::task::spawn_local(async move {
        let result = api::get_json::<RecommendationsView>(routes::RECOMMENDATIONS).await;
        if ctx.agents.recommendations_seq.try_get_value() != Some(seq) {
            return;
        }
        ctx.agents.recommendations.try_set(Some(result));
        ctx.running.try_update(|r| {
            r.remove(RECOMMENDATIONS_KEY);
        });
    });
}

/// Accepts a suggestion: the create a drag makes (the hub re-checks the
/// rule; the canvas redraws with the edge and focus goes to it). A new
/// drawing reloads the list by itself (the panel lives in the scene); a
/// refusal, or an edge that existed already, reloads it here.
pub(crate) fn accept(ctx: CanvasCtx, scene: &SceneCtx, s: &SuggestionView) {
    let key = accept_key(&s.edge);
    if ctx.running.with_untracked(|r| r.contains(&key)) {
        return;
    }
    ctx.running.update(|r| {
        r.insert(key.clone());
    });
    create_edge_then(ctx, scene, candidate(s), move |created| {
        ctx.running.try_update(|r| {
            r.remove(&key);
        });
        if !created {
            load_recommendations(ctx);
        }
    });
}

/// Has the data interpreter say one sentence about `node` (browser only);
/// the answer, or why there is none, lands in the page-wide state.
pub(crate) fn interpret(ctx: CanvasCtx, node: String) {
    let key = interpret_key(&node);
    if ctx.running.with_untracked(|r| r.contains(&key)) {
        return;
    }
    ctx.running.update(|r| {
        r.insert(key.clone());
    });
    leptos::task::spawn_local(async move {
        // The POST carries no parameters: the hub reads the node's
        // redacted metrics itself.
        let body = serde_json::Map::new();
        let result = api::send_json::<_, InterpretationView>(
            Method::Post,
            &routes::node_interpret(&node),
            Some(&body),
        )
        .await
        .and_then(|v| v.ok_or_else(|| ApiFailure::local("the hub sent an empty answer")));
        ctx.agents.interpretations.try_update(|m| {
            m.insert(node, result);
        });
        ctx.running.try_update(|r| {
            r.remove(&key);
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dto::CapabilityKind;

    #[test]
    fn a_suggestion_is_the_connection_a_drag_would_make() {
        let s = SuggestionView {
            edge: "hub->vendorcorp:orders.query".into(),
            consumer: "hub".into(),
            provider: "vendorcorp".into(),
            capability: "orders.query".into(),
            kind: CapabilityKind::DataShare,
            why: "the rule lets the hub consume orders.query".into(),
            model_why: None,
        };
        let c = candidate(&s);
        // The id the hub gives the edge is the one the suggestion names.
        assert_eq!(c.edge_id(), s.edge);
        assert_eq!(c.kind, CapabilityKind::DataShare);
    }

    #[test]
    fn running_keys_never_collide_with_an_edge_id() {
        let edge = "hub->vendorcorp:orders.query";
        assert_ne!(accept_key(edge), edge);
        assert_ne!(interpret_key("vendorcorp"), "vendorcorp");
        assert_ne!(accept_key(edge), interpret_key(edge));
        assert_eq!(
            routes::node_interpret("vendorcorp/agent/data-steward"),
            "/api/nodes/vendorcorp%2Fagent%2Fdata-steward/interpret"
        );
    }
}
