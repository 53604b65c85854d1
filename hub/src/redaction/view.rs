//! The browser views that carry peer data (DESIGN.md §4 "Open a
//! data-share edge", "Consult"), built only from a `Redacted<Data>` and
//! coming out as `Redacted<…View>`, which is what the BFF answers with.
//! A handler that has only raw peer JSON has nothing to answer a browser
//! with.
//!
//! [`untrusted_text`] is the one place an [`Untrusted`] becomes the
//! browser's `UntrustedText` (shown inert, "from <peer>, unverified").

use app::dto::{
    CallOutcomeView, ConsultView, Fact, ProposedActionView, QueryResultView, QueryRow,
    UntrustedText,
};
use app::format::format_number;
use exchange::reason::{CallResult, NotConnected};
use exchange::text::clip;
use exchange::untrusted::Untrusted;

use super::{Data, Redacted};

/// Most groups a query view shows.
pub const MAX_ROWS: usize = 1_000;
/// Longest answer text a consult view shows.
pub const MAX_ANSWER_CHARS: usize = 4_000;
/// Longest scalar text a view shows.
const MAX_TEXT_CHARS: usize = 200;

/// Which call a view is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallMeta {
    /// The edge id.
    pub edge: String,
    /// The capability id.
    pub capability: String,
    /// The providing system id.
    pub provider: String,
    /// The call's trace id.
    pub trace_id: String,
}

impl CallMeta {
    /// Meta of a gateway result (the trace id is the result's).
    pub fn of(edge: &str, capability: &str, provider: &str, result: &CallResult) -> Self {
        let trace_id = match result {
            CallResult::Connected { trace_id, .. } | CallResult::NotConnected { trace_id, .. } => {
                trace_id.clone()
            }
        };
        Self {
            edge: edge.to_string(),
            capability: capability.to_string(),
            provider: provider.to_string(),
            trace_id,
        }
    }
}

fn outcome(answer: Result<&Redacted<Data>, &NotConnected>) -> CallOutcomeView {
    match answer {
        Ok(_) => CallOutcomeView::Connected,
        Err(nc) => CallOutcomeView::NotConnected {
            reason: nc.reason,
            detail: nc.detail.clone(),
        },
    }
}

/// Untrusted text as the browser shows it: clipped, inert, "from <peer>,
/// unverified". The only place an [`Untrusted`] becomes a browser DTO.
pub fn untrusted_text(u: &Untrusted, max: usize) -> UntrustedText {
    UntrustedText {
        text: clip(u.as_data(), max),
        from: u.from().to_string(),
    }
}

/// Longest untrusted text the envelope inspector shows.
pub const INSPECTOR_TEXT_MAX: usize = 500;

/// A redacted answer as the envelope inspector shows it: the real shape,
/// with only the whitelisted fields, masked values masked, rounded ones
/// rounded, and free text as `{"untrusted": {"text", "from"}}` (which the
/// canvas renders as inert text).
pub fn inspector_payload(answer: Redacted<Data>) -> serde_json::Value {
    fn json(d: Data) -> serde_json::Value {
        use serde_json::Value;
        match d {
            Data::Null => Value::Null,
            Data::Bool(b) => Value::Bool(b),
            Data::Number(n) => Value::Number(n),
            Data::Text(t) => Value::String(t),
            Data::Untrusted(u) => serde_json::json!({
                "untrusted": untrusted_text(&u, INSPECTOR_TEXT_MAX)
            }),
            Data::List(items) => Value::Array(items.into_iter().map(json).collect()),
            Data::Map(m) => Value::Object(m.into_iter().map(|(k, v)| (k, json(v))).collect()),
        }
    }
    json(answer.inner)
}

/// A count as a peer sends it: an integer, or (A2A data parts carry
/// numbers as doubles) a whole, non-negative double.
fn count_of(d: &Data) -> Option<u64> {
    match d {
        Data::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0 && f.fract() == 0.0 && *f < 9.0e15)
                .map(|f| f as u64)
        }),
        _ => None,
    }
}

/// What a data-share drawer shows: the groups' key, value and count, as
/// far as the contract keeps them (a masked or bucketed value is text and
/// not a number, so it shows as no value; free text never becomes a key).
pub fn query_view(
    meta: CallMeta,
    answer: Result<&Redacted<Data>, &NotConnected>,
) -> Redacted<QueryResultView> {
    let (rows, row_count) = match answer {
        Ok(r) => {
            let d = r.get();
            let rows = d
                .get("groups")
                .map(Data::items)
                .unwrap_or_default()
                .iter()
                .take(MAX_ROWS)
                .map(|g| QueryRow {
                    key: match g.get("key") {
                        Some(Data::Text(s)) => Some(clip(s, MAX_TEXT_CHARS)),
                        Some(Data::Number(n)) => Some(n.to_string()),
                        Some(Data::Bool(b)) => Some(b.to_string()),
                        _ => None,
                    },
                    value: g.get("value").and_then(Data::as_f64),
                    count: g.get("count").and_then(count_of).unwrap_or(0),
                })
                .collect();
            (rows, d.get("row_count").and_then(count_of))
        }
        Err(_) => (Vec::new(), None),
    };
    Redacted::new(QueryResultView {
        edge: meta.edge,
        capability: meta.capability,
        provider: meta.provider,
        trace_id: meta.trace_id,
        outcome: outcome(answer),
        rows,
        row_count,
    })
}

/// Labels of well-known consult fields; others get their name, humanised.
/// Facts are listed in this order, then the others by name.
const FACT_LABELS: [(&str, &str); 10] = [
    ("ticket_id", "Ticket"),
    ("department", "Department"),
    ("budget", "Budget"),
    ("spent", "Spent"),
    ("remaining", "Remaining"),
    ("category", "Category"),
    ("priority", "Priority"),
    ("confidence", "Confidence"),
    ("requires_human_review", "Needs human review"),
    ("reason_codes", "Reason codes"),
];

fn humanise(key: &str) -> String {
    let spaced = key.replace(['_', '-'], " ");
    let mut c = spaced.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A scalar (or a list of scalars) as a fact's value; free text, maps and
/// nulls are not facts.
fn fact_value(d: &Data) -> Option<String> {
    match d {
        Data::Text(s) => Some(clip(s, MAX_TEXT_CHARS)),
        Data::Number(n) => n.as_f64().map(format_number),
        Data::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
        Data::List(items) => {
            let words: Vec<String> = items
                .iter()
                .take(20)
                .filter_map(|i| match i {
                    Data::Text(s) => Some(clip(s, 64)),
                    Data::Number(n) => n.as_f64().map(format_number),
                    _ => None,
                })
                .collect();
            (!words.is_empty()).then(|| words.join(", "))
        }
        Data::Null | Data::Map(_) | Data::Untrusted(_) => None,
    }
}

/// The kept scalar fields of a consult answer as label/value pairs.
fn facts(d: &Data) -> Vec<Fact> {
    let Data::Map(m) = d else {
        return Vec::new();
    };
    let known = FACT_LABELS.iter().map(|(k, l)| (*k, (*l).to_string()));
    let others = m
        .keys()
        .filter(|k| !FACT_LABELS.iter().any(|(f, _)| f == k))
        .filter(|k| !matches!(k.as_str(), "answer" | "proposed_actions"))
        .map(|k| (k.as_str(), humanise(k)));
    known
        .chain(others)
        .filter_map(|(key, label)| {
            Some(Fact {
                label,
                value: fact_value(m.get(key)?)?,
            })
        })
        .collect()
}

/// The answer a consult drawer shows: the answer's own `answer` text, else
/// one sentence from a classification (category, priority, review, and the
/// ticket's subject when the contract keeps it). Either way the peer's
/// words: shown as untrusted text from the provider.
fn answer_of(d: &Data, provider: &str) -> Option<UntrustedText> {
    match d.get("answer") {
        Some(Data::Untrusted(u)) => return Some(untrusted_text(u, MAX_ANSWER_CHARS)),
        Some(Data::Text(s)) => {
            return Some(untrusted_text(
                &Untrusted::new(s.as_str(), provider),
                MAX_ANSWER_CHARS,
            ))
        }
        _ => {}
    }
    let word = |k: &str| d.get(k).and_then(Data::as_text).map(|s| clip(s, 64));
    let category = word("category")?;
    let mut text = String::new();
    if let Some(subject) = d.get("subject").and_then(Data::as_untrusted) {
        text.push_str(&format!("“{}”: ", clip(subject.as_data(), MAX_TEXT_CHARS)));
    }
    text.push_str(&match word("priority") {
        Some(p) => format!("classified as {category}, {p} priority."),
        None => format!("classified as {category}."),
    });
    if matches!(d.get("requires_human_review"), Some(Data::Bool(true))) {
        text.push_str(" A person should review it.");
    }
    let mut c = text.chars();
    let text = match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => text,
    };
    Some(UntrustedText {
        text,
        from: provider.to_string(),
    })
}

/// What a consult drawer shows: the answer as untrusted text, the kept
/// scalar fields as facts, and the proposals as the asker's inbox stored
/// them (`proposed_actions`: built by the BFF from the entries that
/// [`super::proposed_actions`] of this answer made).
pub fn consult_view(
    meta: CallMeta,
    answer: Result<&Redacted<Data>, &NotConnected>,
    proposed_actions: Vec<ProposedActionView>,
) -> Redacted<ConsultView> {
    let (text, facts) = match answer {
        Ok(r) => (answer_of(r.get(), &meta.provider), facts(r.get())),
        Err(_) => (None, Vec::new()),
    };
    Redacted::new(ConsultView {
        outcome: outcome(answer),
        edge: meta.edge,
        capability: meta.capability,
        provider: meta.provider,
        trace_id: meta.trace_id,
        answer: text,
        facts,
        proposed_actions,
    })
}

/// One recorded negotiation turn, redacted, as the contracts view takes it.
#[derive(Debug)]
pub struct TurnInput {
    /// The turn's order.
    pub seq: i64,
    /// When it finished.
    pub at: String,
    /// Its negotiation.
    pub context_id: String,
    /// The consumer's message (redacted as `{"reply": <message>}` with the
    /// negotiation's contract, from the consumer).
    pub sent: Result<Redacted<Data>, NotConnected>,
    /// The provider's answer, or why there was none.
    pub answer: Result<Redacted<Data>, NotConnected>,
}

/// One consumer's part of the contracts view.
#[derive(Debug)]
pub struct PartyInput {
    /// The consuming system.
    pub consumer: String,
    /// Whether it is the hub.
    pub is_hub: bool,
    /// Whether a rule lets it negotiate.
    pub may_negotiate: bool,
    /// The derived state and its sentence.
    pub state: app::dto::RunState,
    /// What the state means.
    pub state_detail: String,
    /// The newest grant (a redacted answer carrying `grant`), and whether
    /// it has expired.
    pub contract: Option<(Redacted<Data>, bool)>,
    /// The newest negotiation's turns, in order.
    pub turns: Vec<TurnInput>,
}

/// A negotiation message out of a redacted `{"reply": ...}`.
fn message_view(d: &Data) -> Option<app::dto::NegotiationMessageView> {
    let reply = d.get("reply")?;
    let scope = reply.get("scope");
    Some(app::dto::NegotiationMessageView {
        from: String::new(),
        intent: reply.get("intent")?.as_text()?.to_string(),
        columns: scope
            .map(|s| {
                s.get("columns")
                    .map(|c| {
                        c.items()
                            .iter()
                            .filter_map(|i| i.as_text().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .unwrap_or_default(),
        retention_days: scope
            .and_then(|s| s.get("retention_days"))
            .and_then(Data::as_f64),
        purpose: scope
            .and_then(|s| s.get("purpose"))
            .and_then(Data::as_untrusted)
            .map(|u| untrusted_text(u, MAX_TEXT_CHARS)),
        rationale: reply
            .get("rationale")
            .and_then(Data::as_untrusted)
            .map(|u| untrusted_text(u, MAX_TEXT_CHARS)),
    })
}

/// What a data-share edge's drawer shows about its data contracts, built
/// only from redacted turns (the negotiation capability's contract keeps
/// intents, column names, retention and the grant's id and expiry; the
/// purpose and rationale are untrusted text of the side that wrote them).
pub fn contracts_view(
    edge: &str,
    capability: &str,
    provider: &str,
    negotiation: Option<String>,
    parties: Vec<PartyInput>,
) -> Redacted<app::dto::ContractsView> {
    let parties = parties
        .into_iter()
        .map(|p| {
            let contract = p.contract.and_then(|(d, expired)| {
                let g = d.get().get("grant")?;
                Some(app::dto::ContractSummaryView {
                    contract_id: g.get("contract_id")?.as_text()?.to_string(),
                    columns: g
                        .get("columns")
                        .map(|c| {
                            c.items()
                                .iter()
                                .filter_map(|i| i.as_text().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                    purpose: g
                        .get("purpose")
                        .and_then(Data::as_untrusted)
                        .map(|u| untrusted_text(u, MAX_TEXT_CHARS)),
                    retention_days: g.get("retention_days").and_then(Data::as_f64),
                    expires_at: g
                        .get("expires_at")
                        .and_then(Data::as_text)
                        .map(str::to_string),
                    expired,
                })
            });
            let transcript = p
                .turns
                .into_iter()
                .filter_map(|t| {
                    let mut sent = message_view(t.sent.as_ref().ok()?.get())?;
                    sent.from.clone_from(&p.consumer);
                    let (reply, grant_id, failure) = match &t.answer {
                        Ok(a) => {
                            let reply = message_view(a.get()).map(|mut m| {
                                m.from = provider.to_string();
                                m
                            });
                            let grant = a
                                .get()
                                .get("grant")
                                .and_then(|g| g.get("contract_id"))
                                .and_then(Data::as_text)
                                .map(str::to_string);
                            (reply, grant, None)
                        }
                        Err(nc) => (
                            None,
                            None,
                            Some(CallOutcomeView::NotConnected {
                                reason: nc.reason,
                                detail: clip(&nc.detail, MAX_ANSWER_CHARS),
                            }),
                        ),
                    };
                    Some(app::dto::TurnView {
                        seq: t.seq,
                        at: t.at,
                        context_id: t.context_id,
                        sent,
                        reply,
                        grant_id,
                        failure,
                    })
                })
                .collect();
            app::dto::PartyContractView {
                consumer: p.consumer,
                is_hub: p.is_hub,
                may_negotiate: p.may_negotiate,
                contract,
                state: p.state,
                state_detail: p.state_detail,
                transcript,
            }
        })
        .collect();
    Redacted::new(app::dto::ContractsView {
        edge: edge.to_string(),
        capability: capability.to_string(),
        provider: provider.to_string(),
        negotiation,
        parties,
    })
}
