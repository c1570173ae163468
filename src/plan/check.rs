//! CHECK constraints' conditions: binding a new one over a table's columns
//! with PostgreSQL's refusals (no subqueries, aggregates, window or
//! set-returning functions; boolean), binding the stored text again when
//! the catalog is read, and printing it as psql's `\d` shows it.
//!
//! Invariants: a bound condition reads only its table's columns
//! (`Column(i)` is table column `i`) and holds no parameters or subplans;
//! a condition is accepted only when its stored text binds again, outside
//! any session, to the same expression (so the catalog file always reads
//! back).

use heapdb_grammar::ast;

use super::bind::{at, walk, Binder, Mode};
use super::explain::deparse;
use super::indexpred::PredicateContext;
use super::scope::Scope;
use crate::catalog::{CheckConstraint, ColumnDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::nodes::expr::Expr;
use crate::settings::Settings;

/// Functions returning sets, which a condition may not call.
const SET_RETURNING: &[&str] = &[
    "generate_series",
    "generate_subscripts",
    "unnest",
    "string_to_table",
    "regexp_matches",
    "regexp_split_to_table",
    "json_each",
    "jsonb_each",
    "json_each_text",
    "jsonb_each_text",
    "json_array_elements",
    "jsonb_array_elements",
    "json_array_elements_text",
    "jsonb_array_elements_text",
    "json_object_keys",
    "jsonb_object_keys",
];

/// PostgreSQL's refusals of a condition before it is bound.
fn refuse(e: &ast::Expr) -> Result<()> {
    let mut bad: Option<crate::error::Error> = None;
    walk(e, &mut |x| {
        if bad.is_some() {
            return;
        }
        match &x.kind {
            ast::ExprKind::Exists(_)
            | ast::ExprKind::Subquery(_)
            | ast::ExprKind::InSubquery { .. }
            | ast::ExprKind::Quantified { .. } => {
                bad = Some(at(
                    err!(
                        FeatureNotSupported,
                        "cannot use subquery in check constraint"
                    ),
                    x.offset,
                ))
            }
            ast::ExprKind::Function(f) if f.name.schema.is_none() => {
                let name = f.name.name.to_ascii_lowercase();
                if SET_RETURNING.contains(&name.as_str()) {
                    bad = Some(at(
                        err!(
                            FeatureNotSupported,
                            "set-returning functions are not allowed in check constraints"
                        ),
                        x.offset,
                    ));
                }
            }
            _ => {}
        }
    });
    bad.map_or(Ok(()), Err)
}

/// The scope of a table's columns, named `table`.
fn columns_scope(table: &str, columns: &[ColumnDef]) -> Scope {
    Scope::of(table, columns.iter().map(|c| (c.name.clone(), c.ty)))
}

/// Binds the new condition `e` of a check on table `table` (of columns
/// `columns`) under the session's `settings`, with PostgreSQL's errors; the
/// condition and the text to store. Only built-in functions are known
/// here: the stored text must bind again where no session is.
pub fn bind_new(
    settings: &Settings,
    table: &str,
    columns: &[ColumnDef],
    e: &ast::Expr,
) -> Result<(Expr, String)> {
    refuse(e)?;
    let expr = bind_ast(settings, table, columns, e)?;
    let text = e.to_string();
    let again = bind_text(table, columns, &text);
    if again.map(|a| deparse(&a, &[])).ok() != Some(deparse(&expr, &[])) {
        return Err(err!(
            FeatureNotSupported,
            "check constraint reads differently under DateStyle ISO, MDY"
        )
        .with_hint("Write date and time constants in ISO 8601 form (YYYY-MM-DD)."));
    }
    Ok((expr, text))
}

fn bind_ast(
    settings: &Settings,
    table: &str,
    columns: &[ColumnDef],
    e: &ast::Expr,
) -> Result<Expr> {
    let mut ctx = PredicateContext { settings };
    let scope = columns_scope(table, columns);
    Binder::new(&mut ctx).bind_condition(e, &scope, &mut Mode::NoAgg("check constraints"), "CHECK")
}

/// A stored DEFAULT expression's `text` as psql's `\d` shows it
/// (PostgreSQL's `pg_get_expr` of the expression before its coercion to
/// the column's type): a string literal typed as the column's type
/// without its modifier, other expressions deparsed; `None` for `NULL`.
pub fn describe_default(text: &str, ty: &crate::types::DataType) -> Option<String> {
    let Ok(e) = super::modify::parse_default(text) else {
        return Some(text.to_string());
    };
    match &e.kind {
        ast::ExprKind::Literal(ast::Literal::Null) => return None,
        ast::ExprKind::Literal(ast::Literal::String(s)) => {
            return Some(format!("'{}'::{}", s.replace('\'', "''"), ty.base_name()));
        }
        // nextval's argument is a regclass constant.
        ast::ExprKind::Function(f) if f.name.name == "nextval" && f.args.len() == 1 => {
            let arg = match &f.args[0].kind {
                ast::ExprKind::Cast { expr, .. } => expr,
                _ => &f.args[0],
            };
            if let ast::ExprKind::Literal(ast::Literal::String(s)) = &arg.kind {
                return Some(format!("nextval('{}'::regclass)", s.replace('\'', "''")));
            }
            return Some(text.to_string());
        }
        // A call is shown as written: binding would evaluate a stable
        // one such as now().
        ast::ExprKind::Function(_) => return Some(text.to_string()),
        _ => {}
    }
    let settings = Settings::default();
    let mut ctx = PredicateContext {
        settings: &settings,
    };
    let bound = Binder::new(&mut ctx).bind_expr(
        &e,
        &Scope::default(),
        &mut Mode::NoAgg("DEFAULT expressions"),
    );
    Some(match bound {
        Ok(b) => super::indexpred::pretty(&b, &[]),
        Err(_) => text.to_string(),
    })
}

/// A stored condition's `text` bound over `columns` of table `table` (an
/// inherited CHECK constraint bound over the child's columns).
pub fn bind_columns(table: &str, columns: &[ColumnDef], text: &str) -> Result<Expr> {
    bind_text(table, columns, text)
}

fn bind_text(table: &str, columns: &[ColumnDef], text: &str) -> Result<Expr> {
    let e = super::modify::parse_default(text)?;
    bind_ast(&Settings::default(), table, columns, &e)
}

/// A stored condition (a check's or a partial index's predicate) bound
/// again over `table` (the catalog's [`crate::catalog::PredicateBinder`]).
pub fn bind_stored(table: &TableDef, text: &str) -> Result<Expr> {
    bind_text(&table.name, &table.columns, text)
}

/// The columns `e` reads, by position, each once, in order of first use.
pub fn columns_read(e: &Expr) -> Vec<usize> {
    let mut cols = Vec::new();
    super::select::columns_used(e, &mut cols);
    let mut out = Vec::new();
    for c in cols {
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Whether check `c` reads column `col`.
pub fn reads_column(c: &CheckConstraint, col: usize) -> bool {
    columns_read(&c.expr).contains(&col)
}

/// `CHECK (cond)` as psql's `\d` shows it (`pg_get_constraintdef` pretty),
/// the columns named `names` (quoted where needed), with ` NOT VALID` when
/// not validated.
pub fn describe(c: &CheckConstraint, names: &[String]) -> String {
    let mut s = format!("CHECK ({})", super::indexpred::pretty(&c.expr, names));
    if c.no_inherit {
        s.push_str(" NO INHERIT");
    }
    if !c.validated {
        s.push_str(" NOT VALID");
    }
    s
}
