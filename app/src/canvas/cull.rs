//! What is worth drawing (the canvas at 500 nodes; DESIGN.md §6,
//! the canvas): the level of detail for a zoom, and the part of a large
//! graph near the screen.
//!
//! Pure functions of the camera and the canvas's size, like `viewport`:
//! the server renders the first page with the same numbers the browser
//! hydrates it with ([`ASSUMED_VIEWPORT`] until the browser has measured
//! the canvas), and tests pin them down.
//!
//! * Far out (zoom below [`FAR_ZOOM`]) every root is drawn as a block and
//!   the edges as a few long paths, one per style: cards, labels and chips
//!   are unreadable there, and a thousand of each made fit-to-view slow.
//! * Close up, a graph of more than [`CULL_MIN_ROOTS`] roots draws only
//!   the nodes and edges whose box meets [`window`]: the screen, a margin
//!   around it, snapped outwards to a coarse grid so that panning changes
//!   the drawn set now and then rather than on every frame.

use super::geometry::Rect;
use super::viewport::{Camera, Size};

/// Below this zoom the canvas draws blocks instead of cards and no edge
/// labels.
pub const FAR_ZOOM: f64 = 0.5;

/// Graphs with fewer roots than this are drawn whole at every zoom (all
/// their nodes stay in the DOM, in the tab order).
pub const CULL_MIN_ROOTS: usize = 40;

/// The canvas size assumed until the browser has measured it: the server
/// renders the part of the graph this much of the screen shows, and the
/// browser hydrates the same part before it knows better.
pub const ASSUMED_VIEWPORT: Size = Size {
    w: 1920.0,
    h: 1080.0,
};

/// Margin drawn around the screen, in screen pixels: what a short pan
/// brings into view is already there.
const MARGIN: f64 = 320.0;

/// Grid the drawn window snaps to, in screen pixels.
const CELL: f64 = 640.0;

/// Is `camera` far out (blocks, no labels)?
pub fn is_far(camera: Camera) -> bool {
    camera.zoom < FAR_ZOOM
}

/// The world rectangle worth drawing with `camera` on a canvas of `size`:
/// the visible part, grown by a margin and snapped outwards to the grid.
pub fn window(camera: Camera, size: Size) -> Rect {
    let vis = camera.visible(size);
    let m = MARGIN / camera.zoom;
    let cell = CELL / camera.zoom;
    let x0 = ((vis.x - m) / cell).floor() * cell;
    let y0 = ((vis.y - m) / cell).floor() * cell;
    let x1 = ((vis.x + vis.w + m) / cell).ceil() * cell;
    let y1 = ((vis.y + vis.h + m) / cell).ceil() * cell;
    Rect {
        x: x0,
        y: y0,
        w: x1 - x0,
        h: y1 - y0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_covers_the_screen_and_moves_in_steps() {
        let size = Size {
            w: 1440.0,
            h: 900.0,
        };
        let cam = Camera::INITIAL;
        let w = window(cam, size);
        let vis = cam.visible(size);
        assert!(w.x <= vis.x - MARGIN && w.y <= vis.y - MARGIN);
        assert!(w.x + w.w >= vis.x + vis.w + MARGIN && w.y + w.h >= vis.y + vis.h + MARGIN);
        // A few pixels of pan keep the same window.
        let nudged = Camera {
            x: cam.x + 5.0,
            y: cam.y - 3.0,
            ..cam
        };
        assert_eq!(window(nudged, size), w);
        // Zoomed out, the window is bigger in world units.
        let out = Camera { zoom: 0.5, ..cam };
        assert!(window(out, size).w > w.w);
    }

    #[test]
    fn far_below_half() {
        assert!(!is_far(Camera::INITIAL));
        assert!(is_far(Camera {
            zoom: 0.49,
            ..Camera::INITIAL
        }));
        assert!(!is_far(Camera {
            zoom: FAR_ZOOM,
            ..Camera::INITIAL
        }));
    }
}
