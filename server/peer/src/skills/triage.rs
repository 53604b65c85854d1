//! `ticket_triage`: the Helpdesk's task-style skill (DESIGN.md §2 "task",
//! §6 "task lifecycle"; seed `004`, the task contract).
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
mod tests {
    use super::*;
    use crate::config::DatasetConfig;
    use crate::datasets::{ensure_seeded, generate_tickets};

    #[test]
    fn queues_and_slas_follow_the_classification() {
        let cases = [
            // (subject, content, category, priority, queue, sla)
            (
                "无法登录管理后台",
                "昨天开始持续返回 403",
                "access_control",
                Priority::High,
                "identity-access",
                4,
            ),
            (
                "Account compromised",
                "Our admin login was hacked, we see a breach",
                "access_control",
                Priority::Critical,
                "security-response",
                1,
            ),
            (
                "API is down",
                "All users get a 503 since this morning",
                "outage",
                Priority::Critical,
                "incident-response",
                1,
            ),
            (
                "Charged twice for invoice INV-1234",
                "Please refund the duplicate charge.",
                "billing",
                Priority::High,
                "billing",
                4,
            ),
            (
                "Password reset link not working",
                "I am locked out",
                "account",
                Priority::Medium,
                "account-services",
                24,
            ),
            (
                "Feature request: dark mode",
                "It would be great to have dark mode",
                "feature_request",
                Priority::Low,
                "product-feedback",
                72,
            ),
            (
                "Change of address",
                "Please update our postal address",
                "other",
                Priority::Low,
                "general-support",
                72,
            ),
        ];
        for (subject, content, category, priority, queue, sla) in cases {
            let t = triage_text(subject, content);
            assert_eq!(t.classification, classify(subject, content), "{subject}");
            assert_eq!(t.classification.category, category, "{subject}");
            assert_eq!(t.priority, priority, "{subject}");
            assert_eq!(t.queue.as_str(), queue, "{subject}");
            assert_eq!(t.sla_hours, sla, "{subject}");
        }
        // A more urgent ticket never gets a longer SLA.
        let order = [
            Priority::Low,
            Priority::Medium,
            Priority::High,
            Priority::Critical,
        ];
        for pair in order.windows(2) {
            assert!(pair[0].sla_hours() > pair[1].sla_hours(), "{pair:?}");
        }
    }

    #[test]
    fn inputs_are_checked_field_by_field() {
        assert_eq!(
            parse_input(&json!({"ticket_id": "T-1003"})).unwrap(),
            TriageInput {
                ticket_id: "T-1003".into(),
                work_ms: None
            }
        );
        // Numbers cross A2A as doubles.
        assert_eq!(
            parse_input(&json!({"ticket_id": "T-1003", "work_ms": 250.0}))
                .unwrap()
                .work_ms,
            Some(250)
        );
        let code = |input: Value| match parse_input(&input) {
            Err(SkillError::InvalidParams { code, message }) => (code, message),
            other => panic!("{input} was accepted: {other:?}"),
        };
        let (c, m) = code(json!({}));
        assert_eq!(c, "missing_field");
        assert!(m.contains("`ticket_id` is required"), "{m}");
        assert_eq!(code(json!({"ticket_id": "T-12"})).0, "bad_ticket_id");
        assert_eq!(code(json!({"ticket_id": "T-12345"})).0, "bad_ticket_id");
        assert_eq!(code(json!({"ticket_id": "t-1003"})).0, "bad_ticket_id");
        assert_eq!(code(json!({"ticket_id": 1003})).0, "wrong_type");
        for bad in [json!(-1), json!(60_001), json!(2.5), json!("fast")] {
            let (c, m) = code(json!({"ticket_id": "T-1003", "work_ms": bad}));
            assert_eq!(c, "bad_work_ms");
            assert!(m.contains("`work_ms`"), "{m}");
        }
        assert_eq!(
            code(json!({"ticket_id": "T-1003", "priority": "high"})).0,
            "unknown_field"
        );
        assert_eq!(code(json!("T-1003")).0, "input_not_object");
    }

    #[test]
    fn deadlines_are_capped_and_defaulted() {
        let now = DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        // Absent: now + the cap.
        let d = deadline(None, now, 30_000).unwrap();
        assert_eq!((d.at, d.capped), (at("2026-03-01T12:00:30Z"), true));
        assert_eq!(d.to_rfc3339(), "2026-03-01T12:00:30.000Z");
        assert_eq!(deadline(Some(&Value::Null), now, 30_000).unwrap(), d);
        // Sooner than the cap: kept, in UTC whatever the offset.
        let d = deadline(Some(&json!("2026-03-01T13:00:10+01:00")), now, 30_000).unwrap();
        assert_eq!((d.at, d.capped), (at("2026-03-01T12:00:10Z"), false));
        // Later than the cap: capped.
        let d = deadline(Some(&json!("2026-03-02T00:00:00Z")), now, 30_000).unwrap();
        assert_eq!((d.at, d.capped), (at("2026-03-01T12:00:30Z"), true));
        // Exactly the cap is not "capped".
        let d = deadline(Some(&json!("2026-03-01T12:00:30Z")), now, 30_000).unwrap();
        assert!(!d.capped);
        // Already past: kept (the task fails at once).
        let d = deadline(Some(&json!("2026-03-01T11:00:00Z")), now, 30_000).unwrap();
        assert_eq!(d.at, at("2026-03-01T11:00:00Z"));
        assert_eq!(
            deadline(Some(&json!("tomorrow")), now, 30_000),
            Err(DeadlineError::NotRfc3339)
        );
        assert_eq!(
            deadline(Some(&json!(1_700_000_000)), now, 30_000),
            Err(DeadlineError::NotAString("number"))
        );
    }

    #[tokio::test]
    async fn a_seeded_ticket_is_triaged_with_its_requester() {
        let pool = exchange::db::memory_sqlite().await.unwrap();
        ensure_seeded(&pool, &DatasetConfig::Tickets { seed: 42, rows: 40 })
            .await
            .unwrap();
        let generated = generate_tickets(42, 40);
        let ticket = find_ticket(&pool, "T-1003").await.unwrap().unwrap();
        let out = triage(&ticket);
        let want = classify(&generated[2].subject, &generated[2].content);
        assert_eq!(out.result["ticket_id"], "T-1003");
        assert_eq!(out.result["subject"], generated[2].subject.as_str());
        assert_eq!(out.result["category"], want.category);
        assert_eq!(out.result["category"], "billing");
        assert_eq!(out.result["priority"], want.priority);
        assert_eq!(out.result["queue"], "billing");
        assert_eq!(out.result["sla_hours"], 4);
        assert_eq!(
            out.result["requester_email"],
            generated[2].requester_email.as_str()
        );
        assert!(out.text.starts_with("T-1003: billing"), "{}", out.text);
        assert_eq!(find_ticket(&pool, "T-9999").await.unwrap(), None);
        // The id is bound, not interpolated.
        assert_eq!(find_ticket(&pool, "T-1003' OR '1'='1").await.unwrap(), None);
    }
}
