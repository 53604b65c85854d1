//! A run's record (DESIGN.md §2 "audit trail", §5): every step of an
//! orchestrator run is appended to the hub's own trail as it happens,
//! under the run's trace id — the same trace id the gateway's records of
//! the run's tool calls carry, so one run can be rebuilt from the trail —
//! and the finished run becomes the read-only [`TranscriptView`] the
//! canvas shows.
//!
//! A step's trail line holds the tool, its arguments, the timing, whether
//! it was refused and why, and the observation as the *browser* would see
//! it (already redacted by the data contract), clipped: never a token,
//! never a raw peer answer.

use std::time::Instant;

use app::dto::{RunOutcomeView, StepView, TranscriptView};
use exchange::untrusted::Untrusted;

use crate::redaction::view::untrusted_text;
use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::envelope::TraceParent;
use exchange::text::clip;

use super::run::{Run, RunOutcome, Step};
use super::tools::Context;
use super::{AgentName, CAPABILITY_PREFIX};

/// Longest observation a trail line keeps.
const TRAIL_OBSERVATION: usize = 1_000;
/// Longest text of a step a browser gets.
const VIEW_TEXT: usize = 4_000;

/// Appends a run's lines to the hub's trail.
#[derive(Debug)]
pub struct Recorder<'a> {
    ctx: &'a Context,
    agent: AgentName,
    trace_id: String,
    run_id: String,
}

impl<'a> Recorder<'a> {
    /// The recorder of one run.
    pub fn new(ctx: &'a Context, agent: AgentName, trace: &TraceParent) -> Self {
        Self {
            ctx,
            agent,
            trace_id: trace.trace_id.clone(),
            run_id: uuid::Uuid::new_v4().to_string(),
        }
    }

    async fn append(&self, tool: &str, outcome: Outcome, duration_ms: u64, detail: String) {
        let hub = self.ctx.registry.snapshot().topology.hub.id.clone();
        let record = AuditRecord {
            system: hub.clone(),
            role: Role::Hub,
            at: exchange::audit::now(),
            caller: hub.clone(),
            provider: hub,
            capability: format!("{CAPABILITY_PREFIX}{}", self.agent.as_str()),
            request_id: self.run_id.clone(),
            trace_id: self.trace_id.clone(),
            outcome,
            reason: None,
            duration_ms,
            detail: format!("{tool}: {detail}"),
        };
        if let Err(e) = self.ctx.audit.append(record).await {
            tracing::warn!(error = %e, "could not write an agent step to the trail");
        }
    }

    /// A step, as it ends.
    pub async fn step(&self, step: &Step) {
        let args = step
            .arguments
            .as_ref()
            .map(|a| clip(&a.to_string(), 300))
            .unwrap_or_default();
        let (outcome, what) = match (&step.tool, &step.refused, &step.observation) {
            (None, _, _) => (Outcome::Connected, "final answer".to_string()),
            (Some(_), Some(why), _) => (Outcome::Refused, format!("refused: {why}")),
            (Some(_), None, Some(obs)) => (
                if obs.not_connected.is_some() {
                    Outcome::NotConnected
                } else {
                    Outcome::Connected
                },
                format!(
                    "observation from {} ({} bytes): {}",
                    obs.from,
                    obs.for_browser.len(),
                    clip(&obs.for_browser, TRAIL_OBSERVATION)
                ),
            ),
            (Some(_), None, None) => (Outcome::Connected, String::new()),
        };
        let corrected = step
            .corrected
            .as_ref()
            .map(|c| format!(" (first reply corrected: {})", clip(c, 200)))
            .unwrap_or_default();
        self.append(
            &format!("step {}", step.n),
            outcome,
            step.elapsed_ms,
            format!(
                "{} {args} -> {what}{corrected}",
                step.tool.as_deref().unwrap_or("final")
            ),
        )
        .await;
    }

    /// The run's end.
    pub async fn end(&self, outcome: RunOutcome, detail: &str, started: Instant) {
        let o = match outcome {
            RunOutcome::Answered => Outcome::Connected,
            _ => Outcome::NotConnected,
        };
        self.append(
            "run",
            o,
            started.elapsed().as_millis() as u64,
            detail.to_string(),
        )
        .await;
    }
}

/// The read-only view of a finished run; the model's words are marked as
/// coming from `model` (the tier), each observation from who wrote it.
pub fn view(run: &Run, agent: AgentName, model: &str) -> TranscriptView {
    let text = |s: &str, from: &str| untrusted_text(&Untrusted::new(s, from), VIEW_TEXT);
    TranscriptView {
        trace_id: run.trace_id.clone(),
        agent: agent.as_str().to_string(),
        outcome: match run.outcome {
            RunOutcome::Answered => RunOutcomeView::Answered,
            RunOutcome::Failed => RunOutcomeView::Failed,
            RunOutcome::Deadline => RunOutcomeView::Deadline,
            RunOutcome::StepsExhausted => RunOutcomeView::StepsExhausted,
        },
        detail: run.detail.clone(),
        elapsed_ms: run.elapsed_ms,
        steps: run
            .steps
            .iter()
            .map(|s| StepView {
                n: s.n,
                thought: s.thought.as_deref().map(|t| text(t, model)),
                tool: s.tool.clone(),
                arguments: s
                    .arguments
                    .as_ref()
                    .map(|a| clip(&a.to_string(), VIEW_TEXT)),
                observation: s
                    .observation
                    .as_ref()
                    .map(|o| text(&o.for_browser, &o.from)),
                refused: s.refused.clone(),
                corrected: s.corrected.clone(),
                elapsed_ms: s.elapsed_ms,
            })
            .collect(),
    }
}
