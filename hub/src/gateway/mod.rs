//! The A2A gateway: how one system's call reaches another (DESIGN.md §4,
//! "Peer to peer").
//!
//! A call comes in through a *door*: the HTTP binding
//! `POST /gateway/v1/{provider}/{capability}` with the capability input as
//! the JSON body ([`handler`]), the A2A surface, the MCP front, or from
//! inside the hub ([`Gateway::call`]). Whatever way it comes in, it runs
//! the same pipeline, in this order, over the one registry generation it
//! was admitted under:
//!
//! 1. **envelope**: the A2A version is one this build speaks;
//! 2. **auth chain** (callers from outside only): IP allowlist → bearer
//!    token → mTLS slot; only then is a body that is not a valid input
//!    refused (a body too large to read is refused before step 1);
//! 3. **route** ([`Loaded::route`](crate::registry::Loaded::route), the
//!    one decision every door asks): the provider and the capability are
//!    in the registry (`UNKNOWN_PEER`), and a connection rule lets this
//!    caller use this capability of this provider (`NOT_PERMITTED`);
//! 4. **input contract**: the input stays inside the capability's input
//!    schema (no column nobody granted leaves the hub); then the
//!    **quota**: a call over its rule's rate limit or daily quota is
//!    refused (`NOT_PERMITTED`, HTTP 429, `retry_after`), an admitted one
//!    counted ([`crate::quotas`]);
//! 5. **plan**: a plain forward, an at-most-once consult, or a task
//!    submission, by the capability's kind and the envelope;
//! 6. **replay**: a consult that repeats the caller's request id gets the
//!    stored answer and is not executed again;
//! 7. **forward** with the envelope, under the capability's deadline;
//! 8. **response contract**: the answer matches the capability's schema;
//! 9. **store** the answer of a consult, for replay;
//! 10. **answer and audit record**.
//!
//! Every outcome is one [`CallResult`](exchange::reason::CallResult):
//! `connected` or `not_connected` with one reason code (DESIGN.md §2), and
//! every call leaves one record in the hub's audit trail — but a call
//! refused at the door whose credential names no system, which is counted
//! into one summary row per interval (`strangers`).
//!
//! Robustness rules (DESIGN.md §1): nothing here panics on peer input, no
//! call outlives its deadline, and no lock is held across a wait on a peer,
//! so one slow or dead peer cannot delay calls to the others.
//!
//! # Layout
//!
//! [`Gateway`] is the pipeline over its parts; its one `impl` block is in
//! `pipeline`, where every door's method hands the call from part to part.
//! Each part is a value that owns only what it reads:
//!
//! - `call`: the values a call travels as — the [`Incoming`] a door hands
//!   in, the `Call` it is admitted into (caller, provider, capability,
//!   envelope, one registry generation), and the `Done` every step ends
//!   in. Every other room reads these.
//! - `pipeline`: the steps above, shared by every door, and the `Plan`
//!   that decides how a routed call runs. A binding parses its request
//!   into an [`Incoming`] and calls [`Gateway::run`]; the hub's own
//!   callers use [`Gateway::call`].
//! - `admission` (`Admission`, steps 1 to 4: version, auth chain, route,
//!   input contract, quota).
//! - One part per plan: `forward` (`Forwarder`, steps 7 and 8: the one
//!   A2A request to the provider, and what it tells the status board),
//!   `replay` (`Replay`, steps 6 and 9: at most one execution of a consult
//!   per request id, across replicas), `task_submit` (`TaskSubmit`: a
//!   `task` capability's submission under the caller's idempotency key and
//!   the state machine that makes a retry never execute twice), and
//!   `negotiation` (`Turns`: a negotiation turn written to the hub's
//!   negotiation record; the hub negotiating its own contract).
//! - `tasks` (`TaskOps`): the task operations that follow a submission
//!   (get, cancel, list), each on the caller's own tasks; `acceptance`: a
//!   result that waits for its requester — the criteria carried, the
//!   contract checked before the requester is asked, a decision checked
//!   and forwarded.
//! - `mcp` (`Planes`): `tools/list` and `tools/call` at a provider's data
//!   plane, behind the same admission and record.
//! - `record` (`Recorder`, step 10): the audit record committed before the
//!   answer leaves, the task's owner, what the traffic learns (redacted
//!   before it is kept); `strangers`: calls the door refused whose
//!   credential named nobody, counted on `/metrics` and summarised in one
//!   trail row per interval instead of a row each.
//! - `answer`: reading the provider's HTTP answer into a result or a
//!   reason code (no I/O), and the [`ProviderReply`] a door passes on: a
//!   plain message kept as the provider's text, anything else typed;
//!   `client`: the pooled HTTP client.
//! - `http`: the `/gateway/v1/{provider}/{capability}` binding: body limit,
//!   headers and body into an [`Incoming`], the result back into an HTTP
//!   response.
//! - `tests`: the pipeline against fake providers.

use std::sync::Arc;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::health::StatusBoard;
use crate::identity::Identity;
use crate::net::egress::Egress;
use crate::net::tls::client::ProviderTls;
use crate::quotas::Quotas;
use crate::registry::Registry;
use crate::store::idempotency::IdempotencyStore;
use crate::store::negotiations::Negotiations;
use crate::store::task_owners::TaskOwners;
use crate::store::task_records::TaskRecords;
use crate::traffic::Traffic;
use exchange::audit::AuditTrail;

mod acceptance;
mod admission;
mod answer;
mod call;
mod client;
mod forward;
mod http;
pub mod mcp;
mod negotiation;
mod pipeline;
mod push;
mod receipt;
mod record;
mod replay;
pub mod strangers;
mod task_submit;
mod tasks;
#[cfg(test)]
mod tests;

pub use acceptance::criteria_of;
pub use answer::{PassedMessage, ProviderReply, MAX_PEER_DETAIL};
pub use call::{Handled, Incoming, Input, TaskAsk, DEADLINE_KEY};
pub use forward::MAX_ANSWER_BODY;
pub use http::{handler, MAX_REQUEST_BODY};
pub use negotiation::published_columns;
pub use strangers::Front;
pub use task_submit::{task_deadline, CALLER_METADATA, KEY_METADATA};
pub use tasks::{TaskHandled, TaskIncoming, TaskOp, TaskRefusal};

/// Connect timeout of the shared client: never more than a deadline, and
/// the per-call deadline bounds everything anyway.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(1000);

/// Idle connections kept per provider: more than the calls a provider
/// sees at once under load, so a busy provider's connections are reused,
/// not closed and opened again.
const MAX_IDLE_PER_PROVIDER: usize = 256;

/// The gateway: the pipeline over its parts, each owning what it uses.
/// Shared by every door (the bindings, the MCP front, the hub's own
/// callers); built once at start from a [`Wiring`].
pub struct Gateway {
    /// The registry each call takes its one generation from.
    registry: Arc<Registry>,
    /// Version, auth chain, route, input contract, quota.
    admission: admission::Admission,
    /// The provider's leg: one A2A request, its answer read and checked.
    forwarder: Arc<forward::Forwarder>,
    /// At most one execution of a consult per request id.
    replay: replay::Replay,
    /// A task submission under the caller's key.
    submit: task_submit::TaskSubmit,
    /// Task operations on the caller's own tasks.
    tasks: Arc<tasks::TaskOps>,
    /// Negotiation turns written to the hub's record.
    turns: negotiation::Turns,
    /// The MCP leg to providers' data planes.
    planes: mcp::Planes,
    /// The audit record, the task's owner, the traffic, the strangers.
    recorder: record::Recorder,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").finish_non_exhaustive()
    }
}

/// What a gateway is built from: the hub's shared parts and stores, and
/// how it goes out to providers.
pub struct Wiring {
    /// The registry calls are routed by.
    pub registry: Arc<Registry>,
    /// Providers' versions and cards; told what every call came to.
    pub board: Arc<StatusBoard>,
    /// The member issuers' keys, for bearer JWTs.
    pub identity: Arc<Identity>,
    /// What crossed each edge: counts, the inspector, `/metrics`.
    pub traffic: Arc<Traffic>,
    /// The hub's audit trail.
    pub audit: AuditTrail,
    /// Consult answers by request id, for replay.
    pub idempotency: IdempotencyStore,
    /// Which caller created which provider task.
    pub owners: TaskOwners,
    /// Every task submission, by the caller's idempotency key.
    pub records: TaskRecords,
    /// Every negotiation turn that crossed the hub.
    pub negotiations: Negotiations,
    /// This hub process among replicas.
    pub cluster: Cluster,
    /// The counters of limited edges; `None` admits every call uncounted.
    pub quotas: Option<Quotas>,
    /// The egress path forwards and data-plane sessions go out by.
    pub egress: Egress,
    /// What the providers' client trusts and presents over TLS.
    pub provider_tls: Option<ProviderTls>,
    /// The keys the hub signs each call's receipt with.
    pub keys: Arc<crate::signing::HubKeys>,
    /// The push relay the push-config operations are kept by.
    pub push: Arc<crate::push::PushRelay>,
}

/// Why the gateway could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The data planes' HTTP client could not be configured.
    #[error("building the data planes' HTTP client: {0}")]
    Planes(#[from] reqwest13::Error),
}
