//! "Recent audit entries" in a node's drawer: the hub's own trail of calls
//! involving the system, as redacted lines (who called whom for what, how
//! it ended, how long it took, the trace id that joins the three trails).
//! The trail is read by [`audit_trail`], a command.

use leptos::prelude::*;

use crate::api::ApiFailure;
use crate::canvas::commands::drawer::audit_trail;
use crate::dto::AuditEntryView;

/// `2026-01-02T10:11:12.345Z` → `10:11:12`: the drawer is about now; the
/// full time is in the row's tooltip.
fn clock(at: &str) -> String {
    at.split_once('T')
        .map(|(_, t)| t.chars().take(8).collect())
        .unwrap_or_else(|| at.to_string())
}

/// The section, loaded when the drawer opens (browser only).
#[component]
pub(crate) fn AuditSection(
    /// The system whose trail to show.
    system: String,
) -> impl IntoView {
    let entries = LocalResource::new(move || audit_trail(system.clone()));
    view! {
        <section class="drawer-section" aria-label="Recent audit entries" data-testid="audit">
            <div class="section-head">
                <h3>"Recent audit entries"</h3>
                <button
                    type="button"
                    class="link-button"
                    data-testid="audit-refresh"
                    on:click=move |_| entries.refetch()
                >
                    "Refresh"
                </button>
            </div>
            {move || match entries.get() {
                None => view! { <p class="muted" role="status">"Loading the trail…"</p> }.into_any(),
                Some(Err(f)) => view! { <AuditError failure=f/> }.into_any(),
                Some(Ok(list)) if list.is_empty() => {
                    view! { <p class="muted" data-testid="audit-empty">"No calls recorded yet."</p> }
                        .into_any()
                }
                Some(Ok(list)) => view! { <AuditTable list/> }.into_any(),
            }}
        </section>
    }
}

#[component]
fn AuditError(failure: ApiFailure) -> impl IntoView {
    view! {
        <p class="not-connected" role="alert">
            "Could not load the trail — "
            {failure.describe()}
        </p>
    }
}

#[component]
fn AuditTable(list: Vec<AuditEntryView>) -> impl IntoView {
    let rows = list
        .into_iter()
        .map(|e| {
            let outcome = match e.reason {
                Some(r) => format!("{} · {r}", e.outcome),
                None => e.outcome.clone(),
            };
            let failed = e.reason.is_some();
            view! {
                <tr data-testid="audit-entry" title=format!("{} · trace {}", e.at, e.trace_id)>
                    <td>{clock(&e.at)}</td>
                    <td>
                        {e.caller} " → " {e.provider} <br/> <code>{e.capability}</code>
                    </td>
                    <td class=if failed { "bad" } else { "" }>{outcome}</td>
                    <td class="num">{format!("{} ms", e.duration_ms)}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="data-table audit-table">
            <thead>
                <tr>
                    <th scope="col">"When"</th>
                    <th scope="col">"Call"</th>
                    <th scope="col">"Outcome"</th>
                    <th scope="col" class="num">"Took"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_shows_the_time_of_day() {
        assert_eq!(clock("2026-01-02T10:11:12.345Z"), "10:11:12");
        assert_eq!(clock("yesterday"), "yesterday");
    }
}
