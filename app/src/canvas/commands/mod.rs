//! The canvas's commands: everything that acts on behalf of the user or
//! the hub, and every call to the hub.
//!
//! * [`edges`]: connect (drop, chooser, create) and remove edges.
//! * [`positions`]: record and save where roots are moved.
//! * [`camera`]: the first view (the person's own, kept by their browser,
//!   or the graph fitted to the window) and keeping it.
//! * [`drawer`]: close the drawer, run a query or a consult, read a
//!   node's audit trail.
//! * [`contracts`]: a data-share edge's contracts view, and the hub's
//!   own negotiation.
//! * [`agents`]: the hub's own agents (DESIGN.md §5): which are offered,
//!   the recommender's suggestions and accepting one, the interpreter's
//!   sentence about a node.
//! * [`topology`]: the page's loads (the topology, the inbox count).
//! * [`traffic`]: every edge's recent traffic (DESIGN.md §6), and the
//!   drawers' metrics and envelope inspector, kept fresh by traffic
//!   events.
//! * [`live`]: the hub's Server-Sent Events applied to the page state.
//! * [`systems`]: the exchange itself changed — a system onboarded from
//!   its card, removed, a consumer added to a rule or taken off.
//!
//! Components trigger these; they in turn use the page state, the
//! interaction layer and the pure modules, never a component. Only this
//! layer (and `source`, the server function) reaches the hub.

pub(crate) mod agents;
pub(crate) mod camera;
pub(crate) mod contracts;
pub(crate) mod drawer;
pub(crate) mod edges;
pub(crate) mod live;
pub(crate) mod positions;
pub(crate) mod systems;
pub(crate) mod topology;
pub(crate) mod traffic;
