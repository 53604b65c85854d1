//! The MCP door through the gateway (seed `000`, step 4; NOTES "Data
//! contracts"): a consumer's `tools/list` and `tools/call` for a
//! provider's data plane run the same pipeline as an A2A call of the
//! data-share the plane serves — the auth chain, the rule for that
//! capability, its input schema (the hub's half of the grant), its
//! deadline, the audit record — and are forwarded over MCP Streamable HTTP
//! with the provider's token, the consumer's id (`X-Caller-System`) and the
//! envelope.
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
use std::net::SocketAddr;
use std::time::Duration;
use tokio::time::Instant;

use axum::http::HeaderMap;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, ProtocolVersion, Tool};
use rmcp::service::ServiceError;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;

use super::pipeline::{Answered, Done, Input};
use super::Gateway;
use crate::auth::token_for;
use crate::registry::model::System;
use exchange::envelope::{Envelope, CALLER_HEADER, TRACEPARENT_HEADER};
use exchange::reason::{NotConnected, ReasonCode};
use exchange::telemetry;
use exchange::text::clip;
use exchange::wire::{MCP_PATH, MCP_QUERY_TOOL};
use tracing::Instrument;

/// Connecting to a data plane never takes longer than this (the call's
/// deadline bounds the rest).
const CONNECT_TIMEOUT: Duration = Duration::from_millis(1000);

/// One MCP request from outside, as the binding read it.
#[derive(Debug, Clone)]
pub struct McpIncoming {
    /// The consumer (the bearer token's system, or its `X-Caller-System`
    /// claim, which the auth chain checks).
    pub caller: String,
    /// The TCP peer, for the IP allowlist.
    pub peer_addr: Option<SocketAddr>,
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
        let envelope = Envelope::from_headers(&incoming.headers);
        let (system, _) = self.mcp_admit(incoming, &envelope, &Value::Null)?;
        let deadline = self.registry.snapshot().topology.hub.default_deadline_ms;
        let client = self
            .mcp_client(&system, &incoming.caller, &envelope, deadline)
            .await?;
        let tools = within(deadline, &system.id, client.list_all_tools()).await;
        let _ = client.cancel().await;
        tools
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
        let started = Instant::now();
        let envelope = Envelope::from_headers(&incoming.headers);
        let input = arguments.clone().map(Value::Object).unwrap_or(Value::Null);
        let capability = self
            .registry
            .snapshot()
            .topology
            .system(&incoming.provider)
            .and_then(|s| s.data_plane.as_ref())
            .map(|p| p.capability.clone())
            .unwrap_or_else(|| MCP_QUERY_TOOL.to_string());
        let (answer, note) = match self.mcp_admit(incoming, &envelope, &input) {
            Err(nc) => (McpAnswer::NotConnected(nc), String::new()),
            Ok((system, deadline_ms)) => {
                self.mcp_forward(&system, incoming, &envelope, deadline_ms, name, arguments)
                    .await
            }
        };
        let done = match &answer {
            McpAnswer::Tool(result) => Done {
                result: Ok(Answered {
                    result: serde_json::to_value(result).unwrap_or(Value::Null),
                    replayed: false,
                    reply: None,
                }),
                note,
                status: None,
                provider_code: None,
            },
            McpAnswer::NotConnected(nc) => Done::fail(nc.clone()),
        };
        self.finish(
            &incoming.caller,
            &incoming.provider,
            &capability,
            &envelope,
            started,
            done,
            super::pipeline::Shown {
                method: "tools/call",
                input: super::pipeline::ShownInput::None,
                capability: None,
            },
        )
        .await;
        (answer, envelope)
    }

    /// Version, auth chain, provider, data plane, rule and input schema:
    /// the provider and the call's deadline, or the refusal.
    fn mcp_admit(
        &self,
        incoming: &McpIncoming,
        envelope: &Envelope,
        input: &Value,
    ) -> Result<(System, u64), NotConnected> {
        self.admit(
            &incoming.caller,
            incoming.peer_addr,
            &incoming.headers,
            envelope,
            Input::Parsed(Value::Null),
        )
        .map_err(|done| match done.result {
            Err(nc) => nc,
            Ok(_) => NotConnected::new(ReasonCode::PeerError, "refused"),
        })?;
        let loaded = self.registry.snapshot();
        let topology = &loaded.topology;
        let provider = &incoming.provider;
        let system = topology.system(provider).ok_or_else(|| {
            NotConnected::new(
                ReasonCode::UnknownPeer,
                format!("no system `{}` in the registry", clip(provider, 64)),
            )
        })?;
        let plane = system.data_plane.as_ref().ok_or_else(|| {
            NotConnected::new(
                ReasonCode::NotPermitted,
                format!("{provider} runs no MCP data plane"),
            )
        })?;
        let capability = &plane.capability;
        if !topology.permits(&incoming.caller, capability, provider) {
            return Err(NotConnected::new(
                ReasonCode::NotPermitted,
                format!(
                    "no rule lets {} use {capability} of {provider}",
                    clip(&incoming.caller, 64)
                ),
            ));
        }
        if !input.is_null() {
            if let Some(v) = loaded
                .contracts
                .get(capability)
                .and_then(|c| c.check_input(input).err())
            {
                return Err(NotConnected::new(
                    ReasonCode::NotPermitted,
                    format!(
                        "{capability}: the input is outside the contract at {}: {}",
                        v.pointer, v.problem
                    ),
                ));
            }
        }
        Ok((system.clone(), topology.deadline_ms(capability)))
    }

    /// Forwards one `tools/call` under the deadline; the answer and a note
    /// for the audit record (the refusal's code, never its values).
    async fn mcp_forward(
        &self,
        system: &System,
        incoming: &McpIncoming,
        envelope: &Envelope,
        deadline_ms: u64,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> (McpAnswer, String) {
        let started = Instant::now();
        let client = match self
            .mcp_client(system, &incoming.caller, envelope, deadline_ms)
            .await
        {
            Ok(c) => c,
            Err(nc) => return (McpAnswer::NotConnected(nc), String::new()),
        };
        let left = deadline_ms
            .saturating_sub(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let called = within(left.max(1), &system.id, client.call_tool(params)).await;
        let _ = client.cancel().await;
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
        let loaded = self.registry.snapshot();
        let capability = system
            .data_plane
            .as_ref()
            .map(|p| p.capability.as_str())
            .unwrap_or_default();
        if let Some(contract) = loaded.contracts.get(capability) {
            let content = result.structured_content.clone().unwrap_or(Value::Null);
            if let Err(v) = contract.check(&content) {
                return (
                    McpAnswer::NotConnected(NotConnected::new(
                        ReasonCode::SchemaInvalid,
                        format!("{}'s answer breaks {capability}: {v}", system.id),
                    )),
                    String::new(),
                );
            }
        }
        (McpAnswer::Tool(result), "mcp tools/call".into())
    }

    /// An MCP client session with `system`'s data plane, as `caller`,
    /// initialised within `deadline_ms`.
    async fn mcp_client(
        &self,
        system: &System,
        caller: &str,
        envelope: &Envelope,
        deadline_ms: u64,
    ) -> Result<rmcp::service::RunningService<rmcp::RoleClient, ()>, NotConnected> {
        let plane = system.data_plane.as_ref().ok_or_else(|| {
            NotConnected::new(
                ReasonCode::NotPermitted,
                format!("{} runs no MCP data plane", system.id),
            )
        })?;
        let Some(token) = token_for(system) else {
            return Err(NotConnected::new(
                ReasonCode::AuthRejected,
                format!("the hub holds no token for {}", system.id),
            ));
        };
        let mut headers = HashMap::new();
        let pairs = envelope
            .forward_headers(exchange::envelope::A2aVersion::V1_0)
            .into_iter()
            .map(|(k, v)| match k {
                // Traces exported: the data plane's parent is the MCP span.
                TRACEPARENT_HEADER => (
                    k.to_string(),
                    telemetry::next_hop(&envelope.trace).map_or(v, |hop| hop.to_header()),
                ),
                _ => (k.to_string(), v),
            })
            .chain([(CALLER_HEADER.to_string(), caller.to_string())]);
        for (k, v) in pairs {
            if let (Ok(k), Ok(v)) = (
                http::HeaderName::from_bytes(k.as_bytes()),
                http::HeaderValue::from_str(&v),
            ) {
                headers.insert(k, v);
            }
        }
        connect(
            &system.id,
            &plane.base_url,
            token.as_str(),
            headers,
            deadline_ms,
        )
        .await
    }
}

/// An initialised MCP client session with the data plane at `base_url`
/// of system `id`, presenting `token` and `headers`, within `deadline_ms`
/// (the gateway's calls and the prober's identity check).
pub(crate) async fn connect(
    id: &str,
    base_url: &str,
    token: &str,
    headers: HashMap<http::HeaderName, http::HeaderValue>,
    deadline_ms: u64,
) -> Result<rmcp::service::RunningService<rmcp::RoleClient, ()>, NotConnected> {
    let url = format!("{}{MCP_PATH}", base_url.trim_end_matches('/'));
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .auth_header(token.to_string())
        .custom_headers(headers);
    let http = reqwest13::Client::builder()
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(Duration::from_millis(deadline_ms.max(1)))
        .build()
        .map_err(|e| NotConnected::new(ReasonCode::PeerError, format!("MCP client: {e}")))?;
    let transport = StreamableHttpClientTransport::with_client(http, config);
    // The newest revision: stateless, `server/discover` instead of the
    // `initialize` handshake, one POST before the call instead of two.
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    match tokio::time::timeout(
        Duration::from_millis(deadline_ms.max(1)),
        ().serve_with_lifecycle(transport, lifecycle),
    )
    .await
    {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(e)) => Err(NotConnected::new(
            ReasonCode::PeerUnreachable,
            format!(
                "{id}'s MCP data plane did not initialise: {}",
                exchange::http::root_cause(&e)
            ),
        )),
        Err(_) => Err(NotConnected::new(
            ReasonCode::Timeout,
            format!("{id}'s MCP data plane did not answer within {deadline_ms} ms"),
        )),
    }
}

/// The prober's identity check of a data plane: an MCP session whose
/// server says it is this build's peer (`serverInfo.name`), answering a
/// real `tools/list` that offers [`MCP_QUERY_TOOL`]. A port that answers
/// HTTP proves nothing; this does.
pub(crate) async fn probe_identity(system: &System, timeout_ms: u64) -> Result<(), NotConnected> {
    let plane = system.data_plane.as_ref().ok_or_else(|| {
        NotConnected::new(
            ReasonCode::NotPermitted,
            format!("{} runs no MCP data plane", system.id),
        )
    })?;
    let token = token_for(system).ok_or_else(|| {
        NotConnected::new(
            ReasonCode::AuthRejected,
            format!("the hub holds no token for {}", system.id),
        )
    })?;
    let mut headers = HashMap::new();
    headers.insert(
        http::HeaderName::from_static(CALLER_HEADER),
        http::HeaderValue::from_static("hub"),
    );
    let client = connect(
        &system.id,
        &plane.base_url,
        token.as_str(),
        headers,
        timeout_ms,
    )
    .await?;
    let name = client
        .peer_info()
        .and_then(|i| i.server_info.as_ref().map(|s| s.name.clone()))
        .unwrap_or_default();
    let tools = within(timeout_ms, &system.id, client.list_all_tools()).await;
    let _ = client.cancel().await;
    if name != exchange::health::PEER_SERVICE {
        return Err(NotConnected::new(
            ReasonCode::UnknownPeer,
            format!(
                "the data plane port answered as {:?}, not this build's peer",
                clip(&name, 80)
            ),
        ));
    }
    let tools = tools?;
    if !tools.iter().any(|t| t.name == MCP_QUERY_TOOL) {
        return Err(NotConnected::new(
            ReasonCode::PeerError,
            format!("the data plane lists no {MCP_QUERY_TOOL}"),
        ));
    }
    Ok(())
}

/// Runs an MCP request under `ms`, its failure as a reason code.
async fn within<T>(
    ms: u64,
    id: &str,
    f: impl std::future::Future<Output = Result<T, ServiceError>>,
) -> Result<T, NotConnected> {
    match tokio::time::timeout(Duration::from_millis(ms), f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(ServiceError::McpError(e))) => Err(NotConnected::new(
            ReasonCode::PeerError,
            format!(
                "{id}'s data plane answered an MCP error: {}",
                clip(&e.message, 300)
            ),
        )),
        Ok(Err(ServiceError::Timeout { .. })) | Err(_) => Err(NotConnected::new(
            ReasonCode::Timeout,
            format!("{id}'s data plane did not answer within {ms} ms"),
        )),
        Ok(Err(e)) => Err(NotConnected::new(
            ReasonCode::PeerUnreachable,
            format!("{id}'s data plane: {}", clip(&e.to_string(), 200)),
        )),
    }
}
