//! Views of the session's own state (`pg_cursors`,
//! `pg_prepared_statements`): built as a view over `VALUES` each time a
//! statement names one, so the planner reads them as any view.
//!
//! Invariant: the rows are SQL expressions of the columns' types (literals
//! cast to the type), so the view's column types never depend on its rows,
//! and a view without rows is a `SELECT ... WHERE false` of the same types.

use std::sync::Arc;

use crate::catalog::{ViewColumn, ViewDef};
use crate::types::DataType;

/// `s` as an SQL string literal.
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A timestamp with time zone (microseconds since 2000-01-01 UTC) as an
/// SQL expression.
pub(crate) fn timestamptz(micros: i64) -> String {
    format!("(timestamptz '2000-01-01 00:00:00+00' + interval '{micros} microseconds')")
}

/// The view `name` with `columns` (name, type, the type as SQL) whose rows
/// are `rows`, each an SQL expression per column.
pub(crate) fn values_view(
    name: &str,
    columns: &[(&str, DataType, &str)],
    rows: &[Vec<String>],
) -> Arc<ViewDef> {
    let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
    let text = if rows.is_empty() {
        let nulls: Vec<String> = columns
            .iter()
            .map(|(n, _, sql)| format!("NULL::{sql} AS {n}"))
            .collect();
        format!("SELECT {} WHERE false", nulls.join(", "))
    } else {
        let values: Vec<String> = rows
            .iter()
            .map(|row| {
                let cells: Vec<String> = row
                    .iter()
                    .zip(columns)
                    .map(|(v, (_, _, sql))| format!("({v})::{sql}"))
                    .collect();
                format!("({})", cells.join(", "))
            })
            .collect();
        format!(
            "SELECT * FROM (VALUES {}) AS {name} ({})",
            values.join(", "),
            names.join(", ")
        )
    };
    let columns = columns
        .iter()
        .map(|(n, ty, _)| ViewColumn {
            comment: None,
            name: n.to_string(),
            ty: *ty,
        })
        .collect();
    Arc::new(
        ViewDef::new(0, name.to_string(), columns, text, Vec::new())
            .expect("a view of the session's state parses"),
    )
}
