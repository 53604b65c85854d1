//! Text another system wrote, made fit for an operator's eyes (DESIGN.md
//! §1: "any peer can be ... lying").
//!
//! Peer-supplied text ends up in error details, audit trails, logs and
//! browser views. Wherever it does, it goes through [`clip`]: bounded in
//! length, control characters dropped, so it is data for a person to read,
//! never markup or a terminal escape.

/// Cuts `text` to `max` characters and drops control characters; an
/// ellipsis marks a cut.
pub fn clip(text: &str, max: usize) -> String {
    // What nearly every id and header is: short printable ASCII, kept as
    // it is (one pass over the bytes, no per-character collect).
    if text.len() <= max && text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return text.to_string();
    }
    let mut kept = text.chars().filter(|c| !c.is_control());
    let mut out: String = kept.by_ref().take(max).collect();
    if kept.next().is_some() {
        out.push('…');
    }
    out
}

/// The JSON type name of a value (`"object"`, `"string"`, ...), for an
/// error message that says what came instead of what was expected.
pub fn json_type(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_by_characters_and_drops_controls() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("a\u{1b}[31mb\nc", 10), "a[31mbc");
        assert_eq!(clip("ééé", 2), "éé…");
        assert_eq!(clip("", 0), "");
    }
}
