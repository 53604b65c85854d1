//! Messages, tasks and streaming events both ways: a message and its
//! parts, a task with its status and artifacts, the four kinds of stream
//! event, and how a v0.3 object says (or, without `kind`, shows) what it is.

use serde_json::Value;

use super::json::{
    carry, describe, is_present, list, need, need_str, object, one_of, rename, take, wrap, At,
    Kind, Need, Obj, Res, Same,
};
use super::BridgeError;

/// One v1.0 StreamResponse (`{"task"}`, `{"message"}`, `{"statusUpdate"}`
/// or `{"artifactUpdate"}`) -> the v0.3 streaming result object.
pub fn event_to_v03(event: Value) -> Result<Value, BridgeError> {
    event_to_v03_at(event, &At::root("event"))
}

/// One v0.3 streaming result object (a task, a message, a status-update or
/// an artifact-update) -> a v1.0 StreamResponse.
pub fn event_to_v1(event: Value) -> Result<Value, BridgeError> {
    event_to_v1_at(event, &At::root("event"))
}

// Fields spelled and typed alike in both dialects, per construct.
const MESSAGE_FIELDS: &[Same] = &[
    ("messageId", Kind::Str, Need::Required),
    ("contextId", Kind::Str, Need::Optional),
    ("taskId", Kind::Str, Need::Optional),
    ("metadata", Kind::Obj, Need::Optional),
    ("extensions", Kind::StrList, Need::Optional),
    ("referenceTaskIds", Kind::StrList, Need::Optional),
];
const TASK_FIELDS: &[Same] = &[
    ("id", Kind::Str, Need::Required),
    ("contextId", Kind::Str, Need::Required),
    ("metadata", Kind::Obj, Need::Optional),
];
const STATUS_FIELDS: &[Same] = &[("timestamp", Kind::Str, Need::Optional)];
const ARTIFACT_FIELDS: &[Same] = &[
    ("artifactId", Kind::Str, Need::Required),
    ("name", Kind::Str, Need::Optional),
    ("description", Kind::Str, Need::Optional),
    ("metadata", Kind::Obj, Need::Optional),
    ("extensions", Kind::StrList, Need::Optional),
];
const STATUS_UPDATE_FIELDS: &[Same] = &[
    ("taskId", Kind::Str, Need::Required),
    ("contextId", Kind::Str, Need::Required),
    ("metadata", Kind::Obj, Need::Optional),
];
const ARTIFACT_UPDATE_FIELDS: &[Same] = &[
    ("taskId", Kind::Str, Need::Required),
    ("contextId", Kind::Str, Need::Required),
    ("append", Kind::Bool, Need::Optional),
    ("lastChunk", Kind::Bool, Need::Optional),
    ("metadata", Kind::Obj, Need::Optional),
];

// ---------------------------------------------------------------------------
// Message and part
// ---------------------------------------------------------------------------

pub(super) fn message_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    expect_kind(&mut src, "message", at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, MESSAGE_FIELDS, at)?;
    let role = need_str(&mut src, "role", at)?;
    let role = match role.as_str() {
        "user" => "ROLE_USER",
        "agent" => "ROLE_AGENT",
        other => return Err(at.key("role").unknown("role", other)),
    };
    out.insert("role".into(), role.into());
    let parts = need(&mut src, "parts", Kind::Arr, at)?;
    out.insert("parts".into(), list(parts, &at.key("parts"), part_to_v1)?);
    Ok(Value::Object(out))
}

pub(super) fn message_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    out.insert("kind".into(), "message".into());
    carry(&mut src, &mut out, MESSAGE_FIELDS, at)?;
    let role = need_str(&mut src, "role", at)?;
    let role = match role.as_str() {
        "ROLE_USER" => "user",
        "ROLE_AGENT" => "agent",
        "ROLE_UNSPECIFIED" | "" => {
            return Err(at
                .key("role")
                .untranslatable("role ROLE_UNSPECIFIED has no v0.3 equivalent (user or agent)"))
        }
        other => return Err(at.key("role").unknown("role", other)),
    };
    out.insert("role".into(), role.into());
    let parts = need(&mut src, "parts", Kind::Arr, at)?;
    out.insert("parts".into(), list(parts, &at.key("parts"), part_to_v03)?);
    Ok(Value::Object(out))
}

fn part_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let kind = match src.remove("kind") {
        Some(Value::String(kind)) => kind,
        None | Some(Value::Null) => {
            // The 0.3 SDK defaults `kind`; the content field tells which part it is.
            let present: Vec<&str> = ["text", "file", "data"]
                .into_iter()
                .filter(|key| is_present(&src, key))
                .collect();
            match present.as_slice() {
                [one] => (*one).to_owned(),
                _ => return Err(at.not_one("kind, text, file, data", present.len())),
            }
        }
        Some(other) => return Err(at.key("kind").wrong("a string", &other)),
    };
    let mut out = Obj::new();
    match kind.as_str() {
        "text" => {
            out.insert("text".into(), need(&mut src, "text", Kind::Str, at)?);
        }
        "data" => {
            out.insert("data".into(), need(&mut src, "data", Kind::Any, at)?);
        }
        "file" => {
            let file_at = at.key("file");
            let mut file = object(need(&mut src, "file", Kind::Obj, at)?, &file_at)?;
            let bytes = take(&mut file, "bytes", Kind::Str, &file_at)?;
            let uri = take(&mut file, "uri", Kind::Str, &file_at)?;
            match (bytes, uri) {
                (Some(bytes), None) => out.insert("raw".into(), bytes),
                (None, Some(uri)) => out.insert("url".into(), uri),
                (None, None) => return Err(file_at.not_one("bytes, uri", 0)),
                (Some(_), Some(_)) => return Err(file_at.not_one("bytes, uri", 2)),
            };
            rename(&mut file, &mut out, "name", "filename", &file_at)?;
            rename(&mut file, &mut out, "mimeType", "mediaType", &file_at)?;
        }
        other => return Err(at.key("kind").unknown("part kind", other)),
    }
    carry(
        &mut src,
        &mut out,
        &[("metadata", Kind::Obj, Need::Optional)],
        at,
    )?;
    Ok(Value::Object(out))
}

fn part_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let text = take(&mut src, "text", Kind::Str, at)?;
    let raw = take(&mut src, "raw", Kind::Str, at)?;
    let url = take(&mut src, "url", Kind::Str, at)?;
    let data = take(&mut src, "data", Kind::Any, at)?;
    let present = [&text, &raw, &url, &data]
        .into_iter()
        .filter(|content| content.is_some())
        .count();
    if present != 1 {
        return Err(at.not_one("text, raw, url, data", present));
    }
    let mut out = Obj::new();
    if let Some(text) = text {
        out.insert("kind".into(), "text".into());
        out.insert("text".into(), text);
    } else if let Some(data) = data {
        if !data.is_object() {
            return Err(at.key("data").untranslatable(format!(
                "v0.3 data parts hold a JSON object, this one holds {}",
                describe(&data)
            )));
        }
        out.insert("kind".into(), "data".into());
        out.insert("data".into(), data);
    } else {
        let mut file = Obj::new();
        if let Some(raw) = raw {
            file.insert("bytes".into(), raw);
        }
        if let Some(url) = url {
            file.insert("uri".into(), url);
        }
        rename(&mut src, &mut file, "filename", "name", at)?;
        rename(&mut src, &mut file, "mediaType", "mimeType", at)?;
        out.insert("kind".into(), "file".into());
        out.insert("file".into(), Value::Object(file));
    }
    carry(
        &mut src,
        &mut out,
        &[("metadata", Kind::Obj, Need::Optional)],
        at,
    )?;
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------
// Task, status and artifact
// ---------------------------------------------------------------------------

/// (v0.3, v1.0) spelling of every task state.
const STATES: &[(&str, &str)] = &[
    ("submitted", "TASK_STATE_SUBMITTED"),
    ("working", "TASK_STATE_WORKING"),
    ("input-required", "TASK_STATE_INPUT_REQUIRED"),
    ("completed", "TASK_STATE_COMPLETED"),
    ("canceled", "TASK_STATE_CANCELED"),
    ("failed", "TASK_STATE_FAILED"),
    ("rejected", "TASK_STATE_REJECTED"),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED"),
    ("unknown", "TASK_STATE_UNSPECIFIED"),
];

/// v0.3 states after which a stream ends (terminal or interrupted): a
/// status-update in one of them is `final: true`.
const FINAL_STATES: &[&str] = &[
    "completed",
    "canceled",
    "failed",
    "rejected",
    "input-required",
    "auth-required",
];

pub(super) fn task_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    expect_kind(&mut src, "task", at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, TASK_FIELDS, at)?;
    let status = need(&mut src, "status", Kind::Obj, at)?;
    out.insert("status".into(), status_to_v1(status, &at.key("status"))?);
    if let Some(artifacts) = take(&mut src, "artifacts", Kind::Arr, at)? {
        let artifacts = list(artifacts, &at.key("artifacts"), artifact_to_v1)?;
        out.insert("artifacts".into(), artifacts);
    }
    if let Some(history) = take(&mut src, "history", Kind::Arr, at)? {
        out.insert(
            "history".into(),
            list(history, &at.key("history"), message_to_v1)?,
        );
    }
    Ok(Value::Object(out))
}

pub(super) fn task_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    out.insert("kind".into(), "task".into());
    carry(&mut src, &mut out, TASK_FIELDS, at)?;
    let status = need(&mut src, "status", Kind::Obj, at)?;
    out.insert("status".into(), status_to_v03(status, &at.key("status"))?);
    if let Some(artifacts) = take(&mut src, "artifacts", Kind::Arr, at)? {
        let artifacts = list(artifacts, &at.key("artifacts"), artifact_to_v03)?;
        out.insert("artifacts".into(), artifacts);
    }
    if let Some(history) = take(&mut src, "history", Kind::Arr, at)? {
        out.insert(
            "history".into(),
            list(history, &at.key("history"), message_to_v03)?,
        );
    }
    Ok(Value::Object(out))
}

fn status_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    let state = need_str(&mut src, "state", at)?;
    let state = STATES
        .iter()
        .find(|(v03, _)| *v03 == state)
        .map(|(_, v10)| *v10)
        .ok_or_else(|| at.key("state").unknown("task state", &state))?;
    out.insert("state".into(), state.into());
    if let Some(message) = take(&mut src, "message", Kind::Obj, at)? {
        out.insert(
            "message".into(),
            message_to_v1(message, &at.key("message"))?,
        );
    }
    carry(&mut src, &mut out, STATUS_FIELDS, at)?;
    Ok(Value::Object(out))
}

fn status_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    let state = need_str(&mut src, "state", at)?;
    let state = match STATES.iter().find(|(_, v10)| *v10 == state) {
        Some((v03, _)) => *v03,
        // `a2a-lf` reads an empty state as TASK_STATE_UNSPECIFIED.
        None if state.is_empty() => "unknown",
        None => return Err(at.key("state").unknown("task state", &state)),
    };
    out.insert("state".into(), state.into());
    if let Some(message) = take(&mut src, "message", Kind::Obj, at)? {
        out.insert(
            "message".into(),
            message_to_v03(message, &at.key("message"))?,
        );
    }
    carry(&mut src, &mut out, STATUS_FIELDS, at)?;
    Ok(Value::Object(out))
}

fn artifact_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, ARTIFACT_FIELDS, at)?;
    let parts = need(&mut src, "parts", Kind::Arr, at)?;
    out.insert("parts".into(), list(parts, &at.key("parts"), part_to_v1)?);
    Ok(Value::Object(out))
}

fn artifact_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, ARTIFACT_FIELDS, at)?;
    let parts = need(&mut src, "parts", Kind::Arr, at)?;
    out.insert("parts".into(), list(parts, &at.key("parts"), part_to_v03)?);
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------
// Streaming events
// ---------------------------------------------------------------------------

pub(super) fn event_to_v03_at(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let (key, inner) = one_of(
        &mut src,
        &["task", "message", "statusUpdate", "artifactUpdate"],
        "task, message, statusUpdate, artifactUpdate",
        at,
    )?;
    let inner_at = at.key(key);
    match key {
        "task" => task_to_v03(inner, &inner_at),
        "message" => message_to_v03(inner, &inner_at),
        "statusUpdate" => status_update_to_v03(inner, &inner_at),
        _ => artifact_update_to_v03(inner, &inner_at),
    }
}

pub(super) fn event_to_v1_at(value: Value, at: &At) -> Res<Value> {
    let src = object(value, at)?;
    let kind = v03_kind(&src, at)?;
    let src = Value::Object(src);
    match kind {
        "task" => Ok(wrap("task", task_to_v1(src, at)?)),
        "message" => Ok(wrap("message", message_to_v1(src, at)?)),
        "status-update" => Ok(wrap("statusUpdate", status_update_to_v1(src, at)?)),
        _ => Ok(wrap("artifactUpdate", artifact_update_to_v1(src, at)?)),
    }
}

fn status_update_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    expect_kind(&mut src, "status-update", at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, STATUS_UPDATE_FIELDS, at)?;
    let status = need(&mut src, "status", Kind::Obj, at)?;
    out.insert("status".into(), status_to_v1(status, &at.key("status"))?);
    // Checked, then dropped: v1.0 ends the stream instead (see LOSSY).
    take(&mut src, "final", Kind::Bool, at)?;
    Ok(Value::Object(out))
}

fn status_update_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    out.insert("kind".into(), "status-update".into());
    carry(&mut src, &mut out, STATUS_UPDATE_FIELDS, at)?;
    let status = need(&mut src, "status", Kind::Obj, at)?;
    let status = status_to_v03(status, &at.key("status"))?;
    let is_final = status
        .get("state")
        .and_then(Value::as_str)
        .is_some_and(|state| FINAL_STATES.contains(&state));
    out.insert("status".into(), status);
    out.insert("final".into(), is_final.into());
    Ok(Value::Object(out))
}

fn artifact_update_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    expect_kind(&mut src, "artifact-update", at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, ARTIFACT_UPDATE_FIELDS, at)?;
    let artifact = need(&mut src, "artifact", Kind::Obj, at)?;
    out.insert(
        "artifact".into(),
        artifact_to_v1(artifact, &at.key("artifact"))?,
    );
    Ok(Value::Object(out))
}

fn artifact_update_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    out.insert("kind".into(), "artifact-update".into());
    carry(&mut src, &mut out, ARTIFACT_UPDATE_FIELDS, at)?;
    let artifact = need(&mut src, "artifact", Kind::Obj, at)?;
    out.insert(
        "artifact".into(),
        artifact_to_v03(artifact, &at.key("artifact"))?,
    );
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------
// The v0.3 `kind` tag
// ---------------------------------------------------------------------------

/// Removes a v0.3 `kind`, which may be absent but, if present, must be `expected`.
fn expect_kind(src: &mut Obj, expected: &'static str, at: &At) -> Res<()> {
    match src.remove("kind") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(kind)) if kind == expected => Ok(()),
        Some(other) => Err(BridgeError::WrongType {
            path: at.key("kind").render(),
            expected: format!("{expected:?}"),
            found: describe(&other),
        }),
    }
}

const V03_KINDS: [&str; 4] = ["message", "task", "status-update", "artifact-update"];

/// What a v0.3 result or event is: its `kind`, or, when that is absent (the
/// 0.3 SDK's models default it), what its fields say.
pub(super) fn v03_kind(src: &Obj, at: &At) -> Res<&'static str> {
    match src.get("kind") {
        Some(Value::String(kind)) => V03_KINDS
            .into_iter()
            .find(|known| *known == kind.as_str())
            .ok_or_else(|| at.key("kind").unknown("kind", kind)),
        None | Some(Value::Null) => {
            let inferred = if is_present(src, "artifact") {
                Some("artifact-update")
            } else if is_present(src, "status") {
                if is_present(src, "taskId") && !is_present(src, "id") {
                    Some("status-update")
                } else {
                    Some("task")
                }
            } else if ["messageId", "role", "parts"]
                .iter()
                .any(|key| is_present(src, key))
            {
                Some("message")
            } else {
                None
            };
            inferred.ok_or_else(|| at.key("kind").missing())
        }
        Some(other) => Err(at.key("kind").wrong("a string", other)),
    }
}
