//! Onboarding: how a company joins the exchange, or leaves it, from the
//! canvas — and who may call whom, edited there too. The topology file
//! stays the single source of truth: every change here is an edit of it,
//! written by `registry::write` (locked, against the version the operator
//! saw, validated by the loader, atomic, reloaded).
//!
//! | room | what is decided there |
//! |---|---|
//! | [`fetch`] | reading a would-be member: its card and `/health` identity, with limits, out by the egress path (`crate::net::egress`, `WS_ONBOARD_NETWORKS`) |
//! | [`proposal`] | a card turned into a proposed topology section |
//! | [`section`] | the section's shape, as the operator edits and saves it |
//! | [`changes`] | the edits of joining, leaving, and a consumer added to or taken off a rule |
//!
//! The routes are `bff::systems`; every write there is an audited action
//! of the logged-in operator.

pub mod changes;
pub mod fetch;
pub mod proposal;
pub mod section;
