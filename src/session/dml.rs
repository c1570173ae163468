//! INSERT, UPDATE and DELETE.
//!
//! Each statement is planned as a query producing the rows to write — for
//! INSERT the complete new rows (missing columns filled from their DEFAULT
//! expressions), for UPDATE and DELETE the target rows' tuple ids and
//! complete new (or old) rows — and then written row by row through the
//! heap access methods, with NOT NULL checked before anything is written.
//! `INSERT ... SELECT` fills whole pages with the heap's multi-insert on the
//! bulk-write ring.
//!
//! Concurrent writers: a row another running transaction changed makes the
//! statement wait for that transaction; if it committed, the statement fails
//! with 40001 (`could not serialize access due to concurrent update`),
//! if it aborted, the change goes ahead.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use heapdb_grammar::ast;

use super::index_maint::IndexInserter;
use super::{Column, QueryResult, Session};
use crate::access::heap::tuple;
use crate::access::heap::{Tid, TmResult};
use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::exec;
use crate::exec::expr::Expr;
use crate::exec::scan::tuple_desc;
use crate::exec::vector::{Batch, Vector};
use crate::plan::bind::{at, Binder, Mode};
use crate::plan::scope::Scope;
use crate::plan::{Field, Node, Plan};
use crate::storage::StrategyKind;
use crate::txn::{LockMode, Xid};
use crate::types::cast::{cast_kind, CastContext};
use crate::types::{format_value, DataType, Value};

mod upsert;

/// Parses a stored DEFAULT expression.
pub(crate) fn parse_default(text: &str) -> Result<ast::Expr> {
    let stmt = heapdb_grammar::parse_one(&format!("SELECT {text}")).map_err(super::parse_error)?;
    if let ast::Statement::Query(q) = stmt {
        if let ast::SetExpr::Select(s) = q.body {
            if let Some(ast::SelectItem::Expr { expr, .. }) = s.projection.into_iter().next() {
                return Ok(expr);
            }
        }
    }
    Err(err!(InternalError, "bad stored default expression: {text}"))
}

/// Turns rows into tuples and writes them.
pub(crate) struct RowWriter<'a> {
    table: &'a TableDef,
    desc: tuple::TupleDesc,
    values: Vec<u8>,
    ranges: Vec<Option<(usize, usize)>>,
    /// The last formed tuple.
    pub(crate) tuple: Vec<u8>,
}

impl<'a> RowWriter<'a> {
    pub(crate) fn new(table: &'a TableDef) -> Result<RowWriter<'a>> {
        Ok(RowWriter {
            table,
            desc: tuple_desc(table)?,
            values: Vec::new(),
            ranges: Vec::new(),
            tuple: Vec::new(),
        })
    }

    /// Checks NOT NULL and forms row `i` of `b` (whose columns are the
    /// table's) into `self.tuple`.
    pub(crate) fn form(&mut self, b: &Batch, i: usize, offset: usize) -> Result<()> {
        self.values.clear();
        self.ranges.clear();
        for (c, col) in self.table.columns.iter().enumerate() {
            let v = b.columns[offset + c].get(i);
            if v.is_null() {
                if col.not_null {
                    return Err(not_null_error(self.table, c, b, i, offset));
                }
                self.ranges.push(None);
            } else {
                let start = self.values.len();
                v.encode(&mut self.values);
                self.ranges.push(Some((start, self.values.len())));
            }
        }
        let slices: Vec<Option<&[u8]>> = self
            .ranges
            .iter()
            .map(|r| r.map(|(s, e)| &self.values[s..e]))
            .collect();
        tuple::form_tuple(&self.desc, &slices, &mut self.tuple)
    }
}

fn not_null_error(
    table: &TableDef,
    c: usize,
    b: &Batch,
    i: usize,
    offset: usize,
) -> crate::error::Error {
    let row: Vec<String> = (0..table.columns.len())
        .map(|k| shown_value(&b.columns[offset + k].get(i)))
        .collect();
    not_null_violation(table, c, &row)
}

/// A value as PostgreSQL shows it in a "Failing row contains" detail.
pub(super) fn shown_value(v: &Value) -> String {
    if v.is_null() {
        return "null".to_string();
    }
    let mut s = String::new();
    format_value(v, &mut s);
    s
}

/// PostgreSQL's not-null violation for column `c` of `table`, with the
/// failing row's values as `shown` (see [`shown_value`]).
pub(super) fn not_null_violation(
    table: &TableDef,
    c: usize,
    shown: &[String],
) -> crate::error::Error {
    err!(
        NotNullViolation,
        "null value in column \"{}\" of relation \"{}\" violates not-null constraint",
        table.columns[c].name,
        table.name
    )
    .with_detail(format!("Failing row contains ({}).", shown.join(", ")))
}

/// The column positions an INSERT's or COPY's column list names (all
/// columns when it is empty), with PostgreSQL's errors for an unknown or a
/// repeated name.
pub(crate) fn target_columns(table: &TableDef, names: &[String]) -> Result<Vec<usize>> {
    if names.is_empty() {
        return Ok((0..table.columns.len()).collect());
    }
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(names.len());
    for c in names {
        let i = table.column_index(c).ok_or_else(|| {
            err!(
                UndefinedColumn,
                "column \"{c}\" of relation \"{}\" does not exist",
                table.name
            )
        })?;
        if !seen.insert(i) {
            return Err(err!(
                DuplicateColumn,
                "column \"{c}\" specified more than once"
            ));
        }
        out.push(i);
    }
    Ok(out)
}

/// Waits until transaction `x` ends (on its transaction lock, so a cycle of
/// such waits is found as a deadlock); true when it committed.
pub(super) fn wait_for(session: &Session, x: Xid) -> Result<bool> {
    let owner = session.txn_ref().owner;
    session
        .db
        .locks
        .wait_for_xact(owner, x, &session.cancel_flag())?;
    Ok(matches!(
        session.db.txns.status(x)?,
        crate::txn::XidStatus::Committed
    ))
}

/// Runs a row change until it is decided: waits for a running transaction
/// that changed the row first, fails with 40001 if that one committed.
/// Returns whether this statement changed the row (false: the row was
/// already changed by this statement, or is not visible to it).
fn change_row(session: &Session, mut attempt: impl FnMut() -> Result<TmResult>) -> Result<bool> {
    loop {
        match attempt()? {
            TmResult::Ok => return Ok(true),
            TmResult::SelfModified | TmResult::Invisible => return Ok(false),
            TmResult::BeingModified(x) => {
                if wait_for(session, x)? {
                    return Err(concurrent_update());
                }
            }
            TmResult::Updated(..) | TmResult::Deleted => return Err(concurrent_update()),
        }
    }
}

fn concurrent_update() -> crate::error::Error {
    err!(
        SerializationFailure,
        "could not serialize access due to concurrent update"
    )
}

fn tid_of(v: &Value) -> Tid {
    let t = v.as_i64().unwrap_or(0);
    Tid {
        block: (t >> 16) as u32,
        offset: (t & 0xffff) as u16,
    }
}

impl Session {
    fn target(
        &mut self,
        name: &ast::ObjectName,
        snap: &crate::txn::Snapshot,
    ) -> Result<Arc<TableDef>> {
        self.lookup_table(snap, &name.name, LockMode::RowExclusive)
            .map_err(|e| at(e, name.offset))
    }

    /// Binds RETURNING items over the table's columns.
    fn returning(
        &self,
        binder: &mut Binder,
        items: &[ast::SelectItem],
        table: &TableDef,
        alias: &str,
    ) -> Result<(Vec<Expr>, Vec<Column>)> {
        let scope = Scope::of(alias, table.columns.iter().map(|c| (c.name.clone(), c.ty)));
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in items {
            match item {
                ast::SelectItem::Expr { expr, alias } => {
                    let e = binder.bind_expr(expr, &scope, &mut Mode::NoAgg("RETURNING"))?;
                    let e = binder.resolve_unknown(e)?;
                    cols.push(Column {
                        name: alias
                            .clone()
                            .unwrap_or_else(|| crate::plan::select::output_name(expr)),
                        ty: e.ty,
                    });
                    exprs.push(e);
                }
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(_) => {
                    for (i, c) in table.columns.iter().enumerate() {
                        exprs.push(Expr::column(i, c.ty));
                        cols.push(Column {
                            name: c.name.clone(),
                            ty: c.ty,
                        });
                    }
                }
            }
        }
        Ok((exprs, cols))
    }

    pub(crate) fn insert(
        &mut self,
        ins: &ast::Insert,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        if let Some(oc) = &ins.on_conflict {
            return self.insert_on_conflict(ins, oc, sink);
        }
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (xid, cid) = (self.txn_ref().xid, self.txn_ref().cid);
        let table = self.target(&ins.table, &snap)?;
        let targets = target_columns(&table, &ins.columns)?;
        if let Some(row) = super::insert_row::literal_row(ins) {
            // A column list longer than the row is the general path's error.
            if ins.columns.is_empty() || row.len() >= targets.len() {
                let now = self.txn_ref().start_ts;
                let scratch = &mut self.insert_scratch;
                if scratch.form_literal_row(&table, &targets, row, now)? {
                    let planned = t0.elapsed();
                    let rel = self.db.relation(table.relfilenode)?;
                    let tid = rel.insert(&self.insert_scratch.tuple, xid, cid)?;
                    if !table.indexes.is_empty() {
                        self.index_formed_tuple(&table, &rel, tid, xid)?;
                    }
                    return Ok(write_result("INSERT 0 1", Vec::new(), false, planned, t0));
                }
            }
        }
        let mut ctx = self.stmt_ctx(&snap);
        let mut binder = Binder::new(&mut ctx);
        let (source, bulk) = insert_source(&mut binder, ins, &table, &targets)?;
        let exprs = complete_row(&mut binder, &table, &targets, source.fields.len())?;
        let (ret_exprs, ret_cols) =
            self.returning(&mut binder, &ins.returning, &table, &table.name)?;
        drop(binder);
        let plan = Plan {
            rows: source.rows,
            fields: table
                .columns
                .iter()
                .map(|c| Field {
                    name: c.name.clone(),
                    ty: c.ty,
                })
                .collect(),
            node: Node::Project {
                input: Box::new(source),
                exprs,
            },
        };
        let planned = t0.elapsed();
        let ctx = self.stmt_ctx(&snap).exec_context(&plan)?;
        let rel = self.db.relation(table.relfilenode)?;
        let mut writer = RowWriter::new(&table)?;
        let mut ring = bulk.then(|| self.db.pool.ring(StrategyKind::BulkWrite));
        let indexer = IndexInserter::new(&self.db, &table, xid)?;
        let mut pending = indexer.as_ref().map(IndexInserter::pending);
        let mut op = exec::build(&plan, &ctx)?;
        let mut count = 0u64;
        let mut data = Vec::new();
        let mut lens = Vec::new();
        let mut tids = Vec::new();
        while let Some(b) = op.next()? {
            ctx.check_cancel()?;
            data.clear();
            lens.clear();
            tids.clear();
            for i in 0..b.len {
                writer.form(&b, i, 0)?;
                if bulk {
                    data.extend_from_slice(&writer.tuple);
                    lens.push(writer.tuple.len() as u16);
                } else {
                    let tid = rel.insert(&writer.tuple, xid, cid)?;
                    if let (Some(ix), Some(p)) = (&indexer, &mut pending) {
                        ix.add(p, &ix.row_of(&b, i, 0), tid)?;
                    }
                }
            }
            if bulk && !lens.is_empty() {
                let want = indexer.is_some().then_some(&mut tids);
                rel.multi_insert(&data, &lens, xid, cid, ring.as_mut(), want)?;
                if let (Some(ix), Some(p)) = (&indexer, &mut pending) {
                    for (i, &tid) in tids.iter().enumerate() {
                        ix.add(p, &ix.row_of(&b, i, 0), tid)?;
                    }
                }
            }
            if let (Some(ix), Some(p)) = (&indexer, &mut pending) {
                ix.flush(self, &rel, p)?;
            }
            count += b.len as u64;
            if !ret_exprs.is_empty() {
                emit_returning(&ret_exprs, &ret_cols, &b, sink)?;
            }
        }
        Ok(write_result(
            &format!("INSERT 0 {count}"),
            ret_cols,
            !ret_exprs.is_empty(),
            planned,
            t0,
        ))
    }

    pub(crate) fn update(
        &mut self,
        u: &ast::Update,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (xid, cid) = (self.txn_ref().xid, self.txn_ref().cid);
        let table = self.target(&u.table, &snap)?;
        let alias = u.alias.clone().unwrap_or_else(|| table.name.clone());
        let mut ctx = self.stmt_ctx(&snap);
        let mut binder = Binder::new(&mut ctx);
        let (source, scope) =
            binder.plan_modify_source(table.clone(), &alias, &u.from, u.where_clause.as_ref())?;
        let ncols = table.columns.len();
        let new_values = bind_assignments(&mut binder, &table, &u.assignments, &scope)?;
        let (ret_exprs, ret_cols) = self.returning(&mut binder, &u.returning, &table, &alias)?;
        drop(binder);
        // Output: the tuple id, then the complete new row.
        let tid_col = ncols;
        let mut exprs = vec![Expr::column(tid_col, DataType::Int8)];
        for (j, v) in new_values.into_iter().enumerate() {
            exprs.push(v.unwrap_or_else(|| Expr::column(j, table.columns[j].ty)));
        }
        let plan = modify_plan(source, exprs, &table);
        let planned = t0.elapsed();
        let ctx = self.stmt_ctx(&snap).exec_context(&plan)?;
        let rel = self.db.relation(table.relfilenode)?;
        let mut writer = RowWriter::new(&table)?;
        let indexer = IndexInserter::new(&self.db, &table, xid)?;
        let mut op = exec::build(&plan, &ctx)?;
        let mut done: HashSet<Tid> = HashSet::new();
        let mut count = 0u64;
        while let Some(b) = op.next()? {
            ctx.check_cancel()?;
            let mut updated = Vec::with_capacity(b.len);
            for i in 0..b.len {
                let tid = tid_of(&b.columns[0].get(i));
                if !done.insert(tid) {
                    continue;
                }
                writer.form(&b, i, 1)?;
                let mut new_tid = None;
                if change_row(self, || {
                    let (r, t) = rel.update(tid, &writer.tuple, xid, cid)?;
                    new_tid = t;
                    Ok(r)
                })? {
                    if let (Some(ix), Some(t)) = (&indexer, new_tid) {
                        ix.insert(self, &rel, &ix.row_of(&b, i, 1), t)?;
                    }
                    count += 1;
                    updated.push(i as u32);
                }
            }
            if !ret_exprs.is_empty() {
                // The changed rows, without their leading tuple id.
                let rows = b.take(&updated);
                let row_batch = Batch {
                    columns: rows.columns[1..].to_vec(),
                    len: rows.len,
                };
                emit_returning(&ret_exprs, &ret_cols, &row_batch, sink)?;
            }
        }
        Ok(write_result(
            &format!("UPDATE {count}"),
            ret_cols,
            !ret_exprs.is_empty(),
            planned,
            t0,
        ))
    }

    pub(crate) fn delete(
        &mut self,
        d: &ast::Delete,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (xid, cid) = (self.txn_ref().xid, self.txn_ref().cid);
        let table = self.target(&d.table, &snap)?;
        let alias = d.alias.clone().unwrap_or_else(|| table.name.clone());
        let mut ctx = self.stmt_ctx(&snap);
        let mut binder = Binder::new(&mut ctx);
        let (source, _) =
            binder.plan_modify_source(table.clone(), &alias, &d.using, d.where_clause.as_ref())?;
        let (ret_exprs, ret_cols) = self.returning(&mut binder, &d.returning, &table, &alias)?;
        drop(binder);
        let ncols = table.columns.len();
        let mut exprs = vec![Expr::column(ncols, DataType::Int8)];
        for (j, c) in table.columns.iter().enumerate() {
            exprs.push(Expr::column(j, c.ty));
        }
        let plan = modify_plan(source, exprs, &table);
        let planned = t0.elapsed();
        let ctx = self.stmt_ctx(&snap).exec_context(&plan)?;
        let rel = self.db.relation(table.relfilenode)?;
        let mut op = exec::build(&plan, &ctx)?;
        let mut done: HashSet<Tid> = HashSet::new();
        let mut count = 0u64;
        while let Some(b) = op.next()? {
            ctx.check_cancel()?;
            let mut deleted = Vec::with_capacity(b.len);
            for i in 0..b.len {
                let tid = tid_of(&b.columns[0].get(i));
                if !done.insert(tid) {
                    continue;
                }
                if change_row(self, || rel.delete(tid, xid, cid))? {
                    count += 1;
                    deleted.push(i as u32);
                }
            }
            if !ret_exprs.is_empty() {
                // The changed rows, without their leading tuple id.
                let rows = b.take(&deleted);
                let row_batch = Batch {
                    columns: rows.columns[1..].to_vec(),
                    len: rows.len,
                };
                emit_returning(&ret_exprs, &ret_cols, &row_batch, sink)?;
            }
        }
        Ok(write_result(
            &format!("DELETE {count}"),
            ret_cols,
            !ret_exprs.is_empty(),
            planned,
            t0,
        ))
    }
}

/// The new values of an UPDATE's (or ON CONFLICT DO UPDATE's) `SET`
/// assignments, bound over `scope` and cast to their columns' types: one
/// per table column, `None` where the column keeps its value.
fn bind_assignments(
    binder: &mut Binder<'_>,
    table: &TableDef,
    assignments: &[ast::Assignment],
    scope: &Scope,
) -> Result<Vec<Option<Expr>>> {
    let ncols = table.columns.len();
    let mut new_values: Vec<Option<Expr>> = vec![None; ncols];
    for a in assignments {
        let j = table.column_index(&a.column).ok_or_else(|| {
            at(
                err!(
                    UndefinedColumn,
                    "column \"{}\" of relation \"{}\" does not exist",
                    a.column,
                    table.name
                ),
                a.offset,
            )
        })?;
        if new_values[j].is_some() {
            return Err(err!(
                SyntaxError,
                "multiple assignments to same column \"{}\"",
                a.column
            ));
        }
        let ty = table.columns[j].ty;
        let e = if matches!(a.value.kind, ast::ExprKind::Default) {
            match &table.columns[j].default {
                Some(text) => {
                    let d = parse_default(text)?;
                    binder.bind_expr(
                        &d,
                        &Scope::default(),
                        &mut Mode::NoAgg("DEFAULT expressions"),
                    )?
                }
                None => Expr::constant(Value::Null, DataType::Unknown),
            }
        } else {
            binder.bind_expr(&a.value, scope, &mut Mode::NoAgg("UPDATE"))?
        };
        if e.ty != DataType::Unknown
            && cast_kind(&e.ty, &ty).map_or(true, |c| c > CastContext::Assignment)
        {
            return Err(at(
                err!(
                    DatatypeMismatch,
                    "column \"{}\" is of type {ty} but expression is of type {}",
                    a.column,
                    e.ty
                )
                .with_hint("You will need to rewrite or cast the expression."),
                a.value.offset,
            ));
        }
        new_values[j] = Some(binder.coerce(e, &ty, CastContext::Assignment, a.value.offset)?);
    }
    Ok(new_values)
}

/// The rows an INSERT writes, planned: its VALUES lists (DEFAULT items
/// replaced by the column's default) or its query, cast to the target
/// columns' types; and whether to write them in bulk (a query's rows: many
/// per page, through the bulk-write ring).
fn insert_source(
    binder: &mut Binder<'_>,
    ins: &ast::Insert,
    table: &TableDef,
    targets: &[usize],
) -> Result<(Plan, bool)> {
    let target_types: Vec<DataType> = targets.iter().map(|&i| table.columns[i].ty).collect();
    let mut bulk = false;
    let source = match &ins.source {
        None => Plan {
            rows: 1.0,
            fields: vec![],
            node: Node::Values { rows: vec![vec![]] },
        },
        Some(q) => match (
            &q.body,
            q.order_by.is_empty() && q.limit.is_none() && q.offset.is_none() && q.with.is_empty(),
        ) {
            (ast::SetExpr::Values(rows), true) => {
                let mut rows = rows.clone();
                for row in &mut rows {
                    if row.len() > targets.len() {
                        return Err(err!(
                            SyntaxError,
                            "INSERT has more expressions than target columns"
                        ));
                    }
                    for (k, e) in row.iter_mut().enumerate() {
                        if matches!(e.kind, ast::ExprKind::Default) {
                            *e = match &table.columns[targets[k]].default {
                                Some(text) => parse_default(text)?,
                                None => ast::Expr::new(ast::ExprKind::Literal(ast::Literal::Null)),
                            };
                        }
                    }
                }
                let width = rows.first().map_or(0, Vec::len);
                if !ins.columns.is_empty() && width < targets.len() {
                    return Err(err!(
                        SyntaxError,
                        "INSERT has more target columns than expressions"
                    ));
                }
                let names: Vec<String> = targets
                    .iter()
                    .map(|&t| table.columns[t].name.clone())
                    .collect();
                binder.plan_values(&rows, Some(&target_types[..width]), &names)?
            }
            _ => {
                bulk = true;
                binder.keep_unknown = true;
                let p = binder.plan_query(q)?;
                if !ins.columns.is_empty() && p.fields.len() < targets.len() {
                    return Err(err!(
                        SyntaxError,
                        "INSERT has more target columns than expressions"
                    ));
                }
                if p.fields.len() > targets.len() {
                    return Err(err!(
                        SyntaxError,
                        "INSERT has more expressions than target columns"
                    ));
                }
                for (k, f) in p.fields.iter().enumerate() {
                    let to = &target_types[k];
                    if f.ty != DataType::Unknown
                        && cast_kind(&f.ty, to).map_or(true, |c| c > CastContext::Assignment)
                    {
                        return Err(err!(
                            DatatypeMismatch,
                            "column \"{}\" is of type {to} but expression is of type {}",
                            table.columns[targets[k]].name,
                            f.ty
                        )
                        .with_hint("You will need to rewrite or cast the expression."));
                    }
                }
                let width = p.fields.len();
                binder.cast_outputs_in(p, &target_types[..width], CastContext::Assignment)?
            }
        },
    };
    Ok((source, bulk))
}

/// The complete row of `table` over the source's `provided` columns: each
/// target column from the source, else the column's default, else NULL.
fn complete_row(
    binder: &mut Binder<'_>,
    table: &TableDef,
    targets: &[usize],
    provided: usize,
) -> Result<Vec<Expr>> {
    // The complete row: provided columns, else defaults, else NULL.
    let mut exprs = Vec::with_capacity(table.columns.len());
    for (j, col) in table.columns.iter().enumerate() {
        match targets.iter().position(|&t| t == j) {
            Some(k) if k < provided => exprs.push(Expr::column(k, col.ty)),
            _ => {
                let e = match &col.default {
                    Some(text) => {
                        let ast = parse_default(text)?;
                        let b = binder.bind_expr(
                            &ast,
                            &Scope::default(),
                            &mut Mode::NoAgg("DEFAULT expressions"),
                        )?;
                        binder.coerce(b, &col.ty, CastContext::Assignment, ast.offset)?
                    }
                    None => Expr::constant(Value::Null, col.ty),
                };
                exprs.push(e);
            }
        }
    }
    Ok(exprs)
}

/// The plan of an UPDATE/DELETE: `exprs` (tid, then a row) over the source.
fn modify_plan(source: Plan, exprs: Vec<Expr>, table: &TableDef) -> Plan {
    let mut fields = vec![Field {
        name: "ctid".into(),
        ty: DataType::Int8,
    }];
    fields.extend(table.columns.iter().map(|c| Field {
        name: c.name.clone(),
        ty: c.ty,
    }));
    Plan {
        rows: source.rows,
        fields,
        node: Node::Project {
            input: Box::new(source),
            exprs,
        },
    }
}

/// The result of INSERT/UPDATE/DELETE: the tag, and the RETURNING columns
/// when there are any.
pub(super) fn write_result(
    tag: &str,
    ret_cols: Vec<Column>,
    returning: bool,
    planned: Duration,
    t0: Instant,
) -> QueryResult {
    let mut r = QueryResult::empty(tag);
    if returning {
        r.columns = ret_cols;
        r.returns_rows = true;
    }
    r.timing.plan = planned;
    r.timing.execute = t0.elapsed() - planned;
    r
}

/// Evaluates RETURNING over written rows and hands them to the sink.
fn emit_returning(
    exprs: &[Expr],
    cols: &[Column],
    rows: &Batch,
    sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
) -> Result<()> {
    if rows.len == 0 {
        return Ok(());
    }
    let columns = exprs
        .iter()
        .map(|e| e.eval(rows).map(|c| c.into_owned()))
        .collect::<Result<Vec<Vector>>>()?;
    sink(
        cols,
        &Batch {
            columns,
            len: rows.len,
        },
    )
}
