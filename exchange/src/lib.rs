//! What the hub and every peer speak (DESIGN.md §3, "what both sides
//! speak"): one small library both sides link, so the two ends of a wire
//! agree by construction — and nothing else. It knows no system's tables,
//! no registry, no browser: the hub (`server`) and the reference peer
//! (`peer`) each link it, and neither links the other.
//!
//! Layout, in the order a call meets it:
//!
//! | module | what it decides |
//! |---|---|
//! | [`reason`] | the nine reason codes, `NotConnected`, the `CallResult` a caller gets |
//! | [`id`] | the one id rule for systems, capabilities, agents and peers |
//! | [`text`] | clipping text another system wrote before an operator sees it |
//! | [`envelope`] | what travels with every call: `A2A-Version`, `X-Request-Id`, `traceparent` |
//! | [`wire`] | how a capability call rides on A2A `SendMessage` |
//! | [`negotiation`] | the message two agents exchange while they agree a data contract, and its one validator |
//! | [`negotiator`] | the consumer's deterministic agent: propose, accept a covering counter, one corrective retry |
//! | [`health`] | the identity a reference peer reports, and where |
//! | [`http`] | the outbound HTTP helpers: bounded reads, transport failures as reason codes |
//! | [`audit`] | each system's own append-only audit trail, hash-chained with signed checkpoints: verified, and exported for a counterparty (`audit::chain`, `checkpoint`, `anchor`, `verify`, `export`) |
//! | [`jws`] | JOSE: which JWKS keys verify what, and agent-card signatures (JWS over the card's JCS form) |
//! | [`receipt`] | the hub's signed receipt of one exchange: its claims, its digests, verifying it offline |
//! | [`acceptance`] | results the requester accepts: the criteria, the pending result, the decision (A2A's acceptance extension) |
//! | [`actions`] | the proposed actions a receiver knows, and the local-effects trait it implements |
//! | [`inbox`] | the approval inbox every receiver keeps in its own store |
//! | [`untrusted`] | free text from another system: data, never instructions |
//! | [`db`] | opening a system's own store: a SQLite file, or PostgreSQL for hub replicas; the schema as migrations per engine |
//! | [`located`] | config-file problems located at file:line:column:field |
//! | [`schema_doc`] | a config file's reference page, written from its JSON Schema |
//! | [`model`] | the one model client every agent uses: a tier, a deadline, JSON replies, provider quirks |
//! | [`prompts`] | the prompt library: system prompts by language and key, from files |
//! | [`telemetry`] | the log lines both binaries print, and OpenTelemetry spans whose trace id is the envelope's (feature `otel`) |
//! | [`testing`] | stores for tests on both engines: a throwaway PostgreSQL cluster, fresh databases (the tests' only) |
//!
//! Without the default `runtime` feature only [`reason`], [`id`],
//! [`text`] and [`negotiation`] compile: the browser crate may use them on
//! wasm.

pub mod id;
pub mod negotiation;
pub mod reason;
pub mod text;

#[cfg(feature = "runtime")]
pub mod acceptance;
#[cfg(feature = "runtime")]
pub mod actions;
#[cfg(feature = "runtime")]
pub mod audit;
#[cfg(feature = "runtime")]
pub mod db;
#[cfg(feature = "runtime")]
pub mod envelope;
#[cfg(feature = "runtime")]
pub mod health;
#[cfg(feature = "runtime")]
pub mod http;
#[cfg(feature = "runtime")]
pub mod inbox;
#[cfg(feature = "runtime")]
pub mod jws;
#[cfg(feature = "runtime")]
pub mod located;
#[cfg(feature = "runtime")]
pub mod model;
#[cfg(feature = "runtime")]
pub mod negotiator;
#[cfg(feature = "runtime")]
pub mod prompts;
#[cfg(feature = "runtime")]
pub mod receipt;
#[cfg(feature = "runtime")]
pub mod schema_doc;
#[cfg(feature = "otel")]
pub mod telemetry;
#[cfg(feature = "runtime")]
pub mod testing;
#[cfg(feature = "runtime")]
pub mod untrusted;
#[cfg(feature = "runtime")]
pub mod wire;
