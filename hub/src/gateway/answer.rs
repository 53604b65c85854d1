//! Reading a provider's answer (DESIGN.md §2, "reason code"): the HTTP
//! status and bytes a provider sent back become either the capability
//! result or one [`NotConnected`] with its reason code, plus a verdict on
//! whether the failure says anything about the provider's health.
//!
//! An answer is a JSON-RPC response whose `result` is an A2A `SendMessage`
//! response carrying the capability result ([`exchange::wire`]). Anything
//! else is a `PEER_ERROR` whose detail is the peer's own words, clipped to
//! [`MAX_PEER_DETAIL`]: a peer may be lying or broken (DESIGN.md §1), so
//! nothing it sends can make this panic or put an unbounded text in front
//! of the caller.
//!
//! **An answer passes through.** A provider's `Message` is read only as far
//! as the hub needs it: its shape (everything an A2A client would refuse is
//! refused here too) and its first data part, the capability result the
//! contract checks and the inspector shows. The message itself is kept as
//! the provider's JSON text ([`ProviderReply::Passed`]) and written out to
//! a caller that speaks the same A2A version without being built into
//! typed values and serialised again. Everything else — a task, an answer
//! the quick reading does not take, an error — is read whole into A2A
//! types ([`ProviderReply::Typed`]), as is an answer a door must change
//! (a replay's mark, a v0.3 caller's translation).
//!
//! This file does no I/O: the call that fetches the answer, with its
//! client, token and deadline, is in the sibling `forward`. Kept apart,
//! the rules for what an answer means can be read (and changed) without
//! the plumbing around them.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use a2a::{SendMessageResponse, Task};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;
use exchange::wire;

/// How much of a peer's error message reaches the caller.
pub const MAX_PEER_DETAIL: usize = 300;

/// JSON-RPC and A2A codes that blame the request, not the responder:
/// invalid request, invalid params, and A2A's refusals of what was asked
/// (task not found, not cancelable, push not supported, unsupported
/// operation, content type not supported).
pub(super) const CALLER_FAULT_CODES: [i64; 7] =
    [-32600, -32602, -32001, -32002, -32003, -32004, -32005];

/// Whose fault a failed forward is: what it says about the provider's
/// health, and how the caller is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Blame {
    /// The provider failed: it is degraded on the status board.
    Provider,
    /// The provider refused the caller's input (JSON-RPC invalid request
    /// or invalid params): working as it should, not degraded, and the
    /// caller is answered with a 4xx.
    Caller,
    /// The hub's own configuration (it holds no token for the provider).
    Hub,
}

/// A failed forward and whose fault it is.
pub(super) struct Failure {
    pub(super) nc: NotConnected,
    pub(super) blame: Blame,
    /// The provider's JSON-RPC error code, when it answered with one.
    pub(super) code: Option<i64>,
}

impl Failure {
    /// A failure that is the provider's: it degrades it on the board.
    pub(super) fn provider(nc: NotConnected) -> Self {
        Self {
            nc,
            blame: Blame::Provider,
            code: None,
        }
    }
}

/// A provider's answer that carries a capability result: the result and
/// the A2A response (Message or Task) it was read from.
#[derive(Debug, Clone)]
pub(super) struct Reply {
    pub(super) result: Value,
    pub(super) response: ProviderReply,
}

/// A provider's A2A answer to a `SendMessage`, as a caller gets it.
// One per call, moved a few times: boxing the typed answer would cost
// every typed reply an allocation to save a copy of a few hundred bytes.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum ProviderReply {
    /// Read into A2A types: a task, an answer the quick reading did not
    /// take, a replay, the hub's own answer.
    Typed(SendMessageResponse),
    /// A message as its provider sent it (its JSON text), already read
    /// for its shape and its data part.
    Passed(PassedMessage),
}

/// A message passed through: its JSON text and what the hub reads of it
/// besides the capability result.
#[derive(Debug, Clone)]
pub struct PassedMessage {
    /// The message, `{"messageId": …}`, as the provider wrote it.
    message: Box<RawValue>,
    /// The message's `contextId` (a negotiation turn is recorded under
    /// it).
    context_id: Option<String>,
    /// Whether the message has a `metadata` member.
    has_metadata: bool,
}

impl ProviderReply {
    /// The A2A types of this answer: as it is when typed, read from its
    /// text when passed through (an answer already read for its shape).
    pub fn into_typed(self) -> Result<SendMessageResponse, serde_json::Error> {
        match self {
            Self::Typed(response) => Ok(response),
            Self::Passed(passed) => {
                serde_json::from_str(passed.message.get()).map(SendMessageResponse::Message)
            }
        }
    }

    /// Adds `key: value` to the answer's metadata (the Message's or the
    /// Task's), replacing an entry of that key. A message passed through
    /// without metadata stays text, the member appended to it; one with
    /// metadata is read into the A2A types first.
    pub fn insert_metadata(&mut self, key: &str, value: Value) {
        if let Self::Passed(passed) = self {
            if !passed.has_metadata {
                let text = passed.message.get();
                if let Some(open) = text.trim_end().strip_suffix('}') {
                    let entry = serde_json::json!({ key: value });
                    if let Ok(message) =
                        RawValue::from_string(format!("{open},\"metadata\":{entry}}}"))
                    {
                        passed.message = message;
                        passed.has_metadata = true;
                        return;
                    }
                }
            }
            match serde_json::from_str(passed.message.get()) {
                Ok(message) => *self = Self::Typed(SendMessageResponse::Message(message)),
                Err(e) => {
                    tracing::warn!(error = %e, "an answer passed through no longer reads");
                    return;
                }
            }
        }
        let Self::Typed(response) = self else {
            return;
        };
        let metadata = match response {
            SendMessageResponse::Message(m) => &mut m.metadata,
            SendMessageResponse::Task(t) => &mut t.metadata,
        };
        metadata
            .get_or_insert_with(Default::default)
            .insert(key.to_string(), value);
    }

    /// The string its metadata (the Message's or the Task's) holds at
    /// `key`. A message passed through is read for it only when it has
    /// metadata at all.
    pub fn metadata_str(&self, key: &str) -> Option<String> {
        let metadata = match self {
            Self::Typed(SendMessageResponse::Message(m)) => m.metadata.as_ref(),
            Self::Typed(SendMessageResponse::Task(t)) => t.metadata.as_ref(),
            Self::Passed(passed) if passed.has_metadata => {
                #[derive(Deserialize)]
                struct Metadata {
                    metadata: HashMap<String, Value>,
                }
                let read: Metadata = serde_json::from_str(passed.message.get()).ok()?;
                return read.metadata.get(key)?.as_str().map(str::to_string);
            }
            Self::Passed(_) => None,
        };
        metadata?.get(key)?.as_str().map(str::to_string)
    }

    /// The task the provider answered with, if it answered with one.
    pub fn task(&self) -> Option<&Task> {
        match self {
            Self::Typed(SendMessageResponse::Task(t)) => Some(t),
            _ => None,
        }
    }

    /// The conversation the answer names.
    pub fn context_id(&self) -> Option<&str> {
        match self {
            Self::Typed(SendMessageResponse::Message(m)) => m.context_id.as_deref(),
            Self::Typed(SendMessageResponse::Task(t)) => Some(&t.context_id),
            Self::Passed(p) => p.context_id.as_deref(),
        }
    }

    /// The answer as a JSON tree (what the replay store keeps).
    pub fn to_value(&self) -> Result<Value, serde_json::Error> {
        match self {
            Self::Typed(response) => serde_json::to_value(response),
            Self::Passed(passed) => {
                let message: Value = serde_json::from_str(passed.message.get())?;
                Ok(serde_json::json!({ "message": message }))
            }
        }
    }
}

/// Written as the A2A `SendMessage` result: the typed answer serialised,
/// a passed message as its own text under `message`.
impl Serialize for ProviderReply {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Typed(response) => response.serialize(serializer),
            Self::Passed(passed) => {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("message", &passed.message)?;
                map.end()
            }
        }
    }
}

/// Turns a provider's HTTP answer into the capability result or a
/// `PEER_ERROR` whose detail is the peer's own message, clipped.
///
/// With `accepts_task` (a `task` capability), a task that is not completed
/// yet (or ended without completing) is an answer too: its result is
/// `null` until an artifact holds one.
pub(super) fn interpret_answer(
    id: &str,
    status: http::StatusCode,
    body: &[u8],
    accepts_task: bool,
) -> Result<Reply, Failure> {
    let fail = |message: String| Failure::provider(peer_error(message));
    if status.is_success() {
        if let Some((passed, data)) = read_message(body) {
            let response = ProviderReply::Passed(passed);
            return match data {
                Some(result) => Ok(Reply { result, response }),
                None => Err(fail(format!(
                    "{id}'s answer: {}",
                    wire::WireError::NoResult
                ))),
            };
        }
    }
    let response = match status.is_success().then(|| read_success(body)).flatten() {
        Some(response) => response,
        None => read_slowly(id, status, body, fail)?,
    };
    let result = match (&response, wire::parse_answer(&response)) {
        (_, Ok(result)) => result,
        (SendMessageResponse::Task(t), Err(_)) if accepts_task && !completed(t) => Value::Null,
        (_, Err(e)) => return Err(fail(format!("{id}'s answer: {e}"))),
    };
    Ok(Reply {
        result,
        response: ProviderReply::Typed(response),
    })
}

/// The quick reading: a JSON-RPC success whose result is a `message` (no
/// `task` member at all), the message in exactly the form the A2A types
/// write it back — its members the ones `a2a::Message` has, each of the
/// type it takes, every part with one content (`text` or `url` a string,
/// or `data`) and only the members `a2a::Part` keeps — and its first data
/// part taken out; the message itself stays text. So what passes through
/// is what the typed reading would have written, byte for byte up to
/// spacing and member order. `None` for anything else, which the typed
/// reading reads (and explains, or normalises): an error, a task, a `raw`
/// part, a member the types would drop.
fn read_message(body: &[u8]) -> Option<(PassedMessage, Option<Value>)> {
    let answer: Passing<'_> = serde_json::from_slice(body).ok()?;
    if answer.error.is_some() {
        return None;
    }
    let only: MessageOnly<'_> = serde_json::from_str(answer.result?.get()).ok()?;
    if only.task.0 {
        return None;
    }
    let text = only.message?;
    let message: MessageShape = serde_json::from_str(text.get()).ok()?;
    let data = message.parts.into_iter().find_map(|p| p.data);
    let passed = PassedMessage {
        message: text.to_owned(),
        context_id: message.context_id,
        has_metadata: message.metadata.is_some(),
    };
    Some((passed, data))
}

/// A JSON-RPC answer, its `result` left as text.
#[derive(Deserialize)]
struct Passing<'a> {
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// A `SendMessage` result: whether it names a task (even `null`: the A2A
/// types then read a task), and its message as text.
#[derive(Deserialize)]
struct MessageOnly<'a> {
    #[serde(default)]
    task: Present,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

/// Whether a member is there at all, whatever its value.
#[derive(Default)]
struct Present(bool);

impl<'de> Deserialize<'de> for Present {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer)?;
        Ok(Present(true))
    }
}

/// An A2A `Message` with exactly the members `a2a::Message` has, each of
/// the type it takes and written as the types write it (a role by its
/// full name, an optional member absent rather than `null`); its parts
/// read only for a data part.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)] // read to check the shape, not used
struct MessageShape {
    message_id: String,
    role: RoleShape,
    parts: Vec<PartShape>,
    #[serde(default, deserialize_with = "present")]
    context_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    task_id: Option<String>,
    #[serde(default, deserialize_with = "present")]
    metadata: Option<HashMap<String, IgnoredAny>>,
    #[serde(default, deserialize_with = "present")]
    extensions: Option<Vec<String>>,
    #[serde(default, deserialize_with = "present")]
    reference_task_ids: Option<Vec<String>>,
}

/// A role as the A2A types write it (they read `""` too, and write it
/// `ROLE_UNSPECIFIED`).
#[derive(Deserialize)]
enum RoleShape {
    #[serde(rename = "ROLE_USER")]
    User,
    #[serde(rename = "ROLE_AGENT")]
    Agent,
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
}

/// An optional member that is there: its value, never `null` (which the
/// A2A types read as absent and do not write).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: de::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A part as `a2a::Part` writes it back: one content member (`text` or
/// `url` a string, or `data` of any value), and besides it only
/// `filename` and `mediaType` (strings) and `metadata` (an object that is
/// not empty), each once. Only a data part's value is kept.
struct PartShape {
    data: Option<Value>,
}

/// The members of a part.
#[derive(Deserialize, PartialEq, Eq, Clone, Copy)]
#[serde(field_identifier, rename_all = "camelCase")]
enum PartKey {
    Text,
    Url,
    Data,
    Filename,
    MediaType,
    Metadata,
}

impl<'de> Deserialize<'de> for PartShape {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Shape;
        impl<'de> Visitor<'de> for Shape {
            type Value = PartShape;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an A2A part")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PartShape, A::Error> {
                // An unknown member (`raw` among them) fails the key's
                // reading; the typed reading takes the part then.
                let mut seen: Vec<PartKey> = Vec::with_capacity(3);
                let mut contents = 0;
                let mut data = None;
                while let Some(key) = map.next_key::<PartKey>()? {
                    if seen.contains(&key) {
                        return Err(de::Error::custom("a repeated member"));
                    }
                    seen.push(key);
                    match key {
                        PartKey::Text | PartKey::Url | PartKey::Filename | PartKey::MediaType => {
                            map.next_value::<String>()?;
                        }
                        // Empty, the A2A types do not write it back.
                        PartKey::Metadata => {
                            if map.next_value::<HashMap<String, IgnoredAny>>()?.is_empty() {
                                return Err(de::Error::custom("empty part metadata"));
                            }
                        }
                        PartKey::Data => data = Some(map.next_value::<Value>()?),
                    }
                    if matches!(key, PartKey::Text | PartKey::Url | PartKey::Data) {
                        contents += 1;
                    }
                }
                match contents {
                    1 => Ok(PartShape { data }),
                    _ => Err(de::Error::custom("a part with no content or with several")),
                }
            }
        }
        deserializer.deserialize_map(Shape)
    }
}

/// A JSON-RPC answer as nearly every provider sends it: a `result` holding
/// a Message or a Task, no `error`.
#[derive(Deserialize)]
struct Success {
    #[serde(default)]
    result: Option<Answer>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// A `SendMessage` result, read straight into its A2A type.
#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    task: Option<a2a::Task>,
    #[serde(default)]
    message: Option<a2a::Message>,
}

/// The hot path: the bytes read once, straight into the A2A answer (no
/// tree of the whole body first, no second pass through `Value`s). `None`
/// for anything else (an error, no result, a result of another shape),
/// which [`read_slowly`] reads and explains.
fn read_success(body: &[u8]) -> Option<SendMessageResponse> {
    let answer: Success = serde_json::from_slice(body).ok()?;
    if answer.error.is_some() {
        return None;
    }
    match answer.result? {
        // The task first, as `SendMessageResponse` reads a result naming
        // both.
        Answer { task: Some(t), .. } => Some(SendMessageResponse::Task(t)),
        Answer {
            message: Some(m), ..
        } => Some(SendMessageResponse::Message(m)),
        Answer { .. } => None,
    }
}

/// Any answer, read as a JSON tree: the A2A answer, or the failure with
/// the peer's own words.
fn read_slowly(
    id: &str,
    status: http::StatusCode,
    body: &[u8],
    fail: impl Fn(String) -> Failure,
) -> Result<SendMessageResponse, Failure> {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let rpc_error = parsed
        .as_ref()
        .and_then(|v| v.get("error"))
        .filter(|e| !e.is_null())
        .map(|e| {
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| e.to_string());
            let code = e.get("code").and_then(Value::as_i64);
            (message, code)
        });
    if !status.is_success() {
        let message = rpc_error
            .map(|(m, _)| m)
            .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
        return Err(fail(format!("HTTP {}: {message}", status.as_u16())));
    }
    let Some(mut parsed) = parsed else {
        return Err(fail(format!("{id}'s answer is not JSON")));
    };
    if let Some((message, code)) = rpc_error {
        let blame = if code.is_some_and(|c| CALLER_FAULT_CODES.contains(&c)) {
            Blame::Caller
        } else {
            Blame::Provider
        };
        return Err(Failure {
            nc: peer_error(message),
            blame,
            code,
        });
    }
    let Some(result) = parsed
        .get_mut("result")
        .filter(|r| !r.is_null())
        .map(Value::take)
    else {
        return Err(fail(format!("{id}'s JSON-RPC answer has no result")));
    };
    serde_json::from_value(result).map_err(|e| {
        fail(format!(
            "{id}'s answer is not an A2A SendMessage response: {e}"
        ))
    })
}

/// Whether a task reached `completed` (its result must then be there).
fn completed(task: &a2a::Task) -> bool {
    task.status.state == a2a::TaskState::Completed
}

/// A `PEER_ERROR` carrying the peer's message, clipped to
/// [`MAX_PEER_DETAIL`].
pub(super) fn peer_error(message: String) -> NotConnected {
    NotConnected::new(ReasonCode::PeerError, clip(&message, MAX_PEER_DETAIL))
}

#[cfg(test)]
#[path = "answer_tests.rs"]
mod tests;
