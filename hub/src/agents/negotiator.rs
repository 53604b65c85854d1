//! The hub's negotiation agent with a tier: the
//! model drafts the hub's proposal; the rules still apply after it, in
//! code.
//!
//! Without a tier the operator's request from the edge's drawer *is* the
//! proposal (`exchange::negotiator` then runs the protocol, as before).
//! With one, a one-step orchestrator run (no tools) drafts columns,
//! purpose and retention from the provider's published schema, and
//! [`draft`] holds the draft to the operator's request: only columns the
//! operator asked for and the provider publishes (the model may narrow,
//! never widen), every column the operator needs kept, never a
//! longer retention than the operator asked, the operator's purpose when
//! the model's is empty or too long. The negotiator that then talks to
//! the provider is the same deterministic one, so the protocol (one
//! corrective `request`, the validator on every reply) and the provider's
//! policy are untouched by the model.

use std::collections::BTreeSet;

use exchange::negotiator::Want;
use serde_json::{json, Value};

use super::orchestrator;
use super::run::{RunOutcome, Task};
use super::tools::{Context, ToolSet};
use super::{AgentName, Agents};

fn draft_schema() -> Value {
    json!({
        "type": "object",
        "required": ["columns", "purpose", "retention_days"],
        "additionalProperties": false,
        "properties": {
            "columns": {"type": "array", "items": {"type": "string"}, "maxItems": 64},
            "purpose": {"type": "string"},
            "retention_days": {"type": "integer", "minimum": 1}
        }
    })
}

/// The proposal the hub sends: the operator's `want`, or the model's
/// draft of it held to the operator's request. The second value says
/// what the model changed, for the log.
pub async fn draft(
    agents: &Agents,
    ctx: &Context,
    lang: &str,
    provider: &str,
    capability: &str,
    want: Want,
    published: &BTreeSet<String>,
) -> (Want, Option<String>) {
    let Some(runner) = agents.runner(AgentName::Negotiator) else {
        return (want, None);
    };
    let task_text = runner
        .set
        .prompt(lang, "negotiator")
        .replace("{capability}", capability)
        .replace("{provider}", provider)
        .replace("{required}", &want.required.join(", "))
        .replace(
            "{published}",
            &published.iter().cloned().collect::<Vec<_>>().join(", "),
        );
    let schema = draft_schema();
    let run = orchestrator::run(
        Task {
            runner: &runner,
            lang,
            tools: ToolSet::of(&[]),
            task: task_text,
            final_schema: &schema,
        },
        ctx,
    )
    .await;
    if run.outcome != RunOutcome::Answered {
        return (
            want,
            Some(format!("the model's draft was not used: {}", run.detail)),
        );
    }
    let answer = run.answer.unwrap_or_default();
    let held = hold(&want, &answer, published);
    let note = format!(
        "proposal drafted by the model (trace {}): columns {:?}, retention {} days",
        run.trace_id, held.columns, held.retention_days
    );
    (held, Some(note))
}

/// The model's draft `answer`, held to the operator's `want` and the
/// provider's `published` columns.
fn hold(want: &Want, answer: &Value, published: &BTreeSet<String>) -> Want {
    let mut columns: Vec<String> = answer["columns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|c| published.contains(*c) && want.columns.iter().any(|w| w == c))
        .map(str::to_string)
        .collect();
    for c in &want.required {
        if !columns.contains(c) {
            columns.push(c.clone());
        }
    }
    columns.sort();
    columns.dedup();
    let purpose = answer["purpose"]
        .as_str()
        .map(str::trim)
        .unwrap_or_default();
    let purpose = if purpose.is_empty() || purpose.len() > 300 {
        want.purpose.clone()
    } else {
        purpose.to_string()
    };
    let retention_days = answer["retention_days"]
        .as_u64()
        .map_or(want.retention_days, |d| d.clamp(1, want.retention_days));
    Want {
        columns,
        required: want.required.clone(),
        purpose,
        retention_days,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draft_is_held_to_the_request_and_the_schema() {
        let want = Want {
            columns: vec!["region".into(), "amount".into()],
            required: vec!["region".into(), "amount".into()],
            purpose: "drawer totals".into(),
            retention_days: 30,
        };
        let published: BTreeSet<String> = ["region", "amount", "order_id"].map(String::from).into();
        let answer = json!({"columns": ["region", "email", "order_id"], "purpose": "", "retention_days": 365});
        let held = hold(&want, &answer, &published);
        // `email` is not published, `order_id` was not asked for.
        assert_eq!(held.columns, ["amount", "region"]);
        assert_eq!(held.purpose, "drawer totals");
        assert_eq!(held.retention_days, 30);
        assert_eq!(held.required, want.required);
    }
}
