//! The query engine over a seeded `orders` table: the grant refuses a
//! column wherever it is named, the aggregates match an independent
//! recount of the generated rows, and bad or hostile input is named exactly.

use super::*;
use crate::config::DatasetConfig;
use crate::datasets::{ensure_seeded, generate_orders, table_schema, OrderRow};
use std::collections::BTreeMap;

async fn orders(seed: u64, rows: usize) -> (SqlitePool, TableSchema) {
    let pool = exchange::db::memory_sqlite().await.unwrap();
    ensure_seeded(&pool, &DatasetConfig::Orders { seed, rows })
        .await
        .unwrap();
    let schema = table_schema(&pool, "orders").await.unwrap();
    (pool, schema)
}

async fn ask(pool: &SqlitePool, schema: &TableSchema, input: Value) -> Result<Value, SkillError> {
    let all: Vec<String> = schema.columns.iter().map(|c| c.name.clone()).collect();
    let scope = Scope {
        schema,
        granted: &all,
        capability: "orders.query",
    };
    let q = TableQuery::parse(&input, &scope)?;
    run(pool, schema, &q).await
}

#[tokio::test]
async fn a_column_outside_the_grant_is_refused_wherever_it_is_named() {
    let (_pool, schema) = orders(42, 10).await;
    let granted: Vec<String> = ["region", "order_value"].map(String::from).to_vec();
    let scope = Scope {
        schema: &schema,
        granted: &granted,
        capability: "orders.query",
    };
    for input in [
        json!({"aggregate": "count", "group_by": "customer_email"}),
        json!({"aggregate": {"op": "count", "column": "customer_name"}}),
        json!({"filters": [{"column": "customer_email", "op": "eq", "value": "a@b.c"}]}),
    ] {
        match TableQuery::parse(&input, &scope) {
            Err(SkillError::InvalidParams { code, message }) => {
                assert_eq!(code, "scope_denied", "{input}");
                assert!(message.contains("not granted by orders.query"), "{message}");
                assert!(
                    message.contains("granted columns: region, order_value"),
                    "{message}"
                );
            }
            other => panic!("{input}: expected scope_denied, got {other:?}"),
        }
    }
    // A column that does not exist is still "unknown", not "denied".
    match TableQuery::parse(&json!({"group_by": "colour"}), &scope) {
        Err(SkillError::InvalidParams { code, .. }) => assert_eq!(code, "unknown_column"),
        other => panic!("expected unknown_column, got {other:?}"),
    }
    let q = TableQuery::parse(
        &json!({"aggregate": {"op": "sum", "column": "order_value"}, "group_by": "region"}),
        &scope,
    )
    .expect("granted columns pass");
    assert_eq!(q.group_by.as_deref(), Some("region"));
}

fn field(o: &OrderRow, c: &str) -> Scalar {
    match c {
        "order_id" => Scalar::Text(o.order_id.clone()),
        "region" => Scalar::Text(o.region.clone()),
        "order_date" => Scalar::Text(o.order_date.clone()),
        "order_value" => Scalar::Number(o.order_value),
        "product" => Scalar::Text(o.product.clone()),
        "customer_name" => Scalar::Text(o.customer_name.clone()),
        "customer_email" => Scalar::Text(o.customer_email.clone()),
        _ => panic!("no column {c}"),
    }
}

/// The reference answer, computed by iterating the generated rows.
fn expected(
    rows: &[OrderRow],
    op: AggOp,
    filters: &[Filter],
    group_by: Option<&str>,
) -> Vec<(Option<String>, Option<f64>, i64)> {
    let mut groups: BTreeMap<Option<String>, Vec<f64>> = BTreeMap::new();
    for o in rows
        .iter()
        .filter(|o| filters.iter().all(|f| f.matches(&field(o, &f.column))))
    {
        let key = group_by.map(|g| match field(o, g) {
            Scalar::Text(s) => s,
            Scalar::Number(n) => n.to_string(),
        });
        groups.entry(key).or_default().push(o.order_value);
    }
    if group_by.is_none() && groups.is_empty() {
        groups.insert(None, Vec::new());
    }
    groups
        .into_iter()
        .map(|(k, vals)| {
            let n = vals.len() as i64;
            let v = match op {
                AggOp::Count => Some(n as f64),
                _ if vals.is_empty() => None,
                AggOp::Sum => Some(vals.iter().sum()),
                AggOp::Avg => Some(vals.iter().sum::<f64>() / n as f64),
                AggOp::Min => vals.iter().cloned().reduce(f64::min),
                AggOp::Max => vals.iter().cloned().reduce(f64::max),
            };
            (k, v.map(round2), n)
        })
        .collect()
}

fn got(result: &Value) -> Vec<(Option<String>, Option<f64>, i64)> {
    result["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["key"].as_str().map(str::to_string),
                g["value"].as_f64(),
                g["count"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn aggregates_match_an_independent_recount() {
    let (pool, schema) = orders(42, 624).await;
    let rows = generate_orders(42, 624);
    let filter_sets: Vec<(Value, Vec<Filter>)> = vec![
        (json!([]), vec![]),
        (
            json!([{"column": "region", "op": "eq", "value": "EMEA"}]),
            vec![Filter {
                column: "region".into(),
                op: FilterOp::Eq,
                values: vec![Scalar::Text("EMEA".into())],
            }],
        ),
        (
            json!([{"column": "order_date", "op": "gte", "value": "2025-04-01"},
                   {"column": "order_date", "op": "lt", "value": "2025-07-01"},
                   {"column": "order_value", "op": "gt", "value": 1000}]),
            vec![
                Filter {
                    column: "order_date".into(),
                    op: FilterOp::Gte,
                    values: vec![Scalar::Text("2025-04-01".into())],
                },
                Filter {
                    column: "order_date".into(),
                    op: FilterOp::Lt,
                    values: vec![Scalar::Text("2025-07-01".into())],
                },
                Filter {
                    column: "order_value".into(),
                    op: FilterOp::Gt,
                    values: vec![Scalar::Number(1000.0)],
                },
            ],
        ),
        (
            json!([{"column": "product", "op": "in", "value": ["Cloud Storage", "Edge Gateway"]},
                   {"column": "region", "op": "ne", "value": "NA"}]),
            vec![
                Filter {
                    column: "product".into(),
                    op: FilterOp::In,
                    values: vec![
                        Scalar::Text("Cloud Storage".into()),
                        Scalar::Text("Edge Gateway".into()),
                    ],
                },
                Filter {
                    column: "region".into(),
                    op: FilterOp::Ne,
                    values: vec![Scalar::Text("NA".into())],
                },
            ],
        ),
    ];
    // Boundaries taken from the data itself, so eq/lte/gte meet rows
    // exactly on the boundary (an off-by-one operator must show).
    let mut filter_sets = filter_sets;
    let (d, v) = (rows[0].order_date.clone(), rows[1].order_value);
    for (op, name) in [
        (FilterOp::Eq, "eq"),
        (FilterOp::Lte, "lte"),
        (FilterOp::Gte, "gte"),
        (FilterOp::Lt, "lt"),
        (FilterOp::Gt, "gt"),
        (FilterOp::Ne, "ne"),
    ] {
        filter_sets.push((
            json!([{"column": "order_date", "op": name, "value": d}]),
            vec![Filter {
                column: "order_date".into(),
                op,
                values: vec![Scalar::Text(d.clone())],
            }],
        ));
        filter_sets.push((
            json!([{"column": "order_value", "op": name, "value": v}]),
            vec![Filter {
                column: "order_value".into(),
                op,
                values: vec![Scalar::Number(v)],
            }],
        ));
    }
    filter_sets.push((
        json!([{"column": "order_value", "op": "in", "value": [v, rows[2].order_value, 0.5]}]),
        vec![Filter {
            column: "order_value".into(),
            op: FilterOp::In,
            values: vec![
                Scalar::Number(v),
                Scalar::Number(rows[2].order_value),
                Scalar::Number(0.5),
            ],
        }],
    ));
    for op in [AggOp::Count, AggOp::Sum, AggOp::Avg, AggOp::Min, AggOp::Max] {
        for (json_filters, filters) in &filter_sets {
            for group_by in [None, Some("region"), Some("product")] {
                let input = json!({
                    "aggregate": {"op": op.as_str(), "column": "order_value"},
                    "filters": json_filters,
                    "group_by": group_by,
                });
                let result = ask(&pool, &schema, input.clone()).await.unwrap();
                let want = expected(&rows, op, filters, group_by);
                assert_eq!(got(&result), want, "query {input}");
                let total: i64 = want.iter().map(|g| g.2).sum();
                assert_eq!(result["row_count"], json!(total));
            }
        }
    }
}

#[tokio::test]
async fn count_without_column_and_shape() {
    let (pool, schema) = orders(42, 624).await;
    let r = ask(
        &pool,
        &schema,
        json!({"aggregate": {"op": "count"}, "group_by": "region"}),
    )
    .await
    .unwrap();
    assert_eq!(r["table"], "orders");
    assert_eq!(r["aggregate"], json!({"op": "count", "column": "*"}));
    assert_eq!(r["group_by"], "region");
    assert_eq!(r["row_count"], 624);
    let keys: Vec<&str> = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["APAC", "EMEA", "LATAM", "NA"], "sorted by key");
    let r = ask(&pool, &schema, json!({"aggregate": "count"}))
        .await
        .unwrap();
    assert_eq!(
        r["groups"],
        json!([{"key": null, "value": 624, "count": 624}])
    );
    assert_eq!(summary_line(&r), "count(*) of orders over 624 rows: 624");
}

#[tokio::test]
async fn numeric_group_keys_are_strings_in_numeric_order() {
    let (pool, schema) = orders(42, 30).await;
    let r = ask(
        &pool,
        &schema,
        json!({"aggregate": "count", "group_by": "order_value"}),
    )
    .await
    .unwrap();
    let keys: Vec<f64> = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(keys.len() > 20);
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    assert_eq!(number_key(3.0), "3");
    assert_eq!(number_key(12.5), "12.5");
}

#[tokio::test]
async fn no_matching_rows() {
    let (pool, schema) = orders(42, 100).await;
    let f = json!([{"column": "region", "op": "eq", "value": "MARS"}]);
    let r = ask(
        &pool,
        &schema,
        json!({"aggregate": {"op": "sum", "column": "order_value"}, "filters": f}),
    )
    .await
    .unwrap();
    assert_eq!(
        r["groups"],
        json!([{"key": null, "value": null, "count": 0}])
    );
    let r = ask(
        &pool,
        &schema,
        json!({"aggregate": "count", "filters": f, "group_by": "region"}),
    )
    .await
    .unwrap();
    assert_eq!(r["groups"], json!([]));
    assert_eq!(r["row_count"], 0);
}

#[tokio::test]
async fn bad_input_is_named_exactly() {
    let (pool, schema) = orders(42, 10).await;
    let cases = [
        (json!({"aggregate": {"op": "sum", "column": "colour"}}), "unknown column \"colour\"; known columns: order_id, region, order_date, order_value, product, customer_name, customer_email"),
        (json!({"aggregate": "count", "group_by": "colour"}), "unknown column \"colour\""),
        (json!({"filters": [{"column": "colour", "op": "eq", "value": "red"}]}), "unknown column \"colour\""),
        (json!({"aggregate": {"op": "median", "column": "order_value"}}), "unknown aggregate op \"median\""),
        (json!({"aggregate": {"op": "sum", "column": "region"}}), "column \"region\" is TEXT; sum needs a numeric column"),
        (json!({"aggregate": {"op": "sum"}}), "`aggregate.column` is required for sum"),
        (json!({"filters": [{"column": "order_value", "op": "gt", "value": "a lot"}]}), "field `filters[0].value` must be a number for column \"order_value\" (REAL), got string"),
        (json!({"filters": [{"column": "region", "op": "eq", "value": 3}]}), "must be a string for column \"region\""),
        (json!({"filters": [{"column": "region", "op": "like", "value": "E%"}]}), "unknown filter op \"like\""),
        (json!({"filters": [{"column": "region", "op": "in", "value": "EMEA"}]}), "must be an array for op \"in\""),
        (json!({"filters": {"column": "region"}}), "field `filters` must be an array"),
        (json!({"aggregate": "count", "limit": 5}), "unknown field \"limit\""),
        (json!("count"), "input must be a JSON object"),
    ];
    for (input, want) in cases {
        match ask(&pool, &schema, input.clone()).await {
            Err(SkillError::InvalidParams { message, .. }) => {
                assert!(
                    message.contains(want),
                    "{input}: got {message:?}, want {want:?}"
                )
            }
            other => panic!("{input}: expected invalid params, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn injection_attempts_are_only_ever_column_lookups() {
    let (pool, schema) = orders(42, 10).await;
    let evil = "region\" FROM orders; DROP TABLE orders; --";
    let e = ask(
        &pool,
        &schema,
        json!({"aggregate": "count", "group_by": evil}),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("unknown column"), "{e}");
    let v = json!([{"column": "region", "op": "eq", "value": "x' OR '1'='1"}]);
    let r = ask(&pool, &schema, json!({"aggregate": "count", "filters": v}))
        .await
        .unwrap();
    assert_eq!(r["row_count"], 0);
    assert_eq!(
        ask(&pool, &schema, json!({})).await.unwrap()["row_count"],
        10
    );
}
