//! The one model client every agent built from this repository uses
//! (DESIGN.md §5: "an LLM tier is any OpenAI-compatible endpoint named in
//! config").
//!
//! A **tier** ([`Tier`]) is an endpoint, a model and the *name* of the env
//! var that holds its key; which agent uses which tier is the agent
//! config's business (the hub's `config/agents.yaml`), never code. This
//! module only knows how to talk to one:
//!
//! * [`types`]: the vocabulary of a chat call ([`Tier`], [`Message`],
//!   [`ChatRequest`], [`ModelError`]), shared by the client and the
//!   adapter below.
//! * [`client`]: `POST {base_url}/chat/completions` over reqwest with a
//!   per-call deadline and a bounded retry policy (transport failures,
//!   429 and 5xx; never a 4xx, never past the deadline).
//! * [`quirks`]: the one adapter where a provider's deviations from the
//!   OpenAI shape are absorbed (real ones, listed there), so nothing
//!   above it has a special case.
//! * [`reply`]: JSON-only replies: the object extracted from the text,
//!   validated against the caller's schema, with exactly one corrective
//!   retry that quotes what was wrong; then a clean failure.
//!
//! What a model writes is itself untrusted text: [`reply::JsonReply`]
//! carries a value the caller must validate again against its own rules
//! (the registry, the tool set) before anything acts on it. Peer text
//! reaches a prompt only through [`crate::untrusted::llm_envelope`].

pub mod client;
pub mod quirks;
pub mod reply;
pub mod types;

pub use client::ModelClient;
pub use reply::{json_reply, JsonReply, ReplyError};
pub use types::{ChatRequest, Message, ModelError, Role, Tier};
