//! The hub's record of every negotiation message that crossed it (seed
//! `000`, step 6: "the observer is a log reader"; DESIGN.md §2,
//! "capability"): what each consumer sent, what the provider answered (or
//! why nothing came back), in order, one row per turn, in the hub's own
//! store.
//!
//! It is a trail, not a state: the drawer's transcript is these rows in
//! order, the contract it shows is the grant of the newest granted turn,
//! and the run state (idle / negotiating / executing / error) is derived
//! from them and the data-share's audit records — never stored as a flag,
//! so a process that dies mid-run cannot leave a stale one. Rows hold what
//! the hub forwarded and received, raw; nothing here reaches a browser
//! except through the redaction layer (the negotiation capability's
//! contract).

use exchange::db::Store;
use serde_json::Value;
use sqlx::Row;

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum NegotiationsError {
    /// The database failed.
    #[error("negotiation record: {0}")]
    Db(#[from] sqlx::Error),
    /// A stored message is not readable JSON any more.
    #[error("negotiation record holds unreadable JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// One turn: a consumer's message and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    /// Insertion order.
    pub seq: i64,
    /// RFC 3339, when the hub finished the turn.
    pub at: String,
    /// The negotiation (A2A `contextId`).
    pub context_id: String,
    /// The consuming system.
    pub consumer: String,
    /// The providing system.
    pub provider: String,
    /// The negotiation capability.
    pub capability: String,
    /// The data-share it negotiates.
    pub data_capability: String,
    /// The message the consumer sent.
    pub sent: Value,
    /// The provider's answer (`{"reply", "grant"}`) when it connected.
    pub answer: Option<Value>,
    /// The reason code when it did not.
    pub reason: Option<String>,
    /// The hub's or provider's words when it did not.
    pub detail: String,
    /// The trace the turn belongs to.
    pub trace_id: String,
}

impl TurnRecord {
    /// The grant this turn carried, if any.
    pub fn grant(&self) -> Option<&Value> {
        self.answer
            .as_ref()
            .and_then(|a| a.get("grant"))
            .filter(|g| g.is_object())
    }
}

/// The store, inside the hub's database.
#[derive(Debug, Clone)]
pub struct Negotiations {
    store: Store,
}

impl Negotiations {
    /// The record in the hub's (migrated) database.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Appends one turn (`seq` and `at` are assigned here).
    pub async fn record(&self, turn: &TurnRecord) -> Result<(), NegotiationsError> {
        sqlx::query(
            "INSERT INTO negotiation_turns (at, context_id, consumer, provider, capability,
                data_capability, sent, answer, reason, detail, trace_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(exchange::audit::now())
        .bind(&turn.context_id)
        .bind(&turn.consumer)
        .bind(&turn.provider)
        .bind(&turn.capability)
        .bind(&turn.data_capability)
        .bind(serde_json::to_string(&turn.sent)?)
        .bind(
            turn.answer
                .as_ref()
                .map(serde_json::to_string)
                .transpose()?,
        )
        .bind(&turn.reason)
        .bind(&turn.detail)
        .bind(&turn.trace_id)
        .execute(self.store.pool())
        .await?;
        Ok(())
    }

    /// The newest `limit` turns of `consumer` with `provider` for
    /// `data_capability`, oldest first.
    pub async fn turns(
        &self,
        consumer: &str,
        provider: &str,
        data_capability: &str,
        limit: u32,
    ) -> Result<Vec<TurnRecord>, NegotiationsError> {
        let rows = sqlx::query(
            "SELECT seq, at, context_id, consumer, provider, capability, data_capability,
                    sent, answer, reason, detail, trace_id
             FROM negotiation_turns
             WHERE consumer = $1 AND provider = $2 AND data_capability = $3
             ORDER BY seq DESC LIMIT $4",
        )
        .bind(consumer)
        .bind(provider)
        .bind(data_capability)
        .bind(i64::from(limit))
        .fetch_all(self.store.pool())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows.into_iter().rev() {
            let answer: Option<String> = r.try_get("answer")?;
            out.push(TurnRecord {
                seq: r.try_get("seq")?,
                at: r.try_get("at")?,
                context_id: r.try_get("context_id")?,
                consumer: r.try_get("consumer")?,
                provider: r.try_get("provider")?,
                capability: r.try_get("capability")?,
                data_capability: r.try_get("data_capability")?,
                sent: serde_json::from_str(&r.try_get::<String, _>("sent")?)?,
                answer: answer.as_deref().map(serde_json::from_str).transpose()?,
                reason: r.try_get("reason")?,
                detail: r.try_get("detail")?,
                trace_id: r.try_get("trace_id")?,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(consumer: &str, context: &str, answer: Option<Value>) -> TurnRecord {
        TurnRecord {
            seq: 0,
            at: String::new(),
            context_id: context.into(),
            consumer: consumer.into(),
            provider: "vendorcorp".into(),
            capability: "orders.negotiate".into(),
            data_capability: "orders.query".into(),
            sent: json!({"intent": "propose"}),
            reason: answer.is_none().then(|| "PEER_UNREACHABLE".into()),
            answer,
            detail: String::new(),
            trace_id: "t".into(),
        }
    }

    #[tokio::test]
    async fn turns_come_back_in_order_per_consumer_and_survive_reopening() {
        for db in crate::store::test_stores().await {
            turns_in_order(db.store).await;
        }
    }

    async fn turns_in_order(pool: Store) {
        let store = Negotiations::new(pool.clone());
        store
            .record(&turn(
                "buyercorp",
                "ctx-1",
                Some(json!({"reply": {}, "grant": null})),
            ))
            .await
            .expect("1");
        store.record(&turn("hub", "ctx-2", None)).await.expect("2");
        store
            .record(&turn(
                "buyercorp",
                "ctx-1",
                Some(json!({"reply": {}, "grant": {"contract_id": "c-1"}})),
            ))
            .await
            .expect("3");
        let again = Negotiations::new(pool);
        let t = again
            .turns("buyercorp", "vendorcorp", "orders.query", 10)
            .await
            .expect("turns");
        assert_eq!(t.len(), 2);
        assert!(t[0].seq < t[1].seq);
        assert_eq!(
            t[1].grant().map(|g| g["contract_id"].clone()),
            Some(json!("c-1"))
        );
        assert!(t[0].grant().is_none());
        let hub = again
            .turns("hub", "vendorcorp", "orders.query", 10)
            .await
            .expect("hub");
        assert_eq!(hub[0].reason.as_deref(), Some("PEER_UNREACHABLE"));
        assert_eq!(
            again
                .turns("buyercorp", "vendorcorp", "orders.query", 1)
                .await
                .expect("1")
                .len(),
            1
        );
    }
}
