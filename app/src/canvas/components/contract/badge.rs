//! A party's run state, as the hub derived it from its log.

use leptos::prelude::*;

use super::words::{state_word, tid};
use crate::dto::RunState;

/// The derived run state, in a badge whose text is what it means now.
#[component]
pub(super) fn StateBadge(consumer: String, state: RunState, detail: String) -> impl IntoView {
    let word = state_word(state);
    view! {
        <p
            class=format!("run-state {word}")
            data-testid=tid("contract-state", &consumer)
            data-state=word
            role="status"
        >
            <span class="run-state-word">{word}</span>
            " "
            <span class="run-state-detail">{detail}</span>
        </p>
    }
}
