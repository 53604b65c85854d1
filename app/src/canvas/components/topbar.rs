//! The canvas page's parts of the top bar: the Inbox link with its count
//! of waiting proposals, and the live channel's indicator.

use leptos::prelude::*;

use crate::canvas::commands::topology::load_inbox_pending;
use crate::canvas::state::CanvasCtx;

/// The Inbox link, with how many proposals wait there: read once the page
/// is hydrated, then kept current by the live channel (`inbox_changed`).
#[component]
pub(crate) fn InboxLink() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    Effect::new(move |_| load_inbox_pending(ctx));
    let label = move || match ctx.inbox_pending.get() {
        Some(n) if n > 0 => format!("Inbox, {n} waiting for approval"),
        _ => "Inbox".to_string(),
    };
    view! {
        <a href="/inbox" data-testid="nav-inbox" aria-label=label>
            "Inbox"
            {move || ctx.inbox_pending.get().filter(|n| *n > 0).map(|n| view! {
                <span class="badge" data-testid="inbox-pending">{n}</span>
            })}
        </a>
    }
}

/// The People link, for those who may manage people (admins).
#[component]
pub(crate) fn PeopleLink() -> impl IntoView {
    crate::session::people_link()
}

/// Whether live updates are arriving.
#[component]
pub(crate) fn LiveIndicator() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    view! {
        <span
            class="live-indicator"
            data-testid="live-status"
            data-state=move || ctx.link.get().key()
            role="status"
            title="Live updates from the hub"
        >
            <span class="dot" aria-hidden="true"></span>
            {move || ctx.link.get().label()}
        </span>
    }
}
