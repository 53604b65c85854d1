//! The hub as an MCP server (DESIGN.md §4 "Peer to
//! peer"): `POST /mcp/{provider}` is MCP Streamable HTTP (stateless, JSON
//! answers) in front of that provider's data plane, the way `/a2a/{provider}`
//! fronts its agent. Any MCP client — the Python `mcp` SDK included —
//! lists the provider's tools and calls them with its own bearer token;
//! the decisions are the gateway's ([`crate::gateway::mcp`]), this file only
//! translates:
//!
//! - a bearer token the hub does not know is HTTP 401 before any MCP is
//!   read, the same for a provider that exists and one that does not; a
//!   member asking for a provider without a data plane gets 404;
//! - the provider's tool result passes through verbatim, its refusals
//!   (`isError`, the provider's own words) included;
//! - a refusal by the hub or a transport failure is a JSON-RPC error whose
//!   `data` carries the reason code (`{"reason": "PEER_UNREACHABLE", ...}`),
//!   never a tool result: a client tells "the data owner said no" from
//!   "nobody answered" by the shape alone.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ResultType, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;

use super::Surface;
use crate::gateway::mcp::{McpAnswer, McpIncoming};
use crate::gateway::{Front, Gateway};
use crate::net::listen::Peer;
use exchange::envelope::{Envelope, CALLER_HEADER, TRACEPARENT_HEADER};
use exchange::reason::NotConnected;

/// Where the hub serves MCP: `/mcp/{provider}`.
pub const ROUTE: &str = "/mcp/{provider}";
/// The header that names the MCP revision of a request.
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// Largest MCP request the hub reads (a query is a few hundred bytes).
pub const MAX_MCP_BODY: usize = 64 * 1024;

/// The MCP service behind [`ROUTE`].
pub fn service(gateway: Arc<Gateway>) -> StreamableHttpService<HubMcp, NeverSessionManager> {
    StreamableHttpService::new(
        move || {
            Ok(HubMcp {
                gateway: gateway.clone(),
            })
        },
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .disable_allowed_hosts()
            .with_max_request_body_bytes(MAX_MCP_BODY),
    )
}

/// Refuses a request whose bearer token names no system (HTTP 401, MCP
/// unread), then one for a provider that runs no data plane the hub
/// fronts (HTTP 404: an MCP session with nothing behind it helps no
/// client), and hands the caller's id on to the handler. Both refusals
/// are JSON-RPC errors whose `data` carries the reason code, like every
/// other refusal of the MCP front.
pub async fn require_caller(
    State(surface): State<Surface>,
    mut request: Request,
    next: Next,
) -> Response {
    let envelope = Envelope::from_headers(request.headers());
    let loaded = surface.registry.snapshot();
    let system = match crate::auth::presented(request.headers(), &loaded, &surface.identity) {
        Ok(system) => system,
        Err(credential) => {
            let nc = NotConnected::new(
                exchange::reason::ReasonCode::AuthRejected,
                "a bearer token of a member system is required",
            );
            let from = Peer::of(&request).addr.map(|a| a.ip());
            surface
                .gateway
                .count_unidentified(Front::Mcp, credential, from, nc.reason);
            return refused(StatusCode::UNAUTHORIZED, &nc, &envelope);
        }
    };
    let provider = request
        .uri()
        .path()
        .strip_prefix("/mcp/")
        .unwrap_or_default();
    if loaded
        .topology
        .system(provider)
        .and_then(|s| s.data_plane.as_ref())
        .is_none()
    {
        let nc = NotConnected::new(
            exchange::reason::ReasonCode::UnknownPeer,
            format!(
                "no data plane `{}` behind this hub",
                exchange::text::clip(provider, 64)
            ),
        );
        return refused(StatusCode::NOT_FOUND, &nc, &envelope);
    }
    if let Some(refusal) = unsupported_version(request.headers()) {
        return refusal;
    }
    let caller = Caller(system.id.clone());
    drop(loaded);
    let peer = Peer::of(&request);
    request.extensions_mut().insert(caller);
    request.extensions_mut().insert(peer);
    next.run(request).await
}

/// An `MCP-Protocol-Version` header naming a revision the hub does not
/// speak: 400 with MCP's own error, naming the ones it does. (rmcp lets a
/// request through when its `_meta` names a known revision, whatever the
/// header says; a header is what intermediaries route on, so the hub
/// holds it to the same list.)
fn unsupported_version(headers: &axum::http::HeaderMap) -> Option<Response> {
    let known = |v: &axum::http::HeaderValue| {
        v.to_str().is_ok_and(|asked| {
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|k| k.as_str() == asked)
        })
    };
    // Every value: a request that names two revisions names one too many.
    let values: Vec<_> = headers.get_all(PROTOCOL_VERSION_HEADER).iter().collect();
    let unknown = values.iter().find(|v| !known(v)).copied().or_else(|| {
        (values.len() > 1 && values.windows(2).any(|w| w[0] != w[1])).then(|| values[1])
    })?;
    let asked = unknown.to_str().unwrap_or("(not text)");
    let error = ErrorData::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "unsupported MCP-Protocol-Version `{}`",
            exchange::text::clip(asked, 32)
        ),
        Some(json!({
            "requested": exchange::text::clip(asked, 32),
            "supported": ProtocolVersion::KNOWN_VERSIONS,
        })),
    );
    let body = json!({"jsonrpc": "2.0", "id": null, "error": error});
    Some((StatusCode::BAD_REQUEST, Json(body)).into_response())
}

/// A refusal before any MCP was read: a JSON-RPC error (id unknown, so
/// null) with the reason in `data`, under an HTTP status that says it too.
fn refused(status: StatusCode, nc: &NotConnected, envelope: &Envelope) -> Response {
    let error = not_connected(nc, Some(envelope));
    let body = json!({"jsonrpc": "2.0", "id": null, "error": error});
    let mut response = (status, Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            axum::http::header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Bearer"),
        );
    }
    response
}

/// The system the bearer token named.
#[derive(Debug, Clone)]
struct Caller(String);

/// One request's MCP server: the gateway, reached per request.
#[derive(Clone)]
pub struct HubMcp {
    gateway: Arc<Gateway>,
}

impl HubMcp {
    /// The call as the gateway takes it: caller, peer, headers, provider
    /// (the path's last segment).
    fn incoming(context: &RequestContext<RoleServer>) -> Result<McpIncoming, ErrorData> {
        let parts = context
            .extensions
            .get::<axum::http::request::Parts>()
            .ok_or_else(|| ErrorData::internal_error("no HTTP request head", None))?;
        let provider = parts
            .uri
            .path()
            .strip_prefix("/mcp/")
            .filter(|p| !p.is_empty() && !p.contains('/'))
            .ok_or_else(|| ErrorData::invalid_request("the path is /mcp/{provider}", None))?
            .to_string();
        let claimed = parts
            .headers
            .get(CALLER_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty());
        let by_token = parts.extensions.get::<Caller>().map(|c| c.0.clone());
        let mut headers = parts.headers.clone();
        // MCP carries the trace in the request's `_meta` (SEP-414); the
        // envelope reads it from there when no header brought one.
        if !headers.contains_key(TRACEPARENT_HEADER) {
            if let Some(v) = context
                .meta
                .get_traceparent()
                .and_then(|t| axum::http::HeaderValue::from_str(t).ok())
            {
                headers.insert(TRACEPARENT_HEADER, v);
            }
        }
        Ok(McpIncoming {
            // A claim the token does not back is refused by the auth chain.
            caller: claimed.map(str::to_string).or(by_token).unwrap_or_default(),
            peer: parts.extensions.get::<Peer>().cloned().unwrap_or_default(),
            headers,
            provider,
        })
    }
}

/// A refusal or a transport failure as a JSON-RPC error with its reason.
fn not_connected(nc: &NotConnected, envelope: Option<&Envelope>) -> ErrorData {
    let mut data = json!({
        "reason": nc.reason.as_str(),
        "domain": "wall-street.exchange",
        "traceId": envelope.map(|e| e.trace.trace_id.clone()),
        "requestId": envelope.map(|e| e.request_id.clone()),
    });
    if let Some(seconds) = nc.retry_after {
        data["retryAfter"] = json!(seconds);
    }
    ErrorData::new(
        ErrorCode(
            i32::try_from(
                super::errors::SurfaceError::call(nc.reason, String::new(), StatusCode::OK).code,
            )
            .unwrap_or(-32603),
        ),
        format!("{}: {}", nc.reason.as_str(), nc.detail),
        Some(data),
    )
}

impl ServerHandler for HubMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "wall-street-hub",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                "Wall Street fronts each member's MCP data plane at /mcp/{provider}. Every call \
                 is decided by the data owner against your negotiated contract.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let incoming = Self::incoming(&context)?;
        match self.gateway.mcp_list_tools(&incoming).await {
            Ok(tools) => Ok(ListToolsResult::with_all_items(tools)),
            Err(nc) => Err(not_connected(
                &nc,
                Some(&Envelope::from_headers(&incoming.headers)),
            )),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let incoming = Self::incoming(&context)?;
        let (answer, envelope) = self
            .gateway
            .mcp_call_tool(&incoming, &request.name, request.arguments)
            .await;
        match answer {
            // Complete, as the 2026-07-28 revision says on every result
            // (rmcp drops it again for a client on an older revision).
            McpAnswer::Tool(mut result) => {
                result.result_type = Some(ResultType::COMPLETE);
                Ok(result.into())
            }
            McpAnswer::NotConnected(nc) => Err(not_connected(&nc, Some(&envelope))),
        }
    }
}
