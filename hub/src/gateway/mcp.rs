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
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool};
use serde_json::Value;

use super::call::{Call, Done};
use super::observe::{Shown, ShownInput};
use super::strangers::Front;
use super::Gateway;
use crate::dataplane::{call_tool, connect, within, RequestHeaders, Session};
use crate::net::listen::Peer;
use crate::registry::model::System;
use exchange::envelope::{Envelope, CALLER_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::telemetry;
use exchange::wire::MCP_QUERY_TOOL;
use tracing::Instrument;

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

impl Gateway {
    /// `tools/list` of `incoming.provider`'s data plane, for this caller:
    /// auth chain and rule as for a call, nothing recorded (a listing
    /// reads no data).
    pub async fn mcp_list_tools(&self, incoming: &McpIncoming) -> Result<Vec<Tool>, NotConnected> {
        let call = self.mcp_call(incoming);
        let (system, _) = self.mcp_admit(&call, incoming, &Value::Null)?;
        let deadline = call.registry.topology.hub.default_deadline_ms;
        let client = self.mcp_client(&call, system, deadline).await?;
        let tools = within(deadline, &system.id, client.list_all_tools()).await;
        let _ = client.cancel().await;
        tools
    }

    /// The call value of an MCP request: audited under the data-share the
    /// provider's plane serves (the query tool's name when it has none:
    /// the call is refused, and its record still names what was asked).
    fn mcp_call(&self, incoming: &McpIncoming) -> Call {
        let registry = self.registry.snapshot();
        let capability = registry
            .topology
            .system(&incoming.provider)
            .and_then(|s| s.data_plane.as_ref())
            .map(|p| p.capability.clone())
            .unwrap_or_else(|| MCP_QUERY_TOOL.to_string());
        Call::new(
            registry,
            &incoming.caller,
            &incoming.provider,
            &capability,
            Envelope::from_headers(&incoming.headers),
        )
    }

    /// `tools/call` of `incoming.provider`'s data plane: the whole pipeline
    /// and one audit record under the data-share the plane serves; one
    /// `gateway.mcp` span when traces are exported, parented on the
    /// caller's traceparent (the data plane gets the next hop's).
    pub async fn mcp_call_tool(
        &self,
        incoming: &McpIncoming,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (McpAnswer, Envelope) {
        let span = telemetry::mcp_span(&incoming.caller, &incoming.provider, name);
        if span.is_disabled() {
            return self.mcp_call_tool_in(incoming, name, arguments).await;
        }
        let mut incoming = incoming.clone();
        telemetry::continue_trace(&span, &mut incoming.headers);
        let (answer, envelope) = self
            .mcp_call_tool_in(&incoming, name, arguments)
            .instrument(span.clone())
            .await;
        telemetry::record(&span, "request_id", &envelope.request_id);
        match &answer {
            McpAnswer::Tool(_) => telemetry::record_outcome(&span, "connected"),
            McpAnswer::NotConnected(nc) => telemetry::record_refusal(&span, nc.reason.as_str()),
        }
        (answer, envelope)
    }

    async fn mcp_call_tool_in(
        &self,
        incoming: &McpIncoming,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (McpAnswer, Envelope) {
        let call = self.mcp_call(incoming);
        let input = arguments.clone().map(Value::Object).unwrap_or(Value::Null);
        // Admitted, then counted against the data-share's quota (a
        // listing is not a call and is not counted).
        let admitted = match self.mcp_admit(&call, incoming, &input) {
            Ok(target) => self.within_quota(&call).await.map(|()| target),
            Err(nc) => Err(nc),
        };
        let (answer, note) = match admitted {
            Err(nc) => (McpAnswer::NotConnected(nc), String::new()),
            Ok((system, deadline_ms)) => {
                self.mcp_forward(&call, system, deadline_ms, name, arguments)
                    .await
            }
        };
        let done = match &answer {
            McpAnswer::Tool(result) => {
                Done::answered(serde_json::to_value(result).unwrap_or(Value::Null), note)
            }
            McpAnswer::NotConnected(nc) => Done::fail(nc.clone()),
        };
        self.finish(
            &call,
            done,
            Shown {
                method: "tools/call",
                input: ShownInput::None,
                capability: None,
                answer_checked: false,
            },
        )
        .await;
        (answer, call.envelope)
    }

    /// Version, auth chain, the registry's route to the data plane, and
    /// the input schema: the provider and the call's deadline, or the
    /// refusal.
    fn mcp_admit<'a>(
        &self,
        call: &'a Call,
        incoming: &McpIncoming,
        input: &Value,
    ) -> Result<(&'a System, u64), NotConnected> {
        self.admit_outside(call, &incoming.peer, &incoming.headers, Front::Mcp)?;
        let (route, plane) = call.registry.plane_route(&call.caller, &call.provider)?;
        if !input.is_null() {
            if let Some(v) = route.contract.and_then(|c| c.check_input(input).err()) {
                return Err(NotConnected::new(
                    ReasonCode::NotPermitted,
                    format!(
                        "{}: the input is outside the contract at {}: {}",
                        plane.capability, v.pointer, v.problem
                    ),
                ));
            }
        }
        Ok((route.system, route.deadline_ms))
    }

    /// Forwards one `tools/call` under the deadline; the answer and a note
    /// for the audit record (the refusal's code, never its values).
    async fn mcp_forward(
        &self,
        call: &Call,
        system: &System,
        deadline_ms: u64,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (McpAnswer, String) {
        let started = Instant::now();
        let session = match self.mcp_target(call, system) {
            Ok((url, token)) => self.planes.get(&system.id, url, token, deadline_ms).await,
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
            &self.planes,
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
    async fn mcp_client(
        &self,
        call: &Call,
        system: &System,
        deadline_ms: u64,
    ) -> Result<Session, NotConnected> {
        let (url, token) = self.mcp_target(call, system)?;
        connect(
            self.planes.carrier(),
            &system.id,
            url,
            token,
            mcp_headers(call),
            deadline_ms,
        )
        .await
    }

    /// Where `system`'s data plane is and the hub's token for it, in the
    /// call's registry generation.
    fn mcp_target<'a>(
        &self,
        call: &'a Call,
        system: &'a System,
    ) -> Result<(&'a str, &'a str), NotConnected> {
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
