//! Correlated subqueries: PostgreSQL's SubPlan, run per outer row with a
//! cache of results per parameter value (its Memoize idea).
//!
//! A subquery that reads columns of an enclosing query is planned once with
//! [`ExprKind::Param`] placeholders where those columns stand. The
//! [`ExprKind::SubPlan`] node that holds it carries, as its operands, the
//! expressions (over the outer query's rows) that give each parameter its
//! value, preceded for `x op ANY/ALL (...)` by the tested expression `x`.
//!
//! Invariants:
//! - the subquery runs once per distinct parameter tuple: its first column's
//!   values are kept in a cache keyed by that tuple (bounded: past
//!   [`CACHE_VALUES`] values the cache starts over), so an outer column with
//!   100 distinct values runs it at most 100 times however many rows ask;
//! - a run substitutes the tuple's values for the placeholders in a copy of
//!   the plan, so the executor's operators never see a placeholder (a nested
//!   subquery's parameters are its node's operands, substituted with the
//!   rest; its own plan keeps its placeholders);
//! - results follow SQL's three-valued logic: `x op ANY` is true when a row
//!   compares true, else NULL when one compares NULL, else false; `ALL` is
//!   the dual; a scalar subquery of several rows is the 21000 error when it
//!   is evaluated, as in PostgreSQL;
//! - an InitPlan ([`SubPlan::init`]: an uncorrelated subquery the binder
//!   could not run while planning, because it calls a volatile function or
//!   failed) runs at most once, when first evaluated, and keeps its rows
//!   for the rest of the statement, volatile or not;
//! - in a VOLATILE function's body every subquery is such a node, an
//!   uncorrelated one too, its cache kept for one call ([`new_call`]);
//!   under READ COMMITTED it reads with the snapshot of the body's query
//!   it runs in, and outside any query with a new one each time, uncached
//!   (`txn::query_snapshots`);
//! - a multiple-column assignment's subquery (`SET (a, b) = (SELECT ...)`,
//!   [`SubLinkKind::Row`]) is one node shared by the assignment's columns,
//!   each asking for its column: it runs once per outer row, not once per
//!   column (its cache keeps whole rows; a subquery run row by row keeps
//!   the last batch's rows until every column has taken its values).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::expr::{Expr, ExprKind};
use super::vector::{Batch, Vector};
use super::ExecContext;
use crate::err;
use crate::error::Result;
use crate::nodes::plannodes::Plan;
use crate::types::{self, BinaryOp, DataType, Value};

/// Cached values (over all parameter tuples) before the cache is emptied.
pub const CACHE_VALUES: usize = 1 << 20;

/// What a subquery computes for its outer row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SubLinkKind {
    /// `EXISTS (...)`.
    Exists,
    /// `(SELECT x ...)`: its one value, NULL when no row.
    Scalar,
    /// `x op ANY (...)` (`IN` is `= ANY`), or `ALL` when the flag is set;
    /// `x` is the node's first operand, already of the comparison type.
    Quantified(BinaryOp, bool),
    /// `SET (a, b, ...) = (SELECT ...)` of that many columns: the column
    /// of its one row (NULL when no row) whose position is the node's
    /// first operand, a constant.
    Row(usize),
}

/// One correlated subquery.
pub struct SubPlan {
    /// What it computes.
    pub kind: SubLinkKind,
    /// The subquery, [`ExprKind::Param`] standing for outer values.
    pub plan: Plan,
    /// The type its first column is compared as (for `Quantified`).
    pub cmp_ty: DataType,
    /// The context its runs execute in (the statement's snapshot).
    pub ctx: ExecContext,
    /// Results (first-column values) per parameter tuple.
    cache: Mutex<Cache>,
    /// Runs of the subquery (cache misses).
    pub runs: AtomicU64,
    /// Rows answered from the cache.
    pub hits: AtomicU64,
    /// The plan calls a function that must be called row by row
    /// ([`super::rowwise::plan_per_row`]): every row runs it, uncached.
    pub per_row: bool,
    /// An InitPlan: run once, when first evaluated, whatever `per_row`.
    pub once: bool,
    /// The cache holds for one call of a VOLATILE function only
    /// ([`SubPlan::per_call`]).
    per_call: bool,
    /// For a [`SubLinkKind::Row`] run row by row: the rows of the batch
    /// its columns are being evaluated over, and which columns took them.
    pending: Mutex<Option<Pending>>,
    /// A correlated EXISTS of an UPDATE's or DELETE's WHERE that
    /// PostgreSQL would make a semi-join (`plan::exists_shape`): READ
    /// COMMITTED's re-check holds the rows it matched.
    pub semi_join: bool,
}

/// A multiple-column subquery's rows for one batch, kept until each of its
/// columns has read them (so that a row's subquery runs once).
struct Pending {
    rows: Vec<Arc<Vec<Value>>>,
    taken: Vec<bool>,
}

#[derive(Default)]
struct Cache {
    map: HashMap<Vec<Value>, Arc<Vec<Value>>>,
    values: usize,
    /// For a per-call node: the [`CALLS`] count its entries were made at.
    call: u64,
}

/// Calls of VOLATILE function bodies so far, process-wide: a per-call
/// node's cache made at another count is stale. (Another session's calls
/// only empty it early, costing a run, never an answer.)
static CALLS: AtomicU64 = AtomicU64::new(0);

/// Marks the start of a call of a VOLATILE function's body: what its
/// subqueries read before may have changed since.
pub fn new_call() {
    CALLS.fetch_add(1, Ordering::Relaxed);
}

impl std::fmt::Debug for SubPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SubPlan({:?}, {:?})", self.kind, self.plan)
    }
}

impl SubPlan {
    /// A subplan running `plan` in `ctx`.
    pub fn new(kind: SubLinkKind, plan: Plan, cmp_ty: DataType, ctx: ExecContext) -> SubPlan {
        SubPlan {
            kind,
            cmp_ty,
            ctx,
            cache: Mutex::new(Cache::default()),
            runs: AtomicU64::new(0),
            hits: AtomicU64::new(0),
            per_row: super::rowwise::plan_per_row(&plan),
            once: false,
            per_call: false,
            pending: Mutex::new(None),
            semi_join: false,
            plan,
        }
    }

    /// An InitPlan running `plan` (without parameters) in `ctx` once, when
    /// the statement first evaluates it, as PostgreSQL evaluates an
    /// InitPlan's output parameter lazily.
    pub fn init(kind: SubLinkKind, plan: Plan, cmp_ty: DataType, ctx: ExecContext) -> SubPlan {
        SubPlan {
            once: true,
            ..SubPlan::new(kind, plan, cmp_ty, ctx)
        }
    }

    /// A correlated subplan of `kind` running `plan` in a context like this
    /// one's (the same snapshot and relations): a subquery derived from
    /// this one's plan.
    pub fn sibling(&self, kind: SubLinkKind, plan: Plan, cmp_ty: DataType) -> SubPlan {
        let ctx = self.ctx.with_snapshot(self.ctx.snapshot.clone());
        SubPlan {
            per_call: self.per_call,
            ..SubPlan::new(kind, plan, cmp_ty, ctx)
        }
    }

    /// The node with its cache good for one call of a VOLATILE function's
    /// body only: each call reads anew ([`new_call`]).
    pub fn per_call(mut self) -> SubPlan {
        self.per_call = true;
        self
    }

    /// Evaluates the node (`args`: its operands) for every row of `batch`.
    pub fn eval(&self, args: &[Expr], batch: &Batch, ty: DataType) -> Result<Vector> {
        if let SubLinkKind::Row(width) = self.kind {
            return self.eval_row_column(width, args, batch, ty);
        }
        let (test, params) = match self.kind {
            SubLinkKind::Quantified(..) => match args.split_first() {
                Some((t, rest)) => (Some(t.eval(batch)?), rest),
                None => return Err(err!(InternalError, "quantified subplan without operand")),
            },
            _ => (None, args),
        };
        let params: Vec<Cow<Vector>> = params
            .iter()
            .map(|a| a.eval(batch))
            .collect::<Result<_>>()?;
        let mut out = Vector::with_capacity(ty, batch.len);
        let mut key = Vec::with_capacity(params.len());
        for row in 0..batch.len {
            key.clear();
            key.extend(params.iter().map(|p| p.get(row)));
            let rows = self.rows_for(&key)?;
            let v = match self.kind {
                SubLinkKind::Exists => Value::Bool(!rows.is_empty()),
                SubLinkKind::Scalar => match rows.len() {
                    0 => Value::Null,
                    1 => rows[0].clone(),
                    _ => {
                        return Err(err!(
                            CardinalityViolation,
                            "more than one row returned by a subquery used as an expression"
                        ))
                    }
                },
                SubLinkKind::Quantified(op, all) => {
                    let x = test.as_ref().map_or(Value::Null, |t| t.get(row));
                    quantified(op, all, &x, &rows, &self.cmp_ty)?
                }
                SubLinkKind::Row(_) => unreachable!("evaluated by eval_row_column"),
            };
            out.push(&v);
        }
        Ok(out)
    }

    /// A [`SubLinkKind::Row`] node of `width` columns: the column its first
    /// operand names, for every row of `batch`.
    fn eval_row_column(
        &self,
        width: usize,
        args: &[Expr],
        batch: &Batch,
        ty: DataType,
    ) -> Result<Vector> {
        let Some((column, params)) = args.split_first() else {
            return Err(err!(InternalError, "row subplan without its column"));
        };
        let column = match column.kind {
            ExprKind::Const(Value::Int4(c)) if (c as usize) < width => c as usize,
            _ => {
                return Err(err!(
                    InternalError,
                    "row subplan's column is not a constant"
                ))
            }
        };
        let rows = match self.take_pending(column, batch.len) {
            Some(rows) => rows,
            None => {
                let params: Vec<Cow<Vector>> = params
                    .iter()
                    .map(|a| a.eval(batch))
                    .collect::<Result<_>>()?;
                let mut rows = Vec::with_capacity(batch.len);
                for row in 0..batch.len {
                    let key: Vec<Value> = params.iter().map(|p| p.get(row)).collect();
                    rows.push(self.rows_for(&key)?);
                }
                if self.per_row && width > 1 {
                    let mut taken = vec![false; width];
                    taken[column] = true;
                    *self.lock_pending() = Some(Pending {
                        rows: rows.clone(),
                        taken,
                    });
                }
                rows
            }
        };
        let mut out = Vector::with_capacity(ty, batch.len);
        for values in rows {
            let v = match values.len() / width.max(1) {
                0 => Value::Null,
                1 => values[column].clone(),
                _ => {
                    return Err(err!(
                        CardinalityViolation,
                        "more than one row returned by a subquery used as an expression"
                    ))
                }
            };
            out.push(&v);
        }
        Ok(out)
    }

    /// The rows another column of this node computed for a batch of `len`
    /// rows, if column `column` has not read them yet.
    fn take_pending(&self, column: usize, len: usize) -> Option<Vec<Arc<Vec<Value>>>> {
        let mut pending = self.lock_pending();
        let p = pending.as_mut()?;
        if p.rows.len() != len || p.taken[column] {
            *pending = None;
            return None;
        }
        p.taken[column] = true;
        if p.taken.iter().all(|&t| t) {
            return pending.take().map(|p| p.rows);
        }
        Some(p.rows.clone())
    }

    fn lock_pending(&self) -> std::sync::MutexGuard<'_, Option<Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The subquery's first-column values for the parameter tuple `key`,
    /// from the cache or by running it.
    fn rows_for(&self, key: &[Value]) -> Result<Arc<Vec<Value>>> {
        if let Some(q) = &self.ctx.query_snapshots {
            if q.current().is_none() {
                // An expression of a VOLATILE body outside its queries (a
                // query of its own in PostgreSQL): it reads anew each time.
                self.runs.fetch_add(1, Ordering::Relaxed);
                let snap = q.take(&self.ctx.snapshot);
                return q.enter(snap, |_| self.run(key)).map(Arc::new);
            }
        }
        if self.once {
            // Held while it runs: parallel participants evaluating it at
            // once still run it once.
            let mut cache = self.lock();
            if let Some(r) = cache.map.get(key) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(r.clone());
            }
            self.runs.fetch_add(1, Ordering::Relaxed);
            let values = Arc::new(self.run(key)?);
            cache.map.insert(key.to_vec(), values.clone());
            return Ok(values);
        }
        if self.per_row {
            self.runs.fetch_add(1, Ordering::Relaxed);
            return self.run(key).map(Arc::new);
        }
        if let Some(r) = self.lock().map.get(key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(r.clone());
        }
        self.runs.fetch_add(1, Ordering::Relaxed);
        let values = Arc::new(self.run(key)?);
        let mut cache = self.lock();
        if cache.values + values.len() > CACHE_VALUES {
            cache.map.clear();
            cache.values = 0;
        }
        cache.values += values.len().max(1);
        cache.map.insert(key.to_vec(), values.clone());
        Ok(values)
    }

    /// Runs the subquery for the parameter tuple `key`: its first-column
    /// values (for [`SubLinkKind::Row`], every column of each row, in
    /// order).
    fn run(&self, key: &[Value]) -> Result<Vec<Value>> {
        let mut plan = self.plan.clone();
        substitute_plan(&mut plan, key);
        let rows = match self.ctx.query_snapshots.as_ref().and_then(|q| q.current()) {
            // In a VOLATILE body under READ COMMITTED: the running query's.
            Some(snap) => super::collect_rows(&plan, &self.ctx.with_snapshot(snap))?,
            None => super::collect_rows(&plan, &self.ctx)?,
        };
        if let SubLinkKind::Row(_) = self.kind {
            return Ok(rows.into_iter().flatten().collect());
        }
        Ok(rows
            .into_iter()
            .map(|mut r| {
                if r.is_empty() {
                    Value::Null
                } else {
                    r.swap_remove(0)
                }
            })
            .collect())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        // A panic while holding the lock leaves a consistent map (inserts
        // are single calls), so a poisoned lock is still usable.
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if self.per_call {
            let call = CALLS.load(Ordering::Relaxed);
            if cache.call != call {
                cache.map.clear();
                cache.values = 0;
                cache.call = call;
            }
        }
        cache
    }
}

/// `x op ANY/ALL (rows)` in three-valued logic.
fn quantified(op: BinaryOp, all: bool, x: &Value, rows: &[Value], ty: &DataType) -> Result<Value> {
    let mut saw_null = false;
    for r in rows {
        match types::eval_binary_typed(op, x, r, Some(ty))? {
            Value::Bool(b) if b != all => return Ok(Value::Bool(!all)),
            Value::Bool(_) => {}
            _ => saw_null = true,
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Bool(all)
    })
}

/// Replaces every [`ExprKind::Param`] of `plan`'s expressions (not those
/// inside nested subplans' own plans, nor a lateral join's right side)
/// with the value it stands for.
pub fn substitute_plan(plan: &mut Plan, values: &[Value]) {
    for e in plan.node.exprs_mut() {
        substitute(e, values);
    }
    // A lateral join's right side has parameters of its own: the join's
    // `params`, substituted above.
    if let crate::nodes::Node::Lateral { left, .. } = &mut plan.node {
        substitute_plan(left, values);
        return;
    }
    for c in plan.children_mut() {
        substitute_plan(c, values);
    }
}

fn substitute(e: &mut Expr, values: &[Value]) {
    if let ExprKind::Param(i) = e.kind {
        let v = values.get(i).cloned().unwrap_or(Value::Null);
        *e = Expr::constant(v, e.ty);
        return;
    }
    for c in e.children_mut() {
        substitute(c, values);
    }
}

/// Whether `e` holds a subplan.
pub fn has_subplan(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::SubPlan(..)) || e.children().into_iter().any(has_subplan)
}

/// The subplans in `e`, outermost first.
pub fn subplans<'e>(e: &'e Expr, out: &mut Vec<&'e crate::nodes::expr::SubPlanRef>) {
    if let ExprKind::SubPlan(sp, _) = &e.kind {
        out.push(sp);
    }
    for c in e.children() {
        subplans(c, out);
    }
}

impl std::ops::Deref for crate::nodes::expr::SubPlanRef {
    type Target = SubPlan;

    /// The executor's subplan behind the opaque node reference; the binder
    /// builds every `SubPlanRef` from a [`SubPlan`] (`plan::sublink`).
    fn deref(&self) -> &SubPlan {
        self.0
            .downcast_ref::<SubPlan>()
            .expect("a SubPlanRef always holds an exec::subplan::SubPlan")
    }
}
