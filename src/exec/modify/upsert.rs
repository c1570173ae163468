//! `INSERT ... ON CONFLICT DO NOTHING | DO UPDATE` (PostgreSQL's
//! `ExecInsert` with speculative insertion and `ExecOnConflictUpdate`).
//!
//! The arbiter indexes are inferred from the conflict target: the unique
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

use std::time::Instant;

use heapdb_grammar::ast;

use super::{
    bind_assignments, complete_row, concurrent_update, emit_returning, insert_source,
    target_columns, wait_for, write_result, RowWriter,
};
use crate::access::heap::tuple;
use crate::access::heap::visibility::{satisfies_mvcc, satisfies_update};
use crate::access::heap::{HeapRelation, Tid, TmResult};
use crate::catalog::TableDef;
use crate::err;
use crate::error::Result;
use crate::exec;
use crate::exec::expr::Expr;
use crate::exec::index_maint::{tuple_values, IndexInserter, Speculative};
use crate::plan::bind::{at, Binder, Mode};
use crate::plan::scope::{Scope, ScopeItem};
use crate::plan::{Field, Node, Plan};
use crate::session::{Column, Isolation, QueryResult, Session};
use crate::storage::ForkNumber;
use crate::txn::Snapshot;
use crate::types::Value;
use crate::vector::{Batch, Vector};

/// A bound `DO UPDATE`: over a batch of the existing row's columns followed
/// by the proposed row's (`excluded`).
struct UpdateAction {
    /// Per table column, its new value (`None`: kept).
    new_values: Vec<Option<Expr>>,
    /// The `WHERE` condition.
    condition: Option<Expr>,
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

/// The positions of the arbiter indexes of `oc` in `table.indexes`.
fn arbiter_indexes(table: &TableDef, oc: &ast::OnConflict) -> Result<Vec<usize>> {
    let none = || {
        err!(
            InvalidColumnReference,
            "there is no unique or exclusion constraint matching the ON CONFLICT specification"
        )
    };
    match &oc.target {
        ast::ConflictTarget::Any => {
            if matches!(oc.action, ast::ConflictAction::Update { .. }) {
                return Err(at(
                    err!(
                        SyntaxError,
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name"
                    )
                    .with_hint("For example, ON CONFLICT (column_name)."),
                    oc.offset,
                ));
            }
            Ok((0..table.indexes.len())
                .filter(|&p| table.indexes[p].unique)
                .collect())
        }
        ast::ConflictTarget::Columns(elems) => {
            let mut want = Vec::with_capacity(elems.len());
            for e in elems {
                let c = table.column_index(&e.column).ok_or_else(|| {
                    at(
                        err!(UndefinedColumn, "column \"{}\" does not exist", e.column),
                        e.offset,
                    )
                })?;
                want.push(c);
            }
            want.sort_unstable();
            want.dedup();
            let found: Vec<usize> = (0..table.indexes.len())
                .filter(|&p| {
                    let ix = &table.indexes[p];
                    let mut have: Vec<usize> = ix.columns.iter().map(|c| c.column).collect();
                    have.sort_unstable();
                    have.dedup();
                    ix.unique && have == want
                })
                .collect();
            if found.is_empty() {
                return Err(none());
            }
            Ok(found)
        }
        ast::ConflictTarget::Constraint(name) => table
            .indexes
            .iter()
            .position(|ix| ix.constraint && &ix.name == name)
            .map(|p| vec![p])
            .ok_or_else(|| {
                err!(
                    UndefinedObject,
                    "constraint \"{name}\" for table \"{}\" does not exist",
                    table.name
                )
            }),
    }
}

/// The scope of `DO UPDATE`'s expressions: the target (by its alias when
/// it has one), then `excluded`, both with every column of the table.
fn update_scope(table: &TableDef, alias: &str) -> Result<Scope> {
    let cols = || table.columns.iter().map(|c| (c.name.clone(), c.ty));
    let mut target = Scope::of(alias, cols());
    if alias != table.name {
        target.items = vec![ScopeItem {
            name: alias.to_string(),
            hidden_table: Some(table.name.clone()),
        }];
    }
    target.join(&Scope::of("excluded", cols()))
}

/// Everything one upsert statement needs while writing rows.
struct Upsert<'a> {
    table: &'a TableDef,
    rel: &'a HeapRelation,
    indexer: Option<IndexInserter<'a>>,
    arbiters: Vec<usize>,
    action: Option<UpdateAction>,
    snap: &'a Snapshot,
    isolation: Isolation,
    xid: crate::txn::Xid,
    cid: crate::txn::CommandId,
}

impl Session {
    pub(crate) fn insert_on_conflict(
        &mut self,
        ins: &ast::Insert,
        oc: &ast::OnConflict,
        sink: &mut dyn FnMut(&[Column], &Batch) -> Result<()>,
    ) -> Result<QueryResult> {
        let t0 = Instant::now();
        let snap = self.statement_snapshot();
        let (xid, cid) = (self.txn_ref().xid, self.txn_ref().cid);
        let isolation = self.txn_ref().isolation;
        let table = self.target(&ins.table, &snap)?;
        let alias = ins.alias.clone().unwrap_or_else(|| table.name.clone());
        let targets = target_columns(&table, &ins.columns)?;
        let arbiters = arbiter_indexes(&table, oc)?;
        let mut ctx = self.stmt_ctx(&snap);
        let mut binder = Binder::new(&mut ctx);
        let (source, _) = insert_source(&mut binder, ins, &table, &targets)?;
        let exprs = complete_row(&mut binder, &table, &targets, source.fields.len())?;
        let action = match &oc.action {
            ast::ConflictAction::Nothing => None,
            ast::ConflictAction::Update {
                assignments,
                where_clause,
            } => {
                let scope = update_scope(&table, &alias)?;
                let new_values = bind_assignments(&mut binder, &table, assignments, &scope)?;
                let condition = match where_clause {
                    Some(w) => Some(binder.bind_condition(
                        w,
                        &scope,
                        &mut Mode::NoAgg("WHERE"),
                        "WHERE",
                    )?),
                    None => None,
                };
                Some(UpdateAction {
                    new_values,
                    condition,
                })
            }
        };
        let (ret_exprs, ret_cols) = self.returning(&mut binder, &ins.returning, &table, &alias)?;
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
        let up = Upsert {
            table: &table,
            rel: &rel,
            indexer: IndexInserter::new(&self.db, &table, xid)?,
            arbiters,
            action,
            snap: &snap,
            isolation,
            xid,
            cid,
        };
        let mut writer = RowWriter::new(&table)?;
        let mut op = exec::build(&plan, &ctx)?;
        let mut count = 0u64;
        while let Some(b) = op.next()? {
            ctx.check_cancel()?;
            let mut written: Vec<Vec<Value>> = Vec::new();
            for i in 0..b.len {
                writer.form(&b, i, 0)?;
                let proposed: Vec<Value> = (0..table.columns.len())
                    .map(|c| b.columns[c].get(i))
                    .collect();
                if let Some(row) = self.upsert_row(&up, &mut writer, &proposed)? {
                    count += 1;
                    if !ret_exprs.is_empty() {
                        written.push(row);
                    }
                }
            }
            if !written.is_empty() {
                emit_returning(&ret_exprs, &ret_cols, &rows_batch(&table, &written), sink)?;
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
            let found = ix.insert_unless_conflict(self, up.rel, &up.arbiters, proposed, || {
                up.rel.insert(&tuple, up.xid, up.cid)
            })?;
            let done = match found {
                Speculative::Inserted => return Ok(Some(proposed.to_vec())),
                Speculative::Wait(x) => {
                    wait_for(self, x)?;
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
            if up.isolation == Isolation::RepeatableRead && !own {
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
        if let Some(d) = self.lock_outcome(up, res, own)? {
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
        let (res, new_tid) = up.rel.update(tid, &writer.tuple, up.xid, up.cid)?;
        if let Some(d) = self.lock_outcome(up, res, own)? {
            return Ok(d);
        }
        if let Some(t) = new_tid {
            ix.insert(self, up.rel, &new_row, t)?;
        }
        Ok(Done::Wrote(new_row))
    }

    /// What a check (or attempt) to change the conflicting row found, when
    /// it is not [`TmResult::Ok`]: a row of this command is 21000, one
    /// changed meanwhile is waited for and tried again (or 40001 in
    /// REPEATABLE READ).
    fn lock_outcome(&self, up: &Upsert<'_>, res: TmResult, own: bool) -> Result<Option<Done>> {
        match res {
            TmResult::Ok => Ok(None),
            TmResult::SelfModified => Err(second_time()),
            TmResult::Invisible if own => Err(second_time()),
            TmResult::Invisible => Ok(Some(Done::Retry)),
            TmResult::BeingModified(x) => {
                wait_for(self, x)?;
                Ok(Some(Done::Retry))
            }
            TmResult::Updated(..) | TmResult::Deleted => {
                if up.isolation == Isolation::RepeatableRead {
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

/// A copy of the heap tuple at `tid`, if there is one.
fn read_tuple(rel: &HeapRelation, tid: Tid) -> Result<Option<Vec<u8>>> {
    if tid.block >= rel.nblocks()? {
        return Ok(None);
    }
    let buf = rel
        .pool()
        .read_buffer(rel.rel(), ForkNumber::Main, tid.block, None)?;
    let g = buf.read();
    Ok(crate::storage::page::get_item(&g[..], tid.offset)
        .filter(|t| t.len() >= tuple::HEADER_SIZE)
        .map(<[u8]>::to_vec))
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
