//! Push notifications both ways: a send request's configuration (with
//! the push config it may carry) and the push-config methods' objects,
//! nested in v0.3 (`{taskId, pushNotificationConfig: {...}}`) and flat in
//! v1.0 (`{taskId, url, ...}`).

use serde_json::Value;

use super::json::{carry, items, need, need_str, object, take, At, Kind, Need, Obj, Res, Same};

// Fields spelled and typed alike in both dialects, per construct.
const SEND_CONFIG_FIELDS: &[Same] = &[
    ("acceptedOutputModes", Kind::StrList, Need::Optional),
    ("historyLength", Kind::Int, Need::Optional),
];
const PUSH_CONFIG_FIELDS: &[Same] = &[
    ("url", Kind::Str, Need::Required),
    ("id", Kind::Str, Need::Optional),
    ("token", Kind::Str, Need::Optional),
];

// ---------------------------------------------------------------------------
// Send configuration and push configs
// ---------------------------------------------------------------------------

pub(super) fn config_to_v1(value: Value, at: &At) -> Res<Value> {
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

pub(super) fn config_to_v03(value: Value, at: &At) -> Res<Value> {
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
pub(super) fn task_push_config_to_v1(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let task_id = need_str(&mut src, "taskId", at)?;
    let inner_at = at.key("pushNotificationConfig");
    let inner = need(&mut src, "pushNotificationConfig", Kind::Obj, at)?;
    let mut out = push_config_to_v1(object(inner, &inner_at)?, &inner_at)?;
    out.insert("taskId".into(), task_id.into());
    Ok(Value::Object(out))
}

/// v1.0 `{taskId, url, ...}` -> v0.3 `{taskId, pushNotificationConfig: {...}}`.
pub(super) fn task_push_config_to_v03(value: Value, at: &At) -> Res<Value> {
    let mut src = object(value, at)?;
    let task_id = need_str(&mut src, "taskId", at)?;
    let inner = push_config_to_v03(src, at)?;
    let mut out = Obj::new();
    out.insert("taskId".into(), task_id.into());
    out.insert("pushNotificationConfig".into(), Value::Object(inner));
    Ok(Value::Object(out))
}
