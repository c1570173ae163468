//! Hash aggregation, DISTINCT and INTERSECT/EXCEPT.
//!
//! [`AggregateOp`] reads its whole input, grouping rows in a `hashbrown`
//! table keyed by the group values (a one-column key is kept as a single
//! [`Value`], so the common `GROUP BY bid` allocates nothing per row), with
//! one accumulator per aggregate per group, then emits the groups in
//! batches. The key buffer is reused between rows; only a new group clones
//! its key. Without GROUP BY there is exactly one group, even over no rows
//! (`count(*)` of an empty table is 0), as SQL requires.

use std::collections::HashSet;

use hashbrown::HashMap;

use super::expr::{truth_mask, Expr};
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
            if fast::eligible(self.group, self.aggs) {
                self.out = fast::aggregate(input, self.group, self.aggs, self.ctx)?;
            } else {
                self.consume(input)?;
            }
        }
        if self.emitted >= self.out.len() {
            return Ok(None);
        }
        let end = (self.emitted + BATCH_SIZE).min(self.out.len());
        let mut cols: Vec<Vector> = self.types.iter().map(|t| Vector::new(*t)).collect();
        for row in &self.out[self.emitted..end] {
            for (c, v) in row.iter().enumerate() {
                cols[c].push(v);
            }
        }
        let len = end - self.emitted;
        self.emitted = end;
        Ok(Some(Batch { columns: cols, len }))
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

/// The typed fast path of [`AggregateOp`]: at most one integer group key,
/// and only `count(*)`, `count(x)` and `sum(x)` of integers, without
/// DISTINCT or FILTER — PostgreSQL's benchmark shape (`select bid,
/// sum(abalance) ... group by bid`). Keys are `i64`s in a `hashbrown` map to
/// a group number, sums are `i128`s, and the loops read the column slices
/// directly: no `Value` is built per row.
mod fast {
    use hashbrown::HashMap;

    use super::super::expr::Expr;
    use super::super::vector::{Data, Vector};
    use super::super::{ExecContext, Operator};
    use crate::error::Result;
    use crate::plan::AggCall;
    use crate::types::agg::AggFunc;
    use crate::types::{DataType, Numeric, Value};

    fn int_type(t: &DataType) -> bool {
        matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8)
    }

    /// Whether the fast path applies.
    pub fn eligible(group: &[Expr], aggs: &[AggCall]) -> bool {
        group.len() <= 1
            && group.iter().all(|g| {
                matches!(
                    g.ty,
                    DataType::Int2
                        | DataType::Int4
                        | DataType::Int8
                        | DataType::Date
                        | DataType::Timestamp
                )
            })
            && aggs.iter().all(|a| {
                !a.distinct
                    && a.filter.is_none()
                    && match a.func {
                        AggFunc::CountStar | AggFunc::Count => true,
                        AggFunc::Sum => a.arg.as_ref().is_some_and(|e| int_type(&e.ty)),
                        _ => false,
                    }
            })
    }

    /// Row `i` of an integer-like column as `i64` (None when NULL).
    #[inline]
    fn int_at(v: &Vector, i: usize) -> Option<i64> {
        if v.is_null(i) {
            return None;
        }
        Some(match &v.data {
            Data::I16(x) => x[i] as i64,
            Data::I32(x) => x[i] as i64,
            Data::I64(x) => x[i],
            _ => return v.get(i).as_i64(),
        })
    }

    fn key_value(ty: &DataType, k: i64) -> Value {
        match ty {
            DataType::Int2 => Value::Int2(k as i16),
            DataType::Int4 => Value::Int4(k as i32),
            DataType::Date => Value::Date(k as i32),
            DataType::Timestamp => Value::Timestamp(k),
            _ => Value::Int8(k),
        }
    }

    /// Runs the aggregation; returns the output rows (key, then results).
    pub fn aggregate<'a>(
        mut input: Box<dyn Operator + 'a>,
        group: &[Expr],
        aggs: &[AggCall],
        ctx: &ExecContext,
    ) -> Result<Vec<Vec<Value>>> {
        let na = aggs.len();
        // Group g's state: counts[g * na + k], sums[g * na + k].
        let mut counts: Vec<i64> = Vec::new();
        let mut sums: Vec<i128> = Vec::new();
        let mut keys: Vec<Option<i64>> = Vec::new();
        let mut index: HashMap<i64, u32> = HashMap::new();
        let mut null_group: Option<u32> = None;
        let mut slot = Vec::new();
        if group.is_empty() {
            keys.push(None);
            counts.resize(na, 0);
            sums.resize(na, 0);
        }
        while let Some(b) = input.next()? {
            ctx.check_cancel()?;
            let key_col = match group.first() {
                Some(g) => Some(g.eval(&b)?),
                None => None,
            };
            let args: Vec<Option<_>> = aggs
                .iter()
                .map(|a| a.arg.as_ref().map(|e| e.eval(&b)).transpose())
                .collect::<Result<_>>()?;
            slot.clear();
            // Group numbers for the whole batch first.
            match &key_col {
                None => slot.resize(b.len, 0u32),
                Some(kc) => {
                    for i in 0..b.len {
                        let mut new_group = |k: Option<i64>| {
                            let g = keys.len() as u32;
                            keys.push(k);
                            counts.resize(counts.len() + na, 0);
                            sums.resize(sums.len() + na, 0);
                            g
                        };
                        let g = match int_at(kc, i) {
                            Some(k) => match index.get(&k) {
                                Some(&g) => g,
                                None => {
                                    let g = new_group(Some(k));
                                    index.insert(k, g);
                                    g
                                }
                            },
                            None => match null_group {
                                Some(g) => g,
                                None => {
                                    let g = new_group(None);
                                    null_group = Some(g);
                                    g
                                }
                            },
                        };
                        slot.push(g);
                    }
                }
            }
            for (k, a) in aggs.iter().enumerate() {
                match (&args[k], a.func) {
                    (None, _) | (Some(_), AggFunc::CountStar) => {
                        for &g in &slot {
                            counts[g as usize * na + k] += 1;
                        }
                    }
                    (Some(col), AggFunc::Count) => {
                        for (i, &g) in slot.iter().enumerate() {
                            if !col.is_null(i) {
                                counts[g as usize * na + k] += 1;
                            }
                        }
                    }
                    (Some(col), _) => {
                        // sum: the hot loop of `sum(abalance) group by bid`.
                        if let (Data::I32(x), None) = (&col.data, &col.nulls) {
                            for (&g, &v) in slot.iter().zip(x) {
                                let at = g as usize * na + k;
                                sums[at] += v as i128;
                                counts[at] += 1;
                            }
                        } else {
                            for (i, &g) in slot.iter().enumerate() {
                                if let Some(v) = int_at(col, i) {
                                    let at = g as usize * na + k;
                                    sums[at] += v as i128;
                                    counts[at] += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        let key_ty = group.first().map(|g| g.ty);
        let mut out = Vec::with_capacity(keys.len());
        for (g, key) in keys.iter().enumerate() {
            let mut row = Vec::with_capacity(group.len() + na);
            if let Some(ty) = &key_ty {
                row.push(key.map_or(Value::Null, |k| key_value(ty, k)));
            }
            for (k, a) in aggs.iter().enumerate() {
                let (n, s) = (counts[g * na + k], sums[g * na + k]);
                row.push(match a.func {
                    AggFunc::Sum if n == 0 => Value::Null,
                    AggFunc::Sum if a.ty == DataType::Int8 => Value::Int8(
                        i64::try_from(s).map_err(|_| crate::types::int::int8_out_of_range())?,
                    ),
                    AggFunc::Sum => Value::numeric(Numeric::from_i128(s)),
                    _ => Value::Int8(n),
                });
            }
            out.push(row);
        }
        Ok(out)
    }
}
