//! Version bridge between A2A v0.3 and A2A v1.0 on the JSON-RPC binding:
//! pure functions over `serde_json::Value` that translate method names,
//! request params, results, streaming events and agent cards, both ways.
//!
//! DESIGN.md §2, "envelope": every cross-system call carries `A2A-Version`;
//! §3 gives the hub "v1.0 with a v0.3 bridge".
//! The hub speaks A2A v1.0 inside (the JSON shapes of the `a2a-lf` crate);
//! a caller or provider that speaks v0.3 (the shapes of the a2a-sdk 0.3
//! line) is met at the edge by this module. the envelope reads a
//! caller's version, [`version_of_card`] a provider's card, and the
//! `*_to_v1` / `*_to_v03` functions rewrite what crosses. No I/O, no state,
//! no panics: input that its dialect does not define is a [`BridgeError`]
//! whose `Display` names the JSON path (`params.message.role: unknown role
//! "robot"`).
//!
//! | who speaks 0.3 | request going in | answer coming back |
//! | --- | --- | --- |
//! | a caller | [`params_to_v1`] | [`result_to_v03`], [`event_to_v03`] |
//! | a provider | [`params_to_v03`] | [`result_to_v1`], [`event_to_v1`] |
//! | its card | [`card_to_v1`] (a 0.3 provider's card) | [`card_to_v03`] (served to a 0.3 caller) |
//!
//! # What maps to what
//! - Methods: `message/send` ↔ `SendMessage`, `message/stream` ↔
//!   `SendStreamingMessage`, `tasks/get` ↔ `GetTask`, `tasks/cancel` ↔
//!   `CancelTask`, `tasks/resubscribe` ↔ `SubscribeToTask`,
//!   `tasks/pushNotificationConfig/{set,get,list,delete}` ↔
//!   `{Create,Get,List,Delete}TaskPushNotificationConfig(s)`,
//!   `agent/getAuthenticatedExtendedCard` ↔ `GetExtendedAgentCard`.
//!   v0.3 has no `ListTasks`.
//! - Objects: v0.3 tags messages, tasks, parts and events with `kind`; v1.0
//!   has no `kind` and wraps send results and stream events instead
//!   (`{"task": ...}`, `{"statusUpdate": ...}`). A v0.3 object without
//!   `kind` is accepted when its fields say what it is, as the 0.3 SDK's own
//!   models accept it; a `kind` that is present must be right.
//! - Enums: roles `user`/`agent` ↔ `ROLE_USER`/`ROLE_AGENT`; task states
//!   kebab-case ↔ `TASK_STATE_*`, with `unknown` ↔ `TASK_STATE_UNSPECIFIED`.
//! - Parts: `{kind:"text", text}` ↔ `{text}`, `{kind:"data", data}` ↔
//!   `{data}`, `{kind:"file", file:{bytes|uri, name, mimeType}}` ↔
//!   `{raw|url, filename, mediaType}`; per-part `metadata` carries across.
//! - Send configuration: `blocking` ↔ `returnImmediately` (negated; absent
//!   stays absent, which means "block" in both), `pushNotificationConfig` ↔
//!   `taskPushNotificationConfig`; push authentication `{schemes: [s]}` ↔
//!   `{scheme: s}`.
//! - Push configs: v0.3 nests `{taskId, pushNotificationConfig:{url, ...}}`,
//!   v1.0 is flat `{taskId, url, ...}`; the v0.3 get/list/delete params name
//!   the task `id` and the config `pushNotificationConfigId`, v1.0 names
//!   them `taskId` and `id`. A v0.3 list answer is a bare array, v1.0's is
//!   `{configs: [...]}`.
//! - Cards: v0.3's top-level `url`, `preferredTransport`, `protocolVersion`
//!   and `additionalInterfaces [{url, transport}]` ↔ v1.0's
//!   `supportedInterfaces [{url, protocolBinding, protocolVersion}]` (the
//!   v0.3 main interface first; going to v0.3, the first JSONRPC interface
//!   is the main one, since the bridge is JSON-RPC only, and interfaces of
//!   a version other than 0.3 are left out); OpenAPI-style `securitySchemes`
//!   (`{type:"http", scheme}`) ↔ one-key unions (`{httpAuthSecurityScheme:
//!   {scheme}}`); `security` `[{name: scopes}]` ↔ `securityRequirements`
//!   `[{schemes: {name: {list: scopes}}}]` (the plain v0.3 shape is accepted
//!   in v1.0 input too, as `a2a-lf` accepts it);
//!   `supportsAuthenticatedExtendedCard` ↔ `capabilities.extendedAgentCard`.
//! - Errors: JSON-RPC error objects are the same in both dialects (-32700 to
//!   -32600 and -32001 to -32007 mean the same), so no function here
//!   touches them: pass them unchanged. v1.0 adds -32008 (extension support
//!   required) and -32009 (version not supported), which a 0.3 peer reads as
//!   ordinary JSON-RPC errors; `data` passes as it is. A [`BridgeError`] on a
//!   caller's params is the caller's invalid params (-32602); on a
//!   provider's answer it is an invalid agent response (-32006).
//!
//! Every object is rebuilt from the fields its target dialect defines: a
//! field both dialects have passes unchanged after a type check, a field
//! only the source has is dropped, and so is anything neither defines.
//!
//! # Lossy
//! What does not survive a round trip ([`LOSSY`] holds the same list, one
//! `(what, why)` per construct):
//! - status-update `final`: dropped going to v1.0; derived from the state
//!   going to v0.3.
//! - `tenant`: v0.3 has no tenants.
//! - request `metadata` of tasks/get, tasks/resubscribe and the push-config
//!   methods: v1.0 has none there.
//! - part `filename`/`mediaType` on text and data parts: v0.3 has them on
//!   files only.
//! - push config `taskId` inside a send configuration: v0.3 has none there.
//! - push-config get without `pushNotificationConfigId`: the task id stands
//!   in for it.
//! - push-config list paging (`pageSize`, `pageToken`, `nextPageToken`).
//! - card `signatures`: they sign the original JSON.
//! - card `capabilities.stateTransitionHistory`: v1.0 has none.
//! - card interface `protocolVersion`: one per card in v0.3.
//! - card interface `tenant`: v0.3 has no tenants.
//! - card main interface: the first JSONRPC one becomes the v0.3 url.
//! - card interfaces of another version: left out of a v0.3 card, bar the
//!   main JSONRPC one.
//! - card `additionalInterfaces` naming only the main interface.
//! - oauth2 flows beyond the first: v1.0 has exactly one.
//! - oauth2 `pkceRequired`: v0.3 has none.
//! - fields neither dialect defines.
//!
//! # Refused
//! Some constructs have no form in the other dialect and are a
//! [`BridgeError::Untranslatable`] rather than a silent guess:
//! `ListTasks` (no v0.3 method), role `ROLE_UNSPECIFIED`, a v1.0 data part
//! whose `data` is not a JSON object, push authentication with other than
//! exactly one scheme, the v1.0 `deviceCode` OAuth flow, a v0.3 oauth2
//! scheme with no flow, and a v1.0 card with no interface.

use serde_json::{Map, Value};

type Obj = Map<String, Value>;
type Res<T> = Result<T, BridgeError>;

// ---------------------------------------------------------------------------
// Dialect
// ---------------------------------------------------------------------------

/// Which A2A version a peer speaks: the envelope's version type, so one
/// function reads a version string ([`A2aVersion::parse`]: `1`, `1.N`,
/// `1.N.N` are v1.0; `0.3`, `0.3.N` are v0.3; and a missing header is 0.3,
/// decided where the header is read, [`Envelope::from_headers`]).
///
/// [`A2aVersion::parse`]: exchange::envelope::A2aVersion::parse
/// [`Envelope::from_headers`]: exchange::envelope::Envelope::from_headers
pub use exchange::envelope::A2aVersion as Dialect;

/// From an agent card's JSON. A v1.0 card: the `protocolVersion` of its
/// JSONRPC `supportedInterfaces` entries (V10 if any says 1.x, else V03
/// if any says 0.3.x). Otherwise a v0.3 card: its top-level
/// `protocolVersion`, or V03 for a card shaped like v0.3 (a top-level
/// `url` and no `supportedInterfaces`; the 0.3 SDK's default version is
/// 0.3.0). V10 when none of that settles it.
pub fn version_of_card(card: &Value) -> Dialect {
    let interfaces = card.get("supportedInterfaces");
    let jsonrpc_versions: Vec<Dialect> = interfaces
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter(|entry| {
                    entry
                        .get("protocolBinding")
                        .and_then(Value::as_str)
                        .is_some_and(|b| b.trim().eq_ignore_ascii_case("JSONRPC"))
                })
                .filter_map(|entry| entry.get("protocolVersion").and_then(Value::as_str))
                .filter_map(Dialect::parse)
                .collect()
        })
        .unwrap_or_default();
    if jsonrpc_versions.contains(&Dialect::V1_0) {
        return Dialect::V1_0;
    }
    if jsonrpc_versions.contains(&Dialect::V0_3) {
        return Dialect::V0_3;
    }
    if let Some(dialect) = card
        .get("protocolVersion")
        .and_then(Value::as_str)
        .and_then(Dialect::parse)
    {
        return dialect;
    }
    if interfaces.is_none() && card.get("url").is_some_and(Value::is_string) {
        return Dialect::V0_3;
    }
    Dialect::V1_0
}

// ---------------------------------------------------------------------------
// Method
// ---------------------------------------------------------------------------

/// An A2A JSON-RPC method, whichever dialect names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreatePushConfig,
    GetPushConfig,
    ListPushConfigs,
    DeletePushConfig,
    GetExtendedAgentCard,
}

impl Method {
    /// Every method, in the order of `a2a-lf`'s `jsonrpc::methods`.
    pub const ALL: [Method; 11] = [
        Method::SendMessage,
        Method::SendStreamingMessage,
        Method::GetTask,
        Method::ListTasks,
        Method::CancelTask,
        Method::SubscribeToTask,
        Method::CreatePushConfig,
        Method::GetPushConfig,
        Method::ListPushConfigs,
        Method::DeletePushConfig,
        Method::GetExtendedAgentCard,
    ];

    /// The method a dialect calls `name` (exact, case-sensitive), if any.
    pub fn from_name(dialect: Dialect, name: &str) -> Option<Method> {
        Method::ALL
            .into_iter()
            .find(|method| method.name(dialect) == Some(name))
    }

    /// This method's name in `dialect`; None when the dialect has no such
    /// method (`ListTasks` in v0.3).
    pub fn name(self, dialect: Dialect) -> Option<&'static str> {
        let (v10, v03) = match self {
            Method::SendMessage => ("SendMessage", Some("message/send")),
            Method::SendStreamingMessage => ("SendStreamingMessage", Some("message/stream")),
            Method::GetTask => ("GetTask", Some("tasks/get")),
            Method::ListTasks => ("ListTasks", None),
            Method::CancelTask => ("CancelTask", Some("tasks/cancel")),
            Method::SubscribeToTask => ("SubscribeToTask", Some("tasks/resubscribe")),
            Method::CreatePushConfig => (
                "CreateTaskPushNotificationConfig",
                Some("tasks/pushNotificationConfig/set"),
            ),
            Method::GetPushConfig => (
                "GetTaskPushNotificationConfig",
                Some("tasks/pushNotificationConfig/get"),
            ),
            Method::ListPushConfigs => (
                "ListTaskPushNotificationConfigs",
                Some("tasks/pushNotificationConfig/list"),
            ),
            Method::DeletePushConfig => (
                "DeleteTaskPushNotificationConfig",
                Some("tasks/pushNotificationConfig/delete"),
            ),
            Method::GetExtendedAgentCard => (
                "GetExtendedAgentCard",
                Some("agent/getAuthenticatedExtendedCard"),
            ),
        };
        match dialect {
            Dialect::V1_0 => Some(v10),
            Dialect::V0_3 => v03,
        }
    }

    /// Whether the answer is a stream of events (SSE) rather than one result.
    pub fn is_streaming(self) -> bool {
        matches!(self, Method::SendStreamingMessage | Method::SubscribeToTask)
    }
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Why a translation was refused. Every variant carries the JSON path of
/// the offending value in the input (`params.message.parts[0].kind`), rooted
/// at `params`, `result`, `event` or `card`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BridgeError {
    /// The value at `path` has the wrong JSON type (or the wrong `kind`).
    #[error("{path}: expected {expected}, found {found}")]
    WrongType {
        path: String,
        expected: String,
        found: String,
    },
    /// A required field is absent (or null).
    #[error("{path}: missing required field")]
    Missing { path: String },
    /// A string enum (role, task state, kind, scheme type) that the source
    /// dialect does not define.
    #[error("{path}: unknown {what} {value:?}")]
    UnknownValue {
        path: String,
        what: &'static str,
        value: String,
    },
    /// A union must have exactly one of `fields` and has `found` of them.
    #[error("{path}: expected exactly one of {fields}, found {found}")]
    NotExactlyOne {
        path: String,
        fields: &'static str,
        found: usize,
    },
    /// Valid in the source dialect, but the target has no way to say it.
    #[error("{path}: cannot translate: {what}")]
    Untranslatable { path: String, what: String },
}

impl BridgeError {
    /// The JSON path the error is about.
    pub fn path(&self) -> &str {
        match self {
            BridgeError::WrongType { path, .. }
            | BridgeError::Missing { path }
            | BridgeError::UnknownValue { path, .. }
            | BridgeError::NotExactlyOne { path, .. }
            | BridgeError::Untranslatable { path, .. } => path,
        }
    }
}

// ---------------------------------------------------------------------------
// Lossy constructs
// ---------------------------------------------------------------------------

/// One line per construct that does not survive a round trip, for docs and
/// the closing note: (what, why).
pub const LOSSY: &[(&str, &str)] = &[
    (
        "status-update `final`",
        "v1.0 has no such flag: going to v1.0 it is dropped (the end of the stream says it); \
         going to v0.3 it is derived, true for completed, failed, canceled, rejected, \
         input-required and auth-required",
    ),
    (
        "`tenant`",
        "v0.3 has no tenants: the v1.0 `tenant` of every request is dropped going to v0.3",
    ),
    (
        "request `metadata` of tasks/get, tasks/resubscribe and the push-config methods",
        "the v1.0 GetTask, SubscribeToTask and push-config requests have no metadata; \
         dropped going to v1.0 (tasks/cancel keeps its metadata)",
    ),
    (
        "part `filename`/`mediaType` on text and data parts",
        "v0.3 text and data parts have neither (only files have name and mimeType); \
         dropped going to v0.3",
    ),
    (
        "push config `taskId` inside a send configuration",
        "v0.3's MessageSendConfiguration.pushNotificationConfig has no task id; \
         dropped going to v0.3",
    ),
    (
        "push-config get without `pushNotificationConfigId`",
        "v1.0 needs a config id; the task id is used, as the 0.3 SDK names a task's \
         default config after the task",
    ),
    (
        "push-config list paging (`pageSize`, `pageToken`, `nextPageToken`)",
        "v0.3 lists every config in one bare array; dropped going to v0.3",
    ),
    (
        "card `signatures`",
        "a JWS signs the card's own JSON, which translation changes, so it could not \
         verify; dropped both ways",
    ),
    (
        "card `capabilities.stateTransitionHistory`",
        "v1.0 has no such capability; dropped going to v1.0",
    ),
    (
        "card interface `protocolVersion`",
        "a v0.3 card has one protocolVersion for all its interfaces: the v1.0 main \
         interface's version is kept when it is 0.3.x, anything else is written as 0.3.0 \
         (the v0.3 card is served to callers that will speak 0.3)",
    ),
    (
        "card interface `tenant`",
        "v0.3 interfaces have no tenant; dropped going to v0.3",
    ),
    (
        "card main interface",
        "a v0.3 card's url is the v1.0 card's first JSONRPC interface (the binding this \
         bridge translates), which need not be its first interface",
    ),
    (
        "card interfaces of another version",
        "a v0.3 card lists interfaces that speak 0.3: a v1.0 interface of another version \
         is left out, except the main JSONRPC one, which 0.3 callers reach through this bridge",
    ),
    (
        "card `additionalInterfaces` naming only the main interface",
        "it folds into the first supportedInterfaces entry, and a v0.3 card is given \
         additionalInterfaces only when there is more than one interface",
    ),
    (
        "oauth2 flows beyond the first",
        "v1.0 OAuthFlows is a oneof: of a v0.3 scheme's flows only the first of \
         authorizationCode, clientCredentials, implicit, password is kept",
    ),
    (
        "oauth2 `pkceRequired`",
        "v0.3's authorizationCode flow has no such field; dropped going to v0.3",
    ),
    (
        "fields neither dialect defines",
        "every object is rebuilt from the fields its target defines; unknown extras \
         are dropped",
    ),
];

// ---------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------

/// A v0.3 request's params -> v1.0 params (a 0.3 caller calling the hub).
pub fn params_to_v1(method: Method, params: Value) -> Result<Value, BridgeError> {
    let at = At::root("params");
    if method == Method::GetExtendedAgentCard {
        // The v0.3 request has no params; v1.0's are `{tenant?}`.
        return match params {
            Value::Null | Value::Object(_) => Ok(Value::Object(Obj::new())),
            other => Err(at.wrong("an object", &other)),
        };
    }
    let mut src = object(params, &at)?;
    let mut out = Obj::new();
    match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            let message = need(&mut src, "message", Kind::Obj, &at)?;
            out.insert(
                "message".into(),
                message_to_v1(message, &at.key("message"))?,
            );
            if let Some(config) = take(&mut src, "configuration", Kind::Obj, &at)? {
                let config = config_to_v1(config, &at.key("configuration"))?;
                out.insert("configuration".into(), config);
            }
            carry(
                &mut src,
                &mut out,
                &[("metadata", Kind::Obj, Need::Optional)],
                &at,
            )?;
        }
        Method::GetTask => carry(&mut src, &mut out, GET_TASK_FIELDS, &at)?,
        Method::CancelTask => carry(&mut src, &mut out, CANCEL_TASK_FIELDS, &at)?,
        Method::SubscribeToTask => carry(&mut src, &mut out, SUBSCRIBE_FIELDS, &at)?,
        Method::CreatePushConfig => return task_push_config_to_v1(Value::Object(src), &at),
        Method::GetPushConfig => {
            let task_id = need_str(&mut src, "id", &at)?;
            let config_id = take_str(&mut src, "pushNotificationConfigId", &at)?;
            out.insert(
                "id".into(),
                config_id.unwrap_or_else(|| task_id.clone()).into(),
            );
            out.insert("taskId".into(), task_id.into());
        }
        Method::ListPushConfigs => {
            out.insert("taskId".into(), need_str(&mut src, "id", &at)?.into());
        }
        Method::DeletePushConfig => {
            out.insert("taskId".into(), need_str(&mut src, "id", &at)?.into());
            let config_id = need_str(&mut src, "pushNotificationConfigId", &at)?;
            out.insert("id".into(), config_id.into());
        }
        // Answered above: its params need not be an object.
        Method::GetExtendedAgentCard => {}
        Method::ListTasks => return Err(no_v03_method(method)),
    }
    Ok(Value::Object(out))
}

/// v1.0 params -> a v0.3 request's params (the hub calling a 0.3 provider).
/// `GetExtendedAgentCard` gives `{}`: the v0.3 request has no params, and an
/// empty object is what to send if the envelope wants one.
pub fn params_to_v03(method: Method, params: Value) -> Result<Value, BridgeError> {
    let at = At::root("params");
    if method == Method::GetExtendedAgentCard {
        return match params {
            Value::Null | Value::Object(_) => Ok(Value::Object(Obj::new())),
            other => Err(at.wrong("an object", &other)),
        };
    }
    let mut src = object(params, &at)?;
    let mut out = Obj::new();
    match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            let message = need(&mut src, "message", Kind::Obj, &at)?;
            out.insert(
                "message".into(),
                message_to_v03(message, &at.key("message"))?,
            );
            if let Some(config) = take(&mut src, "configuration", Kind::Obj, &at)? {
                let config = config_to_v03(config, &at.key("configuration"))?;
                out.insert("configuration".into(), config);
            }
            carry(
                &mut src,
                &mut out,
                &[("metadata", Kind::Obj, Need::Optional)],
                &at,
            )?;
        }
        Method::GetTask => carry(&mut src, &mut out, GET_TASK_FIELDS, &at)?,
        Method::CancelTask => carry(&mut src, &mut out, CANCEL_TASK_FIELDS, &at)?,
        Method::SubscribeToTask => carry(&mut src, &mut out, SUBSCRIBE_FIELDS, &at)?,
        Method::CreatePushConfig => return task_push_config_to_v03(Value::Object(src), &at),
        Method::GetPushConfig | Method::DeletePushConfig => {
            out.insert("id".into(), need_str(&mut src, "taskId", &at)?.into());
            let config_id = need_str(&mut src, "id", &at)?;
            out.insert("pushNotificationConfigId".into(), config_id.into());
        }
        Method::ListPushConfigs => {
            out.insert("id".into(), need_str(&mut src, "taskId", &at)?.into());
        }
        // Answered above: its params need not be an object.
        Method::GetExtendedAgentCard => {}
        Method::ListTasks => return Err(no_v03_method(method)),
    }
    Ok(Value::Object(out))
}

/// A v1.0 result -> a v0.3 result (answering a 0.3 caller). For the two
/// streaming methods the result is one event, as in [`event_to_v03`].
pub fn result_to_v03(method: Method, result: Value) -> Result<Value, BridgeError> {
    let at = At::root("result");
    match method {
        Method::SendMessage => {
            let mut src = object(result, &at)?;
            let (key, inner) = one_of(&mut src, &["task", "message"], "task, message", &at)?;
            if key == "task" {
                task_to_v03(inner, &at.key(key))
            } else {
                message_to_v03(inner, &at.key(key))
            }
        }
        Method::SendStreamingMessage | Method::SubscribeToTask => event_to_v03_at(result, &at),
        Method::GetTask | Method::CancelTask => task_to_v03(result, &at),
        Method::CreatePushConfig | Method::GetPushConfig => task_push_config_to_v03(result, &at),
        Method::ListPushConfigs => {
            let mut src = object(result, &at)?;
            let configs = take(&mut src, "configs", Kind::Arr, &at)?;
            let configs = configs.unwrap_or_else(|| Value::Array(Vec::new()));
            list(configs, &at.key("configs"), task_push_config_to_v03)
        }
        Method::DeletePushConfig => match result {
            // google.protobuf.Empty is `{}` in ProtoJSON.
            Value::Null => Ok(Value::Null),
            Value::Object(map) if map.is_empty() => Ok(Value::Null),
            other => Err(at.wrong("null", &other)),
        },
        Method::GetExtendedAgentCard => card_to_v03_at(result, &at),
        Method::ListTasks => Err(no_v03_method(method)),
    }
}

/// A v0.3 result -> a v1.0 result (a 0.3 provider's answer). For the two
/// streaming methods the result is one event, as in [`event_to_v1`].
pub fn result_to_v1(method: Method, result: Value) -> Result<Value, BridgeError> {
    let at = At::root("result");
    match method {
        Method::SendMessage => {
            let src = object(result, &at)?;
            match v03_kind(&src, &at)? {
                "task" => Ok(wrap("task", task_to_v1(Value::Object(src), &at)?)),
                "message" => Ok(wrap("message", message_to_v1(Value::Object(src), &at)?)),
                other => Err(BridgeError::WrongType {
                    path: at.key("kind").render(),
                    expected: "\"task\" or \"message\"".into(),
                    found: format!("{other:?}"),
                }),
            }
        }
        Method::SendStreamingMessage | Method::SubscribeToTask => event_to_v1_at(result, &at),
        Method::GetTask | Method::CancelTask => task_to_v1(result, &at),
        Method::CreatePushConfig | Method::GetPushConfig => task_push_config_to_v1(result, &at),
        Method::ListPushConfigs => {
            let configs = list(result, &at, task_push_config_to_v1)?;
            Ok(wrap("configs", configs))
        }
        Method::DeletePushConfig => match result {
            Value::Null => Ok(Value::Null),
            other => Err(at.wrong("null", &other)),
        },
        Method::GetExtendedAgentCard => card_to_v1_at(result, &at),
        Method::ListTasks => Err(no_v03_method(method)),
    }
}

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

/// A v0.3 agent card -> a v1.0 agent card: the main interface first, every
/// interface with the card's `protocolVersion` (default "0.3.0"), so
/// [`version_of_card`] of the result is still v0.3.
pub fn card_to_v1(card: Value) -> Result<Value, BridgeError> {
    card_to_v1_at(card, &At::root("card"))
}

/// A v1.0 agent card -> a v0.3 agent card: its `url` is the first JSONRPC
/// interface, its `protocolVersion` that interface's when it is 0.3.x and
/// "0.3.0" otherwise (the card is for callers that will speak 0.3 there).
pub fn card_to_v03(card: Value) -> Result<Value, BridgeError> {
    card_to_v03_at(card, &At::root("card"))
}

fn no_v03_method(method: Method) -> BridgeError {
    BridgeError::Untranslatable {
        path: "method".into(),
        what: format!("{method:?} has no v0.3 JSON-RPC method"),
    }
}

// ---------------------------------------------------------------------------
// Fields that mean the same in both dialects, per construct
// ---------------------------------------------------------------------------

/// (name, type, required) of a field spelled and typed alike in both dialects.
type Same = (&'static str, Kind, Need);

const GET_TASK_FIELDS: &[Same] = &[
    ("id", Kind::Str, Need::Required),
    ("historyLength", Kind::Int, Need::Optional),
];
const CANCEL_TASK_FIELDS: &[Same] = &[
    ("id", Kind::Str, Need::Required),
    ("metadata", Kind::Obj, Need::Optional),
];
const SUBSCRIBE_FIELDS: &[Same] = &[("id", Kind::Str, Need::Required)];
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
const SEND_CONFIG_FIELDS: &[Same] = &[
    ("acceptedOutputModes", Kind::StrList, Need::Optional),
    ("historyLength", Kind::Int, Need::Optional),
];
const PUSH_CONFIG_FIELDS: &[Same] = &[
    ("url", Kind::Str, Need::Required),
    ("id", Kind::Str, Need::Optional),
    ("token", Kind::Str, Need::Optional),
];
const CARD_FIELDS: &[Same] = &[
    ("name", Kind::Str, Need::Required),
    ("version", Kind::Str, Need::Required),
    ("documentationUrl", Kind::Str, Need::Optional),
    ("iconUrl", Kind::Str, Need::Optional),
];
const CAPABILITY_FIELDS: &[Same] = &[
    ("streaming", Kind::Bool, Need::Optional),
    ("pushNotifications", Kind::Bool, Need::Optional),
];
const EXTENSION_FIELDS: &[Same] = &[
    ("uri", Kind::Str, Need::Required),
    ("description", Kind::Str, Need::Optional),
    ("required", Kind::Bool, Need::Optional),
    ("params", Kind::Obj, Need::Optional),
];
const PROVIDER_FIELDS: &[Same] = &[
    ("organization", Kind::Str, Need::Required),
    ("url", Kind::Str, Need::Required),
];
const SKILL_FIELDS: &[Same] = &[
    ("id", Kind::Str, Need::Required),
    ("name", Kind::Str, Need::Required),
    ("description", Kind::Str, Need::Required),
    ("tags", Kind::StrList, Need::Required),
    ("examples", Kind::StrList, Need::Optional),
    ("inputModes", Kind::StrList, Need::Optional),
    ("outputModes", Kind::StrList, Need::Optional),
];

// ---------------------------------------------------------------------------
// Message and part
// ---------------------------------------------------------------------------

fn message_to_v1(value: Value, at: &At) -> Res<Value> {
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

fn message_to_v03(value: Value, at: &At) -> Res<Value> {
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

fn task_to_v1(value: Value, at: &At) -> Res<Value> {
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

fn task_to_v03(value: Value, at: &At) -> Res<Value> {
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

fn event_to_v03_at(value: Value, at: &At) -> Res<Value> {
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

fn event_to_v1_at(value: Value, at: &At) -> Res<Value> {
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
// Send configuration and push configs
// ---------------------------------------------------------------------------

fn config_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, SEND_CONFIG_FIELDS, at)?;
    if let Some(Value::Bool(blocking)) = take(&mut src, "blocking", Kind::Bool, at)? {
        out.insert("returnImmediately".into(), (!blocking).into());
    }
    if let Some(push) = take(&mut src, "pushNotificationConfig", Kind::Obj, at)? {
        let push_at = at.key("pushNotificationConfig");
        let push = push_config_to_v1(object(push, &push_at)?, &push_at)?;
        out.insert("taskPushNotificationConfig".into(), Value::Object(push));
    }
    Ok(Value::Object(out))
}

fn config_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, SEND_CONFIG_FIELDS, at)?;
    if let Some(Value::Bool(immediately)) = take(&mut src, "returnImmediately", Kind::Bool, at)? {
        out.insert("blocking".into(), (!immediately).into());
    }
    // `a2a-lf` also reads the field under its v0.3 name.
    for key in ["taskPushNotificationConfig", "pushNotificationConfig"] {
        if let Some(push) = take(&mut src, key, Kind::Obj, at)? {
            let push_at = at.key(key);
            let push = push_config_to_v03(object(push, &push_at)?, &push_at)?;
            out.insert("pushNotificationConfig".into(), Value::Object(push));
            break;
        }
    }
    Ok(Value::Object(out))
}

/// A v0.3 PushNotificationConfig `{url, id?, token?, authentication?}` -> the
/// same fields of a v1.0 TaskPushNotificationConfig.
fn push_config_to_v1(mut src: Obj, at: &At) -> Res<Obj> {
    let mut out = Obj::new();
    carry(&mut src, &mut out, PUSH_CONFIG_FIELDS, at)?;
    if let Some(auth) = take(&mut src, "authentication", Kind::Obj, at)? {
        let auth_at = at.key("authentication");
        let mut auth = object(auth, &auth_at)?;
        let schemes = items(need(&mut auth, "schemes", Kind::StrList, &auth_at)?);
        let count = schemes.len();
        let mut schemes = schemes.into_iter();
        let scheme = match (schemes.next(), schemes.next()) {
            (Some(scheme), None) => scheme,
            _ => {
                return Err(auth_at.key("schemes").untranslatable(format!(
                    "v1.0 push authentication names exactly one scheme, this names {count}"
                )))
            }
        };
        let mut v1_auth = Obj::new();
        v1_auth.insert("scheme".into(), scheme);
        carry(
            &mut auth,
            &mut v1_auth,
            &[("credentials", Kind::Str, Need::Optional)],
            &auth_at,
        )?;
        out.insert("authentication".into(), Value::Object(v1_auth));
    }
    Ok(out)
}

/// The fields of a v1.0 TaskPushNotificationConfig -> a v0.3
/// PushNotificationConfig (`taskId` and `tenant` are not read here).
fn push_config_to_v03(mut src: Obj, at: &At) -> Res<Obj> {
    let mut out = Obj::new();
    carry(&mut src, &mut out, PUSH_CONFIG_FIELDS, at)?;
    if let Some(auth) = take(&mut src, "authentication", Kind::Obj, at)? {
        let auth_at = at.key("authentication");
        let mut auth = object(auth, &auth_at)?;
        let scheme = need(&mut auth, "scheme", Kind::Str, &auth_at)?;
        let mut v03_auth = Obj::new();
        v03_auth.insert("schemes".into(), Value::Array(vec![scheme]));
        carry(
            &mut auth,
            &mut v03_auth,
            &[("credentials", Kind::Str, Need::Optional)],
            &auth_at,
        )?;
        out.insert("authentication".into(), Value::Object(v03_auth));
    }
    Ok(out)
}

/// v0.3 `{taskId, pushNotificationConfig: {...}}` -> v1.0 `{taskId, url, ...}`.
fn task_push_config_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let task_id = need_str(&mut src, "taskId", at)?;
    let inner_at = at.key("pushNotificationConfig");
    let inner = need(&mut src, "pushNotificationConfig", Kind::Obj, at)?;
    let mut out = push_config_to_v1(object(inner, &inner_at)?, &inner_at)?;
    out.insert("taskId".into(), task_id.into());
    Ok(Value::Object(out))
}

/// v1.0 `{taskId, url, ...}` -> v0.3 `{taskId, pushNotificationConfig: {...}}`.
fn task_push_config_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let task_id = need_str(&mut src, "taskId", at)?;
    let inner = push_config_to_v03(src, at)?;
    let mut out = Obj::new();
    out.insert("taskId".into(), task_id.into());
    out.insert("pushNotificationConfig".into(), Value::Object(inner));
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------

fn card_to_v1_at(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, CARD_FIELDS, at)?;
    let description = take_str(&mut src, "description", at)?.unwrap_or_default();
    out.insert("description".into(), description.into());

    // The main interface first, then the others (the main one again is skipped).
    let url = need_str(&mut src, "url", at)?;
    let transport = take_str(&mut src, "preferredTransport", at)?;
    let transport = transport.unwrap_or_else(|| "JSONRPC".into());
    let version = take_str(&mut src, "protocolVersion", at)?;
    let version = version.unwrap_or_else(|| "0.3.0".into());
    let mut interfaces = vec![interface_v1(&url, &transport, &version)];
    if let Some(extra) = take(&mut src, "additionalInterfaces", Kind::Arr, at)? {
        let extra_at = at.key("additionalInterfaces");
        for (index, entry) in items(extra).into_iter().enumerate() {
            let entry_at = extra_at.index(index);
            let mut entry = object(entry, &entry_at)?;
            let entry_url = need_str(&mut entry, "url", &entry_at)?;
            let entry_transport = need_str(&mut entry, "transport", &entry_at)?;
            if entry_url != url || entry_transport != transport {
                interfaces.push(interface_v1(&entry_url, &entry_transport, &version));
            }
        }
    }
    out.insert("supportedInterfaces".into(), Value::Array(interfaces));

    let caps_at = at.key("capabilities");
    let caps = take(&mut src, "capabilities", Kind::Obj, at)?;
    let mut caps = object(caps.unwrap_or_else(empty_object), &caps_at)?;
    let mut caps_out = Obj::new();
    carry(&mut caps, &mut caps_out, CAPABILITY_FIELDS, &caps_at)?;
    if let Some(extensions) = take(&mut caps, "extensions", Kind::Arr, &caps_at)? {
        let extensions = list(extensions, &caps_at.key("extensions"), extension)?;
        caps_out.insert("extensions".into(), extensions);
    }
    if let Some(extended) = take(
        &mut src,
        "supportsAuthenticatedExtendedCard",
        Kind::Bool,
        at,
    )? {
        caps_out.insert("extendedAgentCard".into(), extended);
    }
    out.insert("capabilities".into(), Value::Object(caps_out));

    card_common(&mut src, &mut out, at, skill_to_v1)?;
    if let Some(schemes) = take(&mut src, "securitySchemes", Kind::Obj, at)? {
        let schemes = map_values(schemes, &at.key("securitySchemes"), scheme_to_v1)?;
        out.insert("securitySchemes".into(), schemes);
    }
    if let Some(security) = take(&mut src, "security", Kind::Arr, at)? {
        let security = list(security, &at.key("security"), requirement_to_v1)?;
        out.insert("securityRequirements".into(), security);
    }
    Ok(Value::Object(out))
}

fn card_to_v03_at(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, CARD_FIELDS, at)?;
    let description = take_str(&mut src, "description", at)?.unwrap_or_default();
    out.insert("description".into(), description.into());

    let interfaces_at = at.key("supportedInterfaces");
    let interfaces = need(&mut src, "supportedInterfaces", Kind::Arr, at)?;
    let mut entries = Vec::new();
    for (index, entry) in items(interfaces).into_iter().enumerate() {
        let entry_at = interfaces_at.index(index);
        let mut entry = object(entry, &entry_at)?;
        let url = need_str(&mut entry, "url", &entry_at)?;
        let binding = need_str(&mut entry, "protocolBinding", &entry_at)?;
        let version = need_str(&mut entry, "protocolVersion", &entry_at)?;
        entries.push((url, binding, version));
    }
    // The main interface is the first JSONRPC one, the binding this bridge
    // translates; the others are listed when they speak 0.3 themselves.
    let main = entries
        .iter()
        .position(|(_, binding, _)| binding.trim().eq_ignore_ascii_case("JSONRPC"))
        .unwrap_or(0);
    let Some((url, binding, version)) = entries.get(main) else {
        return Err(
            interfaces_at.untranslatable("a v0.3 card needs a url, and this card has no interface")
        );
    };
    out.insert("url".into(), url.as_str().into());
    out.insert("preferredTransport".into(), binding.as_str().into());
    let version = if Dialect::parse(version) == Some(Dialect::V0_3) {
        version.as_str()
    } else {
        "0.3.0"
    };
    out.insert("protocolVersion".into(), version.into());
    let mut additional: Vec<Value> = Vec::new();
    for (index, (url, binding, version)) in entries.iter().enumerate() {
        if index != main && Dialect::parse(version) != Some(Dialect::V0_3) {
            continue;
        }
        let mut entry = Obj::new();
        entry.insert("url".into(), url.as_str().into());
        entry.insert("transport".into(), binding.as_str().into());
        // The same URL and transport once (a v1.0 card may list one
        // endpoint under both versions; v0.3 has no version to tell them
        // apart).
        let entry = Value::Object(entry);
        if !additional.contains(&entry) {
            additional.push(entry);
        }
    }
    if additional.len() > 1 {
        out.insert("additionalInterfaces".into(), Value::Array(additional));
    }

    let caps_at = at.key("capabilities");
    let caps = take(&mut src, "capabilities", Kind::Obj, at)?;
    let mut caps = object(caps.unwrap_or_else(empty_object), &caps_at)?;
    let mut caps_out = Obj::new();
    carry(&mut caps, &mut caps_out, CAPABILITY_FIELDS, &caps_at)?;
    if let Some(extensions) = take(&mut caps, "extensions", Kind::Arr, &caps_at)? {
        let extensions = list(extensions, &caps_at.key("extensions"), extension)?;
        caps_out.insert("extensions".into(), extensions);
    }
    if let Some(extended) = take(&mut caps, "extendedAgentCard", Kind::Bool, &caps_at)? {
        out.insert("supportsAuthenticatedExtendedCard".into(), extended);
    }
    out.insert("capabilities".into(), Value::Object(caps_out));

    card_common(&mut src, &mut out, at, skill_to_v03)?;
    if let Some(schemes) = take(&mut src, "securitySchemes", Kind::Obj, at)? {
        let schemes = map_values(schemes, &at.key("securitySchemes"), scheme_to_v03)?;
        out.insert("securitySchemes".into(), schemes);
    }
    if let Some(security) = take(&mut src, "securityRequirements", Kind::Arr, at)? {
        let security = list(
            security,
            &at.key("securityRequirements"),
            requirement_to_v03,
        )?;
        out.insert("security".into(), security);
    }
    Ok(Value::Object(out))
}

/// The card fields spelled alike in both dialects: default modes, skills
/// (each through `skill`) and provider. The lists default to empty, as
/// `a2a-lf` defaults them.
fn card_common(
    src: &mut Obj,
    out: &mut Obj,
    at: &At,
    skill: fn(Value, &At) -> Res<Value>,
) -> Res<()> {
    for key in ["defaultInputModes", "defaultOutputModes"] {
        let modes = take(src, key, Kind::StrList, at)?;
        out.insert(key.into(), modes.unwrap_or_else(empty_array));
    }
    let skills = take(src, "skills", Kind::Arr, at)?.unwrap_or_else(empty_array);
    out.insert("skills".into(), list(skills, &at.key("skills"), skill)?);
    if let Some(provider) = take(src, "provider", Kind::Obj, at)? {
        let provider_at = at.key("provider");
        let mut provider = object(provider, &provider_at)?;
        let mut provider_out = Obj::new();
        carry(
            &mut provider,
            &mut provider_out,
            PROVIDER_FIELDS,
            &provider_at,
        )?;
        out.insert("provider".into(), Value::Object(provider_out));
    }
    Ok(())
}

fn interface_v1(url: &str, binding: &str, version: &str) -> Value {
    let mut entry = Obj::new();
    entry.insert("url".into(), url.into());
    entry.insert("protocolBinding".into(), binding.into());
    entry.insert("protocolVersion".into(), version.into());
    Value::Object(entry)
}

fn extension(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, EXTENSION_FIELDS, at)?;
    Ok(Value::Object(out))
}

fn skill_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, SKILL_FIELDS, at)?;
    if let Some(security) = take(&mut src, "security", Kind::Arr, at)? {
        let security = list(security, &at.key("security"), requirement_to_v1)?;
        out.insert("securityRequirements".into(), security);
    }
    Ok(Value::Object(out))
}

fn skill_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let mut out = Obj::new();
    carry(&mut src, &mut out, SKILL_FIELDS, at)?;
    if let Some(security) = take(&mut src, "securityRequirements", Kind::Arr, at)? {
        let security = list(
            security,
            &at.key("securityRequirements"),
            requirement_to_v03,
        )?;
        out.insert("security".into(), security);
    }
    Ok(Value::Object(out))
}

/// v0.3 `{name: [scopes]}` -> v1.0 `{"schemes": {name: {"list": [scopes]}}}`.
fn requirement_to_v1(value: Value, at: &At) -> Res<Value> {
    let src = object(value, at)?;
    let mut schemes = Obj::new();
    for (name, scopes) in src {
        check(&scopes, Kind::StrList, &at.key(&name))?;
        schemes.insert(name, wrap("list", scopes));
    }
    Ok(wrap("schemes", Value::Object(schemes)))
}

/// v1.0 `{"schemes": {name: {"list": [scopes]}}}` (or the plain v0.3 shape,
/// which `a2a-lf` also reads) -> v0.3 `{name: [scopes]}`.
fn requirement_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let (schemes, schemes_at, wrapped) = match src.remove("schemes") {
        Some(Value::Object(schemes)) => (schemes, at.key("schemes"), true),
        // A plain requirement may name a scheme "schemes".
        Some(other) => {
            src.insert("schemes".into(), other);
            (src, *at, false)
        }
        None => (src, *at, false),
    };
    let mut out = Obj::new();
    for (name, scopes) in schemes {
        let scopes_at = schemes_at.key(&name);
        let scopes = match scopes {
            Value::Object(mut wrapper) if wrapped => {
                let list_at = scopes_at.key("list");
                match wrapper.remove("list") {
                    Some(list) => {
                        check(&list, Kind::StrList, &list_at)?;
                        list
                    }
                    // ProtoJSON omits an empty list: `{}` is `{"list": []}`.
                    None if wrapper.is_empty() => empty_array(),
                    None => return Err(list_at.missing()),
                }
            }
            other => {
                check(&other, Kind::StrList, &scopes_at)?;
                other
            }
        };
        out.insert(name, scopes);
    }
    Ok(Value::Object(out))
}

/// v0.3 OpenAPI-style scheme `{type, ...}` -> v1.0 one-key union.
fn scheme_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let kind = need_str(&mut src, "type", at)?;
    let mut out = Obj::new();
    carry(
        &mut src,
        &mut out,
        &[("description", Kind::Str, Need::Optional)],
        at,
    )?;
    let key = match kind.as_str() {
        "apiKey" => {
            out.insert("location".into(), need(&mut src, "in", Kind::Str, at)?);
            carry(
                &mut src,
                &mut out,
                &[("name", Kind::Str, Need::Required)],
                at,
            )?;
            "apiKeySecurityScheme"
        }
        "http" => {
            carry(&mut src, &mut out, HTTP_SCHEME_FIELDS, at)?;
            "httpAuthSecurityScheme"
        }
        "oauth2" => {
            let flows = need(&mut src, "flows", Kind::Obj, at)?;
            out.insert("flows".into(), flows_to_v1(flows, &at.key("flows"))?);
            carry(&mut src, &mut out, OAUTH2_SCHEME_FIELDS, at)?;
            "oauth2SecurityScheme"
        }
        "openIdConnect" => {
            carry(&mut src, &mut out, OPENID_SCHEME_FIELDS, at)?;
            "openIdConnectSecurityScheme"
        }
        "mutualTLS" => "mtlsSecurityScheme",
        other => return Err(at.key("type").unknown("security scheme type", other)),
    };
    Ok(wrap(key, Value::Object(out)))
}

/// v1.0 one-key union -> v0.3 OpenAPI-style scheme `{type, ...}`.
fn scheme_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let (key, inner) = one_of(
        &mut src,
        &[
            "apiKeySecurityScheme",
            "httpAuthSecurityScheme",
            "oauth2SecurityScheme",
            "openIdConnectSecurityScheme",
            "mtlsSecurityScheme",
        ],
        "apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, \
         openIdConnectSecurityScheme, mtlsSecurityScheme",
        at,
    )?;
    let at = at.key(key);
    let mut src = object(inner, &at)?;
    let mut out = Obj::new();
    carry(
        &mut src,
        &mut out,
        &[("description", Kind::Str, Need::Optional)],
        &at,
    )?;
    let kind = match key {
        "apiKeySecurityScheme" => {
            out.insert("in".into(), need(&mut src, "location", Kind::Str, &at)?);
            carry(
                &mut src,
                &mut out,
                &[("name", Kind::Str, Need::Required)],
                &at,
            )?;
            "apiKey"
        }
        "httpAuthSecurityScheme" => {
            carry(&mut src, &mut out, HTTP_SCHEME_FIELDS, &at)?;
            "http"
        }
        "oauth2SecurityScheme" => {
            let flows = need(&mut src, "flows", Kind::Obj, &at)?;
            out.insert("flows".into(), flows_to_v03(flows, &at.key("flows"))?);
            carry(&mut src, &mut out, OAUTH2_SCHEME_FIELDS, &at)?;
            "oauth2"
        }
        "openIdConnectSecurityScheme" => {
            carry(&mut src, &mut out, OPENID_SCHEME_FIELDS, &at)?;
            "openIdConnect"
        }
        _ => "mutualTLS",
    };
    out.insert("type".into(), kind.into());
    Ok(Value::Object(out))
}

const HTTP_SCHEME_FIELDS: &[Same] = &[
    ("scheme", Kind::Str, Need::Required),
    ("bearerFormat", Kind::Str, Need::Optional),
];
const OAUTH2_SCHEME_FIELDS: &[Same] = &[("oauth2MetadataUrl", Kind::Str, Need::Optional)];
const OPENID_SCHEME_FIELDS: &[Same] = &[("openIdConnectUrl", Kind::Str, Need::Required)];

/// v0.3 flows, in the order the first present one is chosen for v1.0.
const V03_FLOWS: [&str; 4] = [
    "authorizationCode",
    "clientCredentials",
    "implicit",
    "password",
];

/// v0.3 OAuthFlows (any of four) -> v1.0 OAuthFlows (exactly one).
fn flows_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let Some(name) = V03_FLOWS.into_iter().find(|name| is_present(&src, name)) else {
        return Err(at.untranslatable("v1.0 needs exactly one OAuth flow, this scheme has none"));
    };
    let flow_at = at.key(name);
    let flow = object(need(&mut src, name, Kind::Obj, at)?, &flow_at)?;
    Ok(wrap(name, flow_to(flow, name, &flow_at)?))
}

/// v1.0 OAuthFlows (exactly one) -> v0.3 OAuthFlows.
fn flows_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let (name, flow) = one_of(
        &mut src,
        &[
            "authorizationCode",
            "clientCredentials",
            "deviceCode",
            "implicit",
            "password",
        ],
        "authorizationCode, clientCredentials, deviceCode, implicit, password",
        at,
    )?;
    let flow_at = at.key(name);
    if name == "deviceCode" {
        return Err(flow_at.untranslatable("the deviceCode OAuth flow has no v0.3 form"));
    }
    let flow = object(flow, &flow_at)?;
    Ok(wrap(name, flow_to(flow, name, &flow_at)?))
}

/// One flow's fields, spelled alike in both dialects (v1.0's
/// `pkceRequired` has no v0.3 field and is not carried).
fn flow_to(mut src: Obj, name: &str, at: &At) -> Res<Value> {
    let fields: &[Same] = match name {
        "authorizationCode" => &[
            ("authorizationUrl", Kind::Str, Need::Required),
            ("tokenUrl", Kind::Str, Need::Required),
            ("refreshUrl", Kind::Str, Need::Optional),
            ("scopes", Kind::StrMap, Need::Required),
        ],
        "implicit" => &[
            ("authorizationUrl", Kind::Str, Need::Required),
            ("refreshUrl", Kind::Str, Need::Optional),
            ("scopes", Kind::StrMap, Need::Required),
        ],
        _ => &[
            ("tokenUrl", Kind::Str, Need::Required),
            ("refreshUrl", Kind::Str, Need::Optional),
            ("scopes", Kind::StrMap, Need::Required),
        ],
    };
    let mut out = Obj::new();
    carry(&mut src, &mut out, fields, at)?;
    Ok(Value::Object(out))
}

// ---------------------------------------------------------------------------
// JSON access, each check naming its path
// ---------------------------------------------------------------------------

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Str,
    Bool,
    Int,
    Obj,
    Arr,
    StrList,
    StrMap,
    Any,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::Str => "a string",
            Kind::Bool => "a boolean",
            Kind::Int => "an integer",
            Kind::Obj => "an object",
            Kind::Arr => "an array",
            Kind::StrList => "an array of strings",
            Kind::StrMap => "an object of strings",
            Kind::Any => "a value",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Required,
    Optional,
}

/// Checks a (non-null) value against `kind`; a bad list item or map value
/// is reported at its own path.
fn check(value: &Value, kind: Kind, at: &At) -> Res<()> {
    let ok = match kind {
        Kind::Str => value.is_string(),
        Kind::Bool => value.is_boolean(),
        Kind::Int => value.is_i64() || value.is_u64(),
        Kind::Obj => value.is_object(),
        Kind::Arr => value.is_array(),
        Kind::Any => !value.is_null(),
        Kind::StrList => match value.as_array() {
            Some(items) => {
                for (index, item) in items.iter().enumerate() {
                    if !item.is_string() {
                        return Err(at.index(index).wrong("a string", item));
                    }
                }
                true
            }
            None => false,
        },
        Kind::StrMap => match value.as_object() {
            Some(entries) => {
                for (key, item) in entries {
                    if !item.is_string() {
                        return Err(at.key(key).wrong("a string", item));
                    }
                }
                true
            }
            None => false,
        },
    };
    if ok {
        Ok(())
    } else {
        Err(at.wrong(kind.expected(), value))
    }
}

fn object(value: Value, at: &At) -> Res<Obj> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(at.wrong("an object", &other)),
    }
}

/// Takes `key` out of `src`, checked against `kind`; absent and null are
/// both None.
fn take(src: &mut Obj, key: &str, kind: Kind, at: &At) -> Res<Option<Value>> {
    match src.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            check(&value, kind, &at.key(key))?;
            Ok(Some(value))
        }
    }
}

fn need(src: &mut Obj, key: &str, kind: Kind, at: &At) -> Res<Value> {
    take(src, key, kind, at)?.ok_or_else(|| at.key(key).missing())
}

fn take_str(src: &mut Obj, key: &str, at: &At) -> Res<Option<String>> {
    match src.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(at.key(key).wrong("a string", &other)),
    }
}

fn need_str(src: &mut Obj, key: &str, at: &At) -> Res<String> {
    take_str(src, key, at)?.ok_or_else(|| at.key(key).missing())
}

/// Moves the fields that mean the same in both dialects from `src` to
/// `dst`, each after its type check.
fn carry(src: &mut Obj, dst: &mut Obj, fields: &[Same], at: &At) -> Res<()> {
    for &(key, kind, need) in fields {
        match take(src, key, kind, at)? {
            Some(value) => {
                dst.insert(key.into(), value);
            }
            None if need == Need::Required => return Err(at.key(key).missing()),
            None => {}
        }
    }
    Ok(())
}

/// Moves the optional string `from` of `src` to `to` of `dst`.
fn rename(src: &mut Obj, dst: &mut Obj, from: &str, to: &str, at: &At) -> Res<()> {
    if let Some(value) = take(src, from, Kind::Str, at)? {
        dst.insert(to.into(), value);
    }
    Ok(())
}

/// Translates every item of an array, each at its own index.
fn list(value: Value, at: &At, each: fn(Value, &At) -> Res<Value>) -> Res<Value> {
    match value {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(index, item)| each(item, &at.index(index)))
            .collect::<Res<Vec<Value>>>()
            .map(Value::Array),
        other => Err(at.wrong("an array", &other)),
    }
}

/// Translates every value of an object, each at its own key.
fn map_values(value: Value, at: &At, each: fn(Value, &At) -> Res<Value>) -> Res<Value> {
    let mut out = Obj::new();
    for (key, item) in object(value, at)? {
        let item = each(item, &at.key(&key))?;
        out.insert(key, item);
    }
    Ok(Value::Object(out))
}

/// The items of an array already checked to be one.
fn items(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

fn wrap(key: &str, value: Value) -> Value {
    let mut map = Obj::new();
    map.insert(key.into(), value);
    Value::Object(map)
}

fn empty_object() -> Value {
    Value::Object(Obj::new())
}

fn empty_array() -> Value {
    Value::Array(Vec::new())
}

fn is_present(src: &Obj, key: &str) -> bool {
    src.get(key).is_some_and(|value| !value.is_null())
}

/// Takes the one present key of a union (`{"task": ...}` or `{"message": ...}`).
fn one_of(
    src: &mut Obj,
    keys: &[&'static str],
    names: &'static str,
    at: &At,
) -> Res<(&'static str, Value)> {
    let present: Vec<&'static str> = keys
        .iter()
        .copied()
        .filter(|key| is_present(src, key))
        .collect();
    if let [key] = present.as_slice() {
        if let Some(value) = src.remove(*key) {
            return Ok((key, value));
        }
    }
    Err(at.not_one(names, present.len()))
}

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
fn v03_kind(src: &Obj, at: &At) -> Res<&'static str> {
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

/// A value's JSON type for an error message (short strings are quoted).
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(text) => format!("{:?}", short(text)),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// At most 64 characters of untrusted text, for error messages.
fn short(text: &str) -> String {
    const MAX: usize = 64;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(MAX).collect();
        cut.push('…');
        cut
    }
}

// ---------------------------------------------------------------------------
// JSON paths
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Root(&'a str),
    Key(&'a str),
    Index(usize),
}

/// Where a value sits in the input: a chain of steps back to the root,
/// rendered (`params.message.parts[0]`) only when an error needs it.
#[derive(Debug, Clone, Copy)]
struct At<'a> {
    up: Option<&'a At<'a>>,
    step: Step<'a>,
}

impl<'a> At<'a> {
    fn root(name: &'a str) -> Self {
        At {
            up: None,
            step: Step::Root(name),
        }
    }

    fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Key(key),
        }
    }

    fn index(&self, index: usize) -> At<'_> {
        At {
            up: Some(self),
            step: Step::Index(index),
        }
    }

    fn render(&self) -> String {
        let mut steps = Vec::new();
        let mut cursor = Some(self);
        while let Some(at) = cursor {
            steps.push(at.step);
            cursor = at.up;
        }
        let mut path = String::new();
        for step in steps.into_iter().rev() {
            match step {
                Step::Root(name) => path.push_str(name),
                Step::Key(key) if is_plain_key(key) => {
                    path.push('.');
                    path.push_str(key);
                }
                Step::Key(key) => path.push_str(&format!("[{:?}]", short(key))),
                Step::Index(index) => path.push_str(&format!("[{index}]")),
            }
        }
        path
    }

    fn wrong(&self, expected: &str, found: &Value) -> BridgeError {
        BridgeError::WrongType {
            path: self.render(),
            expected: expected.into(),
            found: describe(found),
        }
    }

    fn missing(&self) -> BridgeError {
        BridgeError::Missing {
            path: self.render(),
        }
    }

    fn unknown(&self, what: &'static str, value: &str) -> BridgeError {
        BridgeError::UnknownValue {
            path: self.render(),
            what,
            value: short(value),
        }
    }

    fn not_one(&self, fields: &'static str, found: usize) -> BridgeError {
        BridgeError::NotExactlyOne {
            path: self.render(),
            fields,
            found,
        }
    }

    fn untranslatable(&self, what: impl Into<String>) -> BridgeError {
        BridgeError::Untranslatable {
            path: self.render(),
            what: what.into(),
        }
    }
}

/// A key that reads unambiguously after a dot.
fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
#[path = "bridge_tests.rs"]
mod tests;
