//! The hub as an MCP server (seed `000`, step 4; DESIGN.md §4 "Peer to
//! peer"): `POST /mcp/{provider}` is MCP Streamable HTTP (stateless, JSON
//! answers) in front of that provider's data plane, the way `/a2a/{provider}`
//! fronts its agent. Any MCP client — the Python `mcp` SDK included —
//! lists the provider's tools and calls them with its own bearer token;
//! the decisions are the gateway's ([`crate::gateway::mcp`]), this file only
//! translates:
//!
//! - a bearer token the hub does not know is HTTP 401 before any MCP is
//!   read, the same for a provider that exists and one that does not;
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
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;

use crate::gateway::mcp::{McpAnswer, McpIncoming};
use crate::gateway::Gateway;
use exchange::envelope::{Envelope, CALLER_HEADER};
use exchange::reason::NotConnected;

/// Where the hub serves MCP: `/mcp/{provider}`.
pub const ROUTE: &str = "/mcp/{provider}";
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
/// unread), and hands the caller's id on to the handler.
pub async fn require_caller(
    State(gateway): State<Arc<Gateway>>,
    mut request: Request,
    next: Next,
) -> Response {
    let loaded = gateway.registry().snapshot();
    let Some(system) = crate::auth::caller_by_token(request.headers(), &loaded.topology) else {
        return (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer")],
            Json(json!({"error": "AUTH_REJECTED: a bearer token of a member system is required"})),
        )
            .into_response();
    };
    let caller = Caller(system.id.clone());
    drop(loaded);
    let peer = crate::gateway::peer_addr(&request);
    request.extensions_mut().insert(caller);
    request.extensions_mut().insert(PeerAddr(peer));
    next.run(request).await
}

/// The system the bearer token named.
#[derive(Debug, Clone)]
struct Caller(String);

/// The TCP peer of the request.
#[derive(Debug, Clone, Copy)]
struct PeerAddr(Option<std::net::SocketAddr>);

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
        Ok(McpIncoming {
            // A claim the token does not back is refused by the auth chain.
            caller: claimed.map(str::to_string).or(by_token).unwrap_or_default(),
            peer_addr: parts.extensions.get::<PeerAddr>().and_then(|p| p.0),
            headers: parts.headers.clone(),
            provider,
        })
    }
}

/// A refusal or a transport failure as a JSON-RPC error with its reason.
fn not_connected(nc: &NotConnected, envelope: Option<&Envelope>) -> ErrorData {
    ErrorData::new(
        ErrorCode(
            i32::try_from(
                super::errors::SurfaceError::call(nc.reason, String::new(), StatusCode::OK).code,
            )
            .unwrap_or(-32603),
        ),
        format!("{}: {}", nc.reason.as_str(), nc.detail),
        Some(json!({
            "reason": nc.reason.as_str(),
            "domain": "wall-street.exchange",
            "traceId": envelope.map(|e| e.trace.trace_id.clone()),
            "requestId": envelope.map(|e| e.request_id.clone()),
        })),
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
            Err(nc) => Err(not_connected(&nc, None)),
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
            McpAnswer::Tool(result) => Ok(result.into()),
            McpAnswer::NotConnected(nc) => Err(not_connected(&nc, Some(&envelope))),
        }
    }
}
