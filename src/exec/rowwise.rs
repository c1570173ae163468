//! Row-preserving operators: filter, projection, LIMIT/OFFSET (and WITH
//! TIES), append, and the sorted DISTINCT that keeps a run's first row;
//! and [`SingleRowsOp`], which hands its input on one row at a time.
//!
//! Expressions are evaluated a batch at a time, column by column, except
//! where that would be seen: an expression calling a user function or
//! `random()` ([`per_row`]) is evaluated over one-row
//! batches, so that its calls come row by row in target-list order and
//! none is made for rows a LIMIT above never asks for, as in PostgreSQL.

use std::cmp::Ordering;

use super::expr::{truth_mask, Expr, ExprKind};
use super::vector::{Batch, Vector};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::types::{compare_typed, Value};

/// Keeps the rows where the predicate is true.
pub struct FilterOp<'a> {
    /// The input.
    pub input: Box<dyn Operator + 'a>,
    /// The condition.
    pub predicate: &'a Expr,
    /// For cancellation.
    pub ctx: &'a ExecContext,
    /// Rows the predicate rejected so far.
    pub removed: u64,
}

impl Operator for FilterOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.input.next()? {
            self.ctx.check_cancel()?;
            let keep = truth_mask(&*self.predicate.eval(&b)?);
            let out = b.filter(&keep);
            self.removed += (b.len - out.len) as u64;
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
        Ok(None)
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }
}

/// Computes the output columns from the input's.
pub struct ProjectOp<'a> {
    /// The input.
    pub input: Box<dyn Operator + 'a>,
    /// One expression per output column.
    pub exprs: &'a [Expr],
}

impl Operator for ProjectOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        let Some(mut b) = self.input.next()? else {
            return Ok(None);
        };
        // Computed columns first, while the input is whole; then plain column
        // references, each input column moved out at its first use rather
        // than copied (a text column's copy is an allocation per row).
        let mut out: Vec<Option<Vector>> = self
            .exprs
            .iter()
            .map(|e| match e.kind {
                ExprKind::Column(_) => Ok(None),
                _ => e.eval(&b).map(|c| Some(c.into_owned())),
            })
            .collect::<Result<_>>()?;
        let mut moved_to: Vec<Option<usize>> = vec![None; b.columns.len()];
        for (k, e) in self.exprs.iter().enumerate() {
            if let ExprKind::Column(i) = e.kind {
                out[k] = Some(match moved_to[i] {
                    Some(first) => out[first].clone().expect("filled before"),
                    None => {
                        moved_to[i] = Some(k);
                        let ty = b.columns[i].ty;
                        std::mem::replace(&mut b.columns[i], Vector::new(ty))
                    }
                });
            }
        }
        Ok(Some(Batch {
            columns: out
                .into_iter()
                .map(|c| c.expect("every column filled"))
                .collect(),
            len: b.len,
        }))
    }
}

/// Whether `e` must be evaluated one row at a time: it calls a user
/// function, `random()` or `setseed()` ([`Expr::evaluates_per_row`]),
/// itself or in the plan of a subquery it holds.
pub fn per_row(e: &Expr) -> bool {
    if e.evaluates_per_row() {
        return true;
    }
    let mut subplans = Vec::new();
    super::subplan::subplans(e, &mut subplans);
    subplans.iter().any(|sp| sp.per_row)
}

/// Whether an expression of `plan` or of its inputs must be evaluated one
/// row at a time ([`per_row`]).
pub fn plan_per_row(plan: &crate::nodes::Plan) -> bool {
    plan.node.exprs().into_iter().any(per_row) || plan.children().into_iter().any(plan_per_row)
}

/// Passes its input's rows on one at a time (one-row batches), for the
/// operators whose expressions must be evaluated row by row (module doc).
/// A consumer that stops pulling leaves the remaining rows unevaluated.
pub struct SingleRowsOp<'a> {
    input: Box<dyn Operator + 'a>,
    /// The batch being handed out, and its next row.
    current: Option<(Batch, usize)>,
}

impl<'a> SingleRowsOp<'a> {
    /// Wraps `input`.
    pub fn new(input: Box<dyn Operator + 'a>) -> Self {
        SingleRowsOp {
            input,
            current: None,
        }
    }
}

impl Operator for SingleRowsOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some((b, i)) = &mut self.current {
                if *i < b.len {
                    *i += 1;
                    return Ok(Some(b.slice(*i - 1, *i)));
                }
            }
            match self.input.next()? {
                Some(b) => self.current = Some((b, 0)),
                None => return Ok(None),
            }
        }
    }

    fn page_partial(&mut self) -> Option<crate::exec::fastpath::page_agg::PagePartial> {
        self.input.page_partial()
    }
}

/// LIMIT / OFFSET: stops pulling its input once the limit is reached.
pub struct LimitOp<'a> {
    /// The input.
    pub input: Box<dyn Operator + 'a>,
    /// Rows still to return (None: no limit).
    pub remaining: Option<u64>,
    /// Rows still to skip.
    pub skip: u64,
}

impl Operator for LimitOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if self.remaining == Some(0) {
                return Ok(None);
            }
            let Some(mut b) = self.input.next()? else {
                return Ok(None);
            };
            if self.skip > 0 {
                let s = (self.skip as usize).min(b.len);
                self.skip -= s as u64;
                b = b.slice(s, b.len);
            }
            if let Some(r) = &mut self.remaining {
                let take = (*r as usize).min(b.len);
                *r -= take as u64;
                b = b.slice(0, take);
            }
            if b.len > 0 {
                return Ok(Some(b));
            }
        }
    }
}

/// Concatenates inputs (UNION ALL).
pub struct AppendOp<'a> {
    /// The inputs, in order.
    pub inputs: Vec<Box<dyn Operator + 'a>>,
    /// The input being read.
    pub current: usize,
}

impl Operator for AppendOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while self.current < self.inputs.len() {
            if let Some(b) = self.inputs[self.current].next()? {
                return Ok(Some(b));
            }
            self.current += 1;
        }
        Ok(None)
    }
}

/// The values of `columns` in row `i` of `b`: a row key that outlives the
/// batch (the last row of one batch is compared with the next batch's
/// first).
fn row_key(b: &Batch, columns: &[usize], i: usize) -> Vec<Value> {
    columns.iter().map(|&c| b.columns[c].get(i)).collect()
}

/// Whether row `i` of `b` equals `key` on `columns`, as a sort's equality
/// (NULLs equal to each other, `char(n)` without trailing spaces).
fn same_key(b: &Batch, columns: &[usize], i: usize, key: &[Value]) -> bool {
    columns.iter().zip(key).all(|(&c, k)| {
        let v = &b.columns[c];
        match (v.is_null(i), k.is_null()) {
            (true, true) => true,
            (false, false) => compare_typed(&v.get(i), k, &v.ty) == Ordering::Equal,
            _ => false,
        }
    })
}

/// PostgreSQL's `Unique`: keeps the first row of each run of rows equal on
/// `columns`. Its input is sorted on them, so equal rows are adjacent; the
/// key of the last row kept carries over from batch to batch.
pub struct UniqueOp<'a> {
    /// The input, sorted on `columns`.
    pub input: Box<dyn Operator + 'a>,
    /// The columns compared.
    pub columns: &'a [usize],
    /// The key of the last row returned.
    pub last: Option<Vec<Value>>,
}

impl Operator for UniqueOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.input.next()? {
            let mut keep = vec![false; b.len];
            for (i, k) in keep.iter_mut().enumerate() {
                let dup = matches!(&self.last, Some(key) if same_key(&b, self.columns, i, key));
                if !dup {
                    *k = true;
                    self.last = Some(row_key(&b, self.columns, i));
                }
            }
            let out = b.filter(&keep);
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
        Ok(None)
    }
}

/// `FETCH FIRST n ROWS WITH TIES`: OFFSET, then n rows, then the rows equal
/// to the n-th on `ties` (its input is sorted on them).
pub struct LimitTiesOp<'a> {
    /// The input.
    pub input: Box<dyn Operator + 'a>,
    /// Rows still to return before ties (None: no limit).
    pub remaining: Option<u64>,
    /// Rows still to skip.
    pub skip: u64,
    /// The columns a tie is equal on.
    pub ties: &'a [usize],
    /// The key of the n-th row, once it has been returned.
    pub last: Option<Vec<Value>>,
    /// A row after the n-th differed from it: nothing more to return.
    pub done: bool,
}

impl Operator for LimitTiesOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while !self.done {
            let Some(mut b) = self.input.next()? else {
                return Ok(None);
            };
            if self.skip > 0 {
                let s = (self.skip as usize).min(b.len);
                self.skip -= s as u64;
                b = b.slice(s, b.len);
            }
            let mut take = match &mut self.remaining {
                Some(0) => 0,
                Some(r) => {
                    let t = (*r as usize).min(b.len);
                    *r -= t as u64;
                    if *r == 0 && t > 0 {
                        self.last = Some(row_key(&b, self.ties, t - 1));
                    }
                    t
                }
                None => b.len,
            };
            if self.remaining == Some(0) {
                if let Some(key) = &self.last {
                    while take < b.len && same_key(&b, self.ties, take, key) {
                        take += 1;
                    }
                    if take < b.len {
                        self.done = true;
                    }
                } else {
                    self.done = true;
                }
            }
            if take > 0 {
                return Ok(Some(b.slice(0, take)));
            }
        }
        Ok(None)
    }
}
