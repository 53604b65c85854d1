//! Agent cards both ways: interfaces, capabilities, skills, security
//! schemes and requirements, OAuth flows; and which dialect a card speaks.

use serde_json::Value;

use super::json::{
    carry, check, empty_array, empty_object, is_present, items, list, map_values, need, need_str,
    object, one_of, take, take_str, wrap, At, Kind, Need, Obj, Res, Same,
};
use super::{BridgeError, Dialect};

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

// Fields spelled and typed alike in both dialects, per construct.
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
// Agent card
// ---------------------------------------------------------------------------

pub(super) fn card_to_v1_at(value: Value, at: &At) -> Res<Value> {
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

pub(super) fn card_to_v03_at(value: Value, at: &At) -> Res<Value> {
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
