//! The executor: plans run as trees of operators exchanging batches.
//!
//! - [`vector`]: column vectors and batches, the unit of data; [`strvec`]:
//!   the string vector text columns live in; [`strset`]: the arena hash set
//!   text group keys and join keys use; [`keyset`]: the hash set of rows
//!   (several columns, any types) DISTINCT, set operations, GROUP BY,
//!   `count(DISTINCT)`, `IN (subquery)` and multi-key joins use.
//! - [`expr`]: compiled expressions evaluated over whole batches, with the
//!   typed loops of [`kernels`] for the hot operators.
//! - [`functions`]: scalar functions as the evaluator calls them.
//! - [`scan`], [`basic`], [`agg`], [`sort`], [`join`]: the operators;
//!   [`indexscan`] and [`bitmapheap`] (over a [`tidbitmap`]) read through
//!   B-tree indexes; [`recursive`] runs `WITH RECURSIVE`.
//!
//! Shape (see docs/architecture.md's Executor section): operators pass batches of up to
//! [`vector::BATCH_SIZE`] rows (a scan passes whole pages' worth), never a
//! row per call; expressions are compiled once per statement; scans deform
//! only the columns the plan uses. Every operator checks the statement's
//! cancel flag once per batch it produces (57014).
//!
//! Lifetimes: an [`ExecContext`] owns what a statement's operators borrow
//! (the open heap relations, the snapshot); [`build`] returns operators tied
//! to it, so a scan can hold its heap's page iterator without reference
//! counting per page.

pub mod agg;
pub mod bitmapheap;
pub mod expr;
pub mod fastpath;
pub mod fkey;
pub mod groupagg;
pub mod index_maint;
pub mod indexscan;
pub mod join;
pub mod kernels;
pub mod lateral;
pub mod modify;
pub mod parallel;
pub mod plpgsql;
pub mod plpgsql_cond;
pub mod plpgsql_value;
pub mod progress;
pub mod qsort;
pub mod recursive;
pub mod rowwise;
pub mod scan;
pub mod sort;
pub mod spill;
pub mod srf;
pub mod strkernels;
pub mod subplan;
pub mod tidbitmap;
pub mod topn;
pub mod window;

// The data the executor moves lives in `crate::vector`; these names keep
// the executor's paths to it short.
pub use crate::nodes::func as functions;
pub use crate::vector::{self, keyset, strset, strvec};

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::access::heap::heapam::HeapRelation;
use crate::access::heap::scan::ParallelBlocks;
use crate::err;
use crate::error::Result;
use crate::nodes::{Node, Plan};
use crate::storage::RingSizes;
use crate::txn::Snapshot;
use crate::types::Value;
use expr::Expr;
use vector::Batch;

/// A running operator: produces batches until it returns `None`.
pub trait Operator {
    /// The next batch of rows, or `None` when done. Batches may be empty
    /// only if the operator says so by its own contract; consumers must
    /// accept empty batches.
    fn next(&mut self) -> Result<Option<Batch>>;

    /// After the last batch: what a scan in page-aggregation mode folded on
    /// its pages instead of returning rows ([`fastpath::page_agg`]), for its consumer
    /// to add in. `None` for every other operator. An operator that wraps
    /// another must pass this on.
    fn page_partial(&mut self) -> Option<fastpath::page_agg::PagePartial> {
        None
    }

    /// Pages a scan took from page summaries, skipped by them, and read
    /// (EXPLAIN ANALYZE's `Summaries:` line); `None` for an operator that
    /// does not use summaries.
    fn summary_counts(&self) -> Option<fastpath::summaries::SummaryCounts> {
        None
    }

    /// Pages a scan took from the packed column cache, and entries it
    /// made (EXPLAIN ANALYZE's `Packed Cache:` line); `None` for an
    /// operator that does not use the cache.
    fn packed_counts(&self) -> Option<(u64, u64)> {
        None
    }

    /// For the input of an aggregation grouped by one integer column: the
    /// pages a scan took from their summaries since the last call, as a
    /// partial per group key, for the aggregate to add in before the next
    /// batch ([`fastpath::summaries`]). Empty for every other operator; an
    /// operator that wraps another must pass this on.
    fn group_partials(&mut self) -> Vec<(i64, fastpath::page_agg::PagePartial)> {
        Vec::new()
    }

    /// Makes a scan stop answering pages for [`Operator::group_partials`]
    /// (it reads them): the aggregate has started spilling. An operator
    /// that wraps another must pass this on.
    fn stop_group_partials(&mut self) {}

    /// A hash join whose probe rows an aggregate directly above it may fold
    /// itself ([`fastpath::join_agg`]); `None` for every other operator.
    fn fused_probe(&mut self) -> Option<&mut dyn fastpath::join_agg::FusedProbe> {
        None
    }

    /// The rows this operator's own filter has rejected so far (EXPLAIN
    /// ANALYZE's `Rows Removed by Filter`); 0 for an operator without one.
    fn rows_removed(&self) -> u64 {
        0
    }

    /// A hash table's batches, memory and disk use so far (EXPLAIN
    /// ANALYZE); `None` for an operator without one.
    fn hash_stats(&self) -> Option<spill::HashStats> {
        None
    }

    /// Heap tuples an index-only scan read so far (EXPLAIN ANALYZE's
    /// `Heap Fetches`); `None` for every other operator.
    fn heap_fetches(&self) -> Option<u64> {
        None
    }

    /// A bitmap heap scan's page and recheck counts so far (EXPLAIN
    /// ANALYZE's `Heap Blocks` and `Rows Removed by Index Recheck`);
    /// `None` for every other operator.
    fn bitmap_stats(&self) -> Option<bitmapheap::BitmapStats> {
        None
    }
}

/// Everything a statement's operators share.
pub struct ExecContext {
    /// The statement's snapshot.
    pub snapshot: Snapshot,
    /// Set (by Ctrl-C) to cancel the statement.
    pub cancel: Arc<AtomicBool>,
    /// `work_mem` in bytes.
    pub work_mem: usize,
    /// What a hash table may hold before it spills, in bytes: `work_mem`
    /// times `hash_mem_multiplier`.
    pub hash_mem: usize,
    /// Where temporary files go (the data directory's `base/pgsql_tmp`;
    /// `None`: the system's temporary directory).
    pub temp_dir: Option<std::path::PathBuf>,
    /// The heaps the plan scans, by relfilenode.
    pub relations: HashMap<u32, Arc<HeapRelation>>,
    /// In a participant of a parallel plan: the driving scan's plan node
    /// (by address) and the blocks its participants share.
    pub parallel: Option<(usize, Arc<ParallelBlocks>)>,
    /// Where scans report their progress (the session's hook), if anywhere.
    pub progress: Option<progress::ProgressHook>,
    /// Whether aggregates may use page summaries (`enable_page_summaries`).
    pub page_summaries: bool,
    /// The packed column cache's memory bound, bytes (`packed_cache_size`;
    /// 0: scans do not use it).
    pub packed_cache: usize,
    /// The session's buffer-ring sizes: its scans' bulk-read rings and its
    /// bulk loads' write rings are requested with them.
    pub ring_sizes: RingSizes,
    /// Working tables handed from a Recursive Union to the WorkTable Scan
    /// of the recursive term it is building ([`recursive`]).
    pub worktables: WorkTables,
    /// Under READ COMMITTED: the transactions, for the snapshots a VOLATILE
    /// function's queries take as they run (`None` under REPEATABLE READ).
    pub read_committed: Option<Arc<crate::txn::TxnManager>>,
    /// In a VOLATILE function's body under READ COMMITTED: the snapshots
    /// its queries read with, instead of `snapshot`.
    pub query_snapshots: Option<Arc<crate::txn::QuerySnapshots>>,
}

/// The working tables in hand-over, by number.
pub type WorkTables = std::sync::Mutex<HashMap<usize, recursive::WorkTable>>;

impl ExecContext {
    /// A context for operator tests: an empty snapshot's worth of nothing,
    /// default memory limits, temporary files in `temp_dir`.
    #[cfg(test)]
    pub fn for_tests(temp_dir: Option<std::path::PathBuf>) -> ExecContext {
        ExecContext {
            snapshot: Snapshot {
                xmin: 0,
                xmax: 0,
                xip: Vec::new(),
                current_xid: 0,
                curcid: 0,
            },
            cancel: Arc::new(AtomicBool::new(false)),
            work_mem: 4 << 20,
            hash_mem: 8 << 20,
            temp_dir,
            relations: HashMap::new(),
            parallel: None,
            progress: None,
            page_summaries: true,
            packed_cache: crate::access::packed_cache::DEFAULT_LIMIT,
            ring_sizes: RingSizes::default(),
            worktables: WorkTables::default(),
            read_committed: None,
            query_snapshots: None,
        }
    }

    /// A copy for a participant of a parallel plan.
    pub fn participant(&self, shared: (usize, Arc<ParallelBlocks>)) -> ExecContext {
        ExecContext {
            parallel: Some(shared),
            ..self.with_snapshot(self.snapshot.clone())
        }
    }

    /// A copy reading with `snapshot` (not parallel, no working tables).
    pub fn with_snapshot(&self, snapshot: Snapshot) -> ExecContext {
        ExecContext {
            snapshot,
            cancel: self.cancel.clone(),
            work_mem: self.work_mem,
            hash_mem: self.hash_mem,
            temp_dir: self.temp_dir.clone(),
            relations: self.relations.clone(),
            parallel: None,
            progress: self.progress.clone(),
            page_summaries: self.page_summaries,
            packed_cache: self.packed_cache,
            ring_sizes: self.ring_sizes,
            worktables: WorkTables::default(),
            read_committed: self.read_committed.clone(),
            query_snapshots: self.query_snapshots.clone(),
        }
    }

    /// Hands the working table numbered `id` to the scan about to be built.
    pub fn put_worktable(&self, id: usize, table: recursive::WorkTable) -> Result<()> {
        self.worktables
            .lock()
            .map_err(|_| crate::error::Error::internal("working tables poisoned"))?
            .insert(id, table);
        Ok(())
    }

    /// The working table numbered `id`, taken out of hand-over.
    pub fn take_worktable(&self, id: usize) -> Option<recursive::WorkTable> {
        self.worktables.lock().ok()?.remove(&id)
    }

    /// Fails with 57014 when the statement was cancelled.
    #[inline]
    pub fn check_cancel(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(err!(
                QueryCanceled,
                "canceling statement due to user request"
            ));
        }
        Ok(())
    }

    /// The shared blocks when `scan` is this participant's driving scan.
    pub fn shared_blocks(&self, scan: &Plan) -> Option<&ParallelBlocks> {
        match &self.parallel {
            Some((node, blocks)) if *node == scan as *const Plan as usize => Some(blocks),
            _ => None,
        }
    }

    /// The heap with this relfilenode (opened before the plan was built).
    pub fn relation(&self, relfilenode: u32) -> Result<&HeapRelation> {
        self.relations
            .get(&relfilenode)
            .map(|r| r.as_ref())
            .ok_or_else(|| {
                crate::error::Error::internal(format!("relation {relfilenode} not opened"))
            })
    }
}

/// The relfilenodes a plan scans.
pub fn scanned_relations(plan: &Plan, out: &mut Vec<u32>) {
    match &plan.node {
        Node::SeqScan { table, .. } => out.push(table.relfilenode),
        Node::IndexScan(s) => out.push(s.table.relfilenode),
        Node::BitmapHeapScan(s) => out.push(s.table.relfilenode),
        _ => {}
    }
    for c in plan.children() {
        scanned_relations(c, out);
    }
}

/// What EXPLAIN ANALYZE measured of one plan node (nodes numbered in
/// pre-order, as [`Plan::children`] lists them).
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeStats {
    /// Rows the node returned.
    pub rows: u64,
    /// Calls of `next`.
    pub calls: u64,
    /// PostgreSQL's loops: the participants of a parallel plan that ran the
    /// node, 0 outside one (shown as 1: heapdb never rescans a node).
    /// `rows`, `first` and `total` are then sums over them.
    pub loops: u64,
    /// Rows the node's filter rejected (summed over loops like `rows`).
    pub removed: u64,
    /// Time to the first batch, in seconds.
    pub first: f64,
    /// Total time in the node and below, in seconds.
    pub total: f64,
    /// Buffer counters in the node and below.
    pub buffers: crate::storage::BufferUsage,
    /// A hash table's memory figures (hash aggregation, a hash join's
    /// build side).
    pub hash: Option<spill::HashStats>,
    /// A scan's pages answered from summaries, skipped, and read.
    pub summaries: Option<fastpath::summaries::SummaryCounts>,
    /// A scan's pages from the packed column cache, and entries it made.
    pub packed: Option<(u64, u64)>,
    /// An index-only scan's heap fetches.
    pub heap_fetches: Option<u64>,
    /// A bitmap heap scan's pages and rechecks.
    pub bitmap: Option<bitmapheap::BitmapStats>,
}

/// Per-node measurements of an EXPLAIN ANALYZE run.
#[derive(Debug, Default)]
pub struct Instrumentation {
    /// One entry per plan node, in pre-order.
    pub nodes: std::cell::RefCell<Vec<NodeStats>>,
}

/// Wraps an operator to measure it.
struct Instrumented<'a> {
    inner: Box<dyn Operator + 'a>,
    id: usize,
    instr: &'a Instrumentation,
}

impl Operator for Instrumented<'_> {
    fn page_partial(&mut self) -> Option<fastpath::page_agg::PagePartial> {
        self.inner.page_partial()
    }

    fn group_partials(&mut self) -> Vec<(i64, fastpath::page_agg::PagePartial)> {
        self.inner.group_partials()
    }

    fn stop_group_partials(&mut self) {
        self.inner.stop_group_partials()
    }

    fn next(&mut self) -> Result<Option<Batch>> {
        let start = std::time::Instant::now();
        let buf0 = crate::storage::BufferUsage::current();
        let r = self.inner.next();
        let elapsed = start.elapsed().as_secs_f64();
        let bufs = crate::storage::BufferUsage::current().since(&buf0);
        let mut nodes = self.instr.nodes.borrow_mut();
        let n = &mut nodes[self.id];
        if n.calls == 0 {
            n.first = elapsed;
        }
        n.calls += 1;
        n.total += elapsed;
        n.buffers = n.buffers + bufs;
        if let Ok(Some(b)) = &r {
            n.rows += b.len as u64;
        }
        n.removed = self.inner.rows_removed();
        n.hash = self.inner.hash_stats();
        n.summaries = self.inner.summary_counts();
        n.packed = self.inner.packed_counts();
        n.heap_fetches = self.inner.heap_fetches();
        n.bitmap = self.inner.bitmap_stats();
        r
    }

    fn hash_stats(&self) -> Option<spill::HashStats> {
        self.inner.hash_stats()
    }

    fn heap_fetches(&self) -> Option<u64> {
        self.inner.heap_fetches()
    }
}

/// Builds the operator tree of `plan`.
pub fn build<'a>(plan: &'a Plan, ctx: &'a ExecContext) -> Result<Box<dyn Operator + 'a>> {
    build_with(plan, ctx, None, &mut 0)
}

/// Builds the operator tree of `plan`, measuring every node into `instr`.
pub fn build_instrumented<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    instr: &'a Instrumentation,
) -> Result<Box<dyn Operator + 'a>> {
    let mut count = 0;
    count_nodes(plan, &mut count);
    *instr.nodes.borrow_mut() = vec![NodeStats::default(); count];
    build_with(plan, ctx, Some(instr), &mut 0)
}

fn count_nodes(plan: &Plan, n: &mut usize) {
    *n += 1;
    if let Node::BitmapHeapScan(s) = &plan.node {
        *n += s.bitmap.count();
    }
    for c in plan.children() {
        count_nodes(c, n);
    }
}

/// Builds `plan`'s operators, numbering its nodes from `*next_id` (their
/// pre-order positions in the whole plan) for the instrumentation.
pub(crate) fn build_with<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    build_node(plan, ctx, instr, next_id, scan::ScanUse::Rows)
}

/// A sequential scan serving its consumer as `usage` says (see
/// [`build_node`]); aggregates are folded on pages only when not measured.
fn seq_scan<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    measured: bool,
    usage: scan::ScanUse<'a>,
) -> Result<Box<dyn Operator + 'a>> {
    let Node::SeqScan {
        table,
        columns,
        with_tid,
        filter,
        ..
    } = &plan.node
    else {
        unreachable!("called for a sequential scan")
    };
    let heap = ctx.relation(table.relfilenode)?;
    if let Some(f) = filter.as_ref().filter(|f| rowwise::per_row(f)) {
        // Row by row, the filter over every visible row: no page-level
        // counting or folding, which would skip the calls.
        let op = scan::SeqScanOp::new(
            ctx,
            heap,
            table,
            columns,
            *with_tid,
            None,
            ctx.shared_blocks(plan),
        )?;
        return Ok(per_row_filter(Box::new(op), f, ctx));
    }
    let op = scan::SeqScanOp::new(
        ctx,
        heap,
        table,
        columns,
        *with_tid,
        filter.as_ref(),
        ctx.shared_blocks(plan),
    )?;
    let op = match usage {
        scan::ScanUse::Rows | scan::ScanUse::Bounded(_) => op,
        scan::ScanUse::RowsOnly => op.rows_only(),
        scan::ScanUse::Aggregates(aggs) if !measured => op.page_agg(aggs),
        scan::ScanUse::Grouped(key, aggs) if !measured => op.page_group(key, aggs),
        scan::ScanUse::Aggregates(_) | scan::ScanUse::Grouped(..) => op,
    };
    // Whole all-visible pages from their summaries, under EXPLAIN ANALYZE
    // too (its `Summaries:` line counts them).
    Ok(Box::new(match usage {
        scan::ScanUse::RowsOnly if ctx.page_summaries => op.with_summaries(&[], None, heap, table),
        scan::ScanUse::Aggregates(aggs) if ctx.page_summaries => {
            op.with_summaries(aggs, None, heap, table)
        }
        scan::ScanUse::Grouped(key, aggs) if ctx.page_summaries => {
            op.with_summaries(aggs, Some(key), heap, table)
        }
        _ => op,
    }))
}

/// A scan's filter `predicate` evaluated one row at a time over `scan`
/// (the scan built without it): rows are read only until the consumer
/// has what it asks for.
fn per_row_filter<'a>(
    scan: Box<dyn Operator + 'a>,
    predicate: &'a Expr,
    ctx: &'a ExecContext,
) -> Box<dyn Operator + 'a> {
    Box::new(rowwise::FilterOp {
        input: Box::new(rowwise::SingleRowsOp::new(scan)),
        predicate,
        ctx,
        removed: 0,
    })
}

/// `input`, passed on a row at a time when one of `exprs`, the
/// expressions of the operator taking it, must be evaluated row by row
/// ([`rowwise::SingleRowsOp`]).
fn per_row_input<'a, 'e>(
    input: Box<dyn Operator + 'a>,
    exprs: impl IntoIterator<Item = &'e Expr>,
) -> Box<dyn Operator + 'a> {
    if exprs.into_iter().any(rowwise::per_row) {
        Box::new(rowwise::SingleRowsOp::new(input))
    } else {
        input
    }
}

/// A bare `count(*)` of the sequential scan `input` (`naggs` copies of it):
/// the scan's node id is the next one, its subtree numbered past.
fn count_star<'a>(
    input: &'a Plan,
    naggs: usize,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    let Node::SeqScan { table, .. } = &input.node else {
        unreachable!("is_count_star checked the input")
    };
    let scan_id = *next_id;
    count_nodes(input, next_id);
    Ok(Box::new(scan::CountStarOp::new(
        ctx,
        ctx.relation(table.relfilenode)?,
        naggs,
        ctx.shared_blocks(input),
        instr.map(|i| (i, scan_id)),
    )))
}

/// The operator of an `IndexNestLoop` node: the outer input built as any
/// node, the inner index scan rescanned per outer row and measured by the
/// join, per probe.
fn index_nest_loop<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    let Node::IndexNestLoop {
        left,
        right,
        kind,
        left_key,
        residual,
    } = &plan.node
    else {
        return Err(err!(InternalError, "not an index nested loop"));
    };
    let Node::IndexScan(spec) = &right.node else {
        return Err(err!(
            InternalError,
            "the inner side of an index nested loop is not an index scan"
        ));
    };
    let outer = build_with(left, ctx, instr, next_id)?;
    let inner_id = *next_id;
    count_nodes(right, next_id);
    Ok(Box::new(indexscan::IndexNestLoopOp::new(
        outer,
        indexscan::IndexScanOp::new(ctx, spec, None)?,
        *kind,
        left_key,
        residual.as_ref(),
        left.types(),
        right.types(),
        instr.map(|i| (i, inner_id)),
    )))
}

/// [`build_with`]; a sequential scan at the top of `plan` serves its
/// consumer as `usage` says: its rows, only how many pass its filter (for
/// an aggregation that only counts rows, [`scan::counts_rows_only`]), or
/// aggregates computed on its pages ([`fastpath::page_agg`]; not under EXPLAIN
/// ANALYZE, whose row counts are of the rows a node returns).
pub(crate) fn build_node<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
    usage: scan::ScanUse<'a>,
) -> Result<Box<dyn Operator + 'a>> {
    let id = *next_id;
    *next_id += 1;
    if let Node::Gather { input, .. } = &plan.node {
        // The participants build the input themselves.
        count_nodes(input, next_id);
    }
    let mut build = |p: &'a Plan| build_with(p, ctx, instr, next_id);
    let op: Box<dyn Operator + 'a> = match &plan.node {
        Node::SeqScan { .. } => seq_scan(plan, ctx, instr.is_some(), usage)?,
        Node::IndexScan(spec) => {
            let op = indexscan::IndexScanOp::new(ctx, spec, None)?;
            match spec.filter.as_ref().filter(|f| rowwise::per_row(f)) {
                Some(f) => per_row_filter(Box::new(op.without_filter()), f, ctx),
                None => Box::new(op),
            }
        }
        Node::BitmapHeapScan(spec) => bitmap_heap_scan(spec, ctx, instr, id, next_id)?,
        Node::IndexNestLoop { .. } => index_nest_loop(plan, ctx, instr, next_id)?,
        Node::Values { rows } => Box::new(scan::ValuesOp::new(rows, plan.types())),
        Node::Function { func, .. } => {
            Box::new(scan::FunctionOp::new(srf::resolve(func)?, plan.types()))
        }
        Node::Filter { input, predicate } => Box::new(rowwise::FilterOp {
            input: per_row_input(build(input)?, [predicate]),
            predicate,
            ctx,
            removed: 0,
        }),
        Node::Project { input, exprs } => Box::new(rowwise::ProjectOp {
            input: per_row_input(build(input)?, exprs),
            exprs,
        }),
        Node::Limit {
            input,
            limit,
            offset,
        } => limit_node(input, *limit, *offset, ctx, instr, next_id)?,
        Node::LimitTies {
            input,
            limit,
            offset,
            ties,
        } => Box::new(rowwise::LimitTiesOp {
            input: build(input)?,
            remaining: *limit,
            skip: *offset,
            ties,
            last: None,
            done: false,
        }),
        Node::Unique { input, columns } => Box::new(rowwise::UniqueOp {
            input: build(input)?,
            columns,
            last: None,
        }),
        Node::Append { inputs } => Box::new(rowwise::AppendOp {
            inputs: inputs.iter().map(&mut build).collect::<Result<Vec<_>>>()?,
            current: 0,
        }),
        Node::Gather {
            input,
            workers,
            finalize: false,
        } => Box::new(parallel::GatherRowsOp::new(
            input,
            *workers,
            ctx,
            instr.map(|i| (i, id + 1)),
        )),
        Node::Gather {
            input,
            workers,
            finalize: true,
        } => Box::new(parallel::GatherOp::new(
            input,
            *workers,
            plan.types(),
            ctx,
            instr.map(|i| (i, id + 1)),
        )),
        Node::Aggregate { .. } | Node::GroupAggregate { .. } => {
            aggregate_node(plan, ctx, instr, next_id)?
        }
        Node::Distinct { input } => Box::new(agg::DistinctOp::new(build(input)?, ctx)),
        Node::CteScan { input, .. } => build(input)?,
        Node::RecursiveUnion { .. } => recursive_union(plan, ctx, instr, next_id)?,
        Node::WorkTableScan { worktable, .. } => {
            Box::new(recursive::WorkTableScanOp::new(*worktable, ctx)?)
        }
        Node::SetOp {
            left,
            right,
            intersect,
            all,
        } => Box::new(agg::SetOpOp::new(
            build(left)?,
            build(right)?,
            *intersect,
            *all,
            plan.types(),
            ctx,
        )),
        Node::Sort { input, keys } => {
            let mut op = sort::SortOp::new(build(input)?, keys, plan.types(), ctx);
            if let scan::ScanUse::Bounded(bound) = usage {
                op.bound = Some(bound);
            }
            Box::new(op)
        }
        Node::WindowAgg { input, window } => Box::new(window::WindowAggOp::new(
            build(input)?,
            window,
            input.types(),
            plan.types(),
            ctx,
        )),
        Node::HashJoin { .. } | Node::NestedLoop { .. } => join_node(plan, ctx, instr, next_id)?,
        Node::Lateral { left, right, .. } => {
            let outer = build(left)?;
            // The right side is built per left row, unmeasured.
            count_nodes(right, next_id);
            Box::new(
                lateral::LateralOp::new(outer, plan, ctx)
                    .ok_or_else(|| err!(InternalError, "not a lateral join"))?,
            )
        }
    };
    Ok(match instr {
        Some(instr) => Box::new(Instrumented {
            inner: op,
            id,
            instr,
        }),
        None => op,
    })
}

/// A LIMIT over `input`; a sort right below knows how many rows are wanted
/// (PostgreSQL's ExecSetTupleBound) and keeps only those, as a top-N heap.
fn limit_node<'a>(
    input: &'a Plan,
    limit: Option<u64>,
    offset: u64,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    let usage = match limit {
        Some(l) if l > 0 && matches!(input.node, Node::Sort { .. }) => {
            let bound = l.saturating_add(offset);
            scan::ScanUse::Bounded(usize::try_from(bound).unwrap_or(usize::MAX))
        }
        _ => scan::ScanUse::Rows,
    };
    Ok(Box::new(rowwise::LimitOp {
        input: build_node(input, ctx, instr, next_id, usage)?,
        remaining: limit,
        skip: offset,
    }))
}

/// The operator of an `Aggregate` or `GroupAggregate` node and its input.
fn aggregate_node<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    let mut build = |p: &'a Plan| build_with(p, ctx, instr, next_id);
    Ok(match &plan.node {
        // A bare count(*) sums the visibility map's live counts and counts
        // line pointers of the other pages instead of producing empty rows;
        // under EXPLAIN ANALYZE too, with the count shown on the scan.
        Node::Aggregate { input, group, aggs } if scan::is_count_star(input, group, aggs) => {
            count_star(input, aggs.len(), ctx, instr, next_id)?
        }
        Node::Aggregate { input, group, aggs }
            if plan.node.exprs().into_iter().any(rowwise::per_row) =>
        {
            Box::new(agg::AggregateOp::new(
                Box::new(rowwise::SingleRowsOp::new(build(input)?)),
                group,
                aggs,
                plan.types(),
                ctx,
            ))
        }
        Node::Aggregate { input, group, aggs } => Box::new(agg::AggregateOp::new(
            build_node(input, ctx, instr, next_id, scan::scan_use(group, aggs))?,
            group,
            aggs,
            plan.types(),
            ctx,
        )),
        Node::GroupAggregate {
            input,
            group,
            aggs,
            order,
        } => Box::new(groupagg::GroupAggregateOp::new(
            build(input)?,
            group,
            aggs,
            order,
            plan.types(),
            ctx,
        )?),
        _ => return Err(err!(InternalError, "not an aggregation")),
    })
}

/// A hash join or a nested loop, its inputs built (and numbered) in turn.
fn join_node<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    Ok(match &plan.node {
        Node::HashJoin {
            left,
            right,
            kind,
            left_keys,
            right_keys,
            residual,
            build_left,
        } => Box::new(join::HashJoinOp::new(
            build_with(left, ctx, instr, next_id)?,
            build_with(right, ctx, instr, next_id)?,
            join::HashJoinSpec {
                kind: *kind,
                left_keys,
                right_keys,
                residual: residual.as_ref(),
                build_left: *build_left,
                left_types: left.types(),
                right_types: right.types(),
            },
            ctx,
        )),
        Node::NestedLoop {
            left,
            right,
            kind,
            condition,
        } => Box::new(join::NestedLoopOp::new(
            build_with(left, ctx, instr, next_id)?,
            build_with(right, ctx, instr, next_id)?,
            *kind,
            condition.as_ref(),
            right.types(),
            ctx,
        )),
        _ => unreachable!("called for a join"),
    })
}

/// A Recursive Union: the non-recursive term built now, the recursive
/// term's nodes numbered after it and built by the operator per iteration.
fn recursive_union<'a>(
    plan: &'a Plan,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    let Node::RecursiveUnion {
        nonrecursive,
        recursive,
        distinct,
        worktable,
    } = &plan.node
    else {
        return Err(err!(InternalError, "not a recursive union"));
    };
    let first = build_with(nonrecursive, ctx, instr, next_id)?;
    let recursive_id = *next_id;
    count_nodes(recursive, next_id);
    Ok(Box::new(recursive::RecursiveUnionOp::new(
        first,
        recursive,
        recursive_id,
        *worktable,
        *distinct,
        ctx,
        instr,
    )))
}

/// A Bitmap Heap Scan; its bitmap nodes are numbered right after it.
fn bitmap_heap_scan<'a>(
    spec: &'a crate::nodes::plannodes::BitmapHeapScan,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
    id: usize,
    next_id: &mut usize,
) -> Result<Box<dyn Operator + 'a>> {
    *next_id += spec.bitmap.count();
    let op = bitmapheap::BitmapHeapScanOp::new(ctx, spec, instr.map(|i| (i, id)))?;
    Ok(match spec.filter.as_ref().filter(|f| rowwise::per_row(f)) {
        Some(f) => per_row_filter(Box::new(op.without_filter()), f, ctx),
        None => Box::new(op),
    })
}

/// Runs `plan` to completion and returns all its rows.
pub fn collect_rows(plan: &Plan, ctx: &ExecContext) -> Result<Vec<Vec<Value>>> {
    let mut op = build(plan, ctx)?;
    let mut rows = Vec::new();
    while let Some(b) = op.next()? {
        for i in 0..b.len {
            rows.push(b.row(i));
        }
    }
    Ok(rows)
}

/// Evaluates an expression that reads no column (LIMIT counts, function
/// arguments in FROM).
pub fn eval_const(e: &Expr) -> Result<Value> {
    let one = Batch::empty_rows(1);
    Ok(e.eval(&one)?.get(0))
}
