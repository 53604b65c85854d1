//! Seeding the peer's store: the dataset table is created and filled once
//! per config (a `dataset_meta` signature decides), and its schema is read
//! back for the query engine and the grant check.

use super::csv::{parse_csv, Cell};
use super::generate::{generate_budgets, generate_orders, generate_tickets};
use super::hostile::hostile_tickets;
use super::schema::{Column, ColumnType, TableSchema};
use super::DatasetError;
use crate::config::{is_sql_identifier, DatasetConfig};
use sqlx::{Row, SqlitePool};

/// What [`ensure_seeded`] did, for the startup log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedReport {
    /// The dataset table.
    pub table: String,
    /// Rows it holds now.
    pub rows: u64,
    /// False when the table already held this dataset.
    pub created: bool,
}

/// Creates and fills the dataset table unless it already holds exactly this
/// dataset (same kind, seed, size or CSV content).
pub async fn ensure_seeded(
    pool: &SqlitePool,
    dataset: &DatasetConfig,
) -> Result<SeedReport, DatasetError> {
    sqlx::query("CREATE TABLE IF NOT EXISTS dataset_meta (table_name TEXT PRIMARY KEY, signature TEXT NOT NULL)")
        .execute(pool)
        .await?;
    let table = dataset.table().to_string();
    let csv = match dataset {
        DatasetConfig::Csv { path, .. } => {
            let label = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|source| DatasetError::CsvRead {
                path: label.clone(),
                source,
            })?;
            Some((fnv64(text.as_bytes()), parse_csv(&text, &label)?))
        }
        _ => None,
    };
    let signature = match (dataset, &csv) {
        (DatasetConfig::Orders { seed, rows }, _) => format!("orders:v1:seed={seed}:rows={rows}"),
        (DatasetConfig::Budgets { seed }, _) => format!("budgets:v1:seed={seed}"),
        // v2: the hostile tickets are appended; v3: requester_email.
        (DatasetConfig::Tickets { seed, rows }, _) => format!("tickets:v3:seed={seed}:rows={rows}"),
        (DatasetConfig::Csv { .. }, Some((hash, _))) => format!("csv:v1:{hash:016x}"),
        (DatasetConfig::Csv { .. }, None) => String::new(),
    };
    let stored: Option<String> =
        sqlx::query_scalar("SELECT signature FROM dataset_meta WHERE table_name = ?")
            .bind(&table)
            .fetch_optional(pool)
            .await?;
    if stored.as_deref() == Some(signature.as_str()) {
        if let Ok(n) = count_rows(pool, &table).await {
            if n > 0 {
                return Ok(SeedReport {
                    table,
                    rows: n,
                    created: false,
                });
            }
        }
    }

    let mut tx = pool.begin().await?;
    sqlx::query(&format!("DROP TABLE IF EXISTS \"{table}\""))
        .execute(&mut *tx)
        .await?;
    match dataset {
        DatasetConfig::Orders { seed, rows } => {
            sqlx::query(
                "CREATE TABLE orders (order_id TEXT PRIMARY KEY, region TEXT NOT NULL, order_date TEXT NOT NULL,
                    order_value REAL NOT NULL, product TEXT NOT NULL, customer_name TEXT NOT NULL,
                    customer_email TEXT NOT NULL)",
            )
            .execute(&mut *tx)
            .await?;
            for o in generate_orders(*seed, *rows) {
                sqlx::query("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?)")
                    .bind(o.order_id)
                    .bind(o.region)
                    .bind(o.order_date)
                    .bind(o.order_value)
                    .bind(o.product)
                    .bind(o.customer_name)
                    .bind(o.customer_email)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        DatasetConfig::Budgets { seed } => {
            sqlx::query("CREATE TABLE budgets (department TEXT PRIMARY KEY, budget REAL NOT NULL, spent REAL NOT NULL)")
                .execute(&mut *tx)
                .await?;
            for b in generate_budgets(*seed) {
                sqlx::query("INSERT INTO budgets VALUES (?, ?, ?)")
                    .bind(b.department)
                    .bind(b.budget)
                    .bind(b.spent)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        DatasetConfig::Tickets { seed, rows } => {
            sqlx::query(
                "CREATE TABLE tickets (ticket_id TEXT PRIMARY KEY, subject TEXT NOT NULL, content TEXT NOT NULL,
                    created_at TEXT NOT NULL, requester_email TEXT NOT NULL)",
            )
            .execute(&mut *tx)
            .await?;
            for t in generate_tickets(*seed, *rows)
                .into_iter()
                .chain(hostile_tickets(*rows))
            {
                sqlx::query("INSERT INTO tickets VALUES (?, ?, ?, ?, ?)")
                    .bind(t.ticket_id)
                    .bind(t.subject)
                    .bind(t.content)
                    .bind(t.created_at)
                    .bind(t.requester_email)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        DatasetConfig::Csv { .. } => {
            let Some((_, csv)) = &csv else {
                return Err(DatasetError::NoTable(table));
            };
            // Names were validated as plain identifiers by parse_csv and the
            // config loader; quoting is belt and braces.
            let cols = csv
                .columns
                .iter()
                .map(|c| format!("\"{}\" {}", c.name, c.ty.as_sql()))
                .collect::<Vec<_>>()
                .join(", ");
            sqlx::query(&format!("CREATE TABLE \"{table}\" ({cols})"))
                .execute(&mut *tx)
                .await?;
            let marks = vec!["?"; csv.columns.len()].join(", ");
            let insert = format!("INSERT INTO \"{table}\" VALUES ({marks})");
            for row in &csv.rows {
                let mut q = sqlx::query(&insert);
                for cell in row {
                    q = match cell {
                        Cell::Null => q.bind(None::<String>),
                        Cell::Integer(i) => q.bind(*i),
                        Cell::Real(r) => q.bind(*r),
                        Cell::Text(t) => q.bind(t.clone()),
                    };
                }
                q.execute(&mut *tx).await?;
            }
        }
    }
    sqlx::query("INSERT OR REPLACE INTO dataset_meta (table_name, signature) VALUES (?, ?)")
        .bind(&table)
        .bind(&signature)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    let rows = count_rows(pool, &table).await?;
    Ok(SeedReport {
        table,
        rows,
        created: true,
    })
}

async fn count_rows(pool: &SqlitePool, table: &str) -> Result<u64, DatasetError> {
    if !is_sql_identifier(table) {
        return Err(DatasetError::NoTable(table.to_string()));
    }
    let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM \"{table}\""))
        .fetch_one(pool)
        .await?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Reads a table's columns from `PRAGMA table_info` (bound, not
/// interpolated).
pub async fn table_schema(pool: &SqlitePool, table: &str) -> Result<TableSchema, DatasetError> {
    let rows = sqlx::query("SELECT name, type FROM pragma_table_info(?) ORDER BY cid")
        .bind(table)
        .fetch_all(pool)
        .await?;
    if rows.is_empty() {
        return Err(DatasetError::NoTable(table.to_string()));
    }
    let columns = rows
        .iter()
        .map(|r| {
            Ok(Column {
                name: r.try_get("name")?,
                ty: ColumnType::from_declared(&r.try_get::<String, _>("type")?),
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    Ok(TableSchema {
        table: table.to_string(),
        columns,
    })
}

/// FNV-1a: a stable content fingerprint for the CSV signature (not a
/// security hash; it only decides whether to reload).
fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn seeding_is_idempotent_and_follows_the_config() {
        let pool = exchange::db::memory_sqlite().await.unwrap();
        let d = DatasetConfig::Orders { seed: 42, rows: 50 };
        let first = ensure_seeded(&pool, &d).await.unwrap();
        assert!(first.created);
        assert_eq!(first.rows, 50);
        let again = ensure_seeded(&pool, &d).await.unwrap();
        assert!(!again.created);
        let bigger = ensure_seeded(&pool, &DatasetConfig::Orders { seed: 42, rows: 60 })
            .await
            .unwrap();
        assert!(bigger.created);
        assert_eq!(bigger.rows, 60);
        let schema = table_schema(&pool, "orders").await.unwrap();
        assert_eq!(
            schema.column_list(),
            "order_id, region, order_date, order_value, product, customer_name, customer_email"
        );
        assert_eq!(schema.column("order_value").unwrap().ty, ColumnType::Real);
    }

    #[tokio::test]
    async fn shipped_csv_loads() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../config/peers/data/shipments.csv");
        let pool = exchange::db::memory_sqlite().await.unwrap();
        let d = DatasetConfig::Csv {
            path,
            table: "shipments".into(),
        };
        let r = ensure_seeded(&pool, &d).await.unwrap();
        assert!(r.rows >= 50, "{r:?}");
        let s = table_schema(&pool, "shipments").await.unwrap();
        assert_eq!(s.column("weight_kg").unwrap().ty, ColumnType::Real);
        assert_eq!(s.column("carrier").unwrap().ty, ColumnType::Text);
    }
}
