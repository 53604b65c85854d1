//! The first view of the canvas, and a person's own view kept between
//! visits.
//!
//! The server cannot know the window, so the page is rendered at
//! [`Camera::INITIAL`]; once hydrated, measured and drawn, the canvas takes
//! the view this browser kept for the person (their last pan and zoom on
//! this hub), or else fits the graph to the window ([`Camera::fit`]); a
//! fit follows the graph while what loads after it (the first traffic's
//! observed arcs) widens it, until the person first touches the canvas.
//! From then on every change of view (a pan, the wheel, a zoom or fit
//! button) is kept, a moment after it stops, in the browser's
//! `localStorage` under the person's username: nothing of it reaches the
//! hub.

use leptos::prelude::*;

use crate::canvas::state::CanvasCtx;
use crate::canvas::viewport::Camera;
use crate::session::SessionCtx;

/// How long the view must stay still before it is kept (a pan writes
/// once, not at every frame).
#[cfg(feature = "hydrate")]
const KEEP_AFTER_MS: u64 = 300;

/// The storage key of `user`'s view.
fn key(user: &str) -> String {
    format!("wall-street.view.{user}")
}

/// Places the first view once the page can (hydrated, measured, a graph
/// drawn), then keeps every later view. Browser only: effects do not run
/// on the server.
pub(crate) fn follow_camera(ctx: CanvasCtx) {
    let session = expect_context::<SessionCtx>();
    let user = move || {
        session
            .session
            .with(|s| s.as_ref().map(|s| s.username.clone()))
    };
    // The camera the first view was set to: kept only once it changes.
    let placed = StoredValue::new(None::<Camera>);
    // Whether the first view is a fit that still follows the graph: what
    // loads after the first drawing (observed arcs with the first traffic,
    // their labels) may widen the bounds, and the fit follows them until
    // the person first touches the canvas (or was given their own view).
    let following = StoredValue::new(true);
    #[cfg(feature = "hydrate")]
    {
        let stop = move || following.set_value(false);
        let down = window_event_listener(leptos::ev::pointerdown, move |_| stop());
        let wheel = window_event_listener(leptos::ev::wheel, move |_| stop());
        let keys = window_event_listener(leptos::ev::keydown, move |_| stop());
        on_cleanup(move || {
            down.remove();
            wheel.remove();
            keys.remove();
        });
    }
    Effect::new(move |_| {
        if !ctx.hydrated.get() {
            return;
        }
        let (Some(size), Some(bounds)) = (ctx.viewport.get(), ctx.bounds.get()) else {
            return;
        };
        let first = match placed.get_value() {
            None => {
                let kept = user()
                    .and_then(|u| stored(&key(&u)))
                    .and_then(|s| Camera::from_saved(&s));
                if kept.is_some() {
                    following.set_value(false);
                }
                kept.unwrap_or_else(|| Camera::fit(bounds, size))
            }
            // Still the fit nobody moved: fit the graph as it is now.
            Some(at) if following.get_value() && ctx.camera.get_untracked() == at => {
                Camera::fit(bounds, size)
            }
            Some(_) => return,
        };
        placed.set_value(Some(first));
        if ctx.camera.get_untracked() != first {
            ctx.camera.set(first);
        }
    });
    #[cfg(feature = "hydrate")]
    {
        let timer = StoredValue::new(None::<TimeoutHandle>);
        Effect::new(move |_| {
            let camera = ctx.camera.get();
            if placed.get_value().is_none_or(|first| first == camera) {
                return;
            }
            let Some(user) = user() else {
                return;
            };
            if let Some(t) = timer.get_value() {
                t.clear();
            }
            let handle = set_timeout_with_handle(
                move || store(&key(&user), &camera.to_saved()),
                std::time::Duration::from_millis(KEEP_AFTER_MS),
            )
            .ok();
            timer.set_value(handle);
        });
    }
}

/// What this browser keeps under `key`, if anything.
fn stored(key: &str) -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        window()
            .local_storage()
            .ok()
            .flatten()?
            .get_item(key)
            .ok()
            .flatten()
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = key;
        None
    }
}

/// Keeps `value` under `key` (a browser refusing storage keeps nothing).
#[cfg(feature = "hydrate")]
fn store(key: &str, value: &str) {
    if let Some(storage) = window().local_storage().ok().flatten() {
        let _ = storage.set_item(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_person_has_a_key_of_their_own() {
        assert_ne!(key("alice"), key("bob"));
        assert!(key("alice").ends_with(".alice"));
    }
}
