//! VendorCorp's data plane through the hub's MCP door, as the tests call
//! it: one `tools/call` of `query_records` as a plain JSON-RPC POST (the
//! stateless server needs no session).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::Stack;

/// What the door answered, and how long it took.
#[derive(Debug)]
pub struct McpAnswer {
    pub status: u16,
    /// The JSON-RPC answer (`null` when the body is not JSON).
    pub body: Value,
    pub elapsed: Duration,
}

impl Stack {
    /// `query_records` with `arguments` on VendorCorp's plane, through the
    /// hub, as `caller` (with its token).
    pub async fn mcp_query(&self, caller: &str, arguments: Value) -> McpAnswer {
        let started = Instant::now();
        let resp = reqwest::Client::new()
            .post(format!("{}/mcp/vendorcorp", self.hub_url()))
            .bearer_auth(self.token(caller))
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "query_records", "arguments": arguments}}))
            .timeout(Duration::from_secs(15))
            .send()
            .await
            .expect("the hub answers");
        let status = resp.status().as_u16();
        let body = resp.json().await.unwrap_or(Value::Null);
        McpAnswer {
            status,
            body,
            elapsed: started.elapsed(),
        }
    }
}
