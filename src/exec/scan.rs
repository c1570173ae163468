//! Leaf operators: the sequential heap scan, VALUES, and set-returning
//! functions.
//!
//! [`SeqScanOp`] visits the heap a page at a time (one shared content lock
//! per page, see [`crate::access::heap::scan`]) and deforms only the plan's
//! columns, up to the last one needed, straight into typed column builders:
//! an `int4` column becomes a `Vec<i32>` without a `Value` in between. A
//! batch is emitted once it holds at least [`BATCH_SIZE`] rows, so a batch
//! is a few whole pages. A text column's bytes are copied from the page into
//! the column's [`super::strvec::StrVec`] buffer: no allocation per value. The scan's own filter (WHERE conjuncts pushed into
//! it) runs on each batch before it leaves.
//!
//! Column-major fast path: when every column the plan reads is fixed-width
//! and NULL-free on a page, [`super::fastpath::fixed_scan`] fills the column vectors
//! without a per-tuple deform; any other page takes the general per-tuple
//! path here. A filtered `count(*)` (a rows-only scan) whose filter
//! [`super::fastpath::page_pred`] compiles counts such a page's passing rows on the
//! page instead, and only the count joins the batch: no column vectors
//! written and read back (`count(*) where b >= 0` over 20M rows: 38 -> 32
//! ms; the accounts' `filter_scan`: 25 -> 23 ms). Likewise the input of an
//! aggregation without GROUP BY ([`ScanUse::Aggregates`]) folds such pages
//! into the aggregates on the page ([`super::fastpath::page_agg`]) and returns only
//! the other pages' rows (`sum(b)` over `t`'s 20M rows: 36.8 -> 31.1 ms;
//! over the accounts' wider tuples, within the machine's noise).

use crate::access::heap::pageops::push_normal;
use crate::access::heap::scan::{HeapScan, ParallelBlocks, Visible};
use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::HeapRelation;
use crate::catalog::TableDef;
use crate::error::Result;
use crate::storage::prefetch::Ahead;
use crate::storage::{page, BlockNumber};
use crate::types::{self, BinaryOp, DataType, Value};

use super::expr::{count_true, truth_mask, Expr};
use super::fastpath::fixed_scan::{
    all_normal_starts, data_needed, fixed_layout, fixed_starts, fusable, fused_all_normal,
    fused_page_values, push_fixed, FixedColumn, PageColumns, FUSED_MAX, MAX_TUPLES,
};
use super::fastpath::packed::{Cached, Looked, PackedScan};
use super::fastpath::page_agg::{PageAgg, PagePartial};
use super::fastpath::page_group::PageGroups;
use super::fastpath::page_pred::{Mask, PagePred};
use super::fastpath::summaries::{SummaryCounts, SummaryPlan, SummaryScan};
use super::progress::{PageCounter, Progress, ProgressUnit};
use super::vector::{Batch, Data, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::nodes::TableFunc;

/// The storage description of a table's tuples.
pub fn tuple_desc(table: &TableDef) -> Result<TupleDesc> {
    tuple::desc_of_types(table.columns.iter().map(|c| &c.ty))
}

/// Appends one attribute's stored bytes (or NULL) to a column builder.
#[inline]
pub(crate) fn push_datum(v: &mut Vector, bytes: Option<&[u8]>) {
    let Some(b) = bytes else {
        v.push_null();
        return;
    };
    let pushed = match &mut v.data {
        Data::I32(x) if b.len() == 4 => {
            x.push(i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            true
        }
        Data::I64(x) if b.len() == 8 => {
            x.push(i64::from_le_bytes(b.try_into().expect("8 bytes")));
            true
        }
        Data::I16(x) if b.len() == 2 => {
            x.push(i16::from_le_bytes([b[0], b[1]]));
            true
        }
        Data::F64(x) if b.len() == 8 => {
            x.push(f64::from_le_bytes(b.try_into().expect("8 bytes")));
            true
        }
        // Text straight from the page into the vector's buffer.
        Data::Str(x) => {
            x.push_bytes(b);
            true
        }
        _ => false,
    };
    if pushed {
        if let Some(n) = &mut v.nulls {
            n.push(false);
        }
    } else {
        let value = Value::decode(&v.ty, b);
        v.push(&value);
    }
}

/// Sequential scan of one heap.
pub struct SeqScanOp<'a> {
    scan: HeapScan<'a>,
    desc: TupleDesc,
    columns: &'a [usize],
    /// Deform attributes `0..upto`.
    upto: usize,
    with_tid: bool,
    filter: Option<&'a Expr>,
    ctx: &'a ExecContext,
    builders: Vec<Vector>,
    /// Rows in the builders (also for scans of no column).
    pending: usize,
    done: bool,
    /// Pages visited, for the session's progress hook.
    pages: PageCounter<'a>,
    /// The column-major fast path's layout, when it applies.
    fixed: Option<Vec<FixedColumn>>,
    /// Tuple data starts of the current page (reused).
    starts: Vec<usize>,
    /// The NORMAL line pointers of an ALL_VISIBLE page outside the fast
    /// path (reused).
    all: Vec<u16>,
    /// The consumer needs only how many rows pass the filter (`count(*)`
    /// of a filtered scan): batches leave with no columns, uncompacted.
    rows_only: bool,
    /// The filter compiled for pages ([`super::fastpath::page_pred`]): what a
    /// rows-only scan counts on a page, or `page_agg`'s mask.
    page_pred: Option<PagePred>,
    /// Rows of this batch already counted on their page (they passed the
    /// filter), beside the `pending` ones in the builders.
    counted: usize,
    /// Rows the filter rejected so far, for EXPLAIN ANALYZE (the pages
    /// folded into `page_agg`, which EXPLAIN ANALYZE does not use, are not
    /// counted).
    removed: u64,
    /// One page's values of the fused columns, for `page_pred` and
    /// `page_agg` (reused).
    page_cols: Box<PageColumns>,
    /// `page_pred`'s masks (reused).
    masks: Vec<Mask>,
    /// For the input of an aggregation without GROUP BY: its aggregates
    /// compiled for pages ([`super::fastpath::page_agg`]), and what the pages folded
    /// so far contribute (taken by [`Operator::page_partial`]).
    page_agg: Option<(PageAgg, PagePartial)>,
    /// For the input of an aggregation grouped by a small `int4` key: the
    /// pages folded per key on the page ([`super::fastpath::page_group`]),
    /// handed over by [`Operator::group_partials`].
    page_group: Option<PageGroups>,
    /// Rows of this batch folded into `page_agg` (they bound a batch's
    /// work like the rows in the builders, but never leave as rows).
    folded: usize,
    /// Masked values for `page_agg` (reused).
    scratch: Box<[i32; MAX_TUPLES]>,
    /// Whole all-visible pages taken from their summaries (or skipped by
    /// them) before they are read ([`super::fastpath::summaries`]); shared
    /// with the heap scan's block filter.
    summaries: Option<SharedSummaries<'a>>,
    /// ALL_VISIBLE pages' columns from the packed column cache
    /// ([`super::fastpath::packed`]), when the scan reads only packed
    /// columns and the cache is on.
    packed: Option<PackedScan<'a>>,
}

/// Where a page's values go when they are folded or counted on the page
/// (`page_agg`, `page_pred`).
struct OnPage<'s> {
    page_agg: &'s mut Option<(PageAgg, PagePartial)>,
    page_group: &'s mut Option<PageGroups>,
    page_pred: Option<&'s PagePred>,
    masks: &'s mut Vec<Mask>,
    scratch: &'s mut [i32; MAX_TUPLES],
    folded: &'s mut usize,
    counted: &'s mut usize,
    removed: &'s mut u64,
}

impl OnPage<'_> {
    /// Whether pages are folded or counted at all.
    #[inline]
    fn on_page(&self) -> bool {
        self.page_agg.is_some() || self.page_pred.is_some() || self.page_group.is_some()
    }

    /// Folds (or counts) the page's `n` rows of the fused columns `cols`;
    /// false when the page was left to reach the consumer as rows (a
    /// grouped fold that declined it).
    #[inline]
    fn fold(&mut self, cols: &[&[i32]; FUSED_MAX], n: usize) -> bool {
        if let Some(g) = self.page_group.as_mut() {
            let folded = g.add_page(cols, n);
            if folded {
                *self.folded += n;
            }
            return folded;
        }
        match (self.page_agg.as_mut(), self.page_pred) {
            (Some((agg, part)), pred) => {
                let mask = pred.map(|p| p.mask(cols, n, self.masks));
                agg.add_page(part, cols, n, mask, self.scratch);
                *self.folded += n;
            }
            (None, Some(pred)) => {
                let passed = pred.count(cols, n, self.masks);
                *self.counted += passed;
                *self.removed += (n - passed) as u64;
            }
            (None, None) => unreachable!("folded only with page_agg or page_pred"),
        }
        true
    }
}

impl OnPage<'_> {
    /// Takes a page's packed columns `cols` (`n` rows, in the fused
    /// layout): folds (or counts) its rows when the scan does that on
    /// pages, else appends them to `builders`. Returns the rows appended.
    #[inline]
    fn take_packed(
        &mut self,
        cols: [&[i32]; FUSED_MAX],
        n: usize,
        fixed: &[FixedColumn],
        builders: &mut [Vector],
    ) -> usize {
        if self.on_page() && self.fold(&cols, n) {
            return 0;
        }
        for (k, c) in fixed.iter().enumerate() {
            push_i32s(&mut builders[c.out], cols[k]);
        }
        n
    }
}

impl OnPage<'_> {
    /// Takes the packed columns of ALL_VISIBLE page `pg` (block `block`,
    /// whose shared lock the caller holds) as [`OnPage::take_packed`]
    /// does: its entry when the look-up before the read found one, else
    /// read from the page and stored. `None` when the page has no packed
    /// columns (the fused loop declines it).
    #[allow(clippy::too_many_arguments)]
    fn read_packed(
        &mut self,
        pk: &mut PackedScan<'_>,
        looked: Looked,
        block: BlockNumber,
        pg: &[u8],
        ahead: Ahead,
        fixed: &[FixedColumn],
        builders: &mut [Vector],
    ) -> Result<Option<usize>> {
        let n = match looked {
            // The summaries wanted the page read: its entry, if still there.
            Looked::Hit => match pk.cached(block) {
                Cached::Hit(h) => {
                    return Ok(Some(self.take_packed(h.cols, h.rows, fixed, builders)));
                }
                _ => None,
            },
            Looked::Miss(gen) => pk.build(block, gen, pg, ahead)?,
            Looked::Declined => None,
        };
        Ok(n.map(|n| {
            let cols = pk.built_columns(n);
            self.take_packed(cols, n, fixed, builders)
        }))
    }
}

/// Whether the scan's summaries want block `block`'s page read now, to
/// write its summary ([`SummaryScan::fill_wanted`]).
#[inline]
fn wants_fill(summaries: Option<&SharedSummaries<'_>>, block: BlockNumber) -> bool {
    summaries.is_some_and(|s| s.borrow_mut().fill_wanted(block))
}

/// Appends `vals` to the `int4`/`date` builder `v` (no NULLs).
#[inline]
fn push_i32s(v: &mut Vector, vals: &[i32]) {
    let Data::I32(x) = &mut v.data else {
        unreachable!("a packed column is an int4 or date vector");
    };
    x.extend_from_slice(vals);
    if let Some(nulls) = &mut v.nulls {
        nulls.resize(nulls.len() + vals.len(), false);
    }
}

type SharedSummaries<'a> = std::rc::Rc<std::cell::RefCell<SummaryScan<'a>>>;

impl<'a> SeqScanOp<'a> {
    /// Starts scanning `heap` (the table `table`) under the context's
    /// snapshot.
    pub fn new(
        ctx: &'a ExecContext,
        heap: &'a HeapRelation,
        table: &TableDef,
        columns: &'a [usize],
        with_tid: bool,
        filter: Option<&'a Expr>,
        shared: Option<&'a ParallelBlocks>,
    ) -> Result<SeqScanOp<'a>> {
        let mut types: Vec<DataType> = columns.iter().map(|&i| table.columns[i].ty).collect();
        let desc = tuple_desc(table)?;
        let fixed = if with_tid || columns.is_empty() {
            None
        } else {
            fixed_layout(&desc, columns, &types)
        };
        if with_tid {
            types.push(DataType::Int8);
        }
        let packed = match &fixed {
            Some(f) if ctx.packed_cache > 0 && fusable(f) => {
                crate::access::packed_cache::set_limit(ctx.packed_cache);
                let all: Vec<DataType> = table.columns.iter().map(|c| c.ty).collect();
                PackedScan::new(heap, &desc, &all, columns, f)
            }
            _ => None,
        };
        let mut scan = match shared {
            Some(blocks) => heap.scan_shared(&ctx.snapshot, blocks)?,
            None => heap.scan_with(&ctx.snapshot, &ctx.ring_sizes)?,
        };
        // The participants never wait on each other between chunks.
        scan.claim_ahead();
        Ok(SeqScanOp {
            pages: PageCounter::new(ctx.progress.as_ref(), u64::from(scan.nblocks()), shared),
            scan,
            desc,
            columns,
            upto: columns.iter().map(|&c| c + 1).max().unwrap_or(0),
            with_tid,
            filter,
            ctx,
            builders: types
                .iter()
                .map(|t| Vector::with_capacity(*t, BATCH_SIZE + 300))
                .collect(),
            pending: 0,
            done: false,
            fixed,
            starts: Vec::new(),
            all: Vec::new(),
            rows_only: false,
            page_pred: None,
            counted: 0,
            removed: 0,
            page_cols: Box::new([[0; MAX_TUPLES]; FUSED_MAX]),
            masks: Vec::new(),
            page_agg: None,
            page_group: None,
            folded: 0,
            scratch: Box::new([0; MAX_TUPLES]),
            summaries: None,
            packed,
        })
    }

    fn take_batch(&mut self) -> Batch {
        let cols: Vec<Vector> = self
            .builders
            .iter_mut()
            .map(|b| {
                let fresh = Vector::with_capacity(b.ty, BATCH_SIZE + 300);
                std::mem::replace(b, fresh)
            })
            .collect();
        let len = self.pending;
        self.pending = 0;
        Batch { columns: cols, len }
    }
}

impl Operator for SeqScanOp<'_> {
    fn page_partial(&mut self) -> Option<PagePartial> {
        let own = self.page_agg.take().map(|(_, part)| part);
        match &self.summaries {
            Some(s) if !self.rows_only && !s.borrow().plan().grouped() => {
                let mut s = s.borrow_mut();
                let empty = s.plan().empty();
                let from = std::mem::replace(&mut s.part, empty);
                let mut p = own.unwrap_or_else(|| s.plan().empty());
                s.plan().merge(&mut p, &from);
                Some(p)
            }
            _ => own,
        }
    }

    fn summary_counts(&self) -> Option<SummaryCounts> {
        self.summaries.as_ref().map(|s| s.borrow().counts)
    }

    fn packed_counts(&self) -> Option<(u64, u64)> {
        self.packed.as_ref().map(|p| (p.hits(), p.built))
    }

    fn group_partials(&mut self) -> Vec<(i64, PagePartial)> {
        let mut out = match &self.summaries {
            Some(s) => s.borrow_mut().take_groups(),
            None => Vec::new(),
        };
        if let Some(g) = &mut self.page_group {
            out.extend(g.take());
        }
        out
    }

    fn stop_group_partials(&mut self) {
        if let Some(s) = &self.summaries {
            s.borrow_mut().stop_grouping();
        }
        if let Some(g) = &mut self.page_group {
            g.stop();
        }
    }

    fn rows_removed(&self) -> u64 {
        self.removed
    }

    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            self.ctx.check_cancel()?;
            while !self.done && self.pending + self.counted + self.folded < BATCH_SIZE {
                let Some(block) = self.scan.next_block()? else {
                    self.done = true;
                    break;
                };
                let Some(cached) = self.answer_cached(block) else {
                    continue;
                };
                let (columns, upto, with_tid, desc) =
                    (self.columns, self.upto, self.with_tid, &self.desc);
                let builders = &mut self.builders;
                let (fixed, starts) = (self.fixed.as_deref(), &mut self.starts);
                let fuse = fixed.is_some_and(fusable);
                let all = &mut self.all;
                let page_pred = self.page_pred.as_ref();
                let (page_cols, masks, counted, removed) = (
                    &mut *self.page_cols,
                    &mut self.masks,
                    &mut self.counted,
                    &mut self.removed,
                );
                let (page_agg, page_group, folded, scratch) = (
                    &mut self.page_agg,
                    &mut self.page_group,
                    &mut self.folded,
                    &mut *self.scratch,
                );
                let packed = &mut self.packed;
                let page_rows =
                    self.scan
                        .read_block(block, |block, pg, vis, ahead| -> Result<usize> {
                            // Folded into the aggregates, or counted, on the
                            // page itself (`page_agg`, `page_pred`).
                            let mut on = OnPage {
                                page_agg,
                                page_group,
                                page_pred,
                                masks,
                                scratch,
                                folded,
                                counted,
                                removed,
                            };
                            // The page's packed columns: its entry, or read
                            // and stored when the page is ALL_VISIBLE.
                            if let (Some(pk), Some(fixed), true) =
                                (packed.as_mut(), fixed, matches!(vis, Visible::AllNormal))
                            {
                                if let Some(n) =
                                    on.read_packed(pk, cached, block, pg, ahead, fixed, builders)?
                                {
                                    return Ok(n);
                                }
                            }
                            if let (Some(fixed), true, Visible::AllNormal) =
                                (fixed, on.on_page(), vis)
                            {
                                if let Some(n) =
                                    fused_page_values(pg, desc.len(), fixed, page_cols, ahead)
                                {
                                    let cols: [&[i32]; FUSED_MAX] =
                                        std::array::from_fn(|k| &page_cols[k][..]);
                                    if on.fold(&cols, n) {
                                        return Ok(0);
                                    }
                                }
                            }
                            if let Some(fixed) = fixed {
                                if fuse && matches!(vis, Visible::AllNormal) {
                                    if let Some(n) =
                                        fused_all_normal(pg, desc.len(), fixed, builders, ahead)
                                    {
                                        return Ok(n);
                                    }
                                }
                                let need = data_needed(fixed);
                                let ok = match vis {
                                    Visible::Listed(v) => fixed_starts(pg, v, upto, need, starts),
                                    Visible::AllNormal => all_normal_starts(pg, upto, need, starts),
                                };
                                if ok {
                                    for &c in fixed {
                                        push_fixed(&mut builders[c.out], pg, starts, c);
                                    }
                                    return Ok(starts.len());
                                }
                            }
                            let visible: &[u16] = match vis {
                                Visible::Listed(v) => v,
                                Visible::AllNormal => {
                                    all.clear();
                                    push_normal(pg, page::max_offset(pg), all);
                                    all
                                }
                            };
                            let wanted = Wanted {
                                desc,
                                columns,
                                upto,
                                with_tid,
                            };
                            deform_page(block, pg, visible, &wanted, builders)
                        })?;
                match page_rows {
                    Some(n) => {
                        self.pending += n?;
                        self.pages.page();
                    }
                    None => self.done = true,
                }
            }
            let mut counted = std::mem::take(&mut self.counted);
            if let (Some(s), true) = (&self.summaries, self.rows_only) {
                // A rows-only scan's answered pages: their live tuples.
                counted += std::mem::take(&mut s.borrow_mut().rows) as usize;
            }
            self.folded = 0;
            if self.pending == 0 {
                // Only a rows-only scan counts on pages (`page_pred`).
                if counted > 0 {
                    return Ok(Some(Batch::empty_rows(counted)));
                }
                if self.done {
                    return Ok(None);
                }
                // Every page of this round was folded (`page_agg`): check
                // for a cancel, then go on.
                continue;
            }
            let batch = self.take_batch();
            let batch = self.apply_filter(batch, counted)?;
            if batch.len > 0 || self.done {
                return Ok(Some(batch));
            }
        }
    }
}

impl SeqScanOp<'_> {
    /// Looks block `block` up in the packed column cache before it is
    /// read: a block with an entry is answered from it and its page left
    /// unread (`None`), unless the summaries want that page's summary
    /// written now; else what reading it does with the cache.
    fn answer_cached(&mut self, block: BlockNumber) -> Option<Looked> {
        let (Some(pk), Some(fixed)) = (self.packed.as_ref(), self.fixed.as_deref()) else {
            return Some(Looked::Declined);
        };
        match pk.cached(block) {
            Cached::Hit(h) if !wants_fill(self.summaries.as_ref(), block) => {
                let mut on = OnPage {
                    page_agg: &mut self.page_agg,
                    page_group: &mut self.page_group,
                    page_pred: self.page_pred.as_ref(),
                    masks: &mut self.masks,
                    scratch: &mut self.scratch,
                    folded: &mut self.folded,
                    counted: &mut self.counted,
                    removed: &mut self.removed,
                };
                self.pending += on.take_packed(h.cols, h.rows, fixed, &mut self.builders);
                self.pages.page();
                None
            }
            other => Some(other.looked()),
        }
    }
}

impl<'a> SeqScanOp<'a> {
    /// Makes the scan return only row counts: batches of passing rows with
    /// no columns (see [`counts_rows_only`]).
    pub fn rows_only(mut self) -> Self {
        self.rows_only = true;
        if let (Some(f), Some(map)) = (self.filter, self.page_columns()) {
            self.page_pred = PagePred::compile(f, &|k| map.get(k).copied().flatten());
        }
        self
    }

    /// Makes the scan fold the pages the fused loop accepts into `aggs`
    /// (an aggregation without GROUP BY over this scan's columns) instead
    /// of returning their rows, when `aggs` and the filter compile for
    /// pages ([`super::fastpath::page_agg`]); the consumer adds
    /// [`Operator::page_partial`] in at the end. Otherwise nothing changes.
    pub fn page_agg(mut self, aggs: &[crate::nodes::AggCall]) -> Self {
        let Some(map) = self.page_columns() else {
            return self;
        };
        let col_of = |k: usize| map.get(k).copied().flatten();
        let Some(agg) = PageAgg::compile(aggs, &col_of) else {
            return self;
        };
        let pred = match self.filter {
            None => None,
            Some(f) => match PagePred::compile(f, &col_of) {
                Some(p) => Some(p),
                None => return self,
            },
        };
        self.page_pred = pred;
        let empty = agg.empty();
        self.page_agg = Some((agg, empty));
        self
    }

    /// Makes the scan fold the pages the fused loop accepts into per-key
    /// accumulators for `aggs` grouped by `key` (the input of the typed
    /// aggregation, without a filter) instead of returning their rows,
    /// when they compile for pages ([`super::fastpath::page_group`]); the
    /// consumer adds [`Operator::group_partials`] in. Otherwise nothing
    /// changes.
    pub fn page_group(mut self, key: &Expr, aggs: &[crate::nodes::AggCall]) -> Self {
        if self.filter.is_some() {
            return self;
        }
        let Some(map) = self.page_columns() else {
            return self;
        };
        self.page_group = PageGroups::compile(key, aggs, &|k| map.get(k).copied().flatten());
        self
    }

    /// Makes the scan take whole all-visible pages from their summaries, or
    /// leave them unread when the filter excludes every row, for `aggs`
    /// (an aggregation without GROUP BY; none for a rows-only scan) when
    /// they and the filter compile for summaries
    /// ([`super::fastpath::summaries`]); the answered pages reach the
    /// consumer through [`Operator::page_partial`] (as rows counted, in a
    /// rows-only scan). Otherwise nothing changes.
    pub fn with_summaries(
        mut self,
        aggs: &[crate::nodes::AggCall],
        key: Option<&Expr>,
        heap: &'a HeapRelation,
        table: &TableDef,
    ) -> Self {
        if self.with_tid {
            return self;
        }
        let plan = match key {
            None => SummaryPlan::compile(aggs, self.filter, self.columns, table),
            Some(key) => SummaryPlan::compile_grouped(key, aggs, self.filter, self.columns, table),
        };
        let Some(plan) = plan else {
            return self;
        };
        // The spec the pages this scan reads get their summaries under
        // (`SummaryScan::fill`): the table's columns now, as VACUUM sets it.
        if heap
            .summary_spec()
            .map_or(true, |s| s.desc.len() != table.columns.len())
        {
            let types: Vec<DataType> = table.columns.iter().map(|c| c.ty).collect();
            if let Ok(spec) = crate::access::sumfork::SummarySpec::of_types(&types) {
                heap.set_summary_spec(Some(spec));
            }
        }
        let shared = SummaryScan::shared(heap, plan, self.scan.nblocks());
        let filter = shared.clone();
        self.scan.skip_blocks(Box::new(move |block, end| {
            filter.borrow_mut().visit(block, end)
        }));
        let fill = shared.clone();
        self.scan.on_all_visible(Box::new(move |block, page| {
            fill.borrow_mut().fill(block, page)
        }));
        self.summaries = Some(shared);
        self
    }

    /// Which page column (position in the fused layout) fills each batch
    /// column, when the fused loop applies to this scan.
    fn page_columns(&self) -> Option<Vec<Option<usize>>> {
        let fixed = self.fixed.as_deref().filter(|f| fusable(f))?;
        Some(
            (0..self.builders.len())
                .map(|k| fixed.iter().position(|c| c.out == k))
                .collect(),
        )
    }
}

impl SeqScanOp<'_> {
    /// Applies the scan's filter to `batch`, counting the rows it removes:
    /// a rows-only scan returns just how many passed, plus the `counted`
    /// ones that passed on their pages.
    fn apply_filter(&mut self, batch: Batch, counted: usize) -> Result<Batch> {
        Ok(match self.filter {
            Some(f) if self.rows_only => {
                let passed = count_true(&*f.eval(&batch)?);
                self.removed += (batch.len - passed) as u64;
                Batch::empty_rows(passed + counted)
            }
            Some(f) => {
                let keep = truth_mask(&*f.eval(&batch)?);
                let kept = batch.filter(&keep);
                self.removed += (batch.len - kept.len) as u64;
                kept
            }
            None => batch,
        })
    }
}

/// What the general path takes from each visible tuple: attributes
/// `0..upto` deformed by `desc`, the output `columns` among them, and the
/// tuple's TID when `with_tid`.
struct Wanted<'a> {
    desc: &'a TupleDesc,
    columns: &'a [usize],
    upto: usize,
    with_tid: bool,
}

/// The general path of one page (no fused or fixed-width layout applies):
/// deforms each tuple of `visible` on page `pg` (block `block`) and pushes
/// the wanted attributes into `builders`. Returns the row count.
fn deform_page(
    block: crate::storage::BlockNumber,
    pg: &[u8],
    visible: &[u16],
    want: &Wanted<'_>,
    builders: &mut [Vector],
) -> Result<usize> {
    let Wanted {
        desc,
        columns,
        upto,
        with_tid,
    } = *want;
    if upto == 0 && !with_tid {
        return Ok(visible.len());
    }
    // The attribute slots live on the stack for the usual narrow deform
    // (no allocation per page).
    let mut inline = [None; 32];
    let mut spilled = Vec::new();
    let slots: &mut [Option<&[u8]>] = if upto <= inline.len() {
        &mut inline[..upto]
    } else {
        spilled.resize(upto, None);
        &mut spilled
    };
    for &off in visible {
        let t = page::get_item(pg, off).ok_or_else(|| {
            crate::err!(
                DataCorrupted,
                "visible line pointer {off} of block {block} has no tuple"
            )
        })?;
        if upto > 0 {
            tuple::deform(t, desc, upto, slots)?;
        }
        for (k, &c) in columns.iter().enumerate() {
            push_datum(&mut builders[k], slots[c]);
        }
        if with_tid {
            let tid = ((block as i64) << 16) | off as i64;
            let last = builders.len() - 1;
            builders[last].push(&Value::Int8(tid));
        }
    }
    Ok(visible.len())
}

/// What an aggregation needs of the sequential scan right below it.
#[derive(Debug, Clone, Copy)]
pub enum ScanUse<'a> {
    /// Its rows.
    Rows,
    /// Only how many rows pass the filter ([`counts_rows_only`]).
    RowsOnly,
    /// These aggregates without GROUP BY, computed on the pages where they
    /// can be ([`SeqScanOp::page_agg`]); the consumer adds
    /// [`Operator::page_partial`] in.
    Aggregates(&'a [crate::nodes::AggCall]),
    /// At most this many rows are read (a LIMIT above, with its OFFSET):
    /// a sort keeps only that many ([`super::topn`]); a scan serves rows.
    Bounded(usize),
    /// These aggregates grouped by this plain column, computed with the
    /// typed fast path: the scan may take pages from their summaries and
    /// hand them over per group key ([`Operator::group_partials`]).
    Grouped(&'a Expr, &'a [crate::nodes::AggCall]),
}

/// The [`ScanUse`] of an aggregation computed with the typed fast path
/// (the only consumer of page partials).
pub fn scan_use<'a>(group: &'a [Expr], aggs: &'a [crate::nodes::AggCall]) -> ScanUse<'a> {
    let fast = || super::fastpath::hash_agg::eligible(group, aggs);
    if counts_rows_only(group, aggs) {
        ScanUse::RowsOnly
    } else if group.is_empty() && fast() {
        ScanUse::Aggregates(aggs)
    } else if let [key] = group {
        if matches!(key.kind, super::expr::ExprKind::Column(_)) && fast() {
            ScanUse::Grouped(key, aggs)
        } else {
            ScanUse::Rows
        }
    } else {
        ScanUse::Rows
    }
}

/// Whether an aggregation needs nothing of its input rows but how many
/// there are: no GROUP BY, and only plain `count(*)`s.
pub fn counts_rows_only(group: &[Expr], aggs: &[crate::nodes::AggCall]) -> bool {
    group.is_empty()
        && !aggs.is_empty()
        && aggs.iter().all(|a| {
            a.func == crate::types::agg::AggFunc::CountStar && a.filter.is_none() && !a.distinct
        })
}

/// Whether an aggregate is a bare `count(*)` over an unfiltered scan that
/// reads no column, which [`CountStarOp`] answers by counting line pointers.
pub fn is_count_star(
    input: &crate::nodes::Plan,
    group: &[Expr],
    aggs: &[crate::nodes::AggCall],
) -> bool {
    matches!(
        &input.node,
        crate::nodes::Node::SeqScan { columns, with_tid: false, filter: None, .. } if columns.is_empty()
    ) && group.is_empty()
        && !aggs.is_empty()
        && aggs.iter().all(|a| {
            a.func == crate::types::agg::AggFunc::CountStar && a.filter.is_none() && !a.distinct
        })
}

/// `count(*)` of a whole table, as [`HeapRelation::count`] counts: pages
/// the visibility map says are all-visible contribute their recorded live
/// count, the others are read and their visible tuples counted (nothing is
/// deformed). One output row with one `bigint` per aggregate. In a parallel
/// participant it counts the chunks of blocks it takes.
pub struct CountStarOp<'a> {
    heap: &'a HeapRelation,
    ctx: &'a ExecContext,
    /// How many `count(*)` columns to produce.
    width: usize,
    /// The blocks shared with the other participants, in a parallel plan.
    shared: Option<&'a ParallelBlocks>,
    /// EXPLAIN ANALYZE: where to record the scan node's figures.
    instr: Option<(&'a super::Instrumentation, usize)>,
    done: bool,
}

impl<'a> CountStarOp<'a> {
    /// Counts `heap` under the context's snapshot.
    pub fn new(
        ctx: &'a ExecContext,
        heap: &'a HeapRelation,
        width: usize,
        shared: Option<&'a ParallelBlocks>,
        instr: Option<(&'a super::Instrumentation, usize)>,
    ) -> CountStarOp<'a> {
        CountStarOp {
            heap,
            ctx,
            width,
            shared,
            instr,
            done: false,
        }
    }

    /// The number of visible tuples (this participant's share of them).
    pub fn count(&self) -> Result<i64> {
        let own;
        let blocks = match self.shared {
            Some(blocks) => blocks,
            None => {
                own = ParallelBlocks::new(self.heap.nblocks()?, 1)
                    .with_ring_sizes(self.ctx.ring_sizes);
                &own
            }
        };
        // Called once per chunk of blocks: also the progress report.
        let progress = self.ctx.progress.as_ref();
        let cancel = || {
            if let Some(h) = progress {
                h(&Progress {
                    done: u64::from(blocks.handed_out()),
                    total: Some(u64::from(blocks.nblocks())),
                    unit: ProgressUnit::Pages,
                });
            }
            self.ctx.check_cancel()
        };
        let n = self
            .heap
            .count_shared(&self.ctx.snapshot, blocks, &cancel)?;
        Ok(n as i64)
    }
}

impl Operator for CountStarOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        let start = std::time::Instant::now();
        let buf0 = crate::storage::BufferUsage::current();
        let total = self.count()?;
        if let Some((instr, id)) = self.instr {
            let mut nodes = instr.nodes.borrow_mut();
            let n = &mut nodes[id];
            n.rows += total as u64;
            n.calls += 1;
            n.total += start.elapsed().as_secs_f64();
            n.buffers = n.buffers + crate::storage::BufferUsage::current().since(&buf0);
        }
        let col = Vector::from_data(DataType::Int8, Data::I64(vec![total]));
        Ok(Some(Batch {
            columns: vec![col; self.width],
            len: 1,
        }))
    }
}

/// Constant rows.
pub struct ValuesOp<'a> {
    rows: &'a [Vec<Expr>],
    types: Vec<DataType>,
    done: bool,
}

impl<'a> ValuesOp<'a> {
    /// Rows of `types`.
    pub fn new(rows: &'a [Vec<Expr>], types: Vec<DataType>) -> ValuesOp<'a> {
        ValuesOp {
            rows,
            types,
            done: false,
        }
    }
}

impl Operator for ValuesOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        let one = Batch::empty_rows(1);
        let mut cols: Vec<Vector> = self.types.iter().map(|t| Vector::new(*t)).collect();
        for row in self.rows {
            for (c, e) in row.iter().enumerate() {
                let v = e.eval(&one)?.get(0);
                cols[c].push(&v);
            }
        }
        Ok(Some(Batch {
            columns: cols,
            len: self.rows.len(),
        }))
    }
}

/// A set-returning function's rows.
pub struct FunctionOp<'a> {
    func: std::borrow::Cow<'a, TableFunc>,
    types: Vec<DataType>,
    /// Series: the next value; rows: the next row index.
    next_int: i64,
    next_ts: i64,
    row: usize,
    done: bool,
}

impl<'a> FunctionOp<'a> {
    /// Rows of `func`.
    pub fn new(func: std::borrow::Cow<'a, TableFunc>, types: Vec<DataType>) -> FunctionOp<'a> {
        let (next_int, next_ts) = match &*func {
            TableFunc::SeriesInt { start, .. } => (*start, 0),
            TableFunc::SeriesTimestamp { start, .. } => (0, *start),
            TableFunc::Rows(_) | TableFunc::Call { .. } => (0, 0),
        };
        FunctionOp {
            func,
            types,
            next_int,
            next_ts,
            row: 0,
            done: false,
        }
    }
}

impl Operator for FunctionOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        match &*self.func {
            TableFunc::Call { .. } => Err(crate::err!(
                InternalError,
                "a set-returning function's arguments were not evaluated"
            )),
            TableFunc::SeriesInt { stop, step, .. } => {
                let (stop, step) = (*stop, *step);
                let int4 = self.types[0] == DataType::Int4;
                let mut v64 = Vec::with_capacity(BATCH_SIZE);
                while v64.len() < BATCH_SIZE {
                    let x = self.next_int;
                    if (step > 0 && x > stop) || (step < 0 && x < stop) {
                        self.done = true;
                        break;
                    }
                    v64.push(x);
                    match x.checked_add(step) {
                        Some(n) => self.next_int = n,
                        None => {
                            self.done = true;
                            break;
                        }
                    }
                }
                if v64.is_empty() {
                    return Ok(None);
                }
                let len = v64.len();
                let col = if int4 {
                    Vector::from_data(
                        DataType::Int4,
                        Data::I32(v64.into_iter().map(|x| x as i32).collect()),
                    )
                } else {
                    Vector::from_data(DataType::Int8, Data::I64(v64))
                };
                Ok(Some(Batch {
                    columns: vec![col],
                    len,
                }))
            }
            TableFunc::SeriesTimestamp { stop, step, tz, .. } => {
                let value = |x: i64| {
                    if *tz {
                        Value::TimestampTz(x)
                    } else {
                        Value::Timestamp(x)
                    }
                };
                let mut out = Vec::with_capacity(BATCH_SIZE);
                let forward = step.months > 0 || step.days > 0 || step.micros > 0;
                while out.len() < BATCH_SIZE {
                    let x = self.next_ts;
                    if (forward && x > *stop) || (!forward && x < *stop) {
                        self.done = true;
                        break;
                    }
                    out.push(x);
                    match types::eval_binary(BinaryOp::Add, &value(x), &Value::Interval(*step))? {
                        Value::Timestamp(n) | Value::TimestampTz(n) => self.next_ts = n,
                        _ => {
                            self.done = true;
                            break;
                        }
                    }
                }
                if out.is_empty() {
                    return Ok(None);
                }
                let len = out.len();
                Ok(Some(Batch {
                    columns: vec![Vector::from_data(
                        if *tz {
                            DataType::TimestampTz(None)
                        } else {
                            DataType::Timestamp(None)
                        },
                        Data::I64(out),
                    )],
                    len,
                }))
            }
            TableFunc::Rows(rows) => {
                let end = (self.row + BATCH_SIZE).min(rows.len());
                if self.row >= end {
                    self.done = true;
                    return Ok(None);
                }
                let mut cols: Vec<Vector> = self.types.iter().map(|t| Vector::new(*t)).collect();
                for row in &rows[self.row..end] {
                    for (c, v) in row.iter().enumerate() {
                        cols[c].push(v);
                    }
                }
                let len = end - self.row;
                self.row = end;
                Ok(Some(Batch { columns: cols, len }))
            }
        }
    }
}
