//! Data contracts in a test stack, negotiated the real way: negotiation
//! messages as A2A `SendMessage`s on the hub's surface (what `peer
//! negotiate` sends), and the hub's own contract through the drawer's
//! `POST /api/edges/{id}/negotiate`. Nothing is written into a peer's
//! store behind its back.

use serde_json::{json, Value as Json};
use std::time::{Duration, Instant};

use super::a2a::unique;
use super::Stack;

/// The columns the stack's readers of orders query by: every negotiable
/// one, so the provider grants them as asked.
pub const ORDER_COLUMNS: [&str; 4] = ["region", "order_date", "order_value", "product"];

/// The demo's edge the hub negotiates on (BuyerCorp reads VendorCorp's
/// orders on it; the hub's drawer queries run there).
pub const ORDERS_EDGE: &str = "buyercorp->vendorcorp:orders.query";

/// A negotiation message from the consumer.
pub fn message(intent: &str, columns: &[&str], purpose: &str, days: u64) -> Json {
    json!({
        "from": "consumer",
        "intent": intent,
        "scope": {"columns": columns, "purpose": purpose, "retention_days": days},
        "rationale": format!("{intent} for the test"),
    })
}

impl Stack {
    /// Waits until the hub shows `caller` a card of `provider` whose
    /// `orders.negotiate` skill publishes its columns (the prober's first
    /// round has read the provider's own card).
    pub async fn wait_for_negotiable_card(&self, caller: &str, provider: &str) {
        let url = format!(
            "{}/a2a/{provider}/.well-known/agent-card.json",
            self.hub_url()
        );
        let started = Instant::now();
        loop {
            let card: Json = reqwest::Client::new()
                .get(&url)
                .bearer_auth(self.token(caller))
                .header("A2A-Version", "1.0")
                .send()
                .await
                .expect("card")
                .json()
                .await
                .unwrap_or(Json::Null);
            let published = card["skills"].as_array().into_iter().flatten().any(|s| {
                s["id"] == "orders.negotiate"
                    && s["tags"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|t| t.as_str().is_some_and(|t| t.starts_with("column:")))
            });
            if published {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "no negotiable card: {card}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Sends one negotiation message of `consumer` to `provider`'s
    /// `orders.negotiate` in `context_id`; the JSON-RPC answer.
    pub async fn negotiation_turn(
        &self,
        consumer: &str,
        provider: &str,
        context_id: &str,
        message: Json,
    ) -> super::a2a::A2aAnswer {
        self.negotiation_turn_of("orders.negotiate", consumer, provider, context_id, message)
            .await
    }

    /// [`Stack::negotiation_turn`] of another negotiation capability.
    pub async fn negotiation_turn_of(
        &self,
        negotiation: &str,
        consumer: &str,
        provider: &str,
        context_id: &str,
        message: Json,
    ) -> super::a2a::A2aAnswer {
        self.a2a(consumer, provider)
            .params(json!({
                "message": {
                    "messageId": format!("msg-{}", unique()),
                    "contextId": context_id,
                    "role": "ROLE_USER",
                    "parts": [{"data": {"capability": negotiation, "input": message}}],
                }
            }))
            .send()
            .await
    }

    /// Negotiates `consumer`'s contract for `columns` of `provider`'s
    /// orders through the hub's A2A surface: propose, accept a counter;
    /// answers the grant.
    pub async fn negotiate_orders(&self, consumer: &str, provider: &str, columns: &[&str]) -> Json {
        self.negotiate_with("orders.negotiate", consumer, provider, columns)
            .await
    }

    /// Negotiates `consumer`'s contract through `negotiation` of
    /// `provider`: propose `columns`, accept a counter; answers the grant.
    pub async fn negotiate_with(
        &self,
        negotiation: &str,
        consumer: &str,
        provider: &str,
        columns: &[&str],
    ) -> Json {
        let context = format!("ctx-{}", unique());
        let purpose = "aggregate order value by region for the tests";
        let mut msg = message("propose", columns, purpose, 30);
        for _ in 0..3 {
            let answer = self
                .negotiation_turn_of(negotiation, consumer, provider, &context, msg)
                .await;
            let result = answer.result()["message"]["parts"][0]["data"].clone();
            let reply = &result["reply"];
            if !result["grant"].is_null() {
                return result["grant"].clone();
            }
            assert_eq!(reply["intent"], "counter", "{result}");
            let cols: Vec<String> = reply["scope"]["columns"]
                .as_array()
                .expect("columns")
                .iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect();
            let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
            msg = message("accept", &cols, purpose, 30);
        }
        panic!("{consumer} got no grant from {provider}");
    }

    /// The hub negotiates its own contract on the demo's orders edge (the
    /// drawer's button), retrying while the prober has not read
    /// VendorCorp's card yet; answers the contracts view.
    pub async fn negotiate_for_hub(&self) -> Json {
        let ui = self.ui().await;
        let path = format!("/api/edges/{}/negotiate", ORDERS_EDGE.replace('>', "%3E"));
        let body = json!({
            "columns": ORDER_COLUMNS,
            "purpose": "aggregate queries from the canvas drawer (tests)",
            "retention_days": 30,
        });
        let started = Instant::now();
        loop {
            let (status, text) = ui.send(reqwest::Method::POST, &path, &body).await;
            assert_eq!(status, 200, "{text}");
            let view: Json = serde_json::from_str(&text).expect("contracts view");
            let hub = view["parties"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["is_hub"] == true))
                .cloned()
                .unwrap_or(Json::Null);
            if hub["contract"].is_object() {
                return view;
            }
            assert!(
                started.elapsed() < Duration::from_secs(15),
                "the hub got no contract: {view}\n{}",
                self.hub_log()
            );
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// The contracts the stack's tests read VendorCorp's orders under:
    /// BuyerCorp's and the hub's, for every started VendorCorp (clones
    /// included, BuyerCorp's only there: the hub negotiates on an edge).
    pub async fn grant_demo_contracts(&self) {
        for spec in self
            .specs
            .iter()
            .filter(|s| s.start && s.template == "vendorcorp")
        {
            let f = &spec.faults;
            if f.negotiation.is_some() || f.fail || f.break_schema || f.stall_ms > 0 {
                continue;
            }
            self.negotiate_orders("buyercorp", &spec.id, &ORDER_COLUMNS)
                .await;
            if spec.id == "vendorcorp" {
                self.negotiate_for_hub().await;
            }
        }
    }
}
