//! Hash aggregation, DISTINCT and INTERSECT/EXCEPT.
//!
//! [`AggregateOp`] reads its whole input, grouping rows in a `hashbrown`
//! table keyed by the group values (a one-column key is kept as a single
//! [`Value`], so the common `GROUP BY bid` allocates nothing per row), with
//! one accumulator per aggregate per group, then emits the groups in
//! batches. The key buffer is reused between rows; only a new group clones
//! its key; a single text key is numbered through a [`StrSet`] instead, so
//! a repeated key allocates nothing. Without GROUP BY there is exactly one group, even over no rows
//! (`count(*)` of an empty table is 0), as SQL requires. Integer shapes take
//! the typed path of [`super::fastagg`] instead.

use std::collections::HashSet;

use hashbrown::HashMap;

use super::expr::{truth_mask, Expr};
use super::fastagg::{self, FastAgg};
use super::strset::StrSet;
use super::vector::{Batch, Data, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::plan::AggCall;
use crate::types::agg::{Accumulator, AggFunc};
use crate::types::{DataType, Value};

/// Per-group state: one accumulator per aggregate, and the values already
/// seen by each DISTINCT aggregate.
struct Group {
    accs: Vec<Accumulator>,
    seen: Vec<Option<HashSet<Value>>>,
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
            seen.push(a.distinct.then(HashSet::new));
        }
        Ok(Group { accs, seen })
    }

    fn consume(&mut self, mut input: Box<dyn Operator + 'a>) -> Result<()> {
        let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
        let mut key: Vec<Value> = Vec::with_capacity(self.group.len());
        let mut groups: Vec<(Vec<Value>, Group)> = Vec::new();
        if self.group.is_empty() {
            groups.push((Vec::new(), self.new_group()?));
        }
        // One text key: numbered by a string set (bytes hashed, each key
        // stored once), no `Value` per row; `text_groups[id]` is its group.
        let mut text = match self.group {
            [g] if g.ty.is_string() => Some(StrSet::new(matches!(g.ty, DataType::Char(_)))),
            _ => None,
        };
        let mut text_groups: Vec<usize> = Vec::new();
        let mut null_group: Option<usize> = None;
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            let keys: Vec<_> = self
                .group
                .iter()
                .map(|e| e.eval(&b))
                .collect::<Result<_>>()?;
            let args: Vec<Option<_>> = self
                .aggs
                .iter()
                .map(|a| a.arg.as_ref().map(|e| e.eval(&b)).transpose())
                .collect::<Result<_>>()?;
            let masks: Vec<Option<Vec<bool>>> = self
                .aggs
                .iter()
                .map(|a| {
                    a.filter
                        .as_ref()
                        .map(|f| f.eval(&b).map(|v| truth_mask(&v)))
                        .transpose()
                })
                .collect::<Result<_>>()?;
            for row in 0..b.len {
                let g = if self.group.is_empty() {
                    0
                } else if let Some(set) = &mut text {
                    let slow;
                    let s = match &keys[0].data {
                        Data::Str(_) => keys[0].str_at(row),
                        _ => {
                            slow = keys[0].get(row);
                            slow.as_str()
                        }
                    };
                    match s {
                        Some(s) => {
                            let (id, new) = set.insert(s);
                            if new {
                                groups.push((vec![Value::text(s)], self.new_group()?));
                                text_groups.push(groups.len() - 1);
                            }
                            text_groups[id as usize]
                        }
                        None => match null_group {
                            Some(g) => g,
                            None => {
                                groups.push((vec![Value::Null], self.new_group()?));
                                null_group = Some(groups.len() - 1);
                                groups.len() - 1
                            }
                        },
                    }
                } else {
                    key.clear();
                    key.extend(keys.iter().map(|k| k.get(row)));
                    match index.get(&key) {
                        Some(&g) => g,
                        None => {
                            let g = groups.len();
                            groups.push((key.clone(), self.new_group()?));
                            index.insert(key.clone(), g);
                            g
                        }
                    }
                };
                let state = &mut groups[g].1;
                for (k, a) in self.aggs.iter().enumerate() {
                    if let Some(m) = &masks[k] {
                        if !m[row] {
                            continue;
                        }
                    }
                    match &args[k] {
                        None => state.accs[k].add_row(),
                        Some(col) => {
                            let v = col.get(row);
                            if let Some(seen) = &mut state.seen[k] {
                                if v.is_null() || !seen.insert(v.clone()) {
                                    continue;
                                }
                            }
                            if a.func == AggFunc::CountStar {
                                state.accs[k].add_row();
                            } else {
                                state.accs[k].add(&v)?;
                            }
                        }
                    }
                }
            }
        }
        self.out = groups
            .into_iter()
            .map(|(mut key, g)| {
                for acc in &g.accs {
                    key.push(acc.finish()?);
                }
                Ok(key)
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
                self.out = state.finish()?;
            } else {
                self.consume(input)?;
            }
        }
        Ok(emit_rows(&self.out, &mut self.emitted, &self.types))
    }
}

/// Removes duplicate rows, streaming: a row is emitted the first time it
/// is seen.
pub struct DistinctOp<'a> {
    input: Box<dyn Operator + 'a>,
    seen: HashSet<Vec<Value>>,
    ctx: &'a ExecContext,
}

impl<'a> DistinctOp<'a> {
    /// DISTINCT over `input`.
    pub fn new(input: Box<dyn Operator + 'a>, ctx: &'a ExecContext) -> DistinctOp<'a> {
        DistinctOp {
            input,
            seen: HashSet::new(),
            ctx,
        }
    }
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        while let Some(b) = self.input.next()? {
            self.ctx.check_cancel()?;
            let keep: Vec<bool> = (0..b.len).map(|i| self.seen.insert(b.row(i))).collect();
            let out = b.filter(&keep);
            if out.len > 0 {
                return Ok(Some(out));
            }
        }
        Ok(None)
    }
}

/// INTERSECT / EXCEPT [ALL].
pub struct SetOpOp<'a> {
    left: Box<dyn Operator + 'a>,
    right: Option<Box<dyn Operator + 'a>>,
    intersect: bool,
    all: bool,
    counts: HashMap<Vec<Value>, usize>,
    emitted: HashSet<Vec<Value>>,
    types: Vec<DataType>,
}

impl<'a> SetOpOp<'a> {
    /// `left INTERSECT|EXCEPT [ALL] right`.
    pub fn new(
        left: Box<dyn Operator + 'a>,
        right: Box<dyn Operator + 'a>,
        intersect: bool,
        all: bool,
        types: Vec<DataType>,
    ) -> SetOpOp<'a> {
        SetOpOp {
            left,
            right: Some(right),
            intersect,
            all,
            counts: HashMap::new(),
            emitted: HashSet::new(),
            types,
        }
    }
}

impl Operator for SetOpOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if let Some(mut right) = self.right.take() {
            while let Some(b) = right.next()? {
                for i in 0..b.len {
                    *self.counts.entry(b.row(i)).or_insert(0) += 1;
                }
            }
        }
        while let Some(b) = self.left.next()? {
            let mut cols: Vec<Vector> = self.types.iter().map(|t| Vector::new(*t)).collect();
            let mut len = 0;
            for i in 0..b.len {
                let row = b.row(i);
                let count = self.counts.get(&row).copied().unwrap_or(0);
                let emit = if self.all {
                    if self.intersect {
                        if count > 0 {
                            *self.counts.get_mut(&row).expect("counted") -= 1;
                            true
                        } else {
                            false
                        }
                    } else if count > 0 {
                        *self.counts.get_mut(&row).expect("counted") -= 1;
                        false
                    } else {
                        true
                    }
                } else {
                    let wanted = (count > 0) == self.intersect;
                    wanted && self.emitted.insert(row.clone())
                };
                if emit {
                    for (c, v) in row.iter().enumerate() {
                        cols[c].push(v);
                    }
                    len += 1;
                }
            }
            if len > 0 {
                return Ok(Some(Batch { columns: cols, len }));
            }
        }
        Ok(None)
    }
}
