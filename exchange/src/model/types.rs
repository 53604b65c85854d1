//! The vocabulary of one chat call, shared by the client that sends it
//! and the adapter that reads the answer: the [`Tier`] a call goes to, the
//! [`Message`]s of a [`ChatRequest`], and why a call produced no text
//! ([`ModelError`]).

use serde::{Deserialize, Serialize};

/// One OpenAI-compatible endpoint and model, as an agent config names it.
/// The key is never in a file: `api_key_env` names the env var holding it
/// (unset or empty: no `Authorization` header, as a local server wants).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// The tier's name, what agents refer to (`local`, `fast`).
    pub id: String,
    /// Up to and including the API version, e.g. `http://127.0.0.1:3120/v1`.
    pub base_url: String,
    /// The model an agent of this tier gets unless it names another.
    pub model: String,
    /// Name of the env var that holds the API key, if the endpoint wants one.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Sent as `reasoning_effort` when set (a reasoning model
    /// that spends its whole budget thinking answers `content: ""` unless
    /// asked for `"none"`).
    #[serde(default)]
    pub reasoning_effort: Option<String>,
}

impl Tier {
    /// What is wrong with this tier, as `(field, problem)`: an id outside
    /// the id rule, a base URL that is not `http(s)://host[:port]/path`
    /// (credentials and queries refused: a key never rides in a URL), an
    /// empty model, a key env var that is not a variable name, an unknown
    /// `reasoning_effort`. Config loaders locate each at its line.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if !crate::id::is_valid(&self.id) {
            out.push(("id", crate::id::rule_for("tier id")));
        }
        let rule = "must be an http:// or https:// URL up to the API version (e.g. http://127.0.0.1:8080/v1), without credentials or query";
        let ok = reqwest::Url::parse(&self.base_url).is_ok_and(|url| {
            matches!(url.scheme(), "http" | "https")
                && url.host_str().is_some_and(|h| !h.is_empty())
                && url.username().is_empty()
                && url.password().is_none()
                && url.query().is_none()
                && url.fragment().is_none()
        });
        if !ok {
            out.push(("base_url", rule.to_string()));
        }
        if self.model.trim().is_empty() {
            out.push(("model", "must name the model".into()));
        }
        if let Some(var) = &self.api_key_env {
            let ok = !var.is_empty()
                && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !var.as_bytes()[0].is_ascii_digit();
            if !ok {
                out.push((
                    "api_key_env",
                    "must be the name of an environment variable (letters, digits, _), never a key"
                        .into(),
                ));
            }
        }
        if let Some(effort) = &self.reasoning_effort {
            if !matches!(
                effort.as_str(),
                "none" | "minimal" | "low" | "medium" | "high"
            ) {
                out.push((
                    "reasoning_effort",
                    "must be one of none, minimal, low, medium, high".into(),
                ));
            }
        }
        out
    }
}

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The agent's instructions (from the prompt library).
    System,
    /// The task and every observation.
    User,
    /// What the model answered before.
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    /// A message of `role`.
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
        }
    }
}

/// One completion request.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// Overrides the tier's model when set.
    pub model: Option<String>,
    pub messages: Vec<Message>,
    pub temperature: f32,
    pub max_tokens: u32,
}

/// Why a chat call produced no text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// Nothing came back in time.
    #[error("the model did not answer before the deadline")]
    Deadline,
    /// Nothing came back at all (after the retries).
    #[error("cannot reach the model endpoint: {0}")]
    Unreachable(String),
    /// The endpoint answered with an error status.
    #[error("the model endpoint answered HTTP {status}: {detail}")]
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        detail: String,
    },
    /// The body is not a chat completion.
    #[error("the model endpoint's answer is not a chat completion: {0}")]
    Malformed(String),
    /// A completion with no text in it.
    #[error("the model answered with empty content{}", hint(.0))]
    Empty(Option<&'static str>),
    /// The tier names a key env var that is not set.
    #[error("the model tier's key env var {0} is not set")]
    MissingKey(String),
}

fn hint(h: &Option<&'static str>) -> String {
    h.map(|h| format!(" ({h})")).unwrap_or_default()
}
