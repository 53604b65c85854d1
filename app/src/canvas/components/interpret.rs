//! "Interpretation" in a node's drawer: the hub's data interpreter
//! (DESIGN.md §5) says one sentence about the node's redacted metrics.
//!
//! It has no rule path: without a model tier the hub does not offer it and
//! this section is not drawn at all (the caller checks
//! [`AgentsView::interpreter`](crate::dto::AgentsView::interpreter)). The
//! sentence is model output, so it is untrusted text, shown inert and
//! marked; when there is none the hub's note says why, and the run's
//! transcript follows when one ran. The call itself is
//! [`interpret`]'s (`commands::agents`).

use leptos::prelude::*;

use super::transcript::Transcript;
use crate::api::ApiFailure;
use crate::canvas::commands::agents::{interpret, interpret_key};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::CanvasCtx;
use crate::dto::{InterpretationView, UntrustedText};
use crate::untrusted::UntrustedBlock;

/// The section of `node`'s drawer: the button and the last answer.
#[component]
pub(crate) fn InterpretSection(
    /// The node the drawer shows.
    node: String,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let running = {
        let key = interpret_key(&node);
        Memo::new(move |_| ctx.running.with(|r| r.contains(&key)))
    };
    let answer = {
        let node = node.clone();
        Memo::new(move |_| ctx.agents.interpretations.with(|m| m.get(&node).cloned()))
    };
    let ask = move |_| interpret(ctx, node.clone());
    view! {
        <section class="drawer-section interpret" aria-label="Interpretation" data-testid="interpret-panel">
            <h3>"Interpretation"</h3>
            <div class="drawer-actions">
                <button
                    type="button"
                    data-testid="interpret"
                    disabled=move || running.get()
                    on:click=ask
                >
                    {move || if running.get() { "Interpreting…" } else { "Interpret" }}
                </button>
            </div>
            <div aria-live="polite">
                {move || match answer.get() {
                    None => None,
                    Some(Ok(v)) => Some(view! { <Interpretation v/> }.into_any()),
                    Some(Err(f)) => Some(view! { <InterpretError failure=f/> }.into_any()),
                }}
            </div>
        </section>
    }
}

/// The sentence (or why there is none) and the run behind it.
#[component]
fn Interpretation(v: InterpretationView) -> impl IntoView {
    let said = match (v.sentence, v.note) {
        (Some(text), _) => view! { <Sentence text/> }.into_any(),
        (None, Some(note)) => {
            view! { <p class="muted interpret-note" data-testid="interpretation-note">{note}</p> }
                .into_any()
        }
        (None, None) => view! {
            <p class="muted interpret-note" data-testid="interpretation-note">
                "The interpreter had nothing to say about this node."
            </p>
        }
        .into_any(),
    };
    view! {
        <div class="answer">
            {said}
            {v.transcript.map(|t| view! { <Transcript t/> })}
        </div>
    }
}

/// Model words, inert and marked, named as the canvas names their source.
#[component]
fn Sentence(text: UntrustedText) -> impl IntoView {
    let from_name = expect_context::<SceneCtx>().name(&text.from);
    view! { <UntrustedBlock text from_name testid="interpretation"/> }
}

#[component]
fn InterpretError(failure: ApiFailure) -> impl IntoView {
    view! {
        <p class="not-connected" role="alert" data-testid="interpret-error">
            "Could not interpret this node — "
            {failure.describe()}
        </p>
    }
}
