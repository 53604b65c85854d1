//! Where each edge's label goes, and how much of its text it shows: every
//! drawn label keeps off every root's block (card and children) and off
//! every other label, and a label with no room is cut or left out.
//!
//! A label sits on its own edge's path: its centre is a point of the line
//! it names, so a label is never read as another edge's. Each path offers
//! a fixed list of spots ([`PathShape`]): an established route the middle
//! of its straight last stretch first (where it always sat), then the rest
//! of that stretch, then points along its curve from the provider's end
//! back; an observed arc its apex first, then points further down either
//! side. Labels are placed greedily, one at a time in a fixed order
//! (shorter paths first, which have fewer spots to choose from, then by
//! key): each takes the first spot where its whole text fits; failing
//! that, the first spot where a shorter cut fits (its prefix and "…"), down
//! to three characters; failing that, it is not drawn ([`LabelText::Hidden`];
//! its full text stays in its edge's accessible name and drawer). The
//! boxes already placed and the blocks sit in a spatial grid, so a test
//! costs a few rectangle checks and a thousand labels place in a few ms.
//!
//! A label's box is computed, never measured: from its text's characters
//! and the stylesheet's sizes (`style/main.css`: `.edge-label`,
//! `.observed-label`, `.observed-reason`, `.edge-traffic`), which this file
//! repeats in world pixels, with the same upper bound of a monospace
//! advance the capability chips use (`chips`). So the server and the
//! browser place the same labels (hydration finds what the server drew),
//! and a large graph costs no layout read. The box holds the traffic line
//! drawn under a label (its text is fitted to the box:
//! [`Placed::line_cells`]) and room for the " ⚠" a degraded edge's label
//! adds (health changes live; a label must not grow into its neighbour).
//!
//! Pure math, like the rest of `graph`; the screen half (which labels lie
//! under the canvas's fixed controls for a camera, [`under_controls`]) is
//! here too, and the browser only feeds it the controls' rectangles.

use std::collections::HashMap;

use super::chips::{cut_to_cells, text_cells, ELLIPSIS, MONO_ADVANCE, REM};
use crate::canvas::geometry::{Point, Rect};
use crate::canvas::viewport::Camera;

/// Upper bound of the `normal` line height of the monospace fonts, in em
/// (DejaVu Sans Mono and Menlo 1.16, SF Mono 1.19, Liberation Mono 1.13).
const LINE_HEIGHT: f64 = 1.25;
/// What a degraded established edge's label adds after its text
/// (`.edge-label.degraded::after`).
const DEGRADED_MARK: &str = " ⚠";
/// Room between a refused observed edge's capability and its reason code
/// (`.observed-reason`'s margin).
const BADGE_GAP: f64 = 0.35 * REM;

/// How far below its label's centre a traffic line starts (about half a
/// label's height, plus a gap).
pub const TRAFFIC_OFFSET: f64 = 11.0;
/// A traffic line's font size (`.edge-traffic`, `.6rem`).
const TRAFFIC_FONT: f64 = 0.6 * REM;
/// Upper bound of one character's advance in a traffic line.
const TRAFFIC_CHAR_W: f64 = MONO_ADVANCE * TRAFFIC_FONT;
/// A traffic line's width besides its text: padding (`.3rem` a side), the
/// last call's dot (`.45rem`) and the gap after it (`.25rem`).
const TRAFFIC_CHROME: f64 = 2.0 * 0.3 * REM + 0.45 * REM + 0.25 * REM;
/// A traffic line's height.
const TRAFFIC_H: f64 = TRAFFIC_FONT * LINE_HEIGHT;
/// The fewest characters a traffic line is given room for: "no traffic",
/// or a count of calls ("12,345/min").
const TRAFFIC_MIN_CELLS: usize = 10;

/// Room kept between two labels, and between a label and a block.
const GAP: f64 = 2.0;
/// The fewest cells of text a cut label keeps before its ellipsis.
const MIN_PREFIX_CELLS: usize = 3;
/// How many points of an established route's curve are spots.
const CURVE_STEPS: usize = 12;
/// The spots of an established route's straight run, as fractions of it
/// from the provider's card (0) to where the curve joins it (1).
const RUN_SPOTS: [f64; 3] = [0.5, 0.75, 1.0];
/// The spots of an observed arc: its apex, then further down either side.
const ARC_SPOTS: [f64; 11] = [
    0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.18, 0.82, 0.1, 0.9,
];

/// How a label is styled: an established edge's (`.edge-label`) or an
/// observed edge's (`.observed-label`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// An established edge's label: the edge's button.
    Established,
    /// An observed edge's label: rounded, smaller.
    Observed,
}

impl Look {
    fn font(self) -> f64 {
        match self {
            Look::Established => 0.72 * REM,
            Look::Observed => 0.66 * REM,
        }
    }

    fn char_w(self) -> f64 {
        MONO_ADVANCE * self.font()
    }

    /// Horizontal chrome: padding (`.4rem` a side) and border (a task
    /// edge's double border is 3 px).
    fn chrome_x(self) -> f64 {
        let border = match self {
            Look::Established => 3.0,
            Look::Observed => 1.0,
        };
        2.0 * 0.4 * REM + 2.0 * border
    }

    fn height(self) -> f64 {
        let (pad_y, border) = match self {
            Look::Established => (0.12 * REM, 3.0),
            Look::Observed => (0.05 * REM, 1.0),
        };
        self.font() * LINE_HEIGHT + 2.0 * pad_y + 2.0 * border
    }

    /// Cells reserved after the text for what the stylesheet may add.
    fn mark_cells(self) -> usize {
        match self {
            Look::Established => text_cells(DEGRADED_MARK),
            Look::Observed => 0,
        }
    }

    /// The width of a label of this look reading `cells` cells of text,
    /// then `badge`.
    fn width(self, cells: usize, badge: Option<&str>) -> f64 {
        let mut w = (cells + self.mark_cells()) as f64 * self.char_w() + self.chrome_x();
        if let Some(b) = badge {
            w += BADGE_GAP + text_cells(b) as f64 * self.char_w();
        }
        w
    }
}

/// The shape of a drawn edge path: what label spots are points of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PathShape {
    /// An established edge's route: a cubic curve from `start` (the
    /// consumer's port) to `run`, then straight on to `end` (the
    /// provider's port).
    Route {
        /// Where the line leaves the consumer's card.
        start: Point,
        /// The curve's first control point.
        c1: Point,
        /// The curve's second control point.
        c2: Point,
        /// Where the curve ends and the straight run begins.
        run: Point,
        /// Where the line enters the provider's card.
        end: Point,
    },
    /// An observed edge's arc: a quadratic curve from `start` to `end`
    /// bent by `control`.
    Arc {
        /// Where the arc leaves the consumer's card.
        start: Point,
        /// The curve's control point.
        control: Point,
        /// Where the arc enters the provider's card.
        end: Point,
    },
}

/// Where on its path a label sits: what a drag keeps while the path moves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spot {
    /// On an established route's straight run: 0 at the provider's card,
    /// 1 where the curve joins it.
    Run(f64),
    /// On the curve, at this parameter (0 at the consumer's end).
    Curve(f64),
}

fn lerp(a: Point, b: Point, t: f64) -> Point {
    Point {
        x: a.x + (b.x - a.x) * t,
        y: a.y + (b.y - a.y) * t,
    }
}

fn dist(a: Point, b: Point) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    (dx * dx + dy * dy).sqrt()
}

impl PathShape {
    /// The point of the path at `spot`. An arc has no straight run: a run
    /// spot reads as the arc's point that far from its end.
    pub fn at(self, spot: Spot) -> Point {
        match (self, spot) {
            (PathShape::Route { run, end, .. }, Spot::Run(f)) => lerp(end, run, f),
            (
                PathShape::Route {
                    start, c1, c2, run, ..
                },
                Spot::Curve(t),
            ) => {
                let u = 1.0 - t;
                let (a, b, c, d) = (u * u * u, 3.0 * u * u * t, 3.0 * u * t * t, t * t * t);
                Point {
                    x: a * start.x + b * c1.x + c * c2.x + d * run.x,
                    y: a * start.y + b * c1.y + c * c2.y + d * run.y,
                }
            }
            (PathShape::Arc { .. }, Spot::Run(f)) => self.at(Spot::Curve(1.0 - f)),
            (
                PathShape::Arc {
                    start,
                    control,
                    end,
                },
                Spot::Curve(t),
            ) => {
                let u = 1.0 - t;
                let (a, b, c) = (u * u, 2.0 * u * t, t * t);
                Point {
                    x: a * start.x + b * control.x + c * end.x,
                    y: a * start.y + b * control.y + c * end.y,
                }
            }
        }
    }

    /// The spots a label of this path may take, best first.
    pub fn spots(self) -> Vec<Spot> {
        match self {
            PathShape::Route { .. } => RUN_SPOTS
                .iter()
                .map(|&f| Spot::Run(f))
                .chain((1..CURVE_STEPS).map(|k| Spot::Curve(1.0 - k as f64 / CURVE_STEPS as f64)))
                .collect(),
            PathShape::Arc { .. } => ARC_SPOTS.iter().map(|&t| Spot::Curve(t)).collect(),
        }
    }

    /// About how long the path is: between its chord and its control
    /// polygon (the curve's length lies between the two). Only orders
    /// the labels, so plain arithmetic (the same in wasm) is enough.
    pub fn length(self) -> f64 {
        match self {
            PathShape::Route {
                start,
                c1,
                c2,
                run,
                end,
            } => {
                let polygon = dist(start, c1) + dist(c1, c2) + dist(c2, run);
                (dist(start, run) + polygon) / 2.0 + dist(run, end)
            }
            PathShape::Arc {
                start,
                control,
                end,
            } => (dist(start, end) + dist(start, control) + dist(control, end)) / 2.0,
        }
    }
}

/// How much of its text a label shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelText {
    /// All of it.
    Whole,
    /// This prefix of it, ending in "…".
    Short(String),
    /// None: no room even for a short stub. The label is not drawn (its
    /// edge keeps its full name for keyboards and screen readers).
    Hidden,
}

impl LabelText {
    /// The word tests and styles read (`data-label`).
    pub fn word(&self) -> &'static str {
        match self {
            LabelText::Whole => "whole",
            LabelText::Short(_) => "short",
            LabelText::Hidden => "none",
        }
    }

    /// What the label reads, for a label whose full text is `full` (the
    /// full text when hidden: that is what a keyboard's focus shows).
    pub fn shown<'a>(&'a self, full: &'a str) -> &'a str {
        match self {
            LabelText::Short(s) => s,
            LabelText::Whole | LabelText::Hidden => full,
        }
    }
}

/// One label to place.
#[derive(Debug, Clone, Copy)]
pub struct LabelInput<'a> {
    /// Orders labels of paths of the same length (the edge's id).
    pub key: &'a str,
    /// The path the label sits on.
    pub shape: PathShape,
    /// Its full text (the capability's id).
    pub text: &'a str,
    /// What follows the text and is never cut (a refused observed edge's
    /// reason code).
    pub badge: Option<&'a str>,
    /// Its style, which sets its sizes.
    pub look: Look,
    /// Whether a traffic line is drawn under it.
    pub traffic: bool,
}

/// Where a label went and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The label's centre (a point of its path).
    pub centre: Point,
    /// Where on its path that is.
    pub spot: Spot,
    /// How much of its text it shows.
    pub text: LabelText,
    /// Its box (label and traffic line), when drawn.
    pub rect: Option<Rect>,
    /// How many characters its traffic line may take, within its box.
    pub line_cells: usize,
}

impl Placed {
    /// A label drawn whole at `spot` of `shape`, with no box: one nothing
    /// placed yet (a route before placement).
    pub fn unplaced(shape: PathShape, spot: Spot) -> Placed {
        Placed {
            centre: shape.at(spot),
            spot,
            text: LabelText::Whole,
            rect: None,
            line_cells: TRAFFIC_MIN_CELLS,
        }
    }

    /// This label on `shape`, its path drawn again (mid-drag): the same
    /// spot, text and size, its box moved with its centre. Nothing else
    /// is placed again until the drop.
    pub fn follow(&self, shape: PathShape) -> Placed {
        let centre = shape.at(self.spot);
        let (dx, dy) = (centre.x - self.centre.x, centre.y - self.centre.y);
        Placed {
            centre,
            rect: self.rect.map(|r| Rect {
                x: r.x + dx,
                y: r.y + dy,
                ..r
            }),
            ..self.clone()
        }
    }

    fn hidden(shape: PathShape, spot: Spot) -> Placed {
        Placed {
            centre: shape.at(spot),
            spot,
            text: LabelText::Hidden,
            rect: None,
            line_cells: 0,
        }
    }
}

/// A label box's extent around its centre.
#[derive(Debug, Clone, Copy)]
struct Frame {
    w: f64,
    above: f64,
    below: f64,
}

impl Frame {
    /// The box of a label of `look`, `label_w` wide, with its traffic line
    /// when `traffic`.
    fn of(look: Look, label_w: f64, traffic: bool) -> Frame {
        let half = look.height() / 2.0;
        if traffic {
            let line_w = TRAFFIC_MIN_CELLS as f64 * TRAFFIC_CHAR_W + TRAFFIC_CHROME;
            Frame {
                w: label_w.max(line_w),
                above: half,
                below: half.max(TRAFFIC_OFFSET + TRAFFIC_H),
            }
        } else {
            Frame {
                w: label_w,
                above: half,
                below: half,
            }
        }
    }

    fn at(self, c: Point) -> Rect {
        Rect {
            x: c.x - self.w / 2.0,
            y: c.y - self.above,
            w: self.w,
            h: self.above + self.below,
        }
    }

    /// How many characters of traffic fit in this box's width.
    fn line_cells(self) -> usize {
        let cells = ((self.w - TRAFFIC_CHROME) / TRAFFIC_CHAR_W + 1e-6).floor();
        if cells > 0.0 {
            cells as usize
        } else {
            0
        }
    }
}

/// What a label may show, most first: its whole text, then shorter cuts
/// (each narrower than the one before), down to [`MIN_PREFIX_CELLS`].
fn texts(l: &LabelInput<'_>) -> Vec<(LabelText, Frame)> {
    let full = text_cells(l.text);
    let whole = Frame::of(l.look, l.look.width(full, l.badge), l.traffic);
    let mut out = vec![(LabelText::Whole, whole)];
    let mut last_w = whole.w;
    let stub = MIN_PREFIX_CELLS + text_cells(&ELLIPSIS.to_string());
    for budget in [full * 3 / 4, full / 2, stub] {
        if budget >= full || budget < stub {
            continue;
        }
        let Some(cut) = cut_to_cells(l.text, budget) else {
            continue;
        };
        let cells = text_cells(&cut);
        if cells < stub {
            continue;
        }
        let frame = Frame::of(l.look, l.look.width(cells, l.badge), l.traffic);
        if frame.w < last_w - 0.5 {
            last_w = frame.w;
            out.push((LabelText::Short(cut), frame));
        }
    }
    out
}

/// Side of a grid cell, in world pixels: about a label's width.
const CELL: f64 = 128.0;
/// A box spanning more cells than this either way is kept aside and
/// checked against every query (none is, unless positions are absurd).
const MAX_SPAN: f64 = 64.0;

/// The boxes placed so far, by the grid cells they touch.
#[derive(Default)]
struct Grid {
    cells: HashMap<(i32, i32), Vec<Rect>>,
    wide: Vec<Rect>,
}

impl Grid {
    /// The cells `r` touches, unless it is too big or not a number.
    fn span(r: Rect) -> Option<(i32, i32, i32, i32)> {
        let (x0, y0) = ((r.x / CELL).floor(), (r.y / CELL).floor());
        let (x1, y1) = (((r.x + r.w) / CELL).floor(), ((r.y + r.h) / CELL).floor());
        let ok = [x0, y0, x1, y1].iter().all(|v| v.is_finite())
            && x1 - x0 <= MAX_SPAN
            && y1 - y0 <= MAX_SPAN;
        ok.then_some((x0 as i32, y0 as i32, x1 as i32, y1 as i32))
    }

    fn insert(&mut self, r: Rect) {
        match Self::span(r) {
            Some((x0, y0, x1, y1)) => {
                for gx in x0..=x1 {
                    for gy in y0..=y1 {
                        self.cells.entry((gx, gy)).or_default().push(r);
                    }
                }
            }
            None => self.wide.push(r),
        }
    }

    /// Does `r` meet anything placed?
    fn hits(&self, r: Rect) -> bool {
        if self.wide.iter().any(|w| w.intersects(r)) {
            return true;
        }
        let Some((x0, y0, x1, y1)) = Self::span(r) else {
            // Not a number, or absurdly big: never free.
            return true;
        };
        (x0..=x1).any(|gx| {
            (y0..=y1).any(|gy| {
                self.cells
                    .get(&(gx, gy))
                    .is_some_and(|list| list.iter().any(|b| b.intersects(r)))
            })
        })
    }
}

/// Places `labels` (see the module's notes), in their order: none meets a
/// block in `blocks`, a box in `taken` (labels placed before, kept as
/// they are) or another, each with [`GAP`] to spare.
pub fn place_labels(labels: &[LabelInput<'_>], blocks: &[Rect], taken: &[Rect]) -> Vec<Placed> {
    let mut grid = Grid::default();
    for r in blocks.iter().chain(taken) {
        grid.insert(*r);
    }
    let lengths: Vec<f64> = labels.iter().map(|l| l.shape.length()).collect();
    let mut order: Vec<usize> = (0..labels.len()).collect();
    order.sort_by(|&a, &b| {
        lengths[a]
            .total_cmp(&lengths[b])
            .then_with(|| labels[a].key.cmp(labels[b].key))
            .then(a.cmp(&b))
    });
    let mut out: Vec<Placed> = labels
        .iter()
        .map(|l| Placed::hidden(l.shape, first_spot(l.shape)))
        .collect();
    for i in order {
        let Some(l) = labels.get(i) else {
            continue;
        };
        let placed = place_one(l, &grid);
        if let Some(r) = placed.rect {
            grid.insert(r);
        }
        if let Some(slot) = out.get_mut(i) {
            *slot = placed;
        }
    }
    out
}

fn first_spot(shape: PathShape) -> Spot {
    shape.spots().first().copied().unwrap_or(Spot::Curve(0.5))
}

/// The first (text, spot) where `l` fits, most text first.
fn place_one(l: &LabelInput<'_>, grid: &Grid) -> Placed {
    let spots: Vec<(Spot, Point)> = l
        .shape
        .spots()
        .into_iter()
        .map(|s| (s, l.shape.at(s)))
        .filter(|(_, p)| p.x.is_finite() && p.y.is_finite())
        .collect();
    for (text, frame) in texts(l) {
        for &(spot, centre) in &spots {
            let rect = frame.at(centre);
            if !grid.hits(rect.grown(GAP)) {
                return Placed {
                    centre,
                    spot,
                    text,
                    rect: Some(rect),
                    line_cells: frame.line_cells(),
                };
            }
        }
    }
    Placed::hidden(l.shape, first_spot(l.shape))
}

/// Where the world box `r` is on screen under `camera`, in canvas pixels
/// (from the canvas's top-left corner, like the camera's offset).
pub fn screen_rect(r: Rect, camera: Camera) -> Rect {
    Rect {
        x: camera.x + r.x * camera.zoom,
        y: camera.y + r.y * camera.zoom,
        w: r.w * camera.zoom,
        h: r.h * camera.zoom,
    }
}

/// Which of `boxes` (label boxes in the world; `None` for a label not
/// drawn) lie, on screen under `camera`, beneath one of `controls` (the
/// canvas's fixed controls, in canvas pixels): those are not drawn, so
/// nothing shows half under a control.
pub fn under_controls(
    boxes: impl IntoIterator<Item = Option<Rect>>,
    camera: Camera,
    controls: &[Rect],
) -> Vec<bool> {
    boxes
        .into_iter()
        .map(|b| {
            b.is_some_and(|b| {
                let s = screen_rect(b, camera);
                controls.iter().any(|c| c.intersects(s))
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "placement_tests.rs"]
mod tests;
