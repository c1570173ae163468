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
//! the typed path of [`super::fastpath::hash_agg`] instead.
//!
//! Memory is bounded by `work_mem * hash_mem_multiplier`, as PostgreSQL 13+
//! bounds it: the table's size is checked once per input batch; once over
//! the limit, rows of keys already in the table are still folded in while
//! rows of new keys are written to partition files by the hash of their key
//! ([`super::spill`]). When the input ends, the groups in memory are
//! emitted and dropped, then each partition is aggregated the same way,
//! splitting again (on other hash bits) when it is still too big. A key is
//! in memory or in one partition, never both, so each group is finished
//! exactly once. Below the limit nothing of this runs: the per-batch check
//! is a few capacity reads.
//!
//! An aggregate with more than one argument or an ORDER BY in its call
//! (`string_agg(x, ',' ORDER BY y)`) is fed row by row instead
//! ([`AggregateOp::fold_rows`]): with an ORDER BY, each group keeps that
//! aggregate's rows (keys then arguments) and sorts them when the group is
//! finished, as PostgreSQL's nodeAgg sorts each group's inputs; their bytes
//! count towards the memory limit, so a spill moves new groups, never part
//! of one. Aggregations without such calls never reach this code.
//!
//! [`DistinctOp`] and [`SetOpOp`] key their rows the same way and spill the
//! same way (see each).

use super::expr::{truth_mask, Expr};
use super::fastpath::hash_agg::{self, FastAgg};
use super::fastpath::join_agg;
use super::keyset::KeySet;
use super::spill::{
    partition_count, partition_of, FilesOp, HashStats, PartitionHasher, Partitions, SpillFile,
};
use super::vector::{Batch, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::nodes::{AggCall, AggOrder};
use crate::types::agg::{Accumulator, AggFunc};
use crate::types::{compare_typed, DataType, Value};
use std::cmp::Ordering;

/// Per-group state: one accumulator per aggregate, the values already
/// seen by each DISTINCT aggregate, and the rows of each aggregate with an
/// ORDER BY (its keys, then its arguments), sorted when the group ends.
struct Group {
    accs: Vec<Accumulator>,
    seen: Vec<Option<KeySet>>,
    /// Empty (no allocation) unless some aggregate has an ORDER BY.
    sorted: Vec<Vec<Vec<Value>>>,
}

/// Feeds one row's argument values to `acc`.
fn feed(acc: &mut Accumulator, vals: &[Value]) -> Result<()> {
    match vals {
        [] => {
            acc.add_row();
            Ok(())
        }
        [v] => acc.add(v),
        [v, w, ..] => acc.add2(v, w),
    }
}

/// The order of two rows' ORDER BY keys inside an aggregate call.
fn cmp_keys(order: &[AggOrder], a: &[Value], b: &[Value]) -> Ordering {
    for (k, o) in order.iter().enumerate() {
        let (x, y) = (&a[k], &b[k]);
        let c = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) if o.nulls_first => Ordering::Less,
            (true, false) => Ordering::Greater,
            (false, true) if o.nulls_first => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                let c = compare_typed(x, y, &o.expr.ty);
                if o.descending {
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

/// Approximate bytes of one buffered row.
fn row_bytes(r: &[Value]) -> usize {
    let payload: usize = r
        .iter()
        .map(|v| match v {
            Value::Text(t) => t.len(),
            Value::Bytea(b) => b.len(),
            _ => 0,
        })
        .sum();
    std::mem::size_of::<Vec<Value>>() + std::mem::size_of_val(r) + payload
}

/// Depth past which a partition no longer splits (it then stays in memory:
/// 2^-32 odds per level that the split did not separate its keys).
const MAX_DEPTH: u32 = 8;

/// Spilled rows still to aggregate: the files of one partition, the depth
/// whose hash bits split them off, and (the fast path of a parallel plan)
/// the partial groups of that partition that were already in memory.
pub struct Pending<'a> {
    /// Partial groups of the partition (fast path only).
    pub seed: Option<FastAgg<'a>>,
    /// The partition's rows.
    pub files: Vec<SpillFile>,
    /// The depth of the split that made the partition.
    pub depth: u32,
}

/// What a hash aggregation shares across its partitions: the memory limit,
/// the partition hash, the partitions still to do and the figures for
/// EXPLAIN ANALYZE.
pub struct SpillState<'a> {
    /// The hash that splits rows into partitions.
    pub hasher: PartitionHasher,
    /// Partitions still to aggregate.
    pub pending: Vec<Pending<'a>>,
    /// Batches, peak memory, disk usage.
    pub stats: HashStats,
}

impl SpillState<'_> {
    /// A state with no partitions yet (one batch: the in-memory one).
    pub fn new() -> Self {
        SpillState {
            hasher: PartitionHasher::default(),
            pending: Vec::new(),
            stats: HashStats {
                batches: 1,
                batches_original: 1,
                ..HashStats::default()
            },
        }
    }
}

impl Default for SpillState<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Folds batch `b` into the fast state `state`, within `ctx.hash_mem`: once
/// the state has outgrown it (checked per batch), rows of keys the state
/// already has are folded in and the others go to `parts` by the hash of
/// their key at `depth` (PostgreSQL's `hash_agg_enter_spill_mode` and
/// `hashagg_spill_tuple`). Returns the state's size when it was checked.
pub fn fast_fold(
    ctx: &ExecContext,
    state: &mut FastAgg<'_>,
    parts: &mut Option<Partitions>,
    hasher: &PartitionHasher,
    depth: u32,
    b: &Batch,
) -> Result<usize> {
    let Some(p) = parts else {
        state.consume(b)?;
        let mem = state.mem_bytes();
        if mem > ctx.hash_mem && state.groups() > 1 && depth < MAX_DEPTH {
            *parts = Some(Partitions::new(partition_count(ctx.hash_mem)));
        }
        return Ok(mem);
    };
    let Some(key) = state.group_expr() else {
        state.consume(b)?;
        return Ok(state.mem_bytes());
    };
    let kc = key.eval(b)?;
    let n = p.len();
    let mut keep = vec![false; b.len];
    let mut part = Vec::with_capacity(b.len);
    let mut kept = 0;
    for (i, k) in keep.iter_mut().enumerate() {
        if state.has_key(&kc, i) {
            *k = true;
            kept += 1;
            part.push(u32::MAX);
        } else {
            part.push(partition_of(hasher.hash_row(depth, &[&kc], i), n));
        }
    }
    p.add(ctx, b, &part)?;
    if kept > 0 {
        state.consume(&b.filter(&keep))?;
    }
    Ok(0)
}

/// Folds all of `input` into the fast state `state` ([`fast_fold`] batch by
/// batch; first, over a hash join that allows it, the probe rows fused into
/// the aggregation, [`super::fastpath::join_agg`]), then what its scan
/// answered from pages; `peak` follows the state's size.
pub fn fold_input(
    ctx: &ExecContext,
    state: &mut FastAgg<'_>,
    parts: &mut Option<Partitions>,
    hasher: &PartitionHasher,
    depth: u32,
    input: &mut dyn Operator,
    peak: &mut u64,
) -> Result<()> {
    if let Some(join) = input.fused_probe() {
        join_agg::fold(ctx, state, join)?;
    }
    while let Some(b) = input.next()? {
        ctx.check_cancel()?;
        add_group_partials(input, state);
        let mem = fast_fold(ctx, state, parts, hasher, depth, &b)?;
        if parts.is_some() {
            input.stop_group_partials();
        }
        *peak = (*peak).max(mem as u64);
    }
    add_group_partials(input, state);
    if let Some(p) = input.page_partial() {
        state.add_partial(&p);
    }
    *peak = (*peak).max(state.mem_bytes() as u64);
    Ok(())
}

/// Adds the pages `input` took from their summaries, per group key, into
/// `state`. Called before each batch is folded, while nothing spills: a
/// key of those pages then has its group in `state` before any row of
/// it could go to a partition file; the aggregate stops the scan taking
/// such pages once it spills ([`Operator::stop_group_partials`]).
pub fn add_group_partials(input: &mut dyn Operator, state: &mut FastAgg<'_>) {
    for (key, p) in input.group_partials() {
        state.add_group_partial(key, &p);
    }
}

/// Ends a spill: flushes the partitions and queues their files.
pub fn finish_spill<'a>(
    ctx: &ExecContext,
    parts: Option<Partitions>,
    depth: u32,
    spill: &mut SpillState<'a>,
) -> Result<()> {
    let Some(parts) = parts else { return Ok(()) };
    let (files, bytes) = parts.finish(ctx)?;
    spill.stats.disk_bytes += bytes;
    for f in files.into_iter().flatten() {
        spill.pending.push(Pending {
            seed: None,
            files: vec![f],
            depth,
        });
    }
    Ok(())
}

/// GROUP BY and aggregates.
pub struct AggregateOp<'a> {
    input: Option<Box<dyn Operator + 'a>>,
    group: &'a [Expr],
    aggs: &'a [AggCall],
    types: Vec<DataType>,
    ctx: &'a ExecContext,
    /// The finished groups of the current batch: keys then aggregate
    /// results, in first-seen order.
    out: Vec<Vec<Value>>,
    emitted: usize,
    /// Partitions and figures of a spilling aggregation.
    spill: SpillState<'a>,
    /// Some aggregate has an ORDER BY in its call.
    ordered: bool,
    /// Bytes of the rows buffered for ORDER BY aggregates (this pass).
    buffered: usize,
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
            spill: SpillState::new(),
            ordered: aggs.iter().any(|a| !a.order.is_empty()),
            buffered: 0,
        }
    }

    /// An aggregation whose input was read elsewhere (the participants of
    /// a parallel plan): `out` are finished groups, `spill` the partitions
    /// still to aggregate.
    pub fn resume(
        group: &'a [Expr],
        aggs: &'a [AggCall],
        types: Vec<DataType>,
        ctx: &'a ExecContext,
        out: Vec<Vec<Value>>,
        spill: SpillState<'a>,
    ) -> AggregateOp<'a> {
        AggregateOp {
            input: None,
            group,
            aggs,
            types,
            ctx,
            out,
            emitted: 0,
            spill,
            ordered: aggs.iter().any(|a| !a.order.is_empty()),
            buffered: 0,
        }
    }

    fn new_group(&self) -> Result<Group> {
        let mut accs = Vec::with_capacity(self.aggs.len());
        let mut seen = Vec::with_capacity(self.aggs.len());
        for a in self.aggs {
            let input_ty = a.arg.as_ref().map_or(DataType::Int8, |e| e.ty);
            accs.push(Accumulator::new(a.func, &input_ty)?);
            seen.push(a.distinct.then(|| {
                if a.more_args.is_empty() {
                    KeySet::new(&[input_ty])
                } else {
                    let types: Vec<DataType> =
                        a.arg.iter().chain(&a.more_args).map(|e| e.ty).collect();
                    KeySet::new(&types)
                }
            }));
        }
        let sorted = if self.ordered {
            self.aggs.iter().map(|_| Vec::new()).collect()
        } else {
            Vec::new()
        };
        Ok(Group { accs, seen, sorted })
    }

    /// The typed path over `input`, starting from `seed`'s groups; `depth`
    /// is the recursion depth of the partition being aggregated.
    fn run_fast(
        &mut self,
        mut input: Box<dyn Operator + 'a>,
        seed: Option<FastAgg<'a>>,
        depth: u32,
    ) -> Result<()> {
        let mut state = seed.unwrap_or_else(|| FastAgg::new(self.group, self.aggs));
        let mut parts = None;
        let peak = &mut self.spill.stats.peak_bytes;
        let hasher = &self.spill.hasher;
        fold_input(
            self.ctx,
            &mut state,
            &mut parts,
            hasher,
            depth,
            &mut *input,
            peak,
        )?;
        finish_spill(self.ctx, parts, depth, &mut self.spill)?;
        self.out = state.finish()?;
        Ok(())
    }

    /// Approximate bytes of the general path's table.
    fn general_bytes(&self, index: &KeySet, groups: &[Group]) -> usize {
        let per_group = std::mem::size_of::<Group>()
            + self.aggs.len()
                * (std::mem::size_of::<Accumulator>() + std::mem::size_of::<Option<KeySet>>());
        index.mem_bytes() + groups.len() * per_group + self.buffered
    }

    /// The general path over `input`; `depth` as in [`Self::run_fast`].
    fn consume(&mut self, mut input: Box<dyn Operator + 'a>, depth: u32) -> Result<()> {
        // The group keys, numbered in first-seen order: group `id` is key
        // `id` of the set, so a repeated key (the common case) finds its
        // group by hashing the batch's own slots, with no `Value` per row.
        let key_types: Vec<DataType> = self.group.iter().map(|e| e.ty).collect();
        let mut index = KeySet::new(&key_types);
        let mut groups: Vec<Group> = Vec::new();
        if self.group.is_empty() {
            groups.push(self.new_group()?);
        }
        let mut parts: Option<Partitions> = None;
        // The group of each row of the batch (reused between batches).
        let mut gids: Vec<u32> = Vec::with_capacity(BATCH_SIZE);
        self.buffered = 0;
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            let keys: Vec<_> = self
                .group
                .iter()
                .map(|e| e.eval(&b))
                .collect::<Result<_>>()?;
            let key_cols: Vec<&Vector> = keys.iter().map(|k| &**k).collect();
            if let Some(p) = &mut parts {
                // Spilling: rows of new keys go to the partitions.
                let n = p.len();
                let mut keep = vec![false; b.len];
                let mut part = Vec::with_capacity(b.len);
                for (row, k) in keep.iter_mut().enumerate() {
                    if index.find(&key_cols, row).is_some() {
                        *k = true;
                        part.push(u32::MAX);
                    } else {
                        let h = self.spill.hasher.hash_row(depth, &key_cols, row);
                        part.push(partition_of(h, n));
                    }
                }
                p.add(self.ctx, &b, &part)?;
                let kept = b.filter(&keep);
                let keys: Vec<_> = self
                    .group
                    .iter()
                    .map(|e| e.eval(&kept))
                    .collect::<Result<_>>()?;
                let key_cols: Vec<&Vector> = keys.iter().map(|k| &**k).collect();
                self.buffered += self.fold(&kept, &key_cols, &mut index, &mut groups, &mut gids)?;
                continue;
            }
            self.buffered += self.fold(&b, &key_cols, &mut index, &mut groups, &mut gids)?;
            if !self.group.is_empty() && depth < MAX_DEPTH && groups.len() > 1 {
                let mem = self.general_bytes(&index, &groups);
                self.spill.stats.peak_bytes = self.spill.stats.peak_bytes.max(mem as u64);
                if mem > self.ctx.hash_mem {
                    parts = Some(Partitions::new(partition_count(self.ctx.hash_mem)));
                }
            }
        }
        let mem = self.general_bytes(&index, &groups) as u64;
        self.spill.stats.peak_bytes = self.spill.stats.peak_bytes.max(mem);
        finish_spill(self.ctx, parts, depth, &mut self.spill)?;
        self.out = groups
            .into_iter()
            .enumerate()
            .map(|(id, g)| {
                let mut row: Vec<Value> = index.keys().iter().map(|k| k.get(id)).collect();
                row.extend(self.finish_group(g)?);
                Ok(row)
            })
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// A finished group's aggregate results: the rows of each ORDER BY
    /// aggregate are sorted (equal keys placed as PostgreSQL's sort places
    /// them) and fed to it first.
    fn finish_group(&self, mut g: Group) -> Result<Vec<Value>> {
        for (k, a) in self.aggs.iter().enumerate() {
            if a.order.is_empty() {
                continue;
            }
            let mut rows = std::mem::take(&mut g.sorted[k]);
            let n = a.order.len();
            super::qsort::pg_qsort(&mut rows, &mut |x, y| cmp_keys(&a.order, &x[..n], &y[..n]));
            for r in &rows {
                feed(&mut g.accs[k], &r[n..])?;
            }
        }
        g.accs.iter().map(Accumulator::finish).collect()
    }

    /// Folds aggregate `k` (`a`, with more arguments or an ORDER BY) over
    /// the rows of `b` that `mask` keeps, row by row; rows with a NULL
    /// argument are skipped (for `string_agg`, a NULL value only), DISTINCT
    /// keeps the first of equal argument lists. Returns the bytes buffered.
    fn fold_rows(
        &self,
        k: usize,
        a: &AggCall,
        b: &Batch,
        mask: Option<&[bool]>,
        gids: &[u32],
        groups: &mut [Group],
    ) -> Result<usize> {
        let cols = a
            .arg
            .iter()
            .chain(&a.more_args)
            .map(|e| e.eval_where(b, mask))
            .collect::<Result<Vec<_>>>()?;
        let keys = a
            .order
            .iter()
            .map(|o| o.expr.eval_where(b, mask))
            .collect::<Result<Vec<_>>>()?;
        let cols: Vec<&Vector> = cols.iter().map(|c| &**c).collect();
        let strict_all = a.func != AggFunc::StringAgg;
        let mut bytes = 0;
        for (row, &g) in gids.iter().enumerate() {
            if mask.is_some_and(|m| !m[row]) {
                continue;
            }
            // array_agg is not strict: NULL inputs become NULL elements.
            let skip = if a.func.keeps_nulls() {
                false
            } else if strict_all {
                cols.iter().any(|c| c.is_null(row))
            } else {
                cols.first().is_some_and(|c| c.is_null(row))
            };
            if skip {
                continue;
            }
            let state = &mut groups[g as usize];
            if let Some(seen) = &mut state.seen[k] {
                if !seen.insert(&cols, row).1 {
                    continue;
                }
            }
            let vals: Vec<Value> = keys
                .iter()
                .map(|c| c.get(row))
                .chain(cols.iter().map(|c| c.get(row)))
                .collect();
            if a.order.is_empty() {
                feed(&mut state.accs[k], &vals)?;
            } else {
                bytes += row_bytes(&vals);
                state.sorted[k].push(vals);
            }
        }
        Ok(bytes)
    }

    /// Folds the rows of `b` (whose group keys are `key_cols`) into
    /// `groups`, numbering new keys in `index`. Returns the bytes of the
    /// rows buffered for ORDER BY aggregates.
    fn fold(
        &self,
        b: &Batch,
        key_cols: &[&Vector],
        index: &mut KeySet,
        groups: &mut Vec<Group>,
        gids: &mut Vec<u32>,
    ) -> Result<usize> {
        let mut buffered = 0;
        gids.clear();
        if self.group.is_empty() {
            gids.resize(b.len, 0);
        } else {
            for row in 0..b.len {
                let (id, new) = index.insert(key_cols, row);
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
                .map(|f| f.eval(b).map(|v| truth_mask(&v)))
                .transpose()?;
            if !a.is_plain() {
                buffered += self.fold_rows(k, a, b, mask.as_deref(), gids, groups)?;
                continue;
            }
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
            let col = arg.eval_where(b, mask.as_deref())?;
            for (row, &g) in gids.iter().enumerate() {
                if skip(row) {
                    continue;
                }
                let state = &mut groups[g as usize];
                let null = col.is_null(row);
                if let Some(seen) = &mut state.seen[k] {
                    // A NULL is one distinct value to array_agg, which
                    // keeps it; the strict aggregates skip it.
                    if (null && !a.func.keeps_nulls()) || !seen.insert(&[&col], row).1 {
                        continue;
                    }
                }
                if a.func == AggFunc::CountStar {
                    state.accs[k].add_row();
                } else if null {
                    // array_agg keeps NULL inputs as NULL elements.
                    if a.func.keeps_nulls() {
                        state.accs[k].add(&crate::types::Value::Null)?;
                    }
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
        Ok(buffered)
    }

    /// Aggregates `input` (all of it, or one partition's rows).
    fn run(
        &mut self,
        input: Box<dyn Operator + 'a>,
        seed: Option<FastAgg<'a>>,
        depth: u32,
    ) -> Result<()> {
        if hash_agg::eligible(self.group, self.aggs) {
            self.run_fast(input, seed, depth)
        } else {
            self.consume(input, depth)
        }
    }
}

impl Operator for AggregateOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if let Some(input) = self.input.take() {
            self.run(input, None, 0)?;
        }
        loop {
            if let Some(b) = emit_rows(&self.out, &mut self.emitted, &self.types) {
                return Ok(Some(b));
            }
            // The next spilled partition, read back with a split one level
            // deeper should it still not fit.
            let Some(p) = self.spill.pending.pop() else {
                return Ok(None);
            };
            self.out = Vec::new();
            self.emitted = 0;
            self.spill.stats.batches += 1;
            let input = Box::new(FilesOp::new(p.files, self.ctx));
            self.run(input, p.seed, p.depth + 1)?;
        }
    }

    fn hash_stats(&self) -> Option<HashStats> {
        (!self.group.is_empty()).then_some(self.spill.stats)
    }
}

/// Removes duplicate rows, streaming: a row is emitted the first time it
/// is seen. The rows seen are a [`KeySet`] over all columns, so a
/// duplicate is found from the batch's own slots (no `Value` per row).
///
/// Memory is bounded as the aggregation's (PostgreSQL runs DISTINCT as a
/// hash aggregate grouping by every column): once the set outgrows
/// `hash_mem`, rows already seen are still dropped while unseen rows go to
/// partition files by their hash; when the input ends the set is dropped
/// and each partition is deduplicated the same way, one level deeper. A
/// row is in the set or in one partition, never both, so each distinct row
/// is emitted exactly once.
pub struct DistinctOp<'a> {
    /// The input, then each partition's rows.
    input: Box<dyn Operator + 'a>,
    /// Created from the first batch's column types.
    seen: Option<KeySet>,
    /// The current pass's unseen rows, once it spills.
    parts: Option<Partitions>,
    /// The split depth of the current pass (0: the input itself).
    depth: u32,
    /// Partitions still to do and the figures for EXPLAIN ANALYZE.
    spill: SpillState<'a>,
    ctx: &'a ExecContext,
}

impl<'a> DistinctOp<'a> {
    /// DISTINCT over `input`.
    pub fn new(input: Box<dyn Operator + 'a>, ctx: &'a ExecContext) -> DistinctOp<'a> {
        DistinctOp {
            input,
            seen: None,
            parts: None,
            depth: 0,
            spill: SpillState::new(),
            ctx,
        }
    }

    /// The rows of `b` to emit: first seen and kept in memory.
    fn filter(&mut self, b: &Batch) -> Result<Vec<bool>> {
        let cols = columns(b);
        let seen = self
            .seen
            .get_or_insert_with(|| KeySet::new(&cols.iter().map(|c| c.ty).collect::<Vec<_>>()));
        let Some(p) = &mut self.parts else {
            let keep = (0..b.len).map(|i| seen.insert(&cols, i).1).collect();
            let mem = seen.mem_bytes();
            self.spill.stats.peak_bytes = self.spill.stats.peak_bytes.max(mem as u64);
            if mem > self.ctx.hash_mem && seen.len() > 1 && self.depth < MAX_DEPTH {
                self.parts = Some(Partitions::new(partition_count(self.ctx.hash_mem)));
            }
            return Ok(keep);
        };
        // Spilling: duplicates of rows in memory are dropped, the others
        // wait in their partition.
        let n = p.len();
        let part: Vec<u32> = (0..b.len)
            .map(|i| match seen.find(&cols, i) {
                Some(_) => u32::MAX,
                None => partition_of(self.spill.hasher.hash_row(self.depth, &cols, i), n),
            })
            .collect();
        p.add(self.ctx, b, &part)?;
        Ok(vec![false; b.len])
    }
}

/// A batch's columns as the slices a [`KeySet`] reads.
fn columns(b: &Batch) -> Vec<&Vector> {
    b.columns.iter().collect()
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            while let Some(b) = self.input.next()? {
                self.ctx.check_cancel()?;
                let keep = self.filter(&b)?;
                let out = b.filter(&keep);
                if out.len > 0 {
                    return Ok(Some(out));
                }
            }
            // The pass is over: its set goes, its partitions wait.
            finish_spill(self.ctx, self.parts.take(), self.depth, &mut self.spill)?;
            let Some(p) = self.spill.pending.pop() else {
                return Ok(None);
            };
            self.seen = None;
            self.depth = p.depth + 1;
            self.spill.stats.batches += 1;
            self.input = Box::new(FilesOp::new(p.files, self.ctx));
        }
    }

    fn hash_stats(&self) -> Option<HashStats> {
        Some(self.spill.stats)
    }
}

/// INTERSECT / EXCEPT [ALL]: the right input's rows are counted per
/// distinct row of a [`KeySet`], then the left input streams against the
/// counts; output rows are gathered from the left batches.
///
/// Memory is bounded by `hash_mem` the way a hash join bounds it: once the
/// table outgrows it, rows of either side whose row is not in the table go
/// to partition files by their hash (right rows while the right side is
/// read, left rows after), and the rows of the table finish in memory.
/// Then each pair of partitions (right and left rows of the same hashes)
/// is a set operation of its own, one level deeper. A distinct row is in
/// the table or in one pair, never both, so its counts are complete
/// wherever it is.
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
    /// Once spilling: the partitions of the right rows, then of the left
    /// rows, of rows not in the table.
    parts: Option<(Partitions, Partitions)>,
    /// The split depth of the current pass (0: the inputs themselves).
    depth: u32,
    /// Pairs still to do: right and left rows of a partition, its depth.
    pending: Vec<(Option<SpillFile>, SpillFile, u32)>,
    hasher: PartitionHasher,
    stats: HashStats,
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
            parts: None,
            depth: 0,
            pending: Vec::new(),
            hasher: PartitionHasher::default(),
            stats: HashStats {
                batches: 1,
                batches_original: 1,
                ..HashStats::default()
            },
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

    /// After rows entered the table: starts spilling once it is too big.
    fn check_memory(&mut self) {
        let mem = self.rows.mem_bytes() + self.counts.capacity() * 9;
        self.stats.peak_bytes = self.stats.peak_bytes.max(mem as u64);
        if self.parts.is_none()
            && mem > self.ctx.hash_mem
            && self.rows.len() > 1
            && self.depth < MAX_DEPTH
        {
            let n = partition_count(self.ctx.hash_mem);
            self.parts = Some((Partitions::new(n), Partitions::new(n)));
        }
    }

    /// The id of row `i` when the row is (or may enter) the table; `None`
    /// when it went to partition `part` of the spill.
    fn route(&mut self, cols: &[&Vector], i: usize, part: &mut Vec<u32>) -> Option<usize> {
        let Some((p, _)) = &self.parts else {
            part.push(u32::MAX);
            return Some(self.id(cols, i));
        };
        if let Some(id) = self.rows.find(cols, i) {
            part.push(u32::MAX);
            return Some(id as usize);
        }
        let h = self.hasher.hash_row(self.depth, cols, i);
        part.push(partition_of(h, p.len()));
        None
    }

    /// Counts the right input's rows.
    fn count_right(&mut self, mut right: Box<dyn Operator + 'a>) -> Result<()> {
        let mut part = Vec::with_capacity(BATCH_SIZE);
        while let Some(b) = right.next()? {
            self.ctx.check_cancel()?;
            let cols = columns(&b);
            part.clear();
            for i in 0..b.len {
                if let Some(id) = self.route(&cols, i, &mut part) {
                    self.counts[id] += 1;
                }
            }
            if let Some((p, _)) = &mut self.parts {
                p.add(self.ctx, &b, &part)?;
            }
            self.check_memory();
        }
        Ok(())
    }

    /// Whether the left row `id` is emitted, updating its counts.
    fn emit(&mut self, id: usize) -> bool {
        let count = &mut self.counts[id];
        if self.all {
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
        }
    }

    /// The pass is over: queues its partition pairs and starts the next
    /// pair; false when none is left.
    fn next_pass(&mut self) -> Result<bool> {
        if let Some((right, left)) = self.parts.take() {
            let (right, rbytes) = right.finish(self.ctx)?;
            let (left, lbytes) = left.finish(self.ctx)?;
            self.stats.disk_bytes += rbytes + lbytes;
            // Only left rows are ever emitted: a pair without any is done.
            for (r, l) in right.into_iter().zip(left) {
                if let Some(l) = l {
                    self.pending.push((r, l, self.depth));
                }
            }
        }
        let Some((r, l, depth)) = self.pending.pop() else {
            return Ok(false);
        };
        self.rows = KeySet::new(&self.types);
        self.counts = Vec::new();
        self.emitted = Vec::new();
        self.depth = depth + 1;
        self.stats.batches += 1;
        self.right = Some(Box::new(FilesOp::new(r.into_iter().collect(), self.ctx)));
        self.left = Box::new(FilesOp::new(vec![l], self.ctx));
        Ok(true)
    }
}

impl Operator for SetOpOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            if let Some(right) = self.right.take() {
                self.count_right(right)?;
            }
            let mut part = Vec::with_capacity(BATCH_SIZE);
            while let Some(b) = self.left.next()? {
                self.ctx.check_cancel()?;
                let cols = columns(&b);
                let mut keep = Vec::with_capacity(b.len);
                part.clear();
                for i in 0..b.len {
                    if let Some(id) = self.route(&cols, i, &mut part) {
                        if self.emit(id) {
                            keep.push(i as u32);
                        }
                    }
                }
                if let Some((_, p)) = &mut self.parts {
                    p.add(self.ctx, &b, &part)?;
                }
                self.check_memory();
                if !keep.is_empty() {
                    let mut out = b.take(&keep);
                    for (c, ty) in out.columns.iter_mut().zip(&self.types) {
                        c.ty = *ty;
                    }
                    return Ok(Some(out));
                }
            }
            if !self.next_pass()? {
                return Ok(None);
            }
        }
    }

    fn hash_stats(&self) -> Option<HashStats> {
        Some(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Value;

    /// Batches handed out one by one.
    struct Rows(Vec<Batch>);

    impl Operator for Rows {
        fn next(&mut self) -> Result<Option<Batch>> {
            Ok(self.0.pop())
        }
    }

    /// `n` rows of (int, text) with duplicates and NULLs, in batches.
    fn rows(n: i32, modulo: i32, offset: i32) -> Rows {
        let mut batches = Vec::new();
        let mut start = 0;
        while start < n {
            let end = (start + BATCH_SIZE as i32).min(n);
            let k: Vec<Value> = (start..end)
                .map(|g| match g % 997 {
                    0 => Value::Null,
                    _ => Value::Int4(g % modulo + offset),
                })
                .collect();
            let t: Vec<Value> = (start..end)
                .map(|g| match g % 991 {
                    0 => Value::Null,
                    _ => Value::text(&format!("v{}", (g % modulo + offset) % 700)),
                })
                .collect();
            batches.push(Batch::new(vec![
                Vector::from_values(DataType::Int4, &k),
                Vector::from_values(DataType::Text, &t),
            ]));
            start = end;
        }
        Rows(batches)
    }

    /// Every row `op` returns, sorted, and its hash figures.
    fn drain(mut op: Box<dyn Operator + '_>) -> (Vec<String>, HashStats) {
        let mut out = Vec::new();
        while let Some(b) = op.next().unwrap() {
            out.extend((0..b.len).map(|i| format!("{:?}", b.row(i))));
        }
        out.sort();
        (out, op.hash_stats().unwrap())
    }

    #[test]
    fn distinct_and_set_operations_spill_with_the_in_memory_answers() {
        let dir = tempfile::tempdir().unwrap();
        let big = ExecContext::for_tests(Some(dir.path().to_path_buf()));
        let mut tiny = ExecContext::for_tests(Some(dir.path().to_path_buf()));
        tiny.hash_mem = 16 << 10;
        let types = vec![DataType::Int4, DataType::Text];
        let distinct = |ctx| {
            drain(Box::new(DistinctOp::new(
                Box::new(rows(30000, 9000, 0)),
                ctx,
            )))
        };
        let (want, st) = distinct(&big);
        assert_eq!(st.batches, 1);
        assert!(want.len() > 9000, "9000 keys and some NULLs");
        let (got, st) = distinct(&tiny);
        assert!(st.batches > 1 && st.disk_bytes > 0, "{st:?}");
        assert_eq!(got, want);
        for (intersect, all) in [(true, false), (true, true), (false, false), (false, true)] {
            let setop = |ctx| {
                let left = Box::new(rows(30000, 9000, 0));
                let right = Box::new(rows(20000, 8000, 3000));
                let op = SetOpOp::new(left, right, intersect, all, types.clone(), ctx);
                drain(Box::new(op))
            };
            let (want, st) = setop(&big);
            assert_eq!(st.batches, 1);
            assert!(!want.is_empty());
            let (got, st) = setop(&tiny);
            assert!(
                st.batches > 1 && st.disk_bytes > 0,
                "{intersect} {all}: {st:?}"
            );
            assert_eq!(got, want, "intersect {intersect} all {all}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    /// `n` rows of (group, text): 67 rows a group, in order of group (so
    /// new groups keep arriving), about a tenth of the texts
    /// NULL, many repeated.
    fn ordered_rows(n: i32) -> Rows {
        let mut batches = Vec::new();
        let mut start = 0;
        while start < n {
            let end = (start + BATCH_SIZE as i32).min(n);
            let k: Vec<Value> = (start..end).map(|g| Value::Int4(g / 67)).collect();
            let t: Vec<Value> = (start..end)
                .map(|g| match (g * 7919) % 10007 {
                    x if x % 10 == 0 => Value::Null,
                    x => Value::text(&format!("w{}", x % 401)),
                })
                .collect();
            batches.push(Batch::new(vec![
                Vector::from_values(DataType::Int4, &k),
                Vector::from_values(DataType::Text, &t),
            ]));
            start = end;
        }
        batches.reverse();
        Rows(batches)
    }

    #[test]
    fn ordered_aggregates_spill_with_the_in_memory_answers() {
        let dir = tempfile::tempdir().unwrap();
        let big = ExecContext::for_tests(Some(dir.path().to_path_buf()));
        let mut tiny = ExecContext::for_tests(Some(dir.path().to_path_buf()));
        tiny.hash_mem = 16 << 10;
        let text = Expr::column(1, DataType::Text);
        let call = |distinct: bool, descending: bool| AggCall {
            func: AggFunc::StringAgg,
            arg: Some(text.clone()),
            more_args: vec![Expr::constant(Value::text(","), DataType::Text)],
            order: vec![AggOrder {
                expr: text.clone(),
                descending,
                nulls_first: descending,
            }],
            distinct,
            filter: None,
            ty: DataType::Text,
        };
        let group = [Expr::column(0, DataType::Int4)];
        let aggs = [call(false, true), call(true, false)];
        let types = vec![DataType::Int4, DataType::Text, DataType::Text];
        let run = |ctx| {
            let op = AggregateOp::new(
                Box::new(ordered_rows(20000)),
                &group,
                &aggs,
                types.clone(),
                ctx,
            );
            drain(Box::new(op))
        };
        let (want, st) = run(&big);
        assert_eq!(st.batches, 1);
        let (got, st) = run(&tiny);
        assert!(st.batches > 1 && st.disk_bytes > 0, "{st:?}");
        assert_eq!(got, want);
        // The answer itself, from the rows sorted here.
        // 299 groups (20,000 rows, 67 a group), none without a text.
        let mut per_group: Vec<Vec<String>> = vec![Vec::new(); 299];
        for b in ordered_rows(20000).0 {
            for i in 0..b.len {
                let (Value::Int4(g), Value::Text(t)) = (b.columns[0].get(i), b.columns[1].get(i))
                else {
                    continue;
                };
                per_group[g as usize].push(t.to_string());
            }
        }
        let mut expected: Vec<String> = per_group
            .into_iter()
            .enumerate()
            .map(|(g, mut ts)| {
                ts.sort();
                let mut distinct = ts.clone();
                distinct.dedup();
                ts.reverse();
                let row = vec![
                    Value::Int4(g as i32),
                    Value::text(&ts.join(",")),
                    Value::text(&distinct.join(",")),
                ];
                format!("{row:?}")
            })
            .collect();
        expected.sort();
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert_eq!(g, e);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
