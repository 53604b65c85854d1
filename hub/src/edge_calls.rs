//! The hub's own calls along an edge: the hub is the caller (caller id =
//! the hub's id), through [`Gateway::call`] with the envelope its caller
//! gives, so the rule check, the deadline, the response contract and the
//! hub's audit trail apply exactly as for a peer's call; the answer then
//! takes the only road to a view ([`crate::redaction`]).
//!
//! Two callers share what is here: the canvas's drawers (`crate::web::bff`'s
//! query and question) and the agents' read-only tools
//! (`crate::agents::tools`), which ask the same edges the same way. So is
//! the browser's spelling of an edge's capability kind ([`dto_kind`]),
//! which the canvas view and the agents' suggestions both show.

use app::dto::{CapabilityKind as DtoKind, QueryRequest};
use serde_json::json;

use crate::api::ApiFailure;
use crate::gateway::Gateway;
use crate::redaction::{self, CallMeta, Redacted};
use crate::registry::model::CapabilityKind;
use crate::registry::Registry;
use crate::store::edges::Edge;
use exchange::envelope::Envelope;
use exchange::reason::CallResult;
use exchange::text::clip;

/// Longest question the hub forwards.
pub const MAX_QUESTION_BYTES: usize = 4_000;

/// `op` and column names as the data-share contract takes them: checked
/// here so a typo is a 400 with a message, not a round trip to the peer.
pub(crate) fn check_query(req: &QueryRequest) -> Result<(), ApiFailure> {
    if !matches!(req.op.as_str(), "count" | "sum" | "avg" | "min" | "max") {
        return Err(ApiFailure::bad_request(format!(
            "op must be one of count, sum, avg, min, max; got {:?}",
            clip(&req.op, 32)
        )));
    }
    for (field, name) in [("column", &req.column), ("group_by", &req.group_by)] {
        if let Some(name) = name {
            let ok = !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'*');
            if !ok {
                return Err(ApiFailure::bad_request(format!(
                    "{field} must be a column name (1-64 characters of a-z, 0-9, _)"
                )));
            }
        }
    }
    Ok(())
}

/// A call along `edge` through the gateway as the hub, then the only way
/// to a view: schema check, whitelist and redaction. Drawers and the hub's
/// agents' read-only tools (`crate::agents::tools`) both call it.
pub(crate) async fn call_and_redact(
    gateway: &Gateway,
    registry: &Registry,
    edge: &Edge,
    input: serde_json::Value,
    envelope: Envelope,
) -> (
    CallResult,
    Result<Redacted<redaction::Data>, exchange::reason::NotConnected>,
    CallMeta,
) {
    let hub_id = registry.snapshot().topology.hub.id.clone();
    let result = gateway
        .call(&hub_id, &edge.provider, &edge.capability, input, envelope)
        .await;
    let answer = redaction::redact_call(
        &registry.snapshot().contracts,
        &edge.capability,
        &edge.provider,
        &result,
    );
    let meta = CallMeta::of(&edge.id, &edge.capability, &edge.provider, &result);
    (result, answer, meta)
}

/// The data-share input of a drawer's query.
pub(crate) fn query_input(req: &QueryRequest) -> serde_json::Value {
    json!({
        "aggregate": {"op": req.op, "column": req.column},
        "group_by": req.group_by,
    })
}

/// The browser spelling of a capability kind.
pub fn dto_kind(kind: CapabilityKind) -> DtoKind {
    match kind {
        CapabilityKind::DataShare => DtoKind::DataShare,
        CapabilityKind::Consult => DtoKind::Consult,
        CapabilityKind::Negotiation => DtoKind::Negotiation,
        CapabilityKind::Task => DtoKind::Task,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_requests_are_checked_before_any_call() {
        let q = |op: &str, column: Option<&str>| QueryRequest {
            op: op.into(),
            column: column.map(Into::into),
            group_by: None,
        };
        assert!(check_query(&q("avg", Some("order_value"))).is_ok());
        assert!(check_query(&q("count", None)).is_ok());
        assert!(check_query(&q("drop", None)).is_err());
        assert!(check_query(&q("sum", Some("x; DROP TABLE"))).is_err());
    }
}
