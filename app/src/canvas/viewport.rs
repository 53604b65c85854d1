//! Pan and zoom: the one transform applied to the whole world.
//!
//! The camera is plain data so that zoom steps, zooming around the cursor
//! and fit-to-view can be tested without a browser.

use super::geometry::{Point, Rect};

/// Zoom steps the toolbar buttons move through, in percent.
pub const ZOOM_STEPS: [u32; 7] = [50, 67, 80, 100, 125, 150, 200];
/// The smallest zoom the wheel or fit-to-view may reach (a large topology
/// must fit on one screen).
pub const MIN_ZOOM: f64 = 0.1;
/// The largest zoom anything may reach.
pub const MAX_ZOOM: f64 = 2.0;
/// Free space kept around the graph by fit-to-view, in screen pixels.
const FIT_PADDING: f64 = 48.0;
/// The band at the top of the canvas the toolbar floats in: fit-to-view
/// keeps the graph below it, so no card or label starts under a button.
const FIT_TOP: f64 = 72.0;

/// Size of the visible canvas area, in screen pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// Pan offset (screen pixels) and zoom factor of the world.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Horizontal offset of the world's origin on screen.
    pub x: f64,
    /// Vertical offset of the world's origin on screen.
    pub y: f64,
    /// Scale factor (1.0 = 100%).
    pub zoom: f64,
}

impl Camera {
    /// Where every page starts, on the server and in the browser alike: the
    /// server cannot know the window, so fitting happens only on request.
    pub const INITIAL: Camera = Camera {
        x: 48.0,
        y: 64.0,
        zoom: 1.0,
    };

    /// The CSS transform of the world element.
    pub fn transform(self) -> String {
        let mut s = super::css::translate(
            Point {
                x: self.x,
                y: self.y,
            },
            " scale(",
        );
        super::css::push_fixed(&mut s, self.zoom, 4);
        s.push(')');
        s
    }

    /// The zoom as the toolbar shows it.
    pub fn percent(self) -> i64 {
        (self.zoom * 100.0).round() as i64
    }

    /// Zooms to `zoom` keeping the world point under `anchor` (screen
    /// coordinates) where it is: the cursor for the wheel, the centre of
    /// the canvas for the buttons.
    pub fn zoom_at(self, zoom: f64, anchor: Point) -> Camera {
        let zoom = zoom.clamp(MIN_ZOOM, MAX_ZOOM);
        let ratio = zoom / self.zoom;
        Camera {
            x: anchor.x - (anchor.x - self.x) * ratio,
            y: anchor.y - (anchor.y - self.y) * ratio,
            zoom,
        }
    }

    /// The next toolbar step above the current zoom, if any.
    pub fn step_in(self) -> Option<f64> {
        let pct = self.zoom * 100.0;
        ZOOM_STEPS
            .iter()
            .find(|s| f64::from(**s) > pct + 0.5)
            .map(|s| f64::from(*s) / 100.0)
    }

    /// The next toolbar step below the current zoom, if any.
    pub fn step_out(self) -> Option<f64> {
        let pct = self.zoom * 100.0;
        ZOOM_STEPS
            .iter()
            .rev()
            .find(|s| f64::from(**s) < pct - 0.5)
            .map(|s| f64::from(*s) / 100.0)
    }

    /// The camera showing all of `bounds` centred in `size` below the
    /// toolbar's band, never zoomed in beyond 100% (a small graph stays
    /// readable rather than huge) nor out beyond [`MIN_ZOOM`] (React Flow's
    /// `fitView` clamps the same way, to its own bounds). The first view of
    /// the canvas and the fit button both use it.
    pub fn fit(bounds: Rect, size: Size) -> Camera {
        if bounds.w <= 0.0 || bounds.h <= 0.0 || size.w <= 0.0 || size.h <= 0.0 {
            return Camera::INITIAL;
        }
        let top = FIT_TOP.max(FIT_PADDING);
        let avail_w = (size.w - 2.0 * FIT_PADDING).max(1.0);
        let avail_h = (size.h - top - FIT_PADDING).max(1.0);
        let zoom = (avail_w / bounds.w)
            .min(avail_h / bounds.h)
            .clamp(MIN_ZOOM, 1.0);
        Camera {
            x: (size.w - bounds.w * zoom) / 2.0 - bounds.x * zoom,
            y: top + (avail_h - bounds.h * zoom) / 2.0 - bounds.y * zoom,
            zoom,
        }
    }

    /// The camera as a person's browser keeps it between visits
    /// (`x y zoom`, [`Self::from_saved`] reads it back).
    pub fn to_saved(self) -> String {
        let mut s = String::new();
        super::css::push_fixed(&mut s, self.x, 1);
        s.push(' ');
        super::css::push_fixed(&mut s, self.y, 1);
        s.push(' ');
        super::css::push_fixed(&mut s, self.zoom, 4);
        s
    }

    /// A camera kept by [`Self::to_saved`]; `None` for anything else (the
    /// storage is the browser's, and anyone may have written there). The
    /// zoom is brought within bounds.
    pub fn from_saved(saved: &str) -> Option<Camera> {
        let mut parts = saved.split(' ').map(str::parse::<f64>);
        let (Some(Ok(x)), Some(Ok(y)), Some(Ok(zoom)), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let finite = x.is_finite() && y.is_finite() && zoom.is_finite() && zoom > 0.0;
        finite.then(|| Camera {
            x,
            y,
            zoom: zoom.clamp(MIN_ZOOM, MAX_ZOOM),
        })
    }

    /// Does the graph, as currently placed, spill out of the canvas? The
    /// minimap appears only then.
    pub fn overflows(self, bounds: Rect, size: Size) -> bool {
        let left = self.x + bounds.x * self.zoom;
        let top = self.y + bounds.y * self.zoom;
        let right = left + bounds.w * self.zoom;
        let bottom = top + bounds.h * self.zoom;
        left < 0.0 || top < 0.0 || right > size.w || bottom > size.h
    }

    /// The world rectangle currently visible.
    pub fn visible(self, size: Size) -> Rect {
        Rect {
            x: -self.x / self.zoom,
            y: -self.y / self.zoom,
            w: size.w / self.zoom,
            h: size.h / self.zoom,
        }
    }

    /// Pans so that the world point `p` is in the middle of the canvas.
    pub fn centred_on(self, p: Point, size: Size) -> Camera {
        Camera {
            x: size.w / 2.0 - p.x * self.zoom,
            y: size.h / 2.0 - p.y * self.zoom,
            zoom: self.zoom,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buttons_walk_the_steps() {
        let c = Camera::INITIAL;
        assert_eq!(c.percent(), 100);
        assert_eq!(c.step_in(), Some(1.25));
        assert_eq!(c.step_out(), Some(0.8));
        let top = Camera { zoom: 2.0, ..c };
        assert_eq!(top.step_in(), None);
        let between = Camera { zoom: 0.9, ..c };
        assert_eq!(between.step_in(), Some(1.0));
        assert_eq!(between.step_out(), Some(0.8));
        let tiny = Camera { zoom: 0.2, ..c };
        assert_eq!(tiny.step_out(), None);
        assert_eq!(tiny.step_in(), Some(0.5));
    }

    #[test]
    fn zoom_keeps_the_anchor_still() {
        let c = Camera::INITIAL;
        let anchor = Point { x: 300.0, y: 200.0 };
        let world = |c: Camera| ((anchor.x - c.x) / c.zoom, (anchor.y - c.y) / c.zoom);
        let z = c.zoom_at(1.5, anchor);
        let (a, b) = (world(c), world(z));
        assert!((a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9);
        assert_eq!(c.zoom_at(50.0, anchor).zoom, MAX_ZOOM);
    }

    #[test]
    fn fit_shows_everything() {
        let bounds = Rect {
            x: 0.0,
            y: 0.0,
            w: 4000.0,
            h: 1000.0,
        };
        let size = Size {
            w: 1000.0,
            h: 600.0,
        };
        let c = Camera::fit(bounds, size);
        assert!(!c.overflows(bounds, size));
        assert!(c.zoom < 0.25);
        let small = Rect {
            w: 100.0,
            h: 100.0,
            ..bounds
        };
        assert_eq!(Camera::fit(small, size).zoom, 1.0);
    }

    #[test]
    fn fit_keeps_the_graph_below_the_toolbar() {
        let size = Size {
            w: 1200.0,
            h: 700.0,
        };
        for bounds in [
            Rect {
                x: -300.0,
                y: 40.0,
                w: 1500.0,
                h: 600.0,
            },
            Rect {
                x: 0.0,
                y: 0.0,
                w: 200.0,
                h: 900.0,
            },
        ] {
            let c = Camera::fit(bounds, size);
            let top = c.y + bounds.y * c.zoom;
            let bottom = top + bounds.h * c.zoom;
            assert!(top >= FIT_TOP - 1e-6, "top {top} under the toolbar");
            assert!(bottom <= size.h - FIT_PADDING + 1e-6, "bottom {bottom}");
            let left = c.x + bounds.x * c.zoom;
            assert!(left >= FIT_PADDING - 1e-6 && left + bounds.w * c.zoom <= size.w);
        }
    }

    #[test]
    fn a_saved_camera_reads_back_and_nothing_else_does() {
        let c = Camera {
            x: -120.5,
            y: 33.0,
            zoom: 0.75,
        };
        assert_eq!(Camera::from_saved(&c.to_saved()), Some(c));
        for junk in [
            "", "1 2", "1 2 3 4", "a b c", "1 2 NaN", "1 2 0", "1 inf 1", "1 2 -1",
        ] {
            assert_eq!(Camera::from_saved(junk), None, "{junk:?}");
        }
        let far_in = Camera::from_saved("0 0 50").map(|c| c.zoom);
        assert_eq!(far_in, Some(MAX_ZOOM));
    }
}
