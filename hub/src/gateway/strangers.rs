//! Calls refused before any caller was known: counted, and summarised in
//! the trail once an interval instead of a row each.
//!
//! **Who is a stranger.** A call from outside refused at the door — its
//! request unreadable, its A2A version unsupported, or the auth chain
//! refusing it (IP allowlist, token, mTLS) — whose `Authorization` header
//! names no system ([`crate::auth::presented`]): no credential, one that
//! is not `Bearer …`, a token that is no system's, an access token that
//! does not verify (malformed, forged, expired, from no member's issuer).
//! What `X-Caller-System` claims does not make a caller known: anybody
//! can write it. A call whose credential does name a system keeps its own
//! row, refused or not (a wrong address for a real token, another
//! system's name with one's own token, `NOT_PERMITTED`): that is a
//! member's evidence.
//!
//! **Why.** Every trail row is permanent and hash-chained; one row per
//! unauthenticated request lets anybody grow the hub's trail without
//! bound. A stranger's call is instead counted on `/metrics`
//! (`wallstreet_unidentified_refusals_total{door, reason, credential}`)
//! and in a window that becomes **one** trail row per interval
//! (`WS_TRAIL_SUMMARY_SECONDS`, default 60; nothing when nobody knocked):
//! how many, from how many addresses, by door, reason code and credential.
//! Each replica writes its own. A hub killed loses the summary of its last
//! interval (the counter had them); a hub stopped writes it on its way
//! out.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;

use crate::auth::Unidentified;
use exchange::audit::{AuditRecord, Outcome, Role};
use exchange::reason::ReasonCode;

/// The variable that sets how often the strangers' summary is written.
pub const SUMMARY_ENV: &str = "WS_TRAIL_SUMMARY_SECONDS";
const DEFAULT_SUMMARY: Duration = Duration::from_secs(60);

/// Distinct source addresses a window counts exactly; past this it says
/// "at least".
const MAX_SOURCES: usize = 4096;

/// The caller a summary row names: not an id (ids are lower-case), so no
/// system can be mistaken for it.
pub const SUMMARY_CALLER: &str = "(unidentified)";

/// Which door a call came in by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Front {
    /// `POST /gateway/v1/{provider}/{capability}`.
    #[default]
    Gateway,
    /// The A2A surface (JSON-RPC, HTTP+JSON, task operations).
    A2a,
    /// The MCP front of a provider's data plane.
    Mcp,
}

impl Front {
    /// The label `/metrics` and the summary use.
    pub fn as_str(self) -> &'static str {
        match self {
            Front::Gateway => "gateway",
            Front::A2a => "a2a",
            Front::Mcp => "mcp",
        }
    }
}

/// A call refused at the door whose credential names nobody.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stranger {
    pub(super) front: Front,
    pub(super) credential: Unidentified,
    pub(super) from: Option<IpAddr>,
}

/// One kind of refusal a window counts: door, reason code, credential.
type Kind = (Front, &'static str, Unidentified);

/// What an interval's strangers came to.
#[derive(Debug, Default)]
struct Window {
    /// When its first call came.
    since: Option<String>,
    calls: u64,
    sources: HashSet<IpAddr>,
    /// More distinct sources came than [`MAX_SOURCES`].
    more_sources: bool,
    by: BTreeMap<Kind, u64>,
    reasons: HashMap<ReasonCode, u64>,
}

/// The strangers' window of a gateway.
#[derive(Debug, Default)]
pub(super) struct Strangers {
    window: Mutex<Window>,
}

impl Strangers {
    /// Counts one stranger's call, refused with `reason`.
    pub(super) fn note(&self, stranger: &Stranger, reason: ReasonCode) {
        let mut w = self.window.lock().unwrap_or_else(|p| p.into_inner());
        w.since.get_or_insert_with(exchange::audit::now);
        w.calls += 1;
        if let Some(ip) = stranger.from {
            if w.sources.len() < MAX_SOURCES {
                w.sources.insert(ip);
            } else if !w.sources.contains(&ip) {
                w.more_sources = true;
            }
        }
        *w.by
            .entry((stranger.front, reason.as_str(), stranger.credential))
            .or_default() += 1;
        *w.reasons.entry(reason).or_default() += 1;
    }

    /// The summary row of the window so far (`None` when it counted
    /// nobody), and a new window.
    pub(super) fn take(&self) -> Option<AuditRecord> {
        let w = std::mem::take(&mut *self.window.lock().unwrap_or_else(|p| p.into_inner()));
        let since = w.since?;
        let until = exchange::audit::now();
        // The row's reason: the commonest (the first by name of a tie).
        let reason = w
            .reasons
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.as_str().cmp(a.0.as_str())))
            .map(|(r, _)| *r)
            .unwrap_or(ReasonCode::AuthRejected);
        let by: Vec<_> =
            w.by.iter()
                .map(|((front, reason, credential), n)| {
                    json!({
                        "door": front.as_str(),
                        "reason": reason,
                        "credential": credential.as_str(),
                        "calls": n,
                    })
                })
                .collect();
        let detail = json!({
            "summary": "calls refused before any caller was known",
            "from": since,
            "to": until,
            "calls": w.calls,
            "sources": w.sources.len(),
            "sources_at_least": w.more_sources,
            "by": by,
        });
        let took = chrono::DateTime::parse_from_rfc3339(&since)
            .ok()
            .and_then(|s| {
                (chrono::Utc::now() - s.with_timezone(&chrono::Utc))
                    .to_std()
                    .ok()
            })
            .unwrap_or_default();
        Some(AuditRecord {
            system: String::new(),
            role: Role::Hub,
            at: until.clone(),
            caller: SUMMARY_CALLER.into(),
            provider: String::new(),
            capability: String::new(),
            request_id: format!("unidentified-since-{since}"),
            trace_id: String::new(),
            outcome: Outcome::NotConnected,
            reason: Some(reason),
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            detail: detail.to_string(),
        })
    }
}

/// How often the summary is written: [`SUMMARY_ENV`] (seconds, fractions
/// allowed), else a minute; anything else is an error naming the variable.
pub fn summary_interval() -> Result<Duration, String> {
    crate::signing::seconds_setting(SUMMARY_ENV, DEFAULT_SUMMARY).map_err(|raw| {
        format!(
            "{SUMMARY_ENV}: `{}` is not a positive number of seconds",
            exchange::text::clip(&raw, 32)
        )
    })
}

#[cfg(test)]
#[path = "strangers_tests.rs"]
mod tests;
