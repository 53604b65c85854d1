//! The canvas geometry of a topology: a deterministic layout and the edge
//! routes.
//!
//! Pure functions of a [`TopologyView`](crate::dto::TopologyView) and
//! node positions, with no reactive or browser code, so the server and the
//! browser compute the same numbers (hydration never sees a different
//! picture) and tests can pin them down. The layered layout is the
//! server's alone: it travels in the view (`layout`), and both sides start
//! from it.
//!
//! Only *root* nodes (systems and the hub) are positioned. Agents and
//! datasources hang under their system at fixed offsets, so dragging a system
//! moves its children with it and the layout never has to place them.
//!
//! # Rooms
//!
//! * `layout`: the graph model ([`GraphModel`]: roots, children, the
//!   edges that can be drawn), the card sizes, where each root starts
//!   (the server's layout, else the column layout) and the positions the
//!   hub serves ([`served_positions`]).
//! * `layered` (server only, feature `ssr`): the layered layout the
//!   server sends with every view ([`fill_layout`]), around the roots
//!   the operator pinned, and the crossing count it is judged by.
//! * `routes`: each edge's path, label and culling box ([`EdgeGeom`]),
//!   for the committed positions and during a drag. It reads the model
//!   and the card sizes; the layout knows nothing of routes.
//! * `observed`: the routes of observed edges ([`ObservedGeom`]), arcs
//!   drawn apart from the established routes, and their lanes.
//! * `placement`: where every edge label goes and how much of its text
//!   it shows ([`place_labels`]: whole, cut, or not drawn, never on a
//!   card or another label), and which labels lie under the canvas's
//!   fixed controls for a camera ([`under_controls`]). Both kinds of
//!   routes call it.
//! * `chips`: how many capability chips fit a card's row ([`fit_chips`]:
//!   the ones drawn whole, then a `+N` counting the rest), and the
//!   character arithmetic chips and labels measure text with.
//!
//! The points and rectangles both speak are the canvas's world geometry
//! ([`crate::canvas::geometry`], pure math, which the CSS printer uses
//! too), re-exported here with everything the rooms export, so
//! `graph::Point` and `graph::GraphModel` read as before.

mod chips;
#[cfg(feature = "ssr")]
mod layered;
mod layout;
mod observed;
mod placement;
mod routes;

pub use self::chips::{cut_to_cells, fit_chips, more_label, text_cells, ChipFit};
#[cfg(feature = "ssr")]
pub use self::layered::{crossings, fill_layout, layered_layout, MAX_LAYERED_W};
pub use self::layout::{
    served_positions, GraphModel, CHILD_GAP, CHILD_H, CHILD_INDENT, CHILD_TOP, COL_GAP,
    MAX_COLUMN_H, ROOT_H, ROOT_W, ROW_GAP,
};
pub use self::observed::{lanes, observed_route, ObservedEdge, ObservedGeom};
pub use self::placement::{
    place_labels, screen_rect, under_controls, LabelInput, LabelText, Look, PathShape, Placed,
    Spot, TRAFFIC_OFFSET,
};
pub use self::routes::{EdgeGeom, Side, LABEL_RUN};
pub use super::geometry::{Point, Rect};

/// The demo topology other modules' tests draw (`tests::demo`).
#[cfg(test)]
pub(crate) use self::layout::tests;
