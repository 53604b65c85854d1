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

use serde_json::json;

use super::quirks;
pub use super::types::{ChatRequest, Message, ModelError, Role, Tier};
use crate::text::clip;

/// Attempts of one chat call, the first included.
pub const MAX_ATTEMPTS: u32 = 3;
/// Largest completion body read from a model endpoint.
const MAX_BODY: usize = 1 << 20;

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
