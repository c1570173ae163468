//! Reading the heap: page-at-a-time sequential scans, fetch by tid, a
//! `count(*)` that uses the visibility map, and the inspection API.
//!
//! A [`HeapScan`] visits the blocks that existed when it started, one page
//! per call. For each page it pins the buffer (through a bulk-read ring when
//! the relation is larger than a quarter of the pool), takes the shared
//! content lock once, collects the line pointers of the tuples its snapshot
//! sees (an ALL_VISIBLE page skips the per-tuple checks) and hands the page
//! and that list to the caller's closure, still under the same lock: one
//! content lock per page, and no copy of the tuples. The closure should be
//! quick (copy out the values it needs); writers to that page wait for it.
//! A caller may take the next block without reading it
//! ([`HeapScan::next_block`]) and read it only when it has no other
//! answer for it ([`HeapScan::read_block`]: the packed column cache).
//!
//! Hint bits: when the visibility checks found hint bits to set, the scan
//! drops the shared lock *before* calling the closure, takes the exclusive
//! lock, sets the bits and marks the buffer dirty (hint-only), then takes the
//! shared lock again. This happens once per page: the next reader finds the
//! bits set.
//! Visibility under a fixed snapshot does not change in between, so the
//! collected list stays right.
//!
//! No allocation per tuple or per page: the offset and hint vectors live in
//! the scan and are reused.
//!
//! Parallel scans: several [`HeapScan`]s (one per thread) may share one
//! [`ParallelBlocks`], which hands out the blocks in chunks of
//! [`PARALLEL_CHUNK`] through an atomic counter, so every block is visited by
//! exactly one of them; [`HeapRelation::count_shared`] counts the same way
//! for a parallel `count(*)`. The participants split one bulk-read ring
//! between them (`BufferPool::scan_ring_shared`): a parallel scan holds no
//! more buffers than a serial one.

use std::sync::atomic::{AtomicU64, Ordering};

use super::heapam::{HeapRelation, Tid};
use super::pageops::{apply_page_hints, collect_visible, count_visible, push_normal, Hint};
use super::tuple;
use super::visibility::satisfies_mvcc;
use crate::access::inspect::{self, ItemInfo, PageHeaderInfo};
use crate::access::vm;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::prefetch::Ahead;
use crate::storage::{BlockNumber, ForkNumber, PinnedBuffer, Ring, RingSizes, READ_RUN};
use crate::txn::Snapshot;

/// Which tuples of a page a scan's snapshot sees.
#[derive(Debug, Clone, Copy)]
pub enum Visible<'v> {
    /// The page is ALL_VISIBLE: every NORMAL line pointer.
    AllNormal,
    /// These line pointers, in order.
    Listed(&'v [OffsetNumber]),
}

/// A page-at-a-time sequential scan of one heap under one snapshot.
pub struct HeapScan<'r> {
    /// The heap.
    rel: &'r HeapRelation,
    /// The snapshot deciding visibility.
    snap: Snapshot,
    /// Blocks to visit: those that existed when the scan started.
    nblocks: BlockNumber,
    /// The next block to visit.
    next: BlockNumber,
    /// The bulk-read ring, for relations larger than a quarter of the pool.
    ring: Option<Ring>,
    /// Visible line pointers of the current page (reused).
    visible: Vec<OffsetNumber>,
    /// Hint bits found on the current page (reused).
    hints: Vec<Hint>,
    /// The line pointers of an ALL_VISIBLE page, for [`HeapScan::next_page`]
    /// (reused).
    all: Vec<OffsetNumber>,
    /// The block allocator shared with the other participants of a
    /// parallel scan; `next..end` is then the chunk this scan holds.
    shared: Option<&'r ParallelBlocks>,
    /// End of the current chunk (`nblocks` for a serial scan).
    end: BlockNumber,
    /// The chunk taken while reading the current chunk's last page, so
    /// that page's loop can prefetch the first page of the next
    /// ([`HeapScan::claim_ahead`]).
    queued: Option<(BlockNumber, BlockNumber)>,
    /// Whether the scan may take its next chunk early (`queued`).
    claim_ahead: bool,
    /// The relation's recent-buffer hints, one per block.
    recent: std::sync::Arc<[std::sync::atomic::AtomicU32]>,
    /// Pages pinned ahead of `next`: the rest of the last run read in one
    /// go ([`HeapScan::pin`]).
    run: std::collections::VecDeque<PinnedBuffer<'r>>,
    /// Scratch for a run's pins (reused).
    batch: Vec<PinnedBuffer<'r>>,
    /// Decides, before a block is read, to leave it unread (true): the
    /// caller took it from elsewhere (page summaries).
    skip: Option<BlockFilter<'r>>,
    /// Called with each ALL_VISIBLE page read, under its lock
    /// ([`HeapScan::on_all_visible`]).
    hook: Option<PageHook<'r>>,
    /// Keeps VACUUM from truncating the relation under the scan.
    _size: std::sync::RwLockReadGuard<'r, ()>,
}

/// A scan's block filter: called with a block and the end of the run of
/// blocks the scan holds (its chunk), it returns how many blocks from that
/// one to leave unread (0: read it; never past the run's end)
/// ([`HeapScan::skip_blocks`]).
pub type BlockFilter<'r> = Box<dyn FnMut(BlockNumber, BlockNumber) -> Result<BlockNumber> + 'r>;

/// A scan's look at each ALL_VISIBLE page it reads, under the page's shared
/// lock ([`HeapScan::on_all_visible`]).
pub type PageHook<'r> = Box<dyn FnMut(BlockNumber, &[u8]) -> Result<()> + 'r>;

/// Blocks a parallel scan hands out at a time: large enough that the
/// participants rarely touch the shared counter and each reads runs of
/// neighbouring pages, small enough that they finish together.
pub const PARALLEL_CHUNK: BlockNumber = 32;

/// Blocks a counting participant ([`HeapRelation::count_shared`]) takes at
/// a time. Each range costs a visibility-map pin and lock, the relation's
/// size looked up twice and a copy of the map's entries, ~170 ns: at 32
/// blocks, 3,379 ranges made up nearly all of a 0.57 ms `count(*)` of 20M
/// all-visible rows. 1,024 blocks (8 MB of heap, about a third of a map
/// page) keep cancel checks and progress reports frequent when the pages
/// must be read, and the work split between participants fine enough.
pub const COUNT_CHUNK: BlockNumber = 1024;

/// The shared state of a parallel sequential scan: which blocks are still
/// to be handed out. Its participants run in threads of one statement.
#[derive(Debug)]
pub struct ParallelBlocks {
    /// Blocks to visit: those that existed when the scan started.
    nblocks: BlockNumber,
    /// The first block not yet handed out (64 bits: calls after the end
    /// keep adding, and must never wrap around to block 0).
    next: AtomicU64,
    /// How many scans share it: each takes that share of the bulk-read
    /// ring (`BufferPool::scan_ring_shared`), so the statement's scans
    /// together use one ring's worth of buffers.
    participants: usize,
    /// The ring sizes of the client that runs the scan.
    ring_sizes: RingSizes,
}

impl ParallelBlocks {
    /// A scan of blocks `0..nblocks` by `participants` threads (at least
    /// one).
    pub fn new(nblocks: BlockNumber, participants: usize) -> ParallelBlocks {
        ParallelBlocks {
            nblocks,
            next: AtomicU64::new(0),
            participants: participants.max(1),
            ring_sizes: RingSizes::default(),
        }
    }

    /// The same scan with its rings sized by `sizes` (the client's
    /// settings) rather than the defaults.
    pub fn with_ring_sizes(mut self, sizes: RingSizes) -> ParallelBlocks {
        self.ring_sizes = sizes;
        self
    }

    /// How many scans share the blocks.
    pub fn participants(&self) -> usize {
        self.participants
    }

    /// Blocks handed out so far (for progress reports).
    pub fn handed_out(&self) -> BlockNumber {
        self.next.load(Ordering::Relaxed).min(self.nblocks as u64) as BlockNumber
    }

    /// The blocks of the scan.
    pub fn nblocks(&self) -> BlockNumber {
        self.nblocks
    }

    /// The next chunk of blocks, `None` once all are handed out.
    pub fn next_chunk(&self) -> Option<(BlockNumber, BlockNumber)> {
        self.next_chunk_of(PARALLEL_CHUNK)
    }

    /// The next `len` blocks (fewer at the end), `None` once all are handed
    /// out. Every participant of one scan must take the same `len`.
    pub fn next_chunk_of(&self, len: BlockNumber) -> Option<(BlockNumber, BlockNumber)> {
        let start = self.next.fetch_add(len as u64, Ordering::Relaxed);
        (start < self.nblocks as u64).then(|| {
            let start = start as BlockNumber;
            (start, self.nblocks.min(start + len))
        })
    }
}

/// A count's bulk-read ring, decided at its first use.
struct LazyRing<'a> {
    ring: Option<Option<Ring>>,
    make: &'a dyn Fn() -> Option<Ring>,
}

impl LazyRing<'_> {
    /// The ring, decided now if not yet.
    fn get(&mut self) -> Option<&mut Ring> {
        let make = self.make;
        self.ring.get_or_insert_with(make).as_mut()
    }
}

impl HeapRelation {
    /// Starts a sequential scan under `snap`, with a bulk-read ring of the
    /// default size if it takes one ([`HeapRelation::scan_with`]).
    pub fn scan(&self, snap: &Snapshot) -> Result<HeapScan<'_>> {
        self.scan_with(snap, &RingSizes::default())
    }

    /// Starts a sequential scan under `snap`; a bulk-read ring, if the
    /// relation needs one (`BufferPool::scan_ring`), sized by `sizes` (the
    /// client's settings).
    pub fn scan_with(&self, snap: &Snapshot, sizes: &RingSizes) -> Result<HeapScan<'_>> {
        let size = self.hold_size();
        let nblocks = self.nblocks()?;
        Ok(HeapScan {
            _size: size,
            rel: self,
            snap: snap.clone(),
            nblocks,
            next: 0,
            ring: self.pool().scan_ring(self.rel(), nblocks, sizes),
            visible: Vec::with_capacity(page::MAX_HEAP_TUPLES_PER_PAGE),
            hints: Vec::new(),
            all: Vec::new(),
            shared: None,
            end: nblocks,
            queued: None,
            claim_ahead: false,
            recent: self.recent_buffers(nblocks),
            run: std::collections::VecDeque::new(),
            batch: Vec::new(),
            skip: None,
            hook: None,
        })
    }

    /// Starts one participant of a parallel sequential scan under `snap`:
    /// it visits the chunks of blocks it takes from `blocks`.
    pub fn scan_shared<'r>(
        &'r self,
        snap: &Snapshot,
        blocks: &'r ParallelBlocks,
    ) -> Result<HeapScan<'r>> {
        Ok(HeapScan {
            _size: self.hold_size(),
            rel: self,
            snap: snap.clone(),
            nblocks: blocks.nblocks,
            next: 0,
            ring: self.pool().scan_ring_shared(
                self.rel(),
                blocks.nblocks,
                blocks.participants,
                &blocks.ring_sizes,
            ),
            visible: Vec::with_capacity(page::MAX_HEAP_TUPLES_PER_PAGE),
            hints: Vec::new(),
            all: Vec::new(),
            shared: Some(blocks),
            end: 0,
            queued: None,
            claim_ahead: false,
            recent: self.recent_buffers(blocks.nblocks),
            run: std::collections::VecDeque::new(),
            batch: Vec::new(),
            skip: None,
            hook: None,
        })
    }

    /// Reads the tuple at `tid` if `snap` sees it: calls `f` with the tuple
    /// bytes (header included) under the page's shared lock. Returns `None`
    /// when the line pointer holds no tuple or the tuple is invisible.
    pub fn fetch<R>(
        &self,
        tid: Tid,
        snap: &Snapshot,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Result<Option<R>> {
        let _size = self.hold_size();
        if tid.block >= self.nblocks()? {
            return Ok(None);
        }
        let buf = self
            .pool()
            .read_buffer(self.rel(), ForkNumber::Main, tid.block, None)?;
        let g = buf.read();
        let Some(t) = page::get_item(&g[..], tid.offset) else {
            return Ok(None);
        };
        if t.len() < tuple::HEADER_SIZE {
            return Ok(None);
        }
        let (vis, bits) = if page::is_all_visible(&g[..]) {
            (true, 0)
        } else {
            satisfies_mvcc(t, snap, self.txns().clog())?
        };
        if bits != 0 {
            let hint = [Hint {
                offset: tid.offset,
                bits,
                xmax: tuple::xmax(t),
            }];
            drop(g);
            set_hints(&buf, &hint);
            let g = buf.read();
            return Ok(page::get_item(&g[..], tid.offset).filter(|_| vis).map(f));
        }
        Ok(vis.then(|| f(t)))
    }

    /// Counts the tuples `snap` sees, as `count(*)` does: blocks whose VM bit
    /// says all-visible contribute the count stored beside the bit without
    /// being read; the others are scanned page at a time.
    pub fn count(&self, snap: &Snapshot) -> Result<u64> {
        let nblocks = self.nblocks()?;
        let mut ring = LazyRing {
            ring: None,
            make: &|| {
                self.pool()
                    .scan_ring(self.rel(), nblocks, &RingSizes::default())
            },
        };
        self.count_range(snap, 0, nblocks, &mut ring)
    }

    /// The fraction (0..=1) of the heap's pages whose visibility-map bit
    /// says all-visible, estimated from up to `samples` blocks spread
    /// evenly over the relation (a few VM buffer reads). The planner's
    /// look at whether a `count(*)` will read only the map.
    pub fn all_visible_fraction(&self, samples: u32) -> Result<f64> {
        let nblocks = self.nblocks()?;
        let n = samples.min(nblocks);
        if n == 0 {
            return Ok(0.0);
        }
        let vm_blocks = self.pool().nblocks(self.rel(), ForkNumber::VisibilityMap)?;
        let mut hits = 0u32;
        let mut current: Option<(BlockNumber, PinnedBuffer<'_>)> = None;
        for i in 0..n {
            let block = (u64::from(i) * u64::from(nblocks) / u64::from(n)) as BlockNumber;
            let vb = vm::vm_block(block);
            if vb >= vm_blocks {
                break;
            }
            if current.as_ref().map(|c| c.0) != Some(vb) {
                let buf =
                    self.pool()
                        .read_buffer(self.rel(), ForkNumber::VisibilityMap, vb, None)?;
                current = Some((vb, buf));
            }
            if let Some((_, buf)) = &current {
                let (bits, _) = vm::get(&buf.read()[..], block);
                hits += u32::from(bits & vm::VM_ALL_VISIBLE != 0);
            }
        }
        Ok(f64::from(hits) / f64::from(n))
    }

    /// One participant of a parallel `count(*)`: counts, as [`count`]
    /// does, the chunks of blocks it takes from `blocks`.
    ///
    /// [`count`]: HeapRelation::count
    pub fn count_shared(
        &self,
        snap: &Snapshot,
        blocks: &ParallelBlocks,
        cancel: &dyn Fn() -> Result<()>,
    ) -> Result<u64> {
        // The ring is decided when the first page must be read: a table
        // the map answers whole never samples the pool for it.
        let mut ring = LazyRing {
            ring: None,
            make: &|| {
                self.pool().scan_ring_shared(
                    self.rel(),
                    blocks.nblocks,
                    blocks.participants,
                    &blocks.ring_sizes,
                )
            },
        };
        let mut total = 0;
        while let Some((start, end)) = blocks.next_chunk_of(COUNT_CHUNK) {
            cancel()?;
            total += self.count_range(snap, start, end, &mut ring)?;
        }
        Ok(total)
    }

    /// The visible tuples of blocks `start..nblocks`.
    fn count_range(
        &self,
        snap: &Snapshot,
        start: BlockNumber,
        nblocks: BlockNumber,
        ring: &mut LazyRing<'_>,
    ) -> Result<u64> {
        let _size = self.hold_size();
        // A parallel count's block range was fixed before this participant
        // held the lock: VACUUM may have cut empty pages off since.
        let nblocks = nblocks.min(self.nblocks()?);
        let vm_blocks = self.pool().nblocks(self.rel(), ForkNumber::VisibilityMap)?;
        let mut hints = Vec::new();
        let mut total = 0u64;
        let mut block = start;
        let mut rest = Vec::new();
        while block < nblocks {
            let vb = vm::vm_block(block);
            let end = nblocks.min((vb + 1) * vm::HEAPBLOCKS_PER_PAGE);
            // Take this VM page's counts for the range and list the blocks
            // to read, so no VM lock is held while heap pages are read.
            rest.clear();
            if vb < vm_blocks {
                let vbuf =
                    self.pool()
                        .read_buffer(self.rel(), ForkNumber::VisibilityMap, vb, None)?;
                let vg = vbuf.read();
                total += vm::count_visible_blocks(&vg[..], block, end, &mut rest);
            } else {
                rest.extend(block..end);
            }
            for &b in &rest {
                let buf = self
                    .pool()
                    .read_buffer(self.rel(), ForkNumber::Main, b, ring.get())?;
                hints.clear();
                let g = buf.read();
                total += count_visible(&g[..], snap, self.txns().clog(), &mut hints)
                    .map_err(|e| in_block(e, b, self))?;
                drop(g);
                if !hints.is_empty() {
                    set_hints(&buf, &hints);
                }
            }
            block = end;
        }
        Ok(total)
    }

    /// The header and line pointers (with tuple headers) of heap page `block`.
    pub fn inspect_page(&self, block: BlockNumber) -> Result<(PageHeaderInfo, Vec<ItemInfo>)> {
        if block >= self.nblocks()? {
            return Err(crate::err!(
                InvalidParameterValue,
                "block number {block} is out of range for relation \"{}\"",
                self.rel()
            ));
        }
        let buf = self
            .pool()
            .read_buffer(self.rel(), ForkNumber::Main, block, None)?;
        let g = buf.read();
        Ok((inspect::page_header(&g[..]), inspect::items(&g[..])))
    }

    /// A text dump of heap page `block` ([`inspect::dump_page`]).
    pub fn dump_page(&self, block: BlockNumber) -> Result<String> {
        let buf = self.read_main(block)?;
        let g = buf.read();
        Ok(inspect::dump_page(&g[..]))
    }

    /// The VM bits and live-tuple count of every heap block, as
    /// `(block, bits, count)` (`pg_visibility_map`-style).
    pub fn inspect_vm(&self) -> Result<Vec<(BlockNumber, u8, u16)>> {
        let nblocks = self.nblocks()?;
        let vm_blocks = self.pool().nblocks(self.rel(), ForkNumber::VisibilityMap)?;
        let mut out = Vec::with_capacity(nblocks as usize);
        for vb in 0..vm_blocks.min(nblocks.div_ceil(vm::HEAPBLOCKS_PER_PAGE)) {
            let vbuf = self
                .pool()
                .read_buffer(self.rel(), ForkNumber::VisibilityMap, vb, None)?;
            let vg = vbuf.read();
            let first = vb * vm::HEAPBLOCKS_PER_PAGE;
            for b in first..nblocks.min(first + vm::HEAPBLOCKS_PER_PAGE) {
                let (bits, c) = vm::get(&vg[..], b);
                out.push((b, bits, c));
            }
        }
        for b in out.len() as u32..nblocks {
            out.push((b, 0, 0));
        }
        Ok(out)
    }
}

/// Names the page in a corruption error found while reading it (the buffer
/// manager's checksum errors already do).
fn in_block(e: crate::error::Error, block: BlockNumber, rel: &HeapRelation) -> crate::error::Error {
    if e.code == crate::error::SqlState::DataCorrupted && !e.message.contains("block") {
        let msg = format!("invalid page in block {block} of relation {}", rel.rel());
        crate::error::Error::new(e.code, msg).with_detail(e.message)
    } else {
        e
    }
}

/// Sets hint bits on a pinned page under its exclusive lock.
///
/// This waits for the lock. A conditional lock would do (hints are optional),
/// but `PinnedBuffer::try_write` currently builds its guard eagerly
/// (`then_some`), so a failed attempt releases a lock it never took; until
/// that is fixed the blocking lock is the safe choice. The caller holds no
/// content lock, so waiting cannot deadlock.
fn set_hints(buf: &PinnedBuffer<'_>, hints: &[Hint]) {
    let mut w = buf.write();
    if apply_page_hints(&mut w[..], hints) {
        w.mark_dirty_hint();
    }
}

impl<'r> HeapScan<'r> {
    /// Pins `block` for the scan. `None` when VACUUM has truncated the
    /// relation below it since the scan started: the pages cut off were
    /// empty, so the scan simply ends there (a parallel participant's later
    /// chunks lie past the cut too).
    ///
    /// A page the pool lacks is read with the pages after it in the
    /// current chunk, up to [`READ_RUN`] (and half the scan's ring), in one
    /// `preadv` per run of missing pages; their pins wait in `run` for the
    /// next calls. A cached page is pinned alone, as before.
    fn pin(&mut self, block: BlockNumber) -> Result<Option<PinnedBuffer<'r>>> {
        // Pins of blocks the block filter left unread are dropped.
        while let Some(buf) = self.run.pop_front() {
            if buf.block() == block {
                return Ok(Some(buf));
            }
            if buf.block() > block {
                self.run.clear();
                break;
            }
        }
        let rel = self.rel;
        // A cached page: pinned through its hint alone, as before runs.
        if let Some(buf) = rel.pool().pin_recent(
            rel.rel(),
            ForkNumber::Main,
            block,
            &self.recent,
            self.ring.is_some(),
        ) {
            return Ok(Some(buf));
        }
        let mut count = self.end.saturating_sub(block).min(READ_RUN as BlockNumber);
        if let Some(ring) = &self.ring {
            count = count.min((ring.len() / 2).max(1) as BlockNumber);
        }
        let mut batch = std::mem::take(&mut self.batch);
        let res = rel.pool().read_buffers_recent(
            rel.rel(),
            ForkNumber::Main,
            block,
            count,
            &self.recent,
            self.ring.as_mut(),
            &mut batch,
        );
        self.run.extend(batch.drain(..));
        self.batch = batch;
        match res {
            Ok(()) => Ok(self.run.pop_front()),
            Err(_) if block >= rel.nblocks()? => {
                self.run.clear();
                self.next = self.end;
                Ok(None)
            }
            Err(e) => {
                self.run.clear();
                Err(e)
            }
        }
    }

    /// Whether a block is left to visit (`self.next`); a parallel
    /// participant takes its next chunk when the current one is done.
    fn advance(&mut self) -> bool {
        if self.next < self.end {
            return true;
        }
        match self
            .queued
            .take()
            .or_else(|| self.shared.and_then(ParallelBlocks::next_chunk))
        {
            Some((start, end)) => {
                (self.next, self.end) = (start, end);
                true
            }
            None => false,
        }
    }

    /// Lets a participant of a parallel scan take its next chunk while it
    /// reads the last page of the current one, so that page's loop has a
    /// frame to prefetch ([`Ahead`]) at chunk ends too. Off by default:
    /// a caller that waits between chunks must not hold one it has not
    /// started (COPY TO's formatters take an output buffer before each
    /// chunk, and the writer waits for the chunks in order).
    pub fn claim_ahead(&mut self) {
        self.claim_ahead = true;
    }

    /// The block after the one being read, for prefetching its frame
    /// ([`Ahead`]): the next of this chunk, or with
    /// [`HeapScan::claim_ahead`] the first of the next chunk (taken now)
    /// when this is the chunk's last; `u32::MAX` (no hint) at the end.
    fn ahead_block(&mut self) -> BlockNumber {
        if self.next < self.end {
            return self.next;
        }
        if self.queued.is_none() && self.claim_ahead {
            self.queued = self.shared.and_then(ParallelBlocks::next_chunk);
        }
        self.queued.map_or(BlockNumber::MAX, |(start, _)| start)
    }

    /// Lets `filter` leave blocks unread: [`HeapScan::next_page_lazy`] asks
    /// it about each block before pinning it and goes on past the blocks it
    /// says to leave.
    pub fn skip_blocks(&mut self, filter: BlockFilter<'r>) {
        self.skip = Some(filter);
    }

    /// Lets `hook` look at each ALL_VISIBLE page [`HeapScan::next_page_lazy`]
    /// reads, under the page's shared lock, before the caller's closure
    /// (the page summaries a scan fills in: `access::sumfork`).
    pub fn on_all_visible(&mut self, hook: PageHook<'r>) {
        self.hook = Some(hook);
    }

    /// The number of blocks this scan visits.
    pub fn nblocks(&self) -> BlockNumber {
        self.nblocks
    }

    /// Visits the next page: calls `f(block, page, visible)` with the page
    /// bytes and the line pointers of the tuples the snapshot sees, under the
    /// page's shared content lock. Returns `None` after the last page.
    pub fn next_page<R>(
        &mut self,
        f: impl FnOnce(BlockNumber, &[u8], &[OffsetNumber]) -> R,
    ) -> Result<Option<R>> {
        let mut all = std::mem::take(&mut self.all);
        let r = self.next_page_lazy(|block, pg, visible, _| match visible {
            Visible::Listed(v) => f(block, pg, v),
            Visible::AllNormal => {
                all.clear();
                push_normal(pg, page::max_offset(pg), &mut all);
                f(block, pg, &all)
            }
        });
        self.all = all;
        r
    }

    /// [`HeapScan::next_page`] that does not list the line pointers of an
    /// ALL_VISIBLE page ([`Visible::AllNormal`]: every NORMAL one is
    /// visible), for callers that walk the line pointer array themselves.
    /// `f` also gets the frame of the page the scan reads next ([`Ahead`]),
    /// to prefetch a line or two per tuple as it goes.
    pub fn next_page_lazy<R>(
        &mut self,
        f: impl FnOnce(BlockNumber, &[u8], Visible<'_>, Ahead) -> R,
    ) -> Result<Option<R>> {
        match self.next_block()? {
            Some(block) => self.read_block(block, f),
            None => Ok(None),
        }
    }

    /// The next block to visit (past those the block filter leaves), taken
    /// from the scan without reading it; `None` after the last. The caller
    /// reads it with [`HeapScan::read_block`] or answers it otherwise (the
    /// packed column cache: `exec::fastpath::packed`).
    pub fn next_block(&mut self) -> Result<Option<BlockNumber>> {
        loop {
            if !self.advance() {
                return Ok(None);
            }
            let block = self.next;
            self.next += 1;
            if let Some(skip) = &mut self.skip {
                let n = skip(block, self.end)?;
                if n > 0 {
                    self.next = block.saturating_add(n).min(self.end).max(block + 1);
                    continue;
                }
            }
            return Ok(Some(block));
        }
    }

    /// Reads block `block`, just taken by [`HeapScan::next_block`], as
    /// [`HeapScan::next_page_lazy`] does.
    pub fn read_block<R>(
        &mut self,
        block: BlockNumber,
        f: impl FnOnce(BlockNumber, &[u8], Visible<'_>, Ahead) -> R,
    ) -> Result<Option<R>> {
        let rel = self.rel;
        let Some(buf) = self.pin(block)? else {
            return Ok(None);
        };
        let ahead = rel.pool().frame_hint(self.ahead_block(), &self.recent);
        let mut g = buf.read();
        page::verify_header(&g[..]).map_err(|e| in_block(e, block, rel))?;
        if page::is_all_visible(&g[..]) {
            if let Some(hook) = &mut self.hook {
                hook(block, &g[..])?;
            }
            return Ok(Some(f(block, &g[..], Visible::AllNormal, ahead)));
        }
        self.visible.clear();
        self.hints.clear();
        collect_visible(
            &g[..],
            &self.snap,
            rel.txns().clog(),
            &mut self.visible,
            &mut self.hints,
        )
        .map_err(|e| in_block(e, block, rel))?;
        if !self.hints.is_empty() {
            drop(g);
            set_hints(&buf, &self.hints);
            g = buf.read();
        }
        Ok(Some(f(
            block,
            &g[..],
            Visible::Listed(&self.visible),
            ahead,
        )))
    }

    /// Visits the next page only to count the tuples the snapshot sees (no
    /// list of offsets; ALL_VISIBLE pages count line pointers). Returns
    /// `None` after the last page.
    pub fn count_next_page(&mut self) -> Result<Option<u64>> {
        if !self.advance() {
            return Ok(None);
        }
        let block = self.next;
        self.next += 1;
        let rel = self.rel;
        let Some(buf) = self.pin(block)? else {
            return Ok(None);
        };
        self.hints.clear();
        let g = buf.read();
        let n = count_visible(&g[..], &self.snap, rel.txns().clog(), &mut self.hints)
            .map_err(|e| in_block(e, block, rel))?;
        drop(g);
        if !self.hints.is_empty() {
            set_hints(&buf, &self.hints);
        }
        Ok(Some(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_blocks_hand_out_every_block_once_across_threads() {
        for nblocks in [0, 1, PARALLEL_CHUNK - 1, PARALLEL_CHUNK, 1000] {
            let blocks = ParallelBlocks::new(nblocks, 3);
            let seen: Vec<Vec<BlockNumber>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..3)
                    .map(|_| {
                        s.spawn(|| {
                            let mut mine = Vec::new();
                            while let Some((start, end)) = blocks.next_chunk() {
                                assert!(start < end && end <= nblocks);
                                assert!(end - start <= PARALLEL_CHUNK);
                                mine.extend(start..end);
                            }
                            mine
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("no panic"))
                    .collect()
            });
            let mut all: Vec<BlockNumber> = seen.into_iter().flatten().collect();
            all.sort_unstable();
            assert_eq!(all, (0..nblocks).collect::<Vec<_>>());
            assert_eq!(blocks.next_chunk(), None, "stays exhausted");
        }
    }

    #[test]
    fn chunks_of_a_length_cover_the_blocks_in_order() {
        for (nblocks, len) in [(0, 7), (5, 7), (7, 7), (3000, 1024), (3072, 1024)] {
            let blocks = ParallelBlocks::new(nblocks, 1);
            let mut got = Vec::new();
            while let Some(c) = blocks.next_chunk_of(len) {
                got.push(c);
            }
            let want: Vec<_> = (0..nblocks)
                .step_by(len as usize)
                .map(|s| (s, nblocks.min(s + len)))
                .collect();
            assert_eq!(got, want, "{nblocks} blocks by {len}");
            assert_eq!(blocks.handed_out(), nblocks);
        }
    }
}
