//! The CSV reader: a peer's own data file parsed into typed columns, so a
//! fourth peer brings its data by config alone (`dataset: { kind: csv }`).

use super::schema::{Column, ColumnType};
use super::DatasetError;
use crate::config::is_sql_identifier;

/// One parsed CSV cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// An empty cell.
    Null,
    /// A whole number.
    Integer(i64),
    /// A number.
    Real(f64),
    /// Anything else.
    Text(String),
}

/// A CSV file parsed into typed columns.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvTable {
    /// Inferred from the header and cells.
    pub columns: Vec<Column>,
    /// One entry per data row, one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

/// Parses CSV text (RFC 4180: commas, `"` quoting with `""` escapes, CRLF
/// or LF). The header names the columns, which must be plain identifiers;
/// a column is INTEGER if every non-empty cell is an integer, REAL if every
/// one is a number, TEXT otherwise. Empty cells are NULL.
pub fn parse_csv(text: &str, label: &str) -> Result<CsvTable, DatasetError> {
    let err = |message: String| DatasetError::Csv {
        path: label.to_string(),
        message,
    };
    let records = split_csv(text).map_err(&err)?;
    let mut records = records
        .into_iter()
        .filter(|r| !(r.len() == 1 && r[0].is_empty()));
    let header = records
        .next()
        .ok_or_else(|| err("the file is empty".into()))?;
    for (i, name) in header.iter().enumerate() {
        if !is_sql_identifier(name) {
            return Err(err(format!(
                "header column {} `{name}` must be a plain identifier (letters, digits, _)",
                i + 1
            )));
        }
        if header[..i].contains(name) {
            return Err(err(format!("header column `{name}` appears twice")));
        }
    }
    let raw: Vec<Vec<String>> = records.collect();
    for (i, r) in raw.iter().enumerate() {
        if r.len() != header.len() {
            return Err(err(format!(
                "data row {} has {} fields, the header has {}",
                i + 1,
                r.len(),
                header.len()
            )));
        }
    }
    let columns: Vec<Column> = header
        .iter()
        .enumerate()
        .map(|(c, name)| {
            let cells = raw.iter().map(|r| r[c].trim()).filter(|v| !v.is_empty());
            let ty = if cells.clone().all(|v| v.parse::<i64>().is_ok()) {
                ColumnType::Integer
            } else if cells
                .clone()
                .all(|v| v.parse::<f64>().is_ok_and(f64::is_finite))
            {
                ColumnType::Real
            } else {
                ColumnType::Text
            };
            Column {
                name: name.clone(),
                ty,
            }
        })
        .collect();
    let rows = raw
        .into_iter()
        .map(|r| {
            r.into_iter()
                .zip(&columns)
                .map(|(v, col)| {
                    let t = v.trim();
                    if t.is_empty() {
                        return Cell::Null;
                    }
                    match col.ty {
                        ColumnType::Integer => t.parse().map(Cell::Integer).unwrap_or(Cell::Null),
                        ColumnType::Real => t.parse().map(Cell::Real).unwrap_or(Cell::Null),
                        ColumnType::Text => Cell::Text(v),
                    }
                })
                .collect()
        })
        .collect();
    Ok(CsvTable { columns, rows })
}

fn split_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut in_quotes = false;
    let mut line = 1usize;
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => in_quotes = true,
            ',' => record.push(std::mem::take(&mut field)),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                line += 1;
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(format!("unterminated quoted field at line {line}"));
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_types_are_inferred_and_quotes_handled() {
        let t = parse_csv("id,name,w\r\n1,\"a, \"\"b\"\"\",1.5\n2,c,\n", "x.csv").unwrap();
        assert_eq!(
            t.columns.iter().map(|c| c.ty).collect::<Vec<_>>(),
            [ColumnType::Integer, ColumnType::Text, ColumnType::Real]
        );
        assert_eq!(t.rows[0][1], Cell::Text("a, \"b\"".into()));
        assert_eq!(t.rows[1][2], Cell::Null);
        let e = parse_csv("id,bad name\n1,2\n", "x.csv")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad name"), "{e}");
        let e = parse_csv("a,b\n1\n", "x.csv").unwrap_err().to_string();
        assert!(e.contains("row 1"), "{e}");
    }
}
