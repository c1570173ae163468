//! Writing the rows of INSERT, UPDATE and DELETE (PostgreSQL's
//! `nodeModifyTable.c`): [`ModifyTable`] runs the plan `plan::modify` made
//! — for INSERT the complete new rows (missing columns filled from their
//! DEFAULT expressions), for UPDATE and DELETE the target rows' tuple ids
//! and complete new (or old) rows — and writes them row by row through the
//! heap access methods, with NOT NULL and the CHECK constraints (by name;
//! a NULL result passes) checked before the row is written and each new
//! tuple's index entries made ([`index_maint`](super::index_maint)).
//! `INSERT ... SELECT` fills whole pages with the heap's multi-insert on the
//! bulk-write ring.
//!
//! A write through a view `WITH CHECK OPTION` carries the views'
//! conditions ([`ViewCheck`]); each written row must not make one false
//! (PostgreSQL's `ExecWithCheckOptions`: checked after the row and its
//! index entries are written; a NULL result fails too), else 44000.
//!
//! What the statement brings from its session comes as a
//! [`ModifyContext`]; nothing here knows a session.
//!
//! Concurrent writers: a row another running transaction changed makes the
//! statement wait for that transaction; if it aborted, the change goes
//! ahead. A row changed by a transaction that committed after the
//! statement's snapshot (waited for or not) fails REPEATABLE READ with
//! 40001 (`could not serialize access due to concurrent update`, or
//! `... delete`); READ COMMITTED skips a row deleted meanwhile, and follows
//! an updated one to its newest version, re-checks the statement's WHERE
//! on it and changes that version ([`epq`], PostgreSQL's EvalPlanQual).
//! For that an UPDATE's or DELETE's plan also outputs the FROM / USING
//! items' columns after the row (held fixed by the re-check).

use std::cell::RefCell;
use std::collections::HashSet;

use crate::access::heap::tuple;
use crate::access::heap::{HeapRelation, HotRule, Tid, TmResult};
use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::exec;
use crate::exec::expr::Expr;
use crate::exec::fkey::{fetch_row, FkCapture};
use crate::exec::index_maint::IndexInserter;
use crate::exec::scan::tuple_desc;
use crate::exec::vector::{Batch, Vector};
use crate::exec::ExecContext;
use crate::nodes::Plan;
use crate::storage::StrategyKind;
use crate::types::{format_value, Value};

mod context;
pub mod epq;
pub mod upsert;

pub use context::ModifyContext;
use epq::Epq;
pub use epq::{Recheck, RecheckSource};

/// Turns rows into tuples and writes them.
pub(crate) struct RowWriter<'a> {
    table: &'a TableDef,
    desc: tuple::TupleDesc,
    values: Vec<u8>,
    ranges: Vec<Option<(usize, usize)>>,
    /// The table's CHECK constraints' results over the batch [`prepare`d](Self::prepare)
    /// last (one vector per check), with that batch's identity.
    checked: Option<(usize, usize, Vec<Vector>)>,
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
            checked: None,
            tuple: Vec::new(),
        })
    }

    /// Evaluates the table's CHECK constraints over the rows of `b` (whose
    /// columns from `offset` are the table's) at once, for the
    /// [`form`](Self::form)s of its rows that follow. Nothing for a table
    /// without checks.
    pub(crate) fn prepare(&mut self, b: &Batch, offset: usize) -> Result<()> {
        if self.table.checks.is_empty() {
            return Ok(());
        }
        let rows = rows_from(b, offset);
        let results = self
            .table
            .checks
            .iter()
            .map(|c| c.expr.eval(&rows).map(|v| v.into_owned()))
            .collect::<Result<Vec<_>>>()?;
        self.checked = Some((b.columns.as_ptr() as usize, b.len, results));
        Ok(())
    }

    /// Checks NOT NULL and the CHECK constraints, and forms row `i` of `b`
    /// (whose columns from `offset` are the table's) into `self.tuple`.
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
        if !self.table.checks.is_empty() {
            self.check_row(b, i, offset)?;
        }
        let slices: Vec<Option<&[u8]>> = self
            .ranges
            .iter()
            .map(|r| r.map(|(s, e)| &self.values[s..e]))
            .collect();
        tuple::form_tuple(&self.desc, &slices, &mut self.tuple)
    }
}

impl RowWriter<'_> {
    /// Fails with PostgreSQL's 23514 when a CHECK constraint is false for
    /// row `i` of `b` (the first such check by name); NULL passes.
    fn check_row(&mut self, b: &Batch, i: usize, offset: usize) -> Result<()> {
        let key = (b.columns.as_ptr() as usize, b.len);
        if !matches!(&self.checked, Some((p, n, _)) if (*p, *n) == key) {
            // Not prepared for this batch: this row alone.
            let row = b.take(&[i as u32]);
            let one = rows_from(&row, offset);
            let results = self
                .table
                .checks
                .iter()
                .map(|c| c.expr.eval(&one).map(|v| v.get(0)))
                .collect::<Result<Vec<_>>>()?;
            return match results.iter().position(|v| matches!(v, Value::Bool(false))) {
                Some(k) => Err(check_violation(self.table, k, b, i, offset)),
                None => Ok(()),
            };
        }
        let (_, _, results) = self.checked.as_ref().expect("matched above");
        match results
            .iter()
            .position(|r| matches!(r.get(i), Value::Bool(false)))
        {
            Some(k) => Err(check_violation(self.table, k, b, i, offset)),
            None => Ok(()),
        }
    }
}

/// The table's rows of `b`: its columns from `offset`.
fn rows_from(b: &Batch, offset: usize) -> std::borrow::Cow<'_, Batch> {
    if offset == 0 {
        return std::borrow::Cow::Borrowed(b);
    }
    std::borrow::Cow::Owned(Batch {
        columns: b.columns[offset..].to_vec(),
        len: b.len,
    })
}

/// PostgreSQL's check violation of check `k` of `table` by row `i` of `b`.
fn check_violation(
    table: &TableDef,
    k: usize,
    b: &Batch,
    i: usize,
    offset: usize,
) -> crate::error::Error {
    let row: Vec<String> = (0..table.columns.len())
        .map(|c| shown_value(&b.columns[offset + c].get(i)))
        .collect();
    check_violation_shown(table, &table.checks[k].name, &row)
}

/// PostgreSQL's check violation of check `name` of `table`, with the
/// failing row's values as `shown` (see [`shown_value`]).
pub(crate) fn check_violation_shown(
    table: &TableDef,
    name: &str,
    shown: &[String],
) -> crate::error::Error {
    err!(
        CheckViolation,
        "new row for relation \"{}\" violates check constraint \"{}\"",
        table.name,
        name
    )
    .with_detail(format!("Failing row contains ({}).", shown.join(", ")))
}

/// ALTER TABLE's check of existing rows `rows` (complete rows of
/// `table`): its NOT NULL columns hold no NULL (`column "a" of relation
/// "t" contains null values`, 23502) and its validated checks are not
/// false (`check constraint "c" of relation "t" is violated by some row`,
/// 23514), row by row, NOT NULL first.
pub fn validate_rows(table: &TableDef, rows: &[Vec<Value>]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let columns = table
        .columns
        .iter()
        .enumerate()
        .map(|(c, col)| {
            let vals: Vec<Value> = rows.iter().map(|r| r[c].clone()).collect();
            Vector::from_values(col.ty, &vals)
        })
        .collect();
    let batch = Batch::new(columns);
    let checks: Vec<_> = table.checks.iter().filter(|c| c.validated).collect();
    let results = checks
        .iter()
        .map(|c| c.expr.eval(&batch).map(|v| v.into_owned()))
        .collect::<Result<Vec<_>>>()?;
    for (i, row) in rows.iter().enumerate() {
        if let Some(c) =
            (0..table.columns.len()).find(|&c| table.columns[c].not_null && row[c].is_null())
        {
            return Err(err!(
                NotNullViolation,
                "column \"{}\" of relation \"{}\" contains null values",
                table.columns[c].name,
                table.name
            ));
        }
        if let Some(k) = results
            .iter()
            .position(|r| matches!(r.get(i), Value::Bool(false)))
        {
            return Err(err!(
                CheckViolation,
                "check constraint \"{}\" of relation \"{}\" is violated by some row",
                checks[k].name,
                table.name
            ));
        }
    }
    Ok(())
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
pub(crate) fn shown_value(v: &Value) -> String {
    if v.is_null() {
        return "null".to_string();
    }
    let mut s = String::new();
    format_value(v, &mut s);
    s
}

/// PostgreSQL's not-null violation for column `c` of `table`, with the
/// failing row's values as `shown` (see [`shown_value`]).
pub(crate) fn not_null_violation(
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

/// What a row change's attempt found, decided ([`step`]).
enum Step {
    /// The row was changed.
    Done,
    /// The row is not this statement's to change: changed by it already,
    /// invisible to it, or deleted meanwhile (READ COMMITTED).
    Skip,
    /// A transaction that was changing the row ended: try again.
    Retry,
    /// A committed transaction updated the row; its next version is here
    /// (READ COMMITTED, with a re-check).
    Follow(Tid),
}

/// Decides the outcome `res` of an attempt to change a row: waits for a
/// running transaction that changed it first; a row changed by a
/// transaction that committed after the snapshot fails REPEATABLE READ
/// with 40001 (`concurrent update` / `concurrent delete`), and in READ
/// COMMITTED is skipped when deleted, followed when updated (`can_follow`:
/// the statement can re-check its newest version; else 40001 as well).
fn step(ctx: &ModifyContext<'_>, res: TmResult, can_follow: bool) -> Result<Step> {
    Ok(match res {
        TmResult::Ok => Step::Done,
        TmResult::SelfModified | TmResult::Invisible => Step::Skip,
        TmResult::BeingModified(x) => {
            ctx.wait_for(x)?;
            Step::Retry
        }
        TmResult::Updated(block, offset) if can_follow && !ctx.repeatable_read => {
            Step::Follow(Tid { block, offset })
        }
        TmResult::Updated(..) => return Err(concurrent_update()),
        TmResult::Deleted if ctx.repeatable_read => return Err(concurrent_delete()),
        TmResult::Deleted => Step::Skip,
    })
}

fn concurrent_update() -> crate::error::Error {
    err!(
        SerializationFailure,
        "could not serialize access due to concurrent update"
    )
}

fn concurrent_delete() -> crate::error::Error {
    err!(
        SerializationFailure,
        "could not serialize access due to concurrent delete"
    )
}

fn tid_of(v: &Value) -> Tid {
    let t = v.as_i64().unwrap_or(0);
    Tid {
        block: (t >> 16) as u32,
        offset: (t & 0xffff) as u16,
    }
}

/// One INSERT, UPDATE or DELETE's writing (PostgreSQL's `ModifyTable`
/// node): the statement's context, its target (looked up and locked by the
/// caller) and its RETURNING expressions (over the written rows).
pub struct ModifyTable<'a> {
    /// The statement.
    pub ctx: ModifyContext<'a>,
    /// What the plan's operators share.
    pub exec: &'a ExecContext,
    /// The target table.
    pub table: &'a TableDef,
    /// Its heap.
    pub rel: &'a HeapRelation,
    /// RETURNING's expressions over a written row (empty: no RETURNING).
    pub returning: &'a [Expr],
    /// The check options of the views written through, innermost first
    /// (empty when the target was named directly).
    pub checks: &'a [ViewCheck],
    /// The foreign keys' record of the rows written (None: no constraint
    /// involves the table).
    pub fk: Option<&'a RefCell<FkCapture>>,
    /// EXPLAIN ANALYZE's measurements of the plan's nodes, when it runs
    /// the statement.
    pub instr: Option<&'a exec::Instrumentation>,
    /// Where an UPDATE or DELETE finds its re-check of a row changed
    /// meanwhile ([`RecheckSource::None`]: such a row fails the statement
    /// with 40001).
    pub recheck: RecheckSource<'a>,
}

/// A view's `WITH CHECK OPTION` condition, over a written row of the
/// table beneath it.
#[derive(Debug, Clone)]
pub struct ViewCheck {
    /// The view's name, for the error.
    pub view: String,
    /// Its `WHERE` condition over the table's row.
    pub condition: Expr,
}

/// Fails with PostgreSQL's 44000 for the first row of `rows` (complete
/// rows of `table`) for which a check's condition is not true (false or
/// NULL), trying the checks of each row in order.
fn check_views(checks: &[ViewCheck], table: &TableDef, rows: &Batch) -> Result<()> {
    if checks.is_empty() || rows.len == 0 {
        return Ok(());
    }
    let results = checks
        .iter()
        .map(|c| c.condition.eval(rows))
        .collect::<Result<Vec<_>>>()?;
    for i in 0..rows.len {
        for (c, r) in checks.iter().zip(&results) {
            if !matches!(r.get(i), Value::Bool(true)) {
                let shown: Vec<String> = (0..table.columns.len())
                    .map(|k| shown_value(&rows.columns[k].get(i)))
                    .collect();
                return Err(err!(
                    WithCheckOptionViolation,
                    "new row violates check option for view \"{}\"",
                    c.view
                )
                .with_detail(format!("Failing row contains ({}).", shown.join(", "))));
            }
        }
    }
    Ok(())
}

impl ModifyTable<'_> {
    /// The operators of `plan`, measured when EXPLAIN ANALYZE runs it.
    fn build_rows<'p>(&'p self, plan: &'p Plan) -> Result<Box<dyn exec::Operator + 'p>> {
        match self.instr {
            Some(instr) => exec::build_instrumented(plan, self.exec, instr),
            None => exec::build(plan, self.exec),
        }
    }

    /// INSERT: writes the complete rows `plan` produces (in bulk, a page at
    /// a time through the bulk-write ring, when `bulk`), with their index
    /// entries; RETURNING's rows go to `emit`. The number of rows written.
    pub fn insert(
        &self,
        plan: &Plan,
        bulk: bool,
        emit: &mut dyn FnMut(&Batch) -> Result<()>,
    ) -> Result<u64> {
        let (ctx, rel) = (&self.ctx, self.rel);
        rel.set_fillfactor(self.table.fillfactor());
        let (xid, cid) = (ctx.xid, ctx.cid);
        let mut writer = RowWriter::new(self.table)?;
        let mut ring = bulk.then(|| {
            ctx.pool
                .ring_with(StrategyKind::BulkWrite, &self.exec.ring_sizes)
        });
        let indexer = IndexInserter::new(ctx, self.table)?;
        let mut pending = indexer.as_ref().map(IndexInserter::pending);
        let mut op = self.build_rows(plan)?;
        let mut count = 0u64;
        let mut data = Vec::new();
        let mut lens = Vec::new();
        let mut tids = Vec::new();
        while let Some(b) = op.next()? {
            self.exec.check_cancel()?;
            data.clear();
            lens.clear();
            tids.clear();
            writer.prepare(&b, 0)?;
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
                ix.flush(ctx, rel, p)?;
            }
            check_views(self.checks, self.table, &b)?;
            if let Some(fk) = self.fk {
                let mut fk = fk.borrow_mut();
                for i in 0..b.len {
                    fk.new_row(&b.row(i), None)?;
                }
            }
            count += b.len as u64;
            if !self.returning.is_empty() {
                emit_returning(self.returning, &b, emit)?;
            }
        }
        Ok(count)
    }

    /// UPDATE: `plan` produces each target row's tuple id, then its
    /// complete new row (then the held columns, see [`epq`]); each row is
    /// updated once, with the new version's index entries. The number of
    /// rows updated.
    pub fn update(&self, plan: &Plan, emit: &mut dyn FnMut(&Batch) -> Result<()>) -> Result<u64> {
        let (ctx, rel) = (&self.ctx, self.rel);
        rel.set_fillfactor(self.table.fillfactor());
        let (xid, cid) = (ctx.xid, ctx.cid);
        let ncols = self.table.columns.len();
        let mut writer = RowWriter::new(self.table)?;
        let indexer = IndexInserter::new(ctx, self.table)?;
        let old_desc = tuple_desc(self.table)?;
        let epq = Epq::new(self.table, self.recheck, plan);
        let mut op = self.build_rows(plan)?;
        let mut done: HashSet<Tid> = HashSet::new();
        let mut count = 0u64;
        while let Some(b) = op.next()? {
            self.exec.check_cancel()?;
            let mut written = Written::default();
            writer.prepare(&b, 1)?;
            for i in 0..b.len {
                let tid = tid_of(&b.columns[0].get(i));
                if !done.insert(tid) {
                    continue;
                }
                writer.form(&b, i, 1)?;
                let mut old = self.old_row(&old_desc, tid)?;
                let mut new_tid = None;
                let rule = indexer
                    .as_ref()
                    .map_or(HotRule::NoIndexes, IndexInserter::hot_rule);
                let changed = self.change(epq.as_ref(), &old_desc, &b, i, tid, |at, row| {
                    if let Some(row) = row {
                        writer.form(row, 0, 1)?;
                    }
                    let (r, t) = rel.update_with(at, &writer.tuple, xid, cid, rule)?;
                    new_tid = t;
                    Ok(r)
                })?;
                let Some((at, row)) = changed else {
                    continue;
                };
                if at != tid {
                    old = self.old_row(&old_desc, at)?;
                }
                let (rb, ri) = row.as_ref().map_or((&b, i), |r| (r, 0));
                // A heap-only version is reached through its root's entries.
                if let (Some(ix), Some(t)) = (&indexer, new_tid.filter(|t| !t.heap_only)) {
                    ix.insert(ctx, rel, &ix.row_of(rb, ri, 1), t.tid)?;
                }
                if let (Some(fk), Some(old)) = (self.fk, &old) {
                    let new: Vec<Value> = (1..=ncols).map(|c| rb.columns[c].get(ri)).collect();
                    let mut fk = fk.borrow_mut();
                    fk.new_row(&new, Some(old))?;
                    fk.old_row(old, Some(&new));
                }
                count += 1;
                written.push(i, row);
            }
            if !self.returning.is_empty() || !self.checks.is_empty() {
                let row_batch = written.rows(&b);
                check_views(self.checks, self.table, &row_batch)?;
                if !self.returning.is_empty() {
                    emit_returning(self.returning, &row_batch, emit)?;
                }
            }
        }
        Ok(count)
    }

    /// DELETE: `plan` produces each target row's tuple id, then the row
    /// (then the held columns, see [`epq`]); each row is deleted once. The
    /// number of rows deleted.
    pub fn delete(&self, plan: &Plan, emit: &mut dyn FnMut(&Batch) -> Result<()>) -> Result<u64> {
        let (ctx, rel) = (&self.ctx, self.rel);
        let (xid, cid) = (ctx.xid, ctx.cid);
        let old_desc = tuple_desc(self.table)?;
        let epq = Epq::new(self.table, self.recheck, plan);
        let mut op = self.build_rows(plan)?;
        let mut done: HashSet<Tid> = HashSet::new();
        let mut count = 0u64;
        while let Some(b) = op.next()? {
            self.exec.check_cancel()?;
            let mut written = Written::default();
            for i in 0..b.len {
                let tid = tid_of(&b.columns[0].get(i));
                if !done.insert(tid) {
                    continue;
                }
                let mut old = self.old_row(&old_desc, tid)?;
                let changed = self.change(epq.as_ref(), &old_desc, &b, i, tid, |at, _| {
                    rel.delete(at, xid, cid)
                })?;
                let Some((at, row)) = changed else {
                    continue;
                };
                if at != tid {
                    old = self.old_row(&old_desc, at)?;
                }
                if let (Some(fk), Some(old)) = (self.fk, &old) {
                    fk.borrow_mut().old_row(old, None);
                }
                count += 1;
                written.push(i, row);
            }
            if !self.returning.is_empty() {
                emit_returning(self.returning, &written.rows(&b), emit)?;
            }
        }
        Ok(count)
    }

    /// Changes the row of row `i` of the plan's output `b`, at `tid`, with
    /// `attempt` (given the tuple id to change and, once the row was
    /// re-checked, its row to write instead of `b`'s), until decided
    /// ([`step`]); in READ COMMITTED a row a committed transaction updated
    /// is followed to its newest version and re-checked ([`Epq`], `desc`
    /// reading it). Returns the tuple id changed and the re-checked row
    /// (`None`: `b`'s row was written), or `None` when the row was skipped.
    fn change(
        &self,
        epq: Option<&Epq<'_>>,
        desc: &tuple::TupleDesc,
        b: &Batch,
        i: usize,
        tid: Tid,
        mut attempt: impl FnMut(Tid, Option<&Batch>) -> Result<TmResult>,
    ) -> Result<Option<(Tid, Option<Batch>)>> {
        let mut at = tid;
        let mut row: Option<Batch> = None;
        loop {
            let res = attempt(at, row.as_ref())?;
            match (step(&self.ctx, res, epq.is_some())?, epq) {
                (Step::Done, _) => return Ok(Some((at, row))),
                (Step::Skip, _) => return Ok(None),
                (Step::Retry, _) => {}
                (Step::Follow(next), Some(epq)) => {
                    let Some((newest, t)) = epq.newest(&self.ctx, self.rel, at, next)? else {
                        return Ok(None);
                    };
                    let Some(r) = epq.row(desc, b, i, newest, &t)? else {
                        return Ok(None);
                    };
                    at = newest;
                    row = Some(r);
                }
                (Step::Follow(_), None) => unreachable!("followed without a re-check"),
            }
        }
    }
}

/// The rows of a batch of the plan's output an UPDATE or DELETE changed,
/// in order: positions in the batch, or rows re-checked in their place.
#[derive(Default)]
struct Written {
    rows: Vec<u32>,
    /// (index into `rows`, the re-checked row), when any.
    rechecked: Vec<(usize, Batch)>,
}

impl Written {
    fn push(&mut self, i: usize, row: Option<Batch>) {
        if let Some(r) = row {
            self.rechecked.push((self.rows.len(), r));
        }
        self.rows.push(i as u32);
    }

    /// The changed rows of `b` as whole rows of the table followed by the
    /// held columns (`b` without the tuple id): RETURNING of a statement
    /// with FROM or USING items reads those.
    fn rows(&self, b: &Batch) -> Batch {
        let cols = 1..b.columns.len();
        if self.rechecked.is_empty() {
            let rows = b.take(&self.rows);
            return Batch {
                columns: rows.columns[cols].to_vec(),
                len: rows.len,
            };
        }
        let mut columns: Vec<Vector> = b.columns[cols.clone()]
            .iter()
            .map(|c| Vector::with_capacity(c.ty, self.rows.len()))
            .collect();
        let mut rechecked = self.rechecked.iter().peekable();
        for (k, &i) in self.rows.iter().enumerate() {
            let (src, at) = match rechecked.next_if(|(j, _)| *j == k) {
                Some((_, r)) => (r, 0),
                None => (b, i as usize),
            };
            for (out, c) in columns.iter_mut().zip(cols.clone()) {
                out.push_from(&src.columns[c], at);
            }
        }
        Batch {
            columns,
            len: self.rows.len(),
        }
    }
}

impl ModifyTable<'_> {
    /// The row at `tid` before an UPDATE or DELETE changes it, when the
    /// foreign keys need it.
    fn old_row(&self, desc: &tuple::TupleDesc, tid: Tid) -> Result<Option<Vec<Value>>> {
        match self.fk {
            Some(fk) if fk.borrow().wants_old_rows() => fetch_row(self.table, desc, self.rel, tid),
            _ => Ok(None),
        }
    }
}

/// Evaluates RETURNING over written rows and hands them to `emit`.
fn emit_returning(
    exprs: &[Expr],
    rows: &Batch,
    emit: &mut dyn FnMut(&Batch) -> Result<()>,
) -> Result<()> {
    if rows.len == 0 {
        return Ok(());
    }
    let columns = exprs
        .iter()
        .map(|e| e.eval(rows).map(|c| c.into_owned()))
        .collect::<Result<Vec<Vector>>>()?;
    emit(&Batch {
        columns,
        len: rows.len,
    })
}
