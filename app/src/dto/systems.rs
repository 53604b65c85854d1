//! The operator changes the exchange, each change made against the
//! topology file's digest: onboards a system from its agent card, removes
//! one, edits who may call whom, rotates a system's credential. Built by
//! the hub's `web::bff::systems`.

use serde::{Deserialize, Serialize};

use super::topology::CapabilityKind;
use super::untrusted::UntrustedText;

/// `POST /api/systems/discover`: the operator gives a system's base URL;
/// the hub fetches its agent card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoverRequest {
    /// `http(s)://host:port` of the system's A2A server (its card is at
    /// `/.well-known/agent-card.json` under it).
    pub base_url: String,
}

/// What the hub proposes after reading a card: a topology section the
/// operator edits and saves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OnboardingProposal {
    /// The digest of the topology file the proposal was made from: the
    /// save names it, and is refused if the file changed since.
    pub base: String,
    /// The system id the server answered with (its `/health` identity).
    pub system: String,
    /// The card's name and description (peer free text).
    pub card_name: UntrustedText,
    pub card_description: UntrustedText,
    /// Whether the card carried a signature.
    pub signed: bool,
    /// Each skill of the card, as the proposal took it.
    pub skills: Vec<ProposedSkill>,
    /// The proposed topology section (YAML): `system`, `capabilities`,
    /// `rules`, `calls`. The operator edits it before saving.
    pub section: String,
}

/// One skill of a discovered card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposedSkill {
    /// The skill id, which names the capability.
    pub capability: String,
    /// The kind proposed (from the card's tags), to confirm.
    pub kind: Option<CapabilityKind>,
    /// Whether the registry already defines this capability (the new
    /// system then provides it as it is defined).
    pub existing: bool,
}

/// `POST /api/systems`: saves an edited section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddSystemRequest {
    /// [`OnboardingProposal::base`].
    pub base: String,
    /// The section, as the operator left it.
    pub section: String,
}

/// The answer to a saved onboarding: the only answer that ever carries a
/// system's token, once (`Cache-Control: no-store`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemAdded {
    pub system: String,
    /// The environment variable the system's token is read from.
    pub token_env: String,
    /// The token the hub made for it, shown this once.
    pub credential: String,
    /// The topology file's digest now (the next change's base).
    pub base: String,
}

/// `DELETE /api/systems/{id}` and other topology writes: what the write
/// was made against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopologyBase {
    /// The digest of the topology file as the operator saw it
    /// ([`TopologyView::digest`](crate::dto::TopologyView::digest)).
    pub base: String,
}

/// `PUT /api/rules/consumers`: adds a consumer to a rule or takes it off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleConsumerRequest {
    pub base: String,
    pub capability: String,
    pub provider: String,
    pub consumer: String,
    /// `true`: may call; `false`: may not any more.
    pub member: bool,
}

/// `POST /api/systems/{id}/credential`: the system's new credential,
/// shown this once (`Cache-Control: no-store`); the old one no longer
/// authenticates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialIssued {
    pub system: String,
    /// The variable the system's peer reads it from.
    pub token_env: String,
    pub credential: String,
    /// The topology file's digest (unchanged: the credential lives in the
    /// hub's credential store).
    pub base: String,
}
