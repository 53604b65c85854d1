//! The connection recommender's panel (DESIGN.md §5): the legal
//! connections not made yet, best first, each with the hub's reason and a
//! Connect button, and, when a model ranked them, the model's words
//! (untrusted text) and the run's transcript.
//!
//! The list is the registry's (DESIGN.md §1 rule 2): its deterministic
//! order is the provider/consumer intersection, a model only reorders and
//! explains it. Connect is the very create a drag makes, re-checked by the
//! hub ([`accept`]). The panel lives in the scene, so every new drawing of
//! the topology (an edge made here or anywhere) reads the list again; until
//! the answer comes, a connection the drawing already has is left out.
//! Opening and closing is the toolbar's button ([`SuggestionsButton`]); the
//! panel and the button exist only while the hub offers the recommender.

use leptos::prelude::*;

use super::transcript::Transcript;
use crate::api::ApiFailure;
use crate::canvas::commands::agents::{
    accept, accept_key, candidate, load_recommendations, RECOMMENDATIONS_KEY,
};
use crate::canvas::connect::sentence;
use crate::canvas::dom::focus_testid;
use crate::canvas::interaction::SceneCtx;
use crate::canvas::labels::kind_label;
use crate::canvas::state::CanvasCtx;
use crate::dto::{RankedBy, RecommendationsView, SuggestionView, UntrustedText};
use crate::parts::Prefetch;
use crate::untrusted::UntrustedBlock;

/// Who ordered the list, in words.
pub fn ranked_by_words(r: RankedBy) -> &'static str {
    match r {
        RankedBy::Rules => "ranked by the registry's rules",
        RankedBy::Model => "ranked by a model",
    }
}

/// `rules` or `model`: the list's `data-ranked-by`.
pub fn ranked_by_key(r: RankedBy) -> &'static str {
    match r {
        RankedBy::Rules => "rules",
        RankedBy::Model => "model",
    }
}

/// The toolbar's Suggestions button: shown only while the hub offers the
/// recommender; opens and closes the panel.
#[component]
pub(crate) fn SuggestionsButton() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let open = ctx.agents.suggestions_open;
    // Only the recommender's switch redraws the button (not the tier's).
    let offered = Memo::new(move |_| ctx.agents.offered.with(|a| a.recommender));
    move || {
        offered.get().then(|| {
            view! {
                <button
                    type="button"
                    class="text-button"
                    data-testid="suggestions-open"
                    aria-expanded=move || open.get().to_string()
                    aria-controls="suggestions-panel"
                    title="Connections the rules allow that are not made yet"
                    on:click=move |_| open.update(|o| *o = !*o)
                    on:pointerenter=move |_| prefetch_suggestions()
                    on:focus=move |_| prefetch_suggestions()
                >
                    "Suggestions"
                </button>
            }
        })
    }
}

/// The panel, when open and offered; reads the list when it opens, when
/// the scene is drawn anew, and when the ranking tier changes.
#[component]
pub(crate) fn SuggestionsPanel() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let shown = Memo::new(move |_| {
        ctx.agents.suggestions_open.get() && ctx.agents.offered.with(|a| a.recommender)
    });
    let by_model = Memo::new(move |_| ctx.agents.offered.with(|a| a.recommender_model));
    Effect::new(move |_| {
        by_model.track();
        if shown.get() {
            load_recommendations(ctx);
        }
    });
    move || {
        shown
            .get()
            .then(|| Suspend::new(async move { suggestions_part().await }))
    }
}

/// Starts fetching the panel's part ([`crate::parts`]).
fn prefetch_suggestions() {
    static SUGGESTIONS: Prefetch = Prefetch::new();
    SUGGESTIONS.once(|| {
        let _ = lazy_preload!(suggestions_part);
    });
}

/// The open panel: loaded the first time it opens (or sooner,
/// [`prefetch_suggestions`]).
#[lazy]
pub(crate) fn suggestions_part() -> AnyView {
    view! { <Panel/> }.into_any()
}

/// The open panel's frame: heading, refresh, close, body.
#[component]
fn Panel() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let loading = Memo::new(move |_| ctx.running.with(|r| r.contains(RECOMMENDATIONS_KEY)));
    let close = move |_| {
        ctx.agents.suggestions_open.set(false);
        focus_testid("suggestions-open");
    };
    view! {
        <aside
            class="suggestions"
            id="suggestions-panel"
            data-testid="suggestions"
            aria-labelledby="suggestions-title"
            aria-busy=move || loading.get().to_string()
        >
            <header class="drawer-head">
                <div>
                    <p class="eyebrow">"Connection recommender"</p>
                    <h2 id="suggestions-title">"Suggestions"</h2>
                </div>
                <div class="suggestions-tools">
                    <button
                        type="button"
                        class="link-button"
                        data-testid="suggestions-refresh"
                        disabled=move || loading.get()
                        on:click=move |_| load_recommendations(ctx)
                    >
                        "Refresh"
                    </button>
                    <button
                        type="button"
                        class="drawer-close"
                        data-testid="suggestions-close"
                        aria-label="Close suggestions"
                        on:click=close
                    >
                        "×"
                    </button>
                </div>
            </header>
            <div class="drawer-body">
                {move || match ctx.agents.recommendations.get() {
                    None => view! {
                        <p class="muted" role="status" data-testid="suggestions-loading">
                            "Reading the suggestions…"
                        </p>
                    }
                    .into_any(),
                    Some(Err(failure)) => view! { <LoadFailure failure/> }.into_any(),
                    Some(Ok(v)) => view! { <Recommendations v/> }.into_any(),
                }}
            </div>
        </aside>
    }
}

#[component]
fn LoadFailure(failure: ApiFailure) -> impl IntoView {
    view! {
        <p class="not-connected" role="alert" data-testid="suggestions-error">
            "Could not read the suggestions — "
            {failure.describe()}
        </p>
    }
}

/// Who ranked the list, the note, the list (or the empty state), the run.
#[component]
fn Recommendations(v: RecommendationsView) -> impl IntoView {
    let scene = expect_context::<SceneCtx>();
    // A connection the drawing has already is made: the list read before it
    // was is stale about it, and the next read will not have it.
    let open: Vec<SuggestionView> = v
        .suggestions
        .into_iter()
        .filter(|s| !scene.connections.is_established(&candidate(s)))
        .collect();
    let list = if open.is_empty() {
        view! {
            <p class="muted suggestions-empty" data-testid="suggestions-empty">
                "No legal connection is left to make."
            </p>
        }
        .into_any()
    } else {
        let items = open
            .into_iter()
            .map(|s| view! { <Suggestion s/> })
            .collect_view();
        view! { <ul class="suggestion-list" data-testid="suggestion-list">{items}</ul> }.into_any()
    };
    let transcript = v.transcript.map(|t| {
        view! {
            <section class="drawer-section" aria-label="How the list was ranked">
                <h3>"How the list was ranked"</h3>
                <Transcript t/>
            </section>
        }
    });
    view! {
        <p class="ranked-by" data-testid="suggestions-ranked" data-ranked-by=ranked_by_key(v.ranked_by)>
            {ranked_by_words(v.ranked_by)}
        </p>
        {v.note.map(|n| view! { <p class="muted suggestions-note" data-testid="suggestions-note">{n}</p> })}
        {list}
        {transcript}
    }
}

/// One suggested connection and its Connect button.
#[component]
fn Suggestion(s: SuggestionView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let scene = expect_context::<SceneCtx>();
    let kind = kind_label(s.kind);
    let label = sentence(&candidate(&s), |id| scene.name(id));
    let pending = {
        let key = accept_key(&s.edge);
        Memo::new(move |_| ctx.running.with(|r| r.contains(&key)))
    };
    let connect = {
        let (scene, s) = (scene.clone(), s.clone());
        move |_| accept(ctx, &scene, &s)
    };
    view! {
        <li class="suggestion" data-testid="suggestion" data-edge=s.edge.clone() data-kind=kind>
            <p class="suggestion-ends">
                <strong data-testid="suggestion-consumer">{scene.name(&s.consumer)}</strong>
                <span class="arrow" aria-hidden="true">" → "</span>
                <strong data-testid="suggestion-provider">{scene.name(&s.provider)}</strong>
            </p>
            <p class="suggestion-capability">
                <code data-testid="suggestion-capability">{s.capability.clone()}</code>
                <span class=format!("kind-chip {kind}")>{kind}</span>
            </p>
            <p class="suggestion-why" data-testid="suggestion-why">{s.why.clone()}</p>
            {s.model_why.map(|text| view! { <ModelWhy text/> })}
            <div class="drawer-actions">
                <button
                    type="button"
                    data-testid="suggestion-accept"
                    aria-label=format!("Connect: {label}")
                    disabled=move || pending.get()
                    on:click=connect
                >
                    {move || if pending.get() { "Connecting…" } else { "Connect" }}
                </button>
            </div>
        </li>
    }
}

/// The model's explanation, inert and marked, named as the canvas names
/// its source.
#[component]
fn ModelWhy(text: UntrustedText) -> impl IntoView {
    let from_name = expect_context::<SceneCtx>().name(&text.from);
    view! { <UntrustedBlock text from_name testid="suggestion-model-why"/> }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranking_says_who_ordered_the_list() {
        assert_eq!(
            ranked_by_words(RankedBy::Rules),
            "ranked by the registry's rules"
        );
        assert_eq!(ranked_by_words(RankedBy::Model), "ranked by a model");
        for r in [RankedBy::Rules, RankedBy::Model] {
            assert_eq!(
                serde_json::to_value(r).ok(),
                Some(serde_json::Value::from(ranked_by_key(r)))
            );
        }
    }
}

/// The list as the server renders it, in a scene drawn from a fixed view.
#[cfg(all(test, feature = "ssr"))]
mod render_tests {
    use super::*;
    use crate::dto::{
        edge_id, CapabilityKind, EdgeView, NodeKind, NodeStatus, NodeView, TopologyView,
    };

    fn topology() -> TopologyView {
        TopologyView {
            hub_id: "hub".into(),
            nodes: vec![
                NodeView::healthy("hub", "Wall Street hub", NodeKind::Hub, None),
                NodeView::healthy("vendorcorp", "VendorCorp", NodeKind::System, None),
                NodeView::healthy("buyercorp", "BuyerCorp", NodeKind::System, None),
            ],
            edges: vec![EdgeView {
                id: "buyercorp->vendorcorp:orders.query".into(),
                consumer: "buyercorp".into(),
                provider: "vendorcorp".into(),
                capability: "orders.query".into(),
                kind: CapabilityKind::DataShare,
                status: NodeStatus::Healthy,
                reason: None,
            }],
            rules: vec![],
            capabilities: vec![],
            reload_error: None,
            positions: vec![],
            layout: vec![],
            digest: String::new(),
        }
    }

    fn suggestion(consumer: &str, provider: &str, capability: &str) -> SuggestionView {
        SuggestionView {
            edge: edge_id(consumer, provider, capability),
            consumer: consumer.into(),
            provider: provider.into(),
            capability: capability.into(),
            kind: CapabilityKind::DataShare,
            why: format!("a rule lets {consumer} consume {capability}"),
            model_why: None,
        }
    }

    fn render(v: RecommendationsView) -> String {
        // The scene's selectors spawn their futures: give them somewhere to
        // run (already set by another test is fine).
        let _ = any_spawner::Executor::init_futures_executor();
        let owner = Owner::new();
        owner.with(|| {
            let ctx = CanvasCtx::new();
            provide_context(ctx);
            provide_context(SceneCtx::new(ctx, topology(), 0));
            view! { <Recommendations v/> }.to_html()
        })
    }

    #[test]
    fn suggestions_show_names_reasons_and_model_words_inert() {
        let mut ranked = suggestion("hub", "vendorcorp", "orders.query");
        ranked.model_why = Some(UntrustedText {
            text: "<script>go()</script> the hub reads orders".into(),
            from: "model:small".into(),
        });
        let html = render(RecommendationsView {
            suggestions: vec![
                ranked,
                // Drawn already: left out until the next read.
                suggestion("buyercorp", "vendorcorp", "orders.query"),
            ],
            ranked_by: RankedBy::Model,
            note: None,
            transcript: None,
        });
        assert_eq!(
            html.matches(r#"data-testid="suggestion""#).count(),
            1,
            "{html}"
        );
        assert!(
            html.contains(r#"data-edge="hub-&gt;vendorcorp:orders.query""#),
            "{html}"
        );
        assert!(html.contains("Wall Street hub"), "{html}");
        assert!(html.contains("VendorCorp"), "{html}");
        assert!(html.contains(r#"data-ranked-by="model""#), "{html}");
        assert!(html.contains("ranked by a model"), "{html}");
        assert!(
            html.contains(r#"data-testid="suggestion-model-why""#),
            "{html}"
        );
        assert!(html.contains("from model:small, unverified"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(
            html.contains(r#"data-testid="suggestion-accept""#),
            "{html}"
        );
        assert!(!html.contains("suggestions-empty"), "{html}");
    }

    #[test]
    fn nothing_left_to_make_says_so_with_the_note() {
        let html = render(RecommendationsView {
            suggestions: vec![suggestion("buyercorp", "vendorcorp", "orders.query")],
            ranked_by: RankedBy::Rules,
            note: Some("the model tier did not answer".into()),
            transcript: None,
        });
        assert!(
            html.contains(r#"data-testid="suggestions-empty""#),
            "{html}"
        );
        assert!(
            html.contains("No legal connection is left to make"),
            "{html}"
        );
        assert!(html.contains("ranked by the registry"), "{html}");
        assert!(html.contains("the model tier did not answer"), "{html}");
        assert!(!html.contains(r#"data-testid="suggestion""#), "{html}");
    }
}
