//! The orchestrator: a bounded, lightweight ReAct loop over Wall Street's
//! own specialists (DESIGN.md §5).
//!
//! A specialist builds one for its run ([`Task`]): its tier and bounds
//! (the specialist's [`Runner`]), its tool set, its task text (from the
//! prompt library) and the schema its final answer must meet. Each step
//! the model answers one JSON object — a thought and either one tool
//! call or the final answer — through `exchange::model::json_reply`
//! (one corrective retry, then a clean failure). The tool call is admitted
//! by the run's [`ToolSet`] in code or refused; its observation is fed
//! back; the loop ends with a final answer that passes the schema, at
//! `max_steps`, or at the deadline, whichever comes first. Every step is
//! written to the hub's trail under the run's trace id as it happens
//! ([`super::transcript`]).
//!
//! With no tier there is no [`Runner`], so there is no run: the specialist
//! short-circuits to its deterministic path before anything here starts.
//!
//! [`Runner`]: super::Runner
//! [`ToolSet`]: super::tools::ToolSet

use std::time::{Duration, Instant};

use exchange::envelope::TraceParent;
use exchange::model::{json_reply, ChatRequest, Message, ReplyError, Role};
use serde_json::Value;

use super::run::{Run, RunOutcome, Step, Task};
use super::tools::{self, Context};
use super::transcript;

/// Runs `task` to its end.
pub async fn run(task: Task<'_>, ctx: &Context) -> Run {
    let started = Instant::now();
    let settings = &task.runner.settings;
    let deadline = started + Duration::from_millis(settings.deadline_ms);
    let trace = TraceParent::new_root();
    let set = &task.runner.set;
    let system = set
        .prompt(task.lang, "orchestrator")
        .replace("{tools}", &task.tools.names());
    let corrective_text = set.prompt(task.lang, "corrective");
    let observation_text = set.prompt(task.lang, "observation");
    let final_validator = match crate::contract::schema::compile("final_schema", task.final_schema)
    {
        Ok(v) => v,
        Err(e) => {
            return Run {
                trace_id: trace.trace_id.clone(),
                outcome: RunOutcome::Failed,
                detail: format!("the specialist's answer schema does not compile: {e}"),
                elapsed_ms: 0,
                steps: Vec::new(),
                answer: None,
            }
        }
    };
    let validate = |v: &Value| check_step(v, &final_validator);
    let corrective = |problem: &str| corrective_text.replace("{error}", problem);
    let mut req = ChatRequest {
        model: settings.model.clone(),
        messages: vec![
            Message::new(Role::System, system),
            Message::new(Role::User, task.task.clone()),
        ],
        temperature: settings.temperature,
        max_tokens: settings.max_tokens,
    };
    let recorder = transcript::Recorder::new(ctx, task.runner.name, &trace);
    let mut steps = Vec::new();
    let end = |steps: Vec<Step>, outcome, detail: String, answer| Run {
        trace_id: trace.trace_id.clone(),
        outcome,
        detail,
        elapsed_ms: started.elapsed().as_millis() as u64,
        steps,
        answer,
    };
    for n in 1..=settings.max_steps {
        let step_started = Instant::now();
        let reply = tokio::time::timeout_at(
            deadline.into(),
            json_reply(
                &task.runner.client,
                &mut req,
                deadline,
                &validate,
                &corrective,
            ),
        )
        .await;
        let reply = match reply {
            Err(_) | Ok(Err(ReplyError::Model(exchange::model::ModelError::Deadline))) => {
                let detail = format!(
                    "the run's deadline of {} ms passed during step {n}",
                    settings.deadline_ms
                );
                recorder.end(RunOutcome::Deadline, &detail, started).await;
                return end(steps, RunOutcome::Deadline, detail, None);
            }
            Ok(Err(e)) => {
                let detail = format!("step {n}: {e}");
                recorder.end(RunOutcome::Failed, &detail, started).await;
                return end(steps, RunOutcome::Failed, detail, None);
            }
            Ok(Ok(r)) => r,
        };
        let thought = reply
            .value
            .get("thought")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut step = Step {
            n,
            thought,
            tool: None,
            arguments: None,
            observation: None,
            refused: None,
            corrected: reply.corrected.clone(),
            elapsed_ms: 0,
        };
        if let Some(answer) = reply.value.get("final") {
            step.elapsed_ms = step_started.elapsed().as_millis() as u64;
            recorder.step(&step).await;
            steps.push(step);
            let detail = format!("answered in {n} step(s)");
            recorder.end(RunOutcome::Answered, &detail, started).await;
            return end(steps, RunOutcome::Answered, detail, Some(answer.clone()));
        }
        // `check_step` let through only an action with a string tool.
        let action = &reply.value["action"];
        let name = action["tool"].as_str().unwrap_or_default();
        let arguments = action.get("arguments").cloned().unwrap_or(Value::Null);
        step.tool = Some(exchange::text::clip(name, 64));
        step.arguments = Some(arguments.clone());
        let outcome = match task.tools.admit(name) {
            Err(refused) => Err(refused),
            Ok(tool) => {
                match tokio::time::timeout_at(
                    deadline.into(),
                    tools::run(ctx, tool, &arguments, &trace),
                )
                .await
                {
                    Ok(r) => r,
                    Err(_) => {
                        step.elapsed_ms = step_started.elapsed().as_millis() as u64;
                        recorder.step(&step).await;
                        steps.push(step);
                        let detail = format!(
                            "the run's deadline of {} ms passed during {name}",
                            settings.deadline_ms
                        );
                        recorder.end(RunOutcome::Deadline, &detail, started).await;
                        return end(steps, RunOutcome::Deadline, detail, None);
                    }
                }
            }
        };
        let body = match outcome {
            Ok(obs) => {
                let body = obs.for_model.clone();
                step.observation = Some(obs);
                body
            }
            Err(refused) => {
                let why = refused.to_string();
                step.refused = Some(why.clone());
                format!("refused: {why}")
            }
        };
        let tool_label = step.tool.clone().unwrap_or_default();
        req.messages.push(Message::new(
            Role::User,
            observation_text
                .replace("{n}", &n.to_string())
                .replace("{tool}", &tool_label)
                .replace("{body}", &body),
        ));
        step.elapsed_ms = step_started.elapsed().as_millis() as u64;
        recorder.step(&step).await;
        steps.push(step);
    }
    let detail = format!("no final answer within {} step(s)", settings.max_steps);
    recorder
        .end(RunOutcome::StepsExhausted, &detail, started)
        .await;
    end(steps, RunOutcome::StepsExhausted, detail, None)
}

/// One step's reply: an object with a string `thought` and exactly one of
/// `action` (`{"tool": string, "arguments": object?}`) or `final` (which
/// must pass the specialist's schema). What is wrong is said in words the
/// corrective message quotes.
fn check_step(v: &Value, final_validator: &jsonschema::Validator) -> Result<(), String> {
    let Some(obj) = v.as_object() else {
        return Err("the reply is not a JSON object".into());
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "thought" | "action" | "final"))
    {
        return Err(format!(
            "unexpected key {:?}: only thought, action, final",
            exchange::text::clip(k, 40)
        ));
    }
    if !obj.get("thought").is_some_and(Value::is_string) {
        return Err("`thought` must be a string".into());
    }
    match (obj.get("action"), obj.get("final")) {
        (Some(_), Some(_)) => Err("give either `action` or `final`, not both".into()),
        (None, None) => Err("give `action` (one tool call) or `final`".into()),
        (Some(a), None) => {
            if !a.get("tool").is_some_and(Value::is_string) {
                return Err("`action.tool` must be a tool name".into());
            }
            match a.get("arguments") {
                None | Some(Value::Object(_)) => Ok(()),
                Some(_) => Err("`action.arguments` must be an object".into()),
            }
        }
        (None, Some(f)) => {
            crate::contract::schema::first_violation(final_validator, f).map_err(|e| {
                format!(
                    "`final` breaks the answer's schema at {}: {}",
                    e.pointer, e.problem
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_step_is_a_thought_and_exactly_one_of_action_or_final() {
        let schema = json!({"type": "object", "required": ["sentence"], "properties": {"sentence": {"type": "string"}}});
        let v = crate::contract::schema::compile("final_schema", &schema).unwrap();
        let ok = |x: Value| check_step(&x, &v);
        assert_eq!(
            ok(
                json!({"thought": "t", "action": {"tool": "node_metrics", "arguments": {"node": "a"}}})
            ),
            Ok(())
        );
        assert_eq!(
            ok(json!({"thought": "t", "final": {"sentence": "s"}})),
            Ok(())
        );
        let e = ok(json!({"thought": "t", "final": {"words": "s"}})).unwrap_err();
        assert!(e.contains("missing required property \"sentence\""), "{e}");
        assert!(ok(json!({"thought": "t"}))
            .unwrap_err()
            .contains("give `action`"));
        assert!(
            ok(json!({"thought": "t", "action": {"tool": "x"}, "final": {}}))
                .unwrap_err()
                .contains("not both")
        );
        assert!(ok(json!({"action": {"tool": "x"}}))
            .unwrap_err()
            .contains("thought"));
        assert!(ok(json!({"thought": "t", "action": {"tool": 3}}))
            .unwrap_err()
            .contains("tool name"));
        assert!(
            ok(json!({"thought": "t", "action": {"tool": "x", "arguments": []}}))
                .unwrap_err()
                .contains("object")
        );
        assert!(
            ok(json!({"thought": "t", "role": "system", "final": {"sentence": "s"}}))
                .unwrap_err()
                .contains("unexpected key")
        );
    }
}
