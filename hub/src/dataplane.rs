//! The hub as an MCP client of a provider's data plane: the sessions the
//! gateway forwards consumers' `tools/call` over, and the prober's
//! identity check of a plane. Both present the hub's own token for the
//! provider, never a caller's.
//!
//! **One session per plane, shared by every call** ([`Sessions`]). On
//! MCP's stateless revision (2026-07-28) a session is no server state:
//! `server/discover` once, then every request is a self-contained POST. So
//! the gateway discovers a plane once and sends each `tools/call` as one
//! POST over the pooled HTTP client. What differs between calls — the
//! consumer (`X-Caller-System`), the envelope, the trace — travels with
//! the request itself: [`RequestHeaders`] in the request's extensions,
//! which the session's HTTP client ([`HeaderCarrier`]) turns into that
//! POST's headers. A session is replaced when the plane's address or the
//! hub's token for it changes, and dropped when its transport fails (the
//! next call discovers again). The prober does not share it: its check
//! is that a fresh session starts.
//!
//! **Through the egress path** ([`HeaderCarrier::new`]): the HTTP client
//! resolves a plane's host through the egress gate (purpose `Member`),
//! checks every connection it makes, follows no redirect, and a URL whose
//! host is an address is checked before each request. A refused plane is
//! `PEER_UNREACHABLE` with a detail naming the egress policy.
//!
//! Every failure is a reason code: a plane that does not start a session
//! is `PEER_UNREACHABLE`, one that does not answer in time `TIMEOUT`, an
//! MCP error `PEER_ERROR`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientJsonRpcMessage, ClientRequest,
    GetExtensions, ProtocolVersion, ServerResult,
};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, ServiceError};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::StreamableHttpClientTransport;

use crate::net::egress::{clients, refusal_in, Egress, Gate, Purpose, Refusal};
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

/// The headers of one request over a shared session, carried in the
/// request's extensions to the session's HTTP client.
#[derive(Debug, Clone, Default)]
pub struct RequestHeaders(pub HashMap<HeaderName, HeaderValue>);

/// The HTTP client under every data-plane session: a client through the
/// egress gate, adding to each POST the [`RequestHeaders`] its request
/// carries. Its pool keeps connections to each plane open between calls,
/// so a `tools/call` does not pay a new connection each time.
#[derive(Clone)]
pub struct HeaderCarrier {
    http: reqwest13::Client,
    gate: Gate,
}

impl std::fmt::Debug for HeaderCarrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeaderCarrier").finish_non_exhaustive()
    }
}

impl HeaderCarrier {
    /// A client through `egress` for members' planes: connections kept
    /// (`pooled`) or one per request (the prober: a check is a fresh
    /// connection).
    pub fn new(egress: &Egress, pooled: bool) -> Result<Self, reqwest13::Error> {
        let gate = egress.gate(Purpose::Member);
        let mut builder = reqwest13::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(BACKSTOP);
        if !pooled {
            builder = builder.pool_max_idle_per_host(0);
        }
        let http = clients::reqwest13(&gate, builder).build()?;
        Ok(Self { http, gate })
    }

    /// A request to `uri` may go: its host, when it is an address, is one
    /// the egress policy allows (a name is checked when it is resolved).
    fn admit(&self, uri: &str) -> Result<(), StreamableHttpError<reqwest13::Error>> {
        let Ok(url) = url::Url::parse(uri) else {
            return Ok(());
        };
        self.gate.admit(&url).map_err(refusal_error)
    }

    fn with_own(
        message: &ClientJsonRpcMessage,
        mut headers: HashMap<HeaderName, HeaderValue>,
    ) -> HashMap<HeaderName, HeaderValue> {
        if let ClientJsonRpcMessage::Request(r) = message {
            if let Some(own) = r.request.extensions().get::<RequestHeaders>() {
                headers.extend(own.0.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        headers
    }
}

/// A refusal as the transport's error: an I/O error wrapping it, which
/// rmcp keeps in the chain of sources (its `Client` error is a dead end).
fn refusal_error(refusal: Refusal) -> StreamableHttpError<reqwest13::Error> {
    StreamableHttpError::Io(std::io::Error::other(refusal))
}

/// `result`, its client error turned into [`refusal_error`] when the
/// egress policy is why the request failed.
fn policed<T>(
    result: Result<T, StreamableHttpError<reqwest13::Error>>,
) -> Result<T, StreamableHttpError<reqwest13::Error>> {
    result.map_err(|e| match e {
        StreamableHttpError::Client(client) => match refusal_in(&client) {
            Some(refusal) => refusal_error(refusal.clone()),
            None => StreamableHttpError::Client(client),
        },
        other => other,
    })
}

impl StreamableHttpClient for HeaderCarrier {
    type Error = <reqwest13::Client as StreamableHttpClient>::Error;

    // Every POST goes through `post_message_with_response_limits`, the one
    // place that adds the request's own headers (and keeps reqwest's size
    // limits).
    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.admit(&uri)?;
        let headers = Self::with_own(&message, custom_headers);
        policed(
            self.http
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    headers,
                    limits,
                )
                .await,
        )
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.admit(&uri)?;
        policed(
            self.http
                .delete_session(uri, session_id, auth_header, custom_headers)
                .await,
        )
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.admit(&uri)?;
        policed(
            self.http
                .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
                .await,
        )
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        BoxStream<'static, Result<sse_stream::Sse, SseError>>,
        StreamableHttpError<Self::Error>,
    > {
        self.admit(&uri)?;
        policed(
            self.http
                .get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await,
        )
    }
}

/// Where a shared session goes, and as whom: a change of either makes a
/// new session.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    base_url: String,
    token: String,
}

/// The gateway's sessions with data planes, one per providing system,
/// over one pooled client.
pub struct Sessions {
    by_system: Mutex<HashMap<String, (Target, Arc<Session>)>>,
    carrier: HeaderCarrier,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions").finish_non_exhaustive()
    }
}

impl Sessions {
    /// No session yet; each will go over one pooled client through
    /// `egress`.
    pub fn new(egress: &Egress) -> Result<Self, reqwest13::Error> {
        Ok(Self {
            by_system: Mutex::default(),
            carrier: HeaderCarrier::new(egress, true)?,
        })
    }

    /// The client the sessions go over (a listing's own session too).
    pub fn carrier(&self) -> &HeaderCarrier {
        &self.carrier
    }

    /// The session with system `id`'s plane at `base_url` as the hub
    /// (`token`): the one kept, or a new one started within `deadline_ms`.
    pub async fn get(
        &self,
        id: &str,
        base_url: &str,
        token: &str,
        deadline_ms: u64,
    ) -> Result<Arc<Session>, NotConnected> {
        let target = Target {
            base_url: base_url.to_string(),
            token: token.to_string(),
        };
        if let Some((t, session)) = self.lock().get(id) {
            if *t == target && !session.is_closed() {
                return Ok(session.clone());
            }
        }
        // Started outside the lock: a plane that is slow to answer must not
        // hold up calls to the others. Two calls that both find no session
        // may both start one; the last kept wins, the other ends with its call.
        let session = Arc::new(
            connect(
                &self.carrier,
                id,
                base_url,
                token,
                HashMap::new(),
                deadline_ms,
            )
            .await?,
        );
        self.lock()
            .insert(id.to_string(), (target, session.clone()));
        Ok(session)
    }

    /// Drops `session` for system `id` (its transport failed): the next
    /// call starts a new one.
    pub fn forget(&self, id: &str, session: &Arc<Session>) {
        let mut map = self.lock();
        if map.get(id).is_some_and(|(_, s)| Arc::ptr_eq(s, session)) {
            map.remove(id);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Target, Arc<Session>)>> {
        // The map holds no invariant a panic could break halfway.
        self.by_system
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One `tools/call` over `session` with this call's own `headers`, within
/// `ms`; a transport failure also drops the session from `sessions`.
pub async fn call_tool(
    sessions: &Sessions,
    id: &str,
    session: &Arc<Session>,
    params: CallToolRequestParams,
    headers: RequestHeaders,
    ms: u64,
) -> Result<CallToolResult, NotConnected> {
    let mut request = CallToolRequest::new(params);
    request.extensions_mut().insert(headers);
    let request = ClientRequest::CallToolRequest(request);
    let answer = within(ms, id, async {
        match session.send_request(request).await? {
            ServerResult::CallToolResult(result) => Ok(result),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    })
    .await;
    if let Err(nc) = &answer {
        if nc.reason == ReasonCode::PeerUnreachable {
            sessions.forget(id, session);
        }
    }
    answer
}

/// An initialised MCP client session with the data plane at `base_url`
/// of system `id`, presenting `token` and `headers`, within `deadline_ms`,
/// over `carrier` (the gateway's calls and the prober's identity check).
pub async fn connect(
    carrier: &HeaderCarrier,
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
    let transport = StreamableHttpClientTransport::with_client(carrier.clone(), config);
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
        Ok(Err(e)) => {
            // The transport's error is a field, not a source, of this one.
            let transport = match &e {
                ClientInitializeError::TransportError { error, .. } => Some(error),
                _ => None,
            };
            let refusal = transport
                .and_then(|t| refused(id, t))
                .or_else(|| refused(id, &e));
            Err(refusal.unwrap_or_else(|| {
                NotConnected::new(
                    ReasonCode::PeerUnreachable,
                    format!(
                        "{id}'s MCP data plane did not initialise: {}",
                        exchange::http::root_cause(&e)
                    ),
                )
            }))
        }
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
pub async fn probe_identity(
    carrier: &HeaderCarrier,
    system: &System,
    tokens: &Tokens,
    timeout_ms: u64,
) -> Result<(), NotConnected> {
    let plane = system.data_plane.as_ref().ok_or_else(|| {
        NotConnected::new(
            ReasonCode::NotPermitted,
            format!("{} runs no MCP data plane", system.id),
        )
    })?;
    let token = tokens.of(&system.id).ok_or_else(|| {
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
        carrier,
        &system.id,
        &plane.base_url,
        token,
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
        Ok(Err(e)) => Err(refused(id, &e).unwrap_or_else(|| {
            NotConnected::new(
                ReasonCode::PeerUnreachable,
                format!("{id}'s data plane: {}", clip(&e.to_string(), 200)),
            )
        })),
    }
}

/// `PEER_UNREACHABLE` naming the egress policy, when it is why `e`
/// happened (the detail leaves the address out).
fn refused(id: &str, e: &(dyn std::error::Error + 'static)) -> Option<NotConnected> {
    let refusal = refusal_in(e)?;
    Some(NotConnected::new(
        ReasonCode::PeerUnreachable,
        refusal.detail(&format!("{id}'s MCP data plane")),
    ))
}
