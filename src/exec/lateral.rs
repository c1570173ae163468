//! The lateral nested loop ([`Node::Lateral`]): per left row, the right
//! plan with the row's parameter values substituted for its placeholders,
//! run anew (PostgreSQL's Nested Loop with a parameterized inner side).
//!
//! Invariants: the right side is run once per left row, except that
//! consecutive rows with the same parameter values share one run; a left
//! join emits an unmatched left row once, NULL-extended; rows come out in
//! left order, each left row's right rows in their own order.

use std::borrow::Cow;

use super::expr::Expr;
use super::vector::{Batch, Vector};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::nodes::{JoinKind, Node, Plan};
use crate::types::{DataType, Value};

/// The operator of a [`Node::Lateral`] node.
pub struct LateralOp<'a> {
    left: Box<dyn Operator + 'a>,
    right: &'a Plan,
    right_types: Vec<DataType>,
    kind: JoinKind,
    params: &'a [Expr],
    ctx: &'a ExecContext,
    /// The last parameter values and the right's rows for them.
    last: Option<(Vec<Value>, Batch)>,
}

impl<'a> LateralOp<'a> {
    /// Joins `left` with `plan`'s right side (`plan` is a
    /// [`Node::Lateral`]).
    pub fn new(
        left: Box<dyn Operator + 'a>,
        plan: &'a Plan,
        ctx: &'a ExecContext,
    ) -> Option<LateralOp<'a>> {
        let Node::Lateral {
            right,
            kind,
            params,
            ..
        } = &plan.node
        else {
            return None;
        };
        Some(LateralOp {
            left,
            right,
            right_types: right.types(),
            kind: *kind,
            params,
            ctx,
            last: None,
        })
    }

    /// Makes `last` the right side's rows for parameter values `key`.
    fn right_rows(&mut self, key: &[Value]) -> Result<()> {
        let fresh = !matches!(&self.last, Some((k, _)) if k.as_slice() == key);
        if fresh {
            let mut plan = self.right.clone();
            super::subplan::substitute_plan(&mut plan, key);
            let mut all = Batch {
                columns: self.right_types.iter().map(|t| Vector::new(*t)).collect(),
                len: 0,
            };
            let mut op = super::build(&plan, self.ctx)?;
            while let Some(b) = op.next()? {
                if b.len > 0 {
                    all.extend(&b);
                }
            }
            self.last = Some((key.to_vec(), all));
        }
        Ok(())
    }
}

impl Operator for LateralOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.left.next()? {
            let params: Vec<Cow<Vector>> = self
                .params
                .iter()
                .map(|p| p.eval(&b))
                .collect::<Result<_>>()?;
            let mut out: Option<Batch> = None;
            let mut key = Vec::with_capacity(params.len());
            for row in 0..b.len {
                self.ctx.check_cancel()?;
                key.clear();
                key.extend(params.iter().map(|p| p.get(row)));
                self.right_rows(&key)?;
                let Some((_, right)) = &self.last else {
                    continue;
                };
                let pairs = if right.len == 0 {
                    if self.kind != JoinKind::Left {
                        continue;
                    }
                    let mut columns: Vec<Vector> =
                        b.columns.iter().map(|c| c.take(&[row as u32])).collect();
                    columns.extend(super::join::null_columns(&self.right_types, 1));
                    Batch { columns, len: 1 }
                } else {
                    let left_idx = vec![row as u32; right.len];
                    let mut columns: Vec<Vector> =
                        b.columns.iter().map(|c| c.take(&left_idx)).collect();
                    columns.extend(right.columns.iter().cloned());
                    Batch {
                        columns,
                        len: right.len,
                    }
                };
                match &mut out {
                    Some(o) => o.extend(&pairs),
                    None => out = Some(pairs),
                }
            }
            if let Some(o) = out {
                if o.len > 0 {
                    return Ok(Some(o));
                }
            }
        }
        Ok(None)
    }
}
