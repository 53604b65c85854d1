//! `ticket_classify`: classifies a support ticket by keyword rules.
//!
//! Input `{"ticket_id": "T-1003"}` (looked up in the `tickets` table),
//! `{"subject": "...", "content": "..."}`, or `{"question": "..."}` alone:
//! what a text-only A2A message becomes and what the hub's consult drawer
//! sends. A question is classified as the ticket's subject and content
//! together (the rules read `subject + content` as one text), unless it
//! names a ticket id (`classify T-1003`), which is then looked up. Output,
//! as in the task contract of the design notes:
//!
//! ```json
//! {"ticket_id": "T-1003", "subject": "Charged twice for invoice INV-4821",
//!  "category": "billing", "priority": "high",
//!  "confidence": 0.74, "requires_human_review": true,
//!  "reason_codes": ["duplicate_charge", "refund_request"]}
//! ```
//!
//! `subject` is the ticket's title as the classifier read it (at most 300
//! characters; `null` when the input had none): free text written by
//! whoever filed the ticket, which the data contract marks untrusted.
//!
//! # Rules
//! The text is `subject + " " + content`, lowercased. Each *signal* below
//! fires when any of its keywords occurs as a substring (English, plus a few
//! Chinese terms from the contract's own example):
//!
//! | category | signal (reason code) | keywords |
//! |---|---|---|
//! | access_control | permission_denied | 403, forbidden, permission denied, access denied, not authorized, unauthorized, 权限 |
//! | access_control | login_failure | log in, login, sign in, signin, 登录 |
//! | access_control | admin_scope | admin, administrator, 管理后台 |
//! | access_control | security_incident | breach, hacked, compromised, leaked |
//! | billing | invoice_issue | invoice, billing, bill, subscription plan, 账单 |
//! | billing | duplicate_charge | charged twice, double charge, duplicate charge |
//! | billing | refund_request | refund, 退款 |
//! | outage | service_down | outage, is down, unavailable, not responding, 503, 502, 500 error, 宕机 |
//! | outage | degraded_performance | time out, timeout, slow, latency |
//! | outage | widespread_impact | all users, everyone, production, entire, 所有 |
//! | feature_request | enhancement | feature request, would be great, please add, would like, roadmap, support for |
//! | account | password_reset | password, reset link, 密码 |
//! | account | account_locked | locked out, account locked |
//! | account | mfa | 2fa, mfa, two-factor |
//! | account | data_export | export, gdpr |
//!
//! * **Category**: the one with the most fired signals; ties go to the
//!   earlier of outage, access_control, billing, account, feature_request.
//!   `widespread_impact` and `admin_scope` only count when another signal of
//!   their category fired. No signal → `other` with `no_rule_matched`.
//! * **Priority**: critical for an outage with widespread_impact or any
//!   security_incident; high for any other outage, access_control with
//!   admin_scope or permission_denied, or a duplicate_charge; low for
//!   feature_request and other; medium otherwise. "urgent", "asap",
//!   "紧急" or "immediately" raise it one step.
//! * **Confidence**: 0.5 + 0.12 per fired signal of the category, − 0.1 when
//!   a second category also fired, clamped to 0.3–0.95; 0.3 for other.
//! * **Human review** when priority is high or critical, confidence < 0.6,
//!   the category is other, or admin_scope / data_export fired (privileges
//!   and data leaving need a person).
//! * **Reason codes**: the fired signals of the chosen category, in table
//!   order.

use super::{object_with, opt_str, round2, SkillError, SkillOutput};
use serde_json::{json, Value};
use sqlx::SqlitePool;

type Signal = (&'static str, &'static str, &'static [&'static str]);

const SIGNALS: &[Signal] = &[
    (
        "access_control",
        "permission_denied",
        &[
            "403",
            "forbidden",
            "permission denied",
            "access denied",
            "not authorized",
            "unauthorized",
            "权限",
        ],
    ),
    (
        "access_control",
        "login_failure",
        &["log in", "login", "sign in", "signin", "登录"],
    ),
    (
        "access_control",
        "admin_scope",
        &["admin", "administrator", "管理后台"],
    ),
    (
        "access_control",
        "security_incident",
        &["breach", "hacked", "compromised", "leaked"],
    ),
    (
        "billing",
        "invoice_issue",
        &["invoice", "billing", "bill ", "subscription plan", "账单"],
    ),
    (
        "billing",
        "duplicate_charge",
        &["charged twice", "double charge", "duplicate charge"],
    ),
    ("billing", "refund_request", &["refund", "退款"]),
    (
        "outage",
        "service_down",
        &[
            "outage",
            "is down",
            "unavailable",
            "not responding",
            "503",
            "502",
            "500 error",
            "宕机",
        ],
    ),
    (
        "outage",
        "degraded_performance",
        &["time out", "timeout", "slow", "latency"],
    ),
    (
        "outage",
        "widespread_impact",
        &["all users", "everyone", "production", "entire", "所有"],
    ),
    (
        "feature_request",
        "enhancement",
        &[
            "feature request",
            "would be great",
            "please add",
            "would like",
            "roadmap",
            "support for",
        ],
    ),
    (
        "account",
        "password_reset",
        &["password", "reset link", "密码"],
    ),
    (
        "account",
        "account_locked",
        &["locked out", "account locked"],
    ),
    ("account", "mfa", &["2fa", "mfa", "two-factor"]),
    ("account", "data_export", &["export", "gdpr"]),
];
/// Tie-break order of categories.
const CATEGORY_ORDER: [&str; 5] = [
    "outage",
    "access_control",
    "billing",
    "account",
    "feature_request",
];
/// Signals that only support a category, never make one on their own.
const SUPPORTING: [&str; 2] = ["widespread_impact", "admin_scope"];
const PRIORITIES: [&str; 4] = ["low", "medium", "high", "critical"];

/// A classification (the skill's result without the ticket id).
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    /// access_control, billing, outage, feature_request, account or other.
    pub category: &'static str,
    /// low, medium, high or critical.
    pub priority: &'static str,
    /// 0.0 to 1.0.
    pub confidence: f64,
    /// Whether a person must look before anything happens.
    pub requires_human_review: bool,
    /// The fired signals of the category.
    pub reason_codes: Vec<&'static str>,
}

/// Classifies a subject and content by the rules of the module doc.
pub fn classify(subject: &str, content: &str) -> Classification {
    let text = format!("{subject} {content} ").to_lowercase();
    let fired: Vec<&Signal> = SIGNALS
        .iter()
        .filter(|(_, _, kws)| kws.iter().any(|k| text.contains(k)))
        .collect();
    let score = |cat: &str| {
        let of_cat: Vec<&&Signal> = fired.iter().filter(|s| s.0 == cat).collect();
        if of_cat.iter().all(|s| SUPPORTING.contains(&s.1)) {
            0
        } else {
            of_cat.len()
        }
    };
    let mut best: Option<(&'static str, usize)> = None;
    let mut categories_fired = 0;
    for cat in CATEGORY_ORDER {
        let n = score(cat);
        if n > 0 {
            categories_fired += 1;
            if best.is_none_or(|(_, b)| n > b) {
                best = Some((cat, n));
            }
        }
    }
    let urgent = ["urgent", "asap", "immediately", "紧急"]
        .iter()
        .any(|k| text.contains(k));
    let Some((category, n)) = best else {
        return Classification {
            category: "other",
            priority: if urgent { "medium" } else { "low" },
            confidence: 0.3,
            requires_human_review: true,
            reason_codes: vec!["no_rule_matched"],
        };
    };
    let codes: Vec<&'static str> = fired
        .iter()
        .filter(|s| s.0 == category)
        .map(|s| s.1)
        .collect();
    let has = |code: &str| codes.contains(&code);
    let mut level = match category {
        "outage" if has("widespread_impact") => 3,
        "outage" => 2,
        "access_control" if has("security_incident") => 3,
        "access_control" if has("admin_scope") || has("permission_denied") => 2,
        "billing" if has("duplicate_charge") => 2,
        "feature_request" => 0,
        _ => 1,
    };
    if urgent {
        level = (level + 1).min(3);
    }
    let mut confidence = 0.5 + 0.12 * n as f64;
    if categories_fired > 1 {
        confidence -= 0.1;
    }
    let confidence = round2(confidence.clamp(0.3, 0.95));
    let priority = PRIORITIES[level];
    Classification {
        category,
        priority,
        confidence,
        requires_human_review: level >= 2
            || confidence < 0.6
            || has("admin_scope")
            || has("data_export"),
        reason_codes: codes,
    }
}

/// The skill: resolves the input to a text, classifies it.
pub async fn classify_input(pool: &SqlitePool, input: &Value) -> Result<SkillOutput, SkillError> {
    let obj = object_with(input, &["ticket_id", "subject", "content", "question"])?;
    let mut ticket_id = opt_str(obj, "ticket_id")?.map(|s| s.trim().to_ascii_uppercase());
    let question = opt_str(obj, "question")?;
    if ticket_id.is_none() {
        // A text-only message ("classify T-1003 please") names its ticket.
        ticket_id = question.and_then(find_ticket_id);
    }
    let (subject, content) = match &ticket_id {
        Some(id) => {
            let row: Option<(String, String)> =
                sqlx::query_as("SELECT subject, content FROM tickets WHERE ticket_id = ?")
                    .bind(id)
                    .fetch_optional(pool)
                    .await?;
            match row {
                Some(r) => r,
                None => {
                    let range: (Option<String>, Option<String>) =
                        sqlx::query_as("SELECT MIN(ticket_id), MAX(ticket_id) FROM tickets")
                            .fetch_one(pool)
                            .await?;
                    return Err(SkillError::invalid(
                        "unknown_ticket",
                        format!(
                            "unknown ticket_id {id:?}; known ids: {}..{}",
                            range.0.unwrap_or_default(),
                            range.1.unwrap_or_default()
                        ),
                    ));
                }
            }
        }
        None => {
            let subject = opt_str(obj, "subject")?.unwrap_or("").to_string();
            let content = [opt_str(obj, "content")?, question]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            if subject.trim().is_empty() && content.trim().is_empty() {
                return Err(SkillError::invalid(
                    "missing_field",
                    "ticket.classify needs `ticket_id`, or `subject` and/or `content`",
                ));
            }
            (subject, content)
        }
    };
    if subject.len() + content.len() > 20_000 {
        return Err(SkillError::invalid(
            "too_long",
            "subject and content must be at most 20000 bytes together",
        ));
    }
    let c = classify(&subject, &content);
    let text = format!(
        "{}{} ({} priority, confidence {:.2}{}): {}",
        ticket_id
            .as_deref()
            .map(|t| format!("{t}: "))
            .unwrap_or_default(),
        c.category,
        c.priority,
        c.confidence,
        if c.requires_human_review {
            ", needs human review"
        } else {
            ""
        },
        c.reason_codes.join(", ")
    );
    let subject = subject.trim();
    let subject_out = (!subject.is_empty()).then(|| subject.chars().take(300).collect::<String>());
    let result = json!({
        "ticket_id": ticket_id,
        "subject": subject_out,
        "category": c.category,
        "priority": c.priority,
        "confidence": c.confidence,
        "requires_human_review": c.requires_human_review,
        "reason_codes": c.reason_codes,
    });
    Ok(SkillOutput { result, text })
}

/// `T-1234` anywhere in a text.
fn find_ticket_id(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .map(|w| w.to_ascii_uppercase())
        .find(|w| {
            w.strip_prefix("T-").is_some_and(|d| {
                !d.is_empty() && d.len() <= 9 && d.bytes().all(|b| b.is_ascii_digit())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DatasetConfig;
    use crate::datasets::{ensure_seeded, generate_tickets};

    #[test]
    fn the_contract_example_is_access_control_high_with_review() {
        let c = classify("无法登录管理后台", "昨天开始持续返回 403");
        assert_eq!(c.category, "access_control");
        assert_eq!(c.priority, "high");
        assert_eq!(c.confidence, 0.86);
        assert!(c.requires_human_review);
        assert_eq!(
            c.reason_codes,
            ["permission_denied", "login_failure", "admin_scope"]
        );
    }

    #[test]
    fn fixed_texts() {
        let c = classify(
            "Charged twice for invoice INV-1234",
            "Please refund the duplicate charge.",
        );
        assert_eq!((c.category, c.priority), ("billing", "high"));
        assert_eq!(
            c.reason_codes,
            ["invoice_issue", "duplicate_charge", "refund_request"]
        );

        let c = classify("API is down", "All users get a 503 since this morning");
        assert_eq!((c.category, c.priority), ("outage", "critical"));
        assert!(c.requires_human_review);

        let c = classify("Slow dashboard", "Pages are slow to load");
        assert_eq!((c.category, c.priority), ("outage", "high"));

        let c = classify(
            "Feature request: dark mode",
            "It would be great to have dark mode",
        );
        assert_eq!((c.category, c.priority), ("feature_request", "low"));
        assert!(!c.requires_human_review, "{c:?}");

        let c = classify("Password reset link not working", "I am locked out");
        assert_eq!((c.category, c.priority), ("account", "medium"));
        assert_eq!(c.reason_codes, ["password_reset", "account_locked"]);

        let c = classify("Change of address", "Please update our postal address");
        assert_eq!(
            (c.category, c.priority, c.confidence),
            ("other", "low", 0.3)
        );
        assert_eq!(c.reason_codes, ["no_rule_matched"]);

        let c = classify("Feature request", "urgent: please add SSO");
        assert_eq!(c.priority, "medium", "urgent raises one step");

        // "admin" alone does not make an access problem.
        let c = classify("Admin question", "Where is the admin guide?");
        assert_eq!(c.category, "other");
    }

    #[tokio::test]
    async fn lookup_by_id_and_errors() {
        let pool = exchange::db::memory_sqlite().await.unwrap();
        ensure_seeded(&pool, &DatasetConfig::Tickets { seed: 42, rows: 40 })
            .await
            .unwrap();
        let tickets = generate_tickets(42, 40);
        let out = classify_input(&pool, &json!({"ticket_id": "T-1003"}))
            .await
            .unwrap();
        let want = classify(&tickets[2].subject, &tickets[2].content);
        assert_eq!(out.result["ticket_id"], "T-1003");
        assert_eq!(out.result["category"], want.category);
        assert_eq!(out.result["category"], "billing");
        assert_eq!(out.result["confidence"].as_f64(), Some(want.confidence));
        let out = classify_input(&pool, &json!({"question": "please classify t-1001"}))
            .await
            .unwrap();
        assert_eq!(out.result["ticket_id"], "T-1001");
        assert_eq!(out.result["category"], "access_control");
        // A bare question (the hub's consult drawer) is the ticket's text.
        let text = "Our admin console returns 403 for everyone since the upgrade";
        let out = classify_input(&pool, &json!({ "question": text }))
            .await
            .unwrap();
        let want = classify(text, "");
        assert_eq!(out.result["ticket_id"], Value::Null);
        assert_eq!(out.result["category"], "access_control");
        assert_eq!(out.result["category"], want.category);
        assert_eq!(out.result["priority"], want.priority);
        assert_eq!(
            out.result["reason_codes"],
            json!(["permission_denied", "admin_scope"])
        );
        let e = classify_input(&pool, &json!({"ticket_id": "T-9999"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown ticket_id \"T-9999\"; known ids: T-1001..T-1043"
        );
        let out = classify_input(
            &pool,
            &json!({"subject": "Invoice wrong", "content": "refund please"}),
        )
        .await
        .unwrap();
        assert_eq!(out.result["ticket_id"], Value::Null);
        assert_eq!(out.result["category"], "billing");
        assert!(classify_input(&pool, &json!({})).await.is_err());
        assert!(classify_input(&pool, &json!({"subject": 1}))
            .await
            .unwrap_err()
            .to_string()
            .contains("`subject`"));
    }
}
