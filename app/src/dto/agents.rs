//! The hub's own agents (DESIGN.md §5) as the canvas offers them: which
//! are on, the recommender's suggestions, the interpreter's sentence, and
//! an orchestrator run's transcript. Built by the hub's `web::bff::agents`
//! and its `agents`.

use serde::{Deserialize, Serialize};

use super::topology::CapabilityKind;
use super::untrusted::UntrustedText;

/// `GET /api/agents`: which of the hub's own agents (DESIGN.md §5) the
/// canvas offers. An agent that is off, or that has no rule path and no
/// model tier (the interpreter), is `false` and its entry is not drawn;
/// the narrator is not listed at all (it is not built). No endpoint, model
/// or key: only what decides what the canvas shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct AgentsView {
    /// Suggestions of legal, not-yet-made connections.
    pub recommender: bool,
    /// Whether the recommender's suggestions are ranked by a model.
    pub recommender_model: bool,
    /// One sentence about a node's redacted metrics (model only).
    pub interpreter: bool,
}

/// Who ordered a list of suggestions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankedBy {
    /// The registry's order (no model, or the model's run failed).
    Rules,
    /// A model ranked the registry's candidates.
    Model,
}

/// `GET /api/recommendations`: connections the registry allows that are
/// not made yet, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecommendationsView {
    pub suggestions: Vec<SuggestionView>,
    pub ranked_by: RankedBy,
    /// Why a model run did not rank them, when one was tried.
    pub note: Option<String>,
    /// The orchestrator's run behind the ranking, when a model ran.
    pub transcript: Option<TranscriptView>,
}

/// One suggested connection: accepting it is `POST /api/edges` with these
/// three ids, re-checked against the rules there like any drag.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuggestionView {
    /// The edge id it would get.
    pub edge: String,
    pub consumer: String,
    pub provider: String,
    pub capability: String,
    pub kind: CapabilityKind,
    /// The hub's own reason, from the registry.
    pub why: String,
    /// The model's explanation, when a model ranked it: model output is
    /// untrusted text (`from` names the tier).
    pub model_why: Option<UntrustedText>,
}

/// `POST /api/nodes/{id}/interpret`: one sentence about a node's redacted
/// metrics, or nothing (no tier: the canvas does not offer it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterpretationView {
    pub node: String,
    /// The sentence (model output: untrusted text).
    pub sentence: Option<UntrustedText>,
    /// Why there is no sentence, when a run was tried and failed.
    pub note: Option<String>,
    pub transcript: Option<TranscriptView>,
}

/// How an orchestrator run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcomeView {
    /// A final answer that passed every check.
    Answered,
    /// The model's replies were unusable (twice not valid JSON, an endpoint
    /// error) or its answer failed the checks.
    Failed,
    /// The run's deadline passed.
    Deadline,
    /// The step budget ran out without a final answer.
    StepsExhausted,
}

/// An orchestrator run, read-only: every step the hub's trail recorded
/// under `trace_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptView {
    pub trace_id: String,
    /// The specialist that built the run (`recommender`, `interpreter`).
    pub agent: String,
    pub outcome: RunOutcomeView,
    /// What ended it, in the hub's words.
    pub detail: String,
    pub elapsed_ms: u64,
    pub steps: Vec<StepView>,
}

/// One thought → tool call → observation of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepView {
    /// 1-based.
    pub n: u32,
    /// The model's thought (untrusted text).
    pub thought: Option<UntrustedText>,
    /// The tool it asked for; `None` for the final answer.
    pub tool: Option<String>,
    /// The arguments, as JSON text.
    pub arguments: Option<String>,
    /// What the hub answered: a tool's redacted result, or why the call
    /// was refused.
    pub observation: Option<UntrustedText>,
    /// Set when the hub refused the tool call, in code.
    pub refused: Option<String>,
    /// Set when the model's first reply had to be corrected.
    pub corrected: Option<String>,
    pub elapsed_ms: u64,
}
