//! The canvas's components, one concern a file. They render the page and
//! scene state and trigger commands; they fetch nothing themselves (the
//! calls to the hub are `commands`'), and none imports `scene` or `page`,
//! which compose them.
//!
//! * [`node`]: a root's card and its child nodes.
//! * [`edge`]: edge paths, labels and traffic lines, the arrowheads.
//! * [`observed`]: observed edges (traffic without an established edge):
//!   their arcs, labels and traffic lines.
//! * [`drag`]: the overlay a gesture draws on (a dragged root's edges, a
//!   dragged connection).
//! * [`cover`]: which edge labels lie under the canvas's controls for the
//!   camera (hidden while they do).
//! * [`far`]: the graph far out (blocks and grouped edge paths).
//! * [`connector`]: the connect handle, the dragged line, the chooser.
//! * [`drawer`]: the side drawer of a node or edge, built from
//!   [`panels`] (query and consult forms and answers), [`contract`] (a
//!   data-share's contracts and negotiation transcripts), [`audit`],
//!   [`metrics`] (whether work got done on an edge or a system),
//!   [`inspector`] (an edge's last exchanges: envelope and redacted
//!   payloads) and [`interpret`] (the data interpreter's sentence about a
//!   node).
//! * [`suggestions`]: the connection recommender's button and panel.
//! * [`onboard`]: "Add a system" — a company onboarded from its card.
//! * [`membership`]: a system's drawer section: the rules it may call,
//!   the ones it could join, its removal from the exchange.
//! * [`transcript`]: a run of the hub's orchestrator, read-only (shown by
//!   [`suggestions`] and [`interpret`]).
//! * [`minimap`]: the overview, once the graph outgrows the canvas.
//! * [`toolbar`], [`announcer`], [`topbar`], [`messages`]: the page's
//!   zoom controls, live region, top-bar parts and load errors.

pub(crate) mod announcer;
pub(crate) mod audit;
pub(crate) mod connector;
pub(crate) mod contract;
pub(crate) mod cover;
pub(crate) mod drag;
pub(crate) mod drawer;
pub(crate) mod edge;
pub(crate) mod far;
pub(crate) mod inspector;
pub(crate) mod interpret;
pub(crate) mod membership;
pub(crate) mod messages;
pub(crate) mod metrics;
pub(crate) mod minimap;
pub(crate) mod node;
pub(crate) mod observed;
pub(crate) mod onboard;
pub(crate) mod panels;
pub(crate) mod suggestions;
pub(crate) mod toolbar;
pub(crate) mod topbar;
pub(crate) mod transcript;
