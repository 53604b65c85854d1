//! The MCP tool arguments (`tools/call` of `query_records`): the input is
//! the `arguments` JSON, read on both sides of the data plane —
//! - the peer's (`peer mcp`): `skills::query::referenced_columns` (what
//!   the contract decision reads first) and `TableQuery::parse` against an
//!   orders table and a grant of four of its seven columns;
//! - the hub's (`/mcp/{provider}`): the input contract of `orders.query`
//!   compiled from config/topology.yaml, `check_input` and `shown_input`.
//!
//! Properties beyond "no panic":
//! - a peer refusal is `InvalidParams` with a message and a code (parsing
//!   reads no store, so never `Internal`);
//! - an accepted query names only granted columns, anywhere
//!   (`referenced_columns` within the grant: the module's scope promise),
//!   and carries at most `MAX_FILTERS` filters of at most `MAX_IN_VALUES`
//!   values;
//! - a hub violation has a JSON pointer (`/...`), a keyword and a problem;
//!   the input an operator may see (`shown_input`) exists only for an
//!   input inside the contract.

use std::sync::{Arc, OnceLock};

use hub::contract::Contract;
use peer::datasets::{Column, ColumnType, TableSchema};
use peer::skills::query::{referenced_columns, Scope, TableQuery, MAX_FILTERS, MAX_IN_VALUES};
use peer::skills::SkillError;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use serde_json::{json, Value};

use crate::gen;
use crate::{Broken, Class, Target};

/// The target.
pub static TARGET: Target = Target {
    name: "mcp_args",
    run,
    generate,
    dictionary: DICTIONARY,
    repo_seeds: &[],
};

const DICTIONARY: &[&str] = &[
    "\"aggregate\"",
    "\"filters\"",
    "\"group_by\"",
    "\"op\"",
    "\"column\"",
    "\"value\"",
    "\"count\"",
    "\"sum\"",
    "\"in\"",
    "\"eq\"",
    "\"region\"",
    "\"order_value\"",
    "\"customer_email\"",
    "\"*\"",
    "null",
    "[]",
    "{}",
    "1e308",
    "-0",
    ",",
];

const KEYS: &[&str] = &["aggregate", "filters", "group_by", "op", "column", "value"];

const WORDS: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "eq",
    "ne",
    "lt",
    "lte",
    "gt",
    "gte",
    "in",
    "*",
    "region",
    "order_date",
    "order_value",
    "product",
    "quantity",
    "customer_name",
    "customer_email",
    "EMEA",
    "NA",
    "2025-01-01",
];

const GRANTED: &[&str] = &["region", "order_date", "order_value", "product"];

fn table() -> &'static (TableSchema, Vec<String>) {
    static TABLE: OnceLock<(TableSchema, Vec<String>)> = OnceLock::new();
    TABLE.get_or_init(|| {
        let col = |name: &str, ty| Column {
            name: name.into(),
            ty,
        };
        let schema = TableSchema {
            table: "orders".into(),
            columns: vec![
                col("region", ColumnType::Text),
                col("order_date", ColumnType::Text),
                col("order_value", ColumnType::Real),
                col("product", ColumnType::Text),
                col("quantity", ColumnType::Integer),
                col("customer_name", ColumnType::Text),
                col("customer_email", ColumnType::Text),
            ],
        };
        (schema, GRANTED.iter().map(|s| s.to_string()).collect())
    })
}

/// The hub's contract of the data-plane capability, from the real
/// topology file (`None` if it does not load: the hub half is skipped).
fn hub_contract() -> Option<&'static Arc<Contract>> {
    static CONTRACT: OnceLock<Option<Arc<Contract>>> = OnceLock::new();
    CONTRACT
        .get_or_init(|| {
            let file = crate::workspace_dir().join("config/topology.yaml");
            let loaded = hub::registry::load::load_file(&file).ok()?;
            loaded.contracts.get("orders.query")
        })
        .as_ref()
}

fn run(input: &[u8]) -> Result<Class, Broken> {
    let Ok(arguments) = serde_json::from_slice::<Value>(input) else {
        return Ok("not json".into());
    };
    let mut class = peer_side(&arguments)?;
    if let Some(contract) = hub_contract() {
        let checked = contract.check_input(&arguments);
        if let Err(v) = &checked {
            if !v.pointer.starts_with('/') || v.keyword.is_empty() || v.problem.trim().is_empty() {
                return Err(format!(
                    "hub violation without pointer, keyword or problem: {v:?}"
                ));
            }
        }
        if contract.shown_input(&arguments).is_some() && checked.is_err() {
            return Err("shown_input of an input outside the contract".into());
        }
        class.push_str(match &checked {
            Ok(()) => "; hub admits",
            Err(_) => "; hub refuses",
        });
    }
    Ok(class)
}

fn peer_side(arguments: &Value) -> Result<Class, Broken> {
    let (schema, granted) = table();
    let scope = Scope {
        schema,
        granted,
        capability: "orders.query",
    };
    let named = referenced_columns(arguments);
    match TableQuery::parse(arguments, &scope) {
        Ok(query) => {
            if let Some(c) = named.iter().find(|c| !GRANTED.contains(&c.as_str())) {
                return Err(format!("accepted a query naming {c:?}, not granted"));
            }
            if query.filters.len() > MAX_FILTERS {
                return Err(format!("accepted {} filters", query.filters.len()));
            }
            if let Some(f) = query
                .filters
                .iter()
                .find(|f| f.values.len() > MAX_IN_VALUES)
            {
                return Err(format!("accepted a filter of {} values", f.values.len()));
            }
            Ok(format!("peer accepts {:?}", query.op))
        }
        Err(SkillError::InvalidParams { message, code }) => {
            if message.trim().is_empty() || code.is_empty() {
                return Err(format!("refusal {code:?} with message {message:?}"));
            }
            Ok(format!("peer refuses {code}"))
        }
        Err(SkillError::Internal(e)) => Err(format!("parsing reported a store failure: {e}")),
    }
}

/// Query-shaped arguments, and seeds with nodes replaced.
fn generate(seeds: &[Vec<u8>]) -> BoxedStrategy<Vec<u8>> {
    let word = || gen::word(WORDS);
    let filter = (word(), word(), gen::json(&[], WORDS, 2))
        .prop_map(|(column, op, value)| json!({"column": column, "op": op, "value": value}));
    let query = (
        (word(), word()),
        proptest::collection::vec(filter, 0..4),
        proptest::option::of(word()),
    )
        .prop_map(|((op, column), filters, group_by)| {
            json!({"aggregate": {"op": op, "column": column}, "filters": filters, "group_by": group_by})
        });
    prop_oneof![
        2 => query.prop_map(|v| gen::to_json(&v)),
        2 => gen::seed_variants(seeds, gen::parse_json, KEYS, WORDS).prop_map(|v| gen::to_json(&v)),
        1 => gen::json_bytes(KEYS, WORDS, 3),
    ]
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_are_exercised() {
        assert!(
            hub_contract().is_some(),
            "config/topology.yaml's orders.query contract"
        );
        let query =
            br#"{"aggregate": {"op": "sum", "column": "order_value"}, "group_by": "region"}"#;
        assert_eq!(run(query), Ok("peer accepts Sum; hub admits".to_string()));
        let not_granted = br#"{"group_by": "customer_email"}"#;
        assert_eq!(
            run(not_granted),
            Ok("peer refuses scope_denied; hub refuses".to_string())
        );
    }
}
