//! `INSERT ... ON CONFLICT DO NOTHING | DO UPDATE` (PostgreSQL's
//! `ExecInsert` with speculative insertion and `ExecOnConflictUpdate`).
//!
//! The arbiter indexes are inferred from the conflict target by the
//! planner (`plan::modify::arbiter_indexes`): the unique
//! indexes whose key columns are exactly the target's, the constraint named
//! by `ON CONSTRAINT`, or (DO NOTHING without a target) every unique index.
//! Each proposed row goes through
//! [`IndexInserter::insert_unless_conflict`], which checks the arbiters and
//! inserts under their key locks (so two sessions upserting one key cannot
//! both insert it). A conflicting row decided by a running transaction is
//! waited for, then the row is tried again. On a conflict, DO NOTHING
//! skips the row; DO UPDATE evaluates its `SET` and `WHERE` over the
//! existing row (the target's name or alias) and the proposed one
//! (`excluded`) and updates the existing row's latest version: when that
//! version changed meanwhile, READ COMMITTED starts the row over (finding
//! the new version), REPEATABLE READ fails with 40001, as it does when the
//! conflicting row is not in its snapshot. A row inserted or updated by the
//! same command is `ON CONFLICT DO UPDATE command cannot affect row a
//! second time` (21000).

use super::epq::read_tuple;
use super::{check_views, concurrent_update, emit_returning, ModifyTable, RowWriter};
use crate::access::heap::tuple;
use crate::access::heap::visibility::{satisfies_mvcc, satisfies_update};
use crate::access::heap::{HeapRelation, Tid, TmResult};
use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::exec::expr::Expr;
use crate::exec::index_maint::{tuple_values, IndexInserter, Speculative};
use crate::nodes::Plan;
use crate::txn::Snapshot;
use crate::types::Value;
use crate::vector::{Batch, Vector};

/// A bound `DO UPDATE`: over a batch of the existing row's columns followed
/// by the proposed row's (`excluded`).
pub struct UpdateAction {
    /// Per table column, its new value (`None`: kept).
    pub new_values: Vec<Option<Expr>>,
    /// The `WHERE` condition.
    pub condition: Option<Expr>,
}

/// What happened to one proposed row.
enum Done {
    /// Inserted, or an existing row updated: the row as written.
    Wrote(Vec<Value>),
    /// Left out (DO NOTHING, or DO UPDATE's WHERE was not true).
    Skipped,
    /// The conflicting row changed meanwhile: try the row again.
    Retry,
}

/// Everything one upsert statement needs while writing rows.
struct Upsert<'a> {
    table: &'a TableDef,
    rel: &'a HeapRelation,
    indexer: Option<IndexInserter<'a>>,
    arbiters: Vec<usize>,
    action: Option<UpdateAction>,
    snap: &'a Snapshot,
    xid: crate::txn::Xid,
    cid: crate::txn::CommandId,
}

impl ModifyTable<'_> {
    /// `INSERT ... ON CONFLICT`: each complete row `plan` proposes is
    /// inserted unless it conflicts in an arbiter index (positions
    /// `arbiters` of the table's indexes); then `action` (`None`: DO
    /// NOTHING) decides. RETURNING's rows go to `emit`. The number of rows
    /// inserted or updated.
    pub fn upsert(
        &self,
        plan: &Plan,
        arbiters: Vec<usize>,
        action: Option<UpdateAction>,
        emit: &mut dyn FnMut(&Batch) -> Result<()>,
    ) -> Result<u64> {
        let table = self.table;
        self.rel.set_fillfactor(table.fillfactor());
        let up = Upsert {
            table,
            rel: self.rel,
            indexer: IndexInserter::new(&self.ctx, table)?,
            arbiters,
            action,
            snap: self.ctx.snapshot,
            xid: self.ctx.xid,
            cid: self.ctx.cid,
        };
        let mut writer = RowWriter::new(table)?;
        let mut op = self.build_rows(plan)?;
        let mut count = 0u64;
        while let Some(b) = op.next()? {
            self.exec.check_cancel()?;
            let mut written: Vec<Vec<Value>> = Vec::new();
            writer.prepare(&b, 0)?;
            for i in 0..b.len {
                writer.form(&b, i, 0)?;
                let proposed: Vec<Value> = (0..table.columns.len())
                    .map(|c| b.columns[c].get(i))
                    .collect();
                if let Some(row) = self.upsert_row(&up, &mut writer, &proposed)? {
                    count += 1;
                    if !self.returning.is_empty() || !self.checks.is_empty() {
                        written.push(row);
                    }
                }
            }
            if !written.is_empty() {
                let rows = rows_batch(table, &written);
                check_views(self.checks, table, &rows)?;
                if !self.returning.is_empty() {
                    emit_returning(self.returning, &rows, emit)?;
                }
            }
        }
        Ok(count)
    }

    /// Inserts the proposed row (formed in `writer.tuple`) or handles its
    /// conflict; the row as written, or `None` when nothing was written.
    fn upsert_row(
        &self,
        up: &Upsert<'_>,
        writer: &mut RowWriter<'_>,
        proposed: &[Value],
    ) -> Result<Option<Vec<Value>>> {
        let Some(ix) = &up.indexer else {
            up.rel.insert(&writer.tuple, up.xid, up.cid)?;
            return Ok(Some(proposed.to_vec()));
        };
        loop {
            let tuple = writer.tuple.clone();
            let found =
                ix.insert_unless_conflict(&self.ctx, up.rel, &up.arbiters, proposed, || {
                    up.rel.insert(&tuple, up.xid, up.cid)
                })?;
            let done = match found {
                Speculative::Inserted => return Ok(Some(proposed.to_vec())),
                Speculative::Wait(x) => {
                    self.ctx.wait_for(x)?;
                    continue;
                }
                Speculative::Conflict(tid) => self.on_conflict(up, ix, writer, proposed, tid)?,
            };
            match done {
                Done::Wrote(row) => return Ok(Some(row)),
                Done::Skipped => return Ok(None),
                Done::Retry => continue,
            }
        }
    }

    /// The conflict of a proposed row with the row at `tid`.
    fn on_conflict(
        &self,
        up: &Upsert<'_>,
        ix: &IndexInserter<'_>,
        writer: &mut RowWriter<'_>,
        proposed: &[Value],
        tid: Tid,
    ) -> Result<Done> {
        let Some(existing) = read_tuple(up.rel, tid)? else {
            return Ok(Done::Retry);
        };
        let own = tuple::xmin(&existing) == up.xid;
        // PostgreSQL's ExecCheckTupleVisible: REPEATABLE READ may not act
        // on a row its snapshot does not see.
        let serializable_check = || -> Result<()> {
            if self.ctx.repeatable_read && !own {
                let (visible, _) = satisfies_mvcc(&existing, up.snap, up.rel.txns().clog())?;
                if !visible {
                    return Err(concurrent_update());
                }
            }
            Ok(())
        };
        let Some(action) = &up.action else {
            serializable_check()?;
            return Ok(Done::Skipped);
        };
        let (res, _) = satisfies_update(&existing, tid.pair(), up.xid, up.cid, up.rel.txns())?;
        if let Some(d) = self.lock_outcome(res, own)? {
            return Ok(d);
        }
        serializable_check()?;
        let old = tuple_values(up.table, &tuple_desc_of(up.table)?, &existing)?;
        let mut both = old;
        both.extend_from_slice(proposed);
        let input = rows_batch_types(
            up.table
                .columns
                .iter()
                .chain(up.table.columns.iter())
                .map(|c| c.ty),
            &[both],
        );
        if let Some(cond) = &action.condition {
            if cond.eval(&input)?.get(0).as_bool() != Some(true) {
                return Ok(Done::Skipped);
            }
        }
        let mut new_row = Vec::with_capacity(up.table.columns.len());
        for (j, v) in action.new_values.iter().enumerate() {
            new_row.push(match v {
                Some(e) => e.eval(&input)?.get(0),
                None => input.columns[j].get(0),
            });
        }
        writer.form(&rows_batch(up.table, std::slice::from_ref(&new_row)), 0, 0)?;
        let (res, new_tid) =
            up.rel
                .update_with(tid, &writer.tuple, up.xid, up.cid, ix.hot_rule())?;
        if let Some(d) = self.lock_outcome(res, own)? {
            return Ok(d);
        }
        if let Some(t) = new_tid.filter(|t| !t.heap_only) {
            ix.insert(&self.ctx, up.rel, &new_row, t.tid)?;
        }
        Ok(Done::Wrote(new_row))
    }

    /// What a check (or attempt) to change the conflicting row found, when
    /// it is not [`TmResult::Ok`]: a row of this command is 21000, one
    /// changed meanwhile is waited for and tried again (or 40001 in
    /// REPEATABLE READ).
    fn lock_outcome(&self, res: TmResult, own: bool) -> Result<Option<Done>> {
        match res {
            TmResult::Ok => Ok(None),
            TmResult::SelfModified => Err(second_time()),
            TmResult::Invisible if own => Err(second_time()),
            TmResult::Invisible => Ok(Some(Done::Retry)),
            TmResult::BeingModified(x) => {
                self.ctx.wait_for(x)?;
                Ok(Some(Done::Retry))
            }
            TmResult::Updated(..) | TmResult::Deleted => {
                if self.ctx.repeatable_read {
                    Err(concurrent_update())
                } else {
                    Ok(Some(Done::Retry))
                }
            }
        }
    }
}

fn second_time() -> crate::error::Error {
    err!(
        CardinalityViolation,
        "ON CONFLICT DO UPDATE command cannot affect row a second time"
    )
    .with_hint(
        "Ensure that no rows proposed for insertion within the same command have duplicate constrained values.",
    )
}

fn tuple_desc_of(table: &TableDef) -> Result<tuple::TupleDesc> {
    crate::exec::scan::tuple_desc(table)
}

/// Whole rows of `table` as a batch.
fn rows_batch(table: &TableDef, rows: &[Vec<Value>]) -> Batch {
    rows_batch_types(table.columns.iter().map(|c| c.ty), rows)
}

/// Rows as a batch whose columns have the types `types`.
fn rows_batch_types(
    types: impl Iterator<Item = crate::types::DataType>,
    rows: &[Vec<Value>],
) -> Batch {
    let columns = types
        .enumerate()
        .map(|(c, ty)| {
            let vals: Vec<Value> = rows.iter().map(|r| r[c].clone()).collect();
            Vector::from_values(ty, &vals)
        })
        .collect();
    Batch {
        columns,
        len: rows.len(),
    }
}
