//! The data a reference peer owns (DESIGN.md §3, "reference peers").
//!
//! Demos, tests and benchmarks need real numbers that everyone can
//! recompute: the same seed always yields the same rows (ChaCha8 is
//! portable and stable), so a test can regenerate the rows in Rust and check
//! the peer's SQL answers against them. A CSV dataset lets a fourth peer
//! bring its own data by config alone.
//!
//! Each dataset lives in one table of the peer's own SQLite file. A
//! `dataset_meta` row remembers which config produced it; the table is
//! rebuilt when the config changes and left alone otherwise.
//!
//! | module | what it decides |
//! |---|---|
//! | [`generate`] | the seeded rows: orders, budgets, tickets |
//! | [`hostile`] | the tickets that carry instructions, kept as plain data |
//! | [`schema`] | a table's columns and their types: what the CSV reader infers, what the store reports |
//! | [`csv`] | reading a CSV file into typed columns |
//! | [`seed`] | filling the store once per config, and reading the table's schema back |
//!
//! Everything other modules use is re-exported here
//! (`crate::datasets::ensure_seeded`, `crate::datasets::TableSchema`, ...).

pub mod csv;
pub mod generate;
pub mod hostile;
pub mod schema;
pub mod seed;

pub use csv::{parse_csv, Cell, CsvTable};
pub use generate::{
    generate_budgets, generate_orders, generate_tickets, BudgetRow, OrderRow, TicketRow,
    DEPARTMENTS, PRODUCTS, REGIONS,
};
pub use hostile::{hostile_tickets, HOSTILE_TICKETS};
pub use schema::{Column, ColumnType, TableSchema};
pub use seed::{ensure_seeded, table_schema, SeedReport};

/// Why a dataset could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("dataset store: {0}")]
    /// The SQLite store failed.
    Store(#[from] sqlx::Error),
    #[error("reading CSV {path}: {source}")]
    /// The CSV file could not be read.
    CsvRead {
        /// The CSV file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CSV content is unusable.
    #[error("CSV {path}: {message}")]
    Csv {
        /// The CSV file.
        path: String,
        /// What is wrong, with row or column.
        message: String,
    },
    #[error("table {0} does not exist")]
    /// The table is missing.
    NoTable(String),
}
