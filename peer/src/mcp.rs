//! The MCP data plane of a provider (an MCP server, not a function;
//! DESIGN.md §3, "reference peers"; NOTES.md, "Data contracts and the data
//! plane").
//!
//! `peer mcp --config <file>` runs it: a separate process of the same
//! binary, on its own port (`mcp.listen`), over the same SQLite file as
//! `peer serve` (where the contracts live), so it can be stopped on its
//! own and the hub's view of it degrades on its own. It speaks MCP
//! Streamable HTTP with the official Rust SDK (`rmcp`), stateless, JSON
//! responses:
//!
//! * `POST /mcp`: MCP JSON-RPC (`initialize`, `tools/list`, `tools/call`),
//!   behind `Authorization: Bearer <this peer's token>` checked in constant
//!   time before the body is read. Only the hub holds the token; it names
//!   the consumer it authenticated in `X-Caller-System` and carries the
//!   envelope (`X-Request-Id`, `traceparent`, `A2A-Version`).
//! * `GET /health` (public): the same identity as the A2A server's
//!   (`{"service": "wall-street-peer", "system", "name", "version"}`) plus
//!   `"plane": "mcp"`, so a prober can tell the two processes apart.
//!
//! One tool, `query_records`: the `table_query` input of the capability
//! `mcp.capability` (one aggregate, filters, a group by). On **every** call
//! the consumer's current contract is re-read from the store and decides
//! ([`crate::contracts::read::read`]: `UNKNOWN_COLUMN`, `NO_CONTRACT`,
//! `CONTRACT_EXPIRED`, `SCOPE_DENIED`) before a row is read; a refusal is a
//! tool result with `isError: true` whose text is the provider's own
//! sentence, verbatim. Every call, granted or refused, is one Responder
//! record in the provider's own trail, naming the contract and the rows
//! read (`rows_read 0` for a refusal).

use crate::config::{Handler, PeerConfig, SkillConfig};
use crate::contracts::read::{self, Denied};
use crate::datasets::TableSchema;
use crate::server::shutdown_signal;
use crate::skills::query::{MAX_FILTERS, MAX_IN_VALUES};
use crate::skills::SkillError;
use crate::{PeerState, Token, VERSION};
use anyhow::Context;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::envelope::{Envelope, CALLER_HEADER};
use exchange::health::{HEALTH_PATH, PEER_SERVICE};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpListener;

/// The one tool of the data plane, and where it is served (what the hub
/// speaks too).
pub use exchange::wire::{MCP_PATH, MCP_QUERY_TOOL as TOOL_NAME};
/// What `/health` says in `plane`, next to the peer's identity.
pub const PLANE: &str = "mcp";
/// Largest request body accepted (a query is a few hundred bytes).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The MCP server of one peer: its state and the `table_query` skill whose
/// contracts decide every call. Cheap to clone (one per stateless request).
#[derive(Clone)]
pub struct DataPlane {
    state: Arc<PeerState>,
    skill: Arc<SkillConfig>,
    tool: Arc<Tool>,
}

impl DataPlane {
    /// The data plane of `state`, serving the skill its `mcp` section
    /// names; an error if there is none or it is not a `table_query`
    /// (validation already refuses both in a loaded file).
    pub fn new(state: Arc<PeerState>) -> anyhow::Result<Self> {
        let Some(mcp) = &state.config.mcp else {
            anyhow::bail!(
                "{} has no `mcp` section: add `mcp: {{ listen: 127.0.0.1:3111, capability: <a table_query capability> }}`",
                state.config.system
            );
        };
        let skill = state
            .config
            .skill(&mcp.capability)
            .filter(|s| s.handler == Handler::TableQuery)
            .with_context(|| {
                format!(
                    "mcp.capability `{}` is not a table_query capability of {}",
                    mcp.capability, state.config.system
                )
            })?
            .clone();
        let tool = tool(&state.config, &skill, &state.schema);
        Ok(Self {
            state,
            skill: Arc::new(skill),
            tool: Arc::new(tool),
        })
    }

    /// The tool as `tools/list` shows it.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// One `query_records` call: the contract decides, the trail records.
    async fn query(
        &self,
        arguments: Option<JsonObject>,
        headers: &HeaderMap,
    ) -> Result<CallToolResult, ErrorData> {
        let started = Instant::now();
        let env = Envelope::from_headers(headers);
        let caller = caller_of(headers);
        let input = Value::Object(arguments.unwrap_or_default());
        let decided = read::read(&self.state, &self.skill, &caller, &input).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (outcome, detail, answer) = match decided {
            Ok(granted) => {
                let detail = granted.trail_detail();
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(granted.output.text)]);
                result.structured_content = Some(granted.output.result);
                (Outcome::Executed, detail, Ok(result))
            }
            Err(denied) => {
                let detail = denied.trail_detail();
                let answer = match denied {
                    // The provider's own words, verbatim: the caller (and
                    // its model) reads why, and no row was read.
                    Denied::Refused { refusal, .. } => {
                        Ok(CallToolResult::error(vec![ContentBlock::text(
                            refusal.message,
                        )]))
                    }
                    // Granted columns, a wrong query: the caller's mistake,
                    // named.
                    Denied::Invalid(SkillError::InvalidParams { message, .. }) => {
                        Ok(CallToolResult::error(vec![ContentBlock::text(message)]))
                    }
                    // The peer's own failure: logged here, opaque there.
                    Denied::Invalid(SkillError::Internal(e)) => {
                        tracing::error!(error = %e, "query_records failed");
                        Err(internal())
                    }
                    Denied::Store(e) => {
                        tracing::error!(error = %e, "contract store unreadable");
                        Err(internal())
                    }
                };
                (Outcome::Refused, detail, answer)
            }
        };
        self.record(
            &env,
            &caller,
            &self.skill.capability,
            outcome,
            detail,
            duration_ms,
        )
        .await;
        answer
    }

    /// One Responder record in the provider's trail. The answer goes out
    /// even if the trail cannot be written: a caller must not hang on it.
    async fn record(
        &self,
        env: &Envelope,
        caller: &str,
        capability: &str,
        outcome: Outcome,
        detail: String,
        duration_ms: u64,
    ) {
        let config = &self.state.config;
        let record = AuditRecord {
            system: config.system.clone(),
            role: Role::Responder,
            at: exchange::audit::now(),
            caller: caller.to_string(),
            provider: config.system.clone(),
            capability: capability.to_string(),
            request_id: env.request_id.clone(),
            trace_id: env.trace.trace_id.clone(),
            outcome,
            reason: None,
            duration_ms,
            detail: format!("{detail}; plane {PLANE} tool {TOOL_NAME}"),
        };
        tracing::info!(
            capability,
            caller,
            request_id = %env.request_id,
            trace_id = %env.trace.trace_id,
            outcome = ?outcome,
            duration_ms,
            "mcp call answered"
        );
        if let Err(e) = self.state.trail.append(record).await {
            tracing::error!(error = %e, "could not append to the audit trail");
        }
    }
}

/// The JSON-RPC error of a call the peer failed to answer; the detail
/// stays in the peer's log.
fn internal() -> ErrorData {
    ErrorData::internal_error(
        "the data plane failed to answer; see the provider's log",
        None,
    )
}

impl ServerHandler for DataPlane {
    /// `initialize`: serverInfo names the build (`wall-street-peer`, this
    /// version), so a prober can tell it answered; tools only.
    fn get_info(&self) -> ServerConfig {
        let config = &self.state.config;
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new(PEER_SERVICE, VERSION)
                    .with_title(format!("{} data plane", config.name))
                    .with_description(format!(
                        "{}'s MCP data plane for {}",
                        config.name, self.skill.capability
                    )),
            )
            .with_instructions(format!(
                "{} serves one tool, {TOOL_NAME}: one aggregate over its table {}. Every call is \
                 decided against the calling system's negotiated contract for {}; negotiate one \
                 first. A refusal comes back as a tool error in the provider's own words.",
                config.name, self.state.schema.table, self.skill.capability
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![(*self.tool).clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == TOOL_NAME).then(|| (*self.tool).clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The HTTP head of this request (rmcp puts it in the extensions).
        let empty = HeaderMap::new();
        let headers = context
            .extensions
            .get::<axum::http::request::Parts>()
            .map_or(&empty, |p| &p.headers);
        if request.name != TOOL_NAME {
            let env = Envelope::from_headers(headers);
            // The trail names only what this peer has: the name sent is
            // caller input and stays out.
            self.record(
                &env,
                &caller_of(headers),
                "unknown",
                Outcome::Refused,
                "invalid params: unknown_tool rows_read 0".into(),
                0,
            )
            .await;
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; this data plane serves {TOOL_NAME}",
                    truncate(&request.name, 64)
                ),
                None,
            ));
        }
        self.query(request.arguments, headers).await.map(Into::into)
    }
}

/// At most `n` characters of `s`.
fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The `X-Caller-System` claim (set by the hub that authenticated the
/// consumer), if it looks like a system id; "unknown" otherwise — the same
/// rule as the A2A door's. "unknown" holds no contract, so it reads nothing.
fn caller_of(headers: &HeaderMap) -> String {
    exchange::envelope::caller_label(headers.get(CALLER_HEADER).and_then(|v| v.to_str().ok()))
}

/// The `query_records` tool of `skill`: what it does, that the caller's
/// contract decides, and its input schema. Column *names* are listed (the
/// card publishes them too), never a value; they are not an `enum`, so a
/// call naming another column reaches the provider and is refused there,
/// in its words.
pub fn tool(config: &PeerConfig, skill: &SkillConfig, schema: &TableSchema) -> Tool {
    let columns = schema
        .columns
        .iter()
        .map(|c| format!("{} ({})", c.name, c.ty.as_sql()))
        .collect::<Vec<_>>()
        .join(", ");
    let description = format!(
        "Query {}'s {} records ({}): one aggregate (count, sum, avg, min, max) over table {}, \
         optionally filtered (eq, ne, lt, lte, gt, gte, in) and grouped by one column; numbers, \
         never rows. Every call is decided against the calling system's negotiated data \
         contract for {}, re-read on each call: a column the contract does not grant, an \
         expired contract or no contract is refused by the provider before any row is read, in \
         its own words. Columns of the table: {columns}.",
        config.name, schema.table, config.system, schema.table, skill.capability
    );
    Tool::new(TOOL_NAME, description, Arc::new(input_schema(schema)))
        .with_title(format!("{} records query", config.name))
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// The JSON Schema of the `table_query` input (see
/// [`crate::skills::query`]): `{aggregate: {op, column}, filters: [{column,
/// op, value}], group_by}`.
pub fn input_schema(schema: &TableSchema) -> JsonObject {
    let names = schema
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let column = |what: &str| {
        json!({
            "type": "string",
            "description": format!("{what}: a column of table {} ({names})", schema.table),
        })
    };
    let scalar = json!({"type": ["string", "number"]});
    let value = json!({
        "description": format!(
            "The value to compare with: a string or a number, of the column's type; for `in`, \
             an array of at most {MAX_IN_VALUES} of them"
        ),
        "oneOf": [scalar, {"type": "array", "items": scalar, "maxItems": MAX_IN_VALUES}],
    });
    let out = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "aggregate": {
                "type": "object",
                "description": "The aggregate to compute; a row count when absent.",
                "additionalProperties": false,
                "properties": {
                    "op": {"type": "string", "enum": ["count", "sum", "avg", "min", "max"]},
                    "column": column("The column aggregated (numeric, except for count; \"*\" or absent counts rows)"),
                },
                "required": ["op"],
            },
            "filters": {
                "type": "array",
                "description": "Conditions that must all hold (AND).",
                "maxItems": MAX_FILTERS,
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "column": column("The column compared"),
                        "op": {"type": "string", "enum": ["eq", "ne", "lt", "lte", "gt", "gte", "in"]},
                        "value": value,
                    },
                    "required": ["column", "op", "value"],
                },
            },
            "group_by": {
                "anyOf": [column("The column whose values form the groups"), {"type": "null"}],
            },
        },
    });
    match out {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// What `GET /health` answers: the A2A server's identity, and the plane.
pub fn health_body(config: &PeerConfig) -> Value {
    json!({
        "service": PEER_SERVICE,
        "system": config.system,
        "name": config.name,
        "version": VERSION,
        "plane": PLANE,
    })
}

/// The data plane's router: `/health`, and `/mcp` behind the bearer check,
/// every body bounded.
pub fn router(plane: DataPlane) -> Router {
    let state = plane.state.clone();
    let health = Arc::new(health_body(&state.config));
    let mcp = StreamableHttpService::new(
        move || Ok(plane.clone()),
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            // Every request is bearer-authenticated; the Host check (a
            // DNS-rebinding guard for unauthenticated local servers)
            // would only refuse a proxy or a non-loopback listen address.
            .disable_allowed_hosts(),
    );
    Router::new()
        .route_service(MCP_PATH, mcp)
        .layer(middleware::from_fn_with_state(state, require_bearer))
        .route(
            HEALTH_PATH,
            get(move || {
                let body = health.clone();
                async move { Json((*body).clone()) }
            }),
        )
        .layer(tower_http::limit::RequestBodyLimitLayer::new(
            MAX_BODY_BYTES,
        ))
}

/// Lets a request through only with `Authorization: Bearer <this peer's
/// token>`; otherwise 401 with a JSON body naming the problem, before the
/// body is read or the store touched.
async fn require_bearer(State(state): State<Arc<PeerState>>, req: Request, next: Next) -> Response {
    let presented = exchange::envelope::bearer_token(req.headers());
    if presented.is_some_and(|t| state.token.matches(t.as_bytes())) {
        return next.run(req).await;
    }
    let problem = if presented.is_some() {
        "wrong bearer token"
    } else {
        "no bearer token"
    };
    tracing::warn!(caller = %caller_of(req.headers()), problem, "mcp request refused");
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        Json(json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {
                "code": -32000,
                "message": format!("unauthorized: {problem}; the data plane answers only the hub, with this peer's token"),
            },
        })),
    )
        .into_response()
}

/// A data plane serving in the background (tests, embedders): the same
/// handle as the agent's server; its MCP endpoint is
/// `base_url() + MCP_PATH`.
pub type RunningPlane = crate::server::RunningPeer;

/// Serves the data plane of `state` on an already bound `listener` until
/// [`RunningPlane::stop`].
pub fn start(state: Arc<PeerState>, listener: TcpListener) -> anyhow::Result<RunningPlane> {
    let addr = listener.local_addr()?;
    Ok(crate::server::spawn(
        listener,
        addr,
        router(DataPlane::new(state)?),
    ))
}

/// `peer mcp`: opens the store (the same file as `peer serve`), binds
/// `listen` (else `mcp.listen`), serves until SIGINT/SIGTERM.
pub async fn serve(
    config: PeerConfig,
    token: Token,
    listen: Option<String>,
    database: &Path,
) -> anyhow::Result<()> {
    let Some(mcp) = config.mcp.clone() else {
        anyhow::bail!(
            "{} has no `mcp` section: add `mcp: {{ listen: 127.0.0.1:3111, capability: <a table_query capability> }}`",
            config.system
        );
    };
    let listen = listen.unwrap_or(mcp.listen);
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("listen address `{listen}` is not IP:port"))?;
    let state = Arc::new(PeerState::open(config, token, database).await?);
    let plane = DataPlane::new(state.clone())?;
    let listener = TcpListener::bind(addr).await.with_context(|| {
        format!(
            "binding the mcp data plane of {} to {addr}",
            state.config.system
        )
    })?;
    // The bound address (port 0 lets the system pick one).
    let addr = listener
        .local_addr()
        .context("reading the data plane's bound address")?;
    tracing::info!(
        system = %state.config.system,
        %addr,
        endpoint = %format!("http://{addr}{MCP_PATH}"),
        capability = %mcp.capability,
        database = %database.display(),
        "mcp data plane listening on http://{addr}"
    );
    axum::serve(listener, router(plane))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("serving the mcp data plane")?;
    tracing::info!("mcp data plane stopped");
    Ok(())
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
