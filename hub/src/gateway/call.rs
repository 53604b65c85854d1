//! The values a call travels as, from its door to its answer.
//!
//! A door (HTTP `/gateway/v1`, the A2A surface, MCP, the hub's own
//! callers) hands the pipeline an [`Incoming`]: what the request said. The
//! pipeline makes one [`Call`] of it — caller, provider, capability,
//! envelope, when it started, and **one** registry generation
//! (`Arc<Loaded>`) — and every later step reads that value: the auth
//! chain, the route, the contracts, the deadline, the audit record, the
//! traffic. A reload in the middle of a call therefore cannot authorize it
//! under one topology and check it under another.
//!
//! Every step ends in a [`Done`]: the answer ([`Answered`]) or the
//! refusal, and what the audit record and the door need besides.

use std::sync::{Arc, OnceLock};

use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;
use tokio::time::Instant;

use super::answer::ProviderReply;
use super::strangers::{Front, Stranger};
use crate::net::listen::Peer;
use crate::registry::Loaded;
use exchange::envelope::{Envelope, CALLER_HEADER};
use exchange::reason::NotConnected;

/// The message metadata key of a task's deadline (RFC 3339), from the
/// caller and on to the provider.
pub const DEADLINE_KEY: &str = "deadline";

/// What a binding hands the pipeline about one incoming call.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// The calling system as it claims to be (`X-Caller-System`); the
    /// auth chain verifies the claim.
    pub caller: String,
    /// Who is at the other end (address, client certificate), for the
    /// auth chain's IP allowlist and mTLS layer.
    pub peer: Peer,
    /// Request headers (envelope, caller, token).
    pub headers: HeaderMap,
    /// The providing system the call is for.
    pub provider: String,
    /// The capability called.
    pub capability: String,
    /// The capability input, or why there is none.
    pub input: Input,
    /// The A2A conversation the call belongs to (`contextId`), passed on
    /// to the provider; `None` lets the provider start one.
    pub context_id: Option<String>,
    /// The provider task the message continues (`taskId`), already
    /// checked to be the caller's by the binding.
    pub task_id: Option<String>,
    /// For a `task` capability: return at once or wait, and the caller's
    /// deadline.
    pub task: TaskAsk,
    /// The registry generation the door already read (to name the caller
    /// by its token): the call is admitted under the same one. `None`: the
    /// pipeline takes the current one.
    pub registry: Option<Arc<Loaded>>,
    /// The door it came in by (`/gateway/v1` unless the binding says).
    pub front: Front,
}

impl Incoming {
    /// An incoming call whose caller is the `X-Caller-System` header
    /// (trimmed; empty if absent or not text).
    pub fn new(
        peer: Peer,
        headers: HeaderMap,
        provider: String,
        capability: String,
        input: Input,
    ) -> Self {
        let caller = headers
            .get(CALLER_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .unwrap_or_default()
            .to_string();
        Self {
            caller,
            peer,
            headers,
            provider,
            capability,
            input,
            context_id: None,
            task_id: None,
            task: TaskAsk::default(),
            registry: None,
            front: Front::Gateway,
        }
    }
}

/// The capability input as the binding read it. The two failures differ in
/// *when* the pipeline reports them, and each carries the status the
/// binding wants to answer with.
#[derive(Debug, Clone)]
pub enum Input {
    /// The input.
    Parsed(Value),
    /// The request was read but is not a valid input (say, a body that is
    /// not JSON). Reported once version and auth chain have passed: the
    /// caller is known by then, and a stranger learns nothing more than
    /// its refusal.
    Invalid {
        /// The status to answer with (the caller's fault: a 4xx).
        status: StatusCode,
        /// The reason code and detail.
        why: NotConnected,
    },
    /// The request could not be read at all (too large, cut off). Reported
    /// at once, before version and auth chain: only the audit record is
    /// written.
    Unreadable {
        /// The status to answer with.
        status: StatusCode,
        /// The reason code and detail.
        why: NotConnected,
    },
}

/// What the caller asked of a task, besides its input.
#[derive(Debug, Clone, Default)]
pub struct TaskAsk {
    /// `configuration.returnImmediately`: answer the task as soon as the
    /// provider accepted it.
    pub return_immediately: bool,
    /// The caller's deadline (message metadata `deadline`), as sent.
    pub deadline: Option<String>,
    /// The caller's acceptance criteria (`{EXT}/criteria`), read and
    /// bounded at the door: the result waits for the caller's decision.
    pub criteria: Option<exchange::acceptance::Criteria>,
}

/// What the forward of a task sends besides the input.
#[derive(Debug, Clone)]
pub struct TaskSend {
    pub return_immediately: bool,
    /// The deadline, capped, RFC 3339.
    pub deadline: String,
    /// The acceptance criteria, passed on in the message's metadata.
    pub criteria: Option<exchange::acceptance::Criteria>,
}

/// Where in an A2A conversation a message belongs: passed on to the
/// provider as the message's `contextId` and `taskId`.
#[derive(Debug, Clone, Default)]
pub(super) struct Conversation {
    pub(super) context_id: Option<String>,
    pub(super) task_id: Option<String>,
}

/// One call, admitted: what every step after the door reads.
#[derive(Debug)]
pub(super) struct Call {
    /// The calling system (as claimed until the auth chain passed).
    pub(super) caller: String,
    /// The providing system.
    pub(super) provider: String,
    /// What the audit record names: the capability, or a task operation.
    pub(super) capability: String,
    /// The envelope the call carries end to end.
    pub(super) envelope: Envelope,
    /// When the hub took the call.
    pub(super) started: Instant,
    /// The registry generation the call is decided under, once.
    pub(super) registry: Arc<Loaded>,
    /// The caller's A2A conversation and task, if it named them.
    pub(super) conversation: Conversation,
    /// For a `task` capability: what the caller asked of it.
    pub(super) task: TaskAsk,
    /// Set when the door refused the call and its credential named
    /// nobody: counted, not recorded row by row (`strangers`).
    pub(super) stranger: OnceLock<Stranger>,
}

impl Call {
    /// A call of `capability` at `provider` by `caller`, under `registry`.
    pub(super) fn new(
        registry: Arc<Loaded>,
        caller: &str,
        provider: &str,
        capability: &str,
        envelope: Envelope,
    ) -> Self {
        Self {
            caller: caller.to_string(),
            provider: provider.to_string(),
            capability: capability.to_string(),
            envelope,
            started: Instant::now(),
            registry,
            conversation: Conversation::default(),
            task: TaskAsk::default(),
            stranger: OnceLock::new(),
        }
    }

    /// The data-share a negotiation capability negotiates (`None` for any
    /// other kind).
    pub(super) fn negotiates(&self) -> Option<String> {
        use crate::registry::model::CapabilityKind;
        self.registry
            .topology
            .capability(&self.capability)
            .filter(|c| c.kind == CapabilityKind::Negotiation)
            .and_then(|c| c.negotiates.clone())
    }
}

/// What a binding gets back from [`Gateway::run`](super::Gateway::run).
#[derive(Debug)]
pub struct Handled {
    /// The HTTP status the pipeline chose.
    pub status: StatusCode,
    /// The call's envelope, for the answer's headers.
    pub envelope: Envelope,
    /// The one labelled result.
    pub result: exchange::reason::CallResult,
    /// The provider's own A2A answer when the call was forwarded (not
    /// refused, not replayed): a binding that speaks A2A passes its
    /// Message or Task on; the capability result in `result` was read
    /// from it and checked against the contract.
    pub reply: Option<ProviderReply>,
    /// When the provider refused the caller's request with an A2A error
    /// (say, a message to a task that has ended): its code, which an A2A
    /// binding answers with instead of a generic invalid-params.
    pub provider_code: Option<i64>,
    /// For a call refused over a rate limit or a daily quota: whole
    /// seconds until it may be sent again (the binding's `Retry-After`).
    pub retry_after: Option<u64>,
    /// The hub's signed receipt of the call ([`exchange::receipt`]),
    /// which the binding hands the caller with the answer.
    pub receipt: Option<exchange::audit::Stamp>,
}

/// A successful call: the result, whether it came from the replay store,
/// and the provider's A2A answer it was read from (none for a replay).
pub(super) struct Answered {
    pub(super) result: Value,
    pub(super) replayed: bool,
    pub(super) reply: Option<ProviderReply>,
}

/// What happened, before it is turned into a `CallResult`.
pub(super) struct Done {
    pub(super) result: Result<Answered, NotConnected>,
    /// Extra operator detail for the audit trail (e.g. replay origin).
    pub(super) note: String,
    /// HTTP status override (a malformed request body is the caller's fault).
    pub(super) status: Option<StatusCode>,
    /// The code of the provider's own refusal of the caller's request
    /// (one of [`CALLER_FAULT_CODES`](super::answer::CALLER_FAULT_CODES)),
    /// for a binding that speaks A2A to pass on.
    pub(super) provider_code: Option<i64>,
}

impl Done {
    pub(super) fn fail(nc: NotConnected) -> Self {
        Self {
            result: Err(nc),
            note: String::new(),
            status: None,
            provider_code: None,
        }
    }

    /// A refusal answered with `status` instead of the reason code's own.
    pub(super) fn refused(status: StatusCode, nc: NotConnected) -> Self {
        Self {
            status: Some(status),
            ..Self::fail(nc)
        }
    }

    /// An answer that reached the caller without a provider's A2A answer
    /// (the hub's own, a task operation's result, an MCP tool result).
    pub(super) fn answered(result: Value, note: impl Into<String>) -> Self {
        Self {
            result: Ok(Answered {
                result,
                replayed: false,
                reply: None,
            }),
            note: note.into(),
            status: None,
            provider_code: None,
        }
    }
}
