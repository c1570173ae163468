//! Heap access methods on the buffer pool: insert, multi-insert, delete,
//! update, and the visibility-map maintenance they imply. Scans, fetches and
//! inspection are in [`super::scan`].
//!
//! A [`HeapRelation`] is one table's heap: its relation file node, the buffer
//! pool, the transaction manager, the write-ahead log (when attached with
//! [`HeapRelation::with_wal`]) and a small in-memory free-space map. Every
//! page change goes through [`HeapRelation::log_apply`]: the method builds
//! the [`HeapRecord`] and, under the page's exclusive content lock, applies
//! it, inserts it into the log (or the page's image, for the first change
//! after a checkpoint), sets the page LSN and marks the buffer dirty.
//!
//! Visibility-map rule: an insert, update or delete on a page whose
//! `PD_ALL_VISIBLE` flag is set clears that flag (in the record) and the
//! page's VM bits (a `VmClear` on the VM page) while still holding the heap
//! page's exclusive lock, so no reader can see the heap page changed while
//! the VM still claims it is all-visible.
//!
//! Free space: the map remembers the page inserts currently go to and the
//! free bytes last seen on pages that had room; it is rebuilt lazily after a
//! restart (inserts start at the last page). It is a hint: every insert
//! re-checks the page under its lock.
//!
//! Truncation: inserts, multi-inserts, updates, scans and counts hold a
//! per-relation read lock ([`HeapRelation::hold_size`]) for their run;
//! VACUUM's truncation of empty tail pages takes it exclusively when it can
//! (never waiting), so a page it cuts off cannot be receiving a tuple or be
//! read.
//!
//! Locking: one heap page lock at a time, except an update that moves the
//! tuple to another page, which locks both pages in block-number order (and
//! re-checks the old tuple after taking them), and the VM page locked after a
//! heap page, never the other way round.

use std::sync::{Arc, Mutex, RwLock};

use super::fsm::FreeSpace;

use super::pageops::{apply_page_hints, choose_offset, prepare_new_tuple, xmax_set_for, Hint};
use super::record::{apply, HeapRecord, PageRef};
use super::tuple;
use super::visibility::{satisfies_update, satisfies_vacuum, TmResult, VacuumStatus};
use crate::access::{sumfork, vm};
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, maxalign, OffsetNumber, MAX_ITEM_SIZE};
use crate::storage::{
    BlockNumber, BufferPool, BufferWriteGuard, ForkNumber, PinnedBuffer, RelFileNode, Ring,
};
use crate::txn::{CommandId, TxnManager, Xid};
use crate::wal::{Wal, WalRecord};

/// A tuple id: the block and line pointer of a tuple version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tid {
    /// Block number in the main fork.
    pub block: BlockNumber,
    /// Line pointer number on the page (from 1).
    pub offset: OffsetNumber,
}

impl Tid {
    /// The tid as the pair stored in tuple headers.
    pub fn pair(self) -> (u32, OffsetNumber) {
        (self.block, self.offset)
    }
}

impl std::fmt::Display for Tid {
    /// As PostgreSQL prints a ctid: `(0,1)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({},{})", self.block, self.offset)
    }
}

/// One table's heap.
pub struct HeapRelation {
    /// The relation's files (`base/<n>`, `base/<n>_vm`).
    rel: RelFileNode,
    /// The buffer pool.
    pool: Arc<BufferPool>,
    /// Transaction state, for visibility and update checks.
    txns: Arc<TxnManager>,
    /// Where inserts go.
    fsm: Mutex<FreeSpace>,
    /// Readers and writers hold it shared, VACUUM's truncation exclusively.
    truncation: RwLock<()>,
    /// Held while the visibility-map fork is extended, so that two
    /// participants of one VACUUM that both find the map too short add
    /// one page between them, not one each.
    vm_extension: Mutex<()>,
    /// Held while the summary fork is created or extended.
    pub(crate) summary_extension: Mutex<()>,
    /// How the table's columns are summarised, once known
    /// ([`crate::access::sumfork`]).
    pub(crate) summary_spec: RwLock<Option<Arc<crate::access::sumfork::SummarySpec>>>,
    /// Merged summaries per window, dropped by every change of the map
    /// or the slots ([`crate::access::summary_cache`]).
    summary_cache: crate::access::summary_cache::SummaryCache,
    /// The write-ahead log; `None` for an unlogged heap (storage tests).
    wal: Option<Arc<Wal>>,
    /// The transaction that created this relation file, while it may still
    /// be running: its changes are not logged (see [`HeapRelation::skip_wal_for`]).
    skip_wal_xid: std::sync::atomic::AtomicU32,
    /// The buffer each block was last found in, for sequential scans.
    recent: crate::storage::RecentBuffers,
    /// Bytes an insert leaves free on each page (PostgreSQL's
    /// `RelationGetTargetPageFreeSpace`: the page share the table's fill
    /// factor keeps for updates); set by the writers from the table's
    /// definition ([`HeapRelation::set_fillfactor`]).
    fill_reserve: std::sync::atomic::AtomicU32,
}

impl std::fmt::Debug for HeapRelation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeapRelation")
            .field("rel", &self.rel)
            .finish()
    }
}

impl HeapRelation {
    /// Creates the relation's main and visibility-map forks (empty) and opens it.
    pub fn create(
        pool: Arc<BufferPool>,
        txns: Arc<TxnManager>,
        rel: RelFileNode,
    ) -> Result<HeapRelation> {
        pool.create_relation(rel, ForkNumber::Main)?;
        pool.create_relation(rel, ForkNumber::VisibilityMap)?;
        HeapRelation::open(pool, txns, rel)
    }

    /// Opens an existing relation (its forks must exist).
    pub fn open(
        pool: Arc<BufferPool>,
        txns: Arc<TxnManager>,
        rel: RelFileNode,
    ) -> Result<HeapRelation> {
        if !pool.relation_exists(rel, ForkNumber::Main) {
            return Err(err!(
                UndefinedFile,
                "could not open file \"{rel}\": No such file or directory"
            ));
        }
        if !pool.relation_exists(rel, ForkNumber::VisibilityMap) {
            pool.create_relation(rel, ForkNumber::VisibilityMap)?;
        }
        let n = pool.nblocks(rel, ForkNumber::Main)?;
        let fsm = FreeSpace::new(n.checked_sub(1));
        Ok(HeapRelation {
            rel,
            pool,
            txns,
            fsm: Mutex::new(fsm),
            truncation: RwLock::new(()),
            vm_extension: Mutex::new(()),
            summary_extension: Mutex::new(()),
            summary_spec: RwLock::new(None),
            summary_cache: Default::default(),
            wal: None,
            skip_wal_xid: std::sync::atomic::AtomicU32::new(0),
            recent: crate::storage::RecentBuffers::new(),
            fill_reserve: std::sync::atomic::AtomicU32::new(0),
        })
    }

    /// Attaches the write-ahead log: every later page change is logged.
    pub fn with_wal(mut self, wal: Arc<Wal>) -> HeapRelation {
        self.wal = Some(wal);
        self
    }

    /// Stops logging the page changes that transaction `xid`, which just
    /// created this relation file, makes to it (PostgreSQL's
    /// `wal_level = minimal` rule): nobody else can see the relation before
    /// `xid` commits, so instead of logging every page its commit writes and
    /// fsyncs the relation's files before the commit record (the session does
    /// this for every relation in its "drop on abort" list). A bulk load into
    /// a table created or truncated in the same transaction then writes its
    /// data once. Changes by others (after the commit) are logged as usual;
    /// the first one to each page logs the page's image.
    pub fn skip_wal_for(&self, xid: Xid) {
        self.skip_wal_xid
            .store(xid, std::sync::atomic::Ordering::Relaxed);
    }

    /// The write-ahead log, if attached.
    pub fn wal(&self) -> Option<&Arc<Wal>> {
        self.wal.as_ref()
    }

    /// The one way a heap or visibility-map page changes: applies `rec` to
    /// the page `g` (block `block` of `fork`, exclusively locked by the
    /// caller), logs it for transaction `xid` (0: none) when a log is
    /// attached, sets the page LSN and marks the buffer dirty.
    pub fn log_apply(
        &self,
        fork: ForkNumber,
        block: BlockNumber,
        g: &mut BufferWriteGuard<'_>,
        rec: &HeapRecord,
        xid: Xid,
    ) -> Result<()> {
        apply(rec, &mut g[..])?;
        let Some(wal) = &self.wal else {
            g.mark_dirty();
            return Ok(());
        };
        if xid != 0 && xid == self.skip_wal_xid.load(std::sync::atomic::Ordering::Relaxed) {
            g.mark_dirty();
            return Ok(());
        }
        let page = PageRef {
            rel: self.rel.0,
            fork: fork as u8,
            block,
        };
        // Dirty before the record is inserted (PostgreSQL's order): a
        // checkpoint whose redo point falls after this record must find the
        // buffer dirty when it scans the pool for pages to write, or the
        // change would be neither on disk nor replayed from the redo point.
        g.mark_dirty();
        let lsn = wal.insert_page_change(xid, page, &g[..], rec);
        g.set_lsn(lsn);
        wal.write_if_full()
    }

    /// Logs page `block` of the main fork (write-locked by the caller, its
    /// whole content just written from a page image) as a full-page image
    /// (`packed`: already compressed, see [`Wal::insert_page_image`]), and
    /// marks the buffer dirty. Like [`HeapRelation::log_apply`], nothing is
    /// logged for a relation file created by `xid`'s transaction.
    pub(super) fn log_page_image(
        &self,
        block: BlockNumber,
        g: &mut BufferWriteGuard<'_>,
        xid: Xid,
        packed: Option<&crate::wal::record::CompressedFpi>,
    ) -> Result<()> {
        g.mark_dirty();
        let Some(wal) = &self.wal else {
            return Ok(());
        };
        if xid != 0 && xid == self.skip_wal_xid.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        let page = PageRef {
            rel: self.rel.0,
            fork: ForkNumber::Main as u8,
            block,
        };
        let lsn = wal.insert_page_image(xid, page, &g[..], packed);
        g.set_lsn(lsn);
        wal.write_if_full()
    }

    /// Whether changes `xid` makes are logged and page images compressed:
    /// then a page built off the pool may be compressed ahead of
    /// [`HeapRelation::log_page_image`] (COPY's parse threads do).
    pub fn compresses_images_of(&self, xid: Xid) -> bool {
        let skipped =
            xid != 0 && xid == self.skip_wal_xid.load(std::sync::atomic::Ordering::Relaxed);
        !skipped && self.wal.as_ref().is_some_and(|w| w.compresses_images())
    }

    /// The relation file node.
    pub fn rel(&self) -> RelFileNode {
        self.rel
    }

    /// The buffer pool.
    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    /// The transaction manager.
    pub fn txns(&self) -> &Arc<TxnManager> {
        &self.txns
    }

    /// Number of blocks in the main fork.
    pub fn nblocks(&self) -> Result<BlockNumber> {
        self.pool.nblocks(self.rel, ForkNumber::Main)
    }

    /// Records that heap page `block` has `free` bytes for new tuples.
    pub(super) fn note_free_space(&self, block: BlockNumber, free: usize) {
        self.fsm().note(block, free);
    }

    pub(super) fn fsm(&self) -> std::sync::MutexGuard<'_, FreeSpace> {
        self.fsm.lock().expect("free-space map mutex poisoned")
    }

    /// The recent-buffer hints covering blocks `0..nblocks`, for a scan
    /// (see [`crate::storage::recent`]).
    pub fn recent_buffers(
        &self,
        nblocks: BlockNumber,
    ) -> std::sync::Arc<[std::sync::atomic::AtomicU32]> {
        self.recent.slots(nblocks)
    }

    /// Keeps VACUUM from truncating the relation while the guard lives.
    /// Inserts, updates, scans, `count`, fetches and ANALYZE hold it; it
    /// never waits for VACUUM, which only *tries* the other side and skips
    /// truncating when anyone holds this one.
    pub fn hold_size(&self) -> std::sync::RwLockReadGuard<'_, ()> {
        self.truncation.read().expect("truncation lock poisoned")
    }

    /// The truncation side of that lock, if no writer is running now
    /// (VACUUM gives up truncating otherwise, as PostgreSQL does when it
    /// cannot get its lock at once).
    pub(super) fn try_exclude_writers(&self) -> Option<std::sync::RwLockWriteGuard<'_, ()>> {
        self.truncation.try_write().ok()
    }

    /// Checks the header of heap page `block` (locked by the caller) before
    /// any offset arithmetic trusts it: a corrupt page is an XX001 error
    /// naming the block, never a panic.
    pub(super) fn check_page(&self, block: BlockNumber, p: &[u8]) -> Result<()> {
        page::verify_header(p).map_err(|e| {
            err!(
                DataCorrupted,
                "invalid page in block {block} of relation {}",
                self.rel
            )
            .with_detail(e.message)
        })
    }

    pub(super) fn check_size(len: usize) -> Result<()> {
        if len > MAX_ITEM_SIZE {
            return Err(err!(
                ProgramLimitExceeded,
                "row is too big: size {len}, maximum size {MAX_ITEM_SIZE}"
            ));
        }
        if len < tuple::HEADER_SIZE {
            return Err(err!(
                InternalError,
                "heap tuple of {len} bytes is shorter than its header"
            ));
        }
        Ok(())
    }

    /// Clears the VM bits of `block`, whose heap page lock the caller holds
    /// and whose `PD_ALL_VISIBLE` flag it is clearing.
    pub(super) fn clear_vm(&self, block: BlockNumber) -> Result<()> {
        let vb = vm::vm_block(block);
        if vb >= self.pool.nblocks(self.rel, ForkNumber::VisibilityMap)? {
            return Ok(());
        }
        let buf = self
            .pool
            .read_buffer(self.rel, ForkNumber::VisibilityMap, vb, None)?;
        let mut g = buf.write();
        if vm::get(&g[..], block).0 != 0 {
            self.log_apply(
                ForkNumber::VisibilityMap,
                vb,
                &mut g,
                &HeapRecord::VmClear { heap_block: block },
                0,
            )?;
            self.summary_cache.invalidate(block);
        }
        Ok(())
    }

    /// The relation's cache of merged window summaries.
    pub fn summary_cache(&self) -> &crate::access::summary_cache::SummaryCache {
        &self.summary_cache
    }

    /// Sets the page's PD_ALL_VISIBLE flag through a logged
    /// `SetAllVisible` record, unless it is set already (the caller sets
    /// the visibility-map bits next, with [`HeapRelation::set_vm`]).
    pub(super) fn log_all_visible(
        &self,
        block: BlockNumber,
        g: &mut BufferWriteGuard<'_>,
        xid: Xid,
    ) -> Result<()> {
        if page::is_all_visible(&g[..]) {
            return Ok(());
        }
        self.log_apply(ForkNumber::Main, block, g, &HeapRecord::SetAllVisible, xid)
    }

    /// Sets the page's `PD_ALL_VISIBLE` flag as VACUUM does after a load:
    /// as a hint, with no record of its own and without moving the page's
    /// LSN; the caller logs it inside the `VmSet` that follows
    /// ([`HeapRelation::set_vm_in`] with `flag_unlogged`), whose redo sets
    /// the flag before the bits. Never a full-page image: the page
    /// checksum leaves the flag out (as it leaves out hint bits,
    /// `storage::checksum`), so a torn write of the page is still valid;
    /// and since the LSN stays at or before the redo point when it was
    /// there, the next real change still logs the image that protects
    /// *it*. The page may reach disk before the record: harmless, as the
    /// flag is true once the caller made the commits it relies on durable
    /// ([`HeapRelation::flush_async_commits`]). Returns whether the flag
    /// was clear (false: nothing changed).
    pub(super) fn set_all_visible_hint(&self, g: &mut BufferWriteGuard<'_>) -> Result<bool> {
        if page::is_all_visible(&g[..]) {
            return Ok(false);
        }
        apply(&HeapRecord::SetAllVisible, &mut g[..])?;
        // A hint-like change: the page's checksum stays right.
        g.mark_dirty_hint();
        Ok(true)
    }

    /// Sets the VM bits and live count of heap block `block` (whose heap
    /// page lock the caller holds), extending the VM fork as needed; logged
    /// only when they change. Returns the previous bits and count. `page`
    /// is the heap page's bytes, summarised when the bit goes from clear to
    /// set (`None`: no summary is made, and the block's slot is cleared).
    pub(super) fn set_vm(
        &self,
        block: BlockNumber,
        bits: u8,
        count: u16,
        page: Option<&[u8]>,
    ) -> Result<(u8, u16)> {
        self.set_vm_in(block, bits, count, &mut None, page, None, false)
    }

    /// [`HeapRelation::set_vm`] through `pin`, the caller's pin on the map
    /// page it set bits on last: kept for the next call when it holds the
    /// same map page (VACUUM sets thousands of blocks' bits in a row on one
    /// map page), replaced otherwise. Saves the buffer lookup and pin per
    /// heap page; the caller drops it when done (a pin blocks no lock).
    ///
    /// `flag_unlogged`: the caller has just set the heap page's
    /// `PD_ALL_VISIBLE` with [`HeapRelation::set_all_visible_hint`], and the
    /// `VmSet` carries it (or, when the bits do not change, a
    /// `SetAllVisible` record of its own is logged).
    ///
    /// When the bit goes from clear to set, the block's summary slot rides
    /// in the same record (`access::sumfork`: one record per heap page, and
    /// never a full-page image of the summary page). `built`: that slot,
    /// already built from the page's tuples under the caller's lock
    /// (`access::sumbuild`); `None` to summarise `page` here.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn set_vm_in<'a>(
        &'a self,
        block: BlockNumber,
        bits: u8,
        count: u16,
        pin: &mut Option<PinnedBuffer<'a>>,
        page: Option<&[u8]>,
        built: Option<Vec<u8>>,
        flag_unlogged: bool,
    ) -> Result<(u8, u16)> {
        let vb = vm::vm_block(block);
        // A pinned map page exists.
        let pinned = pin.as_ref().is_some_and(|p| p.block() == vb);
        if !pinned && self.pool.nblocks(self.rel, ForkNumber::VisibilityMap)? <= vb {
            // Looked at again under the lock: another participant may
            // have extended the map meanwhile.
            let _extending = self
                .vm_extension
                .lock()
                .expect("map extension mutex poisoned");
            while self.pool.nblocks(self.rel, ForkNumber::VisibilityMap)? <= vb {
                let (_, vbuf) = self
                    .pool
                    .extend(self.rel, ForkNumber::VisibilityMap, None)?;
                let mut vg = vbuf.write();
                vm::init_if_new(&mut vg[..]);
                vg.mark_dirty();
            }
        }
        if !pinned {
            *pin = None;
            *pin = Some(
                self.pool
                    .read_buffer(self.rel, ForkNumber::VisibilityMap, vb, None)?,
            );
        }
        let vbuf = pin.as_ref().expect("pinned just above");
        let mut vg = vbuf.write();
        let old = vm::get(&vg[..], block);
        if old == (bits, count) {
            if flag_unlogged {
                self.log_flag_alone(block)?;
            }
            return Ok(old);
        }
        // The block's summary slot, when the bit goes from clear to set: a
        // set bit always has its slot written with it.
        let newly = old.0 & vm::VM_ALL_VISIBLE == 0 && bits & vm::VM_ALL_VISIBLE != 0;
        let mut slot = None;
        let mut sbuf = None;
        if newly {
            let s = match (built, page) {
                (Some(s), _p) => {
                    #[cfg(debug_assertions)]
                    if let Some(p) = _p {
                        let spec = self.summary_spec();
                        assert_eq!(s, sumfork::slot_for_page(spec.as_deref(), p, count));
                    }
                    s
                }
                (None, Some(p)) => sumfork::slot_for_page(self.summary_spec().as_deref(), p, count),
                (None, None) => vec![0u8; sumfork::SLOT_BYTES],
            };
            sbuf = self.summary_page_for_write(block, s.iter().all(|&b| b == 0))?;
            slot = Some(s);
        }
        let mut sg = sbuf.as_ref().map(|b| b.write());
        if let (Some(g), Some(s)) = (&sg, &slot) {
            if !page::is_new(&g[..]) && sumfork::get_slot(&g[..], block) == &s[..] {
                // Written before, by a record ahead of this one.
                sg = None;
                slot = None;
            }
        } else {
            // No summary page and a zero slot: nothing to write.
            slot = None;
        }
        let rec = HeapRecord::VmSet {
            heap_block: block,
            bits,
            count,
            heap_all_visible: flag_unlogged,
            slot,
        };
        apply(&rec, &mut vg[..])?;
        vg.mark_dirty();
        if let (Some(g), HeapRecord::VmSet { slot: Some(s), .. }) = (&mut sg, &rec) {
            sumfork::put_slot(&mut g[..], block, s);
            g.mark_dirty();
        }
        self.summary_cache.invalidate(block);
        let Some(wal) = &self.wal else {
            return Ok(old);
        };
        let vm_page = PageRef {
            rel: self.rel.0,
            fork: ForkNumber::VisibilityMap as u8,
            block: vb,
        };
        let alone = || self.carried_alone(&rec);
        let lsn = wal.insert_page_change_carrying(0, vm_page, &vg[..], &rec, &alone);
        vg.set_lsn(lsn);
        if let Some(g) = &mut sg {
            g.set_lsn(lsn);
        }
        drop(sg);
        wal.write_if_full()?;
        Ok(old)
    }

    /// The changes a `VmSet` carries (see [`HeapRecord::VmSet`]) as records
    /// of their own, for when its map page is logged as an image.
    fn carried_alone(&self, rec: &HeapRecord) -> Vec<(PageRef, HeapRecord)> {
        let mut out = Vec::new();
        if let HeapRecord::VmSet {
            heap_block,
            heap_all_visible,
            slot,
            ..
        } = rec
        {
            let at = |fork: ForkNumber, block| PageRef {
                rel: self.rel.0,
                fork: fork as u8,
                block,
            };
            if *heap_all_visible {
                out.push((at(ForkNumber::Main, *heap_block), HeapRecord::SetAllVisible));
            }
            if let Some(s) = slot {
                out.push((
                    at(ForkNumber::Summary, sumfork::summary_block(*heap_block)),
                    HeapRecord::SummarySet {
                        heap_block: *heap_block,
                        slot: s.clone(),
                    },
                ));
            }
        }
        out
    }

    /// Logs a heap page's `PD_ALL_VISIBLE`, set by
    /// [`HeapRelation::set_all_visible_hint`], by itself (no `VmSet` to
    /// carry it): never as an image, the page LSN left alone.
    fn log_flag_alone(&self, block: BlockNumber) -> Result<()> {
        if let Some(wal) = &self.wal {
            let page = PageRef {
                rel: self.rel.0,
                fork: ForkNumber::Main as u8,
                block,
            };
            wal.insert_page_change_no_image(0, page, &HeapRecord::SetAllVisible);
            wal.write_if_full()?;
        }
        Ok(())
    }

    /// Applies and logs `rec` (by `xid`) on the locked heap page `g` (block
    /// `block`), clearing the VM bits when the record clears
    /// `PD_ALL_VISIBLE` (while the heap page is still locked).
    pub(super) fn apply_heap(
        &self,
        block: BlockNumber,
        g: &mut BufferWriteGuard<'_>,
        rec: &HeapRecord,
        clear: bool,
        xid: Xid,
    ) -> Result<()> {
        self.log_apply(ForkNumber::Main, block, g, rec, xid)?;
        if clear {
            self.clear_vm(block)?;
        }
        Ok(())
    }

    /// Sets hint bits found by an update check, as a hint-only change.
    pub(super) fn set_hints(
        g: &mut BufferWriteGuard<'_>,
        offset: OffsetNumber,
        bits: u16,
        xmax: Xid,
    ) {
        if bits != 0 && apply_page_hints(&mut g[..], &[Hint { offset, bits, xmax }]) {
            g.mark_dirty_hint();
        }
    }

    /// Pins a page that may have `need` free bytes (not `exclude`), extending
    /// the relation when no known page has room.
    pub(super) fn page_for(
        &self,
        need: usize,
        exclude: Option<BlockNumber>,
        ring: Option<&mut Ring>,
    ) -> Result<(BlockNumber, crate::storage::PinnedBuffer<'_>)> {
        let candidate = self.fsm().find(need, exclude);
        if let Some(b) = candidate {
            if b < self.nblocks()? {
                let buf = self.pool.read_buffer(self.rel, ForkNumber::Main, b, ring)?;
                return Ok((b, buf));
            }
            self.fsm().note(b, 0);
        }
        let (b, buf) = self.pool.extend(self.rel, ForkNumber::Main, ring)?;
        let mut fsm = self.fsm();
        fsm.target = Some(b);
        fsm.note(b, page::MAX_ITEM_SIZE);
        Ok((b, buf))
    }

    /// Sets the table's fill factor (percent, 10..=100) for the inserts
    /// that follow: they leave `100 - fillfactor` percent of each page
    /// free, for updates of the page's rows. A page that is new takes a
    /// tuple whatever its size.
    pub fn set_fillfactor(&self, fillfactor: u8) {
        let reserve = crate::storage::BLCKSZ * (100 - usize::from(fillfactor.min(100))) / 100;
        let r = &self.fill_reserve;
        if r.load(std::sync::atomic::Ordering::Relaxed) != reserve as u32 {
            r.store(reserve as u32, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The bytes an insert leaves free on a page (see
    /// [`set_fillfactor`](Self::set_fillfactor)).
    #[inline]
    pub fn fill_reserve(&self) -> usize {
        self.fill_reserve.load(std::sync::atomic::Ordering::Relaxed) as usize
    }

    /// Inserts tuple `data` (formed by [`tuple::form_tuple`]) as transaction
    /// `xid` at command `cid`, into the current insertion page or a page
    /// known to have room (the fill factor's share left free), else a new
    /// page. Returns its tid.
    pub fn insert(&self, data: &[u8], xid: Xid, cid: CommandId) -> Result<Tid> {
        Self::check_size(data.len())?;
        let _size = self.hold_size();
        let reserve = self.fill_reserve();
        let need = maxalign(data.len());
        loop {
            let (block, buf) = self.page_for(need + reserve, None, None)?;
            let mut g = buf.write();
            self.check_page(block, &g[..])?;
            let new = page::is_new(&g[..]);
            let offset = if new {
                Some(1)
            } else {
                choose_offset(&g[..], data.len() + reserve)
            };
            let Some(offset) = offset else {
                self.fsm().note(block, page::heap_free_space(&g[..]));
                continue;
            };
            let mut t = data.to_vec();
            prepare_new_tuple(&mut t, xid, cid, block, offset, false, false);
            let clear = !new && page::is_all_visible(&g[..]);
            let rec = HeapRecord::Insert {
                offset,
                init_page: new,
                clear_all_visible: clear,
                tuple: t,
            };
            self.apply_heap(block, &mut g, &rec, clear, xid)?;
            self.fsm().note(block, page::heap_free_space(&g[..]));
            return Ok(Tid { block, offset });
        }
    }

    /// Deletes the tuple at `tid` as transaction `xid` at command `cid`:
    /// sets its xmax. Anything but [`TmResult::Ok`] means nothing changed;
    /// see [`TmResult`] for what the caller does then.
    pub fn delete(&self, tid: Tid, xid: Xid, cid: CommandId) -> Result<TmResult> {
        let buf = self.read_main(tid.block)?;
        let mut g = buf.write();
        self.check_page(tid.block, &g[..])?;
        let Some(t) = page::get_item(&g[..], tid.offset) else {
            return Ok(TmResult::Invisible);
        };
        let seen_xmax = tuple::xmax(t);
        let (res, hints) = satisfies_update(t, tid.pair(), xid, cid, &self.txns)?;
        let set = xmax_set_for(t, tid.offset, xid, cid, tid.pair());
        Self::set_hints(&mut g, tid.offset, hints, seen_xmax);
        if res != TmResult::Ok {
            return Ok(res);
        }
        let clear = page::is_all_visible(&g[..]);
        self.apply_heap(
            tid.block,
            &mut g,
            &HeapRecord::Delete {
                set,
                clear_all_visible: clear,
            },
            clear,
            xid,
        )?;
        Ok(TmResult::Ok)
    }

    pub(super) fn read_main(&self, block: BlockNumber) -> Result<crate::storage::PinnedBuffer<'_>> {
        if block >= self.nblocks()? {
            return Err(err!(
                InternalError,
                "block {block} of relation {} is out of range",
                self.rel
            ));
        }
        self.pool
            .read_buffer(self.rel, ForkNumber::Main, block, None)
    }

    /// VACUUM's step for one page: when every tuple on heap page `block` is
    /// live and was inserted by a transaction older than `oldest_xmin` (so
    /// every snapshot, now and later, sees it), sets `PD_ALL_VISIBLE` and the
    /// page's VM bit with its live-tuple count, and returns the count.
    /// Returns `None` (changing nothing) otherwise. Hint bits found on the way
    /// are set.
    pub fn set_all_visible_if(&self, block: BlockNumber, oldest_xmin: Xid) -> Result<Option<u16>> {
        let buf = self.read_main(block)?;
        let mut g = buf.write();
        self.check_page(block, &g[..])?;
        if page::is_new(&g[..]) {
            return Ok(None);
        }
        let mut count = 0u16;
        let mut all = true;
        let mut hints = Vec::new();
        for o in 1..=page::max_offset(&g[..]) {
            let id = page::item_id(&g[..], o);
            if id.flags == page::LP_DEAD {
                all = false;
            }
            let Some(t) = page::get_item(&g[..], o) else {
                continue;
            };
            let (status, bits) = satisfies_vacuum(t, oldest_xmin, &self.txns)?;
            if bits != 0 {
                hints.push(Hint {
                    offset: o,
                    bits,
                    xmax: tuple::xmax(t),
                });
            }
            if status == VacuumStatus::Live && tuple::xmin(t) < oldest_xmin {
                count += 1;
            } else {
                all = false;
            }
        }
        if apply_page_hints(&mut g[..], &hints) {
            g.mark_dirty_hint();
        }
        if !all {
            return Ok(None);
        }
        self.log_all_visible(block, &mut g, 0)?;
        self.set_vm(block, vm::VM_ALL_VISIBLE, count, Some(&g[..]))?;
        Ok(Some(count))
    }

    /// Cuts the main fork to `new_nblocks` blocks (VACUUM's tail truncation
    /// of empty pages): clears the visibility-map bits of the blocks cut
    /// off (logged), logs the truncation and flushes the log up to it
    /// (a file cannot be un-truncated, so redo must know of it first), then
    /// truncates the file and forgets its free space. A no-op when the
    /// fork is not longer. Fails with `ObjectInUse` if a cut-off page is
    /// pinned; the caller makes sure the pages are empty.
    pub fn truncate_blocks(&self, new_nblocks: BlockNumber) -> Result<()> {
        let old = self.nblocks()?;
        if new_nblocks >= old {
            return Ok(());
        }
        let vm_blocks = self.pool.nblocks(self.rel, ForkNumber::VisibilityMap)?;
        for block in new_nblocks..old {
            if vm::vm_block(block) >= vm_blocks {
                break;
            }
            self.clear_vm(block)?;
        }
        if let Some(wal) = &self.wal {
            let lsn = wal.insert(
                0,
                &WalRecord::TruncateRel {
                    rel: self.rel.0,
                    fork: ForkNumber::Main as u8,
                    nblocks: new_nblocks,
                },
            );
            wal.flush(lsn)?;
        }
        self.pool
            .truncate_relation(self.rel, ForkNumber::Main, new_nblocks)?;
        self.fsm().truncate(new_nblocks);
        Ok(())
    }
}
