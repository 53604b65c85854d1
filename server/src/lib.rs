//! The Wall Street hub and its reference peer, as a library so that the
//! binaries stay thin and the integration tests can reach every module.
//!
//! One module per concept of DESIGN.md: the registry decides who exists and
//! who may talk to whom, the auth chain who is calling, the envelope what
//! travels with a call, the gateway how a call is forwarded, the audit trail
//! what happened, the prober who is alive, the BFF what a browser may see,
//! the UI login who may see it.

pub mod actions;
pub mod api;
pub mod audit;
pub mod auth;
pub mod bff;
pub mod contract;
pub mod db;
pub mod edges;
pub mod envelope;
pub mod events;
pub mod gateway;
pub mod hub;
pub mod idempotency;
pub mod inbox;
pub mod peer;
pub mod prober;
pub mod reason;
pub mod redaction;
pub mod registry;
pub mod ui_auth;
pub mod untrusted;
pub mod web;
pub mod wire;
