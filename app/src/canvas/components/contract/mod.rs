//! "Data contracts" in a data-share (or negotiation) edge's drawer: for the
//! edge's consumer and for the hub, the contract each holds with the
//! provider, where its contract work stands, and the transcript of its
//! newest negotiation; and, for the hub, a form to have the hub negotiate
//! its own (DESIGN.md §4, "Open a data-share edge").
//!
//! The panel is a log reader: it shows only the
//! messages the hub recorded, in order (never a placeholder timeline,
//! never a message that did not happen), and the run state as the hub
//! derived it from them (it is not stored, here or there). The one thing
//! it says by itself is that the hub's own negotiation is on its way while
//! its POST runs. Peer words (purposes, rationales) are untrusted text,
//! shown inert and marked "from \<peer\>, unverified". A member's
//! negotiation is its own to start: the panel prints the `peer negotiate`
//! command for it, the hub never commands a peer.
//!
//! Its two calls to the hub (read the view, negotiate) are commands, in
//! [`crate::canvas::commands::contracts`].
//!
//! The view is loaded when the drawer opens, and again after each query
//! answer of the edge (a read may have changed the state) and after a
//! negotiation that failed; a negotiation that ran shows the view its POST
//! returned.
//!
//! # Rooms
//!
//! Each part is a small component of its props (and of the [`Directory`]
//! in context); the pure part sits apart:
//!
//! * `words`: defaults, run-state words, test ids, the queryable columns
//!   and a member's command (pure, tested as functions).
//! * `context`: the [`Directory`] (names and columns of the drawn
//!   registry view) and the `PartyCtx` each party section gets.
//! * `panel`: [`ContractPanel`], the section: loads the view, shows it.
//! * `party`: the parties of a loaded view, one section each.
//! * `badge`: a party's run state.
//! * `summary`: a party's contract, or what would start one.
//! * `form`: the hub's negotiation form and its drafts.
//! * `transcript`: the newest negotiation's turns and messages.
//! * `columns`, `peer_text`: column chips and peer words, shared by the
//!   summary and the transcript.
//!
//! [`Directory`]: context::Directory

mod badge;
mod columns;
mod context;
mod form;
mod panel;
mod party;
mod peer_text;
mod summary;
mod transcript;
mod words;

pub(crate) use self::panel::ContractPanel;

#[cfg(all(test, feature = "ssr"))]
#[path = "render_tests.rs"]
mod render_tests;
