//! The agent config file (DESIGN.md §5: "each agent's tier, model,
//! temperature and on/off live in one config file"), `config/agents.yaml`.
//!
//! Tiers name OpenAI-compatible endpoints ([`exchange::model::Tier`]: base
//! URL, model, the *name* of the env var holding the key, never a key).
//! Each agent says whether it is on, which tier it uses and its bounds.
//! A specialist without a tier of its own uses the orchestrator's (the
//! specialist builds the orchestrator: one run, one model). Changing a
//! model is an edit of this file; the hub re-reads it when it changes.
//!
//! Checked at load, every problem located at file:line:field like the
//! topology (`exchange::located`): unknown tiers, bad URLs and env var
//! names, bounds out of range, the narrator switched on before it exists,
//! and the interpreter switched on without a tier (it has no rule path).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use exchange::located::{parse_yaml, FileError, Issue, Locator, Seg};
use exchange::model::Tier;
use serde::Deserialize;

/// The whole file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsFile {
    /// File format version; only `1` exists.
    pub version: u32,
    /// The prompt library's directory, relative to this file.
    pub prompts: PathBuf,
    /// Model endpoints agents may use. Empty: no model anywhere.
    #[serde(default)]
    pub tiers: Vec<Tier>,
    /// Every agent of the hub, by name.
    pub agents: AgentsSection,
}

/// The hub's agents; every one must be present (a missing one is a typo
/// the loader names, not a silent default).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsSection {
    pub orchestrator: AgentSettings,
    pub recommender: AgentSettings,
    pub interpreter: AgentSettings,
    pub narrator: AgentSettings,
    pub negotiator: AgentSettings,
}

/// One agent's switches and bounds.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    pub enabled: bool,
    /// The tier it runs on; none: its deterministic path (or, for a
    /// specialist, the orchestrator's tier).
    #[serde(default)]
    pub tier: Option<String>,
    /// Overrides the tier's model.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub temperature: f32,
    /// Most thought → tool → observation steps of one run.
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// Most tokens of one completion.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// Wall-clock bound of one run, every model call and tool included.
    #[serde(default = "default_deadline_ms")]
    pub deadline_ms: u64,
}

fn default_max_steps() -> u32 {
    6
}
fn default_max_tokens() -> u32 {
    800
}
fn default_deadline_ms() -> u64 {
    20_000
}

/// The agents, by name (what a config path, a prompt key and a trail's
/// capability call them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentName {
    Orchestrator,
    Recommender,
    Interpreter,
    Narrator,
    Negotiator,
}

impl AgentName {
    /// Every agent, in file order.
    pub const ALL: [AgentName; 5] = [
        AgentName::Orchestrator,
        AgentName::Recommender,
        AgentName::Interpreter,
        AgentName::Narrator,
        AgentName::Negotiator,
    ];

    /// Its key in the file and in the prompt library.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentName::Orchestrator => "orchestrator",
            AgentName::Recommender => "recommender",
            AgentName::Interpreter => "interpreter",
            AgentName::Narrator => "narrator",
            AgentName::Negotiator => "negotiator",
        }
    }
}

impl AgentsSection {
    /// The settings of `name`.
    pub fn get(&self, name: AgentName) -> &AgentSettings {
        match name {
            AgentName::Orchestrator => &self.orchestrator,
            AgentName::Recommender => &self.recommender,
            AgentName::Interpreter => &self.interpreter,
            AgentName::Narrator => &self.narrator,
            AgentName::Negotiator => &self.negotiator,
        }
    }
}

impl AgentsFile {
    /// The tier a run built by `name` uses: its own, else the
    /// orchestrator's (the orchestrator's own runs use its own).
    pub fn effective_tier(&self, name: AgentName) -> Option<&Tier> {
        let own = self.agents.get(name).tier.as_deref();
        let id = own.or(self.agents.orchestrator.tier.as_deref())?;
        self.tiers.iter().find(|t| t.id == id)
    }

    /// The default deployment: every agent on its deterministic path, no
    /// tier, the interpreter and narrator off. What the hub runs with
    /// when it is given no agent config.
    pub fn deterministic(prompts: PathBuf) -> Self {
        let off = |enabled| AgentSettings {
            enabled,
            tier: None,
            model: None,
            temperature: 0.0,
            max_steps: default_max_steps(),
            max_tokens: default_max_tokens(),
            deadline_ms: default_deadline_ms(),
        };
        Self {
            version: 1,
            prompts,
            tiers: Vec::new(),
            agents: AgentsSection {
                orchestrator: off(true),
                recommender: off(true),
                interpreter: off(false),
                narrator: off(false),
                negotiator: off(true),
            },
        }
    }
}

/// Reads and checks the file at `path`; the prompt directory it names is
/// resolved against the file's directory.
pub fn load_file(path: &Path) -> Result<AgentsFile, FileError> {
    let text = FileError::read(path, "agent config")?;
    let mut file = load_str(&path.display().to_string(), &text)?;
    if file.prompts.is_relative() {
        let dir = path.parent().unwrap_or(Path::new("."));
        file.prompts = dir.join(&file.prompts);
    }
    Ok(file)
}

/// Parses and checks `text`; `file` is only used in messages.
pub fn load_str(file: &str, text: &str) -> Result<AgentsFile, FileError> {
    let invalid = |issues| FileError::Invalid {
        file: file.to_string(),
        issues,
    };
    let parsed: AgentsFile = parse_yaml(text).map_err(|issue| invalid(vec![issue]))?;
    let issues = validate(&parsed, &Locator::new(text));
    if issues.is_empty() {
        Ok(parsed)
    } else {
        Err(invalid(issues))
    }
}

fn validate(f: &AgentsFile, loc: &Locator) -> Vec<Issue> {
    let key = |k: &'static str| Seg::key(k);
    let mut issues = Vec::new();
    let mut push = |path: &[Seg], msg: String| issues.push(loc.issue(path, msg));
    if f.version != 1 {
        push(
            &[key("version")],
            format!("unsupported version {}; only version 1 exists", f.version),
        );
    }
    let mut ids = HashSet::new();
    for (i, t) in f.tiers.iter().enumerate() {
        let at = |k: &'static str| [key("tiers"), Seg::Index(i), key(k)];
        if exchange::id::is_valid(&t.id) && !ids.insert(t.id.as_str()) {
            push(&at("id"), format!("duplicate tier id `{}`", t.id));
        }
        for (field, problem) in t.problems() {
            push(&at(field), problem);
        }
    }
    for name in AgentName::ALL {
        let a = f.agents.get(name);
        let at = |k: &'static str| [key("agents"), key(name.as_str()), key(k)];
        if let Some(tier) = &a.tier {
            if !f.tiers.iter().any(|t| &t.id == tier) {
                push(
                    &at("tier"),
                    format!("unknown tier `{tier}` (tiers are listed under `tiers`)"),
                );
            }
        }
        if !(0.0..=2.0).contains(&a.temperature) {
            push(&at("temperature"), "must be between 0 and 2".into());
        }
        if !(1..=20).contains(&a.max_steps) {
            push(&at("max_steps"), "must be between 1 and 20".into());
        }
        if !(16..=32_768).contains(&a.max_tokens) {
            push(&at("max_tokens"), "must be between 16 and 32768".into());
        }
        if !(100..=300_000).contains(&a.deadline_ms) {
            push(
                &at("deadline_ms"),
                "must be between 100 and 300000 (5 minutes)".into(),
            );
        }
    }
    if f.agents.narrator.enabled {
        push(
            &[key("agents"), key("narrator"), key("enabled")],
            "the insight narrator is not implemented yet (cross-node narrative synthesis): keep it `enabled: false`".into(),
        );
    }
    let interp = &f.agents.interpreter;
    if interp.enabled && interp.tier.is_none() && f.agents.orchestrator.tier.is_none() {
        push(
            &[key("agents"), key("interpreter"), key("enabled")],
            "the data interpreter has no rule path: give it a `tier` (or the orchestrator one), or set `enabled: false`".into(),
        );
    }
    issues
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
