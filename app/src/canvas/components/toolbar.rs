//! The canvas's toolbar: zoom out and in, the zoom level, fit to view,
//! "Add a system" (onboarding) and, when the hub offers its connection
//! recommender (DESIGN.md §5), the Suggestions button. Disabled until the page is hydrated (the buttons
//! need code).

use leptos::prelude::*;

use super::onboard::OnboardButton;
use super::suggestions::SuggestionsButton;
use crate::canvas::graph::Point;
use crate::canvas::state::CanvasCtx;
use crate::canvas::viewport::Camera;

/// Zoom buttons, the zoom level, fit-to-view, "Add a system" and the
/// Suggestions button.
#[component]
pub(crate) fn Toolbar() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let zoom_to = move |zoom: Option<f64>| {
        let Some(zoom) = zoom else {
            return;
        };
        let anchor = ctx
            .viewport
            .get_untracked()
            .map(|s| Point {
                x: s.w / 2.0,
                y: s.h / 2.0,
            })
            .unwrap_or_default();
        ctx.camera.update(|c| *c = c.zoom_at(zoom, anchor));
    };
    let fit = move |_| {
        if let (Some(bounds), Some(size)) =
            (ctx.bounds.get_untracked(), ctx.viewport.get_untracked())
        {
            ctx.camera.set(Camera::fit(bounds, size));
        }
    };
    view! {
        <div class="toolbar" role="toolbar" aria-label="Canvas tools">
            <OnboardButton/>
            <SuggestionsButton/>
            <button
                type="button"
                data-testid="zoom-out"
                aria-label="Zoom out"
                disabled=move || !ctx.hydrated.get() || ctx.camera.get().step_out().is_none()
                on:click=move |_| zoom_to(ctx.camera.get_untracked().step_out())
            >
                "−"
            </button>
            <output data-testid="zoom-level" aria-live="polite">
                {move || format!("{}%", ctx.camera.get().percent())}
            </output>
            <button
                type="button"
                data-testid="zoom-in"
                aria-label="Zoom in"
                disabled=move || !ctx.hydrated.get() || ctx.camera.get().step_in().is_none()
                on:click=move |_| zoom_to(ctx.camera.get_untracked().step_in())
            >
                "+"
            </button>
            <button
                type="button"
                data-testid="fit-view"
                aria-label="Fit to view"
                title="Fit to view"
                disabled=move || !ctx.hydrated.get() || ctx.bounds.get().is_none()
                on:click=fit
            >
                "⤢"
            </button>
        </div>
    }
}
