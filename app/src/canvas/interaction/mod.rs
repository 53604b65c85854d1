//! The canvas's interaction layer: the state of the drawn graph and the
//! gesture controllers that change it.
//!
//! * [`scene_ctx`]: [`SceneCtx`], the state one drawn graph shares by
//!   context (positions, routes, health, selection, what is drawn in
//!   detail, gestures in progress), and the plain data of those gestures.
//! * [`controller`]: pan, node drag (and keyboard nudge), connection drag;
//!   they report a finished gesture as a [`GestureEnd`](controller::GestureEnd)
//!   and never call the hub.
//!
//! Above the pure modules and the page state, below the commands: nothing
//! here imports `commands`, `components` or `scene`.

pub(crate) mod controller;
pub(crate) mod scene_ctx;

pub(crate) use scene_ctx::{Chooser, SceneCtx};
