//! The operations of the A2A surface, shared by both bindings (JSON-RPC
//! and HTTP+JSON): a binding parses its request into typed A2A params and
//! a [`Request`], calls one function here, and renders what comes back.
//!
//! Nothing here is a second pipeline. A message becomes one
//! [`Incoming`](crate::gateway::Incoming) and runs [`Gateway::run`], the
//! steps every binding shares (version, auth chain, rule, input contract,
//! replay, deadline, response contract, audit, status board); a task
//! operation runs [`Gateway::task`]. What is decided here is only how an
//! A2A message names its capability and carries its input ([`select`]),
//! and who the caller is ([`Request::caller`]).
//!
//! How a message names its capability (A2A has no field for "which
//! skill"), in this order:
//! 1. `metadata.skill` of the message, a skill id of the provider's card;
//! 2. the `capability` of its data part `{"capability", "input"}`, what the
//!    reference peers take;
//! 3. nothing, when the provider offers one capability.
//!
//! Naming two different ones is invalid params. The input is the data
//! part's `input` (or the whole data part when it names no capability);
//! a message with only text is a consult's question, `{"question": text}`.
//! A part that declares a JSON media type and carries its JSON inline (raw
//! bytes, text) is a data part ([`wire::data_of`]); one whose content
//! does not parse is invalid params naming the part.

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use futures::stream::BoxStream;
use futures::StreamExt;
use serde_json::{json, Value};

use super::errors::{code, SurfaceError};
use super::Surface;
use crate::auth::caller_by_token;
use crate::gateway::{
    Front, Incoming, Input, ProviderReply, TaskAsk, TaskIncoming, TaskOp, TaskRefusal, DEADLINE_KEY,
};
use crate::identity::Identity;
use crate::net::listen::Peer;
use crate::registry::model::{CapabilityKind, Topology};
use crate::registry::Loaded;
use a2a::{
    GetTaskRequest, Message, PartContent, SendMessageRequest, SendMessageResponse, Task, TaskState,
};
use exchange::acceptance;
use exchange::envelope::{Envelope, CALLER_HEADER, REQUEST_ID_HEADER};
use exchange::reason::{CallResult, NotConnected, ReasonCode};
use exchange::receipt;
use exchange::text::clip;
use exchange::wire;

/// The message metadata key that names a skill.
pub const SKILL_METADATA_KEY: &str = "skill";

/// How often a subscription to a running task asks its provider.
const SUBSCRIBE_POLL: Duration = Duration::from_millis(250);
/// How long a subscription follows a task before it ends the stream.
const SUBSCRIBE_FOR: Duration = Duration::from_secs(60);

/// One request to a provider's surface, as a binding read it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The provider the path names.
    pub provider: String,
    /// The TCP peer, for the IP allowlist.
    pub peer: Peer,
    /// Request headers (token, envelope, optional `X-Caller-System`).
    pub headers: HeaderMap,
}

impl Request {
    /// The request an HTTP request to `provider`'s surface is (its head
    /// only: the body is the binding's to read).
    pub fn of(provider: String, http: &axum::extract::Request) -> Self {
        Request {
            provider,
            peer: Peer::of(http),
            headers: http.headers().clone(),
        }
    }

    /// Who calls: the system the bearer token names. `X-Caller-System` is
    /// optional; if sent, it is the claim the auth chain checks, so a
    /// token of one system with another's name is `AUTH_REJECTED` (and a
    /// call without a known token is refused by the chain too, with its
    /// audit record).
    pub fn caller(&self, registry: &Loaded, identity: &Identity) -> String {
        let claim = self
            .headers
            .get(CALLER_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|c| !c.is_empty());
        match (claim, caller_by_token(&self.headers, registry, identity)) {
            (Some(claim), _) => claim.to_string(),
            (None, Some(system)) => system.id.clone(),
            (None, None) => String::new(),
        }
    }

    /// The auth chain of a request that is not a call (a provider's
    /// extended card, a party's receipts): the caller it names, once the
    /// same layers as a call's have passed it, or their refusal.
    pub fn authenticate(&self, surface: &Surface) -> Result<(String, Arc<Loaded>), NotConnected> {
        let loaded = surface.registry.snapshot();
        let caller = self.caller(&loaded, &surface.identity);
        let cx = crate::auth::AuthContext {
            caller: &caller,
            peer: &self.peer,
            headers: &self.headers,
            registry: &loaded,
            identity: &surface.identity,
            target: None,
        };
        surface.gateway.authenticate(&cx)?;
        Ok((caller, loaded))
    }

    /// The envelope of this request (for errors raised before a call).
    pub fn envelope(&self) -> Envelope {
        Envelope::from_headers(&self.headers)
    }
}

/// `SendMessage`: the message through the exchange pipeline. Returns the
/// call's envelope with the provider's answer (its Message or Task as it
/// sent it; a replayed consult answers a Message rebuilt from the stored
/// result) or the refusal.
pub async fn send_message(
    surface: &Surface,
    request: &Request,
    params: SendMessageRequest,
) -> (Envelope, Result<ProviderReply, SurfaceError>) {
    // A decision on a result that awaits acceptance: the task door, where
    // ownership, the window and the contract are checked.
    if params
        .message
        .metadata
        .as_ref()
        .is_some_and(|m| m.contains_key(acceptance::DECISION_KEY))
    {
        let (envelope, answer) = task(surface, request, TaskOp::Decide(Box::new(params))).await;
        let reply = answer.and_then(|task| {
            serde_json::from_value::<Task>(task)
                .map(|t| ProviderReply::Typed(SendMessageResponse::Task(t)))
                .map_err(|e| {
                    SurfaceError::call(
                        ReasonCode::PeerError,
                        format!("the provider's answer to the decision is not a task: {e}"),
                        StatusCode::BAD_GATEWAY,
                    )
                })
        });
        return (envelope, reply);
    }
    let criteria = match crate::gateway::criteria_of(params.message.metadata.as_ref()) {
        Ok(c) => c,
        Err(why) => {
            return (
                request.envelope(),
                Err(SurfaceError::protocol(code::INVALID_PARAMS, why)),
            )
        }
    };
    let message = params.message;
    // A message that continues a task: the task must be the caller's
    // (checked through the task door: version, auth chain, ownership, and
    // the provider still has it), else `TaskNotFoundError` as for any
    // task id the caller does not own.
    if let Some(task_id) = &message.task_id {
        let get = TaskOp::Get(GetTaskRequest {
            id: task_id.clone(),
            history_length: Some(0),
            tenant: None,
        });
        if let (envelope, Err(e)) = task(surface, request, get).await {
            return (envelope, Err(e));
        }
    }
    let loaded = surface.registry.snapshot();
    let caller = request.caller(&loaded, &surface.identity);
    let selected = select(&message, &request.provider, &loaded.topology);
    let mut headers = request.headers.clone();
    // The message id is the request id (a consult's idempotency key)
    // unless the caller sent its own X-Request-Id.
    if !headers.contains_key(REQUEST_ID_HEADER) {
        if let Ok(v) = HeaderValue::from_str(&message.message_id) {
            headers.insert(REQUEST_ID_HEADER, v);
        }
    }
    // Text to a provider whose skills take data: the hub answers with
    // those skills (the ones this caller may use), as the reference peers
    // answer a text they cannot take.
    let help = match &selected {
        Err(Unselectable::NeedsData(_)) => skills_help(surface, &caller, &request.provider),
        _ => None,
    };
    let (capability, input) = match selected {
        Ok((capability, input)) => (capability, Input::Parsed(input)),
        Err(_) if help.is_some() => (wire::HELP_CAPABILITY.to_string(), Input::Parsed(json!({}))),
        Err(refusal) => (String::from("unknown"), refusal.into_input()),
    };
    let mut incoming = Incoming::new(
        request.peer.clone(),
        headers,
        request.provider.clone(),
        capability,
        input,
    );
    incoming.caller = caller;
    incoming.registry = Some(loaded);
    incoming.front = Front::A2a;
    incoming.context_id.clone_from(&message.context_id);
    incoming.task_id.clone_from(&message.task_id);
    incoming.task = TaskAsk {
        return_immediately: params
            .configuration
            .as_ref()
            .and_then(|c| c.return_immediately)
            .unwrap_or(false),
        deadline: message
            .metadata
            .as_ref()
            .and_then(|m| m.get(DEADLINE_KEY))
            .map(|d| {
                d.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| d.to_string())
            }),
        criteria,
    };
    if let Some(text) = help {
        let handled = surface
            .gateway
            .answer_here(incoming, json!({ "help": text }))
            .await;
        let result = match handled.result {
            CallResult::Connected { .. } => {
                let mut answer = Message::new(a2a::Role::Agent, vec![a2a::Part::text(text)]);
                // The caller's conversation, or a new one (A2A v1.0
                // §3.4.1: an answer always names its context).
                answer.context_id = Some(message.context_id.unwrap_or_else(a2a::new_context_id));
                Ok(ProviderReply::Typed(SendMessageResponse::Message(answer)))
            }
            CallResult::NotConnected { reason, detail, .. } => {
                Err(SurfaceError::call(reason, detail, handled.status))
            }
        };
        return (handled.envelope, result);
    }
    let handled = surface.gateway.clone().run(incoming).await;
    let result = match handled.result {
        CallResult::Connected {
            result, replayed, ..
        } => {
            let mut reply = handled.reply.unwrap_or_else(|| {
                // A replay stored before A2A answers were kept: the stored
                // result as a Message.
                let mut answer = wire::answer_message(result, None);
                answer.context_id = Some(message.context_id.unwrap_or_else(a2a::new_context_id));
                ProviderReply::Typed(SendMessageResponse::Message(answer))
            });
            if replayed {
                reply.insert_metadata(wire::REPLAYED_METADATA_KEY, Value::Bool(true));
            }
            if let Some(stamp) = &handled.receipt {
                reply.insert_metadata(
                    receipt::EXTENSION_URI,
                    receipt::metadata_entry(&stamp.id, &stamp.jws),
                );
            }
            Ok(reply)
        }
        CallResult::NotConnected { reason, detail, .. } => {
            let mut e = SurfaceError::call(reason, detail, handled.status)
                .with_retry_after(handled.retry_after);
            // The provider refused what was asked with an A2A error of its
            // own: the caller gets that code (the reason stays PEER_ERROR).
            if let Some(code) = handled.provider_code {
                e.code = code;
            }
            Err(e)
        }
    };
    (handled.envelope, result)
}

/// What the hub answers a text message to a provider whose skills take
/// data: each skill `caller` may use there, its description and an
/// example call, from the card the caller would get. `None` when the
/// caller may use none (the refusal is then the pipeline's).
pub fn skills_help(surface: &Surface, caller: &str, provider: &str) -> Option<String> {
    let loaded = surface.registry.snapshot();
    let card = super::card::provider_card(
        "",
        &loaded.topology,
        &surface.identity,
        &surface.board,
        provider,
        super::card::Viewer::Member(caller),
    )
    .filter(|card| !card.skills.is_empty())?;
    let mut text = format!(
        "{} answers structured calls: send a data part {{\"capability\": \"<skill>\", \"input\": {{...}}}} \
         (or name the skill in metadata.skill and send the input as the data part).",
        card.name
    );
    for skill in &card.skills {
        text.push_str(&format!("\n- {}: {}", skill.id, skill.description));
        if let Some(example) = skill.examples.as_ref().and_then(|e| e.first()) {
            text.push_str(&format!("\n  example data part: {example}"));
        }
    }
    Some(text)
}

/// `GetTask`, `CancelTask`, `ListTasks`: through the gateway's task door
/// (ownership first). Returns the v1.0 result.
pub async fn task(
    surface: &Surface,
    request: &Request,
    op: TaskOp,
) -> (Envelope, Result<Value, SurfaceError>) {
    let loaded = surface.registry.snapshot();
    let handled = surface
        .gateway
        .task(TaskIncoming {
            caller: request.caller(&loaded, &surface.identity),
            peer: request.peer.clone(),
            headers: request.headers.clone(),
            provider: request.provider.clone(),
            op,
            registry: Some(loaded),
        })
        .await;
    let receipt = handled.receipt;
    let result = handled.result.map(|mut task| {
        // A task carries its operation's receipt in its metadata (a list
        // of tasks has none: it is fetched by request id).
        if let (Some(stamp), Some(fields)) = (&receipt, task.as_object_mut()) {
            if fields.contains_key("status") {
                if let Value::Object(metadata) = fields
                    .entry("metadata")
                    .or_insert_with(|| Value::Object(Default::default()))
                {
                    metadata.insert(
                        receipt::EXTENSION_URI.into(),
                        receipt::metadata_entry(&stamp.id, &stamp.jws),
                    );
                }
            }
        }
        task
    });
    let result = result.map_err(|refusal| match refusal {
        TaskRefusal::NotConnected(nc) => {
            let status =
                StatusCode::from_u16(nc.reason.http_status()).unwrap_or(StatusCode::BAD_GATEWAY);
            SurfaceError::call(nc.reason, nc.detail, status)
        }
        TaskRefusal::InvalidParams(why) => SurfaceError::protocol(code::INVALID_PARAMS, why),
        TaskRefusal::NotFound(id) => {
            SurfaceError::protocol(code::TASK_NOT_FOUND, format!("no task {}", clip(&id, 64)))
        }
        TaskRefusal::Provider { code, message } => SurfaceError {
            code,
            message,
            reason: Some(ReasonCode::PeerError),
            http: StatusCode::BAD_REQUEST,
            retry_after: None,
        },
    });
    (handled.envelope, result)
}

/// `SubscribeToTask` for a provider that does not stream: the task as it
/// is now, then a status update each time its provider reports a new
/// state, until the task ends (or [`SUBSCRIBE_FOR`] has passed). A task
/// that has already ended cannot be subscribed to (A2A v1.0 §3.1.6:
/// `UnsupportedOperationError`). Every poll is a `GetTask` through the
/// gateway, with its checks and its audit record.
pub async fn subscribe(
    surface: Surface,
    request: Request,
    id: String,
) -> (Envelope, Result<BoxStream<'static, Value>, SurfaceError>) {
    let get = |id: &str| {
        TaskOp::Get(GetTaskRequest {
            id: id.to_string(),
            history_length: Some(0),
            tenant: None,
        })
    };
    let (envelope, first) = task(&surface, &request, get(&id)).await;
    let first: Task = match first.and_then(|v| {
        serde_json::from_value(v).map_err(|e| {
            SurfaceError::call(
                ReasonCode::PeerError,
                format!("the provider's task is malformed: {e}"),
                StatusCode::BAD_GATEWAY,
            )
        })
    }) {
        Ok(t) => t,
        Err(e) => return (envelope, Err(e)),
    };
    if first.status.state.is_terminal() {
        return (
            envelope,
            Err(SurfaceError::protocol(
                code::UNSUPPORTED_OPERATION,
                format!("task {} has already ended", clip(&id, 64)),
            )),
        );
    }
    let until = tokio::time::Instant::now() + SUBSCRIBE_FOR;
    let head = futures::stream::once({
        let first = first.clone();
        async move { json!({ "task": first }) }
    });
    let updates = futures::stream::unfold(
        Some(first.status.state.clone()),
        move |last: Option<TaskState>| {
            let (surface, request, id) = (surface.clone(), request.clone(), id.clone());
            async move {
                let mut last = last?;
                loop {
                    if tokio::time::Instant::now() >= until {
                        return None;
                    }
                    tokio::time::sleep(SUBSCRIBE_POLL).await;
                    let (_, now) = task(&surface, &request, get(&id)).await;
                    let Ok(now) = now.and_then(|v| {
                        serde_json::from_value::<Task>(v).map_err(|_| {
                            SurfaceError::protocol(code::INTERNAL_ERROR, "malformed task")
                        })
                    }) else {
                        return None;
                    };
                    if now.status.state != last {
                        last = now.status.state.clone();
                        let event = json!({ "statusUpdate": a2a::TaskStatusUpdateEvent {
                            task_id: now.id.clone(),
                            context_id: now.context_id.clone(),
                            status: now.status.clone(),
                            metadata: None,
                        }});
                        let next = (!last.is_terminal()).then_some(last);
                        return Some((event, next));
                    }
                }
            }
        },
    );
    (envelope, Ok(head.chain(updates).boxed()))
}

/// Why a message names no usable capability or input.
#[derive(Debug, Clone, PartialEq)]
pub enum Unselectable {
    /// The message does not say which capability, or how (invalid params).
    Invalid(String),
    /// A part's media type is one no capability takes.
    ContentType(String),
    /// Text for a capability that takes data (a data-share): the hub
    /// answers with the provider's skills instead ([`skills_help`]).
    NeedsData(String),
}

impl Unselectable {
    /// As the pipeline takes it: reported once version and auth have
    /// passed, as the caller's fault.
    fn into_input(self) -> Input {
        let (status, why) = match self {
            Unselectable::Invalid(why) => (StatusCode::BAD_REQUEST, why),
            Unselectable::ContentType(why) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, why),
            Unselectable::NeedsData(capability) => (
                StatusCode::BAD_REQUEST,
                format!(
                    "{} is a data-share: send its input as a data part",
                    clip(&capability, 64)
                ),
            ),
        };
        Input::Invalid {
            status,
            why: NotConnected::new(ReasonCode::PeerError, why),
        }
    }
}

/// The capability a message calls and its input (see the module doc for
/// the rules). A provider the registry does not know selects nothing
/// here: the pipeline answers `UNKNOWN_PEER` for it, after the auth chain.
pub fn select(
    message: &Message,
    provider: &str,
    topology: &Topology,
) -> Result<(String, Value), Unselectable> {
    let Some(system) = topology.system(provider) else {
        return Ok((String::from("unknown"), json!({})));
    };
    if let Some(media) = wire::unaccepted_media_type(message) {
        let what = if media.is_empty() {
            "a file part without a media type".to_string()
        } else {
            format!("a part has media type {}", clip(&media, 80))
        };
        return Err(Unselectable::ContentType(format!(
            "{what}; {provider} accepts {}",
            wire::ACCEPTED_MEDIA_TYPES.join(", ")
        )));
    }
    let by_metadata = match message
        .metadata
        .as_ref()
        .and_then(|m| m.get(SKILL_METADATA_KEY))
    {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(Unselectable::Invalid(
                "metadata.skill must be a skill id (a string)".into(),
            ))
        }
    };
    // A data part, or a part that declares JSON and carries it inline.
    let data = wire::data_of(message).map_err(|e| Unselectable::Invalid(e.to_string()))?;
    let data = data.as_ref();
    let by_data = data
        .and_then(|d| d.get("capability"))
        .map(|c| match c {
            Value::String(s) => Ok(s.clone()),
            _ => Err(Unselectable::Invalid(
                "the data part's `capability` must be a string".into(),
            )),
        })
        .transpose()?;
    let capability = match (by_metadata, by_data) {
        (Some(a), Some(b)) if a != b => {
            return Err(Unselectable::Invalid(format!(
                "metadata.skill `{}` and the data part's capability `{}` differ",
                clip(&a, 64),
                clip(&b, 64)
            )))
        }
        (Some(a), _) => a,
        (None, Some(b)) => b,
        // A negotiation and a task are always named (a task is work that
        // runs on; nobody starts it by guess): the provider's only other
        // skill is what an unnamed message is for.
        (None, None) => match system
            .provides
            .iter()
            .filter(|c| {
                !matches!(
                    topology.capability(c).map(|c| c.kind),
                    Some(CapabilityKind::Negotiation | CapabilityKind::Task)
                )
            })
            .collect::<Vec<_>>()
            .as_slice()
        {
            [only] => (*only).clone(),
            _ => {
                return Err(Unselectable::Invalid(format!(
                    "{provider} offers several skills ({}): name one in metadata.skill \
                     or as the data part's capability",
                    system.provides.join(", ")
                )))
            }
        },
    };
    let input = match data {
        Some(d) if d.get("capability").is_some() => {
            d.get("input").cloned().unwrap_or_else(|| json!({}))
        }
        Some(d) => d.clone(),
        None => {
            let text: Vec<&str> = message
                .parts
                .iter()
                .filter_map(|p| match &p.content {
                    PartContent::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            if text.is_empty() {
                return Err(Unselectable::Invalid(
                    "the message has neither a text nor a data part".into(),
                ));
            }
            let kind = topology.capability(&capability).map(|c| c.kind);
            match kind {
                Some(CapabilityKind::DataShare) => return Err(Unselectable::NeedsData(capability)),
                // A negotiation message written as text (what a model
                // writes): exactly one JSON object, nothing else.
                Some(CapabilityKind::Negotiation) => {
                    exchange::negotiation::parse_text(&text.join("\n"), None, None)
                        .map_err(|e| Unselectable::Invalid(format!("{capability}: {e}")))
                        .and_then(|m| {
                            serde_json::to_value(m)
                                .map_err(|e| Unselectable::Invalid(e.to_string()))
                        })?
                }
                _ => json!({ "question": text.join("\n") }),
            }
        }
    };
    Ok((capability, input))
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
