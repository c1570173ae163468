//! A PL/pgSQL expression that is a query: `RETURN max(a) FROM t`,
//! `x := b FROM t WHERE ...`. PostgreSQL runs every PL/pgSQL expression as
//! `SELECT expr`; one with FROM (or WHERE, GROUP BY ...) is such a query,
//! whose value is its one row's one column: NULL without a row, 21000 with
//! more than one, 42601 when it has other than one column.
//!
//! Invariant: the slot's type is the query's first column's type (the
//! compiler casts the slot to where the value goes), so the value is
//! stored as the query produced it.

use std::sync::Arc;

use super::plpgsql::QueryPlan;
use crate::err;
use crate::error::Result;
use crate::types::Value;

/// The query of an expression, where its value goes, and how errors name it.
#[derive(Debug, Clone)]
pub struct QueryValue {
    /// The query `SELECT expr`, over the function's variables.
    pub query: Arc<QueryPlan>,
    /// The slot the value is put in.
    pub slot: usize,
    /// The statement it belongs to (`RETURN`, `assignment`).
    pub what: &'static str,
    /// Its text as errors show it (`query: ...`).
    pub text: String,
}

impl QueryValue {
    /// The value with the variables `vars`, and how many rows the query
    /// returned (`fresh`: as [`QueryPlan::rows`]).
    pub fn eval(&self, vars: &[Value], fresh: bool) -> Result<(Value, usize)> {
        let rows = self.query.rows(vars, fresh)?;
        let ncols = self.query.plan.fields.len();
        if ncols != 1 {
            // PostgreSQL parses an assignment's source as part of the
            // assignment, so it names it so.
            let source = match self.what {
                "assignment" => "assignment source",
                _ => "query",
            };
            return Err(err!(SyntaxError, "{source} returned {ncols} columns")
                .with_context(format!("query: {}", self.text)));
        }
        if rows.len() > 1 {
            return Err(
                err!(CardinalityViolation, "query returned more than one row")
                    .with_context(format!("query: {}", self.text)),
            );
        }
        let n = rows.len();
        let v = rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null);
        Ok((v, n))
    }
}
