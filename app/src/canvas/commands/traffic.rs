//! What crossed the edges, read from the hub (DESIGN.md §6, metrics on the
//! canvas): every edge's recent traffic for the labels, and the drawers'
//! metrics and envelope inspector.
//!
//! * [`follow_traffic`]: `GET /api/traffic` once the page runs, again when
//!   the topology is refetched (a new edge, or a reconnection that may
//!   have missed events) and, while some edge shows calls, every
//!   [`RECOUNT`] (the counts are over a sliding window: they age). Live
//!   `traffic` events patch the cells in between ([`live`](super::live)).
//! * [`Refresher`]: one drawer section's view (`GET` of a path), read when
//!   the section opens and again when a traffic event names one of its
//!   edges, at most once per [`MIN_GAP`]: a busy edge does not turn into
//!   a request per call.

use std::time::Duration;

use leptos::prelude::*;
use serde::de::DeserializeOwned;

use crate::api::{self, ApiFailure};
use crate::canvas::state::CanvasCtx;
use crate::dto::TrafficView;
use crate::routes;

/// How often the labels' counts are read again while some edge has calls
/// in its window (nothing is read while every edge is quiet).
pub(crate) const RECOUNT: Duration = Duration::from_secs(20);

/// The shortest time between two reads of one drawer section.
pub(crate) const MIN_GAP: Duration = Duration::from_secs(1);

/// Reads every edge's traffic now and whenever asked (browser only: the
/// effects never run on the server, whose labels show nothing yet).
pub(crate) fn follow_traffic(ctx: CanvasCtx) {
    let issued = StoredValue::new(0u64);
    let applied = StoredValue::new(0u64);
    Effect::new(move |_| {
        ctx.refresh.track();
        ctx.traffic.refresh.track();
        issued.update_value(|n| *n += 1);
        let number = issued.get_value();
        let ticket = ctx.traffic.load_ticket();
        leptos::task::spawn_local(async move {
            let Ok(view) = api::get_json::<TrafficView>(routes::TRAFFIC).await else {
                // The labels keep what they show; the next read may work.
                return;
            };
            // An older read answering late must not undo a newer one.
            if applied.try_get_value().is_none_or(|a| number < a) {
                return;
            }
            applied.set_value(number);
            ctx.traffic.apply_load(ticket, view);
        });
    });
    Effect::new(move |_| {
        let timer = set_interval_with_handle(
            move || {
                if ctx.traffic.any_recent() {
                    ctx.traffic.refresh.try_update(|r| *r += 1);
                }
            },
            RECOUNT,
        )
        .ok();
        on_cleanup(move || {
            if let Some(t) = timer {
                t.clear();
            }
        });
    });
}

/// One drawer section's view of `GET path`, kept fresh: the latest read
/// wins, and reads are spaced by at least [`MIN_GAP`] (a poke during the
/// gap is kept and read at its end). Every use after an `await` or a timer
/// is a `try_`: the drawer may have closed meanwhile.
pub(crate) struct Refresher<T: Send + Sync + 'static> {
    path: StoredValue<String>,
    /// The last answer, or why it failed; `None` until the first answers.
    pub(crate) view: RwSignal<Option<Result<T, ApiFailure>>>,
    generation: StoredValue<u64>,
    /// A read started less than [`MIN_GAP`] ago.
    cooling: StoredValue<bool>,
    /// Poked during the gap: read again at its end.
    dirty: StoredValue<bool>,
    timer: StoredValue<Option<TimeoutHandle>>,
}

impl<T: Send + Sync + 'static> Clone for Refresher<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Send + Sync + 'static> Copy for Refresher<T> {}

impl<T: DeserializeOwned + Send + Sync + 'static> Refresher<T> {
    /// A section reading `path`; nothing is read until [`Self::follow`] or
    /// [`Self::poke`].
    pub(crate) fn new(path: String) -> Self {
        Refresher {
            path: StoredValue::new(path),
            view: RwSignal::new(None),
            generation: StoredValue::new(0),
            cooling: StoredValue::new(false),
            dirty: StoredValue::new(false),
            timer: StoredValue::new(None),
        }
    }

    /// Reads now, or at the end of the gap if a read just started.
    pub(crate) fn poke(self) {
        match self.cooling.try_get_value() {
            None => {}
            Some(true) => {
                self.dirty.try_set_value(true);
            }
            Some(false) => self.read(),
        }
    }

    fn read(self) {
        let (Some(generation), Some(path)) = (
            self.generation.try_update_value(|g| {
                *g += 1;
                *g
            }),
            self.path.try_get_value(),
        ) else {
            return;
        };
        self.cooling.try_set_value(true);
        let timer = set_timeout_with_handle(
            move || {
                self.timer.try_set_value(None);
                self.cooling.try_set_value(false);
                if self.dirty.try_update_value(std::mem::take) == Some(true) {
                    self.poke();
                }
            },
            MIN_GAP,
        )
        .ok();
        self.timer.try_set_value(timer);
        leptos::task::spawn_local(async move {
            let result = api::get_json::<T>(&path).await;
            if self.generation.try_get_value() == Some(generation) {
                self.view.try_set(Some(result));
            }
        });
    }

    /// Reads now, and again whenever the traffic of one of `edges` changes
    /// (a live event named it, or a full read changed it), until the
    /// section is gone.
    pub(crate) fn follow(self, ctx: CanvasCtx, edges: Vec<String>) {
        let cells: Vec<_> = edges.iter().map(|e| ctx.traffic.cell(e)).collect();
        Effect::new(move |_| {
            for c in &cells {
                c.track();
            }
            self.poke();
        });
        on_cleanup(move || {
            if let Some(Some(t)) = self.timer.try_get_value() {
                t.clear();
            }
        });
    }
}
