//! The meaning of a peer file, checked: what serde cannot see. Ids,
//! addresses and the token's env var name; the dataset; each skill's
//! handler against its kind, the dataset and the fields only some handlers
//! take; the listed consumers and agents; the data plane, the model tier
//! and the faults' bounds.
//!
//! [`PeerConfig::validate`] runs one check per concern, in file order, and
//! returns every problem located at its line through the text's
//! [`Locator`], never only the first. A check that an earlier problem makes
//! meaningless is skipped. No message repeats `token_env` or a URL: an
//! operator may have pasted a secret there. The loader (`super::load`) runs
//! this after serde accepted the file's shape.

use super::model::{DatasetConfig, Handler, PeerConfig, SkillConfig, SkillKind, MAX_WORK_MS};
use exchange::located::{Issue, Locator, Seg};
use std::net::SocketAddr;

/// Bounds of `max_deadline_ms`: 100 ms to one hour.
const MAX_DEADLINE_RANGE: std::ops::RangeInclusive<u64> = 100..=3_600_000;

/// What `hub_url` and `public_url` must be; the value itself is not
/// repeated (it may carry credentials).
const URL_RULE: &str = "must be an http:// or https:// URL";

impl PeerConfig {
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

        self.check_identity(&mut push);
        self.check_serve_tls(&mut push);
        self.check_hub_credentials(&mut push);
        let table_problem = self.check_dataset(&mut push);
        if self.skills.is_empty() {
            push(
                &[Seg::key("skills")],
                "a peer must provide at least one capability".into(),
            );
        }
        for (i, skill) in self.skills.iter().enumerate() {
            self.check_skill(&mut push, i, skill, table_problem.as_deref());
        }
        self.check_consumes_and_agents(&mut push);
        self.check_mcp(&mut push);
        self.check_model(&mut push);
        self.check_faults(&mut push);
        issues.sort_by_key(|i| (i.line, i.column));
        issues
    }

    /// The peer itself: its id and name, where it listens, its token's env
    /// var, the hub and its own store.
    fn check_identity(&self, push: &mut impl FnMut(&[Seg<'_>], String)) {
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
        if let Some(why) =
            env_var_name_problem(&self.token_env, "this peer's bearer token", "the token")
        {
            push(&key("token_env"), why);
        }
        if !is_http_url(&self.hub_url) {
            push(&key("hub_url"), URL_RULE.into());
        }
        if self.database.as_os_str().is_empty() {
            push(&key("database"), "must not be empty".into());
        }
    }

    /// The peer's own TLS (`tls`): no path may be empty. Whether the files
    /// exist is [`PeerConfig::check_files`]'s question; whether they hold
    /// a usable certificate, key and CA is the server's at start (it needs
    /// rustls).
    fn check_serve_tls(&self, push: &mut impl FnMut(&[Seg<'_>], String)) {
        let Some(tls) = &self.tls else {
            return;
        };
        for (field, path) in [
            ("cert", Some(&tls.cert)),
            ("key", Some(&tls.key)),
            ("client_ca", tls.client_ca.as_ref()),
        ] {
            if path.is_some_and(|p| p.as_os_str().is_empty()) {
                push(
                    &[Seg::key("tls"), Seg::key(field)],
                    "must not be empty".into(),
                );
            }
        }
    }

    /// What the peer presents to the hub: a client certificate comes with
    /// its key, TLS settings need an `https://` hub, and the OpenID
    /// provider's token endpoint, client id and secret's env var are
    /// usable. Whether the files exist is [`PeerConfig::check_files`]'s
    /// question (it needs the file's directory).
    fn check_hub_credentials(&self, push: &mut impl FnMut(&[Seg<'_>], String)) {
        if let Some(tls) = &self.hub_tls {
            let at = |field: &'static str| [Seg::key("hub_tls"), Seg::key(field)];
            for (field, path) in [("ca", &tls.ca), ("cert", &tls.cert), ("key", &tls.key)] {
                if path.as_ref().is_some_and(|p| p.as_os_str().is_empty()) {
                    push(&at(field), "must not be empty".into());
                }
            }
            match (&tls.cert, &tls.key) {
                (Some(_), None) => push(
                    &at("cert"),
                    "a client certificate needs its private key (`key`)".into(),
                ),
                (None, Some(_)) => push(
                    &at("key"),
                    "a private key needs its client certificate (`cert`)".into(),
                ),
                (None, None) if tls.ca.is_none() => push(
                    &[Seg::key("hub_tls")],
                    "names nothing: give the hub's CA (`ca`), a client certificate \
                     (`cert` and `key`), or both"
                        .into(),
                ),
                _ => {}
            }
            if is_http_url(&self.hub_url) && !self.hub_url.starts_with("https://") {
                push(
                    &[Seg::key("hub_tls")],
                    "hub_url is not https://: TLS settings would never be used".into(),
                );
            }
        }
        if let Some(oidc) = &self.hub_oidc {
            let at = |field: &'static str| [Seg::key("hub_oidc"), Seg::key(field)];
            if !is_http_url(&oidc.token_url) {
                push(&at("token_url"), URL_RULE.into());
            }
            if oidc.client_id.trim().is_empty() {
                push(&at("client_id"), "must not be empty".into());
            }
            if let Some(why) =
                env_var_name_problem(&oidc.client_secret_env, "the client secret", "the secret")
            {
                push(&at("client_secret_env"), why);
            }
            if oidc.scope.as_ref().is_some_and(|s| s.trim().is_empty()) {
                push(
                    &at("scope"),
                    "must not be empty (leave it out instead)".into(),
                );
            }
            if oidc.resource.as_ref().is_some_and(|r| r.trim().is_empty()) {
                push(
                    &at("resource"),
                    "must not be empty (leave it out instead)".into(),
                );
            }
        }
    }

    /// Files the config names beyond its dataset, once their paths were
    /// resolved ([`PeerConfig::load`]): each `tls` and `hub_tls` file must
    /// be a file that can be read. Every problem located in `text`, in file
    /// order.
    pub(super) fn check_files(&self, text: &str) -> Vec<Issue> {
        let loc = Locator::new(text);
        let mut files = Vec::new();
        if let Some(tls) = &self.tls {
            files.push(("tls", "cert", Some(&tls.cert)));
            files.push(("tls", "key", Some(&tls.key)));
            files.push(("tls", "client_ca", tls.client_ca.as_ref()));
        }
        if let Some(tls) = &self.hub_tls {
            files.push(("hub_tls", "ca", tls.ca.as_ref()));
            files.push(("hub_tls", "cert", tls.cert.as_ref()));
            files.push(("hub_tls", "key", tls.key.as_ref()));
        }
        let mut issues = Vec::new();
        for (section, field, path) in files {
            let Some(path) = path.filter(|p| !p.as_os_str().is_empty()) else {
                continue;
            };
            let problem = match std::fs::metadata(path) {
                Ok(m) if m.is_file() => None,
                Ok(_) => Some("is not a file"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("no such file"),
                Err(_) => Some("cannot be read"),
            };
            if let Some(problem) = problem {
                issues.push(loc.issue(
                    &[Seg::key(section), Seg::key(field)],
                    format!("{}: {problem}", path.display()),
                ));
            }
        }
        issues.sort_by_key(|i| (i.line, i.column));
        issues
    }

    /// The dataset's size or file, and its table name. Returns what is
    /// wrong with a CSV table name: comparing a skill's table with a name
    /// that cannot work would only add noise.
    fn check_dataset(&self, push: &mut impl FnMut(&[Seg<'_>], String)) -> Option<String> {
        let dataset = |field: &'static str| [Seg::key("dataset"), Seg::key(field)];
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
        table_problem
    }

    /// The `i`th skill: its capability id, its kind against its handler,
    /// what its handler needs, the fields its handler does not take, the
    /// dataset its handler answers over.
    fn check_skill(
        &self,
        push: &mut impl FnMut(&[Seg<'_>], String),
        i: usize,
        skill: &SkillConfig,
        table_problem: Option<&str>,
    ) {
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
            Handler::TableQuery => self.check_table_query(push, i, skill, table_problem),
            Handler::Negotiate => self.check_negotiate(push, i, skill),
            Handler::TicketTriage => check_task_times(push, i, skill),
            Handler::BudgetConsult | Handler::TicketClassify => {}
        }
        check_foreign_fields(push, i, skill);
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

    /// A `table_query` skill reads this peer's dataset table, within the
    /// columns it may ever grant.
    fn check_table_query(
        &self,
        push: &mut impl FnMut(&[Seg<'_>], String),
        i: usize,
        skill: &SkillConfig,
        table_problem: Option<&str>,
    ) {
        let at = |field: &'static str| item("skills", i, field);
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
        column_names(push, at("negotiable_columns"), &skill.negotiable_columns);
    }

    /// A `negotiate` skill names a `table_query` of this peer, and none of
    /// its personal columns is one that query may grant.
    fn check_negotiate(
        &self,
        push: &mut impl FnMut(&[Seg<'_>], String),
        i: usize,
        skill: &SkillConfig,
    ) {
        let at = |field: &'static str| item("skills", i, field);
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
        column_names(push, at("personal_columns"), &skill.personal_columns);
    }

    /// The ids of the capabilities it consumes and of its agents (an agent
    /// listed twice too).
    fn check_consumes_and_agents(&self, push: &mut impl FnMut(&[Seg<'_>], String)) {
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
    }

    /// The data plane listens on its own port and serves a `table_query`
    /// of this peer.
    fn check_mcp(&self, push: &mut impl FnMut(&[Seg<'_>], String)) {
        let Some(mcp) = &self.mcp else {
            return;
        };
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

    /// The model tier's own problems and the bound of one draft.
    fn check_model(&self, push: &mut impl FnMut(&[Seg<'_>], String)) {
        let Some(model) = &self.model else {
            return;
        };
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

    /// The injected stalls are bounded.
    fn check_faults(&self, push: &mut impl FnMut(&[Seg<'_>], String)) {
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
    }
}

/// A task skill's work time and life cap are within their bounds.
fn check_task_times(push: &mut impl FnMut(&[Seg<'_>], String), i: usize, skill: &SkillConfig) {
    let at = |field: &'static str| item("skills", i, field);
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

/// The fields only one kind of handler takes, set on a skill of another:
/// task times, granted columns, what a negotiation is about.
fn check_foreign_fields(push: &mut impl FnMut(&[Seg<'_>], String), i: usize, skill: &SkillConfig) {
    let at = |field: &'static str| item("skills", i, field);
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
        "audit_trail"
            | "audit_chain_head"
            | "audit_checkpoints"
            | "approval_inbox"
            | "dataset_meta"
            | "task_keys"
    ) {
        Some(format!("`{table}` is reserved by the peer"))
    } else {
        None
    }
}

/// What is wrong with the name of the env var holding `what`, if anything:
/// empty, or not an env var name (perhaps `secret` itself, which is then
/// not repeated).
fn env_var_name_problem(name: &str, what: &str, secret: &str) -> Option<String> {
    if name.trim().is_empty() {
        Some(format!("must name the env var holding {what}"))
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    {
        Some(format!(
            "must be an env var name (A-Z, 0-9, _), not {secret} itself"
        ))
    } else {
        None
    }
}

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
