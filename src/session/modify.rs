//! INSERT, UPDATE and DELETE as the session runs them: take the statement's
//! snapshot, look up and lock the target (`RowExclusive`), have
//! [`plan::modify`](crate::plan::modify) plan the rows to write and
//! [`exec::modify`](crate::exec::modify) write them under a
//! [`ModifyContext`] filled from the transaction, and turn the count into
//! the command tag. The one-row INSERT of literals is bound straight from
//! its tree or its text ([`crate::plan::insert_row`]) and written here,
//! without a plan: it is the bulk scripts' hot path. A statement naming a
//! view writes through it ([`view`]).

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use heapdb_grammar::{ast, ScannedInsert};

use super::{Column, Isolation, QueryResult, Session};
use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::exec::fkey::{command_rows, FkCapture};
use crate::exec::index_maint::{index_copied_rows, index_formed_tuple, tuple_values};
use crate::exec::modify::{ModifyContext, ModifyTable, RecheckSource};
use crate::nodes::Field;
use crate::plan::bind::{at, Binder};
use crate::plan::insert_row::literal_row;
use crate::plan::modify::{self, target_columns, ModifyPlan};
use crate::txn::{LockMode, Snapshot};
use crate::vector::Batch;

mod inherit;
mod view;

/// The table and text of an UPDATE run from a plan template, whose READ
/// COMMITTED re-check is planned from its text when a row first needs it
/// (`None`: the plan came with its re-check, or has none).
type Replan<'a> = Option<(&'a Arc<TableDef>, &'a str)>;

impl Session {
    /// What row writing under `snap` takes from this session's transaction.
    pub(crate) fn modify_ctx<'s>(&'s self, snap: &'s Snapshot) -> ModifyContext<'s> {
        let t = self.txn_ref();
        ModifyContext {
            xid: t.xid,
            cid: t.cid,
            snapshot: snap,
            repeatable_read: t.isolation == Isolation::RepeatableRead,
            owner: t.owner,
            locks: &self.db.locks,
            txns: &self.db.txns,
            pool: &self.db.pool,
            wal: &self.db.wal,
            cancel: &self.cancel,
        }
    }

    fn target(&mut self, name: &ast::ObjectName, snap: &Snapshot) -> Result<Arc<TableDef>> {
        self.lookup_table(snap, &name.name, LockMode::RowExclusive)
            .map_err(|e| at(e, name.offset))
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
        let fk = self.fk_capture(&table, &snap, false)?;
        if let Some(row) = literal_row(ins).filter(|_| self.modify_capture.is_none()) {
            // A column list longer than the row is the general path's error.
            if ins.columns.is_empty() || row.len() >= targets.len() {
                let now = self.txn_ref().start_ts;
                let scratch = &mut self.insert_scratch;
                if scratch.form_literal_row(&table, &targets, row, now)? {
                    let planned = t0.elapsed();
                    let rel = self.db.relation(table.relfilenode)?;
                    rel.set_fillfactor(table.fillfactor());
                    let tid = rel.insert(&self.insert_scratch.tuple, xid, cid)?;
                    if !table.indexes.is_empty() {
                        let ctx = self.modify_ctx(&snap);
                        index_formed_tuple(&ctx, &table, &rel, tid, &self.insert_scratch.tuple)?;
                    }
                    if let Some(fk) = fk {
                        self.fk_formed_tuple(&table, fk)?;
                    }
                    return Ok(write_result("INSERT 0 1", None, planned, t0));
                }
            }
        }
        let mut ctx = self.stmt_ctx(&snap);
        let mut binder = Binder::new(&mut ctx);
        let planned_rows = modify::plan_insert(&mut binder, ins, &table, &targets)?;
        drop(binder);
        let planned = t0.elapsed();
        let bulk = planned_rows.bulk;
        let (count, cols) = self.write_rows(
            &snap,
            &table,
            (planned_rows, None),
            sink,
            fk.as_ref(),
            |m, plan, emit| m.insert(plan, bulk, emit),
        )?;
        if let Some(fk) = fk {
            self.fk_finish(&table, fk.into_inner())?;
        }
        Ok(write_result(
            &format!("INSERT 0 {count}"),
            cols,
            planned,
            t0,
        ))
    }

    fn insert_on_conflict(
        &mut self,
        ins: &ast::Insert,
        oc: &ast::OnConflict,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let table = self.target(&ins.table, &snap)?;
        let targets = target_columns(&table, &ins.columns)?;
        let arbiters = modify::arbiter_indexes(&table, oc, &self.settings)?;

        let mut ctx = self.stmt_ctx(&snap);
        let mut binder = Binder::new(&mut ctx);
        let (planned_rows, action) = modify::plan_upsert(&mut binder, ins, oc, &table, &targets)?;
        drop(binder);
        let alias = ins.alias.as_deref().unwrap_or(&table.name);
        self.capture_conflict(&table, oc, &arbiters, action.as_ref(), alias);
        let planned = t0.elapsed();
        let mut upsert = Some((arbiters, action));
        let fk = self.fk_capture(&table, &snap, false)?;
        let (count, cols) = self.write_rows(
            &snap,
            &table,
            (planned_rows, None),
            sink,
            None,
            |m, plan, emit| {
                let (arbiters, action) = upsert.take().expect("one upsert per statement");
                m.upsert(plan, arbiters, action, emit)
            },
        )?;
        if let Some(fk) = fk {
            self.fk_command_rows(&table, &snap, fk)?;
        }
        Ok(write_result(
            &format!("INSERT 0 {count}"),
            cols,
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
        let table = self.target(&u.table, &snap)?;
        if table.has_subclass && !u.only {
            // Not from a plan template: the statement becomes one per
            // table, and a template is kept for one table's plan.
            self.plan_cache.pending = None;
            return self.update_inherited(u, &table, &snap, sink);
        }
        let planned_rows = match self.plan_cache.pending.take() {
            Some((shape, sql)) if shape.writes && u.returning.is_empty() => {
                self.plan_update_with_template(u, &table, &snap, shape, &sql)?
            }
            _ => {
                let mut ctx = self.stmt_ctx(&snap);
                modify::plan_update(&mut Binder::new(&mut ctx), u, &table)?
            }
        };
        self.write_update(&snap, &table, planned_rows, None, t0, sink)
    }

    /// Writes the rows of an UPDATE of `table` planned as `planned_rows`
    /// since `t0`, the target locked; `text`: the statement's text, when
    /// its re-check is to be planned from it ([`Replan`]).
    pub(super) fn write_update(
        &mut self,
        snap: &Snapshot,
        table: &Arc<TableDef>,
        planned_rows: ModifyPlan,
        text: Option<&str>,
        t0: Instant,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let planned = t0.elapsed();
        let replan = text.map(|sql| (table, sql));
        let (count, cols) = self.write_rows_checked(
            snap,
            table,
            (planned_rows, replan),
            sink,
            true,
            |m, plan, emit| m.update(plan, emit),
        )?;
        Ok(write_result(&format!("UPDATE {count}"), cols, planned, t0))
    }

    pub(crate) fn delete(
        &mut self,
        d: &ast::Delete,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let table = self.target(&d.table, &snap)?;
        if table.has_subclass && !d.only {
            return self.delete_inherited(d, &table, &snap, sink);
        }
        let mut ctx = self.stmt_ctx(&snap);
        let planned_rows = modify::plan_delete(&mut Binder::new(&mut ctx), d, &table)?;
        let planned = t0.elapsed();
        let (count, cols) = self.write_rows_checked(
            &snap,
            &table,
            (planned_rows, None),
            sink,
            false,
            |m, plan, emit| m.delete(plan, emit),
        )?;
        Ok(write_result(&format!("DELETE {count}"), cols, planned, t0))
    }

    /// [`Session::write_rows`] with the table's foreign keys: the changed
    /// keys captured while writing (`updating`: an UPDATE, which may
    /// change both sides) and checked at the statement's end.
    fn write_rows_checked(
        &mut self,
        snap: &Snapshot,
        table: &TableDef,
        planned: (ModifyPlan, Replan<'_>),
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
        updating: bool,
        write: impl FnOnce(
            &ModifyTable<'_>,
            &crate::nodes::Plan,
            &mut dyn FnMut(&Batch) -> Result<()>,
        ) -> Result<u64>,
    ) -> Result<(u64, Option<Vec<Column>>)> {
        let fk = self.fk_capture(table, snap, updating)?;
        let written = self.write_rows(snap, table, planned, sink, fk.as_ref(), write)?;
        if let Some(fk) = fk {
            self.fk_finish(table, fk.into_inner())?;
        }
        Ok(written)
    }

    /// Runs `write` (one of [`ModifyTable`]'s statements) over the planned
    /// rows (and, for an UPDATE or DELETE planned without its re-check,
    /// where to plan it: [`Replan`]), RETURNING's rows to `sink`: the
    /// count, and the RETURNING columns (`None` without RETURNING).
    fn write_rows(
        &self,
        snap: &Snapshot,
        table: &TableDef,
        (planned, replan): (ModifyPlan, Replan<'_>),
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
        fk: Option<&RefCell<FkCapture>>,
        write: impl FnOnce(
            &ModifyTable<'_>,
            &crate::nodes::Plan,
            &mut dyn FnMut(&Batch) -> Result<()>,
        ) -> Result<u64>,
    ) -> Result<(u64, Option<Vec<Column>>)> {
        let capture = self.modify_capture();
        if let Some(c) = capture {
            c.reached.set(Some(Instant::now()));
            c.plans
                .borrow_mut()
                .push((table.name.clone(), planned.plan.clone()));
            if !c.analyze {
                // Plain EXPLAIN: planned, nothing written.
                return Ok((0, None));
            }
        }
        let exec = self.stmt_ctx(snap).exec_context(&planned.plan)?;
        let rel = self.db.relation(table.relfilenode)?;
        let lazy = replan.map(|(t, sql)| move || self.replan_recheck(snap, t, sql));
        let recheck = match (&planned.recheck, &lazy) {
            (Some(r), _) => RecheckSource::Planned(r),
            (None, Some(f)) => RecheckSource::Lazy(f),
            (None, None) => RecheckSource::None,
        };
        let m = ModifyTable {
            ctx: self.modify_ctx(snap),
            exec: &exec,
            table,
            rel: &rel,
            returning: &planned.returning,
            checks: &planned.checks,
            fk,
            instr: capture.map(|c| &c.instr),
            recheck,
        };
        let cols = columns(planned.returning_fields);
        let count = write(&m, &planned.plan, &mut |b| sink(&cols, b))?;
        Ok((count, (!planned.returning.is_empty()).then_some(cols)))
    }

    /// Runs the single-row INSERT `sql` that
    /// [`heapdb_grammar::scan_single_insert`] read as `scan` (its literals
    /// in `self.insert_scratch.lits`), inside the statement's transaction:
    /// the table is looked up and locked as [`Session::insert`] does, the
    /// row bound from the text, and anything the binding does not decide
    /// goes through the tree instead.
    pub(crate) fn insert_scanned(
        &mut self,
        sql: &str,
        scan: ScannedInsert,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (xid, cid, now) = {
            let t = self.txn_ref();
            (t.xid, t.cid, t.start_ts)
        };
        let mut name = std::mem::take(&mut self.insert_scratch.name);
        name.clear();
        name.push_str(scan.table_name(sql));
        name.make_ascii_lowercase();
        let table = self.lookup_table(&snap, &name, LockMode::RowExclusive);
        self.insert_scratch.name = name;
        let table = table.map_err(|e| at(e, ast::Offset(scan.table.0)))?;
        if !self.insert_scratch.form_scanned_row(&table, sql, now) {
            // Parsed and run through the tree, which words any error.
            let stmts = heapdb_grammar::parse(sql).map_err(super::parse_error)?;
            return match stmts.as_slice() {
                [ast::Statement::Insert(ins)] => self.insert(ins, sink),
                _ => Err(err!(
                    InternalError,
                    "a scanned INSERT did not parse as one INSERT"
                )),
            };
        }
        let planned = t0.elapsed();
        let rel = match &self.insert_scratch.rel {
            Some((t, rel)) if Arc::ptr_eq(t, &table) => rel.clone(),
            _ => {
                let rel = self.db.relation(table.relfilenode)?;
                self.insert_scratch.rel = Some((table.clone(), rel.clone()));
                rel
            }
        };
        let fk = self.fk_capture(&table, &snap, false)?;
        rel.set_fillfactor(table.fillfactor());
        let tid = rel.insert(&self.insert_scratch.tuple, xid, cid)?;
        if !table.indexes.is_empty() {
            let ctx = self.modify_ctx(&snap);
            index_formed_tuple(&ctx, &table, &rel, tid, &self.insert_scratch.tuple)?;
        }
        if let Some(fk) = fk {
            self.fk_formed_tuple(&table, fk)?;
        }
        Ok(write_result("INSERT 0 1", None, planned, t0))
    }

    /// COPY FROM's index entries for the rows it loaded into table `name`
    /// ([`index_copied_rows`]).
    pub(crate) fn index_copied_rows(&mut self, name: &str) -> Result<()> {
        let snap = self.statement_snapshot();
        let table = self.lookup_table(&snap, name, LockMode::RowExclusive)?;
        if !table.indexes.is_empty() {
            let rel = self.db.relation(table.relfilenode)?;
            index_copied_rows(&self.modify_ctx(&snap), &table, &rel)?;
        }
        if let Some(fk) = self.fk_capture(&table, &snap, false)? {
            self.fk_command_rows(&table, &snap, fk)?;
        }
        Ok(())
    }

    /// The foreign-key checks of the one tuple the single-row INSERT
    /// path formed (in the insert scratch) and wrote.
    fn fk_formed_tuple(&mut self, table: &TableDef, fk: RefCell<FkCapture>) -> Result<()> {
        let desc = crate::exec::scan::tuple_desc(table)?;
        let row = tuple_values(table, &desc, &self.insert_scratch.tuple)?;
        fk.borrow_mut().new_row(&row, None)?;
        self.fk_finish(table, fk.into_inner())
    }

    /// The foreign-key checks of the rows this command wrote without the
    /// row writer (COPY FROM, INSERT ... ON CONFLICT): found by a pass
    /// over the table, as COPY's index entries are.
    pub(crate) fn fk_command_rows(
        &mut self,
        table: &TableDef,
        snap: &Snapshot,
        fk: RefCell<FkCapture>,
    ) -> Result<()> {
        if fk.borrow().child.is_empty() {
            return Ok(());
        }
        let rel = self.db.relation(table.relfilenode)?;
        command_rows(&self.modify_ctx(snap), table, &rel, &mut |row| {
            fk.borrow_mut().new_row(row, None)
        })?;
        self.fk_finish(table, fk.into_inner())
    }
}

/// Result columns of planned fields.
fn columns(fields: Vec<Field>) -> Vec<Column> {
    fields
        .into_iter()
        .map(|f| Column {
            name: f.name,
            ty: f.ty,
        })
        .collect()
}

/// The result of INSERT/UPDATE/DELETE: the tag, and the RETURNING columns
/// when there are any.
fn write_result(
    tag: &str,
    ret_cols: Option<Vec<Column>>,
    planned: Duration,
    t0: Instant,
) -> QueryResult {
    let mut r = QueryResult::empty(tag);
    if let Some(cols) = ret_cols {
        r.columns = cols;
        r.returns_rows = true;
    }
    r.timing.plan = planned;
    r.timing.execute = t0.elapsed() - planned;
    r
}
