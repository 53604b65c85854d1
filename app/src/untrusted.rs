//! Peer free text as every page shows it: inert text in a marked box that
//! says where it came from and that nobody vouched for it (DESIGN.md
//! "untrusted text"). It is a text node, never HTML, never a control.

use leptos::prelude::*;

use crate::dto::UntrustedText;

/// `text` from the system called `from_name`, marked "unverified".
#[component]
pub fn UntrustedBlock(
    text: UntrustedText,
    /// The source's display name (the system id when no name is known).
    from_name: String,
    /// `data-testid` of the box (`untrusted` when empty).
    #[prop(optional)]
    testid: &'static str,
) -> impl IntoView {
    let mark = format!("from {from_name}, unverified");
    let label = mark.clone();
    view! {
        <div
            class="untrusted"
            data-testid=if testid.is_empty() { "untrusted" } else { testid }
            data-untrusted="true"
            role="note"
            aria-label=label
        >
            <p class="untrusted-mark">{mark}</p>
            <p class="untrusted-text" data-testid="untrusted-text">{text.text}</p>
        </div>
    }
}
