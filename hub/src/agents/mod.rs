//! The hub's own agents (DESIGN.md §5): a small multi-agent
//! system whose model tiers come from config and whose prompts come from
//! a library, and which works without any model.
//!
//! Dispatch starts at the BFF's routes, not here: a route picks a
//! specialist, and the specialist builds the orchestrator for its run.
//!
//! | module | where it is decided |
//! |---|---|
//! | [`config`] | which agents are on, which tier each uses, their bounds (`config/agents.yaml`) |
//! | [`recommender`] | which legal, not-yet-made connections to suggest (the registry's intersection; a model only ranks it) |
//! | [`candidates`] | the legal connections nobody has made yet: the registry's intersection the recommender suggests from and a run's tool lists |
//! | [`interpreter`] | one sentence about a node's redacted metrics (model only: no rule path) |
//! | [`orchestrator`] | the bounded ReAct loop: thought → one tool call → observation, steps and deadline |
//! | [`run`] | what a run is made of: the task a specialist hands the orchestrator, its steps, how it ended |
//! | [`tools`] | what a run may call: read-only tools only, refused in code otherwise |
//! | [`transcript`] | every step in the hub's trail under one trace id, and the read-only view of a run |
//! | [`negotiator`] | the hub's contract proposal, drafted by a model when it has a tier |
//!
//! The model client itself (tiers, retries, JSON replies, provider
//! quirks) and the prompt library are `exchange::model` and
//! `exchange::prompts`, shared with every agent built from this
//! repository. With no tier configured nothing here calls a model: the
//! recommender answers from the registry, the interpreter is absent, the
//! orchestrator short-circuits before its loop.

pub mod candidates;
pub mod config;
pub mod interpreter;
pub mod negotiator;
pub mod orchestrator;
pub mod recommender;
pub mod run;
pub mod tools;
pub mod transcript;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use app::dto::{AgentsView, HubEvent};
use arc_swap::ArcSwap;
use exchange::model::{ModelClient, Tier};
use exchange::prompts::{PromptError, PromptLibrary};

pub use config::{AgentName, AgentSettings, AgentsFile};

use crate::events::EventBus;

/// Every key the hub's agents read from the prompt library: each must
/// exist in English, checked at load.
pub const PROMPT_KEYS: [&str; 6] = [
    "orchestrator",
    "recommender",
    "interpreter",
    "negotiator",
    "corrective",
    "observation",
];

/// The capability of an agent's trail lines: `agent.<name>`. A node's
/// metrics leave these out (they are the hub's own work, not calls).
pub const CAPABILITY_PREFIX: &str = "agent.";

/// Why the agent config could not be used.
#[derive(Debug, thiserror::Error)]
pub enum AgentsError {
    /// The config file is missing or invalid (every problem located).
    #[error(transparent)]
    Config(#[from] exchange::located::FileError),
    /// The prompt library is unreadable or lacks a key in English.
    #[error(transparent)]
    Prompts(#[from] PromptError),
    /// The model client's HTTP stack could not be set up.
    #[error("building the model client: {0}")]
    Http(#[source] reqwest::Error),
}

/// One generation of the config: the file and the prompts it names, built
/// and swapped together.
#[derive(Debug, Clone)]
pub struct AgentSet {
    pub file: AgentsFile,
    pub prompts: PromptLibrary,
}

impl AgentSet {
    /// Reads the config at `path` and its prompt library.
    pub fn load(path: &Path) -> Result<Self, AgentsError> {
        let file = config::load_file(path)?;
        let prompts = PromptLibrary::load(&file.prompts)?;
        prompts.require(&file.prompts.display().to_string(), &PROMPT_KEYS)?;
        Ok(Self { file, prompts })
    }

    /// The prompt `key` in `lang`, English when `lang` lacks it (logged).
    pub fn prompt(&self, lang: &str, key: &str) -> String {
        match self.prompts.get(lang, key) {
            Some(p) => {
                if p.fell_back {
                    tracing::info!(lang, key, "prompt missing for this language; using en");
                }
                p.text.to_string()
            }
            // `require` checked every key at load; an unknown key is a bug
            // here, answered with nothing rather than a panic.
            None => {
                tracing::error!(key, "prompt key not in the library");
                String::new()
            }
        }
    }
}

/// The hub's agents: the current config generation, reloadable.
#[derive(Debug)]
pub struct Agents {
    source: Option<PathBuf>,
    current: ArcSwap<AgentSet>,
    http: reqwest::Client,
    events: EventBus,
}

impl Agents {
    /// Loads the config at `source`, or, without one, the deterministic
    /// default: every agent on its rule path, no tier, so no prompt is
    /// ever read (the library is empty).
    pub fn open(source: Option<PathBuf>, events: EventBus) -> Result<Self, AgentsError> {
        let set = match &source {
            Some(path) => AgentSet::load(path)?,
            None => AgentSet {
                file: AgentsFile::deterministic(PathBuf::new()),
                prompts: PromptLibrary::default(),
            },
        };
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(AgentsError::Http)?;
        Ok(Self {
            source,
            current: ArcSwap::from_pointee(set),
            http,
            events,
        })
    }

    /// The file it was loaded from, if any.
    pub fn source(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The current generation.
    pub fn snapshot(&self) -> Arc<AgentSet> {
        self.current.load_full()
    }

    /// Re-reads the file: a valid one replaces the current generation and
    /// canvases are told; an invalid one is logged with every problem and
    /// the running config stays.
    pub fn reload(&self) -> Result<(), AgentsError> {
        let Some(path) = &self.source else {
            return Ok(());
        };
        match AgentSet::load(path) {
            Ok(set) => {
                self.current.store(Arc::new(set));
                tracing::info!(file = %path.display(), "agent config reloaded");
                self.events.publish(HubEvent::AgentsChanged);
                Ok(())
            }
            Err(e) => {
                tracing::warn!("agent config not reloaded, the running one stays:\n{e}");
                Err(e)
            }
        }
    }

    /// A model client for the runs `name` builds, if it is on and has a
    /// tier (its own or the orchestrator's); `None` means "deterministic
    /// path", and nothing calls a model.
    pub fn runner(&self, name: AgentName) -> Option<Runner> {
        let set = self.snapshot();
        let settings = set.file.agents.get(name).clone();
        if !settings.enabled || !set.file.agents.orchestrator.enabled {
            return None;
        }
        let tier: Tier = set.file.effective_tier(name)?.clone();
        let client = ModelClient::new(tier, self.http.clone());
        Some(Runner {
            name,
            client,
            settings,
            set,
        })
    }

    /// What the canvas may offer.
    pub fn view(&self) -> AgentsView {
        let set = self.snapshot();
        let a = &set.file.agents;
        // `runner` is `Some` only for an agent that is on and has a tier.
        AgentsView {
            recommender: a.recommender.enabled,
            recommender_model: self.runner(AgentName::Recommender).is_some(),
            interpreter: self.runner(AgentName::Interpreter).is_some(),
        }
    }
}

/// Everything one model-backed run needs: the specialist that built it,
/// its bounds, a client for its tier, and the prompts of this generation.
#[derive(Debug, Clone)]
pub struct Runner {
    pub name: AgentName,
    pub client: ModelClient,
    pub settings: AgentSettings,
    pub set: Arc<AgentSet>,
}

impl Runner {
    /// Where the model's words come from, as untrusted text's `from`.
    pub fn source_label(&self) -> String {
        format!("model:{}", self.client.tier().id)
    }
}

/// Starts the watcher that re-reads the agent config when its file
/// changes (and on SIGHUP), like the topology's; `reloaded` runs after
/// each reload that took (the hub tells its other replicas).
pub fn watch(
    agents: Arc<Agents>,
    reloaded: impl Fn() + Send + Sync + 'static,
) -> tokio::task::JoinHandle<()> {
    match agents.source().map(Path::to_path_buf) {
        Some(path) => crate::registry::watch::spawn_for(path, "the agent config", move || {
            if agents.reload().is_ok() {
                reloaded();
            }
        }),
        None => tokio::spawn(async {}),
    }
}

/// The language of a browser request: the first tag of `Accept-Language`
/// (`zh-CN,zh;q=0.9` → `zh`), English when absent.
pub fn request_language(headers: &axum::http::HeaderMap) -> String {
    let first = headers
        .get(axum::http::header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|t| t.split(';').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    exchange::prompts::primary_subtag(&first)
}
