//! The canvas geometry of a topology: a deterministic layout and the edge
//! routes.
//!
//! Pure functions of a [`TopologyView`](crate::dto::TopologyView) and
//! node positions, with no reactive or browser code, so the server and the
//! browser compute the same numbers (hydration never sees a different
//! picture) and tests can pin them down.
//!
//! Only *root* nodes (systems and the hub) are positioned. Agents and
//! datasources hang under their system at fixed offsets, so dragging a system
//! moves its children with it and the layout never has to place them.
//!
//! # Rooms
//!
//! * `layout`: the graph model ([`GraphModel`]: roots, children, the
//!   edges that can be drawn), the card sizes, the column layout, and the
//!   positions the hub serves ([`served_positions`]).
//! * `routes`: each edge's path, label spot and culling box
//!   ([`EdgeGeom`]), for the committed positions and during a drag. It
//!   reads the model and the card sizes; the layout knows nothing of
//!   routes.
//! * `observed`: the routes of observed edges ([`ObservedGeom`]), arcs
//!   drawn apart from the established routes, and their lanes.
//! * `chips`: how many capability chips fit a card's row ([`fit_chips`]:
//!   the ones drawn whole, then a `+N` counting the rest).
//!
//! The points and rectangles both speak are the canvas's world geometry
//! ([`crate::canvas::geometry`], pure math, which the CSS printer uses
//! too), re-exported here with everything the rooms export, so
//! `graph::Point` and `graph::GraphModel` read as before.

mod chips;
mod layout;
mod observed;
mod routes;

pub use self::chips::{fit_chips, more_label, ChipFit};
pub use self::layout::{
    served_positions, GraphModel, CHILD_GAP, CHILD_H, CHILD_INDENT, CHILD_TOP, COL_GAP,
    MAX_COLUMN_H, ROOT_H, ROOT_W, ROW_GAP,
};
pub use self::observed::{lanes, observed_route, ObservedGeom};
pub use self::routes::{EdgeGeom, Side, LABEL_RUN};
pub use super::geometry::{Point, Rect};

/// The demo topology other modules' tests draw (`tests::demo`).
#[cfg(test)]
pub(crate) use self::layout::tests;
