//! Row-preserving operators: filter, projection, LIMIT/OFFSET, append.

use super::expr::{truth_mask, Expr, ExprKind};
use super::vector::{Batch, Vector};
use super::{ExecContext, Operator};
use crate::error::Result;

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
