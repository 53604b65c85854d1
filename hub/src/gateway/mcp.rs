//! The MCP door through the gateway (NOTES.md, "Data contracts and the
//! data plane"): a consumer's `tools/list` and `tools/call` for a
//! provider's data plane run the same pipeline as an A2A call of the
//! data-share the plane serves — the auth chain, the rule for that
//! capability, its input schema (the hub's half of the grant), its
//! deadline, the audit record; a `tools/call` also its quota — and are
//! forwarded over MCP Streamable HTTP with the provider's token, the
//! consumer's id (`X-Caller-System`) and the envelope.
//!
//! Two outcomes stay apart everywhere: the provider's **refusal** (a tool
//! result with `isError`, its words verbatim: `NO_CONTRACT`,
//! `SCOPE_DENIED`, ...) is an answer — the call connected, the data owner
//! said no — while a **transport failure** (the plane is down, slow,
//! answers no MCP) is `not_connected` with its reason code
//! (`PEER_UNREACHABLE`, `TIMEOUT`, `PEER_ERROR`). A granted answer's
//! `structuredContent` must satisfy the data-share's response schema, else
//! `SCHEMA_INVALID`.

use std::collections::HashMap;
use tokio::time::Instant;

use axum::http::HeaderMap;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use serde_json::Value;

use super::call::Call;
use crate::dataplane::{call_tool, connect, RequestHeaders, Session, Sessions};
use crate::net::listen::Peer;
use crate::registry::model::System;
use exchange::envelope::{CALLER_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::telemetry;

/// One MCP request from outside, as the binding read it.
#[derive(Debug, Clone)]
pub struct McpIncoming {
    /// The consumer (the bearer token's system, or its `X-Caller-System`
    /// claim, which the auth chain checks).
    pub caller: String,
    /// The TCP peer, for the IP allowlist.
    pub peer: Peer,
    /// Request headers (token, envelope).
    pub headers: HeaderMap,
    /// The providing system whose data plane is asked.
    pub provider: String,
}

/// What a `tools/call` came to.
#[derive(Debug)]
pub enum McpAnswer {
    /// The provider's tool result: granted, or its refusal (`isError`).
    Tool(CallToolResult),
    /// No answer from the provider (or the hub refused the call first).
    NotConnected(NotConnected),
}

/// The MCP leg of a call, and what it holds: one MCP session per
/// provider's data plane, shared by every call.
pub(super) struct Planes {
    sessions: Sessions,
}

impl Planes {
    /// Planes reached through `sessions`.
    pub(super) fn new(sessions: Sessions) -> Self {
        Self { sessions }
    }

    /// Forwards one `tools/call` under the deadline; the answer and a note
    /// for the audit record (the refusal's code, never its values).
    pub(super) async fn forward(
        &self,
        call: &Call,
        system: &System,
        deadline_ms: u64,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (McpAnswer, String) {
        let started = Instant::now();
        let session = match target(call, system) {
            Ok((url, token)) => self.sessions.get(&system.id, url, token, deadline_ms).await,
            Err(nc) => Err(nc),
        };
        let session = match session {
            Ok(s) => s,
            Err(nc) => return (McpAnswer::NotConnected(nc), String::new()),
        };
        let left = deadline_ms
            .saturating_sub(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let headers = RequestHeaders(mcp_headers(call));
        let called = call_tool(
            &self.sessions,
            &system.id,
            &session,
            params,
            headers,
            left.max(1),
        )
        .await;
        let result = match called {
            Ok(r) => r,
            Err(nc) => return (McpAnswer::NotConnected(nc), String::new()),
        };
        if result.is_error == Some(true) {
            let word = result
                .content
                .iter()
                .find_map(|c| c.as_text().map(|t| t.text.clone()))
                .and_then(|t| t.split(':').next().map(str::to_string))
                .filter(|w| w.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
                .unwrap_or_else(|| "tool error".into());
            return (
                McpAnswer::Tool(result),
                format!("mcp tools/call refused by the provider: {word}"),
            );
        }
        if let Some(contract) = call.registry.contracts.of(&call.capability) {
            let content = result.structured_content.clone().unwrap_or(Value::Null);
            if let Err(v) = contract.check(&content) {
                return (
                    McpAnswer::NotConnected(NotConnected::new(
                        ReasonCode::SchemaInvalid,
                        format!("{}'s answer breaks {}: {v}", system.id, call.capability),
                    )),
                    String::new(),
                );
            }
        }
        (McpAnswer::Tool(result), "mcp tools/call".into())
    }

    /// A new MCP client session with `system`'s data plane carrying this
    /// call's headers, started within `deadline_ms` (a listing: rare
    /// enough not to share the calls' session).
    pub(super) async fn client(
        &self,
        call: &Call,
        system: &System,
        deadline_ms: u64,
    ) -> Result<Session, NotConnected> {
        let (url, token) = target(call, system)?;
        connect(
            self.sessions.carrier(),
            &system.id,
            url,
            token,
            mcp_headers(call),
            deadline_ms,
        )
        .await
    }
}

/// Where `system`'s data plane is and the hub's token for it, in the
/// call's registry generation.
fn target<'a>(call: &'a Call, system: &'a System) -> Result<(&'a str, &'a str), NotConnected> {
    let plane = system.data_plane.as_ref().ok_or_else(|| {
        NotConnected::new(
            ReasonCode::NotPermitted,
            format!("{} runs no MCP data plane", system.id),
        )
    })?;
    let Some(token) = call.registry.tokens.of(&system.id) else {
        return Err(NotConnected::new(
            ReasonCode::AuthRejected,
            format!("the hub holds no token for {}", system.id),
        ));
    };
    Ok((&plane.base_url, token))
}

/// What the data plane is told about a call besides the hub's token: the
/// consumer (`X-Caller-System`) and the envelope; with traces exported,
/// the data plane's parent is the MCP span.
fn mcp_headers(call: &Call) -> HashMap<http::HeaderName, http::HeaderValue> {
    let (caller, envelope) = (call.caller.as_str(), &call.envelope);
    let pairs = envelope
        .forward_headers(exchange::envelope::A2aVersion::V1_0)
        .into_iter()
        .map(|(k, v)| match k {
            TRACEPARENT_HEADER => (
                k.to_string(),
                telemetry::next_hop(&envelope.trace).map_or(v, |hop| hop.to_header()),
            ),
            _ => (k.to_string(), v),
        })
        .chain([(CALLER_HEADER.to_string(), caller.to_string())]);
    let mut headers = HashMap::new();
    for (k, v) in pairs {
        if let (Ok(k), Ok(v)) = (
            http::HeaderName::from_bytes(k.as_bytes()),
            http::HeaderValue::from_str(&v),
        ) {
            headers.insert(k, v);
        }
    }
    headers
}
