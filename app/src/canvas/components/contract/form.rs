//! The hub's negotiation form: its state (kept as drafts, so a redraw of
//! the scene keeps what the user typed), the columns to ask for, the
//! purpose and the button that has the hub negotiate.

use std::collections::BTreeSet;

use leptos::prelude::*;

use super::words::{days, draft_key, tid, DEFAULT_PURPOSE, DEFAULT_RETENTION_DAYS};
use crate::api::ApiFailure;
use crate::canvas::commands::contracts::{negotiate, Loader};
use crate::canvas::state::CanvasCtx;
use crate::dto::NegotiateRequest;

/// The hub's negotiation form state, kept as drafts so a redraw of the
/// scene keeps what the user typed.
#[derive(Clone, Copy)]
pub(super) struct HubForm {
    purpose: RwSignal<String>,
    /// Columns the user unticked (all are asked for by default).
    unticked: RwSignal<BTreeSet<String>>,
}

impl HubForm {
    pub(super) fn new(ctx: CanvasCtx, edge: &str) -> Self {
        let (pk, uk) = (draft_key(edge, "purpose"), draft_key(edge, "unticked"));
        let purpose = RwSignal::new(
            ctx.draft(&pk)
                .unwrap_or_else(|| DEFAULT_PURPOSE.to_string()),
        );
        let unticked = RwSignal::new(
            ctx.draft(&uk)
                .map(|s| {
                    s.split(',')
                        .filter(|c| !c.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        );
        Effect::new(move |_| ctx.set_draft(&pk, purpose.get()));
        Effect::new(move |_| {
            let joined = unticked
                .with(|u: &BTreeSet<String>| u.iter().cloned().collect::<Vec<_>>().join(","));
            ctx.set_draft(&uk, joined);
        });
        HubForm { purpose, unticked }
    }

    /// Of `all`, the columns still ticked, in order.
    fn chosen(&self, all: &[String]) -> Vec<String> {
        self.unticked
            .with(|u| all.iter().filter(|c| !u.contains(*c)).cloned().collect())
    }
}

/// The hub's form: the columns it asks for, its purpose, the button.
#[component]
pub(super) fn NegotiateForm(
    consumer: String,
    columns: Vec<String>,
    /// Whether the hub holds a contract already (the button says "again").
    again: bool,
    loader: Loader,
    error: RwSignal<Option<ApiFailure>>,
    negotiating: Memo<bool>,
    form: HubForm,
) -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    let all = StoredValue::new(columns.clone());
    let chosen = move || all.with_value(|cols| form.chosen(cols));
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let purpose = form.purpose.get_untracked().trim().to_string();
        let columns = chosen();
        if negotiating.get_untracked() || purpose.is_empty() || columns.is_empty() {
            return;
        }
        let retention_days = DEFAULT_RETENTION_DAYS;
        negotiate(
            ctx,
            loader,
            error,
            NegotiateRequest {
                columns,
                purpose,
                retention_days,
            },
        );
    };
    let disabled = move || {
        negotiating.get() || form.purpose.with(|p| p.trim().is_empty()) || chosen().is_empty()
    };
    let label = move || match (negotiating.get(), again) {
        (true, _) => "Negotiating…",
        (false, false) => "Negotiate",
        (false, true) => "Negotiate again",
    };
    let failure = {
        let consumer = consumer.clone();
        move || {
            error.get().map(|f| {
                view! {
                    <p class="not-connected" role="alert" data-testid=tid("negotiate-error", &consumer)>
                        "The hub could not negotiate — " {f.describe()}
                    </p>
                }
            })
        }
    };
    let retention = format!("Retention: {}", days(DEFAULT_RETENTION_DAYS as f64));
    view! {
        <form
            class="drawer-form negotiate-form"
            on:submit=on_submit
            aria-busy=move || negotiating.get().to_string()
        >
            <ColumnChoices columns unticked=form.unticked/>
            <label>
                <span>"Purpose"</span>
                <input
                    type="text"
                    data-testid=tid("negotiate-purpose", &consumer)
                    bind:value=form.purpose
                />
            </label>
            <p class="muted negotiate-retention">{retention}</p>
            <button type="submit" class="primary" data-testid=tid("negotiate", &consumer) disabled=disabled>
                {label}
            </button>
            {failure}
        </form>
    }
    .into_any()
}

/// A checkbox per column the hub may ask for, all ticked at first.
#[component]
fn ColumnChoices(columns: Vec<String>, unticked: RwSignal<BTreeSet<String>>) -> impl IntoView {
    if columns.is_empty() {
        return view! {
            <p class="muted" data-testid="negotiate-no-columns">
                "The registry lists no queryable columns for this data-share."
            </p>
        }
        .into_any();
    }
    let boxes = columns
        .into_iter()
        .map(|c| {
            let (shown, toggled) = (c.clone(), c.clone());
            let on_change = move |ev| {
                let on = event_target_checked(&ev);
                unticked.update(|u| {
                    if on {
                        u.remove(&toggled);
                    } else {
                        u.insert(toggled.clone());
                    }
                });
            };
            view! {
                <label class="column-choice">
                    <input
                        type="checkbox"
                        data-testid=format!("negotiate-column-{c}")
                        prop:checked=move || unticked.with(|u| !u.contains(&shown))
                        on:change=on_change
                    />
                    <code>{c}</code>
                </label>
            }
        })
        .collect_view();
    view! {
        <fieldset class="column-choices">
            <legend>"Columns to ask for"</legend>
            {boxes}
        </fieldset>
    }
    .into_any()
}
