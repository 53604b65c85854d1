//! `ticket_triage`: the Helpdesk's task-style skill (DESIGN.md §2 "task",
//! §6 "task lifecycle"; the task contract).
//!
//! Triage is long-running work: the executor answers a `ticket.triage`
//! call with an A2A task (`crate::executor`), under the caller's
//! idempotency key (the message's `messageId`) and a deadline (the
//! message's metadata `deadline`, capped by the skill's
//! `max_deadline_ms`). This module holds what the task decides, none of
//! its lifecycle:
//!
//! * the **input**: `{"ticket_id": "T-1234", "work_ms": 1500}` (the id as
//!   `^T-[0-9]{4}$`, `work_ms` an optional integer 0..=60000): a wrong one
//!   rejects the task, naming the field ([`parse_input`]);
//! * the **deadline** a task lives under ([`deadline`]);
//! * the **triage** of a ticket in the `tickets` table ([`find_ticket`],
//!   [`triage`]): the classification is `ticket_classify`'s
//!   ([`super::tickets::classify`], the same rules, not a copy), plus a
//!   queue and an SLA:
//!
//! | category | queue |
//! |---|---|
//! | access_control | `identity-access` (`security-response` when security_incident fired) |
//! | billing | `billing` |
//! | outage | `incident-response` |
//! | feature_request | `product-feedback` |
//! | account | `account-services` |
//! | other | `general-support` |
//!
//! | priority | SLA (hours) |
//! |---|---|
//! | critical | 1 |
//! | high | 4 |
//! | medium | 24 |
//! | low | 72 |
//!
//! The result (the task's `result` artifact, the topology's response
//! schema):
//!
//! ```json
//! {"ticket_id": "T-1003", "subject": "Charged twice for invoice INV-4821",
//!  "category": "billing", "priority": "high", "queue": "billing",
//!  "sla_hours": 4, "requester_email": "ada.silva@example.com"}
//! ```
//!
//! `subject` is the ticket's title (free text, untrusted, at most 300
//! characters); `requester_email` is personal data the hub masks.

use super::tickets::{classify, Classification};
use super::{object_with, SkillError, SkillOutput};
use crate::config::MAX_WORK_MS;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};
use sqlx::SqlitePool;

/// What a triage call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriageInput {
    /// `T-` and four digits.
    pub ticket_id: String,
    /// How long the work takes; the skill's `work_ms` when absent.
    pub work_ms: Option<u64>,
}

/// Reads and checks a triage input. Every error names the field and what
/// it must be (the caller gets the message, the trail the code).
pub fn parse_input(input: &Value) -> Result<TriageInput, SkillError> {
    let obj = object_with(input, &["ticket_id", "work_ms"])?;
    let ticket_id = match obj.get("ticket_id") {
        None | Some(Value::Null) => {
            return Err(SkillError::invalid(
                "missing_field",
                "`ticket_id` is required (T- and four digits, e.g. T-1003)",
            ))
        }
        Some(Value::String(s)) if is_ticket_id(s) => s.clone(),
        Some(Value::String(_)) => {
            return Err(SkillError::invalid(
                "bad_ticket_id",
                "`ticket_id` must match ^T-[0-9]{4}$ (e.g. T-1003)",
            ))
        }
        Some(other) => {
            return Err(SkillError::invalid(
                "wrong_type",
                format!(
                    "`ticket_id` must be a string, got {}",
                    super::json_type(other)
                ),
            ))
        }
    };
    let work_ms = match obj.get("work_ms") {
        None | Some(Value::Null) => None,
        Some(v) => Some(whole_ms(v).ok_or_else(|| {
            SkillError::invalid(
                "bad_work_ms",
                format!("`work_ms` must be an integer between 0 and {MAX_WORK_MS}"),
            )
        })?),
    };
    Ok(TriageInput { ticket_id, work_ms })
}

/// `T-` and exactly four ASCII digits.
fn is_ticket_id(s: &str) -> bool {
    s.strip_prefix("T-")
        .is_some_and(|d| d.len() == 4 && d.bytes().all(|b| b.is_ascii_digit()))
}

/// A whole number of ms within 0..=MAX_WORK_MS. A2A data parts carry
/// numbers as doubles, so `1500.0` is 1500; `1500.5` is not an integer.
fn whole_ms(v: &Value) -> Option<u64> {
    let n = v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..=MAX_WORK_MS as f64).contains(f))
            .map(|f| f as u64)
    })?;
    (n <= MAX_WORK_MS).then_some(n)
}

/// The deadline a task lives under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    /// When the task fails if its work has not finished.
    pub at: DateTime<Utc>,
    /// Whether the caller asked for later (or for nothing) and got the cap.
    pub capped: bool,
}

impl Deadline {
    /// RFC 3339 UTC with milliseconds, as the task's metadata carries it.
    pub fn to_rfc3339(&self) -> String {
        self.at.to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

/// Why a caller's deadline cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeadlineError {
    /// Present but not a string.
    #[error("metadata `deadline` must be a string (RFC 3339, e.g. 2026-01-01T12:00:00Z), got {0}")]
    NotAString(&'static str),
    /// A string that is not an RFC 3339 date-time.
    #[error("metadata `deadline` must be an RFC 3339 time such as 2026-01-01T12:00:00Z")]
    NotRfc3339,
}

/// The deadline of a task submitted at `now`: the caller's `requested`
/// (the message metadata `deadline`, RFC 3339, any offset), capped at
/// `now + max_ms`; absent (or null) → `now + max_ms`. A deadline already
/// past is kept as it is: the task then fails at once, it is not
/// refused.
pub fn deadline(
    requested: Option<&Value>,
    now: DateTime<Utc>,
    max_ms: u64,
) -> Result<Deadline, DeadlineError> {
    let cap = now + chrono::Duration::milliseconds(i64::try_from(max_ms).unwrap_or(i64::MAX));
    let asked = match requested {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(
            DateTime::parse_from_rfc3339(s.trim())
                .map_err(|_| DeadlineError::NotRfc3339)?
                .with_timezone(&Utc),
        ),
        Some(other) => return Err(DeadlineError::NotAString(super::json_type(other))),
    };
    Ok(match asked {
        Some(at) if at <= cap => Deadline { at, capped: false },
        _ => Deadline {
            at: cap,
            capped: true,
        },
    })
}

/// Where a triaged ticket goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queue {
    /// Access problems.
    IdentityAccess,
    /// Breaches, compromised accounts.
    SecurityResponse,
    /// Invoices, charges, refunds.
    Billing,
    /// Outages and degraded service.
    IncidentResponse,
    /// Feature requests.
    ProductFeedback,
    /// Passwords, MFA, exports.
    AccountServices,
    /// Everything else.
    GeneralSupport,
}

impl Queue {
    /// The queue's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Queue::IdentityAccess => "identity-access",
            Queue::SecurityResponse => "security-response",
            Queue::Billing => "billing",
            Queue::IncidentResponse => "incident-response",
            Queue::ProductFeedback => "product-feedback",
            Queue::AccountServices => "account-services",
            Queue::GeneralSupport => "general-support",
        }
    }

    /// The queue for a classification (the module doc's table).
    pub fn for_classification(c: &Classification) -> Self {
        match c.category {
            "access_control" if c.reason_codes.contains(&"security_incident") => {
                Queue::SecurityResponse
            }
            "access_control" => Queue::IdentityAccess,
            "billing" => Queue::Billing,
            "outage" => Queue::IncidentResponse,
            "feature_request" => Queue::ProductFeedback,
            "account" => Queue::AccountServices,
            _ => Queue::GeneralSupport,
        }
    }
}

/// A ticket's priority, as the classifier sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    /// Feature requests, other.
    Low,
    /// The default.
    Medium,
    /// Outages, access problems, duplicate charges.
    High,
    /// Widespread outages, security incidents.
    Critical,
}

impl Priority {
    /// The classifier's spelling read back. The classifier only writes the
    /// four; anything else would be a new rule without an SLA yet, and gets
    /// the default's.
    pub fn of(c: &Classification) -> Self {
        match c.priority {
            "low" => Priority::Low,
            "high" => Priority::High,
            "critical" => Priority::Critical,
            _ => Priority::Medium,
        }
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
            Priority::Critical => "critical",
        }
    }

    /// Hours until a first response is due (the module doc's table).
    pub fn sla_hours(self) -> u32 {
        match self {
            Priority::Critical => 1,
            Priority::High => 4,
            Priority::Medium => 24,
            Priority::Low => 72,
        }
    }
}

/// A triage: the classification, the queue, the SLA.
#[derive(Debug, Clone, PartialEq)]
pub struct Triage {
    /// `ticket_classify`'s answer for the ticket's text.
    pub classification: Classification,
    /// Where the ticket goes.
    pub queue: Queue,
    /// The classification's priority.
    pub priority: Priority,
    /// Hours until a first response is due.
    pub sla_hours: u32,
}

/// Triages a subject and content by the module doc's rules.
pub fn triage_text(subject: &str, content: &str) -> Triage {
    let classification = classify(subject, content);
    let priority = Priority::of(&classification);
    Triage {
        queue: Queue::for_classification(&classification),
        sla_hours: priority.sla_hours(),
        priority,
        classification,
    }
}

/// One ticket of the `tickets` table, as triage reads it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Ticket {
    /// `T-1003`.
    pub ticket_id: String,
    /// One line, untrusted.
    pub subject: String,
    /// The customer's words.
    pub content: String,
    /// Who filed it (personal data).
    pub requester_email: Option<String>,
}

/// The ticket `ticket_id`, if the table holds it (the id is bound, never
/// interpolated).
pub async fn find_ticket(
    pool: &SqlitePool,
    ticket_id: &str,
) -> Result<Option<Ticket>, sqlx::Error> {
    sqlx::query_as(
        "SELECT ticket_id, subject, content, requester_email FROM tickets WHERE ticket_id = ?",
    )
    .bind(ticket_id)
    .fetch_optional(pool)
    .await
}

/// The triage of `ticket` as the task's result (the capability's response
/// schema) and one line for the task's final status message.
pub fn triage(ticket: &Ticket) -> SkillOutput {
    let t = triage_text(&ticket.subject, &ticket.content);
    let subject = ticket.subject.trim();
    let subject_out = (!subject.is_empty()).then(|| subject.chars().take(300).collect::<String>());
    let email = ticket
        .requester_email
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty());
    let result = json!({
        "ticket_id": ticket.ticket_id,
        "subject": subject_out,
        "category": t.classification.category,
        "priority": t.priority.as_str(),
        "queue": t.queue.as_str(),
        "sla_hours": t.sla_hours,
        "requester_email": email,
    });
    let text = format!(
        "{}: {} ({} priority) -> queue {}, first response within {} h",
        ticket.ticket_id,
        t.classification.category,
        t.priority.as_str(),
        t.queue.as_str(),
        t.sla_hours
    );
    SkillOutput { result, text }
}

#[cfg(test)]
#[path = "triage_tests.rs"]
mod tests;
