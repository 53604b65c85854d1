//! The panel's pure part: its defaults, the words and test ids it
//! prints, the columns a contract may grant and the command a member
//! runs. No reactive code: tested as plain functions.

use crate::dto::{InputGrant, RunState};
use crate::format::format_number;

/// What the hub says its data is for, pre-filled (the user may edit it).
pub const DEFAULT_PURPOSE: &str = "Aggregate queries from the Wall Street canvas drawer";

/// How long the hub asks to keep the data.
pub const DEFAULT_RETENTION_DAYS: u64 = 30;

/// A run state's word: its CSS class and `data-state`.
pub fn state_word(state: RunState) -> &'static str {
    match state {
        RunState::Idle => "idle",
        RunState::Negotiating => "negotiating",
        RunState::Executing => "executing",
        RunState::Error => "error",
    }
}

/// The columns a query of the data-share may name (its input contract's
/// aggregate, filter and group-by columns), each once, in the contract's
/// order: what the hub asks a contract for.
pub fn queryable_columns(grants: &[InputGrant]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in grants {
        let last = g.field.rsplit('.').next().unwrap_or(&g.field);
        if !matches!(last.trim_end_matches("[]"), "column" | "group_by") {
            continue;
        }
        for c in &g.allowed {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
    }
    out
}

/// The command a member runs to negotiate its own contract (the hub never
/// commands a peer).
pub fn member_command(
    consumer: &str,
    provider: &str,
    negotiation: &str,
    columns: &[String],
) -> String {
    let columns = if columns.is_empty() {
        "<column,column,…>".to_string()
    } else {
        columns.join(",")
    };
    format!(
        "peer negotiate --config config/peers/{consumer}.yaml --provider {provider} \
         --capability {negotiation} --columns {columns} --purpose \"<what the data is for>\""
    )
}

/// `30 days`, `1 day`.
pub(super) fn days(n: f64) -> String {
    let s = format_number(n);
    if n == 1.0 {
        format!("{s} day")
    } else {
        format!("{s} days")
    }
}

/// The test id of a part of `consumer`'s section.
pub(super) fn tid(part: &str, consumer: &str) -> String {
    format!("{part}-{consumer}")
}

/// The draft key of the hub's form fields.
pub(super) fn draft_key(edge: &str, field: &str) -> String {
    format!("{edge}#contract-{field}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(field: &str, allowed: &[&str]) -> InputGrant {
        InputGrant {
            field: field.into(),
            allowed: allowed.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn queryable_columns_are_the_column_grants_once_each() {
        let grants = vec![
            grant(
                "aggregate.column",
                &["order_value", "region", "order_date", "product"],
            ),
            grant("aggregate.op", &["count", "sum"]),
            grant(
                "filters[].column",
                &["region", "order_date", "order_value", "product"],
            ),
            grant("group_by", &["region", "order_date", "product"]),
        ];
        assert_eq!(
            queryable_columns(&grants),
            vec!["order_value", "region", "order_date", "product"]
        );
        assert!(queryable_columns(&[]).is_empty());
    }

    #[test]
    fn a_member_is_told_the_command_to_run() {
        let cmd = member_command(
            "buyercorp",
            "vendorcorp",
            "orders.negotiate",
            &["region".into(), "order_value".into()],
        );
        assert_eq!(
            cmd,
            "peer negotiate --config config/peers/buyercorp.yaml --provider vendorcorp \
             --capability orders.negotiate --columns region,order_value --purpose \"<what the data is for>\""
        );
    }

    #[test]
    fn states_and_days_read_as_words() {
        assert_eq!(state_word(RunState::Executing), "executing");
        assert_eq!(state_word(RunState::Error), "error");
        assert_eq!(days(30.0), "30 days");
        assert_eq!(days(1.0), "1 day");
    }
}
