//! The gate in front of every read of the dataset (NOTES.md, "Data
//! contracts and the data plane"): both doors — the A2A data-share (`orders.query`) and
//! the MCP data plane (`query_records`) — call [`read`], so one contract
//! decides both, re-read from the store on every call.
//!
//! Order: the columns the call names are collected first, the one decision
//! ([`super::decide::evaluate`]) runs against the consumer's current
//! contract, and only a granted call is parsed and run — within the
//! contract's columns (checked again while parsing), never beyond the
//! skill's negotiable ones. A refused call reads no row.

use chrono::Utc;
use serde_json::Value;

use super::decide::{evaluate, Refusal};
use super::store::ContractStoreError;
use super::Contract;
use crate::config::SkillConfig;
use crate::skills::query::{self, Scope, TableQuery};
use crate::skills::{SkillError, SkillOutput};
use crate::PeerState;

/// A read that ran: the answer and the contract it ran under.
#[derive(Debug)]
pub struct Granted {
    /// The query's answer.
    pub output: SkillOutput,
    /// The contract that granted it.
    pub contract: Contract,
    /// Rows the aggregate covered (the result's `row_count`).
    pub rows_read: u64,
}

/// A read that did not run.
#[derive(Debug, thiserror::Error)]
pub enum Denied {
    /// The contract refuses it: the provider's own words, verbatim to the
    /// caller. No row was read.
    #[error("{}", .refusal.message)]
    Refused {
        /// Which refusal, in the provider's words.
        refusal: Refusal,
        /// The contract it was decided against, if any.
        contract_id: Option<String>,
    },
    /// Granted columns, but the query itself is wrong (an unknown op, a
    /// text column summed): the caller's mistake, named.
    #[error("{0}")]
    Invalid(SkillError),
    /// The contract store could not be read: the peer's failure.
    #[error("{0}")]
    Store(#[from] ContractStoreError),
}

impl Denied {
    /// A payload-free line for the provider's trail (code, contract id,
    /// rows read), never the caller's values.
    pub fn trail_detail(&self) -> String {
        match self {
            Denied::Refused {
                refusal,
                contract_id,
            } => format!(
                "refused {} contract {} rows_read 0",
                refusal.code.as_str(),
                contract_id.as_deref().unwrap_or("none")
            ),
            Denied::Invalid(SkillError::InvalidParams { code, .. }) => {
                format!("invalid params: {code} rows_read 0")
            }
            Denied::Invalid(SkillError::Internal(_)) | Denied::Store(_) => "internal error".into(),
        }
    }
}

impl Granted {
    /// The trail line of a granted read.
    pub fn trail_detail(&self) -> String {
        format!(
            "granted contract {} rows_read {}",
            self.contract.id, self.rows_read
        )
    }
}

/// Reads `input` (a `table_query` input) for `consumer` through `skill`,
/// under the consumer's current contract for that capability.
pub async fn read(
    state: &PeerState,
    skill: &SkillConfig,
    consumer: &str,
    input: &Value,
) -> Result<Granted, Denied> {
    let referenced = query::referenced_columns(input);
    let dataset = state
        .schema
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let contract = state.contracts.current(consumer, &skill.capability).await?;
    let contract = evaluate(&referenced, &dataset, contract.as_ref(), Utc::now())
        .map_err(|refusal| Denied::Refused {
            refusal,
            contract_id: contract.as_ref().map(|c| c.id.clone()),
        })?
        .clone();
    // Never beyond what the skill may ever grant, whatever a contract says.
    let granted: Vec<String> = contract
        .scope
        .columns
        .iter()
        .filter(|c| skill.negotiable_columns.contains(c))
        .cloned()
        .collect();
    let scope = Scope {
        schema: &state.schema,
        granted: &granted,
        capability: &skill.capability,
    };
    let q = TableQuery::parse(input, &scope).map_err(Denied::Invalid)?;
    let result = query::run(&state.pool, &state.schema, &q)
        .await
        .map_err(Denied::Invalid)?;
    let rows_read = result["row_count"].as_u64().unwrap_or(0);
    let text = query::summary_line(&result);
    Ok(Granted {
        output: SkillOutput { result, text },
        contract,
        rows_read,
    })
}
