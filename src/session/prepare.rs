//! SQL prepared statements: `PREPARE name [(types)] AS statement`,
//! `EXECUTE name [(arguments)]`, `DEALLOCATE` (PostgreSQL's
//! `prepare.c` as the SQL commands see it).
//!
//! A prepared statement is kept as its text. EXECUTE puts each argument
//! in place of its `$n` (cast to the declared type, when one was
//! declared: an undeclared parameter takes its type from where it stands,
//! as an untyped literal does) and runs the result as a statement of its
//! own inside the EXECUTE. So every EXECUTE is planned afresh: it always
//! sees the tables as they are (PostgreSQL re-plans a prepared statement
//! whose tables changed), and its arguments bound as constants give the
//! plan PostgreSQL's custom plans would have.
//!
//! Invariants: prepared statements belong to the session, not to a
//! transaction (a ROLLBACK keeps them); only SELECT, VALUES, INSERT,
//! UPDATE and DELETE are prepared, so an EXECUTE never runs another.

use std::collections::HashMap;
use std::sync::Arc;

use heapdb_grammar::ast;
use heapdb_grammar::lexer::{tokenize, TokenKind};

use super::{sysview, writes, Column, QueryResult, Session};
use crate::catalog::ViewDef;
use crate::err;
use crate::error::{parse_error, Result};
use crate::exec::vector::Batch;
use crate::types::DataType;

/// One prepared statement.
struct PreparedStatement {
    /// The declared parameter types.
    types: Vec<ast::DataType>,
    /// The statement's text, with its `$n`.
    text: String,
    /// How many parameters EXECUTE must give: the declared ones, or more
    /// when the text refers to a higher `$n`.
    nparams: usize,
    /// The text of the PREPARE as the client sent it.
    statement: String,
    /// When it was prepared (microseconds since 2000-01-01 UTC).
    prepared_at: i64,
    /// How many times it ran (each run is planned for its arguments:
    /// PostgreSQL's custom plans).
    runs: i64,
    /// The types of the rows its first run returned: later runs must
    /// return the same (a table changed since may not change them).
    result_types: Option<Vec<DataType>>,
}

/// The session's prepared statements, by name.
#[derive(Default)]
pub(crate) struct PreparedStatements {
    open: HashMap<String, PreparedStatement>,
}

/// The name of the view of the prepared statements.
pub(crate) const PG_PREPARED_STATEMENTS: &str = "pg_prepared_statements";

impl PreparedStatements {
    /// The `pg_prepared_statements` view, oldest first. A parameter whose
    /// type was not declared shows as `unknown` (PostgreSQL shows the type
    /// it inferred).
    pub(crate) fn system_view(&self) -> Arc<ViewDef> {
        let mut open: Vec<(&String, &PreparedStatement)> = self.open.iter().collect();
        open.sort_by_key(|(name, p)| (p.prepared_at, name.to_string()));
        let rows: Vec<Vec<String>> = open
            .iter()
            .map(|(name, p)| {
                let types: Vec<String> = (0..p.nparams)
                    .map(|i| {
                        let t = p
                            .types
                            .get(i)
                            .map_or("unknown".to_string(), |t| t.to_string());
                        sysview::quote(&t)
                    })
                    .collect();
                vec![
                    sysview::quote(name),
                    sysview::quote(&p.statement),
                    sysview::timestamptz(p.prepared_at),
                    format!("ARRAY[{}]::text[]", types.join(", ")),
                    "true".to_string(),
                    "0".to_string(),
                    p.runs.to_string(),
                ]
            })
            .collect();
        sysview::values_view(
            PG_PREPARED_STATEMENTS,
            &[
                ("name", DataType::Text, "text"),
                ("statement", DataType::Text, "text"),
                ("prepare_time", DataType::TimestampTz(None), "timestamptz"),
                (
                    "parameter_types",
                    DataType::Array(&DataType::Text),
                    "text[]",
                ),
                ("from_sql", DataType::Bool, "boolean"),
                ("generic_plans", DataType::Int8, "bigint"),
                ("custom_plans", DataType::Int8, "bigint"),
            ],
            &rows,
        )
    }
}

/// Where `$n` stands in `text`: (start, end, n).
fn param_refs(text: &str) -> Vec<(usize, usize, usize)> {
    let toks = tokenize(text);
    let mut refs = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let Some(next) = toks.get(k + 1) else { break };
        if t.kind == TokenKind::Other
            && &text[t.start..t.end] == "$"
            && next.kind == TokenKind::Number
            && next.start == t.end
        {
            if let Ok(n) = text[next.start..next.end].parse::<usize>() {
                refs.push((t.start, next.end, n));
            }
        }
    }
    refs
}

/// `text` with each `$n` replaced by `with(n)`.
fn substitute(
    text: &str,
    refs: &[(usize, usize, usize)],
    with: impl Fn(usize) -> String,
) -> String {
    let mut out = String::with_capacity(text.len() + 16 * refs.len());
    let mut last = 0;
    for &(start, end, n) in refs {
        out.push_str(&text[last..start]);
        out.push_str(&with(n));
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

/// `text` parsed as one statement, or the syntax error PostgreSQL reports.
/// `position` maps an offset in `text` to one in what the client sent
/// (`None`: the error has no position there).
fn parse_prepared(text: &str, position: impl Fn(usize) -> Option<usize>) -> Result<ast::Statement> {
    let stmt = heapdb_grammar::parse_one(text).map_err(|e| {
        let mut e = parse_error(e);
        e.position = e.position.and_then(&position);
        e
    })?;
    match stmt {
        ast::Statement::Query(_)
        | ast::Statement::Insert(_)
        | ast::Statement::Update(_)
        | ast::Statement::Delete(_) => Ok(stmt),
        _ => {
            let first = text.split_whitespace().next().unwrap_or("");
            let e = err!(SyntaxError, "syntax error at or near \"{first}\"");
            Err(match position(text.len() - text.trim_start().len()) {
                Some(p) => e.with_position(p),
                None => e,
            })
        }
    }
}

impl Session {
    /// `PREPARE name [(types)] AS statement`: checks the statement's syntax
    /// and keeps its text.
    pub(crate) fn prepare_statement(&mut self, p: &ast::Prepare) -> Result<QueryResult> {
        let statement = self
            .cursors
            .statement_text
            .take()
            .unwrap_or_else(|| format!("{p}"));
        if self.prepared.open.contains_key(&p.name) {
            return Err(err!(
                DuplicatePreparedStatement,
                "prepared statement \"{}\" already exists",
                p.name
            ));
        }
        let refs = param_refs(&p.text);
        // Each `$n` becomes a NULL of its own length, so offsets agree.
        let probe = substitute(&p.text, &refs, |n| {
            let width = 1 + n.to_string().len();
            format!("{:<width$}", if width >= 4 { "NULL" } else { "0" })
        });
        parse_prepared(&probe, |o| Some(p.offset.0 + o))?;
        let highest = refs.iter().map(|r| r.2).max().unwrap_or(0);
        self.prepared.open.insert(
            p.name.clone(),
            PreparedStatement {
                types: p.types.clone(),
                text: p.text.clone(),
                nparams: highest.max(p.types.len()),
                statement,
                prepared_at: self.txn_ref().start_ts,
                runs: 0,
                result_types: None,
            },
        );
        Ok(QueryResult::empty("PREPARE"))
    }

    /// `EXECUTE name [(arguments)]`: runs the statement with its arguments
    /// in place.
    pub(crate) fn execute_prepared(
        &mut self,
        e: &ast::Execute,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let Some(ps) = self.prepared.open.get_mut(&e.name) else {
            return Err(err!(
                InvalidSqlStatementName,
                "prepared statement \"{}\" does not exist",
                e.name
            ));
        };
        if e.args.len() != ps.nparams {
            return Err(err!(
                SyntaxError,
                "wrong number of parameters for prepared statement \"{}\"",
                e.name
            )
            .with_detail(format!(
                "Expected {} parameters but got {}.",
                ps.nparams,
                e.args.len()
            )));
        }
        ps.runs += 1;
        let refs = param_refs(&ps.text);
        let sql = substitute(&ps.text, &refs, |n| {
            match (e.args.get(n - 1), ps.types.get(n - 1)) {
                (Some(arg), Some(ty)) => format!("({arg})::{ty}"),
                (Some(arg), None) => format!("({arg})"),
                (None, _) => "NULL".to_string(),
            }
        });
        let expected = ps.result_types.clone();
        let stmt = parse_prepared(&sql, |_| None)?;
        self.check_read_only(&stmt)?;
        if writes(&stmt) {
            self.assign_xid()?;
        }
        // PostgreSQL fixes the result's row type when it prepares; a run
        // that would return other types fails before its rows go out (and
        // a write it made is undone with the failed statement).
        let same = |cols: &[Column]| -> Result<()> {
            match &expected {
                Some(t) if !t.iter().copied().eq(cols.iter().map(|c| c.ty)) => Err(err!(
                    FeatureNotSupported,
                    "cached plan must not change result type"
                )),
                _ => Ok(()),
            }
        };
        let r = self.dispatch(&stmt, &mut |cols, b| {
            same(cols)?;
            sink(cols, b)
        })?;
        let cols = if r.returns_rows { &r.columns[..] } else { &[] };
        same(cols)?;
        if let Some(ps) = self.prepared.open.get_mut(&e.name) {
            ps.result_types = Some(cols.iter().map(|c| c.ty).collect());
        }
        Ok(r)
    }

    /// `DEALLOCATE [PREPARE] name` / `DEALLOCATE ALL`.
    pub(crate) fn deallocate(&mut self, name: Option<&str>) -> Result<QueryResult> {
        match name {
            None => self.prepared.open.clear(),
            Some(name) => {
                if self.prepared.open.remove(name).is_none() {
                    return Err(err!(
                        InvalidSqlStatementName,
                        "prepared statement \"{name}\" does not exist"
                    ));
                }
            }
        }
        Ok(QueryResult::empty(if name.is_some() {
            "DEALLOCATE"
        } else {
            "DEALLOCATE ALL"
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::{param_refs, substitute};

    #[test]
    fn parameters_are_found_outside_strings_only() {
        let text = "select $1, '$2', $10 from t where a = $1";
        let refs = param_refs(text);
        assert_eq!(refs.iter().map(|r| r.2).collect::<Vec<_>>(), vec![1, 10, 1]);
        assert_eq!(
            substitute(text, &refs, |n| format!("<{n}>")),
            "select <1>, '$2', <10> from t where a = <1>"
        );
    }
}
