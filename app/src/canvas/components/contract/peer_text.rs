//! A peer's words (purposes, rationales) in the panel: inert, and marked
//! with the peer's display name.

use leptos::prelude::*;

use super::context::Directory;
use crate::dto::UntrustedText;
use crate::untrusted::UntrustedBlock;

/// Peer text, inert and marked, named as the canvas names its source.
#[component]
pub(super) fn Untrusted(text: UntrustedText, testid: &'static str) -> impl IntoView {
    let from_name = expect_context::<Directory>().name(&text.from);
    view! { <UntrustedBlock text from_name testid/> }
}
