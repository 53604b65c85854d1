//! The "Data contracts" section of the drawer: loads the edge's contracts
//! view (when the drawer opens, after each query answer of the edge, and
//! after a negotiation it did not see end) and shows its parties.

use leptos::prelude::*;

use super::context::Directory;
use super::form::HubForm;
use super::party::Parties;
use crate::api::ApiFailure;
use crate::canvas::commands::contracts::{running_key, Loader};
use crate::canvas::interaction::SceneCtx;
use crate::canvas::state::CanvasCtx;
use crate::dto::EdgeView;

/// The section: every party's contract, state and transcript.
#[component]
pub(crate) fn ContractPanel(edge: EdgeView) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    provide_context(Directory::from_view(&expect_context::<SceneCtx>().view));
    let loader = Loader::new(edge.id.clone());
    let error = RwSignal::new(None::<ApiFailure>);
    let negotiating = {
        let key = running_key(&edge.id);
        Memo::new(move |_| ctx.running.with(|r| r.contains(&key)))
    };
    // Load when the drawer opens and after each query answer of this edge;
    // a negotiation's answer comes with its own view.
    let answer = {
        let id = edge.id.clone();
        Memo::new(move |_| ctx.answers.with(|a| a.get(&id).cloned()))
    };
    Effect::new(move |_| {
        answer.track();
        loader.load();
    });
    // A negotiation this panel did not see start (the drawer was redrawn
    // while it ran) ends: read what it left.
    Effect::new(move |was: Option<bool>| {
        let now = negotiating.get();
        if was == Some(true) && !now && !loader.take_settled() {
            loader.load();
        }
        now
    });
    let hub_form = HubForm::new(ctx, &edge.id);
    view! {
        <section class="drawer-section contracts" aria-label="Data contracts" data-testid="contract-panel">
            <div class="section-head">
                <h3>"Data contracts"</h3>
                <button
                    type="button"
                    class="link-button"
                    data-testid="contract-refresh"
                    on:click=move |_| loader.load()
                >
                    "Refresh"
                </button>
            </div>
            {move || match loader.view.get() {
                None => view! { <p class="muted" role="status">"Loading the contracts…"</p> }.into_any(),
                Some(Err(f)) => view! {
                    <p class="not-connected" role="alert" data-testid="contract-error">
                        "Could not load the contracts — " {f.describe()}
                    </p>
                }
                .into_any(),
                Some(Ok(v)) => view! { <Parties v loader error negotiating hub_form/> }.into_any(),
            }}
        </section>
    }
}
