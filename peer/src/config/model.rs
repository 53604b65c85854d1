//! The peer file's shape, as serde reads it (`deny_unknown_fields`
//! throughout): [`PeerConfig`] and its sections, their defaults and
//! bounds, and the accessors the rest of the peer reads them through. What
//! the values mean is checked after serde accepted the shape
//! (`super::validate`, run by [`super::load`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;

/// The whole peer file.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PeerConfig {
    /// Stable id, the same as in the hub's topology file (`vendorcorp`).
    pub system: String,
    /// Display name, also the agent card's provider organisation.
    pub name: String,
    /// One sentence for the agent card; a generated one when absent.
    #[serde(default)]
    pub description: Option<String>,
    /// Where the A2A server listens (`127.0.0.1:3101`).
    pub listen: String,
    /// Serve the A2A server (and `/health`, the card) over TLS on `listen`
    /// instead of plain HTTP, asking the hub for its client certificate
    /// when `client_ca` is set. Absent: plain HTTP. The MCP data plane
    /// (`mcp`) stays plain HTTP either way.
    #[serde(default)]
    pub tls: Option<ServeTlsConfig>,
    /// The base URL advertised in the agent card when the peer sits behind
    /// a proxy; `http://<listen>` when absent (`https://<listen>` with
    /// `tls`).
    #[serde(default)]
    pub public_url: Option<String>,
    /// Name of the env var holding this peer's bearer token.
    pub token_env: String,
    /// Base URL of the hub, used when this peer calls others (`peer call`).
    pub hub_url: String,
    /// TLS towards the hub when `hub_url` is `https://`: the CA the hub's
    /// certificate is checked against, and the client certificate this
    /// peer presents (a hub that registers its `mtls` asks for one).
    /// Absent: the system's roots, no client certificate.
    #[serde(default)]
    pub hub_tls: Option<HubTlsConfig>,
    /// Get the bearer token for the hub from this member's own OpenID
    /// provider (OAuth 2.0 client credentials) instead of `token_env`.
    /// Absent: the static token in `token_env`.
    #[serde(default)]
    pub hub_oidc: Option<HubOidcConfig>,
    /// The peer's own SQLite file (dataset, audit trail, approval inbox),
    /// relative to the working directory.
    pub database: PathBuf,
    /// What data this peer owns.
    pub dataset: DatasetConfig,
    /// Capabilities this peer provides.
    pub skills: Vec<SkillConfig>,
    /// Capability ids it may call through the hub (informational: the hub's
    /// rules decide).
    #[serde(default)]
    pub consumes: Vec<String>,
    /// The agents this system runs (informational, shown in the card).
    #[serde(default)]
    pub agents: Vec<AgentConfig>,
    /// The MCP data plane (`peer mcp`), if this peer runs one: its own
    /// process, its own port, the same store. Absent: no data plane.
    #[serde(default)]
    pub mcp: Option<McpConfig>,
    /// A model tier for this peer's negotiation agent; without it the
    /// deterministic agent drafts every reply.
    #[serde(default)]
    pub model: Option<ModelConfig>,
    /// Sign the agent card (A2A §8.4) with a key made at start, published
    /// at `/.well-known/jwks.json` and named in the signature's `jku`.
    #[serde(default)]
    pub sign_card: bool,
    /// Test-only fault injection; all off by default.
    #[serde(default)]
    pub faults: Faults,
}

/// Where the peer file's JSON Schema is published, from the repository's
/// root (`peer schema` prints it): generated from these types, so it says
/// what serde accepts; what the values mean is `validate`'s to check.
pub const SCHEMA_PUBLISHED: &str = "docs/schema/peer.schema.json";

/// Where the peer file's reference page is published, from the
/// repository's root (`peer schema --markdown` prints it).
pub const REFERENCE_PUBLISHED: &str = "book/src/reference/peer.md";

impl PeerConfig {
    /// The peer file's schema (JSON Schema 2020-12).
    pub fn schema() -> serde_json::Value {
        schemars::schema_for!(PeerConfig).to_value()
    }

    /// The peer file's reference page, written from [`PeerConfig::schema`].
    pub fn reference() -> String {
        exchange::schema_doc::markdown(
            &Self::schema(),
            "The reference peer's config file",
            "What `peer serve --config FILE` reads (the four shipped ones are \
             `config/peers/*.yaml`). Written from the types the peer reads the \
             file into, so it says what the loader accepts; `peer check --config \
             FILE` checks a file, and editors validate one as it is typed against \
             `docs/schema/peer.schema.json` (`peer schema` prints it). What needs the whole file — a skill naming \
             a dataset that exists, a table's columns — `peer check` says, with \
             file, line and field.",
        )
    }
}

/// The peer's own server over TLS (`tls`). Relative paths are resolved
/// against the config file's directory, as `hub_tls`'s.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeTlsConfig {
    /// PEM: the server's certificate chain (`vendorcorp.pem` of `hub
    /// certs`), its own certificate first.
    pub cert: PathBuf,
    /// PEM: the certificate's private key (`vendorcorp-key.pem`).
    pub key: PathBuf,
    /// PEM: the CA (one or more) whose client certificates are let in
    /// (`hub-ca.pem`: the hub's). Set: a client without a certificate that
    /// CA issued, valid now and for client use, fails the handshake.
    /// Absent: no client certificate is asked for.
    #[serde(default)]
    pub client_ca: Option<PathBuf>,
}

/// TLS towards the hub (`hub_tls`). Relative paths are resolved against
/// the config file's directory, as a CSV dataset's `path`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HubTlsConfig {
    /// PEM: the CA that issued the hub's certificate (`hub-ca.pem` of
    /// `hub certs`). Set: only this CA is trusted for the hub, not the
    /// system's roots. Absent: the system's roots.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// PEM: this peer's client certificate (`buyercorp.pem`), with `key`.
    #[serde(default)]
    pub cert: Option<PathBuf>,
    /// PEM: the certificate's private key (`buyercorp-key.pem`), with
    /// `cert`.
    #[serde(default)]
    pub key: Option<PathBuf>,
}

/// The member's own OpenID provider, as a client-credentials client of it
/// (`hub_oidc`): the access token it issues is the peer's bearer token at
/// the hub.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HubOidcConfig {
    /// The provider's token endpoint (`https://login.buyercorp.example/token`).
    pub token_url: String,
    /// This peer's client id at the provider (one of the topology's
    /// `oidc.client_ids` for this system).
    pub client_id: String,
    /// Name of the env var holding the client secret (sent with HTTP Basic,
    /// `client_secret_basic`).
    pub client_secret_env: String,
    /// Scopes to ask for, space-separated; none asked when absent.
    #[serde(default)]
    pub scope: Option<String>,
    /// The resource (RFC 8707) to ask a token for; the provider's default
    /// audience when absent.
    #[serde(default)]
    pub resource: Option<String>,
}

/// The dataset a peer owns, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum DatasetConfig {
    /// Seeded sales orders (table `orders`).
    Orders {
        #[serde(default = "default_seed")]
        /// Seed of the generator: same seed, same rows.
        seed: u64,
        #[serde(default = "default_order_rows")]
        /// How many orders.
        rows: usize,
    },
    /// Seeded department budgets (table `budgets`).
    Budgets {
        #[serde(default = "default_seed")]
        /// Seed of the generator.
        seed: u64,
    },
    /// Seeded support tickets (table `tickets`).
    Tickets {
        #[serde(default = "default_seed")]
        /// Seed of the generator.
        seed: u64,
        #[serde(default = "default_ticket_rows")]
        /// How many tickets.
        rows: usize,
    },
    /// A CSV file loaded into `table` (header row; column types inferred).
    /// A relative `path` is resolved against the config file's directory.
    Csv {
        /// The CSV file.
        path: PathBuf,
        /// The table it is loaded into (a plain identifier).
        table: String,
    },
}

fn default_seed() -> u64 {
    42
}
fn default_order_rows() -> usize {
    624
}
fn default_ticket_rows() -> usize {
    40
}

impl DatasetConfig {
    /// The table this dataset lives in: the only table a `table_query`
    /// skill of this peer may read.
    pub fn table(&self) -> &str {
        match self {
            DatasetConfig::Orders { .. } => "orders",
            DatasetConfig::Budgets { .. } => "budgets",
            DatasetConfig::Tickets { .. } => "tickets",
            DatasetConfig::Csv { table, .. } => table,
        }
    }

    /// The `kind` spelling, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            DatasetConfig::Orders { .. } => "orders",
            DatasetConfig::Budgets { .. } => "budgets",
            DatasetConfig::Tickets { .. } => "tickets",
            DatasetConfig::Csv { .. } => "csv",
        }
    }
}

/// The kinds of capability (DESIGN.md §2), spelled as in the topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SkillKind {
    /// Pull the provider's data through a query call.
    DataShare,
    /// Ask; the answer is a read-only conclusion.
    Consult,
    /// Agree a data contract for a data-share: strict
    /// messages until the provider grants a scope.
    Negotiation,
    /// Long-running work accepted under an idempotency key and a deadline
    /// (DESIGN.md §2 "task"): the answer is an A2A task that
    /// moves submitted → working → completed | failed | canceled, or is
    /// rejected.
    Task,
}

impl SkillKind {
    /// The wire spelling (`data-share`, `consult`), used as a card tag.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillKind::DataShare => "data-share",
            SkillKind::Consult => "consult",
            SkillKind::Negotiation => "negotiation",
            SkillKind::Task => "task",
        }
    }
}

/// Which built-in rule set answers a capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Handler {
    /// Aggregate query over the dataset table (data-share).
    TableQuery,
    /// Budget questions over the `budgets` table (consult).
    BudgetConsult,
    /// Keyword-rule ticket classification (consult).
    TicketClassify,
    /// The provider's side of a contract negotiation (negotiation).
    Negotiate,
    /// Ticket triage: classify, route to a queue, set an SLA (task).
    TicketTriage,
}

impl Handler {
    /// The kind of capability this handler can serve.
    pub fn kind(self) -> SkillKind {
        match self {
            Handler::TableQuery => SkillKind::DataShare,
            Handler::BudgetConsult | Handler::TicketClassify => SkillKind::Consult,
            Handler::Negotiate => SkillKind::Negotiation,
            Handler::TicketTriage => SkillKind::Task,
        }
    }

    /// The dataset kind a consult handler answers over; `None` for
    /// `table_query`, which reads whatever table the peer owns.
    pub fn dataset_kind(self) -> Option<&'static str> {
        match self {
            Handler::TableQuery | Handler::Negotiate => None,
            Handler::BudgetConsult => Some("budgets"),
            Handler::TicketClassify | Handler::TicketTriage => Some("tickets"),
        }
    }

    /// The config spelling, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Handler::TableQuery => "table_query",
            Handler::BudgetConsult => "budget_consult",
            Handler::TicketClassify => "ticket_classify",
            Handler::Negotiate => "negotiate",
            Handler::TicketTriage => "ticket_triage",
        }
    }
}

/// One capability this peer provides.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillConfig {
    /// Capability id (`orders.query`), as in the topology file.
    pub capability: String,
    /// data-share or consult; must match the handler.
    pub kind: SkillKind,
    /// Which built-in rule set answers.
    pub handler: Handler,
    /// The table a `table_query` reads; must be the dataset's table.
    #[serde(default)]
    pub table: Option<String>,
    /// The most a `table_query` will ever grant (aggregate, filter, group
    /// by): each consumer reads only what its negotiated contract grants,
    /// within these. Required for `table_query`, so a new column (or a
    /// personal one) is never readable by default.
    #[serde(default)]
    pub negotiable_columns: Vec<String>,
    /// For a `negotiate` skill: the `table_query` capability whose
    /// contracts it negotiates.
    #[serde(default)]
    pub negotiates: Option<String>,
    /// For a `negotiate` skill: columns never granted whatever is asked
    /// (`customer_name`, `customer_email`); the policy removes them and
    /// logs it.
    #[serde(default)]
    pub personal_columns: Vec<String>,
    /// Card display name; the capability id when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Card description; a generated one when absent.
    #[serde(default)]
    pub description: Option<String>,
    /// What a call is answered with: a `message` (the default) or a
    /// completed `task` whose artifact holds the result, which the caller
    /// can read again later with `GetTask` (A2A v1.0 §3.1.1: an agent may
    /// answer either way). A `task` skill always answers with a live task
    /// and ignores this.
    #[serde(default)]
    pub answer: AnswerAs,
    /// For a `task` skill: how long the work takes when the call's input
    /// does not say (`work_ms`); [`DEFAULT_WORK_MS`] when absent.
    #[serde(default)]
    pub work_ms: Option<u64>,
    /// For a `task` skill: the longest a task may live. A caller's
    /// `deadline` later than now + this is capped to it; no deadline means
    /// now + this. [`DEFAULT_MAX_DEADLINE_MS`] when absent.
    #[serde(default)]
    pub max_deadline_ms: Option<u64>,
}

/// A task skill's work time when neither the skill nor the call sets one.
pub const DEFAULT_WORK_MS: u64 = 1_500;
/// A task's longest life when the skill does not set `max_deadline_ms`.
pub const DEFAULT_MAX_DEADLINE_MS: u64 = 30_000;
/// The most a call (or a skill) may ask a task to work, in ms: the
/// topology's `work_ms` maximum.
pub const MAX_WORK_MS: u64 = 60_000;

impl SkillConfig {
    /// The work time of a task skill (`work_ms`, or the default).
    pub fn work_ms(&self) -> u64 {
        self.work_ms.unwrap_or(DEFAULT_WORK_MS)
    }

    /// The longest life of a task of this skill (`max_deadline_ms`, or the
    /// default).
    pub fn max_deadline_ms(&self) -> u64 {
        self.max_deadline_ms.unwrap_or(DEFAULT_MAX_DEADLINE_MS)
    }
}

/// How a skill's result travels back (A2A `SendMessage` answers a Message
/// or a Task).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerAs {
    /// One agent Message: nothing to fetch again.
    #[default]
    Message,
    /// A completed Task, kept in the peer's task store.
    Task,
}

/// The MCP data plane of this peer (the data plane is an MCP server, not a
/// function): `peer mcp` serves one tool,
/// `query_records`, over MCP Streamable HTTP, and decides every call
/// against the caller's negotiated contract for `capability`, re-read from
/// the store each time ([`crate::mcp`]). A separate process of the same
/// binary, so it can be stopped on its own.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Where the data plane listens (`127.0.0.1:3111`); must differ from
    /// the A2A server's `listen`. Override: `peer mcp --listen`.
    pub listen: String,
    /// The `table_query` capability whose contracts decide each call
    /// (`orders.query`): the tool reads its table, within its grant.
    pub capability: String,
}

/// The model tier of this peer's negotiation agent: an
/// OpenAI-compatible endpoint, the prompt library, bounds. The policy in
/// code applies after whatever the model drafts
/// (`crate::contracts::draft`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The endpoint: base URL, model, the *name* of the key's env var.
    pub tier: exchange::model::Tier,
    /// The prompt library (`<lang>/<key>.md`), relative to this file.
    pub prompts: PathBuf,
    /// The prompts' language.
    #[serde(default = "default_language")]
    pub language: String,
    /// Overrides the tier's model.
    #[serde(default)]
    pub model: Option<String>,
    /// Sampling temperature (0 for the most repeatable drafts).
    #[serde(default)]
    pub temperature: f32,
    /// Most tokens of one completion.
    #[serde(default = "default_model_max_tokens")]
    pub max_tokens: u32,
    /// Wall-clock bound of one draft, retries and the correction included.
    #[serde(default = "default_model_deadline_ms")]
    pub deadline_ms: u64,
}

fn default_language() -> String {
    "en".into()
}
fn default_model_max_tokens() -> u32 {
    400
}
fn default_model_deadline_ms() -> u64 {
    5_000
}

/// An agent this system runs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Stable id (`data-steward`).
    pub id: String,
    /// Display name.
    pub name: String,
}

/// Fault injection, so tests can make a real peer slow, wrong or broken.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    /// Sleep this long before answering (drives the hub's TIMEOUT path).
    pub stall_ms: u64,
    /// For a task skill: accept the task and start the work at once, but
    /// hold the `SendMessage` answer back this long, so a caller times out
    /// not knowing whether its task was accepted (drives the retry that
    /// finds the task by its idempotency key).
    pub accept_stall_ms: u64,
    /// Answer with a result that breaks the capability's contract
    /// (drives SCHEMA_INVALID).
    pub break_schema: bool,
    /// Answer every call with an A2A internal error (drives PEER_ERROR).
    pub fail: bool,
    /// Answer every authenticated A2A request with a body that never ends
    /// (a JSON-RPC answer whose text streams on forever): drives the hub's
    /// answer cap and deadline.
    pub endless_answer: bool,
    /// Change the card's description after signing it (drives a signature
    /// that does not verify).
    pub tamper_card: bool,
    /// Break the negotiation replies this way (drives the consumer's
    /// corrective retry and its protocol error).
    pub negotiation: Option<NegotiationFault>,
    /// How many negotiation replies to break; 0 breaks every one.
    pub negotiation_times: u32,
}

/// How a broken negotiator breaks its replies (test-only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NegotiationFault {
    /// `"from": "consumer"`: speaks for the other party.
    WrongParty,
    /// An extra top-level key (`urgency`).
    ExtraKey,
    /// A column the published schema does not have.
    UnknownColumn,
    /// Prose instead of one JSON object.
    Unparseable,
}

impl PeerConfig {
    /// The listen address, parsed (validation guarantees it parses).
    pub fn listen_addr(&self) -> Result<SocketAddr, String> {
        self.listen
            .parse()
            .map_err(|_| format!("`{}` is not an IP:port address", self.listen))
    }

    /// The skill serving `capability`, if this peer provides it.
    pub fn skill(&self, capability: &str) -> Option<&SkillConfig> {
        self.skills.iter().find(|s| s.capability == capability)
    }
}
