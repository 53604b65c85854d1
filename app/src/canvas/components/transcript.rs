//! A run of the hub's orchestrator (DESIGN.md §5, the small ReAct loop),
//! read-only: how it ended, then every step the hub's trail recorded under
//! its trace id: the model's thought, the tool it asked for with its
//! arguments, what the hub answered, and whether the hub refused the call
//! or had to correct the model's reply.
//!
//! Thoughts and observations are untrusted text, shown inert and marked
//! "from \<source\>, unverified" like every peer's words. Nothing here is a
//! control: a long observation folds into a `<details>`, and expanding it
//! is the only thing a click does.

use leptos::prelude::*;

use crate::canvas::interaction::SceneCtx;
use crate::dto::{RunOutcomeView, StepView, TranscriptView, UntrustedText};
use crate::format::format_number;
use crate::untrusted::UntrustedBlock;

/// An observation longer than this (in characters) is folded.
const FOLD_CHARS: usize = 240;

/// An observation with more lines than this is folded.
const FOLD_LINES: usize = 4;

/// How much of a folded observation its summary shows.
const PREVIEW_CHARS: usize = 80;

/// The outcome's wire spelling: the transcript's `data-outcome` and CSS
/// class.
pub fn outcome_word(outcome: RunOutcomeView) -> &'static str {
    match outcome {
        RunOutcomeView::Answered => "answered",
        RunOutcomeView::Failed => "failed",
        RunOutcomeView::Deadline => "deadline",
        RunOutcomeView::StepsExhausted => "steps_exhausted",
    }
}

/// The outcome in words.
pub fn outcome_label(outcome: RunOutcomeView) -> &'static str {
    match outcome {
        RunOutcomeView::Answered => "answered",
        RunOutcomeView::Failed => "failed",
        RunOutcomeView::Deadline => "deadline passed",
        RunOutcomeView::StepsExhausted => "step budget used up",
    }
}

/// `1,234 ms`.
pub fn millis(ms: u64) -> String {
    format!("{} ms", format_number(ms as f64))
}

/// What a step called: its tool, or the final answer.
pub fn tool_label(tool: Option<&str>) -> &str {
    tool.unwrap_or("final answer")
}

/// A tool call's arguments as people read them: pretty-printed when they
/// are JSON, else as the hub recorded them.
pub fn pretty_arguments(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| arguments.to_string())
}

/// Whether an observation is long enough to fold.
pub fn folds(text: &str) -> bool {
    text.chars().count() > FOLD_CHARS || text.lines().count() > FOLD_LINES
}

/// The first line of `text`, cut to `max` characters (with `…` when cut).
pub fn preview(text: &str, max: usize) -> String {
    let whole = text.trim();
    let first = whole.lines().next().unwrap_or_default().trim_end();
    let cut: String = first.chars().take(max).collect();
    if cut.chars().count() < whole.chars().count() {
        format!("{}…", cut.trim_end())
    } else {
        cut
    }
}

/// A step's heading: `2 · lookup_rules · 120 ms`.
pub fn step_heading(step: &StepView) -> String {
    format!(
        "{} · {} · {}",
        step.n,
        tool_label(step.tool.as_deref()),
        millis(step.elapsed_ms)
    )
}

/// Untrusted words, named as the canvas names their source (the id when
/// there is no scene, or the scene does not draw it).
#[component]
fn Said(text: UntrustedText, testid: &'static str) -> impl IntoView {
    let from_name =
        use_context::<SceneCtx>().map_or_else(|| text.from.clone(), |s| s.name(&text.from));
    view! { <UntrustedBlock text from_name testid/> }
}

/// The run: its header, then its steps in order.
#[component]
pub(crate) fn Transcript(t: TranscriptView) -> impl IntoView {
    let word = outcome_word(t.outcome);
    let trace = t.trace_id.clone();
    let steps = if t.steps.is_empty() {
        view! { <p class="muted" data-testid="transcript-no-steps">"No step was recorded."</p> }
            .into_any()
    } else {
        let rows = t
            .steps
            .into_iter()
            .map(|step| view! { <Step step/> })
            .collect_view();
        view! { <ol class="run-steps">{rows}</ol> }.into_any()
    };
    view! {
        <div
            class=format!("run-transcript {word}")
            data-testid="transcript"
            data-outcome=word
            data-trace-id=trace
        >
            <header class="run-head">
                <p class="run-line">
                    <strong data-testid="transcript-agent">{t.agent}</strong>
                    <span class=format!("run-outcome {word}") data-testid="transcript-outcome">
                        {outcome_label(t.outcome)}
                    </span>
                    <span class="muted" data-testid="transcript-elapsed">{millis(t.elapsed_ms)}</span>
                </p>
                {(!t.detail.is_empty())
                    .then(|| view! { <p class="run-detail" data-testid="transcript-detail">{t.detail}</p> })}
                <p class="run-trace muted">
                    "trace " <code data-testid="transcript-trace">{t.trace_id}</code>
                </p>
            </header>
            {steps}
        </div>
    }
}

/// One thought → tool call → observation.
#[component]
fn Step(step: StepView) -> impl IntoView {
    let heading = step_heading(&step);
    let refused = step.refused.is_some();
    let thought = step
        .thought
        .map(|text| view! { <Said text testid="step-thought"/> });
    let call = step.tool.clone().map(|tool| {
        let args = step.arguments.as_deref().map(pretty_arguments);
        view! {
            <div class="step-call" data-testid="step-call">
                <code class="step-tool" data-testid="step-tool">{tool}</code>
                {args.map(|a| view! { <pre class="step-args" data-testid="step-arguments"><code>{a}</code></pre> })}
            </div>
        }
    });
    let refusal = step.refused.map(|why| {
        view! {
            <p class="step-refused" data-testid="step-refused" role="note">
                <strong>"Refused by the hub"</strong>
                " — "
                {why}
            </p>
        }
    });
    let corrected = step.corrected.map(|what| {
        view! {
            <p class="step-corrected" data-testid="step-corrected">
                "Reply corrected: " {what}
            </p>
        }
    });
    let observation = step.observation.map(|text| {
        if folds(&text.text) {
            let summary = preview(&text.text, PREVIEW_CHARS);
            view! {
                <details class="step-observation" data-testid="step-observation-fold">
                    <summary>"Observation: " <span class="muted">{summary}</span></summary>
                    <Said text testid="step-observation"/>
                </details>
            }
            .into_any()
        } else {
            view! {
                <div class="step-observation">
                    <Said text testid="step-observation"/>
                </div>
            }
            .into_any()
        }
    });
    view! {
        <li
            class=if refused { "run-step refused" } else { "run-step" }
            data-testid="transcript-step"
            data-n=step.n.to_string()
            data-refused=refused.to_string()
        >
            <p class="step-head" data-testid="step-head">{heading}</p>
            {thought}
            {call}
            {refusal}
            {corrected}
            {observation}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_words_are_the_wire_spelling() {
        for o in [
            RunOutcomeView::Answered,
            RunOutcomeView::Failed,
            RunOutcomeView::Deadline,
            RunOutcomeView::StepsExhausted,
        ] {
            assert_eq!(
                serde_json::to_value(o).ok(),
                Some(serde_json::Value::from(outcome_word(o)))
            );
        }
        assert_eq!(outcome_label(RunOutcomeView::Deadline), "deadline passed");
    }

    #[test]
    fn a_step_reads_as_number_tool_and_time() {
        let mut step = StepView {
            n: 2,
            thought: None,
            tool: Some("list_candidates".into()),
            arguments: Some(r#"{"limit":5}"#.into()),
            observation: None,
            refused: None,
            corrected: None,
            elapsed_ms: 1234,
        };
        assert_eq!(step_heading(&step), "2 · list_candidates · 1,234 ms");
        step.tool = None;
        assert_eq!(step_heading(&step), "2 · final answer · 1,234 ms");
    }

    #[test]
    fn arguments_are_pretty_printed_when_json() {
        assert_eq!(pretty_arguments(r#"{"limit":5}"#), "{\n  \"limit\": 5\n}");
        assert_eq!(pretty_arguments("not json"), "not json");
        assert_eq!(pretty_arguments(""), "");
    }

    #[test]
    fn long_observations_fold_with_a_preview() {
        assert!(!folds("short"));
        assert!(folds(&"x".repeat(FOLD_CHARS + 1)));
        assert!(folds("a\nb\nc\nd\ne"));
        assert_eq!(preview("one line", 80), "one line");
        assert_eq!(preview("first\nsecond", 80), "first…");
        assert_eq!(preview("abcdef", 3), "abc…");
        assert_eq!(preview("  padded  ", 80), "padded");
    }
}

/// The transcript as the server renders it: every part has its test id,
/// and untrusted words are escaped text, never markup.
#[cfg(all(test, feature = "ssr"))]
mod render_tests {
    use super::*;

    fn said(text: &str) -> UntrustedText {
        UntrustedText {
            text: text.into(),
            from: "model:small".into(),
        }
    }

    #[test]
    fn steps_refusals_and_words_render_inert() {
        let t = TranscriptView {
            trace_id: "4bf92f3577b34da6a3ce929d0e0e4736".into(),
            agent: "recommender".into(),
            outcome: RunOutcomeView::StepsExhausted,
            detail: "no final answer in 4 steps".into(),
            elapsed_ms: 812,
            steps: vec![
                StepView {
                    n: 1,
                    thought: Some(said("<b>look</b> at the rules")),
                    tool: Some("write_edge".into()),
                    arguments: Some(r#"{"edge":"a->b:x"}"#.into()),
                    observation: Some(said(&"long ".repeat(80))),
                    refused: Some("NOT_A_TOOL".into()),
                    corrected: Some("the first reply was not JSON".into()),
                    elapsed_ms: 10,
                },
                StepView {
                    n: 2,
                    thought: None,
                    tool: None,
                    arguments: None,
                    observation: Some(said("ok")),
                    refused: None,
                    corrected: None,
                    elapsed_ms: 5,
                },
            ],
        };
        let html = Owner::new().with(|| view! { <Transcript t/> }.to_html());
        assert!(html.contains(r#"data-testid="transcript""#), "{html}");
        assert!(html.contains(r#"data-outcome="steps_exhausted""#), "{html}");
        assert_eq!(html.matches(r#"data-testid="transcript-step""#).count(), 2);
        assert_eq!(html.matches(r#"data-testid="step-refused""#).count(), 1);
        assert!(html.contains(r#"data-testid="step-corrected""#), "{html}");
        // The long observation folds, the short one does not.
        assert_eq!(html.matches("<details").count(), 1);
        assert!(html.contains("from model:small, unverified"), "{html}");
        assert!(!html.contains("<b>look</b>"), "{html}");
        assert!(html.contains("&lt;b&gt;look&lt;/b&gt;"), "{html}");
        assert!(html.contains("final answer"), "{html}");
        // Nothing but the fold is a control.
        assert!(!html.contains("<button"), "{html}");
        assert!(!html.contains("<a "), "{html}");
    }
}
