//! The JSON-RPC methods: their names in both dialects, and each method's
//! request params and result, both ways (a message, a task, an event, a
//! push config or a card inside is handed to its own room).

use serde_json::Value;

use super::cards::{card_to_v03_at, card_to_v1_at};
use super::json::{
    carry, list, need, need_str, object, one_of, take, take_str, wrap, At, Kind, Need, Obj, Same,
};
use super::messages::{
    event_to_v03_at, event_to_v1_at, message_to_v03, message_to_v1, task_to_v03, task_to_v1,
    v03_kind,
};
use super::push::{config_to_v03, config_to_v1, task_push_config_to_v03, task_push_config_to_v1};
use super::{BridgeError, Dialect};

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

// Fields spelled and typed alike in both dialects, per construct.
const GET_TASK_FIELDS: &[Same] = &[
    ("id", Kind::Str, Need::Required),
    ("historyLength", Kind::Int, Need::Optional),
];
const CANCEL_TASK_FIELDS: &[Same] = &[
    ("id", Kind::Str, Need::Required),
    ("metadata", Kind::Obj, Need::Optional),
];
const SUBSCRIBE_FIELDS: &[Same] = &[("id", Kind::Str, Need::Required)];

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
/// streaming methods the result is one event, as in
/// [`event_to_v03`](super::event_to_v03).
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
/// streaming methods the result is one event, as in
/// [`event_to_v1`](super::event_to_v1).
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

fn no_v03_method(method: Method) -> BridgeError {
    BridgeError::Untranslatable {
        path: "method".into(),
        what: format!("{method:?} has no v0.3 JSON-RPC method"),
    }
}
