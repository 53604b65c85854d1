//! The canvas page: the ecosystem drawn as nodes and edges.
//!
//! The topology comes from one server function ([`get_topology`]), read
//! through a resource, so the first HTML already contains the graph and the
//! browser hydrates it. After hydration the live channel patches statuses
//! and asks for refetches; pan, zoom, drags and drawers are browser-only
//! state layered on top.
//!
//! The page is server-rendered with the topology in it (the resource runs
//! the server function in-process). Later loads, asked for by the live
//! channel or after a change made here, are plain `GET /api/topology`
//! calls from the browser; a load that draws the same graph as the one on
//! screen only updates the health bookkeeping, so nothing is redrawn (and
//! nobody loses focus) for nothing.
//!
//! # Layers
//!
//! Cut as xyflow's `packages/system` is: each layer imports only the
//! layers below it, so there is no import cycle among these modules.
//!
//! 1. **Pure** (no reactive or browser code; tested without a browser):
//!    `geometry` (world points and rectangles: the floor the others
//!    stand on), `css` (numbers printed for CSS and SVG), `graph` (layout,
//!    edge routes and where their labels go, served positions),
//!    `viewport` (camera math), `cull` (the level of detail for a zoom,
//!    the part of a large graph worth drawing), `connect` (legal
//!    connections from the rules), `health` (how served and live statuses
//!    combine), `labels` (words for kinds),
//!    `traffic` (words and numbers for what crossed an edge: labels,
//!    metrics, the envelope inspector's summaries), `observed` (which
//!    observed edges the canvas knows and draws), `payload` (the packed
//!    form the first load travels in inside the server's HTML).
//!    Beside them, two leaves: `dom` (stateless browser helpers: the
//!    element under the pointer, pointer capture, focus by test id) and
//!    `source` (the server function and what the hub provides for it).
//! 2. **State**: `state` ([`CanvasCtx`](state::CanvasCtx), page-wide, kept
//!    across loads), then `interaction`: `interaction::scene_ctx`
//!    (`SceneCtx`, the state of one drawn graph, and its gestures' data)
//!    and `interaction::controller` (pan and zoom, node drag and nudge,
//!    connection drag). Controllers report a finished gesture; they never
//!    call the hub.
//! 3. **Commands** (`commands`): what acts for the user or the hub, and
//!    every call to the hub: `commands::edges` (connect, chooser, create,
//!    remove), `commands::positions` (record and save moves),
//!    `commands::drawer` (close, query, consult, audit trail),
//!    `commands::contracts` (a data-share's contracts, the hub's
//!    negotiation), `commands::agents` (the hub's own agents: which are
//!    offered, suggestions, interpretations),
//!    `commands::topology` (loads: topology refetches, inbox count),
//!    `commands::traffic` (every edge's recent traffic; the drawers'
//!    metrics and inspector, refreshed by traffic events at most once a
//!    second), `commands::live` (Server-Sent Events).
//! 4. **Components** (`components`, one concern a file): `node`, `edge`
//!    (paths, labels, drag layers, arrowheads), `cover` (labels under the
//!    fixed controls), `connector` (handle,
//!    dragged line, chooser), `drawer`, `panels` (query and consult),
//!    `contract`, `audit`, `metrics`, `inspector` (the last exchanges'
//!    envelopes and redacted payloads), `interpret`, `suggestions`,
//!    `transcript` (a run
//!    of the hub's orchestrator), `minimap`, `toolbar`, `announcer`,
//!    `topbar` (Inbox link, live indicator), `messages` (load and reload
//!    errors). Components render state and trigger commands; they fetch
//!    nothing themselves.
//! 5. **Composition**: `scene` (builds a `SceneCtx`, wires gestures to
//!    commands, lays out the components) and `page` (the route:
//!    [`CanvasPage`]).
//!
//! This file only declares the modules and re-exports what the rest of
//! the crate and the hub use.

mod commands;
mod components;
pub mod connect;
pub mod css;
pub mod cull;
mod dom;
pub mod geometry;
pub mod graph;
pub mod health;
mod interaction;
pub mod labels;
pub mod observed;
mod page;
pub mod payload;
mod scene;
mod source;
pub mod state;
pub mod traffic;
pub mod viewport;

pub use self::page::CanvasPage;
pub use self::source::*;
