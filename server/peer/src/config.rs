//! A reference peer's configuration file.
//!
//! One YAML file per peer process. Everything that makes VendorCorp differ
//! from BuyerCorp lives here, so a fourth peer is added by writing a file,
//! not code (DESIGN.md §3). The file names its token by env var only: the
//! secret itself never sits in a file that may be committed.
//!
//! Loading validates structure (serde, `deny_unknown_fields`) and meaning
//! (ids, addresses, that each skill's handler fits the dataset), the way
//! the hub loads its topology file (`exchange::located`): every problem is
//! reported, in file order, as `config/peers/x.yaml:14:5: skills[0].table:
//! ...`, so an operator fixes the whole file in one pass without guessing.

use exchange::located::{parse_yaml, Issue, Locator, Seg};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The whole peer file.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
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
    /// The base URL advertised in the agent card when the peer sits behind
    /// a proxy; `http://<listen>` when absent.
    #[serde(default)]
    pub public_url: Option<String>,
    /// Name of the env var holding this peer's bearer token.
    pub token_env: String,
    /// Base URL of the hub, used when this peer calls others (`peer call`).
    pub hub_url: String,
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
    /// Test-only fault injection; all off by default.
    #[serde(default)]
    pub faults: Faults,
}

/// The dataset a peer owns, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillKind {
    /// Pull the provider's data through a query call.
    DataShare,
    /// Ask; the answer is a read-only conclusion.
    Consult,
    /// Agree a data contract for a data-share (seed `000`): strict
    /// messages until the provider grants a scope.
    Negotiation,
    /// Long-running work accepted under an idempotency key and a deadline
    /// (DESIGN.md §2 "task", seed `004`): the answer is an A2A task that
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
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
/// Bounds of `max_deadline_ms`: 100 ms to one hour.
const MAX_DEADLINE_RANGE: std::ops::RangeInclusive<u64> = 100..=3_600_000;

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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerAs {
    /// One agent Message: nothing to fetch again.
    #[default]
    Message,
    /// A completed Task, kept in the peer's task store.
    Task,
}

/// The MCP data plane of this peer (seed `000`, step 4: "the data plane is
/// an MCP server, not a function"): `peer mcp` serves one tool,
/// `query_records`, over MCP Streamable HTTP, and decides every call
/// against the caller's negotiated contract for `capability`, re-read from
/// the store each time ([`crate::mcp`]). A separate process of the same
/// binary, so it can be stopped on its own.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Where the data plane listens (`127.0.0.1:3111`); must differ from
    /// the A2A server's `listen`. Override: `peer mcp --listen`.
    pub listen: String,
    /// The `table_query` capability whose contracts decide each call
    /// (`orders.query`): the tool reads its table, within its grant.
    pub capability: String,
}

/// The model tier of this peer's negotiation agent (issue 12): an
/// OpenAI-compatible endpoint, the prompt library, bounds. The policy in
/// code applies after whatever the model drafts
/// (`crate::contracts::draft`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Stable id (`data-steward`).
    pub id: String,
    /// Display name.
    pub name: String,
}

/// Fault injection, so tests can make a real peer slow, wrong or broken.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
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
    /// Break the negotiation replies this way (drives the consumer's
    /// corrective retry and its protocol error).
    pub negotiation: Option<NegotiationFault>,
    /// How many negotiation replies to break; 0 breaks every one.
    pub negotiation_times: u32,
}

/// How a broken negotiator breaks its replies (test-only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
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

/// A config file that cannot be used; the message names the file, and for
/// a file that was read, every problem with its line, column and field. A
/// YAML or shape error (a syntax error, an unknown, missing or mistyped
/// field) is then the only one: the meaning of a file that does not parse
/// is not checked.
pub type ConfigError = exchange::located::FileError;

impl PeerConfig {
    /// Reads and validates the file at `path`. A relative CSV path is
    /// resolved against the file's directory so the config works from any
    /// working directory.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = ConfigError::read(path, "peer config")?;
        let mut config = Self::parse(&text, &path.display().to_string())?;
        if let DatasetConfig::Csv { path: csv, .. } = &mut config.dataset {
            if csv.is_relative() {
                if let Some(dir) = path.parent() {
                    *csv = dir.join(&*csv);
                }
            }
        }
        if let Some(model) = &mut config.model {
            if model.prompts.is_relative() {
                if let Some(dir) = path.parent() {
                    model.prompts = dir.join(&model.prompts);
                }
            }
        }
        Ok(config)
    }

    /// Parses and validates YAML text; `file` only labels the errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, ConfigError> {
        let invalid = |issues| ConfigError::Invalid {
            file: file.to_string(),
            issues,
        };
        let config: PeerConfig = parse_yaml(text)
            .map_err(|issue| invalid(vec![relocate(issue, &Locator::new(text))]))?;
        let issues = config.validate(text);
        if issues.is_empty() {
            Ok(config)
        } else {
            Err(invalid(issues))
        }
    }

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

    /// Checks meaning beyond shape and returns every problem, sorted by
    /// position in `text` (the YAML this config was parsed from). A check
    /// that an earlier problem makes meaningless is skipped (a duplicate of
    /// an invalid id, a skill's table against an invalid dataset table).
    /// Messages never repeat `token_env` or a URL: an operator may have
    /// pasted a secret there.
    pub fn validate(&self, text: &str) -> Vec<Issue> {
        let loc = Locator::new(text);
        let mut issues = Vec::new();
        let mut push = |path: &[Seg], message: String| issues.push(loc.issue(path, message));
        let key = |k: &'static str| [Seg::key(k)];

        if !exchange::id::is_valid(&self.system) {
            push(
                &key("system"),
                format!(
                    "`{}`: {}",
                    self.system,
                    exchange::id::rule_for("a system id")
                ),
            );
        }
        if self.name.trim().is_empty() {
            push(&key("name"), "must not be empty".into());
        }
        if let Err(why) = self.listen_addr() {
            push(&key("listen"), why);
        }
        if let Some(url) = &self.public_url {
            if !is_http_url(url) {
                push(&key("public_url"), URL_RULE.into());
            }
        }
        if self.token_env.trim().is_empty() {
            push(
                &key("token_env"),
                "must name the env var holding this peer's bearer token".into(),
            );
        } else if !self
            .token_env
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            push(
                &key("token_env"),
                "must be an env var name (A-Z, 0-9, _), not the token itself".into(),
            );
        }
        if !is_http_url(&self.hub_url) {
            push(&key("hub_url"), URL_RULE.into());
        }
        if self.database.as_os_str().is_empty() {
            push(&key("database"), "must not be empty".into());
        }
        let dataset = |field: &'static str| [Seg::key("dataset"), Seg::key(field)];
        // A CSV table name that cannot work: comparing a skill's table
        // with it would only add noise.
        let table_problem = match &self.dataset {
            DatasetConfig::Csv { table, .. } => csv_table_problem(table),
            _ => None,
        };
        match &self.dataset {
            DatasetConfig::Orders { rows, .. } | DatasetConfig::Tickets { rows, .. } => {
                if *rows == 0 || *rows > 1_000_000 {
                    push(
                        &dataset("rows"),
                        format!("{rows} must be between 1 and 1000000"),
                    );
                }
            }
            DatasetConfig::Csv { path, .. } => {
                if path.as_os_str().is_empty() {
                    push(&dataset("path"), "must not be empty".into());
                }
            }
            DatasetConfig::Budgets { .. } => {}
        }
        if let Some(why) = &table_problem {
            push(&dataset("table"), why.clone());
        }

        if self.skills.is_empty() {
            push(
                &key("skills"),
                "a peer must provide at least one capability".into(),
            );
        }
        for (i, skill) in self.skills.iter().enumerate() {
            let at = |field: &'static str| item("skills", i, field);
            if !exchange::id::is_valid(&skill.capability) {
                push(
                    &at("capability"),
                    format!(
                        "`{}`: {}",
                        skill.capability,
                        exchange::id::rule_for("a capability id")
                    ),
                );
            } else if self.skills[..i]
                .iter()
                .any(|s| s.capability == skill.capability)
            {
                push(
                    &at("capability"),
                    format!("`{}` is listed twice", skill.capability),
                );
            }
            if skill.handler.kind() != skill.kind {
                push(
                    &at("kind"),
                    format!(
                        "handler {} serves {} capabilities, not {}",
                        skill.handler.as_str(),
                        skill.handler.kind().as_str(),
                        skill.kind.as_str()
                    ),
                );
            }
            match skill.handler {
                Handler::TableQuery => {
                    match &skill.table {
                        None => push(&at("table"), "table_query needs the table it reads".into()),
                        Some(t) if table_problem.is_none() && t != self.dataset.table() => push(
                            &at("table"),
                            format!(
                                "`{t}` is not this peer's dataset table `{}`",
                                self.dataset.table()
                            ),
                        ),
                        Some(_) => {}
                    }
                    if skill.negotiable_columns.is_empty() {
                        push(
                            &at("negotiable_columns"),
                            "table_query needs negotiable_columns: the most a contract may \
                             grant; nothing else of the table is ever readable"
                                .into(),
                        );
                    }
                    column_names(
                        &mut push,
                        at("negotiable_columns"),
                        &skill.negotiable_columns,
                    );
                }
                Handler::Negotiate => {
                    let target = skill.negotiates.as_deref().and_then(|n| self.skill(n));
                    match (&skill.negotiates, target) {
                        (None, _) => push(
                            &at("negotiates"),
                            "a negotiate skill names the table_query capability it negotiates \
                             (`negotiates: orders.query`)"
                                .into(),
                        ),
                        (Some(n), None) => push(
                            &at("negotiates"),
                            format!("`{n}` is not a capability of this peer"),
                        ),
                        (Some(n), Some(t)) if t.handler != Handler::TableQuery => push(
                            &at("negotiates"),
                            format!("`{n}` is a {}, not a table_query", t.handler.as_str()),
                        ),
                        (Some(_), Some(t)) => {
                            for (j, c) in skill.personal_columns.iter().enumerate() {
                                if t.negotiable_columns.contains(c) {
                                    let mut path = at("personal_columns");
                                    path.push(Seg::Index(j));
                                    push(
                                        &path,
                                        format!(
                                            "`{c}` is personal yet listed in {}'s \
                                             negotiable_columns; a column is one or the other",
                                            t.capability
                                        ),
                                    );
                                }
                            }
                        }
                    }
                    column_names(&mut push, at("personal_columns"), &skill.personal_columns);
                }
                Handler::TicketTriage => {
                    if let Some(ms) = skill.work_ms.filter(|ms| *ms > MAX_WORK_MS) {
                        push(
                            &at("work_ms"),
                            format!("{ms} must be at most {MAX_WORK_MS}"),
                        );
                    }
                    if let Some(ms) = skill
                        .max_deadline_ms
                        .filter(|ms| !MAX_DEADLINE_RANGE.contains(ms))
                    {
                        push(
                            &at("max_deadline_ms"),
                            format!(
                                "{ms} must be between {} and {}",
                                MAX_DEADLINE_RANGE.start(),
                                MAX_DEADLINE_RANGE.end()
                            ),
                        );
                    }
                }
                Handler::BudgetConsult | Handler::TicketClassify => {}
            }
            if skill.handler.kind() != SkillKind::Task {
                for (field, set) in [
                    ("work_ms", skill.work_ms.is_some()),
                    ("max_deadline_ms", skill.max_deadline_ms.is_some()),
                ] {
                    if set {
                        push(
                            &at(field),
                            format!(
                                "only a task skill takes {field}, not {}",
                                skill.handler.as_str()
                            ),
                        );
                    }
                }
            }
            if skill.handler != Handler::TableQuery && !skill.negotiable_columns.is_empty() {
                push(
                    &at("negotiable_columns"),
                    format!(
                        "only a table_query grants columns, not {}",
                        skill.handler.as_str()
                    ),
                );
            }
            if skill.handler != Handler::Negotiate {
                for (field, set) in [
                    ("negotiates", skill.negotiates.is_some()),
                    ("personal_columns", !skill.personal_columns.is_empty()),
                ] {
                    if set {
                        push(
                            &at(field),
                            format!(
                                "only a negotiate skill takes {field}, not {}",
                                skill.handler.as_str()
                            ),
                        );
                    }
                }
            }
            if let Some(needed) = skill.handler.dataset_kind() {
                if self.dataset.kind() != needed {
                    push(
                        &at("handler"),
                        format!(
                            "{} needs dataset kind {needed}, not {}",
                            skill.handler.as_str(),
                            self.dataset.kind()
                        ),
                    );
                }
            }
        }
        for (i, c) in self.consumes.iter().enumerate() {
            if !exchange::id::is_valid(c) {
                push(
                    &[Seg::key("consumes"), Seg::Index(i)],
                    format!("`{c}`: {}", exchange::id::rule_for("a capability id")),
                );
            }
        }
        for (i, a) in self.agents.iter().enumerate() {
            if !exchange::id::is_valid(&a.id) {
                push(
                    &item("agents", i, "id"),
                    format!("`{}`: {}", a.id, exchange::id::rule_for("an agent id")),
                );
            } else if self.agents[..i].iter().any(|b| b.id == a.id) {
                push(
                    &item("agents", i, "id"),
                    format!("`{}` is listed twice", a.id),
                );
            }
        }
        if let Some(mcp) = &self.mcp {
            let at = |field: &'static str| [Seg::key("mcp"), Seg::key(field)];
            match mcp.listen.parse::<SocketAddr>() {
                Err(_) => push(
                    &at("listen"),
                    format!("`{}` is not an IP:port address", mcp.listen),
                ),
                Ok(addr) if self.listen_addr().is_ok_and(|a2a| a2a == addr) => push(
                    &at("listen"),
                    format!(
                        "`{}` is the A2A server's `listen`; the data plane is its own process \
                         on its own port",
                        mcp.listen
                    ),
                ),
                Ok(_) => {}
            }
            match self.skill(&mcp.capability) {
                None => push(
                    &at("capability"),
                    format!(
                        "`{}` is not a capability of this peer (it provides: {})",
                        mcp.capability,
                        self.skills
                            .iter()
                            .map(|s| s.capability.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
                Some(s) if s.handler != Handler::TableQuery => push(
                    &at("capability"),
                    format!(
                        "`{}` is a {}; the data plane serves a table_query",
                        mcp.capability,
                        s.handler.as_str()
                    ),
                ),
                Some(_) => {}
            }
        }
        if let Some(model) = &self.model {
            for (field, problem) in model.tier.problems() {
                push(
                    &[Seg::key("model"), Seg::key("tier"), Seg::key(field)],
                    problem,
                );
            }
            if !(100..=120_000).contains(&model.deadline_ms) {
                push(
                    &[Seg::key("model"), Seg::key("deadline_ms")],
                    "must be between 100 and 120000".into(),
                );
            }
        }
        for (field, ms) in [
            ("stall_ms", self.faults.stall_ms),
            ("accept_stall_ms", self.faults.accept_stall_ms),
        ] {
            if ms > 600_000 {
                push(
                    &[Seg::key("faults"), Seg::key(field)],
                    "must be at most 600000".into(),
                );
            }
        }
        issues.sort_by_key(|i| (i.line, i.column));
        issues
    }
}

/// Every entry of a column list must be a column name.
fn column_names(push: &mut impl FnMut(&[Seg<'_>], String), at: Vec<Seg<'_>>, names: &[String]) {
    for (j, c) in names.iter().enumerate() {
        if !is_sql_identifier(c) {
            let mut path = at.clone();
            path.push(Seg::Index(j));
            push(&path, format!("`{c}` is not a column name"));
        }
    }
}

/// What is wrong with a CSV dataset's table name, if anything.
fn csv_table_problem(table: &str) -> Option<String> {
    if !is_sql_identifier(table) {
        Some(format!(
            "`{table}` must be a plain identifier (letters, digits, _)"
        ))
    } else if matches!(
        table,
        "audit_trail" | "approval_inbox" | "dataset_meta" | "task_keys"
    ) {
        Some(format!("`{table}` is reserved by the peer"))
    } else {
        None
    }
}

/// serde locates an error inside the tagged `dataset` mapping at the start
/// of the document (the mapping is buffered until its `kind` is known), so
/// an issue placed before its own field's line is moved to that line.
fn relocate(issue: Issue, loc: &Locator) -> Issue {
    let (line, column) = loc.position(&field_path(&issue.field));
    if (issue.line, issue.column) < (line, column) {
        Issue {
            line,
            column,
            ..issue
        }
    } else {
        issue
    }
}

/// The segments of a rendered field path (`skills[0].negotiable_columns[1]`);
/// the peer's keys contain no `.` or `[`.
fn field_path(field: &str) -> Vec<Seg<'_>> {
    let mut path = Vec::new();
    for part in field.split('.') {
        let mut pieces = part.split('[');
        if let Some(key) = pieces.next().filter(|k| !k.is_empty()) {
            path.push(Seg::key(key));
        }
        for index in pieces {
            match index.trim_end_matches(']').parse() {
                Ok(i) => path.push(Seg::Index(i)),
                Err(_) => return path,
            }
        }
    }
    path
}

/// What `hub_url` and `public_url` must be; the value itself is not
/// repeated (it may carry credentials).
const URL_RULE: &str = "must be an http:// or https:// URL";

/// The path of `field` in the `i`th entry of the list `list`
/// (`skills[0].table`).
fn item(list: &'static str, i: usize, field: &'static str) -> Vec<Seg<'static>> {
    vec![Seg::key(list), Seg::Index(i), Seg::key(field)]
}

fn is_http_url(s: &str) -> bool {
    (s.starts_with("http://") || s.starts_with("https://")) && s.len() > "https://".len()
}

/// A name that is safe to put (quoted) into SQL: the CSV loader and the
/// query engine only ever interpolate names that pass this.
pub fn is_sql_identifier(s: &str) -> bool {
    let mut bytes = s.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && s.len() <= 64
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
system: vendorcorp
name: VendorCorp
listen: 127.0.0.1:3101
token_env: WS_TOKEN_VENDORCORP
hub_url: http://127.0.0.1:3000
database: var/vendorcorp.db
dataset: { kind: orders, seed: 42, rows: 624 }
skills:
  - capability: orders.query
    kind: data-share
    handler: table_query
    table: orders
    negotiable_columns: [region, order_date, order_value, product]
agents: [ {id: data-steward, name: "Data Steward"} ]
"#;

    const FILE: &str = "peers/x.yaml";

    fn err(text: &str) -> String {
        PeerConfig::parse(text, FILE).unwrap_err().to_string()
    }

    fn issues(text: &str) -> Vec<Issue> {
        match PeerConfig::parse(text, FILE) {
            Ok(_) => panic!("expected the file to be rejected"),
            Err(e) => e.issues().to_vec(),
        }
    }

    /// Asserts the `(line, field)` of each issue, in the order reported.
    #[track_caller]
    fn assert_located(text: &str, want: &[(usize, &str)]) {
        let got = issues(text);
        let located: Vec<(usize, &str)> = got.iter().map(|i| (i.line, i.field.as_str())).collect();
        assert_eq!(located, want, "{got:#?}");
    }

    #[test]
    fn good_file_loads_with_defaults() {
        let c = PeerConfig::parse(GOOD, "x.yaml").unwrap();
        assert_eq!(c.system, "vendorcorp");
        assert_eq!(
            c.dataset,
            DatasetConfig::Orders {
                seed: 42,
                rows: 624
            }
        );
        assert_eq!(c.faults, Faults::default());
        assert!(c.skill("orders.query").is_some());
    }

    #[test]
    fn unknown_field_is_named_with_the_file() {
        let e = err(&GOOD.replace("name: VendorCorp", "name: VendorCorp\ncolour: red"));
        assert!(e.starts_with("peers/x.yaml:4:1: colour: "), "{e}");
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn unknown_dataset_field_is_named() {
        let e = err(&GOOD.replace("rows: 624", "rowz: 624"));
        assert!(e.contains("rowz"), "{e}");
        assert!(e.starts_with("peers/x.yaml:8:1: dataset: "), "{e}");
        // Block style: still the dataset's own line, not the document's.
        let block = GOOD.replace(
            "dataset: { kind: orders, seed: 42, rows: 624 }",
            "dataset:\n  kind: orders\n  rowz: 624",
        );
        assert!(
            err(&block).starts_with("peers/x.yaml:8:"),
            "{}",
            err(&block)
        );
    }

    #[test]
    fn missing_field_is_named() {
        let e = err(&GOOD.replace("token_env: WS_TOKEN_VENDORCORP\n", ""));
        assert!(e.contains("token_env"), "{e}");
        assert!(e.starts_with("peers/x.yaml:"), "{e}");
    }

    #[test]
    fn type_and_syntax_errors_are_one_located_issue() {
        let typed = issues(&GOOD.replace("agents: [", "faults: { stall_ms: soon }\nagents: ["));
        assert_eq!(typed.len(), 1, "{typed:?}");
        assert_eq!(
            (typed[0].line, typed[0].field.as_str()),
            (15, "faults.stall_ms")
        );
        let syntax = issues(&GOOD.replace("agents: [ {", "agents: [ {{"));
        assert_eq!(syntax.len(), 1, "{syntax:?}");
        assert!(syntax[0].line >= 15, "{syntax:?}");
    }

    #[test]
    fn semantic_errors_name_the_field() {
        // (broken text, field path, line of GOOD it sits on)
        let cases = [
            (
                GOOD.replace("listen: 127.0.0.1:3101", "listen: nowhere"),
                "listen",
                4,
            ),
            (
                GOOD.replace("system: vendorcorp", "system: Vendor Corp"),
                "system",
                2,
            ),
            (
                GOOD.replace("table: orders", "table: budgets"),
                "skills[0].table",
                13,
            ),
            (
                GOOD.replace("kind: data-share", "kind: consult"),
                "skills[0].kind",
                11,
            ),
            (
                GOOD.replace("hub_url: http://127.0.0.1:3000", "hub_url: 127.0.0.1:3000"),
                "hub_url",
                6,
            ),
            (
                GOOD.replace("token_env: WS_TOKEN_VENDORCORP", "token_env: ws-token"),
                "token_env",
                5,
            ),
            (GOOD.replace("rows: 624", "rows: 0"), "dataset.rows", 8),
            (
                GOOD.replace(
                    "handler: table_query\n    table: orders",
                    "handler: budget_consult",
                ),
                "skills[0].handler",
                12,
            ),
            (
                GOOD.replace(
                    "    negotiable_columns: [region, order_date, order_value, product]\n",
                    "",
                ),
                // Absent: located at the skill it is missing from.
                "skills[0].negotiable_columns",
                10,
            ),
            (
                GOOD.replace("[region, order_date,", "[region, \"date; drop\","),
                "skills[0].negotiable_columns[1]",
                14,
            ),
        ];
        for (text, field, line) in cases {
            let e = err(&text);
            assert!(
                e.contains(&format!(": {field}: ")),
                "expected {field} in: {e}"
            );
            assert!(
                e.lines().any(|l| l.starts_with(&format!("{FILE}:{line}:"))
                    && l.contains(&format!(": {field}: "))),
                "expected {field} at line {line} in: {e}"
            );
            assert!(e.lines().all(|l| l.starts_with("peers/x.yaml:")), "{e}");
        }
    }

    #[test]
    fn every_problem_is_reported_in_line_order() {
        let text = GOOD
            .replace("agents: [ {id: data-steward", "agents: [ {id: Data Steward")
            .replace("[region, order_date,", "[region, \"date; drop\",")
            .replace("table: orders", "table: budgets")
            .replace("rows: 624", "rows: 0")
            .replace(
                "hub_url: http://127.0.0.1:3000",
                "hub_url: ftp://user:pw@hub",
            )
            .replace("token_env: WS_TOKEN_VENDORCORP", "token_env: sk-live-0123")
            .replace("system: vendorcorp", "system: Vendor Corp");
        assert_located(
            &text,
            &[
                (2, "system"),
                (5, "token_env"),
                (6, "hub_url"),
                (8, "dataset.rows"),
                (13, "skills[0].table"),
                (14, "skills[0].negotiable_columns[1]"),
                (15, "agents[0].id"),
            ],
        );
        let e = err(&text);
        assert_eq!(e.lines().count(), 7, "{e}");
        assert!(e.lines().all(|l| l.starts_with("peers/x.yaml:")), "{e}");
        // Neither a would-be token nor a URL (credentials) is repeated.
        assert!(!e.contains("sk-live-0123") && !e.contains("user:pw"), "{e}");
    }

    #[test]
    fn one_mistake_reports_each_consequence_but_no_follow_up_noise() {
        // A consult handler on a data-share skill with a grant: the kind,
        // the dataset and the grant are each wrong.
        let text = GOOD.replace(
            "handler: table_query\n    table: orders",
            "handler: budget_consult",
        );
        assert_located(
            &text,
            &[
                (11, "skills[0].kind"),
                (12, "skills[0].handler"),
                (13, "skills[0].negotiable_columns"),
            ],
        );
        // An invalid id is not also a duplicate; a reserved dataset table
        // is not also compared with the skill's table.
        let second = "  - capability: Orders.Query\n    kind: consult\n    handler: \
                      ticket_classify\nagents:";
        let text = GOOD
            .replace("capability: orders.query", "capability: Orders.Query")
            .replace("agents:", second)
            .replace(
                "dataset: { kind: orders, seed: 42, rows: 624 }",
                "dataset: { kind: csv, path: d.csv, table: dataset_meta }",
            );
        assert_located(
            &text,
            &[
                (8, "dataset.table"),
                (10, "skills[0].capability"),
                (15, "skills[1].capability"),
                (17, "skills[1].handler"),
            ],
        );
    }

    #[test]
    fn a_model_tier_is_optional_and_checked_at_its_lines() {
        assert_eq!(PeerConfig::parse(GOOD, FILE).unwrap().model, None);
        let with = |model: &str| GOOD.replace("agents: [", &format!("{model}\nagents: ["));
        let ok = PeerConfig::parse(
            &with("model:\n  tier: { id: local, base_url: \"http://127.0.0.1:8080/v1\", model: m }\n  prompts: ../prompts"),
            FILE,
        )
        .unwrap();
        let model = ok.model.unwrap();
        assert_eq!((model.deadline_ms, model.language.as_str()), (5_000, "en"));
        let text = with("model:\n  tier:\n    id: local\n    base_url: ftp://x\n    model: m\n    api_key_env: sk-1\n  prompts: p\n  deadline_ms: 1");
        let e = err(&text);
        assert!(
            e.contains("model.tier.base_url: must be an http:// or https:// URL"),
            "{e}"
        );
        assert!(
            e.contains("model.tier.api_key_env: must be the name of an environment variable"),
            "{e}"
        );
        assert!(
            e.contains("model.deadline_ms: must be between 100 and 120000"),
            "{e}"
        );
        let lines: Vec<usize> = issues(&text).iter().map(|i| i.line).collect();
        let base = issues(&text)[0].line;
        assert_eq!(lines, [base, base + 2, base + 4], "{e}");
    }

    #[test]
    fn mcp_section_is_optional_and_checked() {
        // Absent: no data plane.
        assert_eq!(PeerConfig::parse(GOOD, FILE).unwrap().mcp, None);
        let with = |mcp: &str| {
            GOOD.replace(
                "agents: [",
                &format!(
                    "  - {{ capability: orders.negotiate, kind: negotiation, handler: negotiate,\n      \
                     negotiates: orders.query }}\n{mcp}\nagents: ["
                ),
            )
        };
        let ok = PeerConfig::parse(
            &with("mcp: { listen: 127.0.0.1:3111, capability: orders.query }"),
            FILE,
        )
        .unwrap();
        assert_eq!(
            ok.mcp,
            Some(McpConfig {
                listen: "127.0.0.1:3111".into(),
                capability: "orders.query".into()
            })
        );
        // Every problem, located at its field (the mcp section is line 17).
        let text = with("mcp:\n  listen: nowhere\n  capability: weather.query");
        assert_located(&text, &[(18, "mcp.listen"), (19, "mcp.capability")]);
        let e = err(&text);
        assert!(e.contains("`nowhere` is not an IP:port address"), "{e}");
        assert!(
            e.contains("`weather.query` is not a capability of this peer (it provides: orders.query, orders.negotiate)"),
            "{e}"
        );
        // A capability that is not a table_query; the A2A server's port.
        let text = with("mcp:\n  listen: 127.0.0.1:3101\n  capability: orders.negotiate");
        assert_located(&text, &[(18, "mcp.listen"), (19, "mcp.capability")]);
        let e = err(&text);
        assert!(e.contains("is the A2A server's `listen`"), "{e}");
        assert!(
            e.contains("`orders.negotiate` is a negotiate; the data plane serves a table_query"),
            "{e}"
        );
        // Unknown keys are refused like everywhere else in the file.
        let e = err(&with(
            "mcp: { listen: 127.0.0.1:3111, capability: orders.query, tools: [] }",
        ));
        assert!(e.contains("tools"), "{e}");
        // A missing key is named.
        let e = err(&with("mcp: { listen: 127.0.0.1:3111 }"));
        assert!(e.contains("capability"), "{e}");
    }

    const HELPDESK: &str = r#"
system: helpdesk
name: Helpdesk
listen: 127.0.0.1:3103
token_env: WS_TOKEN_HELPDESK
hub_url: http://127.0.0.1:3000
database: var/helpdesk.db
dataset: { kind: tickets, seed: 42, rows: 40 }
skills:
  - capability: ticket.classify
    kind: consult
    handler: ticket_classify
  - capability: ticket.triage
    kind: task
    handler: ticket_triage
"#;

    #[test]
    fn a_task_skill_has_a_work_time_and_a_life_cap() {
        let c = PeerConfig::parse(HELPDESK, FILE).unwrap();
        let t = c.skill("ticket.triage").unwrap();
        assert_eq!(
            (t.kind, t.handler),
            (SkillKind::Task, Handler::TicketTriage)
        );
        assert_eq!(
            (t.work_ms(), t.max_deadline_ms()),
            (DEFAULT_WORK_MS, DEFAULT_MAX_DEADLINE_MS)
        );
        assert_eq!((DEFAULT_WORK_MS, DEFAULT_MAX_DEADLINE_MS), (1_500, 30_000));
        assert_eq!(c.faults.accept_stall_ms, 0);
        let set = HELPDESK.replace(
            "handler: ticket_triage\n",
            "handler: ticket_triage\n    work_ms: 0\n    max_deadline_ms: 300\n",
        );
        let c = PeerConfig::parse(&set, FILE).unwrap();
        let t = c.skill("ticket.triage").unwrap();
        assert_eq!((t.work_ms(), t.max_deadline_ms()), (0, 300));
        // The shipped helpdesk provides both, classify unchanged.
        let shipped =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/peers/helpdesk.yaml");
        let c = PeerConfig::load(&shipped).unwrap_or_else(|e| panic!("{e}"));
        let classify = c.skill("ticket.classify").unwrap();
        assert_eq!(
            (classify.kind, classify.answer),
            (SkillKind::Consult, AnswerAs::Task)
        );
        assert_eq!(c.skill("ticket.triage").unwrap().kind, SkillKind::Task);
    }

    #[test]
    fn task_settings_are_checked_at_their_lines() {
        let text = HELPDESK.replace(
            "handler: ticket_triage\n",
            "handler: ticket_triage\n    work_ms: 60001\n    max_deadline_ms: 50\n",
        );
        assert_located(
            &text,
            &[(16, "skills[1].work_ms"), (17, "skills[1].max_deadline_ms")],
        );
        let e = err(&text);
        assert!(
            e.contains("skills[1].work_ms: 60001 must be at most 60000"),
            "{e}"
        );
        assert!(
            e.contains("skills[1].max_deadline_ms: 50 must be between 100 and 3600000"),
            "{e}"
        );
        // Only a task skill takes them.
        let text = HELPDESK.replace(
            "handler: ticket_classify\n",
            "handler: ticket_classify\n    max_deadline_ms: 1000\n",
        );
        assert_located(&text, &[(13, "skills[0].max_deadline_ms")]);
        assert!(
            err(&text).contains("only a task skill takes max_deadline_ms, not ticket_classify"),
            "{}",
            err(&text)
        );
        // The handler serves tasks, not consults; and needs tickets.
        let text = HELPDESK.replace("kind: task", "kind: consult");
        assert_located(&text, &[(14, "skills[1].kind")]);
        assert!(
            err(&text).contains("handler ticket_triage serves task capabilities, not consult"),
            "{}",
            err(&text)
        );
        let text = HELPDESK
            .replace(
                "dataset: { kind: tickets, seed: 42, rows: 40 }",
                "dataset: { kind: budgets }",
            )
            .replace("handler: ticket_classify", "handler: budget_consult");
        assert_located(&text, &[(15, "skills[1].handler")]);
        // The fault is bounded like stall_ms.
        let text = format!("{HELPDESK}faults: {{ accept_stall_ms: 700000 }}\n");
        assert_located(&text, &[(16, "faults.accept_stall_ms")]);
        let ok = format!("{HELPDESK}faults: {{ accept_stall_ms: 3000 }}\n");
        assert_eq!(
            PeerConfig::parse(&ok, FILE).unwrap().faults.accept_stall_ms,
            3000
        );
    }

    #[test]
    fn shipped_configs_are_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/peers");
        for name in ["vendorcorp", "buyercorp", "helpdesk", "logistics"] {
            let path = dir.join(format!("{name}.yaml"));
            let c = PeerConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(c.system, name);
        }
    }
}
