//! WindowAgg: window functions over sorted input (PostgreSQL's
//! `nodeWindowAgg.c`).
//!
//! The input arrives sorted on the window's partition keys, then its order
//! keys (a Sort below, which spills past `work_mem`). The operator buffers
//! one partition at a time, computes every call's value for each of its
//! rows, and returns the rows with those values appended. Rows equal on all
//! order keys are peers; without ORDER BY every row of a partition is a
//! peer of every other.
//!
//! Frames follow PostgreSQL: ROWS counts rows, GROUPS counts peer groups,
//! RANGE compares the single order key's value with the current row's
//! plus or minus the offset (NULL keys are peers of each other only). An
//! aggregate whose frame starts at the partition's first row and excludes
//! nothing runs incrementally: the frame end never moves back, so each
//! row adds only the rows that entered the frame (no O(n²) on the default
//! frame); other frames are recomputed per row, and a row whose frame
//! equals the previous row's reuses its value.

use std::cmp::Ordering;

use super::agg::emit_rows;
use super::vector::Batch;
use super::{ExecContext, Operator};
use crate::err;
use crate::error::Result;
use crate::nodes::window::{
    Frame, FrameBound, FrameExclude, FrameUnits, WindowCall, WindowClause, WindowFunc,
};
use crate::nodes::SortKey;
use crate::types::agg::{Accumulator, AggFunc};
use crate::types::compare::float_cmp;
use crate::types::ops::{eval_binary, BinaryOp};
use crate::types::{compare_typed, DataType, Value};

/// Runs a [`crate::nodes::Node::WindowAgg`].
pub struct WindowAggOp<'a> {
    input: Box<dyn Operator + 'a>,
    window: &'a WindowClause,
    in_types: Vec<DataType>,
    types: Vec<DataType>,
    ctx: &'a ExecContext,
    /// The rows of the partition being read.
    part: Vec<Vec<Value>>,
    /// Finished rows not yet returned.
    out: Vec<Vec<Value>>,
    emitted: usize,
    done: bool,
}

impl<'a> WindowAggOp<'a> {
    /// The operator over `input` (whose column types are `in_types`);
    /// `types` are the output's.
    pub fn new(
        input: Box<dyn Operator + 'a>,
        window: &'a WindowClause,
        in_types: Vec<DataType>,
        types: Vec<DataType>,
        ctx: &'a ExecContext,
    ) -> WindowAggOp<'a> {
        WindowAggOp {
            input,
            window,
            in_types,
            types,
            ctx,
            part: Vec::new(),
            out: Vec::new(),
            emitted: 0,
            done: false,
        }
    }

    /// Whether `row` starts a new partition after the buffered ones.
    fn new_partition(&self, row: &[Value]) -> bool {
        let Some(last) = self.part.last() else {
            return false;
        };
        self.window
            .partition
            .iter()
            .any(|&c| !same(&last[c], &row[c], &self.in_types[c]))
    }

    /// Computes the buffered partition into `out`.
    fn finish_partition(&mut self) -> Result<()> {
        let rows = std::mem::take(&mut self.part);
        if rows.is_empty() {
            return Ok(());
        }
        let p = Partition::new(rows, self.window, &self.in_types);
        let results = self
            .window
            .calls
            .iter()
            .map(|c| p.compute(c, &self.in_types))
            .collect::<Result<Vec<_>>>()?;
        let mut rows = p.rows;
        for (i, row) in rows.iter_mut().enumerate() {
            row.extend(results.iter().map(|r| r[i].clone()));
        }
        self.out.extend(rows);
        Ok(())
    }
}

impl Operator for WindowAggOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(b) = emit_rows(&self.out, &mut self.emitted, &self.types) {
                return Ok(Some(b));
            }
            self.out.clear();
            self.emitted = 0;
            if self.done {
                return Ok(None);
            }
            self.ctx.check_cancel()?;
            match self.input.next()? {
                Some(b) => {
                    for i in 0..b.len {
                        let row = b.row(i);
                        if self.new_partition(&row) {
                            self.finish_partition()?;
                        }
                        self.part.push(row);
                    }
                }
                None => {
                    self.finish_partition()?;
                    self.done = true;
                }
            }
        }
    }
}

/// Whether two key values are equal (NULLs equal each other).
fn same(a: &Value, b: &Value, ty: &DataType) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => compare_typed(a, b, ty) == Ordering::Equal,
        _ => false,
    }
}

/// One partition's rows and their peer groups.
struct Partition<'w> {
    rows: Vec<Vec<Value>>,
    window: &'w WindowClause,
    /// The peer group of each row.
    group: Vec<usize>,
    /// Each peer group's first row and the row after its last.
    groups: Vec<(usize, usize)>,
}

impl<'w> Partition<'w> {
    fn new(rows: Vec<Vec<Value>>, window: &'w WindowClause, types: &[DataType]) -> Partition<'w> {
        let mut group = Vec::with_capacity(rows.len());
        let mut groups: Vec<(usize, usize)> = Vec::new();
        for i in 0..rows.len() {
            let peer = i > 0
                && window
                    .order
                    .iter()
                    .all(|k| same(&rows[i - 1][k.column], &rows[i][k.column], &types[k.column]));
            if !peer {
                groups.push((i, i));
            }
            let g = groups.len() - 1;
            groups[g].1 = i + 1;
            group.push(g);
        }
        Partition {
            rows,
            window,
            group,
            groups,
        }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    /// The values of `call` for every row.
    fn compute(&self, call: &WindowCall, types: &[DataType]) -> Result<Vec<Value>> {
        let n = self.len();
        let arg = |i: usize, k: usize| -> &Value { &self.rows[i][call.args[k]] };
        Ok(match call.func {
            WindowFunc::RowNumber => (0..n).map(|i| Value::Int8(i as i64 + 1)).collect(),
            WindowFunc::Rank => (0..n)
                .map(|i| Value::Int8(self.groups[self.group[i]].0 as i64 + 1))
                .collect(),
            WindowFunc::DenseRank => (0..n)
                .map(|i| Value::Int8(self.group[i] as i64 + 1))
                .collect(),
            WindowFunc::PercentRank => (0..n)
                .map(|i| {
                    let rank = self.groups[self.group[i]].0 as f64;
                    Value::Float8(if n > 1 { rank / (n - 1) as f64 } else { 0.0 })
                })
                .collect(),
            WindowFunc::CumeDist => (0..n)
                .map(|i| Value::Float8(self.groups[self.group[i]].1 as f64 / n as f64))
                .collect(),
            WindowFunc::Ntile => ntile(n, arg(0, 0))?,
            WindowFunc::Lag | WindowFunc::Lead => (0..n)
                .map(|i| self.shifted(call, i))
                .collect::<Result<_>>()?,
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
                let frames = self.frames(types)?;
                (0..n)
                    .map(|i| self.frame_value(call, i, frames[i]))
                    .collect::<Result<_>>()?
            }
            WindowFunc::Agg(func) => self.aggregate(call, func, types)?,
        })
    }

    /// lag / lead at row `i`.
    fn shifted(&self, call: &WindowCall, i: usize) -> Result<Value> {
        let offset = match call.args.get(1) {
            None => 1,
            Some(&c) => match &self.rows[i][c] {
                Value::Null => return Ok(Value::Null),
                v => v.as_i64().unwrap_or(1),
            },
        };
        let offset = if call.func == WindowFunc::Lag {
            -offset
        } else {
            offset
        };
        let target = i as i64 + offset;
        if target >= 0 && (target as usize) < self.len() {
            Ok(self.rows[target as usize][call.args[0]].clone())
        } else {
            Ok(call
                .args
                .get(2)
                .map_or(Value::Null, |&c| self.rows[i][c].clone()))
        }
    }

    /// Whether row `j` is excluded from row `i`'s frame.
    fn excluded(&self, i: usize, j: usize) -> bool {
        match self.window.frame.exclude {
            FrameExclude::NoOthers => false,
            FrameExclude::CurrentRow => i == j,
            FrameExclude::Group => self.group[i] == self.group[j],
            FrameExclude::Ties => i != j && self.group[i] == self.group[j],
        }
    }

    /// first_value / last_value / nth_value at row `i`, whose frame is
    /// `frame`.
    fn frame_value(&self, call: &WindowCall, i: usize, frame: (usize, usize)) -> Result<Value> {
        let mut rows = (frame.0..frame.1).filter(|&j| !self.excluded(i, j));
        let pick = match call.func {
            WindowFunc::FirstValue => rows.next(),
            WindowFunc::LastValue => rows.next_back(),
            _ => {
                let nth = match &self.rows[i][call.args[1]] {
                    Value::Null => return Ok(Value::Null),
                    v => v.as_i64().unwrap_or(0),
                };
                if nth <= 0 {
                    return Err(err!(
                        InvalidArgumentForNthValueFunction,
                        "argument of nth_value must be greater than zero"
                    ));
                }
                rows.nth(nth as usize - 1)
            }
        };
        Ok(pick.map_or(Value::Null, |j| self.rows[j][call.args[0]].clone()))
    }

    /// An aggregate over each row's frame.
    fn aggregate(
        &self,
        call: &WindowCall,
        func: AggFunc,
        types: &[DataType],
    ) -> Result<Vec<Value>> {
        let n = self.len();
        let input = call.args.first().map_or(DataType::Int8, |&c| types[c]);
        let frames = self.frames(types)?;
        let mut out = Vec::with_capacity(n);
        let frame = &self.window.frame;
        if matches!(frame.start, FrameBound::UnboundedPreceding)
            && frame.exclude == FrameExclude::NoOthers
        {
            let mut acc = Accumulator::new(func, &input)?;
            let mut added = 0;
            for &(_, end) in &frames {
                while added < end {
                    self.feed(call, func, &mut acc, added)?;
                    added += 1;
                }
                out.push(acc.finish()?);
            }
            return Ok(out);
        }
        let mut last: Option<((usize, usize), Value)> = None;
        for (i, &f) in frames.iter().enumerate() {
            if frame.exclude == FrameExclude::NoOthers {
                if let Some((prev, v)) = &last {
                    if *prev == f {
                        out.push(v.clone());
                        continue;
                    }
                }
            }
            let mut acc = Accumulator::new(func, &input)?;
            for j in f.0..f.1 {
                if !self.excluded(i, j) {
                    self.feed(call, func, &mut acc, j)?;
                }
            }
            let v = acc.finish()?;
            last = Some((f, v.clone()));
            out.push(v);
        }
        Ok(out)
    }

    /// Adds row `j` to an aggregate's accumulator: FILTER first, then the
    /// aggregate's rule for NULL arguments (as the grouped aggregate's).
    fn feed(
        &self,
        call: &WindowCall,
        func: AggFunc,
        acc: &mut Accumulator,
        j: usize,
    ) -> Result<()> {
        let row = &self.rows[j];
        if let Some(f) = call.filter {
            if !matches!(row[f], Value::Bool(true)) {
                return Ok(());
            }
        }
        match call.args.as_slice() {
            [] => {
                acc.add_row();
                Ok(())
            }
            [a] => acc.add(&row[*a]),
            [a, b, ..] => {
                let (x, y) = (&row[*a], &row[*b]);
                let skip = match func {
                    AggFunc::ArrayAgg => false,
                    AggFunc::StringAgg => x.is_null(),
                    _ => x.is_null() || y.is_null(),
                };
                if skip {
                    Ok(())
                } else {
                    acc.add2(x, y)
                }
            }
        }
    }

    /// Every row's frame, as a range of rows (before exclusion).
    fn frames(&self, types: &[DataType]) -> Result<Vec<(usize, usize)>> {
        let frame = &self.window.frame;
        let range_key = match (frame.units, self.window.order.first()) {
            (FrameUnits::Range, Some(k)) if has_offset(frame) => {
                Some(RangeKey::new(self, k, types[k.column]))
            }
            _ => None,
        };
        (0..self.len())
            .map(|i| {
                let start = self.bound(&frame.start, i, true, range_key.as_ref())?;
                let end = self.bound(&frame.end, i, false, range_key.as_ref())?;
                Ok((start, end.max(start)))
            })
            .collect()
    }

    /// Where a frame bound puts the frame's start (`start`) or the row
    /// after its end, for row `i`.
    fn bound(
        &self,
        b: &FrameBound,
        i: usize,
        start: bool,
        key: Option<&RangeKey>,
    ) -> Result<usize> {
        let n = self.len();
        let (gs, ge) = self.groups[self.group[i]];
        let units = self.window.frame.units;
        Ok(match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::UnboundedFollowing => n,
            FrameBound::CurrentRow => match (units, start) {
                (FrameUnits::Rows, true) => i,
                (FrameUnits::Rows, false) => i + 1,
                (_, true) => gs,
                (_, false) => ge,
            },
            FrameBound::Preceding(off) | FrameBound::Following(off) => {
                let following = matches!(b, FrameBound::Following(_));
                match units {
                    FrameUnits::Rows => {
                        let k = off.as_i64().unwrap_or(0);
                        let pos = if following {
                            (i as i64).saturating_add(k)
                        } else {
                            (i as i64).saturating_sub(k)
                        };
                        let pos = if start { pos } else { pos.saturating_add(1) };
                        pos.clamp(0, n as i64) as usize
                    }
                    FrameUnits::Groups => {
                        let k = off.as_i64().unwrap_or(0);
                        let g = if following {
                            (self.group[i] as i64).saturating_add(k)
                        } else {
                            (self.group[i] as i64).saturating_sub(k)
                        };
                        if g < 0 {
                            0
                        } else if g as usize >= self.groups.len() {
                            n
                        } else if start {
                            self.groups[g as usize].0
                        } else {
                            self.groups[g as usize].1
                        }
                    }
                    FrameUnits::Range => match key {
                        Some(key) => key.bound(i, off, following, start, (gs, ge))?,
                        None => {
                            if start {
                                gs
                            } else {
                                ge
                            }
                        }
                    },
                }
            }
        })
    }
}

/// Whether a frame has an offset bound.
fn has_offset(f: &Frame) -> bool {
    [&f.start, &f.end]
        .iter()
        .any(|b| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_)))
}

/// ntile(buckets) over `n` rows: PostgreSQL's bucket sizes (the first
/// `n % buckets` buckets one row larger); the argument is read at the
/// partition's first row.
fn ntile(n: usize, buckets: &Value) -> Result<Vec<Value>> {
    let buckets = match buckets {
        Value::Null => return Ok(vec![Value::Null; n]),
        v => v.as_i64().unwrap_or(0),
    };
    if buckets <= 0 {
        return Err(err!(
            InvalidArgumentForNtileFunction,
            "argument of ntile must be greater than zero"
        ));
    }
    let total = n as i64;
    let mut boundary = total / buckets;
    let mut remainder = 0;
    if boundary <= 0 {
        boundary = 1;
    } else {
        remainder = total % buckets;
        if remainder != 0 {
            boundary += 1;
        }
    }
    let (mut tile, mut in_bucket) = (1i64, 0i64);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        in_bucket += 1;
        if boundary < in_bucket {
            if remainder != 0 && tile == remainder {
                remainder = 0;
                boundary -= 1;
            }
            tile += 1;
            in_bucket = 1;
        }
        out.push(Value::Int4(tile as i32));
    }
    Ok(out)
}

/// A RANGE frame's order key, compared in a form where `key ± offset`
/// is exact: integers widened, floats as `f64`, dates as timestamps.
enum Key {
    Int(i128),
    Float(f64),
    Other(Value),
}

fn key_cmp(a: &Key, b: &Key) -> Ordering {
    match (a, b) {
        (Key::Int(x), Key::Int(y)) => x.cmp(y),
        (Key::Float(x), Key::Float(y)) => float_cmp(*x, *y),
        (Key::Other(x), Key::Other(y)) => compare_typed(x, y, &DataType::Text),
        _ => Ordering::Equal,
    }
}

fn to_key(v: &Value) -> Key {
    match v {
        Value::Int2(x) => Key::Int(i128::from(*x)),
        Value::Int4(x) => Key::Int(i128::from(*x)),
        Value::Int8(x) => Key::Int(i128::from(*x)),
        Value::Float4(x) => Key::Float(f64::from(*x)),
        Value::Float8(x) => Key::Float(*x),
        Value::Date(d) => Key::Other(match *d {
            i32::MIN => Value::Timestamp(i64::MIN),
            i32::MAX => Value::Timestamp(i64::MAX),
            d => Value::Timestamp(i64::from(d) * 86_400_000_000),
        }),
        v => Key::Other(v.clone()),
    }
}

/// Whether a key is NaN (float or numeric).
fn key_nan(k: &Key) -> bool {
    match k {
        Key::Float(f) => f.is_nan(),
        Key::Other(Value::Numeric(n)) => n.is_nan(),
        _ => false,
    }
}

/// The sign of an infinite key, `None` for a finite one.
fn key_inf_sign(k: &Key) -> Option<i32> {
    match k {
        Key::Float(f) if f.is_infinite() => Some(if *f > 0.0 { 1 } else { -1 }),
        Key::Other(Value::Numeric(n)) if !n.is_finite() && !n.is_nan() => {
            Some(if n.is_negative() { -1 } else { 1 })
        }
        _ => None,
    }
}

/// Whether an offset is infinite.
fn value_inf(v: &Value) -> bool {
    match v {
        Value::Float4(f) => f.is_infinite(),
        Value::Float8(f) => f.is_infinite(),
        Value::Numeric(n) => !n.is_finite() && !n.is_nan(),
        _ => false,
    }
}

/// `key + offset` (or minus).
fn shift_key(k: &Key, off: &Value, add: bool) -> Result<Key> {
    Ok(match k {
        Key::Int(x) => {
            let o = i128::from(off.as_i64().unwrap_or(0));
            Key::Int(if add { x + o } else { x - o })
        }
        Key::Float(x) => {
            let o = match off {
                Value::Float4(f) => f64::from(*f),
                Value::Float8(f) => *f,
                _ => 0.0,
            };
            Key::Float(if add { x + o } else { x - o })
        }
        Key::Other(v) => Key::Other(eval_binary(
            if add { BinaryOp::Add } else { BinaryOp::Sub },
            v,
            off,
        )?),
    })
}

/// The order key of a RANGE frame with offsets, for every row.
struct RangeKey {
    keys: Vec<Option<Key>>,
    descending: bool,
    /// The rows whose key is not NULL: `lo..hi`.
    lo: usize,
    hi: usize,
}

impl RangeKey {
    fn new(p: &Partition<'_>, k: &SortKey, _ty: DataType) -> RangeKey {
        let keys: Vec<Option<Key>> = p
            .rows
            .iter()
            .map(|r| (!r[k.column].is_null()).then(|| to_key(&r[k.column])))
            .collect();
        let lo = keys.iter().position(Option::is_some).unwrap_or(keys.len());
        let hi = keys.iter().rposition(Option::is_some).map_or(lo, |p| p + 1);
        RangeKey {
            keys,
            descending: k.descending,
            lo,
            hi,
        }
    }

    /// The frame edge of row `i` for an offset bound, as PostgreSQL's
    /// `in_range` support functions decide which rows are in range (NaN
    /// sorts after every number; an infinite offset from an infinite key
    /// on the far side takes every row); a row with a NULL key frames its
    /// peers (the other NULLs).
    fn bound(
        &self,
        i: usize,
        off: &Value,
        following: bool,
        start: bool,
        peers: (usize, usize),
    ) -> Result<usize> {
        let Some(cur) = &self.keys[i] else {
            return Ok(if start { peers.0 } else { peers.1 });
        };
        let sub = following == self.descending;
        let less = start == self.descending;
        let cur_nan = key_nan(cur);
        let everything = value_inf(off) && key_inf_sign(cur) == Some(if sub { 1 } else { -1 });
        let sum = if everything || cur_nan {
            None
        } else {
            Some(shift_key(cur, off, !sub)?)
        };
        let in_range = |k: &Key| -> bool {
            if key_nan(k) {
                return cur_nan || !less;
            }
            if cur_nan {
                return less;
            }
            let Some(sum) = &sum else { return true };
            let o = key_cmp(k, sum);
            if less {
                o != Ordering::Greater
            } else {
                o != Ordering::Less
            }
        };
        let slice = &self.keys[self.lo..self.hi];
        let pos = slice.partition_point(|k| match k {
            None => true,
            Some(k) if start => !in_range(k),
            Some(k) => in_range(k),
        });
        Ok(self.lo + pos)
    }
}
