//! What a run is made of, for everyone who starts one, runs it, records it
//! or shows it: the [`Task`] a specialist hands the orchestrator, each
//! [`Step`] of the run, and the finished [`Run`] with its [`RunOutcome`].

use serde_json::Value;

use super::tools::{Observation, ToolSet};
use super::Runner;

/// What a specialist asks of one run.
#[derive(Debug, Clone)]
pub struct Task<'a> {
    /// The specialist's tier, bounds and prompts.
    pub runner: &'a Runner,
    /// The language of the prompts (the browser's).
    pub lang: &'a str,
    /// What the model may call.
    pub tools: ToolSet,
    /// The specialist's task text, filled in.
    pub task: String,
    /// JSON Schema of the final answer.
    pub final_schema: &'a Value,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunOutcome {
    /// A final answer that passed the schema.
    Answered,
    /// Unusable replies or an endpoint error.
    Failed,
    /// The deadline passed.
    Deadline,
    /// `max_steps` steps without a final answer.
    StepsExhausted,
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Run {
    /// The trace every step and every tool call of the run carries.
    pub trace_id: String,
    pub outcome: RunOutcome,
    /// What ended it, in the hub's words.
    pub detail: String,
    pub elapsed_ms: u64,
    pub steps: Vec<Step>,
    /// The final answer, when `Answered`.
    pub answer: Option<Value>,
}

/// One thought → tool call → observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub n: u32,
    /// The model's thought (its words: untrusted).
    pub thought: Option<String>,
    /// The tool the model asked for; `None` for the final answer.
    pub tool: Option<String>,
    pub arguments: Option<serde_json::Value>,
    pub observation: Option<Observation>,
    /// Why the hub refused the call, in code.
    pub refused: Option<String>,
    /// What was wrong with the first reply, when it was corrected.
    pub corrected: Option<String>,
    pub elapsed_ms: u64,
}
