//! How a capability call rides on A2A v1 (the `SendMessage` method).
//!
//! A call is one user message with one data part
//! `{"capability": "<id>", "input": {...}}`; the answer is one agent message
//! with one data part holding the capability's result. Peers and hub share
//! these helpers so both sides of the wire agree by construction.

use a2a::{Message, Part, PartContent, Role, SendMessageResponse};
use serde::Serialize;
use serde_json::{json, Value};

/// Path of a peer's JSON-RPC A2A endpoint, relative to its base URL.
pub const A2A_JSONRPC_PATH: &str = "/a2a";
/// Path of a peer's MCP data plane (Streamable HTTP), relative to its base
/// URL; the hub fronts it at `/mcp/{provider}`.
pub const MCP_PATH: &str = "/mcp";
/// The data plane's one tool: an aggregate under the caller's contract.
pub const MCP_QUERY_TOOL: &str = "query_records";
/// The JSON-RPC method of a v1 message exchange.
pub const SEND_MESSAGE_METHOD: &str = "SendMessage";

/// The media types a capability call's parts may declare (and what the
/// cards list as input and output modes): a data part is JSON, a text
/// part is plain text. Any `application/*+json` type counts as JSON too
/// ([`is_json_media_type`]). A part declaring anything else is refused
/// with A2A's `ContentTypeNotSupportedError`.
pub const ACCEPTED_MEDIA_TYPES: [&str; 2] = ["application/json", "text/plain"];

/// A media type without its parameters, lower-case.
fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether a media type (parameters allowed) is JSON: `application/json`
/// or a structured-syntax `application/*+json` type.
pub fn is_json_media_type(media_type: &str) -> bool {
    let m = essence(media_type);
    m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
}

/// The first part of `message` whose media type is not accepted (see
/// [`ACCEPTED_MEDIA_TYPES`]; a file part must declare one), as the
/// offending type (`""` for a file part without one).
pub fn unaccepted_media_type(message: &Message) -> Option<String> {
    message.parts.iter().find_map(|part| {
        let media = part.media_type.as_deref();
        let file = matches!(part.content, PartContent::Raw(_) | PartContent::Url(_));
        match media {
            Some(m) if is_json_media_type(m) => None,
            Some(m) if !ACCEPTED_MEDIA_TYPES.contains(&essence(m).as_str()) => Some(essence(m)),
            None if file => Some(String::new()),
            _ => None,
        }
    })
}

/// Why a part that says it is JSON is not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("part {index} declares {media_type} but its content is not JSON: {why}")]
pub struct NotJson {
    /// The part's position in the message (0-based).
    pub index: usize,
    /// The media type it declared.
    pub media_type: String,
    /// What the parser said.
    pub why: String,
}

/// The structured data a message carries: its first data part, or its
/// first part that declares a JSON media type and holds the JSON inline
/// (raw bytes, or text) — what clients that send JSON as a file (Microsoft
/// Agent Framework, v0.3 file parts) put on the wire. A JSON part by URL is
/// not fetched. `Ok(None)` when the message carries no data; an error
/// names the JSON part that does not parse.
pub fn data_of(message: &Message) -> Result<Option<Value>, NotJson> {
    for (index, part) in message.parts.iter().enumerate() {
        let declared_json = part.media_type.as_deref().filter(|m| is_json_media_type(m));
        let inline = match (&part.content, declared_json) {
            (PartContent::Data(d), _) => return Ok(Some(d.clone())),
            (PartContent::Raw(bytes), Some(m)) => (bytes.as_slice(), m),
            (PartContent::Text(text), Some(m)) => (text.as_bytes(), m),
            _ => continue,
        };
        return serde_json::from_slice(inline.0)
            .map(Some)
            .map_err(|e| NotJson {
                index,
                media_type: essence(inline.1),
                why: e.to_string(),
            });
    }
    Ok(None)
}

/// What the audit trail records as the capability of a text message that
/// was answered with the skills on offer (by a peer, or by the hub for a
/// provider whose skills take data), not by running one.
pub const HELP_CAPABILITY: &str = "help";

/// The message metadata key the hub sets on an answer that came from its
/// replay store (a repeated consult), not from a new execution.
pub const REPLAYED_METADATA_KEY: &str = "replayed";

/// A JSON-RPC 2.0 request object, serialised from `params` as they are
/// (typed params go straight to bytes, with no JSON tree in between).
pub fn jsonrpc_request<'a, P: Serialize>(
    id: &'a str,
    method: &'a str,
    params: &'a P,
) -> JsonRpcRequest<'a, P> {
    JsonRpcRequest {
        jsonrpc: "2.0",
        id,
        method,
        params,
    }
}

/// What [`jsonrpc_request`] builds.
#[derive(Debug, Serialize)]
pub struct JsonRpcRequest<'a, P> {
    jsonrpc: &'static str,
    id: &'a str,
    method: &'a str,
    params: &'a P,
}

/// The reason code an A2A error carries in its `google.rpc.ErrorInfo`
/// detail (the hub's surface puts one in every refusal), if any.
pub fn error_reason(error: &Value) -> Option<crate::reason::ReasonCode> {
    error
        .get("data")?
        .as_array()?
        .iter()
        .filter(|d| {
            d.get("@type").and_then(Value::as_str)
                == Some("type.googleapis.com/google.rpc.ErrorInfo")
        })
        .find_map(|d| serde_json::from_value(d.get("reason")?.clone()).ok())
}

/// Why an A2A message is not a well-formed capability call or answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("the message has no data part")]
    NoDataPart,
    #[error(transparent)]
    NotJson(#[from] NotJson),
    #[error("the data part has no string field `capability`")]
    NoCapability,
    #[error("the answer is a task in state {0}, not a completed result")]
    TaskNotCompleted(String),
    #[error("the answer carries no data part with a result")]
    NoResult,
}

/// Builds the message that asks for `capability` with `input`.
pub fn call_message(capability: &str, input: Value) -> Message {
    Message::new(
        Role::User,
        vec![Part::data(
            json!({ "capability": capability, "input": input }),
        )],
    )
}

/// Reads `(capability, input)` out of a received call message (its data,
/// [`data_of`]: a data part, or a part declaring JSON inline). A text-only
/// message (what a generic A2A client sends) is not a call: the peer decides
/// how to treat it.
pub fn parse_call(message: &Message) -> Result<(String, Value), WireError> {
    let data = data_of(message)?.ok_or(WireError::NoDataPart)?;
    let capability = data
        .get("capability")
        .and_then(Value::as_str)
        .ok_or(WireError::NoCapability)?;
    let input = data.get("input").cloned().unwrap_or_else(|| json!({}));
    Ok((capability.to_string(), input))
}

/// Builds the agent's answer carrying `result`, with an optional one-line
/// text rendering for generic A2A clients.
pub fn answer_message(result: Value, text: Option<String>) -> Message {
    let mut parts = vec![Part::data(result)];
    if let Some(t) = text {
        parts.push(Part::text(t));
    }
    Message::new(Role::Agent, parts)
}

/// Extracts the capability result from a `SendMessage` answer: the first
/// data part of the message, or of a completed task's artifacts/status.
pub fn parse_answer(response: &SendMessageResponse) -> Result<Value, WireError> {
    let first_data = |parts: &[Part]| {
        parts.iter().find_map(|p| match &p.content {
            PartContent::Data(d) => Some(d.clone()),
            _ => None,
        })
    };
    match response {
        SendMessageResponse::Message(m) => first_data(&m.parts).ok_or(WireError::NoResult),
        SendMessageResponse::Task(task) => {
            let state = format!("{:?}", task.status.state);
            if !state.to_ascii_lowercase().contains("completed") {
                return Err(WireError::TaskNotCompleted(state));
            }
            task.artifacts
                .iter()
                .flatten()
                .find_map(|a| first_data(&a.parts))
                .or_else(|| {
                    task.status
                        .message
                        .as_ref()
                        .and_then(|m| first_data(&m.parts))
                })
                .ok_or(WireError::NoResult)
        }
    }
}

/// The digest an idempotency key is bound to: SHA-256 (hex) of `input` with object
/// keys sorted at every level, so `{"a":1,"b":2}` and `{"b":2,"a":1}`
/// are the same input.
pub fn input_digest(input: &Value) -> String {
    fn canonical(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    canonical(&map[k], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canonical(item, out);
                }
                out.push(']');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut text = String::new();
    canonical(input, &mut text);
    text_digest(&text)
}

/// SHA-256 of `text`, as 64 lower-case hex digits: what identifies a
/// version of a text (an input, a config file) without holding it.
pub fn text_digest(text: &str) -> String {
    bytes_digest(text.as_bytes())
}

/// SHA-256 of `bytes`, as 64 lower-case hex digits.
pub fn bytes_digest(bytes: &[u8]) -> String {
    <sha2::Sha256 as sha2::Digest>::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_round_trips_through_json() {
        let msg = call_message("orders.query", json!({"aggregate": "count"}));
        let back: Message = serde_json::from_value(serde_json::to_value(&msg).unwrap()).unwrap();
        let (cap, input) = parse_call(&back).unwrap();
        assert_eq!(cap, "orders.query");
        assert_eq!(input["aggregate"], "count");
    }

    #[test]
    fn a_part_declaring_json_inline_is_data() {
        let json_part = |content: PartContent, media: &str| Part {
            content,
            filename: None,
            media_type: Some(media.into()),
            metadata: None,
        };
        let msg = |parts: Vec<Part>| Message::new(Role::User, parts);
        let want = json!({"capability": "c", "input": {"n": 1}});
        for part in [
            json_part(
                PartContent::Raw(want.to_string().into_bytes()),
                "application/json",
            ),
            json_part(
                PartContent::Raw(want.to_string().into_bytes()),
                "Application/Vnd.X+JSON; q=1",
            ),
            json_part(PartContent::Text(want.to_string()), "application/json"),
            Part::data(want.clone()),
        ] {
            assert_eq!(
                data_of(&msg(vec![Part::text("hi"), part])),
                Ok(Some(want.clone()))
            );
        }
        assert_eq!(
            parse_call(&msg(vec![json_part(
                PartContent::Raw(want.to_string().into_bytes()),
                "application/json"
            )]))
            .map(|(c, _)| c),
            Ok("c".to_string())
        );
        let broken = msg(vec![
            Part::text("hi"),
            json_part(PartContent::Raw(b"{oops".to_vec()), "application/json"),
        ]);
        let e = data_of(&broken).expect_err("not JSON");
        assert_eq!((e.index, e.media_type.as_str()), (1, "application/json"));
        assert!(
            e.to_string()
                .starts_with("part 1 declares application/json"),
            "{e}"
        );
        // Plain text, a URL, another media type: no data.
        for part in [
            Part::text("{\"a\": 1}"),
            json_part(
                PartContent::Url("http://x/y.json".into()),
                "application/json",
            ),
            json_part(PartContent::Raw(b"%PDF".to_vec()), "application/pdf"),
        ] {
            assert_eq!(data_of(&msg(vec![part])), Ok(None));
        }
        assert_eq!(
            unaccepted_media_type(&msg(vec![json_part(
                PartContent::Raw(vec![]),
                "application/ld+json"
            )])),
            None
        );
        assert_eq!(
            unaccepted_media_type(&msg(vec![json_part(
                PartContent::Raw(vec![]),
                "application/pdf"
            )])),
            Some("application/pdf".into())
        );
    }

    #[test]
    fn text_only_message_is_not_a_call() {
        let msg = Message::new(Role::User, vec![Part::text("hello")]);
        assert_eq!(parse_call(&msg), Err(WireError::NoDataPart));
    }

    #[test]
    fn the_reason_code_of_an_a2a_error() {
        let error = json!({"code": -32012, "message": "no rule", "data": [
            {"@type": "type.googleapis.com/google.rpc.BadRequest"},
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "NOT_PERMITTED", "domain": "wall-street.exchange"}]});
        assert_eq!(
            error_reason(&error),
            Some(crate::reason::ReasonCode::NotPermitted)
        );
        let protocol = json!({"code": -32001, "data": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "TASK_NOT_FOUND"}]});
        assert_eq!(error_reason(&protocol), None);
        assert_eq!(error_reason(&json!({"code": 1})), None);
    }

    #[test]
    fn answer_round_trips() {
        let resp = SendMessageResponse::Message(answer_message(
            json!({"rows": []}),
            Some("0 rows".into()),
        ));
        let json = serde_json::to_value(&resp).unwrap();
        let back: SendMessageResponse = serde_json::from_value(json).unwrap();
        assert_eq!(parse_answer(&back).unwrap(), json!({"rows": []}));
    }
}
