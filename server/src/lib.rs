//! The Wall Street hub, as a library so that the `hub` binary stays thin
//! and the integration tests reach every module.
//!
//! The hub links the shared `exchange` crate (what both sides speak:
//! envelope, reason codes, wire, audit trail, inbox, untrusted text) and
//! the browser crate `app` (pages and the DTOs a browser may see). It links
//! no peer code: the reference peer is its own package (`server/peer`), so
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
//! | [`negotiations`] | every negotiation turn that crossed the hub: what a drawer's transcript and contract are rebuilt from |
//! | [`task_owners`] | whose task is it: a task id is usable only by the caller that created it |
//! | [`task_records`] | every task the hub forwarded, its state and deadline; the unique key that makes a retry safe |
//! | [`idempotency`] | a repeated consult id answers from the store, never runs twice |
//! | [`health`] | who is alive: health probes and the status board |
//! | [`traffic`] | whether work got done: per-edge counts, the envelope inspector, `/metrics` |
//! | [`events`] | what changed, pushed live to open canvases |
//! | [`edges`] | the connections made on the canvas, and node positions |
//! | [`redaction`] | the only road from a peer's answer to a browser |
//! | [`budget_plans`] | the hub's own local write when its operator approves a proposal |
//! | [`edge_calls`] | the hub's own calls along an edge, as the caller: a drawer's query or question and an agent's read-only tool share them |
//! | [`agents`] | the hub's own agents: recommender, interpreter, orchestrator, their config and tools |
//! | [`onboarding`] | how a company joins or leaves the exchange from the canvas: its card read with limits, a proposed section, the edits of the topology file |
//! | [`bff`] | the `/api` a browser calls, and the views it gets |
//! | [`api`] | the one error shape of every `/api` route |
//! | [`ui_auth`] | who may use the canvas and what each may do: people and roles, login (a password, or a member's own identity provider) and its limits, sessions, CSRF, security headers |
//! | [`web`] | the server-rendered Leptos pages |
//! | [`store`] | where the hub's state lives: a SQLite file, or the PostgreSQL database replicas share; its migrations |
//! | [`cluster`] | several hub processes as one hub: liveness, notifications, one prober |
//! | [`hub`] | wiring it all into one process |
//! | [`egress`] | where the hub may connect, for what: members, identity providers, would-be members; addresses checked at connect time, no redirects, bodies and time capped |
//! | [`networks`] | the networks an operator lists in a variable: trusted balancers, `/metrics` scrapers, each egress purpose's private reach |
//! | [`listen`] | how connections are accepted: header timeout, connection caps, TLS; who is at the other end ([`listen::Peer`]) |
//! | [`tls`] | the hub's TLS: its listener's configuration, the client certificate a member presents, `hub certs` |
//! | [`machine`] | which paths are for programs, and that they answer JSON, never the login page; the hub's own public addresses (what its cards name and its signatures bind to) |

pub mod agents;
pub mod api;
pub mod auth;
pub mod bff;
pub mod bridge;
pub mod budget_plans;
pub mod cluster;
pub mod contract;
pub mod dataplane;
pub mod edge_calls;
pub mod edges;
pub mod egress;
pub mod events;
pub mod gateway;
pub mod health;
pub mod hub;
pub mod idempotency;
pub mod identity;
pub mod listen;
pub mod machine;
pub mod negotiations;
pub mod networks;
pub mod onboarding;
pub mod quotas;
pub mod redaction;
pub mod registry;
pub mod signing;
pub mod store;
pub mod surface;
pub mod task_owners;
pub mod task_records;
pub mod tls;
pub mod traffic;
pub mod ui_auth;
pub mod web;
