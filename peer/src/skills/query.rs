//! The aggregate query engine behind every `table_query` (data-share)
//! capability.
//!
//! A data-share call pulls numbers, never raw rows (DESIGN.md §4): the only
//! thing a caller can ask is one aggregate (count/sum/avg/min/max) over the
//! dataset table, optionally filtered and grouped. Input:
//!
//! ```json
//! {"aggregate": {"op": "sum", "column": "order_value"},
//!  "filters": [{"column": "region", "op": "in", "value": ["EMEA", "NA"]}],
//!  "group_by": "region"}
//! ```
//!
//! Output: `{"table", "aggregate": {"op","column"}, "group_by", "groups":
//! [{"key","value","count"}], "row_count"}`, groups sorted by key, values
//! rounded to two decimals.
//!
//! Safety: every column name is checked against the table's `PRAGMA
//! table_info` before it reaches SQL (and is then quoted); every value is a
//! bound parameter. Nothing a caller sends is interpolated unvalidated.
//!
//! Scope: a call is granted a set of columns (the consumer's negotiated
//! contract, never beyond the skill's `negotiable_columns`: the data
//! owner's half of the data contract). A query that names any other column
//! anywhere (aggregate, filter, group by) is refused while it is parsed,
//! before a row is read, with `scope_denied`. "No such column" and "not
//! granted" stay distinct.

use super::{json_type, num, object_with, round2, SkillError};
use crate::datasets::{Column, ColumnType, TableSchema};
use serde_json::{json, Value};
use sqlx::{Row, SqlitePool};

/// Most filters one query may carry.
pub const MAX_FILTERS: usize = 20;
/// Most values one `in` filter may list.
pub const MAX_IN_VALUES: usize = 100;

/// The aggregate function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggOp {
    /// Number of rows (or non-null values of a column).
    Count,
    /// Sum of a numeric column.
    Sum,
    /// Mean of a numeric column.
    Avg,
    /// Smallest value of a numeric column.
    Min,
    /// Largest value of a numeric column.
    Max,
}

impl AggOp {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "count" => AggOp::Count,
            "sum" => AggOp::Sum,
            "avg" => AggOp::Avg,
            "min" => AggOp::Min,
            "max" => AggOp::Max,
            _ => return None,
        })
    }

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AggOp::Count => "count",
            AggOp::Sum => "sum",
            AggOp::Avg => "avg",
            AggOp::Min => "min",
            AggOp::Max => "max",
        }
    }
}

/// A filter comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterOp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Gte,
    /// One of a list.
    In,
}

impl FilterOp {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "eq" => FilterOp::Eq,
            "ne" => FilterOp::Ne,
            "lt" => FilterOp::Lt,
            "lte" => FilterOp::Lte,
            "gt" => FilterOp::Gt,
            "gte" => FilterOp::Gte,
            "in" => FilterOp::In,
            _ => return None,
        })
    }

    fn sql(self) -> &'static str {
        match self {
            FilterOp::Eq => "=",
            FilterOp::Ne => "<>",
            FilterOp::Lt => "<",
            FilterOp::Lte => "<=",
            FilterOp::Gt => ">",
            FilterOp::Gte => ">=",
            FilterOp::In => "IN",
        }
    }
}

/// A filter value, already checked against the column's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// For TEXT columns.
    Text(String),
    /// For INTEGER and REAL columns.
    Number(f64),
}

/// One validated filter.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// A column of the table.
    pub column: String,
    /// The comparison.
    pub op: FilterOp,
    /// One value, or several for `in`.
    pub values: Vec<Scalar>,
}

impl Filter {
    /// Whether a value passes this filter: the same semantics as the SQL,
    /// for tests and callers that recompute answers in Rust.
    pub fn matches(&self, v: &Scalar) -> bool {
        use std::cmp::Ordering;
        let cmp = |x: &Scalar| -> Option<Ordering> {
            match (v, x) {
                (Scalar::Text(a), Scalar::Text(b)) => Some(a.as_str().cmp(b.as_str())),
                (Scalar::Number(a), Scalar::Number(b)) => a.partial_cmp(b),
                _ => None,
            }
        };
        let first = self.values.first();
        match self.op {
            FilterOp::In => self.values.iter().any(|x| cmp(x) == Some(Ordering::Equal)),
            op => match first.and_then(cmp) {
                None => false,
                Some(o) => match op {
                    FilterOp::Eq => o == Ordering::Equal,
                    FilterOp::Ne => o != Ordering::Equal,
                    FilterOp::Lt => o == Ordering::Less,
                    FilterOp::Lte => o != Ordering::Greater,
                    FilterOp::Gt => o == Ordering::Greater,
                    FilterOp::Gte => o != Ordering::Less,
                    FilterOp::In => false,
                },
            },
        }
    }
}

/// A validated query.
#[derive(Debug, Clone, PartialEq)]
pub struct TableQuery {
    /// The aggregate function.
    pub op: AggOp,
    /// `None` only for `count` (count rows).
    pub column: Option<String>,
    /// All must hold (AND).
    pub filters: Vec<Filter>,
    /// Column whose values form the groups.
    pub group_by: Option<String>,
}

fn unknown_column(schema: &TableSchema, name: &str) -> SkillError {
    SkillError::invalid(
        "unknown_column",
        format!(
            "unknown column {name:?}; known columns: {}",
            schema.column_list()
        ),
    )
}

/// What one capability may read of its table: the table's columns and the
/// subset the capability grants.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The table (all its columns, for "unknown column" errors).
    pub schema: &'a TableSchema,
    /// The columns a query may name; nothing else is readable.
    pub granted: &'a [String],
    /// The capability, named in refusals.
    pub capability: &'a str,
}

impl<'a> Scope<'a> {
    /// The column `name` if it exists and is granted; otherwise an error
    /// that says which of the two it is.
    fn column(&self, name: &str) -> Result<&'a Column, SkillError> {
        let col = self
            .schema
            .column(name)
            .ok_or_else(|| unknown_column(self.schema, name))?;
        if !self.granted.iter().any(|g| g == name) {
            return Err(SkillError::invalid(
                "scope_denied",
                format!(
                    "column {name:?} is not granted by {}; granted columns: {}. \
                     The query was refused before any row was read",
                    self.capability,
                    self.granted.join(", ")
                ),
            ));
        }
        Ok(col)
    }
}

impl TableQuery {
    /// Parses and validates `input` against the capability's scope. Every
    /// error names the offending field and value.
    pub fn parse(input: &Value, scope: &Scope<'_>) -> Result<Self, SkillError> {
        let obj = object_with(input, &["aggregate", "filters", "group_by"])?;
        let (op, column) = match obj.get("aggregate") {
            None | Some(Value::Null) => (AggOp::Count, None),
            // Shorthand: "aggregate": "count".
            Some(Value::String(s)) => {
                let op = AggOp::parse(s).ok_or_else(|| bad_op(s))?;
                (op, None)
            }
            Some(Value::Object(a)) => {
                if let Some(k) = a.keys().find(|k| !matches!(k.as_str(), "op" | "column")) {
                    return Err(SkillError::invalid(
                        "unknown_field",
                        format!("unknown field \"aggregate.{k}\"; known fields: aggregate.op, aggregate.column"),
                    ));
                }
                let op = match a.get("op") {
                    Some(Value::String(s)) => AggOp::parse(s).ok_or_else(|| bad_op(s))?,
                    None => {
                        return Err(SkillError::invalid(
                            "missing_field",
                            "field `aggregate.op` is required",
                        ))
                    }
                    Some(v) => {
                        return Err(SkillError::invalid(
                            "wrong_type",
                            format!(
                                "field `aggregate.op` must be a string, got {}",
                                json_type(v)
                            ),
                        ))
                    }
                };
                let column = match a.get("column") {
                    None | Some(Value::Null) => None,
                    // `*` means rows, as in COUNT(*).
                    Some(Value::String(c)) if c == "*" => None,
                    Some(Value::String(c)) => Some(c.clone()),
                    Some(v) => {
                        return Err(SkillError::invalid(
                            "wrong_type",
                            format!(
                                "field `aggregate.column` must be a string, got {}",
                                json_type(v)
                            ),
                        ))
                    }
                };
                (op, column)
            }
            Some(v) => {
                return Err(SkillError::invalid(
                    "wrong_type",
                    format!(
                        "field `aggregate` must be an object {{\"op\", \"column\"}}, got {}",
                        json_type(v)
                    ),
                ))
            }
        };
        if let Some(c) = &column {
            let col = scope.column(c)?;
            if op != AggOp::Count && !col.ty.is_numeric() {
                return Err(SkillError::invalid(
                    "column_not_numeric",
                    format!(
                        "column {c:?} is {}; {} needs a numeric column",
                        col.ty.as_sql(),
                        op.as_str()
                    ),
                ));
            }
        } else if op != AggOp::Count {
            return Err(SkillError::invalid(
                "missing_field",
                format!("field `aggregate.column` is required for {}", op.as_str()),
            ));
        }

        let group_by = match obj.get("group_by") {
            None | Some(Value::Null) => None,
            Some(Value::String(g)) => {
                scope.column(g)?;
                Some(g.clone())
            }
            Some(v) => {
                return Err(SkillError::invalid(
                    "wrong_type",
                    format!(
                        "field `group_by` must be a column name, got {}",
                        json_type(v)
                    ),
                ))
            }
        };

        let filters = match obj.get("filters") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                if items.len() > MAX_FILTERS {
                    return Err(SkillError::invalid(
                        "too_many_filters",
                        format!("at most {MAX_FILTERS} filters, got {}", items.len()),
                    ));
                }
                items
                    .iter()
                    .enumerate()
                    .map(|(i, f)| parse_filter(i, f, scope))
                    .collect::<Result<Vec<_>, _>>()?
            }
            Some(v) => {
                return Err(SkillError::invalid(
                    "wrong_type",
                    format!("field `filters` must be an array, got {}", json_type(v)),
                ))
            }
        };
        Ok(TableQuery {
            op,
            column,
            filters,
            group_by,
        })
    }
}

/// Every column name `input` mentions (aggregate column, group by, filter
/// columns), read without judging anything else: what a read names, for
/// the contract decision that comes before parsing
/// ([`crate::contracts::read`]). `*` and absent columns name nothing.
pub fn referenced_columns(input: &Value) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut add = |v: Option<&Value>| {
        if let Some(Value::String(c)) = v {
            if c != "*" {
                out.insert(c.clone());
            }
        }
    };
    if let Some(Value::Object(a)) = input.get("aggregate") {
        add(a.get("column"));
    }
    add(input.get("group_by"));
    if let Some(Value::Array(items)) = input.get("filters") {
        for f in items {
            add(f.get("column"));
        }
    }
    out
}

fn bad_op(s: &str) -> SkillError {
    SkillError::invalid(
        "unknown_aggregate",
        format!("unknown aggregate op {s:?}; known ops: count, sum, avg, min, max"),
    )
}

fn parse_filter(i: usize, f: &Value, scope: &Scope<'_>) -> Result<Filter, SkillError> {
    let at = |name: &str| format!("filters[{i}].{name}");
    let obj = f.as_object().ok_or_else(|| {
        SkillError::invalid(
            "wrong_type",
            format!(
                "`filters[{i}]` must be an object {{\"column\", \"op\", \"value\"}}, got {}",
                json_type(f)
            ),
        )
    })?;
    if let Some(k) = obj
        .keys()
        .find(|k| !matches!(k.as_str(), "column" | "op" | "value"))
    {
        return Err(SkillError::invalid(
            "unknown_field",
            format!(
                "unknown field \"{}\"; known fields: column, op, value",
                at(k)
            ),
        ));
    }
    let column = match obj.get("column") {
        Some(Value::String(c)) => c,
        None => {
            return Err(SkillError::invalid(
                "missing_field",
                format!("field `{}` is required", at("column")),
            ))
        }
        Some(v) => {
            return Err(SkillError::invalid(
                "wrong_type",
                format!(
                    "field `{}` must be a string, got {}",
                    at("column"),
                    json_type(v)
                ),
            ))
        }
    };
    let col = scope.column(column)?;
    let op = match obj.get("op") {
        Some(Value::String(s)) => FilterOp::parse(s).ok_or_else(|| {
            SkillError::invalid(
                "unknown_filter_op",
                format!(
                    "unknown filter op {s:?} in `{}`; known ops: eq, ne, lt, lte, gt, gte, in",
                    at("op")
                ),
            )
        })?,
        None => {
            return Err(SkillError::invalid(
                "missing_field",
                format!("field `{}` is required", at("op")),
            ))
        }
        Some(v) => {
            return Err(SkillError::invalid(
                "wrong_type",
                format!(
                    "field `{}` must be a string, got {}",
                    at("op"),
                    json_type(v)
                ),
            ))
        }
    };
    let scalar = |v: &Value, field: &str| -> Result<Scalar, SkillError> {
        match (col.ty, v) {
            (ColumnType::Text, Value::String(s)) => Ok(Scalar::Text(s.clone())),
            // Numbers cross the A2A wire as protobuf doubles: accept any
            // JSON number for INTEGER and REAL columns alike.
            (ColumnType::Integer | ColumnType::Real, Value::Number(n)) => {
                n.as_f64().map(Scalar::Number).ok_or_else(|| {
                    SkillError::invalid(
                        "wrong_type",
                        format!("field `{field}` is not a representable number"),
                    )
                })
            }
            (ty, v) => Err(SkillError::invalid(
                "wrong_type",
                format!(
                    "field `{field}` must be a {} for column {column:?} ({}), got {}",
                    if ty.is_numeric() { "number" } else { "string" },
                    ty.as_sql(),
                    json_type(v)
                ),
            )),
        }
    };
    let values = match (op, obj.get("value")) {
        (_, None) => {
            return Err(SkillError::invalid(
                "missing_field",
                format!("field `{}` is required", at("value")),
            ))
        }
        (FilterOp::In, Some(Value::Array(list))) => {
            if list.is_empty() || list.len() > MAX_IN_VALUES {
                return Err(SkillError::invalid(
                    "bad_in_list",
                    format!(
                        "field `{}` must list 1 to {MAX_IN_VALUES} values, got {}",
                        at("value"),
                        list.len()
                    ),
                ));
            }
            list.iter()
                .enumerate()
                .map(|(j, v)| scalar(v, &format!("{}[{j}]", at("value"))))
                .collect::<Result<Vec<_>, _>>()?
        }
        (FilterOp::In, Some(v)) => {
            return Err(SkillError::invalid(
                "wrong_type",
                format!(
                    "field `{}` must be an array for op \"in\", got {}",
                    at("value"),
                    json_type(v)
                ),
            ))
        }
        (_, Some(v)) => vec![scalar(v, &at("value"))?],
    };
    Ok(Filter {
        column: column.clone(),
        op,
        values,
    })
}

/// Runs a validated query. Column names come only from `schema` (they were
/// matched against it in [`TableQuery::parse`]); values are bound.
pub async fn run(
    pool: &SqlitePool,
    schema: &TableSchema,
    q: &TableQuery,
) -> Result<Value, SkillError> {
    // Re-resolve every name through the schema so only names read from
    // PRAGMA table_info ever reach the SQL text.
    let ident = |name: &str| -> Result<String, SkillError> {
        schema
            .column(name)
            .map(|c| format!("\"{}\"", c.name.replace('"', "\"\"")))
            .ok_or_else(|| unknown_column(schema, name))
    };
    let table = format!("\"{}\"", schema.table.replace('"', "\"\""));
    let agg = match (q.op, &q.column) {
        (AggOp::Count, None) => "COUNT(*)".to_string(),
        (AggOp::Count, Some(c)) => format!("COUNT({})", ident(c)?),
        (op, Some(c)) => format!("{}({})", op.as_str().to_ascii_uppercase(), ident(c)?),
        (op, None) => {
            return Err(SkillError::invalid(
                "missing_field",
                format!("field `aggregate.column` is required for {}", op.as_str()),
            ))
        }
    };
    let mut conds = Vec::new();
    for f in &q.filters {
        let c = ident(&f.column)?;
        if f.op == FilterOp::In {
            conds.push(format!("{c} IN ({})", vec!["?"; f.values.len()].join(", ")));
        } else {
            conds.push(format!("{c} {} ?", f.op.sql()));
        }
    }
    let where_sql = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    let key_type = match &q.group_by {
        Some(g) => schema.column(g).map(|c| c.ty),
        None => None,
    };
    let sql = match &q.group_by {
        Some(g) => {
            let key = match key_type {
                Some(ColumnType::Text) => format!("CAST({} AS TEXT)", ident(g)?),
                _ => format!("CAST({} AS REAL)", ident(g)?),
            };
            format!("SELECT {key} AS k, CAST({agg} AS REAL) AS v, COUNT(*) AS n FROM {table}{where_sql} GROUP BY 1 ORDER BY 1")
        }
        None => format!(
            "SELECT NULL AS k, CAST({agg} AS REAL) AS v, COUNT(*) AS n FROM {table}{where_sql}"
        ),
    };
    let mut query = sqlx::query(&sql);
    for f in &q.filters {
        for v in &f.values {
            query = match v {
                Scalar::Text(s) => query.bind(s.clone()),
                Scalar::Number(n) => query.bind(*n),
            };
        }
    }
    let rows = query.fetch_all(pool).await?;
    let mut groups = Vec::with_capacity(rows.len());
    let mut row_count: i64 = 0;
    for r in &rows {
        let n: i64 = r.try_get("n")?;
        let v: Option<f64> = r.try_get("v")?;
        let key = match key_type {
            None => Value::Null,
            Some(ColumnType::Text) => r
                .try_get::<Option<String>, _>("k")?
                .map(Value::String)
                .unwrap_or(Value::Null),
            // Keys are strings on the wire (the contracts say string|null);
            // SQL already sorted numeric keys numerically.
            Some(ColumnType::Integer | ColumnType::Real) => r
                .try_get::<Option<f64>, _>("k")?
                .map(|k| Value::String(number_key(k)))
                .unwrap_or(Value::Null),
        };
        let value = match (q.op, v) {
            (AggOp::Count, Some(v)) => json!(v as i64),
            (AggOp::Count, None) => json!(0),
            (_, Some(v)) => num(round2(v)),
            (_, None) => Value::Null,
        };
        row_count += n;
        groups.push(json!({"key": key, "value": value, "count": n}));
    }
    Ok(json!({
        "table": schema.table,
        // `*` for a row count: the contracts want a string here.
        "aggregate": {"op": q.op.as_str(), "column": q.column.as_deref().unwrap_or("*")},
        "group_by": q.group_by,
        "groups": groups,
        "row_count": row_count,
    }))
}

/// A numeric group key as text: `3` for whole numbers, `12.5` otherwise.
fn number_key(k: f64) -> String {
    if k.fract() == 0.0 && k.abs() < 1e15 {
        format!("{}", k as i64)
    } else {
        k.to_string()
    }
}

/// One line for generic clients: `sum(order_value) of orders by region
/// over 624 rows: APAC 1.00, EMEA 2.00, ...`.
pub fn summary_line(result: &Value) -> String {
    let op = result["aggregate"]["op"].as_str().unwrap_or("count");
    let col = result["aggregate"]["column"].as_str().unwrap_or("*");
    let table = result["table"].as_str().unwrap_or("table");
    let rows = result["row_count"].as_i64().unwrap_or(0);
    let by = result["group_by"]
        .as_str()
        .map(|g| format!(" by {g}"))
        .unwrap_or_default();
    let groups = result["groups"].as_array().cloned().unwrap_or_default();
    let render = |v: &Value| match v {
        Value::Null => "null".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let parts: Vec<String> = groups
        .iter()
        .take(8)
        .map(|g| {
            if g["key"].is_null() {
                render(&g["value"])
            } else {
                format!("{} {}", render(&g["key"]), render(&g["value"]))
            }
        })
        .collect();
    let more = if groups.len() > 8 {
        format!(", … ({} groups)", groups.len())
    } else {
        String::new()
    };
    format!(
        "{op}({col}) of {table}{by} over {rows} rows: {}{more}",
        parts.join(", ")
    )
}

#[cfg(test)]
#[path = "query_tests.rs"]
mod tests;
