//! The sequence statements and functions as the session runs them:
//! CREATE/ALTER/DROP SEQUENCE through a
//! [`DdlContext`](crate::commands::context::DdlContext), and the compiled
//! functions that `nextval`, `currval`, `setval` and `lastval` calls run
//! ([`function`]), which reach the database's shared sequence states and
//! the session's own memory of them
//! ([`SessionSequences`](crate::commands::seqfuncs::SessionSequences)).

use std::sync::Arc;

use heapdb_grammar::ast;

use super::index_ddl::with_notices;
use super::query::StmtCtx;
use super::{QueryResult, Session};
use crate::catalog::{CatalogView, SequenceDef};
use crate::err;
use crate::error::Result;
use crate::plan::{Field, TableRows};
use crate::types::funcs::user::{self, Body};
use crate::types::funcs::volatility::Volatility;
use crate::types::{DataType, Value};

impl Session {
    pub(crate) fn create_sequence(&mut self, c: &ast::CreateSequence) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let states = self.db.sequences.clone();
        let notices = self.with_ddl(&snap, |ctx| ctx.create_sequence(c, &states))?;
        Ok(with_notices("CREATE SEQUENCE", notices))
    }

    pub(crate) fn alter_sequence(&mut self, a: &ast::AlterSequence) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let states = self.db.sequences.clone();
        let notices = self.with_ddl(&snap, |ctx| ctx.alter_sequence(a, &states))?;
        Ok(with_notices("ALTER SEQUENCE", notices))
    }

    pub(crate) fn drop_sequence(&mut self, d: &ast::DropSequence) -> Result<QueryResult> {
        let snap = self.statement_snapshot();
        let notices = self.with_ddl(&snap, |ctx| ctx.drop_sequence(d))?;
        Ok(with_notices("DROP SEQUENCE", notices))
    }
}

fn catalog_view<'a>(ctx: &'a StmtCtx<'_>) -> CatalogView<'a> {
    CatalogView {
        snapshot: ctx.snapshot,
        txns: &ctx.db.txns,
        temp_ns: ctx.locker.temp_ns,
    }
}

/// The sequence `name` the statement sees: 42P01 when there is no such
/// relation, 42809 when it is not a sequence.
fn sequence(ctx: &StmtCtx<'_>, name: &str) -> Result<Arc<SequenceDef>> {
    let cv = catalog_view(ctx);
    if let Some(s) = ctx.db.catalog.lookup_sequence(&cv, name) {
        return Ok(s);
    }
    if ctx.db.catalog.lookup(&cv, name).is_some() || ctx.db.catalog.lookup_view(&cv, name).is_some()
    {
        return Err(err!(WrongObjectType, "\"{name}\" is not a sequence"));
    }
    Err(err!(UndefinedTable, "relation \"{name}\" does not exist"))
}

/// The compiled function that runs sequence function `func` of sequence
/// `seq` (`lastval`: none) for this session. One entry per session,
/// function and sequence, its body replaced by each statement that binds
/// it (so it always holds the statement's definition of the sequence).
pub(super) fn function(ctx: &StmtCtx<'_>, func: &str, seq: Option<&str>) -> Result<u32> {
    let def = seq.map(|n| sequence(ctx, n)).transpose()?;
    let rel = match &def {
        Some(d) => Some(ctx.db.relation(d.relfilenode)?),
        None => None,
    };
    let kind: u64 = match func {
        "nextval" => 0,
        "currval" => 1,
        "setval" => 2,
        _ => 3,
    };
    let oid = def.as_ref().map_or(0, |d| d.oid) as u64;
    let sess = ctx.seqs.clone();
    let serial = (1u64 << 63) | (sess.id << 36) | (kind << 32) | oid;
    let (id, _) = user::reserve(serial, func, Volatility::Volatile);
    let states = ctx.db.sequences.clone();
    let body: Body = match (kind, def, rel) {
        (0, Some(def), Some(rel)) => Arc::new(move |_: &[Value]| {
            sess.check_writable("nextval")?;
            let (v, lsn) = states.nextval(&def, &rel)?;
            sess.note(&def, v, lsn);
            Ok(Value::Int8(v))
        }),
        (1, Some(def), Some(_)) => {
            Arc::new(move |_: &[Value]| Ok(Value::Int8(sess.currval(&def)?)))
        }
        (2, Some(def), Some(rel)) => Arc::new(move |args: &[Value]| {
            let (Some(v), called) = (args.first().and_then(Value::as_i64), args.get(1)) else {
                return Ok(Value::Null);
            };
            sess.check_writable("setval")?;
            let is_called = match called {
                None => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Ok(Value::Null),
            };
            let lsn = states.setval(&def, &rel, v, is_called)?;
            sess.note_flush(lsn);
            if is_called {
                sess.set_currval(&def, v);
            }
            Ok(Value::Int8(v))
        }),
        _ => Arc::new(move |_: &[Value]| Ok(Value::Int8(sess.lastval()?))),
    };
    user::install(id, body);
    Ok(id)
}

/// `SELECT * FROM s`: the sequence's row, when `name` is a sequence.
pub(super) fn rows(ctx: &StmtCtx<'_>, name: &str) -> Option<Result<TableRows>> {
    let def = ctx.db.catalog.lookup_sequence(&catalog_view(ctx), name)?;
    Some((|| {
        let rel = ctx.db.relation(def.relfilenode)?;
        let v = ctx.db.sequences.current(&def, &rel)?;
        let field = |name: &str, ty| Field {
            name: name.into(),
            ty,
        };
        Ok((
            vec![
                field("last_value", DataType::Int8),
                field("log_cnt", DataType::Int8),
                field("is_called", DataType::Bool),
            ],
            vec![vec![
                Value::Int8(v.last_value),
                Value::Int8(v.log_cnt),
                Value::Bool(v.is_called),
            ]],
        ))
    })())
}

/// The integer type of a `serial` type name, if `t` is one.
fn serial_type(t: &ast::DataType) -> Option<(DataType, ast::DataType)> {
    match t {
        ast::DataType::Named(n) => match n.as_str() {
            "serial" | "serial4" => Some((DataType::Int4, ast::DataType::Integer)),
            "bigserial" | "serial8" => Some((DataType::Int8, ast::DataType::BigInt)),
            "smallserial" | "serial2" => Some((DataType::Int2, ast::DataType::SmallInt)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether CREATE TABLE `c` has a `serial` column.
pub(super) fn has_serial(c: &ast::CreateTable) -> bool {
    c.columns
        .iter()
        .any(|col| serial_type(&col.data_type).is_some())
}

/// `nextval('name'::regclass)`, a serial column's default.
fn nextval_default(seq: &str) -> ast::Expr {
    let plain = seq
        .chars()
        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_');
    let lit = if plain {
        seq.to_string()
    } else {
        format!("\"{}\"", seq.replace('"', "\"\""))
    };
    let arg = ast::Expr::new(ast::ExprKind::Cast {
        expr: Box::new(ast::Expr::new(ast::ExprKind::Literal(
            ast::Literal::String(lit),
        ))),
        data_type: ast::DataType::Named("regclass".into()),
    });
    ast::Expr::new(ast::ExprKind::Function(Box::new(ast::FunctionCall {
        name: ast::ObjectName {
            schema: None,
            name: "nextval".into(),
            offset: ast::Offset(0),
        },
        args: vec![arg],
        arg_names: Vec::new(),
        star: false,
        distinct: false,
        order_by: Vec::new(),
        filter: None,
        variadic: false,
        over: None,
    })))
}

impl Session {
    /// CREATE TABLE with `serial` columns (PostgreSQL's
    /// `transformColumnDefinition`): each gets a sequence
    /// `<table>_<column>_seq`, made first, then the column is its integer
    /// type, NOT NULL, DEFAULT `nextval('<sequence>'::regclass)`, and the
    /// sequence is OWNED BY it (so DROP TABLE drops it).
    pub(crate) fn create_table_with_serials(
        &mut self,
        c: &ast::CreateTable,
        temp: bool,
    ) -> Result<u32> {
        self.assign_xid()?;
        let snap = self.statement_snapshot();
        let states = self.db.sequences.clone();
        let mut rewritten = c.clone();
        let mut owned = Vec::new();
        for col in &mut rewritten.columns {
            let Some((ty, ast_ty)) = serial_type(&col.data_type) else {
                continue;
            };
            let seq = self.with_ddl(&snap, |ctx| {
                ctx.create_column_sequence(&c.name.name, &col.name, &ty, &[], false, &states)
            })?;
            col.data_type = ast_ty;
            col.constraints.push(ast::ColumnConstraint::NotNull);
            col.constraints
                .push(ast::ColumnConstraint::Default(nextval_default(&seq)));
            owned.push((seq, col.name.clone()));
        }
        let snap = self.statement_snapshot();
        let spec =
            crate::commands::createtable::define_columns(&rewritten, &mut self.stmt_ctx(&snap))?;
        let oid = self.with_ddl(&snap, |ctx| ctx.create_table(&c.name.name, spec, temp))?;
        for (seq, col) in owned {
            self.with_ddl(&snap, |ctx| ctx.set_sequence_owner(&seq, oid, &col))?;
        }
        Ok(oid)
    }
}
