//! `peer echo`: a trivial A2A provider for the gateway benchmark (NOTES.md,
//! "The hub's hot path"; DESIGN.md §4, "Peer to peer", the provider's leg).
//!
//! A real process speaking the same wire as a reference peer — `GET
//! /health` with the peer identity the hub's prober checks, an agent card
//! (A2A v1.0, JSON-RPC at `/a2a`), and `POST /a2a` behind the bearer check
//! in constant time — that answers every `SendMessage` at once with one
//! data part of a fixed shape: `{"capability", "input", "answered_by"}`,
//! the input echoed back. No store, no skill, no SQL: a benchmark against
//! it measures what the hub (or a proxy) adds, not what the provider does.
//!
//! Not a reference peer: no config file, no audit trail, no tasks. Any
//! other method is JSON-RPC `-32601`, a request that is not a JSON-RPC
//! `SendMessage` with a message is `-32600`/`-32602`, never a panic.

use crate::{Token, VERSION};
use a2a::{Message, Part, Role, SendMessageRequest, SendMessageResponse};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use exchange::health::{CARD_PATH, HEALTH_PATH, PEER_SERVICE};
use exchange::wire::{A2A_JSONRPC_PATH, SEND_MESSAGE_METHOD};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;

/// What the echo provider is.
pub struct Echo {
    /// Its system id (the `/health` identity).
    pub system: String,
    /// The token the hub (or a direct caller) must present.
    pub token: Token,
}

/// The echo provider's router, its card naming `public_base`.
pub fn router(echo: Echo, public_base: &str) -> Router {
    let base = public_base.trim_end_matches('/');
    let health = json!({
        "service": PEER_SERVICE,
        "system": echo.system,
        "name": echo.system,
        "version": VERSION,
    });
    let card = json!({
        "name": echo.system,
        "description": "Answers every SendMessage at once with its input (benchmark backend).",
        "version": VERSION,
        "supportedInterfaces": [{
            "url": format!("{base}{A2A_JSONRPC_PATH}"),
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
        }],
        "capabilities": { "streaming": false, "pushNotifications": false },
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [],
        "securitySchemes": { "bearer": { "httpAuthSecurityScheme": { "scheme": "bearer" } } },
    });
    Router::new()
        .route(HEALTH_PATH, get(move || async move { Json(health) }))
        .route(CARD_PATH, get(move || async move { Json(card) }))
        .route(A2A_JSONRPC_PATH, post(send_message))
        .with_state(Arc::new(echo))
}

/// `POST /a2a`: the bearer check, then one JSON-RPC answer.
async fn send_message(State(echo): State<Arc<Echo>>, headers: HeaderMap, body: Bytes) -> Response {
    let presented = exchange::envelope::bearer_token(&headers);
    if !presented.is_some_and(|t| echo.token.matches(t.as_bytes())) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            Json(rpc_error(Value::Null, -32000, "unauthorized")),
        )
            .into_response();
    }
    Json(answer(&echo.system, &body)).into_response()
}

/// The JSON-RPC answer to one request body.
fn answer(system: &str, body: &[u8]) -> Value {
    let Ok(rpc) = serde_json::from_slice::<Value>(body) else {
        return rpc_error(Value::Null, -32700, "not JSON");
    };
    let id = rpc.get("id").cloned().unwrap_or(Value::Null);
    match rpc.get("method").and_then(Value::as_str) {
        Some(SEND_MESSAGE_METHOD) => {}
        Some(_) => return rpc_error(id, -32601, "only SendMessage"),
        None => return rpc_error(id, -32600, "not a JSON-RPC request"),
    }
    let Some(request) = rpc
        .get("params")
        .cloned()
        .and_then(|p| serde_json::from_value::<SendMessageRequest>(p).ok())
    else {
        return rpc_error(id, -32602, "params are not a SendMessageRequest");
    };
    let (capability, input) = exchange::wire::parse_call(&request.message)
        .unwrap_or_else(|_| (String::new(), Value::Null));
    let mut reply = Message::new(
        Role::Agent,
        vec![Part::data(json!({
            "capability": capability,
            "input": input,
            "answered_by": system,
        }))],
    );
    reply.message_id = format!("{}-echo", request.message.message_id);
    reply.context_id = request.message.context_id;
    match serde_json::to_value(SendMessageResponse::Message(reply)) {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(e) => rpc_error(id, -32603, &format!("encoding the answer: {e}")),
    }
}

fn rpc_error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// `peer echo`: binds `listen` and serves until SIGINT/SIGTERM.
pub async fn serve(echo: Echo, listen: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("listen address `{listen}` is not IP:port"))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding echo {} to {addr}", echo.system))?;
    // The bound address (port 0 lets the system pick one).
    let addr = listener
        .local_addr()
        .context("reading the echo provider's bound address")?;
    tracing::info!(system = %echo.system, %addr, "echo provider listening on http://{addr}");
    let app = router(echo, &format!("http://{addr}"));
    axum::serve(listener, app)
        .with_graceful_shutdown(crate::server::shutdown_signal())
        .await
        .context("serving the echo provider")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_send_message_with_its_input_and_refuses_the_rest() {
        let body = json!({
            "jsonrpc": "2.0", "id": 7, "method": "SendMessage",
            "params": { "message": {
                "messageId": "m-1", "role": "ROLE_USER",
                "parts": [{ "data": { "capability": "echo.data", "input": { "text": "hi" } } }],
            } }
        });
        let a = answer("echo", body.to_string().as_bytes());
        assert_eq!(a["id"], 7);
        assert_eq!(
            a["result"]["message"]["parts"][0]["data"],
            json!({ "capability": "echo.data", "input": { "text": "hi" }, "answered_by": "echo" })
        );
        assert_eq!(a["result"]["message"]["messageId"], "m-1-echo");
        assert_eq!(answer("echo", b"{")["error"]["code"], -32700);
        let other = json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {} });
        assert_eq!(
            answer("echo", other.to_string().as_bytes())["error"]["code"],
            -32601
        );
        let bad = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {} });
        assert_eq!(
            answer("echo", bad.to_string().as_bytes())["error"]["code"],
            -32602
        );
    }
}
