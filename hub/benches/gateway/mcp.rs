//! The MCP rows: `tools/call query_records` on MCP's stateless 2026-07-28
//! revision (one POST, no session, `_meta` and the `Mcp-Method` /
//! `Mcp-Name` headers on every request), straight to VendorCorp's data
//! plane with the hub's token for it, and through the hub's MCP front
//! (`POST {hub}/mcp/vendorcorp`) with BuyerCorp's: the front runs the
//! auth chain, the rule, the input schema, forwards over its own MCP
//! client and commits the audit record before it answers.

use serde_json::{json, Value};

use crate::common::Stack;
use crate::wrk::{Load, ID};

/// The revision both doors speak.
const REVISION: &str = "2026-07-28";

/// The arguments: the same aggregate as the orders backend.
fn arguments() -> Value {
    json!({ "aggregate": { "op": "avg", "column": "order_value" }, "group_by": "region" })
}

/// The data plane directly, then the hub's MCP front.
pub fn loads(stack: &Stack) -> [Load; 2] {
    let body = json!({
        "jsonrpc": "2.0", "id": ID, "method": "tools/call",
        "params": {
            "name": "query_records",
            "arguments": arguments(),
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": REVISION,
                "io.modelcontextprotocol/clientInfo": { "name": "bench-gateway", "version": "1" },
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    })
    .to_string();
    let standard = |token: String| {
        vec![
            ("authorization".to_string(), format!("Bearer {token}")),
            (
                "accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
            ("mcp-protocol-version".to_string(), REVISION.to_string()),
            ("mcp-method".to_string(), "tools/call".to_string()),
            ("mcp-name".to_string(), "query_records".to_string()),
        ]
    };
    let mut direct = standard(stack.token("vendorcorp"));
    // The plane answers the consumer the hub vouches for.
    direct.push(("x-caller-system".to_string(), "buyercorp".to_string()));
    let plane = stack.mcp_ports["vendorcorp"];
    [
        Load {
            name: "mcp direct".into(),
            url: format!("http://127.0.0.1:{plane}{}", exchange::wire::MCP_PATH),
            headers: direct,
            body: body.clone(),
            id_header: None,
            marker: "\"structuredContent\"",
        },
        Load {
            name: "mcp hub MCP".into(),
            url: format!("{}/mcp/vendorcorp", stack.hub_url()),
            headers: standard(stack.token("buyercorp")),
            body,
            id_header: None,
            marker: "\"structuredContent\"",
        },
    ]
}

/// One call of `load`: its `structuredContent`, or what went wrong.
pub async fn check(client: &reqwest::Client, load: &Load, id: &str) -> Result<Value, String> {
    let mut req = client
        .post(&load.url)
        .header("content-type", "application/json")
        .body(load.body.replace(ID, id));
    for (k, v) in &load.headers {
        req = req.header(k, v);
    }
    let resp = req.send().await.map_err(|e| format!("no answer: {e}"))?;
    let status = resp.status();
    let text = resp
        .text()
        .await
        .map_err(|e| format!("HTTP {status}, body unreadable: {e}"))?;
    // A streamable-HTTP answer may come as one SSE event.
    let json_text = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or(&text)
        .trim();
    let json: Value =
        serde_json::from_str(json_text).map_err(|_| format!("not JSON: HTTP {status}: {text}"))?;
    match json.pointer("/result/structuredContent") {
        Some(v) if status.is_success() && json["result"]["isError"] != true => Ok(v.clone()),
        _ => Err(format!("not a tool result: HTTP {status}: {text}")),
    }
}
