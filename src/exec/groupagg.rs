//! Sorted grouping: PostgreSQL's `GroupAggregate`.
//!
//! The input arrives sorted on the group keys, so the rows of a group are
//! adjacent. [`GroupAggregateOp`] cuts the input into chunks of whole
//! groups — at the first change of key once a chunk holds a batch's worth
//! of rows — and folds each chunk with the hash aggregation
//! ([`super::agg::AggregateOp`]), so every aggregate behaves exactly as on
//! the hashed path; the chunk's groups are then put back into the input's
//! order. Memory holds one chunk's groups, never the whole input: the
//! chunk streams through the aggregation, and a single large group is one
//! chunk of one group.
//!
//! Invariant: a chunk ends only where the key changes under the sort's
//! equality (NULLs equal to each other), which is never finer than the
//! hashed grouping's, so no group is split between two chunks.

use super::agg::{emit_rows, AggregateOp};
use super::expr::Expr;
use super::vector::{Batch, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::err;
use crate::error::Result;
use crate::nodes::{AggCall, SortKey};
use crate::types::{compare_typed, DataType, Value};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::rc::Rc;

/// The sorted input, shared by the chunks read from it in turn.
struct Source<'a> {
    input: Box<dyn Operator + 'a>,
    /// Rows read past the end of the last chunk.
    pending: Option<Batch>,
    /// The input is exhausted.
    done: bool,
    /// The group key columns.
    keys: Vec<usize>,
}

impl Source<'_> {
    fn next_batch(&mut self) -> Result<Option<Batch>> {
        if let Some(b) = self.pending.take() {
            return Ok(Some(b));
        }
        if self.done {
            return Ok(None);
        }
        let b = self.input.next()?;
        if b.is_none() {
            self.done = true;
        }
        Ok(b)
    }

    fn exhausted(&self) -> bool {
        self.done && self.pending.is_none()
    }
}

/// One chunk of whole groups, read from the shared source.
struct Chunk<'a> {
    source: Rc<RefCell<Source<'a>>>,
    /// Rows returned so far.
    taken: usize,
    /// The key of the last row returned.
    last: Option<Vec<Value>>,
    /// The chunk has ended (the rest is left in the source).
    closed: bool,
}

fn row_key(b: &Batch, columns: &[usize], i: usize) -> Vec<Value> {
    columns.iter().map(|&c| b.columns[c].get(i)).collect()
}

/// Whether row `i` of `b` equals `key` on `columns` under the sort's
/// equality (NULLs equal to each other).
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

impl Operator for Chunk<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.closed {
            return Ok(None);
        }
        let mut src = self.source.borrow_mut();
        let Some(b) = src.next_batch()? else {
            self.closed = true;
            return Ok(None);
        };
        if b.len == 0 {
            return Ok(Some(b));
        }
        // The first row at or past the chunk's size whose key differs
        // from the row before it ends the chunk.
        let start = BATCH_SIZE.saturating_sub(self.taken);
        let mut cut = None;
        for i in start..b.len {
            let differs = if i == 0 {
                match &self.last {
                    Some(k) => !same_key(&b, &src.keys, 0, k),
                    None => false,
                }
            } else {
                let prev = row_key(&b, &src.keys, i - 1);
                !same_key(&b, &src.keys, i, &prev)
            };
            if differs {
                cut = Some(i);
                break;
            }
        }
        match cut {
            Some(i) => {
                self.closed = true;
                src.pending = Some(b.slice(i, b.len));
                if i == 0 {
                    return Ok(None);
                }
                self.taken += i;
                Ok(Some(b.slice(0, i)))
            }
            None => {
                self.last = Some(row_key(&b, &src.keys, b.len - 1));
                self.taken += b.len;
                Ok(Some(b))
            }
        }
    }
}

/// Groups a sorted input one chunk of whole groups at a time (see the
/// module doc).
pub struct GroupAggregateOp<'a> {
    source: Rc<RefCell<Source<'a>>>,
    group: &'a [Expr],
    aggs: &'a [AggCall],
    order: &'a [SortKey],
    types: Vec<DataType>,
    ctx: &'a ExecContext,
    /// The current chunk's groups, in the input's order.
    out: Vec<Vec<Value>>,
    emitted: usize,
}

impl<'a> GroupAggregateOp<'a> {
    /// Groups `input` (sorted on `group` as `order` says) by `group`, whose
    /// expressions are input columns.
    pub fn new(
        input: Box<dyn Operator + 'a>,
        group: &'a [Expr],
        aggs: &'a [AggCall],
        order: &'a [SortKey],
        types: Vec<DataType>,
        ctx: &'a ExecContext,
    ) -> Result<GroupAggregateOp<'a>> {
        let keys = group
            .iter()
            .map(|g| match g.kind {
                crate::nodes::expr::ExprKind::Column(c) => Ok(c),
                _ => Err(err!(InternalError, "a sorted group key is not a column")),
            })
            .collect::<Result<Vec<usize>>>()?;
        Ok(GroupAggregateOp {
            source: Rc::new(RefCell::new(Source {
                input,
                pending: None,
                done: false,
                keys,
            })),
            group,
            aggs,
            order,
            types,
            ctx,
            out: Vec::new(),
            emitted: 0,
        })
    }

    /// Aggregates the next chunk into `out`, in the input's order.
    fn next_chunk(&mut self) -> Result<()> {
        let chunk = Chunk {
            source: Rc::clone(&self.source),
            taken: 0,
            last: None,
            closed: false,
        };
        let mut agg = AggregateOp::new(
            Box::new(chunk),
            self.group,
            self.aggs,
            self.types.clone(),
            self.ctx,
        );
        self.out.clear();
        self.emitted = 0;
        while let Some(b) = agg.next()? {
            for i in 0..b.len {
                self.out
                    .push(b.columns.iter().map(|c| c.get(i)).collect::<Vec<_>>());
            }
        }
        let (order, types) = (self.order, &self.types);
        self.out.sort_by(|x, y| cmp_groups(order, types, x, y));
        Ok(())
    }
}

/// The order of two output rows on their group keys, as the input's sort.
fn cmp_groups(order: &[SortKey], types: &[DataType], x: &[Value], y: &[Value]) -> Ordering {
    for k in order {
        let (a, b) = (&x[k.column], &y[k.column]);
        let c = match (a.is_null(), b.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) if k.nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if k.nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                let c = compare_typed(a, b, &types[k.column]);
                if k.descending {
                    c.reverse()
                } else {
                    c
                }
            }
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

impl Operator for GroupAggregateOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(b) = emit_rows(&self.out, &mut self.emitted, &self.types) {
                return Ok(Some(b));
            }
            if self.source.borrow().exhausted() {
                return Ok(None);
            }
            self.next_chunk()?;
        }
    }
}
