//! Bitmap heap scans (PostgreSQL's `nodeBitmapHeapscan.c`, with
//! `nodeBitmapIndexscan.c`, `nodeBitmapAnd.c` and `nodeBitmapOr.c`).
//!
//! On its first call [`BitmapHeapScanOp`] runs the plan's bitmap tree: each
//! index scan walks its key ranges and adds the tuple id of every entry to
//! a [`TidBitmap`] (no heap access), an AND intersects its inputs' bitmaps,
//! an OR unites them. The bitmap is bounded by `work_mem`: past it, pages
//! turn lossy. Then the heap pages are visited in block order, each pinned
//! once under one shared content lock:
//!
//! - an exact page: for each listed tuple id (a HOT chain's root) the
//!   version the snapshot sees, the chain walked as an index scan walks it
//!   (`access::heap::hot`; an ALL_VISIBLE page skips the checks); an entry
//!   whose chain the snapshot does not see (deleted, updated with a changed
//!   key, inserted by a later or aborted transaction) is passed over;
//! - a lossy page (or an exact one an AND with a lossy page marked): every
//!   tuple the snapshot sees, heap-only ones included, is tested against
//!   the index conditions again (`Rows Removed by Index Recheck`);
//! - when the scan returns no column and has no filter (`count(*)`), an
//!   exact page whose visibility-map bit is set is not read at all: its
//!   listed tuples are counted (PostgreSQL 15's `can_skip_fetch`).
//!
//! Hint bits found while checking visibility are set after the page is
//! read, under the exclusive lock, as a fetch by tid sets them.
//!
//! Invariants: the snapshot decides each tuple alone, so a row updated
//! after the bitmap was built is returned in the version the snapshot sees
//! (the new version's entry leads to a tuple it does not see); the index
//! conditions are tested only on pages that need a recheck; every page is
//! visited once.

use std::ops::Bound;

use crate::access::heap::hot::visible_member;
use crate::access::heap::pageops::{apply_page_hints, Hint};
use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::visibility::satisfies_mvcc;
use crate::access::heap::HeapRelation;
use crate::access::nbtree::keys::tid_of;
use crate::access::nbtree::{BTree, Direction, ScanPos};
use crate::error::Result;
use crate::nodes::plannodes::{BitmapHeapScan, BitmapIndexScan, BitmapQual};
use crate::storage::page::{self, OffsetNumber};
use crate::storage::{BlockNumber, BufferUsage, ForkNumber, PinnedBuffer, RelFileNode, READ_RUN};
use crate::types::{DataType, Value};

use super::expr::truth_mask;
use super::indexscan::key_ranges;
use super::scan::{push_datum, tuple_desc};
use super::tidbitmap::{max_entries, PageTids, TidBitmap};
use super::vector::{Batch, Vector, BATCH_SIZE};
use super::{ExecContext, Instrumentation, Operator};

/// What EXPLAIN ANALYZE shows of a bitmap heap scan beside its rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BitmapStats {
    /// Exact pages visited (`Heap Blocks: exact=`).
    pub exact_pages: u64,
    /// Lossy pages visited (`Heap Blocks: lossy=`).
    pub lossy_pages: u64,
    /// Tuples the index recheck rejected.
    pub recheck_removed: u64,
}

/// A bitmap heap scan of one table.
pub struct BitmapHeapScanOp<'a> {
    ctx: &'a ExecContext,
    heap: &'a HeapRelation,
    spec: &'a BitmapHeapScan,
    desc: TupleDesc,
    /// Deform attributes `0..upto` (output and recheck columns).
    upto: usize,
    /// The pages to visit, in block order (filled on the first call).
    pages: Option<Vec<(BlockNumber, PageTids)>>,
    next_page: usize,
    builders: Vec<Vector>,
    recheck_types: Vec<DataType>,
    pending: usize,
    /// No column, no filter, no tuple id: all-visible exact pages are
    /// counted from the bitmap.
    count_only: bool,
    stats: BitmapStats,
    removed: u64,
    /// The filter is left to an operator above ([`Self::without_filter`]).
    skip_filter: bool,
    /// Under EXPLAIN ANALYZE: where the bitmap nodes' figures go, and this
    /// node's id (they are numbered in pre-order right after it).
    instr: Option<(&'a Instrumentation, usize)>,
    /// Scratch, reused per page: candidate offsets, visible ones, hints.
    offsets: Vec<OffsetNumber>,
    visible: Vec<OffsetNumber>,
    hints: Vec<Hint>,
    /// The heap's recent-buffer hints, one per block.
    recent: std::sync::Arc<[std::sync::atomic::AtomicU32]>,
    /// Pages read ahead with an earlier one, pinned, in block order.
    run: std::collections::VecDeque<PinnedBuffer<'a>>,
    done: bool,
}

impl<'a> BitmapHeapScanOp<'a> {
    /// Leaves the scan's filter to an operator above, which evaluates it
    /// one row at a time (`rowwise::per_row`); the scan returns every
    /// row it reads.
    pub fn without_filter(mut self) -> Self {
        self.skip_filter = true;
        self
    }

    /// Opens the scan of `spec` under the context's snapshot; `instr`: the
    /// instrumentation and this node's id.
    pub fn new(
        ctx: &'a ExecContext,
        spec: &'a BitmapHeapScan,
        instr: Option<(&'a Instrumentation, usize)>,
    ) -> Result<Self> {
        let heap = ctx.relation(spec.table.relfilenode)?;
        let mut types: Vec<DataType> = spec
            .columns
            .iter()
            .map(|&c| spec.table.columns[c].ty)
            .collect();
        if spec.with_tid {
            types.push(DataType::Int8);
        }
        let upto = spec
            .columns
            .iter()
            .chain(&spec.recheck_columns)
            .map(|&c| c + 1)
            .max()
            .unwrap_or(0);
        Ok(BitmapHeapScanOp {
            ctx,
            heap,
            skip_filter: false,
            spec,
            desc: tuple_desc(&spec.table)?,
            upto,
            pages: None,
            next_page: 0,
            builders: types
                .iter()
                .map(|t| Vector::with_capacity(*t, 64))
                .collect(),
            recheck_types: spec
                .recheck_columns
                .iter()
                .map(|&c| spec.table.columns[c].ty)
                .collect(),
            pending: 0,
            count_only: spec.columns.is_empty() && spec.filter.is_none() && !spec.with_tid,
            stats: BitmapStats::default(),
            removed: 0,
            instr,
            offsets: Vec::new(),
            visible: Vec::new(),
            hints: Vec::new(),
            recent: heap.recent_buffers(heap.nblocks()?),
            run: std::collections::VecDeque::new(),
            done: false,
        })
    }

    /// Runs the bitmap tree (`qual`, node `*id`) into a bitmap.
    fn build(&self, qual: &BitmapQual, id: &mut usize) -> Result<TidBitmap> {
        let my_id = *id;
        *id += 1;
        let start = std::time::Instant::now();
        let buf0 = BufferUsage::current();
        let (bitmap, rows) = match qual {
            BitmapQual::Index(scan) => self.index_bitmap(scan)?,
            BitmapQual::And(inputs) => {
                let mut acc: Option<TidBitmap> = None;
                for q in inputs {
                    // Every input runs (EXPLAIN ANALYZE shows them all), as
                    // PostgreSQL's BitmapAnd runs them.
                    let b = self.build(q, id)?;
                    match &mut acc {
                        None => acc = Some(b),
                        Some(a) => a.intersect(&b),
                    }
                }
                (acc.unwrap_or_else(|| TidBitmap::new(16)), 0)
            }
            BitmapQual::Or(inputs) => {
                let mut acc = TidBitmap::new(max_entries(self.ctx.work_mem));
                for q in inputs {
                    let b = self.build(q, id)?;
                    acc.union(&b);
                }
                (acc, 0)
            }
        };
        if let Some((instr, base)) = self.instr {
            let mut nodes = instr.nodes.borrow_mut();
            if let Some(n) = nodes.get_mut(base + my_id) {
                let t = start.elapsed().as_secs_f64();
                n.first = t;
                n.total = t;
                n.calls = 1;
                n.rows = rows;
                n.buffers = BufferUsage::current().since(&buf0);
            }
        }
        Ok(bitmap)
    }

    /// The tuple ids of one index's entries within its bounds, and how
    /// many entries were read.
    fn index_bitmap(&self, scan: &BitmapIndexScan) -> Result<(TidBitmap, u64)> {
        let tree = BTree::open(
            self.heap.pool().clone(),
            RelFileNode(scan.index.relfilenode),
            scan.index.desc(&self.spec.table),
            None,
        );
        let mut bitmap = TidBitmap::new(max_entries(self.ctx.work_mem));
        let mut n = 0u64;
        let mut pos = ScanPos::new(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        for (lo, hi) in key_ranges(tree.desc(), &scan.bounds, None)? {
            pos.reset(lo, hi, Direction::Forward);
            while let Some(k) = pos.next_key(&tree)? {
                let (block, offset) = tid_of(k);
                bitmap.add(block, offset);
                n += 1;
                if n % 4096 == 0 {
                    self.ctx.check_cancel()?;
                }
            }
        }
        Ok((bitmap, n))
    }

    /// Whether the visibility map says `block` is all-visible.
    fn vm_all_visible(&self, block: BlockNumber) -> Result<bool> {
        let pool = self.heap.pool();
        let rel = self.heap.rel();
        let vb = crate::access::vm::vm_block(block);
        Ok(if vb < pool.nblocks(rel, ForkNumber::VisibilityMap)? {
            let buf = pool.read_buffer(rel, ForkNumber::VisibilityMap, vb, None)?;
            let g = buf.read();
            crate::access::vm::get(&g[..], block).0 & crate::access::vm::VM_ALL_VISIBLE != 0
        } else {
            false
        })
    }

    /// Visits one page of the bitmap: its matching tuples go to the
    /// builders. `next`: the pages after it (read ahead with it when they
    /// follow it and the pool lacks it).
    fn visit_page(
        &mut self,
        block: BlockNumber,
        tids: &PageTids,
        nblocks: BlockNumber,
        next: &[(BlockNumber, PageTids)],
    ) -> Result<()> {
        let recheck = match tids {
            PageTids::Exact { recheck, .. } => {
                self.stats.exact_pages += 1;
                if self.count_only && !*recheck && self.vm_all_visible(block)? {
                    self.pending += tids.count();
                    return Ok(());
                }
                *recheck
            }
            PageTids::Lossy => {
                self.stats.lossy_pages += 1;
                true
            }
        };
        if block >= nblocks {
            return Ok(());
        }
        let next = &next[..next.partition_point(|(b, _)| *b < nblocks)];
        let buf = self.pin(block, next)?;
        let g = buf.read();
        let pg = &g[..];
        page::verify_header(pg)?;
        self.offsets.clear();
        match tids {
            PageTids::Exact { .. } => tids.offsets_into(&mut self.offsets),
            PageTids::Lossy => self.offsets.extend(1..=page::max_offset(pg)),
        }
        self.visible.clear();
        self.hints.clear();
        let all_visible = page::is_all_visible(pg);
        let exact = matches!(tids, PageTids::Exact { .. });
        for &o in &self.offsets {
            if exact {
                // An entry names a HOT chain's root: its visible version.
                let snap = &self.ctx.snapshot;
                let clog = self.heap.txns().clog();
                if let Some(m) = visible_member(pg, block, o, snap, clog, &mut self.hints)? {
                    self.visible.push(m);
                }
                continue;
            }
            let Some(t) = page::get_item(pg, o) else {
                continue;
            };
            if t.len() < tuple::HEADER_SIZE {
                continue;
            }
            if all_visible {
                self.visible.push(o);
                continue;
            }
            let (vis, bits) = satisfies_mvcc(t, &self.ctx.snapshot, self.heap.txns().clog())?;
            if vis {
                self.visible.push(o);
            }
            if bits != 0 {
                self.hints.push(Hint {
                    offset: o,
                    bits,
                    xmax: tuple::xmax(t),
                });
            }
        }
        if recheck && self.spec.recheck.is_some() {
            self.recheck_page(pg)?;
        }
        self.emit(pg, block)?;
        drop(g);
        if !self.hints.is_empty() {
            let mut w = buf.write();
            if apply_page_hints(&mut w[..], &self.hints) {
                w.mark_dirty_hint();
            }
        }
        Ok(())
    }

    /// Pins `block`: through its recent-buffer hint when the pool holds it;
    /// else read with the bitmap's next blocks while they follow it (up to
    /// [`READ_RUN`], one `preadv`), their pins kept for the next calls.
    fn pin(
        &mut self,
        block: BlockNumber,
        next: &[(BlockNumber, PageTids)],
    ) -> Result<PinnedBuffer<'a>> {
        while let Some(buf) = self.run.pop_front() {
            if buf.block() == block {
                return Ok(buf);
            }
            if buf.block() > block {
                self.run.clear();
                break;
            }
        }
        let heap = self.heap;
        let pool = heap.pool();
        if let Some(buf) = pool.pin_recent(heap.rel(), ForkNumber::Main, block, &self.recent, false)
        {
            return Ok(buf);
        }
        let mut count = 1;
        while (count as usize) < READ_RUN
            && next
                .get(count as usize - 1)
                .is_some_and(|(b, _)| *b == block + count)
        {
            count += 1;
        }
        let mut out = Vec::with_capacity(count as usize);
        pool.read_buffers_recent(
            heap.rel(),
            ForkNumber::Main,
            block,
            count,
            &self.recent,
            None,
            &mut out,
        )?;
        let mut pins = out.into_iter();
        let first = pins
            .next()
            .ok_or_else(|| crate::error::Error::internal("a read returned no page"))?;
        self.run.extend(pins);
        Ok(first)
    }

    /// Keeps in `visible` the tuples of page `pg` that pass the index
    /// conditions.
    fn recheck_page(&mut self, pg: &[u8]) -> Result<()> {
        let Some(cond) = &self.spec.recheck else {
            return Ok(());
        };
        let mut cols: Vec<Vector> = self
            .recheck_types
            .iter()
            .map(|t| Vector::with_capacity(*t, self.visible.len()))
            .collect();
        let mut slots = vec![None; self.upto];
        for &o in &self.visible {
            let t = page::get_item(pg, o).unwrap_or(&[]);
            tuple::deform(t, &self.desc, self.upto, &mut slots)?;
            for (k, &c) in self.spec.recheck_columns.iter().enumerate() {
                push_datum(&mut cols[k], slots[c]);
            }
        }
        let batch = Batch {
            columns: cols,
            len: self.visible.len(),
        };
        let keep = truth_mask(&*cond.eval(&batch)?);
        let before = self.visible.len();
        let mut i = 0;
        self.visible.retain(|_| {
            i += 1;
            keep[i - 1]
        });
        self.stats.recheck_removed += (before - self.visible.len()) as u64;
        Ok(())
    }

    /// Deforms the output columns of the `visible` tuples of page `pg`.
    fn emit(&mut self, pg: &[u8], block: BlockNumber) -> Result<()> {
        if self.spec.columns.is_empty() && !self.spec.with_tid {
            self.pending += self.visible.len();
            return Ok(());
        }
        let mut inline = [None; 32];
        let mut spilled = Vec::new();
        let slots: &mut [Option<&[u8]>] = if self.upto <= inline.len() {
            &mut inline[..self.upto]
        } else {
            spilled.resize(self.upto, None);
            &mut spilled
        };
        for &o in &self.visible {
            let t = page::get_item(pg, o).unwrap_or(&[]);
            if self.upto > 0 {
                tuple::deform(t, &self.desc, self.upto, slots)?;
            }
            for (k, &c) in self.spec.columns.iter().enumerate() {
                push_datum(&mut self.builders[k], slots[c]);
            }
            if self.spec.with_tid {
                let tid = (i64::from(block) << 16) | i64::from(o);
                if let Some(last) = self.builders.last_mut() {
                    last.push(&Value::Int8(tid));
                }
            }
            self.pending += 1;
        }
        Ok(())
    }

    fn take_batch(&mut self) -> Batch {
        let cols: Vec<Vector> = self
            .builders
            .iter_mut()
            .map(|b| std::mem::replace(b, Vector::with_capacity(b.ty, 64)))
            .collect();
        let len = std::mem::take(&mut self.pending);
        Batch { columns: cols, len }
    }

    /// The scan's figures for EXPLAIN ANALYZE.
    pub fn stats(&self) -> BitmapStats {
        self.stats
    }
}

impl Operator for BitmapHeapScanOp<'_> {
    fn rows_removed(&self) -> u64 {
        self.removed
    }

    fn bitmap_stats(&self) -> Option<BitmapStats> {
        Some(self.stats)
    }

    fn next(&mut self) -> Result<Option<Batch>> {
        if self.pages.is_none() {
            let mut id = 1;
            let bitmap = self.build(&self.spec.bitmap, &mut id)?;
            self.pages = Some(bitmap.pages());
        }
        let _size = self.heap.hold_size();
        let nblocks = self.heap.nblocks()?;
        loop {
            self.ctx.check_cancel()?;
            if self.done {
                return Ok(None);
            }
            let pages = self.pages.take().unwrap_or_default();
            while self.pending < BATCH_SIZE {
                let Some((block, tids)) = pages.get(self.next_page) else {
                    self.done = true;
                    break;
                };
                self.next_page += 1;
                let next = &pages[self.next_page..];
                if let Err(e) = self.visit_page(*block, tids, nblocks, next) {
                    self.pages = Some(pages);
                    return Err(e);
                }
            }
            self.pages = Some(pages);
            if self.pending == 0 {
                return Ok(None);
            }
            let batch = self.take_batch();
            let filter = self.spec.filter.as_ref().filter(|_| !self.skip_filter);
            let batch = match filter {
                Some(f) => {
                    let keep = truth_mask(&*f.eval(&batch)?);
                    let kept = batch.filter(&keep);
                    self.removed += (batch.len - kept.len) as u64;
                    kept
                }
                None => batch,
            };
            if batch.len > 0 {
                return Ok(Some(batch));
            }
        }
    }
}
