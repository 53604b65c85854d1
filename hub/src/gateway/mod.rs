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
//! - `call`: the values a call travels as — the [`Incoming`] a door hands
//!   in, the `Call` it is admitted into (caller, provider, capability,
//!   envelope, one registry generation), and the `Done` every step ends
//!   in. Every other room reads these; none of them reads another's.
//! - `pipeline`: the steps above, shared by every door, and the `Plan`
//!   that decides how a routed call runs. A binding parses its request
//!   into an [`Incoming`] and calls [`Gateway::run`]; the hub's own
//!   callers use [`Gateway::call`].
//! - One file per plan: `forward` (step 7 and 8, the one A2A
//!   `SendMessage` to the provider, and what the call tells the status
//!   board), `replay` (steps 6 and 9: at most one execution of a consult
//!   per request id, across replicas), `task_submit` (a `task`
//!   capability's submission under the caller's idempotency key and the
//!   state machine that makes a retry never execute twice), and
//!   `negotiation` (a negotiation turn written to the hub's negotiation
//!   record; the hub negotiating its own contract).
//! - `tasks`: the task operations that follow a submission (get, cancel,
//!   list), each on the caller's own tasks.
//! - `mcp`: the MCP door, `tools/list` and `tools/call` of a provider's
//!   data plane through the same admission, route and audit record.
//! - `strangers`: calls the door refused whose credential named nobody,
//!   counted on `/metrics` and summarised in one trail row per interval
//!   instead of a row each.
//! - `answer`: reading the provider's HTTP answer into a result or a
//!   reason code (no I/O), and the [`ProviderReply`] a door passes on: a
//!   plain message kept as the provider's text, anything else typed;
//!   `client`: the pooled HTTP client.
//! - `observe`: what each finished exchange tells the traffic (counts,
//!   the inspector), redacted before it is kept.
//! - `http`: the `/gateway/v1/{provider}/{capability}` binding: body limit,
//!   headers and body into an [`Incoming`], the result back into an HTTP
//!   response.
//! - `tests`: the pipeline against fake providers.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::AuthChain;
use crate::cluster::Cluster;
use crate::health::StatusBoard;
use crate::identity::Identity;
use crate::net::egress::Egress;
use crate::quotas::Quotas;
use crate::registry::Registry;
use crate::signing::HubKeys;
use crate::store::idempotency::IdempotencyStore;
use crate::store::negotiations::Negotiations;
use crate::store::task_owners::TaskOwners;
use crate::store::task_records::TaskRecords;
use crate::traffic::Traffic;
use exchange::audit::AuditTrail;

mod answer;
mod call;
mod client;
mod forward;
mod http;
pub mod mcp;
mod negotiation;
mod observe;
mod pipeline;
mod replay;
pub mod strangers;
mod task_submit;
mod tasks;
#[cfg(test)]
mod tests;

pub use answer::{PassedMessage, ProviderReply, MAX_PEER_DETAIL};
pub use call::{Handled, Incoming, Input, TaskAsk, DEADLINE_KEY};
pub use forward::MAX_ANSWER_BODY;
pub use http::{handler, MAX_REQUEST_BODY};
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

/// The gateway: shared by the HTTP handler and the hub's own callers.
pub struct Gateway {
    registry: Arc<Registry>,
    board: Arc<StatusBoard>,
    idempotency: IdempotencyStore,
    audit: AuditTrail,
    auth: AuthChain,
    /// Which caller created which provider task.
    tasks: TaskOwners,
    /// Every task submission, by the caller's idempotency key.
    records: TaskRecords,
    /// What crossed each edge: counts, the inspector, `/metrics`.
    traffic: Arc<Traffic>,
    /// Every negotiation turn that crossed the hub.
    negotiations: Negotiations,
    /// The pooled HTTP client for providers.
    providers: client::Providers,
    /// The egress path the providers' client and the planes' go out by.
    egress: Egress,
    /// What the providers' client trusts and presents over TLS.
    provider_tls: Option<crate::net::tls::client::ProviderTls>,
    /// One MCP session per provider's data plane, shared by every call.
    planes: crate::dataplane::Sessions,
    /// This hub process among replicas: whose claims are whose, and
    /// whether their processes still run.
    cluster: Cluster,
    /// The hub as a resource server of its members' identity providers.
    identity: Arc<Identity>,
    /// The counters of limited edges; `None` (a gateway built without
    /// [`Gateway::with_quotas`]) admits every call uncounted.
    quotas: Option<Quotas>,
    /// The keys the hub signs its cards with (set once the store is open).
    keys: std::sync::OnceLock<Arc<HubKeys>>,
    /// Calls refused before any caller was known, this interval.
    strangers: strangers::Strangers,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("auth", &self.auth)
            .finish_non_exhaustive()
    }
}

/// Why the gateway could not be built.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The HTTP client could not be configured.
    #[error("building the gateway's HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    /// The data planes' HTTP client could not be configured.
    #[error("building the data planes' HTTP client: {0}")]
    Planes(#[from] reqwest13::Error),
}

impl Gateway {
    /// A gateway over the given registry, status board and hub stores, with
    /// the standard auth chain and one pooled HTTP client for all peers,
    /// going out by the default egress policy ([`Gateway::with_egress`]
    /// gives it the hub's).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        registry: Arc<Registry>,
        board: Arc<StatusBoard>,
        idempotency: IdempotencyStore,
        audit: AuditTrail,
        tasks: TaskOwners,
        records: TaskRecords,
        negotiations: Negotiations,
        cluster: Cluster,
    ) -> Result<Self, GatewayError> {
        let egress = Egress::default();
        Ok(Self {
            registry,
            board,
            idempotency,
            audit,
            auth: AuthChain::standard(),
            tasks,
            records,
            traffic: Arc::new(Traffic::new()),
            negotiations,
            providers: client::Providers::new(
                CONNECT_TIMEOUT,
                MAX_IDLE_PER_PROVIDER,
                None,
                &egress,
            ),
            planes: crate::dataplane::Sessions::new(&egress)?,
            identity: Arc::new(Identity::new(&egress)),
            egress,
            provider_tls: None,
            cluster,
            quotas: None,
            keys: std::sync::OnceLock::new(),
            strangers: strangers::Strangers::default(),
        })
    }

    /// The same gateway, counting calls along limited edges in `quotas`
    /// (the hub's store, shared by its replicas).
    pub fn with_quotas(mut self, quotas: Quotas) -> Self {
        self.quotas = Some(quotas);
        self
    }

    /// The same gateway, reaching an `https://` provider with `tls` (the
    /// CAs the hub trusts, the client certificate it presents).
    pub fn with_provider_tls(mut self, tls: Option<&crate::net::tls::client::ProviderTls>) -> Self {
        if tls.is_some() {
            self.provider_tls = tls.cloned();
            self.providers = self.providers_client();
        }
        self
    }

    /// The same gateway, going out by `egress` (its forwards, its data
    /// plane sessions, its reads of member issuers' keys).
    pub fn with_egress(mut self, egress: &Egress) -> Result<Self, GatewayError> {
        self.egress = egress.clone();
        self.providers = self.providers_client();
        self.planes = crate::dataplane::Sessions::new(egress)?;
        self.identity = Arc::new(Identity::new(egress));
        Ok(self)
    }

    fn providers_client(&self) -> client::Providers {
        client::Providers::new(
            CONNECT_TIMEOUT,
            MAX_IDLE_PER_PROVIDER,
            self.provider_tls.as_ref(),
            &self.egress,
        )
    }

    /// The hub's signing keys, once set.
    pub fn keys(&self) -> Option<&Arc<HubKeys>> {
        self.keys.get()
    }

    /// Gives the gateway the hub's signing keys (once; later calls are
    /// ignored).
    pub fn set_keys(&self, keys: Arc<HubKeys>) {
        let _ = self.keys.set(keys);
    }

    /// The member issuers' keys and the hub's public base URL.
    pub fn identity(&self) -> &Arc<Identity> {
        &self.identity
    }

    /// What crossed each edge.
    pub fn traffic(&self) -> &Arc<Traffic> {
        &self.traffic
    }

    /// The hub's record of the tasks it forwarded.
    pub fn records(&self) -> &TaskRecords {
        &self.records
    }

    /// The negotiation record this gateway writes.
    pub fn negotiations(&self) -> &Negotiations {
        &self.negotiations
    }

    /// The audit trail this gateway writes (the hub's).
    pub fn audit(&self) -> &AuditTrail {
        &self.audit
    }

    /// The registry this gateway routes by.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The status board this gateway feeds (and reads providers' cards
    /// from).
    pub fn board(&self) -> &StatusBoard {
        &self.board
    }

    /// The auth chain a call meets, for a request that is not a call (a
    /// provider's extended card): the same layers, the same refusals.
    pub fn authenticate(
        &self,
        cx: &crate::auth::AuthContext<'_>,
    ) -> Result<(), exchange::reason::NotConnected> {
        self.auth.check(cx)
    }
}
