//! JSON-only replies (DESIGN.md §5): the agent asks for one JSON object,
//! this module finds it in what the model wrote, validates it against the
//! caller's schema and, when it is missing or wrong, asks **exactly once**
//! more with a corrective message that quotes the problem. A second bad
//! reply is a clean [`ReplyError::Invalid`] naming both problems; there is
//! no best-effort parse.
//!
//! The value that comes back is what a model wrote: untrusted. The caller
//! validates it again against its own rules (the registry, its tool set)
//! before anything acts on it.

use std::time::Instant;

use serde_json::Value;

use super::client::ModelClient;
use super::types::{ChatRequest, Message, ModelError, Role};
use crate::text::clip;

/// A reply that passed the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonReply {
    /// The object.
    pub value: Value,
    /// Every text the model sent for it, in order (one, or two when the
    /// first was corrected).
    pub texts: Vec<String>,
    /// What was wrong with the first text, when it had to be corrected.
    pub corrected: Option<String>,
}

/// Why no valid reply came.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The model call itself failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// Two replies in a row were not a valid object.
    #[error("the model's reply was not valid twice: first {first}; after the correction {second}")]
    Invalid {
        /// What was wrong with the first.
        first: String,
        /// What was wrong with the corrected one.
        second: String,
    },
}

/// Asks `client` for a JSON object that `validate` accepts. `corrective`
/// turns a problem into the message that asks again (its words come from
/// the caller's prompt library). The messages the model saw, including
/// its replies and the correction, are appended to `req.messages`, so a
/// conversation can go on from here.
pub async fn json_reply(
    client: &ModelClient,
    req: &mut ChatRequest,
    deadline: Instant,
    validate: &(dyn Fn(&Value) -> Result<(), String> + Sync),
    corrective: &(dyn Fn(&str) -> String + Sync),
) -> Result<JsonReply, ReplyError> {
    let mut texts = Vec::new();
    let mut first_problem: Option<String> = None;
    loop {
        let text = client.chat(req, deadline).await?;
        req.messages
            .push(Message::new(Role::Assistant, text.clone()));
        texts.push(text.clone());
        let problem = match extract_json(&text) {
            Ok(value) => match validate(&value) {
                Ok(()) => {
                    return Ok(JsonReply {
                        value,
                        texts,
                        corrected: first_problem,
                    })
                }
                Err(e) => e,
            },
            Err(e) => e,
        };
        match first_problem {
            None => {
                req.messages
                    .push(Message::new(Role::User, corrective(&problem)));
                first_problem = Some(problem);
            }
            Some(first) => {
                return Err(ReplyError::Invalid {
                    first,
                    second: problem,
                })
            }
        }
    }
}

/// The one JSON object in `text`: the body of a ```` ```json ```` fence if
/// there is one, else the first balanced `{...}`; `<think>` blocks some
/// models prepend are skipped. Anything else is an error naming what was
/// found instead.
pub fn extract_json(text: &str) -> Result<Value, String> {
    let text = match (text.find("<think>"), text.find("</think>")) {
        (Some(a), Some(b)) if a < b => &text[b + "</think>".len()..],
        _ => text,
    };
    let candidate = fenced(text).or_else(|| balanced_object(text));
    let Some(candidate) = candidate else {
        return Err(format!(
            "the reply holds no JSON object (it starts {:?})",
            clip(text.trim(), 60)
        ));
    };
    match serde_json::from_str::<Value>(candidate) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err("the reply's JSON is not an object".into()),
        Err(e) => Err(format!("the reply's JSON does not parse: {e}")),
    }
}

fn fenced(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let rest = &text[start + 3..];
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    let end = rest.find("```")?;
    let body = rest[..end].trim();
    body.starts_with('{').then_some(body)
}

fn balanced_object(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, c) in text[start..].char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_the_object_in_prose_fences_and_think_blocks() {
        assert_eq!(extract_json("{\"a\": 1}").unwrap(), json!({"a": 1}));
        assert_eq!(
            extract_json("Sure! Here it is: {\"a\": \"}{\"} and that's all").unwrap(),
            json!({"a": "}{"})
        );
        assert_eq!(
            extract_json("```json\n{\"a\": [1, 2]}\n```").unwrap(),
            json!({"a": [1, 2]})
        );
        assert_eq!(
            extract_json("<think>maybe {\"no\": 1}</think>{\"yes\": true}").unwrap(),
            json!({"yes": true})
        );
    }

    #[test]
    fn says_what_is_wrong() {
        let e = extract_json("I cannot help with that.").unwrap_err();
        assert!(e.contains("no JSON object"), "{e}");
        let e = extract_json("{\"a\": 1,}").unwrap_err();
        assert!(e.contains("does not parse"), "{e}");
        let e = extract_json("{\"a\": ").unwrap_err();
        assert!(e.contains("no JSON object"), "{e}");
    }
}
