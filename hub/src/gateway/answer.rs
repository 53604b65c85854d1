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
//! This file does no I/O: the call that fetches the answer, with its
//! client, token and deadline, is in the sibling `forward`. Kept apart,
//! the rules for what an answer means can be read (and changed) without
//! the plumbing around them.

use serde::Deserialize;
use serde_json::Value;

use a2a::SendMessageResponse;
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
    pub(super) response: SendMessageResponse,
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
    let response = match status.is_success().then(|| read_success(body)).flatten() {
        Some(response) => response,
        None => read_slowly(id, status, body, fail)?,
    };
    let result = match (&response, wire::parse_answer(&response)) {
        (_, Ok(result)) => result,
        (SendMessageResponse::Task(t), Err(_)) if accepts_task && !completed(t) => Value::Null,
        (_, Err(e)) => return Err(fail(format!("{id}'s answer: {e}"))),
    };
    Ok(Reply { result, response })
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
