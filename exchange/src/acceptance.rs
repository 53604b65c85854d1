//! Results the requester accepts: the acceptance extension both sides
//! speak (A2A's experimental acceptance proposal, a2aproject/A2A#1976,
//! under its provisional URI so a client following the proposal finds it).
//!
//! No new task state and no new method. A requester declares
//! [`Criteria`] in the creating message's metadata (`{EXT}/criteria`); a
//! provider that supports the extension finishes its work by emitting the
//! result artifact and parking the task in `input-required` with the
//! status message flagged `{EXT}/pendingAcceptance: true` ([`Pending`]).
//! The requester answers on the same task with a message whose metadata
//! carries a [`Decision`] (`{EXT}/decision`): accept (the provider moves
//! the task to `completed`), or reject with a [`RejectReason`] and the
//! feedback as the message's parts (back to `working` for another result,
//! or `failed` when `retry` is false or the rejections are used up).
//!
//! What this module adds where the proposal is silent, on the pending
//! status message's metadata: `{EXT}/acceptBy` (RFC 3339, when the window
//! closes; the provider then fails the task) and `{EXT}/attempt` (which
//! result this is, from 1). Every value here is read from another system:
//! each reader returns an [`AcceptanceError`] naming the key and what is
//! wrong, never a guess.

use std::collections::HashMap;
use std::time::Duration;

use a2a::{Message, TaskState, TaskStatus};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The extension's URI: what cards declare and what prefixes every key.
pub const EXTENSION_URI: &str =
    "https://github.com/a2aproject/experimental-ext-acceptance/tree/main/v1";
/// Task (or creating message) metadata key of the requester's [`Criteria`].
pub const CRITERIA_KEY: &str =
    "https://github.com/a2aproject/experimental-ext-acceptance/tree/main/v1/criteria";
/// Status message metadata key flagging a result that awaits acceptance.
pub const PENDING_KEY: &str =
    "https://github.com/a2aproject/experimental-ext-acceptance/tree/main/v1/pendingAcceptance";
/// Message metadata key of a requester's [`Decision`].
pub const DECISION_KEY: &str =
    "https://github.com/a2aproject/experimental-ext-acceptance/tree/main/v1/decision";
/// Status message metadata key: when the acceptance window closes.
pub const ACCEPT_BY_KEY: &str =
    "https://github.com/a2aproject/experimental-ext-acceptance/tree/main/v1/acceptBy";
/// Status message metadata key: which result awaits acceptance (from 1).
pub const ATTEMPT_KEY: &str =
    "https://github.com/a2aproject/experimental-ext-acceptance/tree/main/v1/attempt";

/// The window a result waits for a decision when the criteria name none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);
/// The longest window a requester may ask for (a day).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(86_400);
/// Rejections allowed when the criteria name no number.
pub const DEFAULT_MAX_REJECTIONS: u32 = 3;
/// The most rejections a requester may ask for (the cards' `maxRejectionsCap`).
pub const MAX_REJECTIONS_CAP: u32 = 10;
/// The longest criteria `description` kept, in characters.
pub const MAX_DESCRIPTION: usize = 2000;

/// Metadata as A2A carries it.
pub type Metadata = HashMap<String, Value>;

/// Extension data that cannot be used, naming the key and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("metadata `{key}`: {why}")]
pub struct AcceptanceError {
    /// The metadata key (the extension URI with its suffix).
    pub key: &'static str,
    /// What is wrong with its value.
    pub why: String,
}

/// Who issues the decision (the proposal's `evaluator`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Evaluator {
    /// The requester's program decides.
    #[default]
    Client,
    /// A person at the requester decides (the same messages on the wire).
    Human,
    /// The provider checks itself and never parks the task: not offered
    /// through the hub, which checks the contract's criteria itself.
    Agent,
}

/// What "done" means for one task, as the requester declared it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Criteria {
    /// The success condition in words, for the provider and the reviewer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema every JSON part of the result must satisfy (checked
    /// by the hub before the requester is asked; no remote references).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_schema: Option<Value>,
    /// Artifact names the result must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_artifacts: Vec<String>,
    /// Who decides.
    #[serde(default)]
    pub evaluator: Evaluator,
    /// How long a result waits for a decision, in seconds.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_number"
    )]
    pub acceptance_timeout_seconds: Option<u64>,
    /// How many rejections the task survives; one more fails it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole_number"
    )]
    pub max_rejections: Option<u32>,
}

/// A whole number as JSON carries it: `3` or, once it has crossed a
/// protobuf `Struct` (every number a double), `3.0`.
pub fn whole(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 9_007_199_254_740_992.0)
            .map(|f| f as u64)
    })
}

fn whole_number<'de, D, N>(d: D) -> Result<Option<N>, D::Error>
where
    D: serde::Deserializer<'de>,
    N: TryFrom<u64>,
{
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(v) => whole(&v)
            .and_then(|n| N::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| D::Error::custom(format!("expected a whole number, not {v}"))),
    }
}

impl Criteria {
    /// The criteria in `metadata`, if any, with their bounds filled in
    /// ([`Criteria::bounded`]).
    pub fn from_metadata(metadata: Option<&Metadata>) -> Result<Option<Self>, AcceptanceError> {
        let Some(value) = metadata.and_then(|m| m.get(CRITERIA_KEY)) else {
            return Ok(None);
        };
        let bad = |why: String| AcceptanceError {
            key: CRITERIA_KEY,
            why,
        };
        let criteria: Criteria =
            serde_json::from_value(value.clone()).map_err(|e| bad(e.to_string()))?;
        if criteria.evaluator == Evaluator::Agent {
            return Err(bad(
                "evaluator `agent` is not offered: a provider checking itself needs no \
                 acceptance; use `client` or `human`"
                    .into(),
            ));
        }
        if let Some(s) = criteria.acceptance_timeout_seconds {
            if s == 0 || s > MAX_TIMEOUT.as_secs() {
                return Err(bad(format!(
                    "acceptanceTimeoutSeconds must be 1 to {}, not {s}",
                    MAX_TIMEOUT.as_secs()
                )));
            }
        }
        if let Some(n) = criteria.max_rejections {
            if n > MAX_REJECTIONS_CAP {
                return Err(bad(format!(
                    "maxRejections must be at most {MAX_REJECTIONS_CAP}, not {n}"
                )));
            }
        }
        if criteria
            .description
            .as_ref()
            .is_some_and(|d| d.chars().count() > MAX_DESCRIPTION)
        {
            return Err(bad(format!(
                "description must be at most {MAX_DESCRIPTION} characters"
            )));
        }
        if let Some(schema) = &criteria.artifact_schema {
            if !schema.is_object() && !schema.is_boolean() {
                return Err(bad(
                    "artifactSchema must be a JSON Schema (an object)".into()
                ));
            }
        }
        Ok(Some(criteria.bounded()))
    }

    /// The criteria with the window and the rejections made explicit: an
    /// absent value is the default, never unbounded.
    pub fn bounded(mut self) -> Self {
        self.acceptance_timeout_seconds
            .get_or_insert(DEFAULT_TIMEOUT.as_secs());
        self.max_rejections.get_or_insert(DEFAULT_MAX_REJECTIONS);
        self
    }

    /// How long a result waits for a decision.
    pub fn timeout(&self) -> Duration {
        self.acceptance_timeout_seconds
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
    }

    /// How many rejections the task survives.
    pub fn max_rejections(&self) -> u32 {
        self.max_rejections.unwrap_or(DEFAULT_MAX_REJECTIONS)
    }

    /// The criteria as metadata value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Accept or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// The result is what was asked for: the task completes.
    Accept,
    /// It is not: another result, or the task fails.
    Reject,
}

impl Action {
    /// `accept` or `reject`.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Reject => "reject",
        }
    }
}

/// Why a result was rejected: the proposal's closed vocabulary (the
/// words go in the message's parts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RejectReason {
    /// The result does not match the schema.
    SchemaMismatch,
    /// An artifact the criteria require is missing.
    MissingArtifact,
    /// The result is not good enough.
    QualityThresholdNotMet,
    /// The result answers something else.
    OutOfScope,
    /// Anything else (say what in the parts).
    Other,
}

impl RejectReason {
    /// The wire form (`SCHEMA_MISMATCH`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::SchemaMismatch => "SCHEMA_MISMATCH",
            RejectReason::MissingArtifact => "MISSING_ARTIFACT",
            RejectReason::QualityThresholdNotMet => "QUALITY_THRESHOLD_NOT_MET",
            RejectReason::OutOfScope => "OUT_OF_SCOPE",
            RejectReason::Other => "OTHER",
        }
    }
}

/// A requester's decision on the result that awaits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Accept or reject.
    pub action: Action,
    /// Why (required on a reject, refused on an accept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<RejectReason>,
    /// On a reject: whether the provider may try again (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<bool>,
}

impl Decision {
    /// An accept.
    pub fn accept() -> Self {
        Self {
            action: Action::Accept,
            reason: None,
            retry: None,
        }
    }

    /// A reject for `reason`, another result asked for when `retry`.
    pub fn reject(reason: RejectReason, retry: bool) -> Self {
        Self {
            action: Action::Reject,
            reason: Some(reason),
            retry: Some(retry),
        }
    }

    /// The decision in `metadata`, if any.
    pub fn from_metadata(metadata: Option<&Metadata>) -> Result<Option<Self>, AcceptanceError> {
        let Some(value) = metadata.and_then(|m| m.get(DECISION_KEY)) else {
            return Ok(None);
        };
        let bad = |why: String| AcceptanceError {
            key: DECISION_KEY,
            why,
        };
        let d: Decision = serde_json::from_value(value.clone()).map_err(|e| bad(e.to_string()))?;
        match (d.action, d.reason) {
            (Action::Reject, None) => Err(bad(
                "a reject needs a `reason`: SCHEMA_MISMATCH, MISSING_ARTIFACT, \
                 QUALITY_THRESHOLD_NOT_MET, OUT_OF_SCOPE or OTHER"
                    .into(),
            )),
            (Action::Accept, Some(_)) | (Action::Accept, None) if d.retry.is_some() => {
                Err(bad("`retry` belongs to a reject".into()))
            }
            (Action::Accept, Some(_)) => Err(bad("`reason` belongs to a reject".into())),
            _ => Ok(Some(d)),
        }
    }

    /// Whether a reject asks for another result.
    pub fn retry(&self) -> bool {
        self.action == Action::Reject && self.retry.unwrap_or(true)
    }

    /// How the trails name it: `accept`, or `reject SCHEMA_MISMATCH
    /// (retry)` / `(final)`.
    pub fn describe(&self) -> String {
        match (self.action, self.reason) {
            (Action::Accept, _) => "accept".into(),
            (Action::Reject, reason) => format!(
                "reject {} ({})",
                reason.map_or("OTHER", RejectReason::as_str),
                if self.retry() { "retry" } else { "final" }
            ),
        }
    }

    /// The decision as a metadata map (what a requester sends).
    pub fn metadata(&self) -> Metadata {
        let mut m = Metadata::new();
        m.insert(
            DECISION_KEY.to_string(),
            serde_json::to_value(self).unwrap_or(Value::Null),
        );
        m
    }
}

/// A result that awaits the requester's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pending {
    /// Which result (from 1).
    pub attempt: u32,
    /// When the window closes.
    pub accept_by: DateTime<Utc>,
}

impl Pending {
    /// What a task's status says, if it awaits acceptance: `Ok(None)` for
    /// any other status; an error for a flagged status whose window or
    /// attempt cannot be read.
    pub fn of_status(status: &TaskStatus) -> Result<Option<Self>, AcceptanceError> {
        if status.state != TaskState::InputRequired {
            return Ok(None);
        }
        let Some(meta) = status.message.as_ref().and_then(|m| m.metadata.as_ref()) else {
            return Ok(None);
        };
        if meta.get(PENDING_KEY) != Some(&Value::Bool(true)) {
            return Ok(None);
        }
        let accept_by = meta
            .get(ACCEPT_BY_KEY)
            .and_then(Value::as_str)
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .ok_or_else(|| AcceptanceError {
                key: ACCEPT_BY_KEY,
                why: "a pending result must say when its window closes (RFC 3339)".into(),
            })?
            .with_timezone(&Utc);
        let attempt = meta
            .get(ATTEMPT_KEY)
            .and_then(whole)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n >= 1)
            .ok_or_else(|| AcceptanceError {
                key: ATTEMPT_KEY,
                why: "a pending result must say which attempt it is (1 or more)".into(),
            })?;
        Ok(Some(Self { attempt, accept_by }))
    }

    /// The status message's metadata that flags this pending result.
    pub fn metadata(&self) -> Metadata {
        let mut m = Metadata::new();
        m.insert(PENDING_KEY.to_string(), Value::Bool(true));
        m.insert(
            ACCEPT_BY_KEY.to_string(),
            Value::String(
                self.accept_by
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            ),
        );
        m.insert(ATTEMPT_KEY.to_string(), Value::from(self.attempt));
        m
    }

    /// Marks `message` as carrying this extension's data (the proposal
    /// asks for the URI in the message's `extensions`) and flags it.
    pub fn flag(&self, message: &mut Message) {
        message
            .metadata
            .get_or_insert_with(Default::default)
            .extend(self.metadata());
        let exts = message.extensions.get_or_insert_with(Vec::new);
        if !exts.iter().any(|e| e == EXTENSION_URI) {
            exts.push(EXTENSION_URI.to_string());
        }
    }
}

/// How a card declares the extension (`capabilities.extensions[]`), with
/// the evaluators offered and the most rejections a requester may ask for.
pub fn card_extension(description: String) -> a2a::AgentExtension {
    let mut params = HashMap::new();
    params.insert(
        "evaluators".to_string(),
        serde_json::json!(["client", "human"]),
    );
    params.insert("supportsArtifactSchema".to_string(), Value::Bool(true));
    params.insert(
        "maxRejectionsCap".to_string(),
        Value::from(MAX_REJECTIONS_CAP),
    );
    a2a::AgentExtension {
        uri: EXTENSION_URI.into(),
        description: Some(description),
        required: Some(false),
        params: Some(params),
    }
}

/// The text of a message's text parts, joined by newlines: a rejection's
/// feedback as the provider receives it (both trails count its characters).
pub fn feedback_text(parts: &[a2a::Part]) -> String {
    parts
        .iter()
        .filter_map(|p| match &p.content {
            a2a::PartContent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "acceptance_tests.rs"]
mod tests;
