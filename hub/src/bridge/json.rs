//! JSON access for the bridge's translations: typed takes that name the
//! JSON path of what they check ([`At`]), so every refusal says where it
//! is (`params.message.parts[0].kind`).

use serde_json::{Map, Value};

use super::BridgeError;

pub(super) type Obj = Map<String, Value>;
pub(super) type Res<T> = Result<T, BridgeError>;

/// (name, type, required) of a field spelled and typed alike in both dialects.
pub(super) type Same = (&'static str, Kind, Need);

// ---------------------------------------------------------------------------
// JSON access, each check naming its path
// ---------------------------------------------------------------------------

/// The JSON type a field must have.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
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
pub(super) enum Need {
    Required,
    Optional,
}

/// Checks a (non-null) value against `kind`; a bad list item or map value
/// is reported at its own path.
pub(super) fn check(value: &Value, kind: Kind, at: &At) -> Res<()> {
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

pub(super) fn object(value: Value, at: &At) -> Res<Obj> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(at.wrong("an object", &other)),
    }
}

/// Takes `key` out of `src`, checked against `kind`; absent and null are
/// both None.
pub(super) fn take(src: &mut Obj, key: &str, kind: Kind, at: &At) -> Res<Option<Value>> {
    match src.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            check(&value, kind, &at.key(key))?;
            Ok(Some(value))
        }
    }
}

pub(super) fn need(src: &mut Obj, key: &str, kind: Kind, at: &At) -> Res<Value> {
    take(src, key, kind, at)?.ok_or_else(|| at.key(key).missing())
}

pub(super) fn take_str(src: &mut Obj, key: &str, at: &At) -> Res<Option<String>> {
    match src.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(at.key(key).wrong("a string", &other)),
    }
}

pub(super) fn need_str(src: &mut Obj, key: &str, at: &At) -> Res<String> {
    take_str(src, key, at)?.ok_or_else(|| at.key(key).missing())
}

/// Moves the fields that mean the same in both dialects from `src` to
/// `dst`, each after its type check.
pub(super) fn carry(src: &mut Obj, dst: &mut Obj, fields: &[Same], at: &At) -> Res<()> {
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
pub(super) fn rename(src: &mut Obj, dst: &mut Obj, from: &str, to: &str, at: &At) -> Res<()> {
    if let Some(value) = take(src, from, Kind::Str, at)? {
        dst.insert(to.into(), value);
    }
    Ok(())
}

/// Translates every item of an array, each at its own index.
pub(super) fn list(value: Value, at: &At, each: fn(Value, &At) -> Res<Value>) -> Res<Value> {
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
pub(super) fn map_values(value: Value, at: &At, each: fn(Value, &At) -> Res<Value>) -> Res<Value> {
    let mut out = Obj::new();
    for (key, item) in object(value, at)? {
        let item = each(item, &at.key(&key))?;
        out.insert(key, item);
    }
    Ok(Value::Object(out))
}

/// The items of an array already checked to be one.
pub(super) fn items(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        _ => Vec::new(),
    }
}

pub(super) fn wrap(key: &str, value: Value) -> Value {
    let mut map = Obj::new();
    map.insert(key.into(), value);
    Value::Object(map)
}

pub(super) fn empty_object() -> Value {
    Value::Object(Obj::new())
}

pub(super) fn empty_array() -> Value {
    Value::Array(Vec::new())
}

pub(super) fn is_present(src: &Obj, key: &str) -> bool {
    src.get(key).is_some_and(|value| !value.is_null())
}

/// Takes the one present key of a union (`{"task": ...}` or `{"message": ...}`).
pub(super) fn one_of(
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

/// A value's JSON type for an error message (short strings are quoted).
pub(super) fn describe(value: &Value) -> String {
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
pub(super) struct At<'a> {
    up: Option<&'a At<'a>>,
    step: Step<'a>,
}

impl<'a> At<'a> {
    pub(super) fn root(name: &'a str) -> Self {
        At {
            up: None,
            step: Step::Root(name),
        }
    }

    pub(super) fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At {
            up: Some(self),
            step: Step::Key(key),
        }
    }

    pub(super) fn index(&self, index: usize) -> At<'_> {
        At {
            up: Some(self),
            step: Step::Index(index),
        }
    }

    pub(super) fn render(&self) -> String {
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

    pub(super) fn wrong(&self, expected: &str, found: &Value) -> BridgeError {
        BridgeError::WrongType {
            path: self.render(),
            expected: expected.into(),
            found: describe(found),
        }
    }

    pub(super) fn missing(&self) -> BridgeError {
        BridgeError::Missing {
            path: self.render(),
        }
    }

    pub(super) fn unknown(&self, what: &'static str, value: &str) -> BridgeError {
        BridgeError::UnknownValue {
            path: self.render(),
            what,
            value: short(value),
        }
    }

    pub(super) fn not_one(&self, fields: &'static str, found: usize) -> BridgeError {
        BridgeError::NotExactlyOne {
            path: self.render(),
            fields,
            found,
        }
    }

    pub(super) fn untranslatable(&self, what: impl Into<String>) -> BridgeError {
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
