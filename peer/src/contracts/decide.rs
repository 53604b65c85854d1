//! The one decision of a read against a data contract:
//! [`evaluate`], called on every call of every door (the A2A data-share
//! and the MCP data plane) before a row is read.
//!
//! Four refusals, in this order, because "this column does not exist" and
//! "you were not granted this column" are different answers:
//! `UNKNOWN_COLUMN`, `NO_CONTRACT`, `CONTRACT_EXPIRED`, `SCOPE_DENIED`. Each
//! is the provider's own sentence, passed to the caller verbatim.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::Contract;

/// Why a read is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalCode {
    /// A column the dataset does not have.
    UnknownColumn,
    /// No contract covers this consumer and capability.
    NoContract,
    /// The contract has expired.
    ContractExpired,
    /// A column the contract does not grant.
    ScopeDenied,
}

impl RefusalCode {
    /// The wire spelling, the first word of the refusal.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::UnknownColumn => "UNKNOWN_COLUMN",
            RefusalCode::NoContract => "NO_CONTRACT",
            RefusalCode::ContractExpired => "CONTRACT_EXPIRED",
            RefusalCode::ScopeDenied => "SCOPE_DENIED",
        }
    }
}

/// A refused read: its code and the provider's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Which refusal.
    pub code: RefusalCode,
    /// The sentence the caller gets verbatim (starts with the code).
    pub message: String,
}

/// Decides a read naming `referenced` columns of a dataset with
/// `dataset_columns`, under `contract` (the current one for this consumer
/// and capability, if any), at `now`. `Ok` is the contract the read may
/// run under.
pub fn evaluate<'c>(
    referenced: &BTreeSet<String>,
    dataset_columns: &BTreeSet<String>,
    contract: Option<&'c Contract>,
    now: DateTime<Utc>,
) -> Result<&'c Contract, Refusal> {
    let refuse = |code: RefusalCode, detail: String| {
        Err(Refusal {
            code,
            message: format!("{}: {detail}", code.as_str()),
        })
    };
    let unknown: Vec<&String> = referenced.difference(dataset_columns).collect();
    if !unknown.is_empty() {
        return refuse(
            RefusalCode::UnknownColumn,
            format!(
                "{unknown:?} is not a column of the dataset; its columns are {:?}",
                dataset_columns
            ),
        );
    }
    let Some(contract) = contract else {
        return refuse(
            RefusalCode::NoContract,
            "no negotiated contract covers this consumer and capability; negotiate one first"
                .into(),
        );
    };
    if now >= contract.expires_at {
        return refuse(
            RefusalCode::ContractExpired,
            format!(
                "{} expired at {}; negotiate a new one",
                contract.id,
                contract.expires_at.to_rfc3339()
            ),
        );
    }
    let granted: BTreeSet<String> = contract.scope.columns.iter().cloned().collect();
    let denied: Vec<&String> = referenced.difference(&granted).collect();
    if !denied.is_empty() {
        return refuse(
            RefusalCode::ScopeDenied,
            format!(
                "{denied:?} was not granted by contract {}. Granted columns: {:?}. Purpose of \
                 record: {:?}. This call is refused at the data owner and was not read from the dataset.",
                contract.id, granted, contract.scope.purpose
            ),
        );
    }
    Ok(contract)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;
    use exchange::negotiation::Scope;

    /// (case, columns read, current contract, granted or the refusal's code and words).
    type Case<'a> = (
        &'static str,
        BTreeSet<String>,
        Option<&'a Contract>,
        Result<(), (RefusalCode, &'static str)>,
    );

    fn set(cols: &[&str]) -> BTreeSet<String> {
        cols.iter().map(|c| c.to_string()).collect()
    }

    fn contract(now: DateTime<Utc>) -> Contract {
        Contract {
            id: "c-0123456789ab".into(),
            capability: "orders.query".into(),
            provider: "vendorcorp".into(),
            consumer: "buyercorp".into(),
            scope: Scope {
                columns: vec!["region".into(), "order_date".into(), "order_value".into()],
                purpose: "average order value by region for Q3".into(),
                retention_days: 30,
            },
            context_id: "ctx-1".into(),
            granted_at: now - Duration::days(1),
            expires_at: now + Duration::days(29),
        }
    }

    #[test]
    fn each_refusal_in_its_order_with_the_providers_words() {
        let now = Utc::now();
        let dataset = set(&[
            "region",
            "order_date",
            "order_value",
            "order_id",
            "customer_email",
        ]);
        let c = contract(now);
        let mut expired = c.clone();
        expired.expires_at = now - Duration::seconds(1);
        let cases: Vec<Case> = vec![
            ("granted", set(&["region", "order_value"]), Some(&c), Ok(())),
            (
                "unknown before anything else",
                set(&["region", "colour"]),
                None,
                Err((
                    RefusalCode::UnknownColumn,
                    r#"UNKNOWN_COLUMN: ["colour"] is not a column of the dataset"#,
                )),
            ),
            (
                "no contract",
                set(&["region"]),
                None,
                Err((
                    RefusalCode::NoContract,
                    "NO_CONTRACT: no negotiated contract covers this consumer",
                )),
            ),
            (
                "expired before scope",
                set(&["customer_email"]),
                Some(&expired),
                Err((
                    RefusalCode::ContractExpired,
                    "CONTRACT_EXPIRED: c-0123456789ab expired at",
                )),
            ),
            (
                "denied",
                set(&["region", "customer_email"]),
                Some(&c),
                Err((
                    RefusalCode::ScopeDenied,
                    r#"SCOPE_DENIED: ["customer_email"] was not granted by contract c-0123456789ab. Granted columns: {"order_date", "order_value", "region"}. Purpose of record: "average order value by region for Q3"."#,
                )),
            ),
        ];
        for (name, referenced, contract, want) in cases {
            match (
                evaluate(&referenced, &dataset, contract, now).map(|_| ()),
                want,
            ) {
                (Ok(()), Ok(())) => {}
                (Err(r), Err((code, words))) => {
                    assert_eq!(r.code, code, "{name}");
                    assert!(
                        r.message.starts_with(code.as_str()),
                        "{name}: {}",
                        r.message
                    );
                    assert!(r.message.contains(words), "{name}: {}", r.message);
                }
                (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }
}
