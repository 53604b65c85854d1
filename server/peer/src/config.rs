//! A reference peer's configuration file.
//!
//! One YAML file per peer process. Everything that makes VendorCorp differ
//! from BuyerCorp lives here, so a fourth peer is added by writing a file,
//! not code (DESIGN.md §3). The file names its token by env var only: the
//! secret itself never sits in a file that may be committed.
//!
//! Loading validates structure (serde, `deny_unknown_fields`) and meaning
//! (ids, addresses, that each skill's handler fits the dataset); every error
//! names the file and the field so an operator can fix it without guessing.

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

/// The two kinds of capability (DESIGN.md §2), spelled as in the topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillKind {
    /// Pull the provider's data through a query call.
    DataShare,
    /// Ask; the answer is a read-only conclusion.
    Consult,
}

impl SkillKind {
    /// The wire spelling (`data-share`, `consult`), used as a card tag.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillKind::DataShare => "data-share",
            SkillKind::Consult => "consult",
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
}

impl Handler {
    /// The kind of capability this handler can serve.
    pub fn kind(self) -> SkillKind {
        match self {
            Handler::TableQuery => SkillKind::DataShare,
            Handler::BudgetConsult | Handler::TicketClassify => SkillKind::Consult,
        }
    }

    /// The config spelling, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Handler::TableQuery => "table_query",
            Handler::BudgetConsult => "budget_consult",
            Handler::TicketClassify => "ticket_classify",
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
    /// The columns a `table_query` lets a caller name (aggregate, filter,
    /// group by): the data owner's grant. Required for `table_query`, so a
    /// new column (or a PII one) is never readable by default.
    #[serde(default)]
    pub granted_columns: Vec<String>,
    /// Card display name; the capability id when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Card description; a generated one when absent.
    #[serde(default)]
    pub description: Option<String>,
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
    /// Answer with a result that breaks the capability's contract
    /// (drives SCHEMA_INVALID).
    pub break_schema: bool,
    /// Answer every call with an A2A internal error (drives PEER_ERROR).
    pub fail: bool,
}

/// A config file that cannot be used; the message names file and field.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{file}: cannot read: {source}")]
    Read {
        /// The config file.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The YAML does not fit the shape (unknown or missing field, wrong
    /// type); serde's message names the field and line.
    #[error("{file}: {message}")]
    Parse {
        /// The config file.
        file: String,
        /// serde's message.
        message: String,
    },
    /// A field has a value that cannot work.
    #[error("{file}: field `{field}`: {message}")]
    Invalid {
        /// The config file.
        file: String,
        /// Path of the field (`skills[0].table`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl PeerConfig {
    /// Reads and validates the file at `path`. A relative CSV path is
    /// resolved against the file's directory so the config works from any
    /// working directory.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            file: file.clone(),
            source,
        })?;
        let mut config = Self::parse(&text, &file)?;
        if let DatasetConfig::Csv { path: csv, .. } = &mut config.dataset {
            if csv.is_relative() {
                if let Some(dir) = path.parent() {
                    *csv = dir.join(&*csv);
                }
            }
        }
        Ok(config)
    }

    /// Parses and validates YAML text; `file` only labels the errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, ConfigError> {
        let config: PeerConfig = serde_yaml_ng::from_str(text).map_err(|e| ConfigError::Parse {
            file: file.to_string(),
            message: describe_yaml_error(&e),
        })?;
        config.validate(file)?;
        Ok(config)
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

    /// Checks meaning beyond shape; the first problem found is reported.
    pub fn validate(&self, file: &str) -> Result<(), ConfigError> {
        let bad = |field: &str, message: String| ConfigError::Invalid {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        if !exchange::id::is_valid(&self.system) {
            return Err(bad(
                "system",
                format!(
                    "`{}`: {}",
                    self.system,
                    exchange::id::rule_for("a system id")
                ),
            ));
        }
        if self.name.trim().is_empty() {
            return Err(bad("name", "must not be empty".into()));
        }
        self.listen_addr().map_err(|m| bad("listen", m))?;
        if let Some(url) = &self.public_url {
            if !is_http_url(url) {
                return Err(bad(
                    "public_url",
                    format!("`{url}` must start with http:// or https://"),
                ));
            }
        }
        if self.token_env.is_empty()
            || !self
                .token_env
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(bad(
                "token_env",
                format!("`{}` must be an env var name (A-Z, 0-9, _)", self.token_env),
            ));
        }
        if !is_http_url(&self.hub_url) {
            return Err(bad(
                "hub_url",
                format!("`{}` must start with http:// or https://", self.hub_url),
            ));
        }
        if self.database.as_os_str().is_empty() {
            return Err(bad("database", "must not be empty".into()));
        }
        match &self.dataset {
            DatasetConfig::Orders { rows, .. } | DatasetConfig::Tickets { rows, .. } => {
                if *rows == 0 || *rows > 1_000_000 {
                    return Err(bad(
                        "dataset.rows",
                        format!("{rows} must be between 1 and 1000000"),
                    ));
                }
            }
            DatasetConfig::Csv { path, table } => {
                if path.as_os_str().is_empty() {
                    return Err(bad("dataset.path", "must not be empty".into()));
                }
                if !is_sql_identifier(table) {
                    return Err(bad(
                        "dataset.table",
                        format!("`{table}` must be a plain identifier (letters, digits, _)"),
                    ));
                }
                if matches!(
                    table.as_str(),
                    "audit_trail" | "approval_inbox" | "dataset_meta"
                ) {
                    return Err(bad(
                        "dataset.table",
                        format!("`{table}` is reserved by the peer"),
                    ));
                }
            }
            DatasetConfig::Budgets { .. } => {}
        }
        if self.skills.is_empty() {
            return Err(bad(
                "skills",
                "a peer must provide at least one capability".into(),
            ));
        }
        for (i, skill) in self.skills.iter().enumerate() {
            let field = |name: &str| format!("skills[{i}].{name}");
            if !exchange::id::is_valid(&skill.capability) {
                return Err(bad(
                    &field("capability"),
                    format!(
                        "`{}` must be lowercase words joined by `.` (e.g. orders.query)",
                        skill.capability
                    ),
                ));
            }
            if self.skills[..i]
                .iter()
                .any(|s| s.capability == skill.capability)
            {
                return Err(bad(
                    &field("capability"),
                    format!("`{}` is listed twice", skill.capability),
                ));
            }
            if skill.handler.kind() != skill.kind {
                return Err(bad(
                    &field("kind"),
                    format!(
                        "handler {} serves {} capabilities, not {}",
                        skill.handler.as_str(),
                        skill.handler.kind().as_str(),
                        skill.kind.as_str()
                    ),
                ));
            }
            match skill.handler {
                Handler::TableQuery => match &skill.table {
                    None => {
                        return Err(bad(
                            &field("table"),
                            "table_query needs the table it reads".into(),
                        ))
                    }
                    Some(t) if t != self.dataset.table() => {
                        return Err(bad(
                            &field("table"),
                            format!(
                                "`{t}` is not this peer's dataset table `{}`",
                                self.dataset.table()
                            ),
                        ))
                    }
                    Some(_) => {
                        if skill.granted_columns.is_empty() {
                            return Err(bad(
                                &field("granted_columns"),
                                "table_query needs granted_columns: the columns a caller may \
                                 name; nothing else of the table is readable"
                                    .into(),
                            ));
                        }
                        for (j, c) in skill.granted_columns.iter().enumerate() {
                            if !is_sql_identifier(c) {
                                return Err(bad(
                                    &format!("{}[{j}]", field("granted_columns")),
                                    format!("`{c}` is not a column name"),
                                ));
                            }
                        }
                    }
                },
                _ if !skill.granted_columns.is_empty() => {
                    return Err(bad(
                        &field("granted_columns"),
                        format!(
                            "only a table_query grants columns, not {}",
                            skill.handler.as_str()
                        ),
                    ));
                }
                Handler::BudgetConsult => {
                    if !matches!(self.dataset, DatasetConfig::Budgets { .. }) {
                        return Err(bad(
                            &field("handler"),
                            format!(
                                "budget_consult needs dataset kind budgets, not {}",
                                self.dataset.kind()
                            ),
                        ));
                    }
                }
                Handler::TicketClassify => {
                    if !matches!(self.dataset, DatasetConfig::Tickets { .. }) {
                        return Err(bad(
                            &field("handler"),
                            format!(
                                "ticket_classify needs dataset kind tickets, not {}",
                                self.dataset.kind()
                            ),
                        ));
                    }
                }
            }
        }
        for (i, c) in self.consumes.iter().enumerate() {
            if !exchange::id::is_valid(c) {
                return Err(bad(
                    &format!("consumes[{i}]"),
                    format!("`{c}` is not a capability id"),
                ));
            }
        }
        for (i, a) in self.agents.iter().enumerate() {
            if !exchange::id::is_valid(&a.id) {
                return Err(bad(
                    &format!("agents[{i}].id"),
                    format!("`{}` must be lowercase letters, digits, `-` or `_`", a.id),
                ));
            }
        }
        if self.faults.stall_ms > 600_000 {
            return Err(bad("faults.stall_ms", "must be at most 600000".into()));
        }
        Ok(())
    }
}

/// serde_yaml_ng's message already names the field (`unknown field
/// `colour``, `missing field `system``) and the line; keep it whole.
fn describe_yaml_error(e: &serde_yaml_ng::Error) -> String {
    e.to_string()
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
    granted_columns: [region, order_date, order_value, product]
agents: [ {id: data-steward, name: "Data Steward"} ]
"#;

    fn err(text: &str) -> String {
        PeerConfig::parse(text, "peers/x.yaml")
            .unwrap_err()
            .to_string()
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
        assert!(e.starts_with("peers/x.yaml: "), "{e}");
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn unknown_dataset_field_is_named() {
        let e = err(&GOOD.replace("rows: 624", "rowz: 624"));
        assert!(e.contains("rowz"), "{e}");
    }

    #[test]
    fn missing_field_is_named() {
        let e = err(&GOOD.replace("token_env: WS_TOKEN_VENDORCORP\n", ""));
        assert!(e.contains("token_env"), "{e}");
    }

    #[test]
    fn semantic_errors_name_the_field() {
        let cases = [
            (
                GOOD.replace("listen: 127.0.0.1:3101", "listen: nowhere"),
                "`listen`",
            ),
            (
                GOOD.replace("system: vendorcorp", "system: Vendor Corp"),
                "`system`",
            ),
            (
                GOOD.replace("table: orders", "table: budgets"),
                "`skills[0].table`",
            ),
            (
                GOOD.replace("kind: data-share", "kind: consult"),
                "`skills[0].kind`",
            ),
            (
                GOOD.replace("hub_url: http://127.0.0.1:3000", "hub_url: 127.0.0.1:3000"),
                "`hub_url`",
            ),
            (
                GOOD.replace("token_env: WS_TOKEN_VENDORCORP", "token_env: ws-token"),
                "`token_env`",
            ),
            (GOOD.replace("rows: 624", "rows: 0"), "`dataset.rows`"),
            (
                GOOD.replace(
                    "handler: table_query\n    table: orders",
                    "handler: budget_consult",
                ),
                "`skills[0]",
            ),
            (
                GOOD.replace(
                    "    granted_columns: [region, order_date, order_value, product]\n",
                    "",
                ),
                "`skills[0].granted_columns`",
            ),
            (
                GOOD.replace("[region, order_date,", "[region, \"date; drop\","),
                "`skills[0].granted_columns[1]`",
            ),
        ];
        for (text, field) in cases {
            let e = err(&text);
            assert!(e.contains(field), "expected {field} in: {e}");
            assert!(e.starts_with("peers/x.yaml: "), "{e}");
        }
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
