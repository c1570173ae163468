//! Parallel execution: [`GatherOp`] runs a [`Node::Gather`] that combines
//! an aggregation's partial states, [`GatherRowsOp`] one that passes rows up.
//!
//! On its first call the operator starts `workers` threads (scoped to the
//! call) and takes part itself, as PostgreSQL's leader does. Each
//! participant builds its own operator tree of the aggregate's input, in
//! which the driving scan ([`crate::nodes::driving_scan`]) takes
//! chunks of blocks from one shared [`ParallelBlocks`] counter, and folds
//! the rows into its own [`FastAgg`] partial state; a bare `count(*)` counts
//! its chunks through the visibility map instead. The leader merges the
//! partial states in participant order and emits the finished groups.
//!
//! Each participant keeps its state within `hash_mem` (as each of
//! PostgreSQL's participants does): past it, rows of new keys go to the
//! participant's own partition files ([`super::agg::fast_fold`]). The
//! leader then splits the merged groups by the same partitions and
//! aggregates each partition's files into its own groups, as a serial
//! aggregation finishes its partitions ([`AggregateOp::resume`]).
//!
//! Every participant reads under the statement's snapshot and checks the
//! statement's cancel flag once per batch; the first error of any
//! participant is the statement's error (the others finish their chunks
//! first, as every participant's loop ends when the blocks run out). No
//! lock is shared between participants beyond the buffer pool's own. For a
//! table big enough for a bulk-read ring, the participants split one ring
//! between them (the [`ParallelBlocks`] knows how many they are), so a
//! parallel scan holds no more buffers than a serial one.
//!
//! [`GatherRowsOp`] runs a plain Gather (PostgreSQL's `Gather` without an
//! aggregate above it): each participant runs the whole input on the
//! blocks it takes, and the leader passes up every participant's rows, in
//! participant order, once all have finished (the node above is a Sort or
//! a DISTINCT, which reads all its input before returning a row).
//!
//! Buffer counters: each worker's hits and reads are credited to the
//! leader's thread when it finishes, so `\timing` and EXPLAIN BUFFERS count
//! them. EXPLAIN ANALYZE: each participant measures its operators into its own
//! [`Instrumentation`]; the figures are summed into the statement's (rows,
//! calls, times and buffers add up, and each node counts the participants
//! that ran it as its loops: EXPLAIN divides rows and times by them, as
//! PostgreSQL's per-loop averages).

use std::sync::Arc;

use super::agg::{fold_input, AggregateOp, Pending, SpillState};
use super::expr::Expr;
use super::fastpath::hash_agg::FastAgg;
use super::spill::{partition_count, HashStats, PartitionHasher, SpillFile};
use super::{build_node, scan, ExecContext, Instrumentation, NodeStats, Operator};
use crate::access::heap::scan::ParallelBlocks;
use crate::error::{Error, Result};
use crate::nodes::driving_scan;
use crate::nodes::{AggCall, Node, Plan};
use crate::storage::BufferUsage;
use crate::types::{DataType, Value};

use super::vector::Batch;

/// Runs an aggregate in `workers + 1` participants and combines them.
pub struct GatherOp<'a> {
    /// The aggregate node every participant runs.
    aggregate: &'a Plan,
    /// Worker threads beside the leader.
    workers: usize,
    /// Output types.
    types: Vec<DataType>,
    ctx: &'a ExecContext,
    /// EXPLAIN ANALYZE: the statement's figures and the aggregate's node id.
    instr: Option<(&'a Instrumentation, usize)>,
    /// The merged groups and the spilled partitions, emitted (and the
    /// partitions aggregated) as a serial aggregation's, once computed.
    finalize: Option<AggregateOp<'a>>,
}

/// What one participant hands the leader: its partial state, its
/// figures, its buffer work, its spilled partitions (by partition number)
/// and its hash table's figures.
type Partial<'p> = (
    FastAgg<'p>,
    Vec<NodeStats>,
    BufferUsage,
    Option<Vec<Option<SpillFile>>>,
    HashStats,
);

impl<'a> GatherOp<'a> {
    /// A parallel run of `aggregate` (an [`Node::Aggregate`]).
    pub fn new(
        aggregate: &'a Plan,
        workers: usize,
        types: Vec<DataType>,
        ctx: &'a ExecContext,
        instr: Option<(&'a Instrumentation, usize)>,
    ) -> GatherOp<'a> {
        GatherOp {
            aggregate,
            workers,
            types,
            ctx,
            instr,
            finalize: None,
        }
    }

    fn run(&self) -> Result<AggregateOp<'a>> {
        let Node::Aggregate { input, group, aggs } = &self.aggregate.node else {
            return Err(Error::internal(
                "Gather over a node that is not an aggregate",
            ));
        };
        let scan = driving_scan(input)
            .ok_or_else(|| Error::internal("parallel aggregate without a driving scan"))?;
        let Node::SeqScan { table, .. } = &scan.node else {
            return Err(Error::internal("driving scan is not a sequential scan"));
        };
        let heap = self.ctx.relation(table.relfilenode)?;
        let blocks = Arc::new(
            ParallelBlocks::new(heap.nblocks()?, self.workers + 1)
                .with_ring_sizes(self.ctx.ring_sizes),
        );
        let shared = (scan as *const Plan as usize, blocks);
        let count_star = scan::is_count_star(input, group, aggs);
        let measure = self.instr.is_some();
        // The aggregate's node id; its input's nodes follow it.
        let agg_id = self.instr.map_or(0, |(_, id)| id);
        let first = agg_id + 1;
        let (leader, aggregate) = (self.ctx, self.aggregate);
        let hasher = PartitionHasher::default();
        let styles = crate::types::ThreadStyles::current();
        let participate = || -> Result<Partial<'a>> {
            styles.apply();
            let buffers0 = BufferUsage::current();
            let ctx = leader.participant(shared.clone());
            let instr = Instrumentation::default();
            if measure {
                let mut n = 0;
                super::count_nodes(aggregate, &mut n);
                *instr.nodes.borrow_mut() = vec![NodeStats::default(); agg_id + n];
            }
            let mut state = FastAgg::new(group, aggs);
            // Each participant keeps to `hash_mem`, as each of
            // PostgreSQL's does; rows of keys it has no room for go to its
            // own partition files.
            let mut parts = None;
            let mut hash = HashStats {
                batches: 1,
                batches_original: 1,
                ..HashStats::default()
            };
            let start = std::time::Instant::now();
            if count_star {
                let heap = ctx.relation(table.relfilenode)?;
                let op = scan::CountStarOp::new(
                    &ctx,
                    heap,
                    aggs.len(),
                    ctx.shared_blocks(scan),
                    measure.then_some((&instr, first)),
                );
                let mut op: Box<dyn Operator + '_> = Box::new(op);
                while let Some(b) = op.next()? {
                    if let Some(Value::Int8(n)) = b.columns.first().map(|c| c.get(0)) {
                        state.add_rows(n);
                    }
                }
            } else {
                let mut id = first;
                let usage = scan::scan_use(group, aggs);
                let instr = measure.then_some(&instr);
                let mut op = build_node(input, &ctx, instr, &mut id, usage)?;
                let peak = &mut hash.peak_bytes;
                fold_input(&ctx, &mut state, &mut parts, &hasher, 0, &mut *op, peak)?;
            }
            hash.peak_bytes = hash.peak_bytes.max(state.mem_bytes() as u64);
            let files = match parts {
                Some(p) => {
                    let (files, bytes) = p.finish(&ctx)?;
                    hash.disk_bytes += bytes;
                    Some(files)
                }
                None => None,
            };
            let mut stats = instr.nodes.into_inner();
            if let Some(agg) = stats.get_mut(agg_id).filter(|_| measure) {
                agg.rows = state.groups() as u64;
                agg.calls = 1;
                // A hash aggregate returns its first group once it has
                // read all its input.
                agg.total = start.elapsed().as_secs_f64();
                agg.first = agg.total;
                agg.buffers = BufferUsage::current().since(&buffers0);
                agg.hash = (!group.is_empty()).then_some(hash);
            }
            Ok((
                state,
                stats,
                BufferUsage::current().since(&buffers0),
                files,
                hash,
            ))
        };
        let results: Vec<Result<Partial<'a>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.workers).map(|_| s.spawn(participate)).collect();
            let mut all = vec![participate()];
            for h in handles {
                all.push(
                    h.join()
                        .unwrap_or_else(|_| Err(Error::internal("a parallel worker panicked"))),
                );
            }
            all
        });
        let mut merged: Option<FastAgg<'a>> = None;
        let mut spilled: Vec<Vec<Option<SpillFile>>> = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            let (state, stats, buffers, files, _) = r?;
            spilled.extend(files);
            if i > 0 {
                // A worker's buffer work, counted in its own thread.
                buffers.credit_to_thread();
            }
            if let Some((instr, _)) = self.instr {
                add_stats(&mut instr.nodes.borrow_mut(), &stats);
            }
            match &mut merged {
                None => merged = Some(state),
                Some(m) => m.merge(&state),
            }
        }
        let merged = merged.ok_or_else(|| Error::internal("no participant ran"))?;
        self.finalize(group, aggs, merged, spilled, hasher)
    }

    /// The leader's part once the participants are merged: the finished
    /// groups, or (when some participant spilled) the groups of partitions
    /// nobody spilled into and the other partitions still to aggregate.
    fn finalize(
        &self,
        group: &'a [Expr],
        aggs: &'a [AggCall],
        merged: FastAgg<'a>,
        spilled: Vec<Vec<Option<SpillFile>>>,
        hasher: PartitionHasher,
    ) -> Result<AggregateOp<'a>> {
        let mut spill = SpillState::new();
        spill.hasher = hasher;
        spill.stats.peak_bytes = merged.mem_bytes() as u64;
        if spilled.is_empty() {
            let out = merged.finish()?;
            return Ok(AggregateOp::resume(
                group,
                aggs,
                self.types.clone(),
                self.ctx,
                out,
                spill,
            ));
        }
        // Some participant spilled: a key may be in one participant's
        // memory and in another's partition. Split the merged groups by the
        // same partitions, so each partition's rows are folded into its
        // own groups; partitions nobody spilled into are finished now.
        let n = partition_count(self.ctx.hash_mem);
        let mut files: Vec<Vec<SpillFile>> = (0..n).map(|_| Vec::new()).collect();
        for by_part in spilled {
            for (p, f) in by_part.into_iter().enumerate() {
                files[p].extend(f);
            }
        }
        let mut out = Vec::new();
        for (seed, files) in merged.split(&spill.hasher, 0, n).into_iter().zip(files) {
            if files.is_empty() {
                out.extend(seed.finish()?);
            } else {
                spill.pending.push(Pending {
                    seed: Some(seed),
                    files,
                    depth: 0,
                });
            }
        }
        Ok(AggregateOp::resume(
            group,
            aggs,
            self.types.clone(),
            self.ctx,
            out,
            spill,
        ))
    }
}

/// Runs a plain Gather's input in `workers + 1` participants and returns
/// all their rows.
pub struct GatherRowsOp<'a> {
    /// The plan every participant runs.
    input: &'a Plan,
    /// Worker threads beside the leader.
    workers: usize,
    ctx: &'a ExecContext,
    /// EXPLAIN ANALYZE: the statement's figures and the input's first node
    /// id.
    instr: Option<(&'a Instrumentation, usize)>,
    /// The participants' rows, once run (popped from the back).
    rows: Option<Vec<Batch>>,
}

/// What one participant of a plain Gather hands the leader: its rows, its
/// figures and its buffer work.
type RowsPartial = (Vec<Batch>, Vec<NodeStats>, BufferUsage);

impl<'a> GatherRowsOp<'a> {
    /// A parallel run of `input`, which has a driving scan
    /// ([`crate::nodes::gather_scan`]).
    pub fn new(
        input: &'a Plan,
        workers: usize,
        ctx: &'a ExecContext,
        instr: Option<(&'a Instrumentation, usize)>,
    ) -> GatherRowsOp<'a> {
        GatherRowsOp {
            input,
            workers,
            ctx,
            instr,
            rows: None,
        }
    }

    fn run(&self) -> Result<Vec<Batch>> {
        let scan = crate::nodes::gather_scan(self.input)
            .ok_or_else(|| Error::internal("parallel plan without a driving scan"))?;
        let Node::SeqScan { table, .. } = &scan.node else {
            return Err(Error::internal("driving scan is not a sequential scan"));
        };
        let heap = self.ctx.relation(table.relfilenode)?;
        let blocks = Arc::new(
            ParallelBlocks::new(heap.nblocks()?, self.workers + 1)
                .with_ring_sizes(self.ctx.ring_sizes),
        );
        let shared = (scan as *const Plan as usize, blocks);
        let first = self.instr.map_or(0, |(_, id)| id);
        let (leader, input, measure) = (self.ctx, self.input, self.instr.is_some());
        let styles = crate::types::ThreadStyles::current();
        let participate = || -> Result<RowsPartial> {
            styles.apply();
            let buffers0 = BufferUsage::current();
            let ctx = leader.participant(shared.clone());
            let instr = Instrumentation::default();
            if measure {
                let mut n = 0;
                super::count_nodes(input, &mut n);
                *instr.nodes.borrow_mut() = vec![NodeStats::default(); first + n];
            }
            let mut out = Vec::new();
            {
                let mut id = first;
                let mut op = build_node(
                    input,
                    &ctx,
                    measure.then_some(&instr),
                    &mut id,
                    scan::ScanUse::Rows,
                )?;
                while let Some(b) = op.next()? {
                    ctx.check_cancel()?;
                    out.push(b);
                }
            }
            let stats = instr.nodes.into_inner();
            Ok((out, stats, BufferUsage::current().since(&buffers0)))
        };
        let results: Vec<Result<RowsPartial>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.workers).map(|_| s.spawn(participate)).collect();
            let mut all = vec![participate()];
            for h in handles {
                all.push(
                    h.join()
                        .unwrap_or_else(|_| Err(Error::internal("a parallel worker panicked"))),
                );
            }
            all
        });
        let mut rows = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            let (batches, stats, buffers) = r?;
            if i > 0 {
                buffers.credit_to_thread();
            }
            if let Some((instr, _)) = self.instr {
                add_stats(&mut instr.nodes.borrow_mut(), &stats);
            }
            rows.extend(batches);
        }
        rows.reverse();
        Ok(rows)
    }
}

impl Operator for GatherRowsOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.rows.is_none() {
            self.rows = Some(self.run()?);
        }
        Ok(self.rows.as_mut().and_then(|r| r.pop()))
    }
}

/// Adds one participant's figures to the statement's: each node it ran
/// gains a loop, and its rows, times and buffers add up (EXPLAIN shows
/// per-loop averages of rows and times, as PostgreSQL does).
fn add_stats(into: &mut [NodeStats], from: &[NodeStats]) {
    for (a, b) in into.iter_mut().zip(from) {
        if b.calls == 0 {
            continue;
        }
        a.loops += 1;
        a.first += b.first;
        a.total += b.total;
        a.rows += b.rows;
        a.removed += b.removed;
        if let Some(s) = &b.summaries {
            let t = a.summaries.get_or_insert_with(Default::default);
            t.answered += s.answered;
            t.skipped += s.skipped;
            t.scanned += s.scanned;
            t.windows += s.windows;
        }
        if let Some((hits, built)) = b.packed {
            let t = a.packed.get_or_insert((0, 0));
            t.0 += hits;
            t.1 += built;
        }
        a.calls += b.calls;
        a.buffers = a.buffers + b.buffers;
        if let Some(h) = &b.hash {
            a.hash.get_or_insert_with(HashStats::default).add(h);
        }
    }
}

impl Operator for GatherOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.finalize.is_none() {
            self.finalize = Some(self.run()?);
        }
        match &mut self.finalize {
            Some(f) => f.next(),
            None => Ok(None),
        }
    }

    fn hash_stats(&self) -> Option<HashStats> {
        self.finalize.as_ref().and_then(|f| f.hash_stats())
    }
}
