//! The Wall Street hub, as a library so that the `hub` binary stays thin
//! and the integration tests reach every module.
//!
//! The hub links the shared `exchange` crate (what both sides speak:
//! envelope, reason codes, wire, audit trail, inbox, untrusted text) and
//! the browser crate `app` (pages and the DTOs a browser may see). It links
//! no peer code: the reference peer is its own package (`peer`), so
//! nothing here can know a peer's tables.
//!
//! Layout — one module per concept of DESIGN.md, in the order a call
//! meets them:
//!
//! | module | where it is decided |
//! |---|---|
//! | [`registry`] | who exists and who may talk to whom (the topology file, reloadable) |
//! | [`contract`] | what a capability's input and answer must be, and what of it a browser may see |
//! | [`auth`] | who is calling (IP allowlist → bearer token → mTLS slot) |
//! | [`identity`] | a member's access token from its own identity provider: issuers' keys, token checks, RFC 9728 metadata |
//! | [`dataplane`] | the hub as an MCP client of a provider's data plane (the gateway's forwards, the prober's identity check) |
//! | [`quotas`] | how much a consumer may call along an edge: rate limits and daily quotas, counted in the store |
//! | [`gateway`] | how one system's call reaches another: the exchange pipeline |
//! | [`signing`] | the hub's own signing keys: stored, rotated, published as a JWKS; what its cards and its trail's checkpoints are signed with |
//! | [`surface`] | the hub as an A2A server: per-provider agent cards, JSON-RPC and HTTP+JSON |
//! | [`bridge`] | A2A v0.3 ⇄ v1.0: methods, params, results, events and cards translated both ways, for callers and providers that speak 0.3 (pure) |
//! | [`health`] | who is alive: health probes and the status board |
//! | [`push`] | the push relay: callers' webhooks for their tasks, the hub's own webhook at the provider, signed deliveries with retries and dead letters |
//! | [`traffic`] | whether work got done: per-edge counts, the envelope inspector, `/metrics` |
//! | [`events`] | what changed, pushed live to open canvases |
//! | [`redaction`] | the only road from a peer's answer to a browser |
//! | [`edge_calls`] | the hub's own calls along an edge, as the caller: a drawer's query or question and an agent's read-only tool share them |
//! | [`agents`] | the hub's own agents: recommender, interpreter, orchestrator, their config and tools |
//! | [`onboarding`] | how a company joins or leaves the exchange from the canvas: its card read with limits, a proposed section, the edits of the topology file |
//! | [`api`] | the one error shape of every `/api` route |
//! | [`web`] | the browser's side: the server-rendered pages, the `/api` views (`web::bff`), people, roles and login (`web::ui_auth`) |
//! | [`store`] | where the hub's state lives (a SQLite file, or the PostgreSQL database replicas share; its migrations), and one room per table: edges and positions, idempotency, task records and owners, negotiation turns, budget plans |
//! | [`cluster`] | several hub processes as one hub: liveness, notifications, one prober |
//! | [`net`] | network plumbing: the listener and TLS, the egress policy, operator-listed networks, the machine door and the hub's own public addresses |
//! | [`hub`] | wiring it all into one process |

pub mod agents;
pub mod api;
pub mod auth;
pub mod bridge;
pub mod cluster;
pub mod contract;
pub mod dataplane;
pub mod edge_calls;
pub mod events;
pub mod gateway;
pub mod health;
pub mod hub;
pub mod identity;
pub mod net;
pub mod onboarding;
pub mod push;
pub mod quotas;
pub mod redaction;
pub mod registry;
pub mod signing;
pub mod store;
pub mod surface;
pub mod traffic;
pub mod web;
