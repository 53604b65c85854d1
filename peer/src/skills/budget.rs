//! `budget_consult`: answers budget questions from the `budgets` table.
//!
//! Input `{"question": "...", "department": "marketing"}` (either may be
//! omitted, not both). Output:
//!
//! ```json
//! {"department": "marketing", "budget": 120000, "spent": 80000,
//!  "remaining": 40000, "answer": "<one sentence with the numbers>",
//!  "proposed_actions": [{"action_type": "set_budget", "target": "marketing",
//!    "parameters": {"amount": 150000}, "rationale": "..."}]}
//! ```
//!
//! Rules, in order:
//! 1. The department is the explicit `department` field (case-insensitive;
//!    unknown → invalid params listing the known ones), else the first
//!    department name (or alias: eng, mktg, ops, fin) found in the question.
//!    None → `department: null`, the totals over all departments, and an
//!    answer that lists the departments.
//! 2. A budget change is proposed only when the question has a change verb
//!    (set, raise, increase, bump, boost, cut, reduce, lower, decrease,
//!    trim, change, adjust) followed by `to <amount>` (absolute), or `by
//!    <amount>` / `by <n>%` (relative; up for raise-like verbs, down for
//!    cut-like ones), or, for `set` only, a bare amount. Amounts accept
//!    `150000`, `150,000`, `$150k`, `1.5m`. A change that would go below
//!    zero is not proposed.
//! 3. The proposal is never executed: a cross-system call is read-only
//!    (DESIGN.md §1 rule 3). It lands in the asker's approval inbox.
//! 4. The answer (and a proposal's rationale) quotes the question back
//!    (`You asked: “…”`, at most 300 characters, whitespace collapsed), as
//!    an agent's answer would: whatever the asker wrote comes back as free
//!    text, which the contract marks untrusted. The contract test suite
//!    relies on this echo to send instructions through a real answer.

use super::{money, num, object_with, opt_str, round2, SkillError, SkillOutput};
use serde_json::{json, Value};
use sqlx::{Row, SqlitePool};

const ALIASES: [(&str, &str); 5] = [
    ("eng", "engineering"),
    ("mktg", "marketing"),
    ("ops", "operations"),
    ("fin", "finance"),
    ("customer-support", "support"),
];
const UP_VERBS: [&str; 4] = ["raise", "increase", "bump", "boost"];
const DOWN_VERBS: [&str; 5] = ["cut", "reduce", "lower", "decrease", "trim"];
const SET_VERBS: [&str; 3] = ["set", "change", "adjust"];

/// One department's row.
#[derive(Debug, Clone, PartialEq)]
struct Row3 {
    department: String,
    budget: f64,
    spent: f64,
}

/// A change the question asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetChange {
    /// The new absolute budget.
    pub amount: f64,
    /// How the question put it (`raise … to 150,000.00`), for the rationale.
    pub phrase: String,
}

/// Answers one consult (read-only: only SELECTs).
pub async fn consult(pool: &SqlitePool, input: &Value) -> Result<SkillOutput, SkillError> {
    let obj = object_with(input, &["question", "department"])?;
    let question = opt_str(obj, "question")?.unwrap_or("");
    let explicit = opt_str(obj, "department")?.map(|d| d.trim().to_ascii_lowercase());
    if question.trim().is_empty() && explicit.is_none() {
        return Err(SkillError::invalid(
            "missing_field",
            "budget.consult needs `question` (and optionally `department`)",
        ));
    }
    if question.len() > 4_000 {
        return Err(SkillError::invalid(
            "too_long",
            "field `question` must be at most 4000 bytes",
        ));
    }
    let rows: Vec<Row3> =
        sqlx::query("SELECT department, budget, spent FROM budgets ORDER BY department")
            .fetch_all(pool)
            .await?
            .iter()
            .map(|r| {
                Ok(Row3 {
                    department: r.try_get("department")?,
                    budget: r.try_get("budget")?,
                    spent: r.try_get("spent")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()?;
    let known = rows
        .iter()
        .map(|r| r.department.as_str())
        .collect::<Vec<_>>();
    let department = match explicit {
        Some(d) => {
            let d = resolve_alias(&d);
            Some(known.iter().find(|k| **k == d).copied().ok_or_else(|| {
                SkillError::invalid(
                    "unknown_department",
                    format!(
                        "unknown department {d:?}; known departments: {}",
                        known.join(", ")
                    ),
                )
            })?)
        }
        None => find_department(question, &known),
    };

    let Some(dept) = department else {
        let budget: f64 = rows.iter().map(|r| r.budget).sum();
        let spent: f64 = rows.iter().map(|r| r.spent).sum();
        let answer = format!(
            "No department named; known departments: {}. Across all of them the budget is {}, spent {} and remaining {}.{}",
            known.join(", "),
            money(budget),
            money(spent),
            money(budget - spent),
            echo(question)
        );
        let result = json!({
            "department": null,
            "budget": num(round2(budget)),
            "spent": num(round2(spent)),
            "remaining": num(round2(budget - spent)),
            "answer": answer,
            "proposed_actions": [],
        });
        return Ok(SkillOutput {
            result,
            text: answer,
        });
    };
    let row = rows
        .iter()
        .find(|r| r.department == dept)
        .ok_or_else(|| SkillError::Internal(format!("department {dept} vanished")))?;
    let remaining = row.budget - row.spent;
    let mut answer = if remaining >= 0.0 {
        format!(
            "{} has a budget of {}, has spent {} and has {} remaining.",
            capitalise(dept),
            money(row.budget),
            money(row.spent),
            money(remaining)
        )
    } else {
        format!(
            "{} has a budget of {}, has spent {} and is {} over budget.",
            capitalise(dept),
            money(row.budget),
            money(row.spent),
            money(-remaining)
        )
    };
    let mut actions = Vec::new();
    if let Some(change) = parse_change(question, row.budget) {
        let delta = change.amount - row.budget;
        let rationale = format!(
            "The question asked to {}; {dept} currently has a budget of {} with {} spent, so the change is {}{}.{}",
            change.phrase,
            money(row.budget),
            money(row.spent),
            if delta >= 0.0 { "+" } else { "-" },
            money(delta.abs()),
            echo(question)
        );
        answer.push_str(&format!(
            " Proposed: set the {dept} budget to {}; this needs approval and nothing was changed.",
            money(change.amount)
        ));
        actions.push(json!({
            "action_type": "set_budget",
            "target": dept,
            "parameters": {"amount": num(round2(change.amount))},
            "rationale": rationale,
        }));
    }
    answer.push_str(&echo(question));
    let result = json!({
        "department": dept,
        "budget": num(round2(row.budget)),
        "spent": num(round2(row.spent)),
        "remaining": num(round2(remaining)),
        "answer": answer,
        "proposed_actions": actions,
    });
    Ok(SkillOutput {
        result,
        text: answer,
    })
}

/// ` You asked: “…”.`: the question quoted back (rule 4), or nothing for
/// an empty question.
fn echo(question: &str) -> String {
    let collapsed = question.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return String::new();
    }
    let mut quoted: String = collapsed.chars().take(300).collect();
    if collapsed.chars().count() > 300 {
        quoted.push('…');
    }
    format!(" You asked: “{quoted}”.")
}

fn resolve_alias(word: &str) -> &str {
    ALIASES
        .iter()
        .find(|(a, _)| *a == word)
        .map(|(_, d)| *d)
        .unwrap_or(word)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, '?' | '!' | ';' | ':' | '(' | ')' | '"' | '\'')
    })
    .map(|w| w.trim_end_matches(['.', ',']).to_lowercase())
    .filter(|w| !w.is_empty())
    .collect()
}

/// The first known department (or alias, or `<dept>'s`) in the question.
fn find_department<'k>(question: &str, known: &[&'k str]) -> Option<&'k str> {
    words(question).iter().find_map(|w| {
        let w = w.trim_end_matches("'s");
        let w = resolve_alias(w);
        known.iter().find(|k| **k == w).copied()
    })
}

/// Parses `150000`, `150,000`, `$150k`, `1.5m`, `€2,000.50`; `None` for
/// anything else. The bool says whether it was a percentage.
fn parse_amount(token: &str) -> Option<(f64, bool)> {
    let t = token.trim_start_matches(['$', '€', '£']);
    let (t, pct) = match t.strip_suffix('%') {
        Some(r) => (r, true),
        None => (t, false),
    };
    let (t, mult) = match t.strip_suffix('k') {
        Some(r) => (r, 1_000.0),
        None => match t.strip_suffix('m') {
            Some(r) => (r, 1_000_000.0),
            None => (t, 1.0),
        },
    };
    let digits = t.replace(',', "");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let v: f64 = digits.parse().ok()?;
    v.is_finite().then_some((v * mult, pct))
}

/// The change a question asks for, relative to `current` (see the module
/// rules). Public so tests and the inbox can reuse the same reading.
pub fn parse_change(question: &str, current: f64) -> Option<BudgetChange> {
    let w = words(question);
    let verb_at = w.iter().position(|t| {
        UP_VERBS.contains(&t.as_str())
            || DOWN_VERBS.contains(&t.as_str())
            || SET_VERBS.contains(&t.as_str())
    })?;
    let verb = w[verb_at].as_str();
    let rest = &w[verb_at + 1..];
    let mut i = 0;
    while i < rest.len() {
        let tok = rest[i].as_str();
        let next = rest.get(i + 1).and_then(|n| parse_amount(n));
        let change = match (tok, next) {
            ("to", Some((v, false))) => Some((v, format!("{verb} the budget to {}", money(v)))),
            ("by", Some((v, pct))) => {
                let delta = if pct { current * v / 100.0 } else { v };
                let shown = if pct { format!("{v}%") } else { money(v) };
                if UP_VERBS.contains(&verb) {
                    Some((current + delta, format!("{verb} the budget by {shown}")))
                } else if DOWN_VERBS.contains(&verb) {
                    Some((current - delta, format!("{verb} the budget by {shown}")))
                } else {
                    None
                }
            }
            _ if verb == "set" => match parse_amount(tok) {
                Some((v, false)) => Some((v, format!("set the budget to {}", money(v)))),
                _ => None,
            },
            _ => None,
        };
        if let Some((amount, phrase)) = change {
            return (amount >= 0.0).then(|| BudgetChange {
                amount: round2(amount),
                phrase,
            });
        }
        i += 1;
    }
    None
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DatasetConfig;
    use crate::datasets::{ensure_seeded, generate_budgets};

    async fn budgets(seed: u64) -> SqlitePool {
        let pool = exchange::db::memory_sqlite().await.unwrap();
        ensure_seeded(&pool, &DatasetConfig::Budgets { seed })
            .await
            .unwrap();
        pool
    }

    async fn snapshot(pool: &SqlitePool) -> Vec<(String, f64, f64)> {
        sqlx::query_as("SELECT department, budget, spent FROM budgets ORDER BY department")
            .fetch_all(pool)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn numbers_match_the_table_and_nothing_is_written() {
        let pool = budgets(7).await;
        let before = snapshot(&pool).await;
        let truth = generate_budgets(7);
        let m = truth.iter().find(|b| b.department == "marketing").unwrap();
        let out = consult(
            &pool,
            &json!({"question": "raise marketing budget to 150000"}),
        )
        .await
        .unwrap();
        let r = &out.result;
        assert_eq!(r["department"], "marketing");
        assert_eq!(r["budget"].as_f64(), Some(m.budget));
        assert_eq!(r["spent"].as_f64(), Some(m.spent));
        assert_eq!(r["remaining"].as_f64(), Some(m.budget - m.spent));
        assert!(
            r["answer"].as_str().unwrap().contains(&money(m.budget)),
            "{r}"
        );
        let actions = r["proposed_actions"].as_array().unwrap();
        assert_eq!(actions.len(), 1);
        assert_eq!(actions[0]["action_type"], "set_budget");
        assert_eq!(actions[0]["target"], "marketing");
        assert_eq!(actions[0]["parameters"]["amount"].as_f64(), Some(150_000.0));
        assert!(actions[0]["rationale"]
            .as_str()
            .unwrap()
            .contains("150,000.00"));
        assert_eq!(out.text, r["answer"].as_str().unwrap());
        assert_eq!(snapshot(&pool).await, before, "a consult never writes");
    }

    #[tokio::test]
    async fn explicit_department_unknown_department_and_none() {
        let pool = budgets(7).await;
        let truth = generate_budgets(7);
        let s = truth.iter().find(|b| b.department == "sales").unwrap();
        let out = consult(
            &pool,
            &json!({"question": "how are we doing?", "department": "Sales"}),
        )
        .await
        .unwrap();
        assert_eq!(out.result["budget"].as_f64(), Some(s.budget));
        assert_eq!(out.result["proposed_actions"], json!([]));
        let e = consult(&pool, &json!({"department": "legal"}))
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown department \"legal\"; known departments: engineering"),
            "{e}"
        );
        let out = consult(&pool, &json!({"question": "what is left overall?"}))
            .await
            .unwrap();
        assert_eq!(out.result["department"], Value::Null);
        let total: f64 = truth.iter().map(|b| b.budget).sum();
        assert_eq!(out.result["budget"].as_f64(), Some(total));
        assert!(out.text.contains("marketing, operations"), "{}", out.text);
        assert!(consult(&pool, &json!({})).await.is_err());
        assert!(consult(&pool, &json!({"question": 5}))
            .await
            .unwrap_err()
            .to_string()
            .contains("`question`"));
    }

    #[test]
    fn change_phrasings() {
        let at = |q: &str| parse_change(q, 100_000.0).map(|c| c.amount);
        assert_eq!(at("raise marketing budget to 150000"), Some(150_000.0));
        assert_eq!(
            at("Please increase the marketing budget by $20k."),
            Some(120_000.0)
        );
        assert_eq!(at("cut ops by 10%"), Some(90_000.0));
        assert_eq!(at("set eng budget 75,000"), Some(75_000.0));
        assert_eq!(at("reduce sales to 1.5m"), Some(1_500_000.0));
        assert_eq!(at("cut sales by 200000"), None, "never below zero");
        assert_eq!(at("what is the marketing budget for 2025?"), None);
        assert_eq!(at("can we increase marketing in 2025?"), None);
        assert_eq!(
            find_department(
                "How much has Marketing's team spent?",
                &["marketing", "sales"]
            ),
            Some("marketing")
        );
        assert_eq!(
            find_department("ops and sales", &["operations", "sales"]),
            Some("operations")
        );
    }
}
