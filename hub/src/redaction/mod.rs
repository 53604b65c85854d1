//! The redaction layer: the only road from a peer's answer to a browser
//! (DESIGN.md §3 "browser", §4 "Open a data-share edge").
//!
//! The promise is that a browser never receives a field a data contract
//! does not whitelist, never an unredacted value of a masked field, and
//! never peer free text that is not marked untrusted. It holds *by
//! construction*, through types:
//!
//! * [`Redacted<T>`] has private fields, no `Deserialize` and no public
//!   constructor: only this module (with its [`view`]) makes one. [`redact`] is the only way to
//!   turn a peer's JSON into one: it validates the answer against the
//!   capability's response schema first (an answer that breaks it is
//!   `not_connected` / `SCHEMA_INVALID`, never passed through), then keeps
//!   only the fields the contract lists, each redacted by its rule;
//!   anything else is dropped silently. Free-text fields the contract marks
//!   `untrusted` become [`Untrusted`] values, which have no `Display` and
//!   no `Deref` to `str`.
//! * The browser views that carry peer data ([`view::query_view`],
//!   [`view::consult_view`]) are built in [`view`], only from a
//!   `Redacted<Data>`, and come out as `Redacted<…View>`, which is what the
//!   BFF answers with (it implements `IntoResponse`). A handler that has
//!   only raw peer JSON has nothing to answer a browser with.
//! * [`Untrusted`] becomes the browser's `UntrustedText` (shown inert,
//!   "from <peer>, unverified") only in [`view::untrusted_text`].
//!
//! Layout: this file holds the type boundary ([`Redacted`], [`Data`]) and
//! [`redact`]; [`apply`] applies a compiled contract; [`view`] builds the
//! browser views. The contract itself — model, paths, compiled rules,
//! schemas — is `crate::contract`, compiled once per topology load.
//! Hub-owned views (the inbox, budget plans) are built in the BFF.

pub mod apply;
pub mod view;

use std::collections::BTreeMap;

use axum::response::{IntoResponse, Response};
use exchange::inbox::ProposedAction;
use exchange::reason::{CallResult, NotConnected, ReasonCode};
use exchange::text::clip;
use exchange::untrusted::Untrusted;
use serde::Serialize;
use serde_json::{Number, Value};

use crate::contract::{Contract, Contracts};

pub use apply::MASK;
pub use view::{consult_view, query_view, CallMeta};

// ---------------------------------------------------------------------
// The type boundary
// ---------------------------------------------------------------------

/// A value that went through the redaction layer. Only this module can
/// make one; nothing can deserialize one.
#[derive(Debug, Clone, PartialEq)]
pub struct Redacted<T> {
    inner: T,
}

impl<T> Redacted<T> {
    /// Private on purpose: the only constructors are [`redact`] and the
    /// view builders of this module.
    fn new(inner: T) -> Self {
        Self { inner }
    }

    /// The redacted value.
    pub fn get(&self) -> &T {
        &self.inner
    }
}

/// A browser view that went through redaction is what the BFF answers
/// with: JSON, 200.
impl<T: Serialize> IntoResponse for Redacted<T> {
    fn into_response(self) -> Response {
        axum::Json(self.inner).into_response()
    }
}

/// A peer's answer after redaction: only whitelisted fields, each redacted
/// by its rule, free text as [`Untrusted`]. Deliberately not `Serialize`:
/// it reaches a browser only through a view of this module.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// `null`.
    Null,
    /// A kept boolean.
    Bool(bool),
    /// A kept or rounded number.
    Number(Number),
    /// A kept string (an id, an enum value), or a mask or bucket label.
    Text(String),
    /// Free text from the peer: data, never instructions.
    Untrusted(Untrusted),
    /// An array's redacted items.
    List(Vec<Data>),
    /// An object's whitelisted fields.
    Map(BTreeMap<String, Data>),
}

impl Data {
    /// Field `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Data> {
        match self {
            Data::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// The items of a list (empty for anything else).
    pub fn items(&self) -> &[Data] {
        match self {
            Data::List(items) => items,
            _ => &[],
        }
    }

    /// A kept string.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Data::Text(s) => Some(s),
            _ => None,
        }
    }

    /// A number, as f64 (finite only).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Data::Number(n) => n.as_f64().filter(|v| v.is_finite()),
            _ => None,
        }
    }

    /// Untrusted text.
    pub fn as_untrusted(&self) -> Option<&Untrusted> {
        match self {
            Data::Untrusted(u) => Some(u),
            _ => None,
        }
    }

    /// Every field path present, `groups[].key` style, sorted: what a
    /// whitelist test compares with the contract.
    pub fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_paths(self, "", &mut out);
        out.sort();
        out.dedup();
        out
    }
}

fn collect_paths(d: &Data, prefix: &str, out: &mut Vec<String>) {
    match d {
        Data::Map(m) => {
            for (k, v) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.push(p.clone());
                collect_paths(v, &p, out);
            }
        }
        Data::List(items) => {
            let p = format!("{prefix}[]");
            for item in items {
                collect_paths(item, &p, out);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------
// Redacting an answer
// ---------------------------------------------------------------------

/// Validates `answer` against the contract's response schema, then keeps
/// only the whitelisted fields, each redacted by its rule, free text as
/// [`Untrusted`] from `provider`. An answer that breaks the schema is
/// `SCHEMA_INVALID`: nothing of it passes.
pub fn redact(
    contract: &Contract,
    answer: &Value,
    provider: &str,
) -> Result<Redacted<Data>, NotConnected> {
    contract.check(answer).map_err(|v| {
        NotConnected::new(
            ReasonCode::SchemaInvalid,
            format!("{}'s answer: {v}", clip(provider, 64)),
        )
    })?;
    Ok(Redacted::new(apply::apply_rules(
        contract.rules(),
        answer,
        provider,
    )))
}

/// [`redact`] for an answer the contract's schema has already accepted on
/// this call (the gateway's forward checks every answer before anyone sees
/// it): the whitelist applied without a second validation. Safe on any
/// value — applying keeps only what the rules list — so a wrong promise
/// costs a note in the inspector, never a leak.
pub fn redact_valid(contract: &Contract, answer: &Value, provider: &str) -> Redacted<Data> {
    Redacted::new(apply::apply_rules(contract.rules(), answer, provider))
}

/// A gateway result, redacted: the failure as it was, or the answer
/// through [`redact`] with the capability's contract. A capability with no
/// compiled contract is `SCHEMA_INVALID` (nothing to check it against).
pub fn redact_call(
    contracts: &Contracts,
    capability: &str,
    provider: &str,
    result: &CallResult,
) -> Result<Redacted<Data>, NotConnected> {
    match result {
        CallResult::NotConnected { reason, detail, .. } => {
            Err(NotConnected::new(*reason, detail.clone()))
        }
        CallResult::Connected { result, .. } => {
            let contract = contracts.get(capability).ok_or_else(|| {
                NotConnected::new(
                    ReasonCode::SchemaInvalid,
                    format!("no contract for {}", clip(capability, 64)),
                )
            })?;
            redact(&contract, result, provider)
        }
    }
}

/// The proposed actions of a redacted consult answer, for the asker's
/// approval inbox: only what the contract kept. An action without a kept
/// `action_type` and `target` is not a proposal. The rationale is stored
/// as the untrusted text it is (the inbox shows it as such).
pub fn proposed_actions(answer: &Redacted<Data>) -> Vec<ProposedAction> {
    let Some(list) = answer.get().get("proposed_actions") else {
        return Vec::new();
    };
    list.items()
        .iter()
        .filter_map(|a| {
            let action_type = a.get("action_type")?.as_text()?.to_string();
            let target = a.get("target")?.as_text()?.to_string();
            let parameters = a.get("parameters").map(to_json).unwrap_or(Value::Null);
            let rationale = a
                .get("rationale")
                .and_then(Data::as_untrusted)
                .map(|u| u.as_data().to_string())
                .unwrap_or_default();
            Some(ProposedAction {
                action_type,
                target,
                parameters,
                rationale,
            })
        })
        .collect()
}

/// Redacted data back to JSON for the hub's own store (proposal
/// parameters). Untrusted text is stored as text; it is shown as untrusted
/// again when read back.
fn to_json(d: &Data) -> Value {
    match d {
        Data::Null => Value::Null,
        Data::Bool(b) => Value::Bool(*b),
        Data::Number(n) => Value::Number(n.clone()),
        Data::Text(s) => Value::String(s.clone()),
        Data::Untrusted(u) => Value::String(u.as_data().to_string()),
        Data::List(items) => Value::Array(items.iter().map(to_json).collect()),
        Data::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
    }
}

#[cfg(test)]
mod tests;
