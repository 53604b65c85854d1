//! The canvas's live region: what the commands announce (an edge made,
//! removed or refused), on screen and for screen readers.

use leptos::prelude::*;

use crate::canvas::state::{CanvasCtx, NoticeKind};

/// The canvas's live region: what was connected, removed or refused, on
/// screen and read out by screen readers. A message fades after a while.
#[component]
pub(crate) fn Announcer() -> impl IntoView {
    let ctx = expect_context::<CanvasCtx>();
    Effect::new(move |_| {
        let Some(seq) = ctx.notice.with(|n| n.as_ref().map(|n| n.seq)) else {
            return;
        };
        set_timeout(
            move || {
                if ctx.notice.with_untracked(|n| n.as_ref().map(|n| n.seq)) == Some(seq) {
                    ctx.notice.try_set(None);
                }
            },
            std::time::Duration::from_secs(12),
        );
    });
    let kind = move || {
        ctx.notice.with(|n| match n.as_ref().map(|n| n.kind) {
            Some(NoticeKind::Done) => "done",
            Some(NoticeKind::Refused) => "refused",
            None => "empty",
        })
    };
    view! {
        <div
            class="announcer"
            data-testid="announcer"
            data-kind=kind
            role="status"
            aria-live="polite"
            aria-atomic="true"
        >
            {move || ctx.notice.get().map(|n| n.text)}
        </div>
    }
}
