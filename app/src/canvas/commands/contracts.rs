//! The contracts panel's calls to the hub (DESIGN.md §4, "Open a
//! data-share edge"): read an edge's contracts view, and have the hub
//! negotiate its own contract. The latest request wins: a stale answer
//! never overwrites a newer one, and nothing is touched once the drawer
//! has closed.

use leptos::prelude::*;

use crate::api::{self, ApiFailure};
use crate::canvas::state::CanvasCtx;
use crate::dto::{ContractsView, NegotiateRequest};

/// The `ctx.running` entry of a negotiation of `edge` on its way.
pub(crate) fn running_key(edge: &str) -> String {
    format!("{edge}#negotiate")
}

/// The panel's loaded view and what is needed to refresh it: the latest
/// request wins (a stale GET never overwrites a newer answer). Every use
/// after an `await` is a `try_`: the drawer may have closed meanwhile.
#[derive(Clone, Copy)]
pub(crate) struct Loader {
    pub(crate) edge: StoredValue<String>,
    pub(crate) view: RwSignal<Option<Result<ContractsView, ApiFailure>>>,
    generation: StoredValue<u64>,
    /// Set when this panel's own negotiation showed its answer, so that
    /// its end does not read the view again.
    settled: StoredValue<bool>,
}

impl Loader {
    pub(crate) fn new(edge: String) -> Self {
        Loader {
            edge: StoredValue::new(edge),
            view: RwSignal::new(None),
            generation: StoredValue::new(0),
            settled: StoredValue::new(false),
        }
    }

    /// A new request's number (answers of older ones are dropped); `None`
    /// once the panel is gone.
    fn next(&self) -> Option<u64> {
        self.generation.try_update_value(|g| {
            *g += 1;
            *g
        })
    }

    /// Shows `result` if no newer request started since `generation`.
    fn apply(&self, generation: u64, result: Result<ContractsView, ApiFailure>) {
        if self.generation.try_get_value() == Some(generation) {
            self.view.try_set(Some(result));
        }
    }

    /// Reads the view from the hub (browser only).
    pub(crate) fn load(self) {
        let (Some(generation), Some(edge)) = (self.next(), self.edge.try_get_value()) else {
            return;
        };
        leptos::task::spawn_local(async move {
            let result = api::contract(&edge).await;
            self.apply(generation, result);
        });
    }

    /// Whether this panel's own negotiation already showed its answer
    /// (and forgets it).
    pub(crate) fn take_settled(&self) -> bool {
        self.settled
            .try_update_value(|s| std::mem::replace(s, false))
            .unwrap_or(false)
    }
}

/// Has the hub negotiate `request` for the loader's edge; shows the view its
/// POST returns, or the refusal (then reloads: the hub may have recorded
/// turns before it failed).
pub(crate) fn negotiate(
    ctx: CanvasCtx,
    loader: Loader,
    error: RwSignal<Option<ApiFailure>>,
    request: NegotiateRequest,
) {
    let edge = loader.edge.get_value();
    let key = running_key(&edge);
    if ctx.running.with_untracked(|r| r.contains(&key)) {
        return;
    }
    error.set(None);
    ctx.running.update(|r| {
        r.insert(key.clone());
    });
    leptos::task::spawn_local(async move {
        let result = api::negotiate(&edge, &request).await;
        if let Some(generation) = loader.next() {
            match result {
                Ok(view) => loader.apply(generation, Ok(view)),
                Err(f) => {
                    error.try_set(Some(f));
                    loader.load();
                }
            }
            loader.settled.try_set_value(true);
        }
        ctx.running.try_update(|r| {
            r.remove(&key);
        });
    });
}
