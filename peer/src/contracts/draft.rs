//! The provider's negotiation agent with a model tier: the model drafts
//! the reply, the [`super::policy`] then applies in code exactly as it
//! does to the deterministic draft.
//!
//! Configured by the peer file's `model` section (a tier, the prompt
//! library, bounds). The consumer's message — its rationale and purpose
//! are the consumer's own words — reaches the model only inside
//! `exchange::untrusted::llm_envelope`. The model's reply must be one
//! negotiation message from the provider that the shared validator
//! accepts (`exchange::negotiation::validate`: exactly the four keys, a
//! column of the published schema, `from: provider`), with one corrective
//! retry; anything else falls back to the deterministic draft, and the
//! trail says which drafted the turn. Whatever the model wrote, personal
//! columns are removed, columns beyond the negotiable ones too, the
//! retention is capped and an `accept` of the consumer still confirms only
//! the last offer: the policy runs after it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use exchange::model::{json_reply, ChatRequest, Message, ModelClient, ReplyError, Role};
use exchange::negotiation::{validate, NegotiationMessage, Party};
use exchange::prompts::PromptLibrary;
use exchange::untrusted::{llm_envelope, Untrusted};

use crate::config::ModelConfig;

/// The prompt keys this agent reads.
pub const PROMPT_KEYS: [&str; 2] = ["negotiation-provider", "corrective"];

/// A model-backed drafter, built once at start from the peer file.
#[derive(Debug, Clone)]
pub struct ModelDrafter {
    client: ModelClient,
    prompts: PromptLibrary,
    config: ModelConfig,
}

impl ModelDrafter {
    /// Reads the prompt library the config names (every key must exist in
    /// English).
    pub fn open(config: &ModelConfig) -> anyhow::Result<Self> {
        let prompts = PromptLibrary::load(&config.prompts)?;
        prompts.require(&config.prompts.display().to_string(), &PROMPT_KEYS)?;
        let http = reqwest::Client::builder().no_proxy().build()?;
        Ok(Self {
            client: ModelClient::new(config.tier.clone(), http),
            prompts,
            config: config.clone(),
        })
    }

    /// The tier's id, for the trail.
    pub fn tier_id(&self) -> &str {
        &self.client.tier().id
    }

    fn prompt(&self, key: &str) -> String {
        self.prompts
            .get(&self.config.language, key)
            .map(|p| p.text.to_string())
            .unwrap_or_default()
    }

    /// The model's draft reply to `incoming` from `consumer`, valid by the
    /// shared validator against `known` (the published schema).
    pub async fn draft(
        &self,
        system_name: &str,
        consumer: &str,
        incoming: &NegotiationMessage,
        known: &BTreeSet<String>,
        negotiable: &BTreeSet<String>,
    ) -> Result<NegotiationMessage, ReplyError> {
        let quoted = serde_json::to_string(incoming).unwrap_or_default();
        let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        let system = self
            .prompt("negotiation-provider")
            .replace("{system}", system_name)
            .replace("{published}", &list(known))
            .replace("{negotiable}", &list(negotiable));
        let mut req = ChatRequest {
            model: self.config.model.clone(),
            messages: vec![
                Message::new(Role::System, system),
                Message::new(Role::User, llm_envelope(&Untrusted::new(quoted, consumer))),
            ],
            temperature: self.config.temperature,
            max_tokens: self.config.max_tokens,
        };
        let deadline = Instant::now() + Duration::from_millis(self.config.deadline_ms);
        let validate_reply = |v: &serde_json::Value| {
            validate(v, Some(Party::Provider), Some(known))
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        let corrective_text = self.prompt("corrective");
        let corrective = |problem: &str| corrective_text.replace("{error}", problem);
        let reply = json_reply(
            &self.client,
            &mut req,
            deadline,
            &validate_reply,
            &corrective,
        )
        .await?;
        validate(&reply.value, Some(Party::Provider), Some(known)).map_err(|e| {
            ReplyError::Invalid {
                first: e.to_string(),
                second: e.to_string(),
            }
        })
    }
}
