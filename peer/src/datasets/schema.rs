//! A dataset table's shape: its columns and their storage classes. The CSV
//! reader infers them from a file ([`super::csv`]), the seeder reads them
//! back from the store ([`super::seed::table_schema`]), and the query
//! engine checks every column a caller names against them.

use serde::Serialize;

/// SQLite storage class of a column, as declared in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ColumnType {
    /// Whole numbers.
    Integer,
    /// Floating point.
    Real,
    /// Anything else.
    Text,
}

impl ColumnType {
    /// Whether sum/avg/min/max make sense on it.
    pub fn is_numeric(self) -> bool {
        matches!(self, ColumnType::Integer | ColumnType::Real)
    }

    /// The SQL spelling.
    pub fn as_sql(self) -> &'static str {
        match self {
            ColumnType::Integer => "INTEGER",
            ColumnType::Real => "REAL",
            ColumnType::Text => "TEXT",
        }
    }

    /// The class of a column SQLite declared as `declared` (`PRAGMA
    /// table_info`'s `type`).
    pub(super) fn from_declared(declared: &str) -> Self {
        // SQLite's affinity rules, simplified to the three classes we create.
        let d = declared.to_ascii_uppercase();
        if d.contains("INT") {
            ColumnType::Integer
        } else if d.contains("REAL")
            || d.contains("FLOA")
            || d.contains("DOUB")
            || d.contains("NUM")
        {
            ColumnType::Real
        } else {
            ColumnType::Text
        }
    }
}

/// One column of a dataset table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Column {
    /// As declared in the table.
    pub name: String,
    /// Its storage class.
    pub ty: ColumnType,
}

/// The columns of a table, read from `PRAGMA table_info`: the query engine
/// validates every column name a caller sends against this list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableSchema {
    /// The table name.
    pub table: String,
    /// In declaration order.
    pub columns: Vec<Column>,
}

impl TableSchema {
    /// The column called `name`, if it exists (exact, case-sensitive).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// `a, b, c`: for error messages that list what exists.
    pub fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}
