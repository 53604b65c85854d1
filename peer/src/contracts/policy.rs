//! The provider's negotiation policy, in code: applied to the provider's
//! reply *after* whatever produced it — the deterministic agent or a model
//! tier's draft — so a reply that grants too much is narrowed
//! here, and the narrowing is reported, never silent.
//!
//! Three rules and one deterministic step:
//! - personal columns (configured per dataset) are removed from any scope
//!   the provider offers; the intent becomes `counter`;
//! - retention is capped at [`MAX_RETENTION_DAYS`];
//! - an `accept` from the consumer may only confirm the provider's **last
//!   offer** in that negotiation: columns it never offered make the answer
//!   a `reject` naming them;
//! - the grant is built here, from the confirmed offer, without a model:
//!   a contract id derived from what was agreed, the scope, `expires_at`,
//!   the negotiation's `contextId`, both parties.

use std::collections::BTreeSet;

use chrono::{DateTime, Duration, Utc};
use sha2::{Digest, Sha256};

use super::Contract;
use exchange::negotiation::{Intent, NegotiationMessage, Party, Scope};

/// The longest a provider lets a consumer keep what it read.
pub const MAX_RETENTION_DAYS: u64 = 90;

/// What the policy changed in a reply, for the provider's trail.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Narrowed {
    /// Personal columns removed from the scope.
    pub removed: Vec<String>,
    /// Columns removed because they are beyond the most the provider ever
    /// grants (its `negotiable_columns`: `order_id`, say).
    pub not_negotiable: Vec<String>,
    /// The retention asked for, when it was capped.
    pub retention_capped_from: Option<u64>,
}

impl Narrowed {
    /// Whether the policy changed anything.
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.not_negotiable.is_empty()
            && self.retention_capped_from.is_none()
    }
}

/// A provider's policy over one dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// Columns never granted (`customer_name`, `customer_email`).
    pub personal_columns: BTreeSet<String>,
    /// The most ever granted (the data-share's `negotiable_columns`);
    /// anything else is removed too.
    pub negotiable_columns: BTreeSet<String>,
}

impl Policy {
    /// Applies the rules to a reply the provider is about to send: personal
    /// and non-negotiable columns out, retention capped; a reply that was
    /// narrowed is a `counter` (a `reject` stays one).
    pub fn apply(&self, mut reply: NegotiationMessage) -> (NegotiationMessage, Narrowed) {
        let mut narrowed = Narrowed::default();
        let mut kept = Vec::new();
        for c in std::mem::take(&mut reply.scope.columns) {
            if self.personal_columns.contains(&c) {
                narrowed.removed.push(c);
            } else if !self.negotiable_columns.contains(&c) {
                narrowed.not_negotiable.push(c);
            } else {
                kept.push(c);
            }
        }
        reply.scope.columns = kept;
        if reply.scope.retention_days > MAX_RETENTION_DAYS {
            narrowed.retention_capped_from = Some(reply.scope.retention_days);
            reply.scope.retention_days = MAX_RETENTION_DAYS;
        }
        if !narrowed.is_empty() && reply.intent != Intent::Reject {
            reply.intent = Intent::Counter;
        }
        (reply, narrowed)
    }
}

/// What the provider answers a consumer's `accept`: the grant of its own
/// last offer, or a `reject` when the accept names columns never offered
/// (or there is no offer to accept). The consumer's claimed scope is never
/// what is granted.
pub fn confirm_accept(
    accepted: &NegotiationMessage,
    last_offer: Option<&Scope>,
) -> Result<Scope, NegotiationMessage> {
    let reject = |scope: Scope, rationale: String| NegotiationMessage {
        from: Party::Provider,
        intent: Intent::Reject,
        scope,
        rationale,
    };
    let Some(offer) = last_offer else {
        return Err(reject(
            accepted.scope.clone(),
            "There is no offer to accept in this negotiation; send a proposal first.".into(),
        ));
    };
    let offered: BTreeSet<&String> = offer.columns.iter().collect();
    let widening: Vec<&String> = accepted
        .scope
        .columns
        .iter()
        .filter(|c| !offered.contains(c))
        .collect();
    if !widening.is_empty() {
        return Err(reject(
            offer.clone(),
            format!(
                "An accept may only confirm the scope offered; {widening:?} was never offered, \
                 so this reads as a new proposal rather than an acceptance."
            ),
        ));
    }
    Ok(offer.clone())
}

/// The contract for an agreed `scope`: deterministic, no model. The id is
/// derived from the negotiation, the parties and the scope, so granting
/// the same agreement twice names the same contract.
pub fn grant(
    scope: Scope,
    capability: &str,
    provider: &str,
    consumer: &str,
    context_id: &str,
    now: DateTime<Utc>,
) -> Contract {
    let mut h = Sha256::new();
    for part in [context_id, provider, consumer, capability, &scope.purpose] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for c in &scope.columns {
        h.update(c.as_bytes());
        h.update([0]);
    }
    h.update(scope.retention_days.to_be_bytes());
    let digest = h.finalize();
    let id = format!(
        "c-{}",
        digest[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let days = i64::try_from(scope.retention_days).unwrap_or(i64::MAX);
    Contract {
        id,
        capability: capability.to_string(),
        provider: provider.to_string(),
        consumer: consumer.to_string(),
        expires_at: now + Duration::days(days.min(MAX_RETENTION_DAYS as i64)),
        scope,
        context_id: context_id.to_string(),
        granted_at: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(cols: &[&str], days: u64) -> Scope {
        Scope {
            columns: cols.iter().map(|c| c.to_string()).collect(),
            purpose: "average order value by region for Q3".into(),
            retention_days: days,
        }
    }

    fn msg(from: Party, intent: Intent, s: Scope) -> NegotiationMessage {
        NegotiationMessage {
            from,
            intent,
            scope: s,
            rationale: "r".into(),
        }
    }

    fn policy() -> Policy {
        Policy {
            personal_columns: ["customer_name", "customer_email"].map(String::from).into(),
            negotiable_columns: ["region", "order_date", "order_value", "product"]
                .map(String::from)
                .into(),
        }
    }

    #[test]
    fn personal_columns_come_out_and_the_reply_becomes_a_counter() {
        let reply = msg(
            Party::Provider,
            Intent::Accept,
            scope(&["region", "customer_email"], 365),
        );
        let (reply, narrowed) = policy().apply(reply);
        assert_eq!(reply.intent, Intent::Counter);
        assert_eq!(reply.scope.columns, vec!["region".to_string()]);
        assert_eq!(reply.scope.retention_days, MAX_RETENTION_DAYS);
        assert_eq!(narrowed.removed, vec!["customer_email".to_string()]);
        assert_eq!(narrowed.retention_capped_from, Some(365));
        // A clean reply is left alone.
        let clean = msg(Party::Provider, Intent::Accept, scope(&["region"], 30));
        let (same, narrowed) = policy().apply(clean.clone());
        assert_eq!((same, narrowed.is_empty()), (clean, true));
    }

    #[test]
    fn columns_beyond_the_negotiable_ones_come_out_too() {
        // The demo's transcript: order_id is in the dataset, never granted.
        let reply = msg(
            Party::Provider,
            Intent::Accept,
            scope(&["region", "order_date", "order_value", "order_id"], 30),
        );
        let (reply, narrowed) = policy().apply(reply);
        assert_eq!(reply.intent, Intent::Counter);
        assert_eq!(reply.scope.columns, ["region", "order_date", "order_value"]);
        assert_eq!(narrowed.not_negotiable, ["order_id"]);
        assert!(narrowed.removed.is_empty() && narrowed.retention_capped_from.is_none());
    }

    #[test]
    fn an_accept_confirms_only_the_last_offer() {
        let offer = scope(&["region", "order_date", "order_value"], 30);
        let narrower = msg(
            Party::Consumer,
            Intent::Accept,
            scope(&["region", "order_value"], 30),
        );
        assert_eq!(confirm_accept(&narrower, Some(&offer)), Ok(offer.clone()));
        let widening = msg(
            Party::Consumer,
            Intent::Accept,
            scope(&["region", "order_value", "customer_email"], 30),
        );
        let reject = confirm_accept(&widening, Some(&offer)).expect_err("widening");
        assert_eq!(
            (reject.from, reject.intent),
            (Party::Provider, Intent::Reject)
        );
        assert!(
            reject
                .rationale
                .contains(r#"["customer_email"] was never offered"#),
            "{}",
            reject.rationale
        );
        assert_eq!(reject.scope, offer, "the reject restates the offer");
        assert!(
            confirm_accept(&narrower, None).is_err(),
            "nothing to accept"
        );
    }

    #[test]
    fn the_grant_is_deterministic() {
        let now = Utc::now();
        let s = scope(&["region", "order_date", "order_value"], 30);
        let a = grant(
            s.clone(),
            "orders.query",
            "vendorcorp",
            "buyercorp",
            "ctx-1",
            now,
        );
        let b = grant(
            s.clone(),
            "orders.query",
            "vendorcorp",
            "buyercorp",
            "ctx-1",
            now,
        );
        assert_eq!(a, b);
        assert!(a.id.starts_with("c-") && a.id.len() == 14, "{}", a.id);
        assert_eq!(a.expires_at - a.granted_at, Duration::days(30));
        let other = grant(s, "orders.query", "vendorcorp", "buyercorp", "ctx-2", now);
        assert_ne!(a.id, other.id, "another negotiation, another contract");
    }
}
