//! The few browser facts the canvas reads or sets directly: which element
//! is under the pointer, where the pointer is, pointer capture and
//! keyboard focus by `data-testid`.
//!
//! Stateless helpers over `web_sys`, below every reactive layer. They are
//! compiled for the server too (event handlers that call them are), where
//! nothing calls them.

use leptos::ev::PointerEvent;
use leptos::prelude::window;
use wasm_bindgen::JsCast;

use super::geometry::Point;

/// Moves keyboard focus to the element with `data-testid` = `testid`, so
/// that closing a drawer returns the user where they were. False when no
/// such element is on the page (yet).
pub(crate) fn focus_testid(testid: &str) -> bool {
    let Some(doc) = window().document() else {
        return false;
    };
    let selector = format!("[data-testid=\"{}\"]", testid.replace('"', "\\\""));
    match doc.query_selector(&selector) {
        Ok(Some(el)) => el
            .dyn_into::<web_sys::HtmlElement>()
            .map(|el| el.focus().is_ok())
            .unwrap_or(false),
        _ => false,
    }
}

/// Is an element with this `data-testid` on the page?
pub(crate) fn has_testid(testid: &str) -> bool {
    let selector = format!("[data-testid=\"{}\"]", testid.replace('"', "\\\""));
    window()
        .document()
        .and_then(|d| d.query_selector(&selector).ok().flatten())
        .is_some()
}

/// The root node (system or hub) under a screen point, if any: what a
/// dragged connection would be dropped on. Children count as their root.
pub(crate) fn root_at(client: Point) -> Option<String> {
    let doc = window().document()?;
    let el = doc.element_from_point(client.x as f32, client.y as f32)?;
    let holder = el.closest("[data-root]").ok()??;
    holder.get_attribute("data-root")
}

/// Pointer position on screen.
pub(crate) fn client_point(ev: &PointerEvent) -> Point {
    Point {
        x: f64::from(ev.client_x()),
        y: f64::from(ev.client_y()),
    }
}

/// Keeps pointer events coming to the pressed element while the pointer
/// is outside it (or outside the window).
pub(crate) fn capture_pointer(ev: &PointerEvent) {
    if let Some(el) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
    {
        let _ = el.set_pointer_capture(ev.pointer_id());
    }
}
