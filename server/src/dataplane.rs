//! The hub as an MCP client of a provider's data plane (seed `000`, step
//! 4): the session the gateway forwards a consumer's `tools/call` over, and
//! the prober's identity check of a plane. Both present the hub's own
//! token for the provider, never a caller's.
//!
//! Every failure is a reason code: a plane that does not start a session
//! is `PEER_UNREACHABLE`, one that does not answer in time `TIMEOUT`, an
//! MCP error `PEER_ERROR`.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;

use crate::registry::model::System;
use crate::registry::Tokens;
use exchange::envelope::CALLER_HEADER;
use exchange::reason::{NotConnected, ReasonCode};
use exchange::text::clip;
use exchange::wire::{MCP_PATH, MCP_QUERY_TOOL};

/// Connecting to a data plane never takes longer than this (the call's
/// deadline bounds the rest).
const CONNECT_TIMEOUT: Duration = Duration::from_millis(1000);

/// Longest any one HTTP exchange with a data plane may take, whatever
/// the call: a backstop under the per-call deadlines, which bound every
/// session and request with a timer of their own.
const BACKSTOP: Duration = Duration::from_secs(60);

/// A client session with a data plane.
pub type Session = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// The one HTTP client every data-plane session goes over: its pool keeps
/// connections to each plane open between calls, so a `tools/call` does
/// not pay a new client and a new connection each time.
fn pooled() -> Result<reqwest13::Client, NotConnected> {
    static CLIENT: OnceLock<Result<reqwest13::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest13::Client::builder()
                .no_proxy()
                .connect_timeout(CONNECT_TIMEOUT)
                .timeout(BACKSTOP)
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| NotConnected::new(ReasonCode::PeerError, format!("MCP client: {e}")))
}

/// An initialised MCP client session with the data plane at `base_url`
/// of system `id`, presenting `token` and `headers`, within `deadline_ms`
/// (the gateway's calls and the prober's identity check).
pub async fn connect(
    id: &str,
    base_url: &str,
    token: &str,
    headers: HashMap<http::HeaderName, http::HeaderValue>,
    deadline_ms: u64,
) -> Result<Session, NotConnected> {
    let url = format!("{}{MCP_PATH}", base_url.trim_end_matches('/'));
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .auth_header(token.to_string())
        .custom_headers(headers);
    let transport = StreamableHttpClientTransport::with_client(pooled()?, config);
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
pub async fn probe_identity(system: &System, timeout_ms: u64) -> Result<(), NotConnected> {
    let plane = system.data_plane.as_ref().ok_or_else(|| {
        NotConnected::new(
            ReasonCode::NotPermitted,
            format!("{} runs no MCP data plane", system.id),
        )
    })?;
    let token = Tokens::read(system).ok_or_else(|| {
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
pub async fn within<T>(
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
