//! The typed fast path of hash aggregation, and its partial states.
//!
//! It applies to PostgreSQL's benchmark shapes (`select bid, sum(abalance)
//! ... group by bid`, `select count(*) ... where ...`, `select name,
//! count(*) ... group by name`): at most one integer-like group key
//! (`int2/4/8`, `date`, `timestamp`) or text-like one (`text`, `varchar`,
//! `char`), and only
//! `count(*)`, `count(x)`, `sum`/`avg` of integers and `min`/`max` of
//! integer-like values, without DISTINCT or FILTER ([`eligible`]).
//!
//! A [`FastAgg`] is one aggregation's running state: keys are `i64`s, each
//! group has per aggregate a count, an `i128` sum and an `i64` extreme, kept
//! in flat vectors indexed `group * naggs + k`. Group numbers come from a
//! direct array for small non-negative keys (`0..DIRECT_KEYS`, the common
//! `bid` case: no hashing at all) and from a `hashbrown` map otherwise; NULL
//! keys form one group of their own. A text key is first numbered by a
//! [`StrSet`] (its bytes hashed, each distinct key stored once in the set's
//! arena), and that number is the `i64` key. The loops read the column
//! slices directly: no `Value` is built per row, and a repeated key costs no
//! allocation.
//!
//! States are mergeable ([`FastAgg::merge`]): a parallel aggregation runs one
//! per participant over its share of the pages and folds them together
//! before [`FastAgg::finish`] produces the rows — sums of partial sums and
//! counts, extremes of partial extremes, averages from the merged sum and
//! count, so results equal the serial ones exactly. Groups come out in the
//! order they were first seen (by the state everything is merged into).

use hashbrown::HashMap;

use crate::error::Result;
use crate::exec::expr::Expr;
use crate::exec::strset::StrSet;
use crate::exec::vector::{Batch, Data, Vector};
use crate::nodes::AggCall;
use crate::types::agg::AggFunc;
use crate::types::{DataType, Numeric, Value};

/// Keys `0..DIRECT_KEYS` find their group through an array, not the map.
const DIRECT_KEYS: i64 = 4096;

/// Marks an unused slot of the direct array.
const NO_GROUP: u32 = u32::MAX;

fn int_type(t: &DataType) -> bool {
    matches!(t, DataType::Int2 | DataType::Int4 | DataType::Int8)
}

fn int_like(t: &DataType) -> bool {
    int_type(t)
        || matches!(
            t,
            DataType::Date | DataType::Timestamp(_) | DataType::TimestampTz(_)
        )
}

/// Whether the fast path applies to `group` and `aggs`.
pub fn eligible(group: &[Expr], aggs: &[AggCall]) -> bool {
    group.len() <= 1
        && group.iter().all(|g| int_like(&g.ty) || g.ty.is_string())
        && aggs.iter().all(|a| {
            !a.distinct
                && a.filter.is_none()
                && a.is_plain()
                && match a.func {
                    AggFunc::CountStar | AggFunc::Count => true,
                    AggFunc::Sum | AggFunc::Avg => a.arg.as_ref().is_some_and(|e| int_type(&e.ty)),
                    AggFunc::Min | AggFunc::Max => a.arg.as_ref().is_some_and(|e| int_like(&e.ty)),
                    _ => false,
                }
        })
}

/// The exact sum of `x`. Baseline x86-64 (SSE2) has no packed sign
/// extension, so `i64::from` per value ran scalar (3 instructions a value);
/// this sums each value's two 16-bit halves and its sign bit in 32-bit lanes
/// (which vectorize), over chunks short enough that no lane overflows:
/// per chunk, the sum of the values read as `u32` is `hi * 2^16 + lo`, and
/// each negative value read so is 2^32 too large.
#[inline]
pub(crate) fn sum_i32(x: &[i32]) -> i64 {
    let mut total = 0i64;
    // 65,536 halves of at most 65,535 each fit a u32.
    for c in x.chunks(1 << 16) {
        let (mut lo, mut hi, mut neg) = (0u32, 0u32, 0u32);
        for &v in c {
            let u = v as u32;
            lo += u & 0xffff;
            hi += u >> 16;
            neg += u >> 31;
        }
        total += (i64::from(hi) << 16) + i64::from(lo) - (i64::from(neg) << 32);
    }
    total
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

/// An integer-like value of type `ty` from its `i64` form.
fn int_value(ty: &DataType, k: i64) -> Value {
    match ty {
        DataType::Int2 => Value::Int2(k as i16),
        DataType::Int4 => Value::Int4(k as i32),
        DataType::Date => Value::Date(k as i32),
        DataType::Timestamp(_) => Value::Timestamp(k),
        DataType::TimestampTz(_) => Value::TimestampTz(k),
        _ => Value::Int8(k),
    }
}

/// The running state of one fast aggregation (see the module doc).
#[derive(Debug, Clone)]
pub struct FastAgg<'p> {
    /// GROUP BY: none or one integer-like expression.
    group: &'p [Expr],
    /// The aggregates.
    aggs: &'p [AggCall],
    /// Group `g`'s key (`None`: the NULL group, or the single group
    /// without GROUP BY); for a text key, its number in `text`.
    keys: Vec<Option<i64>>,
    /// A text key's distinct values (`None` for an integer key).
    text: Option<StrSet>,
    /// Non-NULL inputs (rows, for `count(*)`) per group and aggregate.
    counts: Vec<i64>,
    /// Sums per group and aggregate (sum and avg).
    sums: Vec<i128>,
    /// Extremes per group and aggregate (min and max; meaningful once the
    /// count is above zero).
    extremes: Vec<i64>,
    /// Group numbers of keys `0..DIRECT_KEYS` ([`NO_GROUP`] when none).
    direct: Vec<u32>,
    /// Group numbers of the other keys.
    index: HashMap<i64, u32>,
    /// The NULL key's group.
    null_group: Option<u32>,
    /// Group numbers of the current batch's rows (reused).
    slot: Vec<u32>,
}

impl<'p> FastAgg<'p> {
    /// An empty state; without GROUP BY it already holds its one group.
    pub fn new(group: &'p [Expr], aggs: &'p [AggCall]) -> FastAgg<'p> {
        let mut s = FastAgg {
            group,
            aggs,
            keys: Vec::new(),
            text: group
                .first()
                .filter(|g| g.ty.is_string())
                .map(|g| StrSet::new(matches!(g.ty, DataType::Char(_)))),
            counts: Vec::new(),
            sums: Vec::new(),
            extremes: Vec::new(),
            direct: Vec::new(),
            index: HashMap::new(),
            null_group: None,
            slot: Vec::new(),
        };
        if group.is_empty() {
            s.add_group(None);
        }
        s
    }

    fn add_group(&mut self, key: Option<i64>) -> u32 {
        let g = self.keys.len() as u32;
        let na = self.aggs.len();
        self.keys.push(key);
        self.counts.resize(self.counts.len() + na, 0);
        self.sums.resize(self.sums.len() + na, 0);
        self.extremes.resize(self.extremes.len() + na, 0);
        g
    }

    /// The group of `key`, created when new.
    #[inline]
    fn group_of(&mut self, key: Option<i64>) -> u32 {
        match key {
            Some(k) if (0..DIRECT_KEYS).contains(&k) => {
                if self.direct.is_empty() {
                    self.direct = vec![NO_GROUP; DIRECT_KEYS as usize];
                }
                let g = self.direct[k as usize];
                if g != NO_GROUP {
                    return g;
                }
                let g = self.add_group(key);
                self.direct[k as usize] = g;
                g
            }
            Some(k) => match self.index.get(&k) {
                Some(&g) => g,
                None => {
                    let g = self.add_group(key);
                    self.index.insert(k, g);
                    g
                }
            },
            None => match self.null_group {
                Some(g) => g,
                None => {
                    let g = self.add_group(None);
                    self.null_group = Some(g);
                    g
                }
            },
        }
    }

    /// The group of row `i` of the key column `kc`, created when new.
    pub(crate) fn group_at(&mut self, kc: &Vector, i: usize) -> u32 {
        if self.group.is_empty() {
            0
        } else if self.text.is_some() {
            match &kc.data {
                Data::Str(_) => self.group_of_str(kc.str_at(i)),
                _ => self.group_of_str(kc.get(i).as_str()),
            }
        } else {
            self.group_of(int_at(kc, i))
        }
    }

    /// The aggregate calls.
    pub(crate) fn aggs(&self) -> &'p [AggCall] {
        self.aggs
    }

    /// The group of text key `s` (`None`: NULL), created when new. Key
    /// numbers are dense and first-seen, so they index the direct array.
    #[inline]
    fn group_of_str(&mut self, s: Option<&str>) -> u32 {
        let Some(s) = s else {
            return self.group_of(None);
        };
        let set = self.text.as_mut().expect("a text key has its set");
        let (id, _) = set.insert(s);
        self.group_of(Some(i64::from(id)))
    }

    /// Folds one batch of input rows in.
    pub fn consume(&mut self, b: &Batch) -> Result<()> {
        // An empty batch (a filter that removed every row) folds nothing;
        // the loops below assume at least one row and one group.
        if b.len == 0 {
            return Ok(());
        }
        if self.group.is_empty() {
            return self.fold_batch(b, 0);
        }
        let mut slot = std::mem::take(&mut self.slot);
        slot.clear();
        // Group numbers for the whole batch first.
        match self.group.first() {
            None => slot.resize(b.len, 0u32),
            Some(g) => {
                let kc = g.eval(b)?;
                match (&kc.data, &kc.nulls) {
                    (Data::Str(_), _) => {
                        for i in 0..b.len {
                            let g = self.group_of_str(kc.str_at(i));
                            slot.push(g);
                        }
                    }
                    _ if self.text.is_some() => {
                        // Not in the string form (a planner slip): by value.
                        for i in 0..b.len {
                            let v = kc.get(i);
                            let g = self.group_of_str(v.as_str());
                            slot.push(g);
                        }
                    }
                    (Data::I32(x), None) => {
                        if self.direct.is_empty() {
                            self.direct = vec![NO_GROUP; DIRECT_KEYS as usize];
                        }
                        // Known small keys: one array read each, in a loop
                        // that calls nothing; the rest (other keys, and a
                        // key's first row) are then looked up through
                        // `group_of`, in row order, so group numbers stay
                        // first-seen.
                        let x = &x[..b.len.min(x.len())];
                        // A batch of one key (a clustered key such as
                        // `bid`: most batches): one group, every aggregate
                        // folded over whole columns.
                        // (An OR of differences, not `all`: it vectorizes.)
                        if x.first()
                            .is_some_and(|&k0| x.iter().fold(0, |d, &k| d | (k ^ k0)) == 0)
                        {
                            let g = self.group_of(Some(i64::from(x[0])));
                            self.slot = slot;
                            return self.fold_batch(b, g);
                        }
                        let direct = &self.direct;
                        slot.extend(
                            x.iter().map(|&k| {
                                direct.get(k as u32 as usize).copied().unwrap_or(NO_GROUP)
                            }),
                        );
                        if slot.contains(&NO_GROUP) {
                            for (s, &k) in slot.iter_mut().zip(x) {
                                if *s == NO_GROUP {
                                    *s = self.group_of(Some(k as i64));
                                }
                            }
                        }
                    }
                    _ => {
                        for i in 0..b.len {
                            let g = self.group_of(int_at(&kc, i));
                            slot.push(g);
                        }
                    }
                }
            }
        }
        let folded = self.fold_slots(b, &slot);
        self.slot = slot;
        folded
    }

    /// Folds the rows of `b` into the groups `slot` names, one per row
    /// (each an existing group).
    pub(crate) fn fold_slots(&mut self, b: &Batch, slot: &[u32]) -> Result<()> {
        let na = self.aggs.len();
        for (k, a) in self.aggs.iter().enumerate() {
            let col = match &a.arg {
                Some(e) if a.func != AggFunc::CountStar => e.eval(b)?,
                _ if na == 1 => {
                    let counts = &mut self.counts[..];
                    for &g in slot {
                        counts[g as usize] += 1;
                    }
                    continue;
                }
                _ => {
                    for &g in slot {
                        self.counts[g as usize * na + k] += 1;
                    }
                    continue;
                }
            };
            match a.func {
                AggFunc::Count => {
                    for (i, &g) in slot.iter().enumerate() {
                        if !col.is_null(i) {
                            self.counts[g as usize * na + k] += 1;
                        }
                    }
                }
                AggFunc::Min | AggFunc::Max => {
                    let max = a.func == AggFunc::Max;
                    for (i, &g) in slot.iter().enumerate() {
                        if let Some(v) = int_at(&col, i) {
                            let at = g as usize * na + k;
                            let e = &mut self.extremes[at];
                            if self.counts[at] == 0 || (max && v > *e) || (!max && v < *e) {
                                *e = v;
                            }
                            self.counts[at] += 1;
                        }
                    }
                }
                _ => {
                    // sum / avg: the hot loop of `sum(abalance) group by bid`.
                    if let (Data::I32(x), None) = (&col.data, &col.nulls) {
                        let (sums, counts) = (&mut self.sums[..], &mut self.counts[..]);
                        // Every slot names an existing group (checked once
                        // per batch, so that the loop needs no bounds check
                        // per row): a slot out of range is a bug, and stops
                        // the statement rather than counting wrongly.
                        let top = slot.iter().copied().max().unwrap_or(0) as usize;
                        assert!(top * na + k < sums.len() && sums.len() == counts.len());
                        for (&g, &v) in slot.iter().zip(x) {
                            let at = g as usize * na + k;
                            // SAFETY: `at <= top * na + k < sums.len()`
                            // (asserted above), and counts is as long.
                            unsafe {
                                *sums.get_unchecked_mut(at) += v as i128;
                                *counts.get_unchecked_mut(at) += 1;
                            }
                        }
                    } else {
                        for (i, &g) in slot.iter().enumerate() {
                            if let Some(v) = int_at(&col, i) {
                                let at = g as usize * na + k;
                                self.sums[at] += v as i128;
                                self.counts[at] += 1;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Folds a batch whose rows all belong to `group` (every batch without
    /// GROUP BY: group 0; a batch of one key): each aggregate folds its
    /// whole column at once (`sum` of a NULL-free `int4` column is a plain
    /// loop the compiler vectorizes).
    pub(crate) fn fold_batch(&mut self, b: &Batch, group: u32) -> Result<()> {
        let base = group as usize * self.aggs.len();
        for (k, a) in self.aggs.iter().enumerate() {
            let col = match &a.arg {
                Some(e) if a.func != AggFunc::CountStar => e.eval(b)?,
                _ => {
                    self.counts[base + k] += b.len as i64;
                    continue;
                }
            };
            let n = col.len();
            let nonnull = n - col
                .nulls
                .as_ref()
                .map_or(0, |m| m.iter().filter(|&&x| x).count());
            match (a.func, &col.data, &col.nulls) {
                (AggFunc::Count, _, _) => self.counts[base + k] += nonnull as i64,
                (AggFunc::Sum | AggFunc::Avg, Data::I32(x), None) => {
                    self.sums[base + k] += i128::from(sum_i32(x));
                    self.counts[base + k] += n as i64;
                }
                (AggFunc::Sum | AggFunc::Avg, Data::I16(x), None) => {
                    self.sums[base + k] += x.iter().map(|&v| i64::from(v)).sum::<i64>() as i128;
                    self.counts[base + k] += n as i64;
                }
                (AggFunc::Sum | AggFunc::Avg, Data::I64(x), None) => {
                    self.sums[base + k] += x.iter().map(|&v| i128::from(v)).sum::<i128>();
                    self.counts[base + k] += n as i64;
                }
                (AggFunc::Sum | AggFunc::Avg, _, _) => {
                    for i in 0..n {
                        if let Some(v) = int_at(&col, i) {
                            self.sums[base + k] += v as i128;
                        }
                    }
                    self.counts[base + k] += nonnull as i64;
                }
                (AggFunc::Min | AggFunc::Max, _, _) => {
                    let max = a.func == AggFunc::Max;
                    for i in 0..n {
                        if let Some(v) = int_at(&col, i) {
                            let e = &mut self.extremes[base + k];
                            if self.counts[base + k] == 0 || (max && v > *e) || (!max && v < *e) {
                                *e = v;
                            }
                            self.counts[base + k] += 1;
                        }
                    }
                }
                // count(*) is handled above; eligible() admits no other.
                _ => unreachable!("handled above"),
            }
        }
        Ok(())
    }

    /// Counts `n` more input rows in every aggregate of the one group of an
    /// aggregation without GROUP BY (a `count(*)` counted by pages).
    pub fn add_rows(&mut self, n: i64) {
        debug_assert!(self.group.is_empty(), "add_rows is for one group");
        for c in self.counts.iter_mut() {
            *c += n;
        }
    }

    /// Folds what the scan computed on its pages in (the one group of an
    /// aggregation without GROUP BY; [`super::page_agg`]), as [`merge`]
    /// folds another participant's state.
    ///
    /// [`merge`]: FastAgg::merge
    pub fn add_partial(&mut self, p: &super::page_agg::PagePartial) {
        debug_assert!(self.group.is_empty(), "page partials are for one group");
        self.fold_partial(0, p);
    }

    /// Folds the partial of pages whose rows all have the integer group
    /// key `key` into that key's group (created when new), as the rows
    /// would fold ([`super::summaries`]' grouped pages).
    pub fn add_group_partial(&mut self, key: i64, p: &super::page_agg::PagePartial) {
        debug_assert!(
            self.group.len() == 1 && self.text.is_none(),
            "an integer group key"
        );
        let g = self.group_of(Some(key)) as usize;
        self.fold_partial(g, p);
    }

    fn fold_partial(&mut self, g: usize, p: &super::page_agg::PagePartial) {
        let na = self.aggs.len();
        for (k, a) in self.aggs.iter().enumerate() {
            let n = p.counts[k];
            if n == 0 {
                continue;
            }
            let at = g * na + k;
            let (v, e) = (p.extremes[k], &mut self.extremes[at]);
            let better = match a.func {
                AggFunc::Max => v > *e,
                AggFunc::Min => v < *e,
                _ => false,
            };
            if self.counts[at] == 0 || better {
                *e = v;
            }
            self.counts[at] += n;
            self.sums[at] += p.sums[k];
        }
    }

    /// The group key expression (none without GROUP BY).
    pub fn group_expr(&self) -> Option<&'p Expr> {
        self.group.first()
    }

    /// The number of groups so far.
    pub fn groups(&self) -> usize {
        self.keys.len()
    }

    /// Approximate bytes the state holds (checked against `hash_mem` once
    /// per batch, never per row).
    pub fn mem_bytes(&self) -> usize {
        self.keys.capacity() * 16
            + self.counts.capacity() * 8
            + self.sums.capacity() * 16
            + self.extremes.capacity() * 8
            + self.direct.capacity() * 4
            + self.index.capacity() * 13
            + self.text.as_ref().map_or(0, StrSet::mem_bytes)
    }

    /// Whether row `i` of the key column `kc` (this state's one group key,
    /// evaluated) already has a group.
    pub fn has_key(&self, kc: &Vector, i: usize) -> bool {
        if let Some(set) = &self.text {
            let slow;
            let s = match &kc.data {
                Data::Str(_) => kc.str_at(i),
                _ => {
                    slow = kc.get(i);
                    slow.as_str()
                }
            };
            return match s {
                None => self.null_group.is_some(),
                Some(s) => set
                    .find(s)
                    .is_some_and(|id| self.has_int_key(Some(i64::from(id)))),
            };
        }
        self.has_int_key(int_at(kc, i))
    }

    fn has_int_key(&self, key: Option<i64>) -> bool {
        match key {
            Some(k) if (0..DIRECT_KEYS).contains(&k) => {
                self.direct.get(k as usize).is_some_and(|&g| g != NO_GROUP)
            }
            Some(k) => self.index.contains_key(&k),
            None => self.null_group.is_some(),
        }
    }

    /// The hash of group `g`'s key as [`crate::exec::keyset::hash_at`] hashes the
    /// key column's row (so a group and its rows pick the same partition).
    fn key_hash(&self, g: usize, h: &mut impl std::hash::Hasher) {
        match (self.keys[g], &self.text) {
            (None, _) => h.write_u8(0),
            (Some(id), Some(set)) => {
                let s = set.get(id as u32);
                let char_key = matches!(self.group.first().map(|e| e.ty), Some(DataType::Char(_)));
                let s = if char_key {
                    crate::types::text::bpchar_trim(s)
                } else {
                    s
                };
                h.write(s.as_bytes());
                h.write_u8(0xff);
            }
            (Some(k), None) => h.write_u64(k as u64),
        }
    }

    /// Splits the state by partition: the groups whose keys
    /// [`crate::exec::spill::partition_of`] puts in partition `p` (of `n`, hashed
    /// at `depth`) become state `p`. With GROUP BY only.
    pub fn split(
        &self,
        hasher: &crate::exec::spill::PartitionHasher,
        depth: u32,
        n: usize,
    ) -> Vec<FastAgg<'p>> {
        use std::hash::Hasher;
        let mut parts: Vec<FastAgg<'p>> = (0..n)
            .map(|_| FastAgg::new(self.group, self.aggs))
            .collect();
        let of: Vec<u32> = (0..self.keys.len())
            .map(|g| {
                let mut h = hasher.hasher(depth);
                self.key_hash(g, &mut h);
                crate::exec::spill::partition_of(h.finish(), n)
            })
            .collect();
        for (p, part) in parts.iter_mut().enumerate() {
            part.merge_where(self, |g| of[g] == p as u32);
        }
        parts
    }

    /// Folds another participant's state of the same aggregation in; its
    /// new groups come after this state's.
    pub fn merge(&mut self, other: &FastAgg<'_>) {
        self.merge_where(other, |_| true);
    }

    /// [`FastAgg::merge`] of the groups of `other` that `keep` selects.
    fn merge_where(&mut self, other: &FastAgg<'_>, keep: impl Fn(usize) -> bool) {
        let na = self.aggs.len();
        for (og, key) in other.keys.iter().enumerate() {
            if !keep(og) {
                continue;
            }
            let g = if self.group.is_empty() {
                0
            } else if let Some(set) = &other.text {
                self.group_of_str(key.map(|id| set.get(id as u32))) as usize
            } else {
                self.group_of(*key) as usize
            };
            for (k, a) in self.aggs.iter().enumerate() {
                let (at, oat) = (g * na + k, og * na + k);
                let n = other.counts[oat];
                if n == 0 {
                    continue;
                }
                let v = other.extremes[oat];
                let e = &mut self.extremes[at];
                let better = match a.func {
                    AggFunc::Max => v > *e,
                    AggFunc::Min => v < *e,
                    _ => false,
                };
                if self.counts[at] == 0 || better {
                    *e = v;
                }
                self.counts[at] += n;
                self.sums[at] += other.sums[oat];
            }
        }
    }

    /// The output rows: the key (with GROUP BY), then each aggregate's
    /// result, as [`crate::types::agg::Accumulator::finish`] computes it.
    pub fn finish(&self) -> Result<Vec<Vec<Value>>> {
        let na = self.aggs.len();
        let key_ty = self.group.first().map(|g| g.ty);
        let mut out = Vec::with_capacity(self.keys.len());
        for (g, key) in self.keys.iter().enumerate() {
            let mut row = Vec::with_capacity(self.group.len() + na);
            if let Some(ty) = &key_ty {
                row.push(match (key, &self.text) {
                    (None, _) => Value::Null,
                    (Some(id), Some(set)) => Value::text(set.get(*id as u32)),
                    (Some(k), None) => int_value(ty, *k),
                });
            }
            for (k, a) in self.aggs.iter().enumerate() {
                let at = g * na + k;
                let (n, s) = (self.counts[at], self.sums[at]);
                row.push(match a.func {
                    AggFunc::Count | AggFunc::CountStar => Value::Int8(n),
                    _ if n == 0 => Value::Null,
                    AggFunc::Sum if a.ty == DataType::Int8 => Value::Int8(
                        i64::try_from(s).map_err(|_| crate::types::int::int8_out_of_range())?,
                    ),
                    AggFunc::Sum => Value::numeric(Numeric::from_i128(s)),
                    AggFunc::Avg => {
                        Value::numeric(Numeric::from_i128(s).div(&Numeric::from_i64(n))?)
                    }
                    _ => int_value(&a.ty, self.extremes[at]),
                });
            }
            out.push(row);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::expr::ExprKind;

    fn col(i: usize, ty: DataType) -> Expr {
        Expr {
            kind: ExprKind::Column(i),
            ty,
        }
    }

    fn call(func: AggFunc, arg: Option<Expr>, ty: DataType) -> AggCall {
        AggCall {
            func,
            arg,
            more_args: Vec::new(),
            order: Vec::new(),
            distinct: false,
            filter: None,
            ty,
        }
    }

    fn batch(keys: &[Option<i32>], vals: &[Option<i32>]) -> Batch {
        let k: Vec<Value> = keys
            .iter()
            .map(|k| k.map_or(Value::Null, Value::Int4))
            .collect();
        let v: Vec<Value> = vals
            .iter()
            .map(|v| v.map_or(Value::Null, Value::Int4))
            .collect();
        Batch::new(vec![
            Vector::from_values(DataType::Int4, &k),
            Vector::from_values(DataType::Int4, &v),
        ])
    }

    fn aggs() -> Vec<AggCall> {
        let n = DataType::Numeric(None);
        vec![
            call(AggFunc::CountStar, None, DataType::Int8),
            call(AggFunc::Count, Some(col(1, DataType::Int4)), DataType::Int8),
            call(AggFunc::Sum, Some(col(1, DataType::Int4)), DataType::Int8),
            call(AggFunc::Avg, Some(col(1, DataType::Int4)), n),
            call(AggFunc::Min, Some(col(1, DataType::Int4)), DataType::Int4),
            call(AggFunc::Max, Some(col(1, DataType::Int4)), DataType::Int4),
        ]
    }

    fn show(rows: &[Vec<Value>]) -> Vec<String> {
        rows.iter().map(|r| format!("{r:?}")).collect()
    }

    #[test]
    fn merged_partial_states_equal_one_serial_state() {
        let group = vec![col(0, DataType::Int4)];
        let aggs = aggs();
        let keys = [
            Some(1),
            None,
            Some(5000),
            Some(1),
            Some(-3),
            None,
            Some(5000),
        ];
        let vals = [Some(2), Some(7), None, Some(-4), Some(1), None, Some(9)];
        let mut serial = FastAgg::new(&group, &aggs);
        serial.consume(&batch(&keys, &vals)).unwrap();
        let mut a = FastAgg::new(&group, &aggs);
        let mut b = FastAgg::new(&group, &aggs);
        a.consume(&batch(&keys[..3], &vals[..3])).unwrap();
        b.consume(&batch(&keys[3..], &vals[3..])).unwrap();
        a.merge(&b);
        assert_eq!(show(&a.finish().unwrap()), show(&serial.finish().unwrap()));
        let rows = serial.finish().unwrap();
        assert_eq!(rows.len(), 4);
        // Key 1: values 2 and -4.
        assert_eq!(rows[0][0], Value::Int4(1));
        assert_eq!(&rows[0][1..3], &[Value::Int8(2), Value::Int8(2)]);
        assert_eq!(rows[0][3], Value::Int8(-2));
        assert_eq!(rows[0][5], Value::Int4(-4));
        assert_eq!(rows[0][6], Value::Int4(2));
        // The NULL key's group: one NULL value, one 7.
        assert_eq!(rows[1][0], Value::Null);
        assert_eq!(&rows[1][1..3], &[Value::Int8(2), Value::Int8(1)]);
    }

    #[test]
    fn sum_i32_is_exact_at_the_extremes() {
        let cases: [&[i32]; 5] = [
            &[],
            &[-1],
            &[i32::MIN, i32::MIN, i32::MAX],
            &[i32::MAX; 1000],
            &[i32::MIN; 1000],
        ];
        for x in cases {
            let want: i64 = x.iter().map(|&v| i64::from(v)).sum();
            assert_eq!(sum_i32(x), want, "{x:?}");
        }
        let mixed: Vec<i32> = (0..10_000)
            .map(|i| (i * 7919 % 20011 - 10005) << 16)
            .collect();
        assert_eq!(
            sum_i32(&mixed),
            mixed.iter().map(|&v| i64::from(v)).sum::<i64>()
        );
    }

    #[test]
    fn a_batch_of_one_key_folds_as_the_row_by_row_path_does() {
        let group = vec![col(0, DataType::Int4)];
        let aggs = aggs();
        // Batches of one key each (the whole-column fold), keys repeated
        // across batches, values with and without NULLs, a big key (the
        // map, not the direct array) ...
        let runs: [(i32, &[Option<i32>]); 4] = [
            (7, &[Some(1), Some(2), Some(3)]),
            (9, &[Some(-5), None, Some(i32::MAX)]),
            (7, &[Some(10), Some(i32::MIN)]),
            (1 << 20, &[None, None]),
        ];
        let mut by_runs = FastAgg::new(&group, &aggs);
        let (mut keys, mut vals) = (Vec::new(), Vec::new());
        for (k, v) in runs {
            let ks = vec![Some(k); v.len()];
            by_runs.consume(&batch(&ks, v)).unwrap();
            keys.extend(ks);
            vals.extend_from_slice(v);
        }
        // ... equal one batch of all rows interleaved (row by row).
        let mut mixed = FastAgg::new(&group, &aggs);
        let order = [0, 3, 8, 1, 4, 9, 2, 5, 6, 7];
        let pick = |x: &[Option<i32>]| order.iter().map(|&i| x[i]).collect::<Vec<_>>();
        mixed.consume(&batch(&pick(&keys), &pick(&vals))).unwrap();
        let mut a = show(&by_runs.finish().unwrap());
        let mut b = show(&mixed.finish().unwrap());
        assert_eq!(a.len(), 3);
        a.sort();
        b.sort();
        assert_eq!(a, b);
        let rows = by_runs.finish().unwrap();
        // Key 7: 1 + 2 + 3 + 10 + i32::MIN over five rows.
        assert_eq!(rows[0][0], Value::Int4(7));
        assert_eq!(rows[0][3], Value::Int8(16 + i64::from(i32::MIN)));
        assert_eq!(rows[0][5], Value::Int4(i32::MIN));
        // Key 9: two non-NULL values of three rows.
        assert_eq!(&rows[1][1..3], &[Value::Int8(3), Value::Int8(2)]);
        assert_eq!(rows[1][6], Value::Int4(i32::MAX));
        // The big key: only NULL values.
        assert_eq!(rows[2][3], Value::Null);
    }

    #[test]
    fn empty_input_has_one_group_without_group_by_and_none_with() {
        let aggs = aggs();
        let rows = FastAgg::new(&[], &aggs).finish().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0][0], Value::Int8(0));
        assert!(rows[0][2..].iter().all(Value::is_null));
        let group = vec![col(0, DataType::Int4)];
        assert!(FastAgg::new(&group, &aggs).finish().unwrap().is_empty());
    }

    #[test]
    fn text_keys_group_by_bytes_and_merge_by_value() {
        let group = vec![col(0, DataType::Text)];
        let aggs = vec![
            call(AggFunc::CountStar, None, DataType::Int8),
            call(AggFunc::Sum, Some(col(1, DataType::Int4)), DataType::Int8),
        ];
        let batch = |keys: &[Option<&str>], vals: &[i32]| {
            let k: Vec<Value> = keys
                .iter()
                .map(|k| k.map_or(Value::Null, Value::text))
                .collect();
            let v: Vec<Value> = vals.iter().map(|&v| Value::Int4(v)).collect();
            Batch::new(vec![
                Vector::from_values(DataType::Text, &k),
                Vector::from_values(DataType::Int4, &v),
            ])
        };
        assert!(eligible(&group, &aggs));
        let mut a = FastAgg::new(&group, &aggs);
        a.consume(&batch(
            &[Some("x"), None, Some("y"), Some("x")],
            &[1, 2, 3, 4],
        ))
        .unwrap();
        let mut b = FastAgg::new(&group, &aggs);
        b.consume(&batch(&[Some("z"), Some("x"), None], &[10, 20, 30]))
            .unwrap();
        a.merge(&b);
        let rows = a.finish().unwrap();
        let got: Vec<(Value, Value, Value)> = rows
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (Value::text("x"), Value::Int8(3), Value::Int8(25)),
                (Value::Null, Value::Int8(2), Value::Int8(32)),
                (Value::text("y"), Value::Int8(1), Value::Int8(3)),
                (Value::text("z"), Value::Int8(1), Value::Int8(10)),
            ]
        );
    }

    #[test]
    fn all_null_values_give_null_sum_avg_min_max() {
        let aggs = aggs();
        let mut s = FastAgg::new(&[], &aggs);
        s.consume(&batch(&[Some(1), Some(2)], &[None, None]))
            .unwrap();
        let rows = s.finish().unwrap();
        assert_eq!(&rows[0][..2], &[Value::Int8(2), Value::Int8(0)]);
        assert!(rows[0][2..].iter().all(Value::is_null));
    }
}
