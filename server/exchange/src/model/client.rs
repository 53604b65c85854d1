//! An OpenAI-compatible chat-completions client: one request, a deadline,
//! a bounded retry policy (DESIGN.md §5).
//!
//! The retry policy is deliberately small: a transport failure (nothing
//! came back), `429` or a `5xx` is retried after 200 ms, then 400 ms, at
//! most [`MAX_ATTEMPTS`] attempts in all and never past the caller's
//! deadline; any other status is an answer and is not retried (a `400`
//! will say the same thing twice). What the provider sends back goes
//! through [`super::quirks`] before anything reads it.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::quirks;
use crate::text::clip;

/// Attempts of one chat call, the first included.
pub const MAX_ATTEMPTS: u32 = 3;
/// Largest completion body read from a model endpoint.
const MAX_BODY: usize = 1 << 20;

/// One OpenAI-compatible endpoint and model, as an agent config names it.
/// The key is never in a file: `api_key_env` names the env var holding it
/// (unset or empty: no `Authorization` header, as a local server wants).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
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
    /// Sent as `reasoning_effort` when set (seed `000`: a reasoning model
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

/// A client for one tier.
#[derive(Debug, Clone)]
pub struct ModelClient {
    tier: Tier,
    http: reqwest::Client,
}

impl ModelClient {
    /// A client for `tier` on the shared `http` client (no proxy, no
    /// global timeout: each call gets its own deadline).
    pub fn new(tier: Tier, http: reqwest::Client) -> Self {
        Self { tier, http }
    }

    /// The tier this client talks to.
    pub fn tier(&self) -> &Tier {
        &self.tier
    }

    /// The model a request of this client goes to.
    pub fn model_for(&self, req: &ChatRequest) -> String {
        req.model.clone().unwrap_or_else(|| self.tier.model.clone())
    }

    /// One chat completion: the assistant's text, ending by `deadline`.
    pub async fn chat(&self, req: &ChatRequest, deadline: Instant) -> Result<String, ModelError> {
        let key = match &self.tier.api_key_env {
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.is_empty() => Some(k),
                _ => return Err(ModelError::MissingKey(var.clone())),
            },
            None => None,
        };
        let mut body = json!({
            "model": self.model_for(req),
            "messages": req.messages,
            "temperature": req.temperature,
            "max_tokens": req.max_tokens,
            "stream": false,
        });
        quirks::adapt_request(&self.tier, &mut body);
        let url = format!(
            "{}/chat/completions",
            self.tier.base_url.trim_end_matches('/')
        );
        let mut attempt = 0;
        loop {
            attempt += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ModelError::Deadline);
            }
            let mut call = self.http.post(&url).json(&body).timeout(left);
            if let Some(k) = &key {
                call = call.bearer_auth(k);
            }
            let retryable = match call.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    let bytes = match crate::http::read_limited(resp, MAX_BODY).await {
                        Ok(Some(b)) => b,
                        Ok(None) => {
                            return Err(ModelError::Malformed("body larger than 1 MiB".into()))
                        }
                        Err(e) if e.is_timeout() => return Err(ModelError::Deadline),
                        Err(e) => return Err(ModelError::Unreachable(crate::http::root_cause(&e))),
                    };
                    if status.is_success() {
                        return quirks::completion_text(&bytes);
                    }
                    let err = ModelError::Status {
                        status: status.as_u16(),
                        detail: clip(&String::from_utf8_lossy(&bytes), 200),
                    };
                    if status.as_u16() == 429 || status.is_server_error() {
                        err
                    } else {
                        return Err(err);
                    }
                }
                Err(e) if e.is_timeout() => return Err(ModelError::Deadline),
                Err(e) => ModelError::Unreachable(crate::http::root_cause(&e)),
            };
            let pause = Duration::from_millis(200 << (attempt - 1).min(4));
            if attempt >= MAX_ATTEMPTS || Instant::now() + pause >= deadline {
                return Err(retryable);
            }
            tokio::time::sleep(pause).await;
        }
    }
}

/// The body of a completion, as far as this client reads it.
#[derive(Debug, Deserialize)]
pub(super) struct Completion {
    pub choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
pub(super) struct Choice {
    pub message: ChoiceMessage,
}

#[derive(Debug, Deserialize)]
pub(super) struct ChoiceMessage {
    #[serde(default)]
    pub content: Option<Value>,
    #[serde(default)]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub reasoning: Option<String>,
}
