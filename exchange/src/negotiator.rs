//! The consumer's side of a negotiation: the
//! deterministic agent that proposes the columns its question needs,
//! accepts a counter that still covers them, and holds the provider to the
//! protocol — every reply validated by the one validator
//! ([`crate::negotiation::validate`], `from` must be the provider, columns
//! must be in the schema its card publishes), one corrective `request` for
//! a reply that is not valid, then a [`NegotiationError::Protocol`]. There
//! is no best-effort path.
//!
//! Both consumers run this: a peer's operator (`peer negotiate`) and the
//! hub for its own drawer queries. How a message travels is the caller's
//! `send` (an A2A `SendMessage` through the hub's surface, or the hub's
//! gateway), so the agent is the same whoever runs it.

use std::collections::BTreeSet;
use std::future::Future;

use serde_json::Value;

use crate::negotiation::{
    parse_text, validate, Intent, NegotiationMessage, Party, SchemaError, Scope,
};

/// Most messages a consumer sends in one negotiation.
pub const MAX_TURNS: usize = 6;

/// What the consumer wants: the columns its question needs (the ones it
/// cannot do without, and the rest it asks for), why, for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    /// Everything it proposes.
    pub columns: Vec<String>,
    /// Of those, what it cannot do without: an offer lacking one is
    /// rejected.
    pub required: Vec<String>,
    /// The purpose of record.
    pub purpose: String,
    /// How long it keeps what it reads.
    pub retention_days: u64,
}

/// How a message came back.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    /// The provider answered: the capability result `{"reply", "grant"}`.
    Answered(Value),
    /// The hub found the reply outside the capability's contract
    /// (`SCHEMA_INVALID`): an invalid reply, like one the consumer finds.
    InvalidReply(String),
    /// The message did not get an answer (a refusal, a transport failure):
    /// the reason code and the hub's or provider's words.
    Failed {
        /// The reason code (`PEER_UNREACHABLE`, `NOT_PERMITTED`, ...).
        reason: String,
        /// What was said.
        detail: String,
    },
}

impl From<crate::reason::CallResult> for Sent {
    /// The hub's labelled result of one message: the answer, an invalid
    /// reply (`SCHEMA_INVALID`: the reply broke the capability's
    /// contract), or a failure with its reason.
    fn from(result: crate::reason::CallResult) -> Self {
        use crate::reason::{CallResult, ReasonCode};
        match result {
            CallResult::Connected { result, .. } => Sent::Answered(result),
            CallResult::NotConnected {
                reason: ReasonCode::SchemaInvalid,
                detail,
                ..
            } => Sent::InvalidReply(detail),
            CallResult::NotConnected { reason, detail, .. } => Sent::Failed {
                reason: reason.as_str().into(),
                detail,
            },
        }
    }
}

/// One message sent and what came back, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What the consumer sent.
    pub sent: NegotiationMessage,
    /// The valid reply, or why there is none.
    pub reply: Result<NegotiationMessage, String>,
}

/// How a negotiation ended without error.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The provider granted a contract (its `grant`, as it sent it).
    Granted {
        /// The contract.
        grant: Value,
        /// Every step.
        transcript: Vec<Step>,
    },
    /// One side rejected: no contract.
    Rejected {
        /// Who ended it.
        by: Party,
        /// Their reason.
        rationale: String,
        /// Every step.
        transcript: Vec<Step>,
    },
}

/// How a negotiation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NegotiationError {
    /// The provider's reply was not valid, again after one corrective
    /// request (or the provider broke the protocol otherwise).
    #[error("protocol error: {error}")]
    Protocol {
        /// What was wrong with the last reply.
        error: String,
        /// Every step.
        transcript: Vec<Step>,
    },
    /// A message got no answer.
    #[error("{reason}: {detail}")]
    Failed {
        /// The reason code.
        reason: String,
        /// What was said.
        detail: String,
        /// Every step before it.
        transcript: Vec<Step>,
    },
}

/// Reads a provider's answer: the `reply` is validated (an object by
/// [`validate`], text by [`parse_text`]: one JSON object, nothing else),
/// and a `grant` must come with an `accept`.
pub fn read_reply(
    result: &Value,
    known_columns: &BTreeSet<String>,
) -> Result<(NegotiationMessage, Option<Value>), String> {
    let reply = result
        .get("reply")
        .ok_or_else(|| "the answer has no `reply`".to_string())?;
    let message = match reply {
        Value::String(text) => parse_text(text, Some(Party::Provider), Some(known_columns)),
        other => validate(other, Some(Party::Provider), Some(known_columns)),
    }
    .map_err(|e: SchemaError| e.to_string())?;
    let grant = result.get("grant").filter(|g| !g.is_null()).cloned();
    match (&message.intent, &grant) {
        (Intent::Accept, None) => Err("an accept from the provider must carry its grant".into()),
        (i, Some(_)) if *i != Intent::Accept => {
            Err(format!("a grant came with a {}, not an accept", i.as_str()))
        }
        _ => Ok((message, grant)),
    }
}

/// Runs one negotiation: `send` carries a message to the provider and
/// returns what came back.
pub async fn negotiate<F, Fut>(
    want: &Want,
    known_columns: &BTreeSet<String>,
    mut send: F,
) -> Result<Outcome, NegotiationError>
where
    F: FnMut(NegotiationMessage) -> Fut,
    Fut: Future<Output = Sent>,
{
    let mut transcript: Vec<Step> = Vec::new();
    let mut message = NegotiationMessage {
        from: Party::Consumer,
        intent: Intent::Propose,
        scope: Scope {
            columns: want.columns.clone(),
            purpose: want.purpose.clone(),
            retention_days: want.retention_days,
        },
        rationale: format!("These columns answer: {}.", want.purpose),
    };
    // The message a corrective request asks the provider to answer again.
    let mut answering = message.clone();
    let mut corrected = false;
    for _ in 0..MAX_TURNS {
        let got = match send(message.clone()).await {
            Sent::Answered(result) => read_reply(&result, known_columns),
            Sent::InvalidReply(e) => Err(e),
            Sent::Failed { reason, detail } => {
                return Err(NegotiationError::Failed {
                    reason,
                    detail,
                    transcript,
                })
            }
        };
        transcript.push(Step {
            sent: message.clone(),
            reply: got.as_ref().map(|(m, _)| m.clone()).map_err(Clone::clone),
        });
        let (reply, grant) = match got {
            Ok(ok) => ok,
            Err(error) if corrected => {
                return Err(NegotiationError::Protocol { error, transcript })
            }
            Err(error) => {
                corrected = true;
                message = NegotiationMessage {
                    from: Party::Consumer,
                    intent: Intent::Request,
                    scope: answering.scope.clone(),
                    rationale: format!(
                        "Your previous reply could not be validated ({error}). Reply again with \
                         ONLY the JSON object: no prose, no code fence."
                    ),
                };
                continue;
            }
        };
        corrected = false;
        match reply.intent {
            Intent::Accept => {
                let grant = grant.unwrap_or(Value::Null);
                return Ok(Outcome::Granted { grant, transcript });
            }
            Intent::Reject => {
                return Ok(Outcome::Rejected {
                    by: Party::Provider,
                    rationale: reply.rationale,
                    transcript,
                })
            }
            Intent::Request => {
                // The provider asks for the last message again.
                message = answering.clone();
            }
            Intent::Propose | Intent::Counter => {
                let offered: BTreeSet<&String> = reply.scope.columns.iter().collect();
                let missing: Vec<&String> = want
                    .required
                    .iter()
                    .filter(|c| !offered.contains(c))
                    .collect();
                if missing.is_empty() && reply.scope.retention_days <= want.retention_days {
                    message = NegotiationMessage {
                        from: Party::Consumer,
                        intent: Intent::Accept,
                        scope: reply.scope.clone(),
                        rationale: "The offered scope still answers the question.".into(),
                    };
                } else {
                    let rationale = if missing.is_empty() {
                        format!(
                            "A retention of {} days is more than the {} this purpose needs.",
                            reply.scope.retention_days, want.retention_days
                        )
                    } else {
                        format!("The offer lacks {missing:?}, without which the question has no answer.")
                    };
                    let reject = NegotiationMessage {
                        from: Party::Consumer,
                        intent: Intent::Reject,
                        scope: reply.scope.clone(),
                        rationale: rationale.clone(),
                    };
                    // Tell the provider, then stop whatever it says.
                    let last = send(reject.clone()).await;
                    transcript.push(Step {
                        sent: reject,
                        reply: match last {
                            Sent::Answered(r) => read_reply(&r, known_columns).map(|(m, _)| m),
                            Sent::InvalidReply(e) => Err(e),
                            Sent::Failed { reason, detail } => Err(format!("{reason}: {detail}")),
                        },
                    });
                    return Ok(Outcome::Rejected {
                        by: Party::Consumer,
                        rationale,
                        transcript,
                    });
                }
            }
        }
        answering = message.clone();
    }
    Err(NegotiationError::Protocol {
        error: format!("no agreement after {MAX_TURNS} messages"),
        transcript,
    })
}

#[cfg(test)]
#[path = "negotiator_tests.rs"]
mod tests;
