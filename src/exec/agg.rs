//! Hash aggregation, DISTINCT and INTERSECT/EXCEPT.
//!
//! [`AggregateOp`] reads its whole input, numbering the distinct group keys
//! in a [`KeySet`] (the keys stored column by column, a repeated key found
//! by hashing and comparing the batch's own slots — text as bytes of the
//! string vector — so a row allocates nothing), with one accumulator per
//! aggregate per group, then emits the groups in batches. Aggregates run
//! column by column over a batch's group ids; a text argument is read in
//! place (`min`/`max` keep their best string in a reused buffer, and
//! `count(DISTINCT x)` numbers the values of each group in a [`KeySet`] of
//! its own). Without GROUP BY there is exactly one group, even over no rows
//! (`count(*)` of an empty table is 0), as SQL requires. Integer shapes take
//! the typed path of [`super::fastagg`] instead.
//!
//! [`DistinctOp`] and [`SetOpOp`] key their rows the same way.

use super::expr::{truth_mask, Expr};
use super::fastagg::{self, FastAgg};
use super::keyset::KeySet;
use super::vector::{Batch, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::plan::AggCall;
use crate::types::agg::{Accumulator, AggFunc};
use crate::types::{DataType, Value};

/// Per-group state: one accumulator per aggregate, and the values already
/// seen by each DISTINCT aggregate.
struct Group {
    accs: Vec<Accumulator>,
    seen: Vec<Option<KeySet>>,
}

/// GROUP BY and aggregates.
pub struct AggregateOp<'a> {
    input: Option<Box<dyn Operator + 'a>>,
    group: &'a [Expr],
    aggs: &'a [AggCall],
    types: Vec<DataType>,
    ctx: &'a ExecContext,
    /// The finished groups: keys then aggregate results, in first-seen
    /// order.
    out: Vec<Vec<Value>>,
    emitted: usize,
}

/// Output rows `emitted..` of `out` (up to a batch) as a batch of `types`;
/// advances `emitted`. `None` once all are out.
pub fn emit_rows(out: &[Vec<Value>], emitted: &mut usize, types: &[DataType]) -> Option<Batch> {
    if *emitted >= out.len() {
        return None;
    }
    let end = (*emitted + BATCH_SIZE).min(out.len());
    let mut cols: Vec<Vector> = types.iter().map(|t| Vector::new(*t)).collect();
    for row in &out[*emitted..end] {
        for (c, v) in row.iter().enumerate() {
            cols[c].push(v);
        }
    }
    let len = end - *emitted;
    *emitted = end;
    Some(Batch { columns: cols, len })
}

impl<'a> AggregateOp<'a> {
    /// Aggregates `input` by `group`.
    pub fn new(
        input: Box<dyn Operator + 'a>,
        group: &'a [Expr],
        aggs: &'a [AggCall],
        types: Vec<DataType>,
        ctx: &'a ExecContext,
    ) -> AggregateOp<'a> {
        AggregateOp {
            input: Some(input),
            group,
            aggs,
            types,
            ctx,
            out: Vec::new(),
            emitted: 0,
        }
    }

    fn new_group(&self) -> Result<Group> {
        let mut accs = Vec::with_capacity(self.aggs.len());
        let mut seen = Vec::with_capacity(self.aggs.len());
        for a in self.aggs {
            let input_ty = a.arg.as_ref().map_or(DataType::Int8, |e| e.ty);
            accs.push(Accumulator::new(a.func, &input_ty)?);
            seen.push(a.distinct.then(|| KeySet::new(&[input_ty])));
        }
        Ok(Group { accs, seen })
    }

    fn consume(&mut self, mut input: Box<dyn Operator + 'a>) -> Result<()> {
        // The group keys, numbered in first-seen order: group `id` is key
        // `id` of the set, so a repeated key (the common case) finds its
        // group by hashing the batch's own slots, with no `Value` per row.
        let key_types: Vec<DataType> = self.group.iter().map(|e| e.ty).collect();
        let mut index = KeySet::new(&key_types);
        let mut groups: Vec<Group> = Vec::new();
        if self.group.is_empty() {
            groups.push(self.new_group()?);
        }
        // The group of each row of the batch (reused between batches).
        let mut gids: Vec<u32> = Vec::with_capacity(BATCH_SIZE);
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            let keys: Vec<_> = self
                .group
                .iter()
                .map(|e| e.eval(&b))
                .collect::<Result<_>>()?;
            let key_cols: Vec<&Vector> = keys.iter().map(|k| &**k).collect();
            gids.clear();
            if self.group.is_empty() {
                gids.resize(b.len, 0);
            } else {
                for row in 0..b.len {
                    let (id, new) = index.insert(&key_cols, row);
                    if new {
                        groups.push(self.new_group()?);
                    }
                    gids.push(id);
                }
            }
            for (k, a) in self.aggs.iter().enumerate() {
                let mask = a
                    .filter
                    .as_ref()
                    .map(|f| f.eval(&b).map(|v| truth_mask(&v)))
                    .transpose()?;
                let skip = |row: usize| mask.as_ref().is_some_and(|m| !m[row]);
                let Some(arg) = &a.arg else {
                    for (row, &g) in gids.iter().enumerate() {
                        if !skip(row) {
                            groups[g as usize].accs[k].add_row();
                        }
                    }
                    continue;
                };
                // FILTER first: the argument runs only on the rows it keeps.
                let col = arg.eval_where(&b, mask.as_deref())?;
                for (row, &g) in gids.iter().enumerate() {
                    if skip(row) {
                        continue;
                    }
                    let state = &mut groups[g as usize];
                    let null = col.is_null(row);
                    if let Some(seen) = &mut state.seen[k] {
                        if null || !seen.insert(&[&col], row).1 {
                            continue;
                        }
                    }
                    if a.func == AggFunc::CountStar {
                        state.accs[k].add_row();
                    } else if null {
                        continue;
                    } else if let Some(s) = col.str_at(row) {
                        // Text read in place: `min`/`max` keep their best
                        // value in a reused buffer.
                        state.accs[k].add_str(s)?;
                    } else {
                        state.accs[k].add(&col.get(row))?;
                    }
                }
            }
        }
        self.out = groups
            .into_iter()
            .enumerate()
            .map(|(id, g)| {
                let mut row: Vec<Value> = index.keys().iter().map(|k| k.get(id)).collect();
                for acc in &g.accs {
                    row.push(acc.finish()?);
                }
                Ok(row)
            })
            .collect::<Result<_>>()?;
        Ok(())
    }
}

impl Operator for AggregateOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if let Some(input) = self.input.take() {
            if fastagg::eligible(self.group, self.aggs) {
                let mut input = input;
                let mut state = FastAgg::new(self.group, self.aggs);
                while let Some(b) = input.next()? {
                    self.ctx.check_cancel()?;
                    state.consume(&b)?;
                }
                if let Some(p) = input.page_partial() {
                    state.add_partial(&p);
                }
                self.out = state.finish()?;
            } else {
                self.consume(input)?;
            }
        }
        Ok(emit_rows(&self.out, &mut self.emitted, &self.types))
    }
}

/// Removes duplicate rows, streaming: a row is emitted the first time it
/// is seen. The rows seen are a [`KeySet`] over all columns, so a
/// duplicate is found from the batch's own slots (no `Value` per row).
pub struct DistinctOp<'a> {
    input: Box<dyn Operator + 'a>,
    /// Created from the first batch's column types.
    seen: Option<KeySet>,
    ctx: &'a ExecContext,
}

impl<'a> DistinctOp<'a> {
    /// DISTINCT over `input`.
    pub fn new(input: Box<dyn Operator + 'a>, ctx: &'a ExecContext) -> DistinctOp<'a> {
        DistinctOp {
            input,
            seen: None,
            ctx,
        }
    }
}

/// A batch's columns as the slices a [`KeySet`] reads.
fn columns(b: &Batch) -> Vec<&Vector> {
    b.columns.iter().collect()
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.input.next()? {
            self.ctx.check_cancel()?;
            let cols = columns(&b);
            let seen = self
                .seen
                .get_or_insert_with(|| KeySet::new(&cols.iter().map(|c| c.ty).collect::<Vec<_>>()));
            let keep: Vec<bool> = (0..b.len).map(|i| seen.insert(&cols, i).1).collect();
            let out = b.filter(&keep);
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
        Ok(None)
    }
}

/// INTERSECT / EXCEPT [ALL]: the right input's rows are counted per
/// distinct row of a [`KeySet`], then the left input streams against the
/// counts; output rows are gathered from the left batches.
pub struct SetOpOp<'a> {
    left: Box<dyn Operator + 'a>,
    right: Option<Box<dyn Operator + 'a>>,
    intersect: bool,
    all: bool,
    /// The distinct rows of both inputs (left rows enter as they come).
    rows: KeySet,
    /// Per distinct row: how many right rows are left to match.
    counts: Vec<usize>,
    /// Per distinct row: already emitted (the non-ALL forms).
    emitted: Vec<bool>,
    types: Vec<DataType>,
    ctx: &'a ExecContext,
}

impl<'a> SetOpOp<'a> {
    /// `left INTERSECT|EXCEPT [ALL] right`.
    pub fn new(
        left: Box<dyn Operator + 'a>,
        right: Box<dyn Operator + 'a>,
        intersect: bool,
        all: bool,
        types: Vec<DataType>,
        ctx: &'a ExecContext,
    ) -> SetOpOp<'a> {
        SetOpOp {
            left,
            right: Some(right),
            intersect,
            all,
            rows: KeySet::new(&types),
            counts: Vec::new(),
            emitted: Vec::new(),
            types,
            ctx,
        }
    }

    /// The id of row `i` of `cols`, entered when new.
    fn id(&mut self, cols: &[&Vector], i: usize) -> usize {
        let (id, new) = self.rows.insert(cols, i);
        if new {
            self.counts.push(0);
            self.emitted.push(false);
        }
        id as usize
    }
}

impl Operator for SetOpOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if let Some(mut right) = self.right.take() {
            while let Some(b) = right.next()? {
                self.ctx.check_cancel()?;
                let cols = columns(&b);
                for i in 0..b.len {
                    let id = self.id(&cols, i);
                    self.counts[id] += 1;
                }
            }
        }
        while let Some(b) = self.left.next()? {
            self.ctx.check_cancel()?;
            let cols = columns(&b);
            let mut keep = Vec::with_capacity(b.len);
            for i in 0..b.len {
                let id = self.id(&cols, i);
                let count = &mut self.counts[id];
                let emit = if self.all {
                    // INTERSECT ALL: min(left, right) copies; EXCEPT ALL:
                    // max(left - right, 0).
                    let matched = *count > 0;
                    if matched {
                        *count -= 1;
                    }
                    matched == self.intersect
                } else {
                    let wanted = (*count > 0) == self.intersect;
                    wanted && !std::mem::replace(&mut self.emitted[id], true)
                };
                if emit {
                    keep.push(i as u32);
                }
            }
            if !keep.is_empty() {
                let mut out = b.take(&keep);
                for (c, ty) in out.columns.iter_mut().zip(&self.types) {
                    c.ty = *ty;
                }
                return Ok(Some(out));
            }
        }
        Ok(None)
    }
}
