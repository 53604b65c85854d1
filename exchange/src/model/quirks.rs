//! The one adapter for providers' deviations from the OpenAI chat shape
//! ("provider quirks"): everything above this file sees a
//! plain string of assistant text or a named error.
//!
//! Absorbed here:
//! * **A reasoning model that answers `content: ""`** because it spent
//!   the whole completion budget on hidden reasoning: the tier's
//!   `reasoning_effort` (e.g. `"none"`) is sent in the request
//!   ([`adapt_request`]); when the content still comes back empty next to
//!   a reasoning text, the error says which setting fixes it. Hidden
//!   reasoning is never taken as the answer.
//! * **A `metadata` object where the OpenAI SDK types a string**: this
//!   client reads only `choices[].message.content` (and the reasoning
//!   fields, to explain an empty answer), so an object, a string or
//!   nothing under `metadata` — or any other extra field — is ignored by
//!   construction; a test holds it to that.
//! * **Content as a list of parts** (`[{"type": "text", "text": ...}]`),
//!   as some compatible servers send it: the text parts, joined.
//! * **Not JSON at all** (an SSE stream although `stream: false` was
//!   sent, an HTML error page): a clean `Malformed`, never parsed further.

use serde::Deserialize;
use serde_json::Value;

use super::types::{ModelError, Tier};
use crate::text::clip;

/// Adds what `tier` needs to a request body.
pub fn adapt_request(tier: &Tier, body: &mut Value) {
    if let (Some(effort), Some(obj)) = (&tier.reasoning_effort, body.as_object_mut()) {
        obj.insert("reasoning_effort".into(), Value::String(effort.clone()));
    }
}

/// The assistant's text of a completion body.
pub fn completion_text(body: &[u8]) -> Result<String, ModelError> {
    let completion: Completion = serde_json::from_slice(body).map_err(|e| {
        let start = String::from_utf8_lossy(&body[..body.len().min(40)]).to_string();
        ModelError::Malformed(format!("{e} (body starts {:?})", clip(&start, 40)))
    })?;
    let Some(choice) = completion.choices.into_iter().next() else {
        return Err(ModelError::Malformed("no choices".into()));
    };
    let m = choice.message;
    let text = match m.content {
        Some(Value::String(s)) => s,
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        Some(Value::Null) | None => String::new(),
        Some(other) => {
            return Err(ModelError::Malformed(format!(
                "content is a JSON {}",
                crate::text::json_type(&other)
            )))
        }
    };
    if text.trim().is_empty() {
        let reasoned = m
            .reasoning_content
            .or(m.reasoning)
            .is_some_and(|r| !r.trim().is_empty());
        return Err(ModelError::Empty(reasoned.then_some(
            "it spent its budget on hidden reasoning: set reasoning_effort on the tier",
        )));
    }
    Ok(text)
}

/// The body of a completion, as far as this adapter reads it: nothing
/// else in it (a `metadata` object, any extra field) is looked at.
#[derive(Debug, Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Debug, Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn plain_content_is_the_text() {
        let b = body(json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}]}));
        assert_eq!(completion_text(&b).unwrap(), "hi");
    }

    #[test]
    fn a_metadata_object_is_ignored() {
        let b = body(json!({
            "metadata": {"provider": "x", "cost": 1},
            "choices": [{"message": {"content": "ok", "metadata": {"a": 1}}}]
        }));
        assert_eq!(completion_text(&b).unwrap(), "ok");
    }

    #[test]
    fn content_parts_are_joined() {
        let b = body(json!({"choices": [{"message": {"content": [
            {"type": "text", "text": "{\"a\":"}, {"type": "text", "text": "1}"}
        ]}}]}));
        assert_eq!(completion_text(&b).unwrap(), "{\"a\":1}");
    }

    #[test]
    fn empty_content_after_reasoning_names_the_setting() {
        let b = body(
            json!({"choices": [{"message": {"content": "", "reasoning_content": "thinking..."}}]}),
        );
        let e = completion_text(&b).unwrap_err();
        assert!(e.to_string().contains("reasoning_effort"), "{e}");
        let b = body(json!({"choices": [{"message": {"content": null}}]}));
        assert_eq!(completion_text(&b).unwrap_err(), ModelError::Empty(None));
    }

    #[test]
    fn a_stream_is_malformed_not_parsed() {
        let e = completion_text(b"data: {\"choices\": []}\n\n").unwrap_err();
        assert!(matches!(e, ModelError::Malformed(_)), "{e:?}");
        let e = completion_text(&body(json!({"choices": []}))).unwrap_err();
        assert_eq!(e, ModelError::Malformed("no choices".into()));
    }

    #[test]
    fn reasoning_effort_is_sent_when_the_tier_says_so() {
        let mut tier = Tier {
            id: "t".into(),
            base_url: "http://x/v1".into(),
            model: "m".into(),
            api_key_env: None,
            reasoning_effort: None,
        };
        let mut b = json!({"model": "m"});
        adapt_request(&tier, &mut b);
        assert!(b.get("reasoning_effort").is_none());
        tier.reasoning_effort = Some("none".into());
        adapt_request(&tier, &mut b);
        assert_eq!(b["reasoning_effort"], "none");
    }
}
