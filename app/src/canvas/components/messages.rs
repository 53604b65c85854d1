//! What the canvas says instead of, or above, a graph: the topology could
//! not be loaded, or its file failed to reload.

use leptos::prelude::*;

use crate::canvas::state::CanvasCtx;

/// The topology could not be fetched: say what failed and offer a retry.
#[component]
pub(crate) fn LoadError(error: String) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    view! {
        <div class="viewport">
            <div class="canvas-message error" data-testid="error-state" role="alert">
                <p>"Could not load the topology from the hub."</p>
                <p>
                    <code>{error}</code>
                </p>
                <button
                    type="button"
                    disabled=move || !ctx.hydrated.get()
                    on:click=move |_| ctx.refetch()
                >
                    "Try again"
                </button>
            </div>
        </div>
    }
}

/// Says that the topology file failed to reload and the hub runs on the
/// previous one: the operator must know the canvas is not their latest file.
#[component]
pub(crate) fn ReloadError(error: String) -> impl IntoView {
    view! {
        <p class="banner warn" role="status" data-testid="reload-error">
            "The topology file failed to reload; the hub keeps the previous topology. "
            <code>{error}</code>
        </p>
    }
}
