//! The peer's A2A entry point: one `SendMessage` in, one `Message` out.
//!
//! A capability call is one data part `{"capability", "input"}` (see
//! [`exchange::wire`]). The executor reads the envelope from the request
//! headers (`crate::incoming`), applies the test faults, runs the skill, writes one Responder
//! record to the peer's own audit trail, and answers with a Message (not a
//! Task: `DefaultRequestHandler` returns the first Message event as the
//! `SendMessage` result). A text-only message, what a generic A2A client
//! sends, is answered too: as the question of the peer's first consult
//! skill, or with a description of the skills for a data-share-only peer.
//!
//! A call of a `task` skill (`ticket.triage`) is answered as a real A2A
//! task instead, with its own lifecycle, deadline and idempotency key:
//! [`crate::tasks`].

use crate::config::{AnswerAs, Handler, SkillConfig, SkillKind};
use crate::contracts::negotiate;
use crate::contracts::read::{self, Denied};
use crate::incoming::{caller_of, envelope_headers};
use crate::skills::{self, SkillError};
use crate::tasks::{self, PeerTaskStore, Tasks};
use crate::PeerState;
use a2a::{
    A2AError, Artifact, Message, Part, PartContent, StreamResponse, Task, TaskState, TaskStatus,
};
use a2a_server::{AgentExecutor, ExecutorContext};
use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::envelope::Envelope;
use exchange::telemetry;
use exchange::wire::{self, WireError};
use futures::stream::BoxStream;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// The capability recorded for a text-only message answered with help.
pub use exchange::wire::HELP_CAPABILITY;

/// The executor of one peer.
pub struct PeerExecutor {
    state: Arc<PeerState>,
    /// Task skills' running work, keys and store ([`crate::tasks`]).
    tasks: Arc<Tasks>,
}

impl PeerExecutor {
    /// An executor answering from `state`.
    pub fn new(state: Arc<PeerState>) -> Self {
        let tasks = Arc::new(Tasks::new(
            state.pool.clone(),
            state.trail.clone(),
            state.config.system.clone(),
        ));
        Self { state, tasks }
    }

    /// The task store `DefaultRequestHandler` must be built with: the
    /// executor reads it (a duplicate submission answers the stored task)
    /// and it decides a cancel against a finishing task
    /// ([`crate::tasks`]).
    pub fn task_store(&self) -> PeerTaskStore {
        PeerTaskStore(self.tasks.clone())
    }
}

impl AgentExecutor for PeerExecutor {
    fn execute(
        &self,
        ctx: ExecutorContext,
    ) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let state = self.state.clone();
        // A decision on a result that awaits acceptance.
        if let Some(stream) = tasks::decision_stream(&state, &self.tasks, &ctx) {
            return stream;
        }
        // A task skill's call is a real A2A task with a lifecycle.
        if let Some(capability) = tasks::task_capability(&state, &ctx) {
            return tasks::task_stream(state, self.tasks.clone(), capability, ctx);
        }
        Box::pin(futures::stream::once(
            async move { handle(state, ctx).await },
        ))
    }

    /// A message-answered call has no work to stop: a cancel just marks its
    /// (bookkeeping) task canceled. A task skill's work was stopped by the
    /// store's `begin_cancel` before this runs ([`crate::tasks`]).
    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        tasks::cancel_stream(ctx)
    }
}

/// What one call came to, before it is written to the trail.
struct Handled {
    capability: String,
    answer: Result<Answered, Refusal>,
    /// How the answer travels back (the skill's `answer`).
    answer_as: AnswerAs,
}

/// An answered call: the message, and what the trail says about it beyond
/// the version (the contract a read ran under, a negotiation's turn).
struct Answered {
    message: Message,
    trail: Option<String>,
}

impl From<Message> for Answered {
    fn from(message: Message) -> Self {
        Self {
            message,
            trail: None,
        }
    }
}

/// Who asks, in which conversation: what a contract is decided for.
struct Asker<'a> {
    /// The calling system (`X-Caller-System`, set by the hub that
    /// authenticated it).
    caller: &'a str,
    /// The A2A `contextId`: one negotiation.
    context_id: &'a str,
}

/// A refused call: the error for the caller, a payload-free detail for the
/// trail.
struct Refusal {
    error: A2AError,
    detail: String,
}

impl Refusal {
    /// A read the contract gate did not let run: a contract refusal goes
    /// back in the provider's own words, verbatim.
    fn from_denied(d: Denied) -> Self {
        let detail = d.trail_detail();
        match d {
            Denied::Refused { refusal, .. } => Refusal {
                error: A2AError::invalid_params(refusal.message),
                detail,
            },
            Denied::Invalid(e) => Refusal {
                detail,
                ..Refusal::from_skill(e)
            },
            Denied::Store(e) => Refusal {
                detail,
                ..Refusal::from_skill(SkillError::Internal(e.to_string()))
            },
        }
    }

    fn from_skill(e: SkillError) -> Self {
        match e {
            SkillError::InvalidParams { message, code } => Refusal {
                error: A2AError::invalid_params(message),
                detail: format!("invalid params: {code}"),
            },
            SkillError::Internal(detail) => {
                tracing::error!(%detail, "skill failed");
                Refusal {
                    error: A2AError::internal("the peer failed to answer; see its log"),
                    detail: "internal error".into(),
                }
            }
        }
    }
}

/// One call, in its `peer.execute` span (when traces are exported):
/// parented on the call's `traceparent` (the hub's forward span), so the
/// span's trace id is the envelope's.
async fn handle(state: Arc<PeerState>, ctx: ExecutorContext) -> Result<StreamResponse, A2AError> {
    let started = Instant::now();
    let mut headers = envelope_headers(&ctx.service_params);
    let caller = caller_of(&ctx.service_params);
    let span = telemetry::execute_span(&caller, &state.config.system);
    telemetry::continue_trace(&span, &mut headers);
    let env = Envelope::from_headers(&headers);
    telemetry::record(&span, "request_id", &env.request_id);
    answer_call(state, ctx, started, env, caller, span.clone())
        .instrument(span)
        .await
}

async fn answer_call(
    state: Arc<PeerState>,
    ctx: ExecutorContext,
    started: Instant,
    env: Envelope,
    caller: String,
    span: tracing::Span,
) -> Result<StreamResponse, A2AError> {
    let faults = &state.config.faults;
    if faults.stall_ms > 0 {
        tokio::time::sleep(Duration::from_millis(faults.stall_ms)).await;
    }
    let asker = Asker {
        caller: &caller,
        context_id: &ctx.context_id,
    };
    let handled = match &ctx.message {
        Some(message) => answer(&state, message, &asker).await,
        None => Handled {
            capability: "unknown".into(),
            answer: Err(Refusal {
                error: A2AError::invalid_params("the request carries no message"),
                detail: "invalid params: no_message".into(),
            }),
            answer_as: AnswerAs::Message,
        },
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (outcome, detail) = match &handled.answer {
        Ok(a) => (
            Outcome::Executed,
            match &a.trail {
                Some(t) => format!("{t}; a2a-version {}", short(&env.version)),
                None => format!("a2a-version {}", short(&env.version)),
            },
        ),
        Err(r) => (Outcome::Refused, r.detail.clone()),
    };
    let record = AuditRecord {
        system: state.config.system.clone(),
        role: Role::Responder,
        at: exchange::audit::now(),
        caller: caller.clone(),
        provider: state.config.system.clone(),
        capability: handled.capability.clone(),
        request_id: env.request_id.clone(),
        trace_id: env.trace.trace_id.clone(),
        outcome,
        reason: None,
        duration_ms,
        detail,
    };
    if let Err(e) = state.trail.append(record).await {
        // The answer still goes out: a caller must not hang on our trail.
        tracing::error!(error = %e, "could not append to the audit trail");
    }
    telemetry::record(&span, "capability", &handled.capability);
    match &handled.answer {
        Ok(_) => telemetry::record_outcome(&span, "executed"),
        Err(_) => telemetry::record_outcome(&span, "refused"),
    }
    tracing::info!(
        capability = %handled.capability,
        caller = %caller,
        request_id = %env.request_id,
        trace_id = %env.trace.trace_id,
        outcome = ?outcome,
        duration_ms,
        "call answered"
    );
    match (handled.answer, handled.answer_as) {
        (Ok(Answered { mut message, .. }), AnswerAs::Message) => {
            message.context_id = Some(ctx.context_id.clone());
            Ok(StreamResponse::Message(message))
        }
        (Ok(a), AnswerAs::Task) => Ok(StreamResponse::Task(completed_task(
            &ctx,
            &handled.capability,
            a.message,
        ))),
        (Err(r), _) => Err(r.error),
    }
}

/// A completed task for a skill that answers with one: the result as its
/// artifact (named after the capability), the call in its history.
fn completed_task(ctx: &ExecutorContext, capability: &str, answer: Message) -> Task {
    let mut status_message = Message::new(
        a2a::Role::Agent,
        answer
            .parts
            .iter()
            .filter(|p| matches!(p.content, PartContent::Text(_)))
            .cloned()
            .collect(),
    );
    status_message.task_id = Some(ctx.task_id.clone());
    status_message.context_id = Some(ctx.context_id.clone());
    Task {
        id: ctx.task_id.clone(),
        context_id: ctx.context_id.clone(),
        status: TaskStatus {
            state: TaskState::Completed,
            message: (!status_message.parts.is_empty()).then_some(status_message),
            timestamp: None,
        },
        artifacts: Some(vec![Artifact {
            artifact_id: a2a::new_artifact_id(),
            name: Some(capability.to_string()),
            description: None,
            parts: answer.parts,
            metadata: None,
            extensions: None,
        }]),
        history: ctx.message.clone().map(|m| vec![m]),
        metadata: None,
    }
}

async fn answer(state: &PeerState, message: &Message, asker: &Asker<'_>) -> Handled {
    if let Some(media) = wire::unaccepted_media_type(message) {
        let mut error = A2AError::content_type_not_supported();
        error.message = format!(
            "{} accepts parts of {}, not {}",
            state.config.system,
            wire::ACCEPTED_MEDIA_TYPES.join(", "),
            if media.is_empty() {
                "a file without a media type"
            } else {
                &media
            }
        );
        return Handled {
            capability: "unknown".into(),
            answer: Err(Refusal {
                error,
                detail: "content type not supported".into(),
            }),
            answer_as: AnswerAs::Message,
        };
    }
    let (capability, input) = match wire::parse_call(message) {
        Ok(call) => call,
        Err(WireError::NoDataPart) => return answer_text(state, message, asker).await,
        Err(e) => {
            return Handled {
                capability: "unknown".into(),
                answer: Err(Refusal {
                    error: A2AError::invalid_params(format!(
                    "{e}; a call is one data part {{\"capability\": \"<id>\", \"input\": {{...}}}}"
                )),
                    detail: "invalid params: no_capability".into(),
                }),
                answer_as: AnswerAs::Message,
            }
        }
    };
    let Some(skill) = state.config.skill(&capability) else {
        let known: Vec<&str> = state
            .config
            .skills
            .iter()
            .map(|s| s.capability.as_str())
            .collect();
        return Handled {
            answer: Err(Refusal {
                error: A2AError::invalid_params(format!(
                    "unknown capability {capability:?}; {} provides: {}",
                    state.config.system,
                    known.join(", ")
                )),
                detail: "invalid params: unknown_capability".into(),
            }),
            // The trail names only capabilities this peer has: an unknown
            // id is caller input and stays out.
            capability: "unknown".into(),
            answer_as: AnswerAs::Message,
        };
    };
    Handled {
        answer: run(state, skill, &input, asker).await,
        capability: skill.capability.clone(),
        answer_as: skill.answer,
    }
}

async fn run(
    state: &PeerState,
    skill: &SkillConfig,
    input: &Value,
    asker: &Asker<'_>,
) -> Result<Answered, Refusal> {
    let faults = &state.config.faults;
    if faults.fail {
        return Err(Refusal {
            error: A2AError::internal("injected failure"),
            detail: "injected failure (faults.fail)".into(),
        });
    }
    if faults.break_schema {
        return Ok(wire::answer_message(
            json!({"unexpected": true}),
            Some("this answer breaks the contract on purpose (faults.break_schema)".into()),
        )
        .into());
    }
    let (result, text, trail) = match skill.handler {
        // A read of the dataset: the caller's contract decides, first.
        Handler::TableQuery => match read::read(state, skill, asker.caller, input).await {
            Ok(granted) => {
                let trail = granted.trail_detail();
                (granted.output.result, granted.output.text, Some(trail))
            }
            Err(denied) => return Err(Refusal::from_denied(denied)),
        },
        Handler::Negotiate => {
            let turn = negotiate::turn(state, skill, asker.caller, asker.context_id, input)
                .await
                .map_err(Refusal::from_skill)?;
            (turn.result, turn.text, Some(turn.trail))
        }
        // A consult reads the peer's own store and concludes.
        Handler::BudgetConsult => consulted(skills::budget::consult(&state.pool, input).await)?,
        Handler::TicketClassify => {
            consulted(skills::tickets::classify_input(&state.pool, input).await)?
        }
        // A task skill is answered by the task path, never as one message.
        Handler::TicketTriage => {
            return Err(Refusal::from_skill(SkillError::invalid(
                "task_skill",
                format!(
                    "{} is a task: send one data part {{\"capability\", \"input\"}}",
                    skill.capability
                ),
            )))
        }
    };
    let mut message = wire::answer_message(result, Some(text));
    sign(state, &mut message);
    Ok(Answered { message, trail })
}

/// Signs the answer's data part with the peer's card key, when it signs
/// (`sign_card`): the signature goes in the message's metadata, where the
/// hub's receipt carries it on ([`exchange::receipt::ANSWER_SIGNATURE_KEY`]).
fn sign(state: &PeerState, message: &mut Message) {
    let Some(signer) = state.signer.get() else {
        return;
    };
    let Some(data) = message.parts.iter().find_map(|p| match &p.content {
        a2a::PartContent::Data(d) => Some(d.clone()),
        _ => None,
    }) else {
        return;
    };
    match exchange::receipt::sign_answer(&signer.key, &signer.jku, &data) {
        Ok(jws) => {
            message
                .metadata
                .get_or_insert_with(Default::default)
                .insert(
                    exchange::receipt::ANSWER_SIGNATURE_KEY.to_string(),
                    Value::String(jws),
                );
        }
        Err(e) => tracing::warn!(error = %e, "answering unsigned"),
    }
}

/// A consult's answer as `run` takes it (no trail line beyond the version).
fn consulted(
    out: Result<skills::SkillOutput, SkillError>,
) -> Result<(Value, String, Option<String>), Refusal> {
    let out = out.map_err(Refusal::from_skill)?;
    Ok((out.result, out.text, None))
}

/// A text-only message: the question of the first consult skill, or help.
async fn answer_text(state: &PeerState, message: &Message, asker: &Asker<'_>) -> Handled {
    let text: String = message
        .parts
        .iter()
        .filter_map(|p| match &p.content {
            PartContent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if text.trim().is_empty() {
        return Handled {
            capability: "unknown".into(),
            answer: Err(Refusal {
                error: A2AError::invalid_params(
                    "the message has neither a data part {\"capability\", \"input\"} nor any text",
                ),
                detail: "invalid params: empty_message".into(),
            }),
            answer_as: AnswerAs::Message,
        };
    }
    if let Some(skill) = state
        .config
        .skills
        .iter()
        .find(|s| s.kind == SkillKind::Consult)
    {
        let input = json!({ "question": text });
        return Handled {
            capability: skill.capability.clone(),
            answer: run(state, skill, &input, asker).await,
            answer_as: skill.answer,
        };
    }
    Handled {
        capability: HELP_CAPABILITY.into(),
        answer: Ok(Message::new(a2a::Role::Agent, vec![Part::text(help_text(state))]).into()),
        answer_as: AnswerAs::Message,
    }
}

/// What a data-share-only peer says to a text message: its skills and a
/// call a client can copy.
pub fn help_text(state: &PeerState) -> String {
    let mut out = format!(
        "{} answers structured calls: send one data part {{\"capability\": \"<id>\", \"input\": {{...}}}}.",
        state.config.name
    );
    for s in &state.config.skills {
        out.push_str(&format!(
            "\n- {} ({}): {}",
            s.capability,
            s.kind.as_str(),
            crate::card::skill_description(s, &state.schema)
        ));
        out.push_str(&format!(
            "\n  sample data part: {}",
            crate::card::sample_call(s, &state.schema)
        ));
    }
    out
}

/// A version string fit for the trail (bounded, printable).
fn short(v: &str) -> String {
    v.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(16)
        .collect()
}
