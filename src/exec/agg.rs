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
//! [`DistinctOp`] and [`SetOpOp`] key their rows the same way and spill the
//! same way (see each).

use super::expr::{truth_mask, Expr};
use super::fastpath::hash_agg::{self, FastAgg};
use super::keyset::KeySet;
use super::spill::{
    partition_count, partition_of, FilesOp, HashStats, PartitionHasher, Partitions, SpillFile,
};
use super::vector::{Batch, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::Result;
use crate::nodes::AggCall;
use crate::types::agg::{Accumulator, AggFunc};
use crate::types::{DataType, Value};

/// Per-group state: one accumulator per aggregate, and the values already
/// seen by each DISTINCT aggregate.
struct Group {
    accs: Vec<Accumulator>,
    seen: Vec<Option<KeySet>>,
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
        while let Some(b) = input.next()? {
            self.ctx.check_cancel()?;
            let mem = fast_fold(
                self.ctx,
                &mut state,
                &mut parts,
                &self.spill.hasher,
                depth,
                &b,
            )?;
            self.spill.stats.peak_bytes = self.spill.stats.peak_bytes.max(mem as u64);
        }
        if let Some(p) = input.page_partial() {
            state.add_partial(&p);
        }
        let mem = state.mem_bytes() as u64;
        self.spill.stats.peak_bytes = self.spill.stats.peak_bytes.max(mem);
        finish_spill(self.ctx, parts, depth, &mut self.spill)?;
        self.out = state.finish()?;
        Ok(())
    }

    /// Approximate bytes of the general path's table.
    fn general_bytes(&self, index: &KeySet, groups: &[Group]) -> usize {
        let per_group = std::mem::size_of::<Group>()
            + self.aggs.len()
                * (std::mem::size_of::<Accumulator>() + std::mem::size_of::<Option<KeySet>>());
        index.mem_bytes() + groups.len() * per_group
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
                self.fold(&kept, &key_cols, &mut index, &mut groups, &mut gids)?;
                continue;
            }
            self.fold(&b, &key_cols, &mut index, &mut groups, &mut gids)?;
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
                for acc in &g.accs {
                    row.push(acc.finish()?);
                }
                Ok(row)
            })
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// Folds the rows of `b` (whose group keys are `key_cols`) into
    /// `groups`, numbering new keys in `index`.
    fn fold(
        &self,
        b: &Batch,
        key_cols: &[&Vector],
        index: &mut KeySet,
        groups: &mut Vec<Group>,
        gids: &mut Vec<u32>,
    ) -> Result<()> {
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
                    if null || !seen.insert(&[&col], row).1 {
                        continue;
                    }
                }
                if a.func == AggFunc::CountStar {
                    state.accs[k].add_row();
                } else if null {
                    // array_agg keeps NULL inputs as NULL elements.
                    if a.func == AggFunc::ArrayAgg {
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
        Ok(())
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
}
