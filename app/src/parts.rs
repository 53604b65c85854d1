//! The browser bundle's parts loaded on first use.
//!
//! The first page load fetches the main part of the wasm only: the canvas
//! and what hydrating it takes. What a person opens later is marked
//! `#[lazy]` where it is defined, and `scripts/build` (wasm-split-cli) cuts
//! each into a part of its own that the browser fetches the first time it
//! is called (on the server a `#[lazy]` function is a plain `async fn`):
//!
//! * the drawer's body (`canvas::components::drawer::drawer_part`: node,
//!   edge and observed drawers with their forms, contracts, metrics,
//!   inspector, audit, interpretation);
//! * the onboarding panel (`onboard_part`), the suggestions panel
//!   (`suggestions_part`);
//! * the inbox's entries (`inbox::inbox_part`) and the people table
//!   (`people::people_part`), which only their own pages load.
//!
//! A part is fetched once: the loader keeps it for the page's life. The
//! canvas starts fetching a part when a person shows the intent to open it
//! (the pointer over the map or on a button, the keyboard's focus on it),
//! with [`Prefetch::once`], so the fetch overlaps the click instead of
//! following it, and a page someone only looks at never fetches it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether a part's prefetch has been started on this page.
pub struct Prefetch(AtomicBool);

impl Prefetch {
    /// Not started yet.
    pub const fn new() -> Self {
        Self(AtomicBool::new(false))
    }

    /// Runs `start` the first time only (a part is prefetched once).
    pub fn once(&self, start: impl FnOnce()) {
        if !self.0.swap(true, Ordering::Relaxed) {
            start();
        }
    }
}

impl Default for Prefetch {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefetch_starts_once() {
        let p = Prefetch::new();
        let mut started = 0;
        p.once(|| started += 1);
        p.once(|| started += 1);
        assert_eq!(started, 1);
    }
}
