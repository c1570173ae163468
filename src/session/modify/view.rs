//! INSERT, UPDATE and DELETE naming a view, as the session runs them: the
//! views down to the table are checked
//! ([`view_chain`](crate::plan::modify::view::view_chain)), the table is
//! locked `RowExclusive` as if named directly, and the statement is
//! planned through the views ([`crate::plan::modify::view`]) and written
//! like any other.

use std::sync::Arc;
use std::time::Instant;

use heapdb_grammar::ast;

use super::super::view_info::visible_view;
use super::super::{Column, QueryResult, Session};
use super::write_result;
use crate::catalog::{TableDef, ViewDef};
use crate::err;
use crate::error::Result;
use crate::plan::bind::Binder;
use crate::plan::modify::view::{self, view_chain, WriteKind};
use crate::plan::select::view::ViewTarget;
use crate::txn::Snapshot;
use crate::vector::Batch;

impl Session {
    /// The view `name` names, when it names one this statement sees.
    pub(crate) fn written_view(&mut self, name: &ast::ObjectName) -> Option<Arc<ViewDef>> {
        if !self.db.catalog.any_view_named(&name.name) {
            return None;
        }
        let snap = self.statement_snapshot();
        visible_view(&self.db, &snap, &name.name)
    }

    /// The views a write through `view` passes and the table beneath them,
    /// locked `RowExclusive`.
    fn view_table(
        &mut self,
        view: Arc<ViewDef>,
        kind: WriteKind,
        named: &ast::ObjectName,
        snap: &Snapshot,
    ) -> Result<(Vec<Arc<ViewDef>>, Arc<TableDef>)> {
        let (chain, base) = view_chain(&self.stmt_ctx(snap), view, kind)?;
        let base = ast::ObjectName {
            schema: None,
            name: base,
            offset: named.offset,
        };
        let table = self.target(&base, snap)?;
        Ok((chain, table))
    }

    /// Binds the views of `chain` down to `table`.
    fn bind_target(
        &self,
        snap: &Snapshot,
        chain: &[Arc<ViewDef>],
        table: &Arc<TableDef>,
    ) -> Result<ViewTarget> {
        let mut ctx = self.stmt_ctx(snap);
        Binder::new(&mut ctx).bind_view_target(chain, table.clone())
    }

    /// INSERT into view `v`.
    pub(crate) fn insert_into_view(
        &mut self,
        ins: &ast::Insert,
        v: Arc<ViewDef>,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        if let Some(oc) = &ins.on_conflict {
            return self.upsert_into_view(ins, oc, v, sink);
        }
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (chain, table) = self.view_table(v, WriteKind::Insert, &ins.table, &snap)?;
        let vt = self.bind_target(&snap, &chain, &table)?;
        let mut ctx = self.stmt_ctx(&snap);
        let planned_rows = view::plan_insert(&mut Binder::new(&mut ctx), ins, &vt)?;
        let planned = t0.elapsed();
        let bulk = planned_rows.bulk;
        let fk = self.fk_capture(&table, &snap, false)?;
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

    /// `INSERT ... ON CONFLICT` into view `v`.
    fn upsert_into_view(
        &mut self,
        ins: &ast::Insert,
        oc: &ast::OnConflict,
        v: Arc<ViewDef>,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (chain, table) = self.view_table(v, WriteKind::Insert, &ins.table, &snap)?;
        let vt = self.bind_target(&snap, &chain, &table)?;
        let mut ctx = self.stmt_ctx(&snap);
        let (planned_rows, arbiters, action) =
            view::plan_upsert(&mut Binder::new(&mut ctx), ins, oc, &vt)?;
        let planned = t0.elapsed();
        self.capture_conflict(&table, oc, &arbiters, action.as_ref(), &table.name);
        let mut upsert = Some((arbiters, action));
        let fk = self.fk_capture(&table, &snap, false)?;
        let (count, cols) = self.write_rows(
            &snap,
            &table,
            (planned_rows, None),
            sink,
            None,
            |m, plan, emit| {
                let Some((arbiters, action)) = upsert.take() else {
                    return Err(err!(InternalError, "one upsert per statement"));
                };
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

    /// UPDATE of view `v`.
    pub(crate) fn update_view(
        &mut self,
        u: &ast::Update,
        v: Arc<ViewDef>,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (chain, table) = self.view_table(v, WriteKind::Update, &u.table, &snap)?;
        let vt = self.bind_target(&snap, &chain, &table)?;
        let mut ctx = self.stmt_ctx(&snap);
        let planned_rows = view::plan_update(&mut Binder::new(&mut ctx), u, &vt)?;
        let planned = t0.elapsed();
        let (count, cols) = self.write_rows_checked(
            &snap,
            &table,
            (planned_rows, None),
            sink,
            true,
            |m, plan, emit| m.update(plan, emit),
        )?;
        Ok(write_result(&format!("UPDATE {count}"), cols, planned, t0))
    }

    /// DELETE from view `v`.
    pub(crate) fn delete_from_view(
        &mut self,
        d: &ast::Delete,
        v: Arc<ViewDef>,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (chain, table) = self.view_table(v, WriteKind::Delete, &d.table, &snap)?;
        let vt = self.bind_target(&snap, &chain, &table)?;
        let mut ctx = self.stmt_ctx(&snap);
        let planned_rows = view::plan_delete(&mut Binder::new(&mut ctx), d, &vt)?;
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
}
