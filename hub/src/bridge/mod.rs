//! Version bridge between A2A v0.3 and A2A v1.0 on the JSON-RPC binding:
//! pure functions over `serde_json::Value` that translate method names,
//! request params, results, streaming events and agent cards, both ways.
//!
//! DESIGN.md §2, "envelope": every cross-system call carries `A2A-Version`;
//! §3 gives the hub "v1.0 with a v0.3 bridge".
//! The hub speaks A2A v1.0 inside (the JSON shapes of the `a2a-lf` crate);
//! a caller or provider that speaks v0.3 (the shapes of the a2a-sdk 0.3
//! line) is met at the edge by this module. the envelope reads a
//! caller's version, [`version_of_card`] a provider's card, and the
//! `*_to_v1` / `*_to_v03` functions rewrite what crosses. No I/O, no state,
//! no panics: input that its dialect does not define is a [`BridgeError`]
//! whose `Display` names the JSON path (`params.message.role: unknown role
//! "robot"`). It knows nothing of the hub around it: the gateway, the A2A
//! surface and the prober call it, it calls none of them.
//!
//! | room | what it translates |
//! |---|---|
//! | `methods` | the [`Method`] names of both dialects, and each method's params and result ([`params_to_v1`], [`params_to_v03`], [`result_to_v1`], [`result_to_v03`]) |
//! | `messages` | messages and their parts, tasks with their status and artifacts, stream events ([`event_to_v1`], [`event_to_v03`]) |
//! | `push` | a send request's configuration and the push-config objects |
//! | `cards` | agent cards ([`card_to_v1`], [`card_to_v03`]) and which dialect a card speaks ([`version_of_card`]) |
//! | `json` | typed access to the JSON, every check naming its path |
//!
//! This file holds what they all use: [`Dialect`], [`BridgeError`] and the
//! list of what does not survive a round trip, [`LOSSY`].
//!
//! | who speaks 0.3 | request going in | answer coming back |
//! | --- | --- | --- |
//! | a caller | [`params_to_v1`] | [`result_to_v03`], [`event_to_v03`] |
//! | a provider | [`params_to_v03`] | [`result_to_v1`], [`event_to_v1`] |
//! | its card | [`card_to_v1`] (a 0.3 provider's card) | [`card_to_v03`] (served to a 0.3 caller) |
//!
//! # What maps to what
//! - Methods: `message/send` ↔ `SendMessage`, `message/stream` ↔
//!   `SendStreamingMessage`, `tasks/get` ↔ `GetTask`, `tasks/cancel` ↔
//!   `CancelTask`, `tasks/resubscribe` ↔ `SubscribeToTask`,
//!   `tasks/pushNotificationConfig/{set,get,list,delete}` ↔
//!   `{Create,Get,List,Delete}TaskPushNotificationConfig(s)`,
//!   `agent/getAuthenticatedExtendedCard` ↔ `GetExtendedAgentCard`.
//!   v0.3 has no `ListTasks`.
//! - Objects: v0.3 tags messages, tasks, parts and events with `kind`; v1.0
//!   has no `kind` and wraps send results and stream events instead
//!   (`{"task": ...}`, `{"statusUpdate": ...}`). A v0.3 object without
//!   `kind` is accepted when its fields say what it is, as the 0.3 SDK's own
//!   models accept it; a `kind` that is present must be right.
//! - Enums: roles `user`/`agent` ↔ `ROLE_USER`/`ROLE_AGENT`; task states
//!   kebab-case ↔ `TASK_STATE_*`, with `unknown` ↔ `TASK_STATE_UNSPECIFIED`.
//! - Parts: `{kind:"text", text}` ↔ `{text}`, `{kind:"data", data}` ↔
//!   `{data}`, `{kind:"file", file:{bytes|uri, name, mimeType}}` ↔
//!   `{raw|url, filename, mediaType}`; per-part `metadata` carries across.
//! - Send configuration: `blocking` ↔ `returnImmediately` (negated; absent
//!   stays absent, which means "block" in both), `pushNotificationConfig` ↔
//!   `taskPushNotificationConfig`; push authentication `{schemes: [s]}` ↔
//!   `{scheme: s}`.
//! - Push configs: v0.3 nests `{taskId, pushNotificationConfig:{url, ...}}`,
//!   v1.0 is flat `{taskId, url, ...}`; the v0.3 get/list/delete params name
//!   the task `id` and the config `pushNotificationConfigId`, v1.0 names
//!   them `taskId` and `id`. A v0.3 list answer is a bare array, v1.0's is
//!   `{configs: [...]}`.
//! - Cards: v0.3's top-level `url`, `preferredTransport`, `protocolVersion`
//!   and `additionalInterfaces [{url, transport}]` ↔ v1.0's
//!   `supportedInterfaces [{url, protocolBinding, protocolVersion}]` (the
//!   v0.3 main interface first; going to v0.3, the first JSONRPC interface
//!   is the main one, since the bridge is JSON-RPC only, and interfaces of
//!   a version other than 0.3 are left out); OpenAPI-style `securitySchemes`
//!   (`{type:"http", scheme}`) ↔ one-key unions (`{httpAuthSecurityScheme:
//!   {scheme}}`); `security` `[{name: scopes}]` ↔ `securityRequirements`
//!   `[{schemes: {name: {list: scopes}}}]` (the plain v0.3 shape is accepted
//!   in v1.0 input too, as `a2a-lf` accepts it);
//!   `supportsAuthenticatedExtendedCard` ↔ `capabilities.extendedAgentCard`.
//! - Errors: JSON-RPC error objects are the same in both dialects (-32700 to
//!   -32600 and -32001 to -32007 mean the same), so no function here
//!   touches them: pass them unchanged. v1.0 adds -32008 (extension support
//!   required) and -32009 (version not supported), which a 0.3 peer reads as
//!   ordinary JSON-RPC errors; `data` passes as it is. A [`BridgeError`] on a
//!   caller's params is the caller's invalid params (-32602); on a
//!   provider's answer it is an invalid agent response (-32006).
//!
//! Every object is rebuilt from the fields its target dialect defines: a
//! field both dialects have passes unchanged after a type check, a field
//! only the source has is dropped, and so is anything neither defines.
//!
//! # Lossy
//! What does not survive a round trip ([`LOSSY`] holds the same list, one
//! `(what, why)` per construct):
//! - status-update `final`: dropped going to v1.0; derived from the state
//!   going to v0.3.
//! - `tenant`: v0.3 has no tenants.
//! - request `metadata` of tasks/get, tasks/resubscribe and the push-config
//!   methods: v1.0 has none there.
//! - part `filename`/`mediaType` on text and data parts: v0.3 has them on
//!   files only.
//! - push config `taskId` inside a send configuration: v0.3 has none there.
//! - push-config get without `pushNotificationConfigId`: the task id stands
//!   in for it.
//! - push-config list paging (`pageSize`, `pageToken`, `nextPageToken`).
//! - card `signatures`: they sign the original JSON.
//! - card `capabilities.stateTransitionHistory`: v1.0 has none.
//! - card interface `protocolVersion`: one per card in v0.3.
//! - card interface `tenant`: v0.3 has no tenants.
//! - card main interface: the first JSONRPC one becomes the v0.3 url.
//! - card interfaces of another version: left out of a v0.3 card, bar the
//!   main JSONRPC one.
//! - card `additionalInterfaces` naming only the main interface.
//! - oauth2 flows beyond the first: v1.0 has exactly one.
//! - oauth2 `pkceRequired`: v0.3 has none.
//! - fields neither dialect defines.
//!
//! # Refused
//! Some constructs have no form in the other dialect and are a
//! [`BridgeError::Untranslatable`] rather than a silent guess:
//! `ListTasks` (no v0.3 method), role `ROLE_UNSPECIFIED`, a v1.0 data part
//! whose `data` is not a JSON object, push authentication with other than
//! exactly one scheme, the v1.0 `deviceCode` OAuth flow, a v0.3 oauth2
//! scheme with no flow, and a v1.0 card with no interface.

mod cards;
mod json;
mod messages;
mod methods;
mod push;

pub use cards::{card_to_v03, card_to_v1, version_of_card};
pub use messages::{event_to_v03, event_to_v1};
pub use methods::{params_to_v03, params_to_v1, result_to_v03, result_to_v1, Method};

// ---------------------------------------------------------------------------
// Dialect
// ---------------------------------------------------------------------------

/// Which A2A version a peer speaks: the envelope's version type, so one
/// function reads a version string ([`A2aVersion::parse`]: `1`, `1.N`,
/// `1.N.N` are v1.0; `0.3`, `0.3.N` are v0.3; and a missing header is 0.3,
/// decided where the header is read, [`Envelope::from_headers`]).
///
/// [`A2aVersion::parse`]: exchange::envelope::A2aVersion::parse
/// [`Envelope::from_headers`]: exchange::envelope::Envelope::from_headers
pub use exchange::envelope::A2aVersion as Dialect;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Why a translation was refused. Every variant carries the JSON path of
/// the offending value in the input (`params.message.parts[0].kind`), rooted
/// at `params`, `result`, `event` or `card`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BridgeError {
    /// The value at `path` has the wrong JSON type (or the wrong `kind`).
    #[error("{path}: expected {expected}, found {found}")]
    WrongType {
        path: String,
        expected: String,
        found: String,
    },
    /// A required field is absent (or null).
    #[error("{path}: missing required field")]
    Missing { path: String },
    /// A string enum (role, task state, kind, scheme type) that the source
    /// dialect does not define.
    #[error("{path}: unknown {what} {value:?}")]
    UnknownValue {
        path: String,
        what: &'static str,
        value: String,
    },
    /// A union must have exactly one of `fields` and has `found` of them.
    #[error("{path}: expected exactly one of {fields}, found {found}")]
    NotExactlyOne {
        path: String,
        fields: &'static str,
        found: usize,
    },
    /// Valid in the source dialect, but the target has no way to say it.
    #[error("{path}: cannot translate: {what}")]
    Untranslatable { path: String, what: String },
}

impl BridgeError {
    /// The JSON path the error is about.
    pub fn path(&self) -> &str {
        match self {
            BridgeError::WrongType { path, .. }
            | BridgeError::Missing { path }
            | BridgeError::UnknownValue { path, .. }
            | BridgeError::NotExactlyOne { path, .. }
            | BridgeError::Untranslatable { path, .. } => path,
        }
    }
}

// ---------------------------------------------------------------------------
// Lossy constructs
// ---------------------------------------------------------------------------

/// One line per construct that does not survive a round trip, for the docs
/// (NOTES.md, "Version bridge"): (what, why).
pub const LOSSY: &[(&str, &str)] = &[
    (
        "status-update `final`",
        "v1.0 has no such flag: going to v1.0 it is dropped (the end of the stream says it); \
         going to v0.3 it is derived, true for completed, failed, canceled, rejected, \
         input-required and auth-required",
    ),
    (
        "`tenant`",
        "v0.3 has no tenants: the v1.0 `tenant` of every request is dropped going to v0.3",
    ),
    (
        "request `metadata` of tasks/get, tasks/resubscribe and the push-config methods",
        "the v1.0 GetTask, SubscribeToTask and push-config requests have no metadata; \
         dropped going to v1.0 (tasks/cancel keeps its metadata)",
    ),
    (
        "part `filename`/`mediaType` on text and data parts",
        "v0.3 text and data parts have neither (only files have name and mimeType); \
         dropped going to v0.3",
    ),
    (
        "push config `taskId` inside a send configuration",
        "v0.3's MessageSendConfiguration.pushNotificationConfig has no task id; \
         dropped going to v0.3",
    ),
    (
        "push-config get without `pushNotificationConfigId`",
        "v1.0 needs a config id; the task id is used, as the 0.3 SDK names a task's \
         default config after the task",
    ),
    (
        "push-config list paging (`pageSize`, `pageToken`, `nextPageToken`)",
        "v0.3 lists every config in one bare array; dropped going to v0.3",
    ),
    (
        "card `signatures`",
        "a JWS signs the card's own JSON, which translation changes, so it could not \
         verify; dropped both ways",
    ),
    (
        "card `capabilities.stateTransitionHistory`",
        "v1.0 has no such capability; dropped going to v1.0",
    ),
    (
        "card interface `protocolVersion`",
        "a v0.3 card has one protocolVersion for all its interfaces: the v1.0 main \
         interface's version is kept when it is 0.3.x, anything else is written as 0.3.0 \
         (the v0.3 card is served to callers that will speak 0.3)",
    ),
    (
        "card interface `tenant`",
        "v0.3 interfaces have no tenant; dropped going to v0.3",
    ),
    (
        "card main interface",
        "a v0.3 card's url is the v1.0 card's first JSONRPC interface (the binding this \
         bridge translates), which need not be its first interface",
    ),
    (
        "card interfaces of another version",
        "a v0.3 card lists interfaces that speak 0.3: a v1.0 interface of another version \
         is left out, except the main JSONRPC one, which 0.3 callers reach through this bridge",
    ),
    (
        "card `additionalInterfaces` naming only the main interface",
        "it folds into the first supportedInterfaces entry, and a v0.3 card is given \
         additionalInterfaces only when there is more than one interface",
    ),
    (
        "oauth2 flows beyond the first",
        "v1.0 OAuthFlows is a oneof: of a v0.3 scheme's flows only the first of \
         authorizationCode, clientCredentials, implicit, password is kept",
    ),
    (
        "oauth2 `pkceRequired`",
        "v0.3's authorizationCode flow has no such field; dropped going to v0.3",
    ),
    (
        "fields neither dialect defines",
        "every object is rebuilt from the fields its target defines; unknown extras \
         are dropped",
    ),
];

#[cfg(test)]
mod tests;
