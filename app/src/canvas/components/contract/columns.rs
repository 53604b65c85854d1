//! Column names as chips, as contracts and negotiation messages list
//! them.

use leptos::prelude::*;

/// Column names as chips.
#[component]
pub(super) fn ColumnList(testid: String, columns: Vec<String>) -> impl IntoView {
    let n = columns.len();
    view! {
        <span class="column-list" data-testid=testid data-count=n.to_string()>
            {if columns.is_empty() {
                view! { <span class="muted">"no columns"</span> }.into_any()
            } else {
                columns
                    .into_iter()
                    .map(|c| view! { <code class="column" data-testid="column">{c}</code> })
                    .collect_view()
                    .into_any()
            }}
        </span>
    }
}
