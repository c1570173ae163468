//! VACUUM's work on one heap page (PostgreSQL's `lazy_scan_prune` and,
//! for a table without indexes, `lazy_vacuum_heap_page` in the same step;
//! with indexes the DEAD line pointers wait for the index pass and
//! [`HeapRelation::vacuum_dead_items`]), and the truncation of empty pages
//! at the end of a relation.
//!
//! [`HeapRelation::vacuum_page`] takes the page's *cleanup* lock (exclusive,
//! no other pin) once and, under it:
//!
//! 1. classifies every tuple against the horizon (`oldest_xmin`) with
//!    [`satisfies_vacuum`](super::visibility::satisfies_vacuum) and sets the
//!    hint bits found (a hint-only change);
//! 2. prunes: tuples dead to everyone go (their line pointers become UNUSED
//!    at once, as nothing else can point at them), HOT chains are shortened,
//!    the page is compacted ([`HeapRelation::prune_locked`]). When nothing
//!    is removed (every page after a load), the classifying loop has also
//!    counted what steps 3 and 4 need (`PageSummary`), and the page is not
//!    walked again;
//! 3. under FREEZE, marks every remaining live tuple older than the horizon
//!    frozen (a [`HeapRecord::Freeze`]);
//! 4. when every remaining tuple is live and older than the horizon, sets
//!    `PD_ALL_VISIBLE` and the page's VM bits with its live-tuple count
//!    (all-frozen too when every tuple is frozen). The flag is set like a
//!    hint bit ([`HeapRelation::set_all_visible_hint`]: never as an image,
//!    the page LSN unchanged) and logged inside the `VmSet`, which also
//!    carries the page's summary slot (`access::sumfork`): one record per
//!    page, so a page VACUUM only hinted costs no full-page image;
//! 5. records the page's free space in the free-space map, so later inserts
//!    reuse it.
//!
//! Each step is a [`HeapRecord`] applied and logged by
//! [`HeapRelation::log_apply`], the one rule of the access layer.
//! A writer of the page waits at most for this one page; VACUUM never holds
//! two heap page locks. The VM page is locked after the heap page, never the
//! other way round.
//!
//! Truncation ([`HeapRelation::truncate_empty_tail`]) cuts off empty pages at
//! the end of the relation. It runs only when it can take the relation's
//! truncation lock at once (no insert or update running; they hold it
//! shared), so no page it cuts can be receiving a tuple; otherwise it leaves
//! the cut to a later VACUUM, as PostgreSQL does when it cannot get its lock.
//! Scans that started before the cut end early at the new end (the pages
//! cut off were empty).

use super::heapam::HeapRelation;
use super::prune::{PruneMode, PruneScratch};
use super::record::HeapRecord;
use super::tuple;
use super::visibility::{satisfies_vacuum, VacuumStatus};
use crate::access::vm;
use crate::error::{Result, SqlState};
use crate::storage::page::{self, OffsetNumber, LP_DEAD, LP_NORMAL};
use crate::storage::{BlockNumber, ForkNumber, PinnedBuffer, Ring};
use crate::txn::Xid;

/// How to vacuum a page.
#[derive(Debug, Clone, Copy)]
pub struct VacuumCutoffs {
    /// Rows deleted by transactions that committed before this are dead to
    /// everyone ([`TxnManager::oldest_xmin`](crate::txn::TxnManager::oldest_xmin)
    /// when VACUUM started).
    pub oldest_xmin: Xid,
    /// Freeze every live tuple older than `oldest_xmin` (VACUUM FREEZE).
    pub freeze: bool,
    /// The table has indexes: pruning leaves DEAD line pointers, which the
    /// page's visit lists in `PruneScratch::dead_items` for the index pass
    /// and [`HeapRelation::vacuum_dead_items`].
    pub indexes: bool,
}

/// What vacuuming one page found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageVacuumStats {
    /// Tuples removed.
    pub removed: u32,
    /// Live tuples left (visible to new snapshots, or being inserted).
    pub live: u32,
    /// Deleted tuples some snapshot may still see ("dead but not yet removable").
    pub recently_dead: u32,
    /// Tuples frozen.
    pub frozen: u32,
    /// The page was all-visible before (only possible when it was not skipped).
    pub was_all_visible: bool,
    /// The page was set all-visible by this pass.
    pub newly_all_visible: bool,
    /// The page was set all-frozen by this pass.
    pub newly_all_frozen: bool,
    /// The page is all-visible after the pass.
    pub all_visible: bool,
    /// The page holds no line pointer at all after the pass (truncatable).
    pub empty: bool,
    /// Free bytes for new tuples after the pass.
    pub free: usize,
    /// DEAD line pointers left for the index pass (tables with indexes).
    pub dead_items: u32,
}

impl HeapRelation {
    /// Vacuums heap page `block` (see the module doc), reading it through
    /// `ring` (the vacuum ring). The caller holds no lock; this waits for the
    /// page's cleanup lock.
    pub fn vacuum_page(
        &self,
        block: BlockNumber,
        cutoffs: VacuumCutoffs,
        ring: Option<&mut Ring>,
        scratch: &mut PruneScratch,
    ) -> Result<PageVacuumStats> {
        let buf = self
            .pool()
            .read_buffer(self.rel(), ForkNumber::Main, block, ring)?;
        self.vacuum_pinned(buf, cutoffs, scratch)
    }

    /// [`HeapRelation::vacuum_page`] of the main-fork page `buf` pins (read
    /// ahead by the caller, `BufferPool::read_buffers`); the pin is this
    /// call's only one on the buffer, so that its cleanup lock can be had.
    pub fn vacuum_pinned(
        &self,
        buf: PinnedBuffer<'_>,
        cutoffs: VacuumCutoffs,
        scratch: &mut PruneScratch,
    ) -> Result<PageVacuumStats> {
        self.vacuum_pinned_in(buf, cutoffs, scratch, &mut None)
    }

    /// [`HeapRelation::vacuum_pinned`] with the caller's pin on the
    /// visibility-map page it used last (`vm_pin`, kept across calls: see
    /// [`HeapRelation::set_vm_in`]).
    pub fn vacuum_pinned_in<'a>(
        &'a self,
        buf: PinnedBuffer<'_>,
        cutoffs: VacuumCutoffs,
        scratch: &mut PruneScratch,
        vm_pin: &mut Option<PinnedBuffer<'a>>,
    ) -> Result<PageVacuumStats> {
        debug_assert_eq!(buf.tag().rel, self.rel());
        let block = buf.block();
        let mut g = buf.cleanup_lock();
        let mut out = PageVacuumStats::default();
        if page::is_new(&g[..]) {
            self.check_page(block, &g[..])?;
            out.empty = true;
            return Ok(out);
        }
        out.was_all_visible = page::is_all_visible(&g[..]);
        // The page's summary slot is built in pruning's walk, for when the
        // page ends all-visible (`access::sumbuild`).
        scratch.slot.start(self.summary_spec());
        let pruned = self.prune_locked(
            block,
            &mut g,
            cutoffs.oldest_xmin,
            if cutoffs.indexes {
                PruneMode::RootsIndexed
            } else {
                PruneMode::NoIndexes
            },
            scratch,
        )?;
        out.removed = pruned.removed;
        scratch.dead_items.clear();
        // Every line pointer but DEAD and UNUSED ones: none means the page
        // is empty once the second pass frees the DEAD ones.
        let mut kept = 0u32;
        if cutoffs.indexes && (scratch.saw_dead || pruned.dead > 0) {
            for o in 1..=page::max_offset(&g[..]) {
                match page::item_id(&g[..], o).flags {
                    LP_DEAD => scratch.dead_items.push(o),
                    page::LP_UNUSED => {}
                    _ => kept += 1,
                }
            }
            out.dead_items = scratch.dead_items.len() as u32;
        }
        // What is left: decide freezing and the VM bits. When pruning left
        // the line pointers alone it summed the tuples up on its way (a
        // page after a load); FREEZE with tuples to freeze needs their
        // offsets, and a pruned page is walked again.
        let max = page::max_offset(&g[..]);
        let mut to_freeze: Vec<OffsetNumber> = Vec::new();
        let (all_visible, all_frozen) = match scratch.unpruned.take() {
            Some(sum) if !(cutoffs.freeze && sum.unfrozen > 0) => {
                out.live = sum.live;
                out.recently_dead = sum.recently_dead;
                #[cfg(debug_assertions)]
                {
                    // The walk it saves gives the same answer.
                    let mut walked = PageVacuumStats::default();
                    let got = Self::summarize(
                        &g[..],
                        cutoffs,
                        &scratch.status,
                        &mut walked,
                        &mut to_freeze,
                    );
                    assert!(to_freeze.is_empty());
                    assert_eq!(got, (sum.all_visible, sum.unfrozen == 0));
                    assert_eq!(
                        (walked.live, walked.recently_dead),
                        (out.live, out.recently_dead)
                    );
                }
                (sum.all_visible, sum.unfrozen == 0)
            }
            _ => Self::summarize(&g[..], cutoffs, &scratch.status, &mut out, &mut to_freeze),
        };
        if !to_freeze.is_empty() {
            out.frozen = to_freeze.len() as u32;
            self.log_apply(
                ForkNumber::Main,
                block,
                &mut g,
                &HeapRecord::Freeze { offsets: to_freeze },
                0,
            )?;
        }
        out.empty = max == 0 || (out.dead_items > 0 && kept == 0);
        if all_visible && max > 0 {
            let bits = if all_frozen {
                vm::VM_ALL_VISIBLE | vm::VM_ALL_FROZEN
            } else {
                vm::VM_ALL_VISIBLE
            };
            let count = out.live as u16;
            // The flag rides in the `VmSet` (one record for both).
            let flag = !out.was_all_visible && self.set_all_visible_hint(&mut g)?;
            let built = scratch.slot.finish(count);
            let (old_bits, _) =
                self.set_vm_in(block, bits, count, vm_pin, Some(&g[..]), built, flag)?;
            out.newly_all_visible = old_bits & vm::VM_ALL_VISIBLE == 0;
            out.newly_all_frozen =
                bits & vm::VM_ALL_FROZEN != 0 && old_bits & vm::VM_ALL_FROZEN == 0;
            out.all_visible = true;
        } else if out.was_all_visible {
            // A page flagged all-visible with tuples that are not: never
            // leave the flag claiming it (clearing is always safe).
            self.log_apply(
                ForkNumber::Main,
                block,
                &mut g,
                &HeapRecord::ClearAllVisible,
                0,
            )?;
            self.clear_vm(block)?;
        }
        out.free = page::heap_free_space(&g[..]);
        self.note_free_space(block, out.free);
        Ok(out)
    }

    /// VACUUM's second heap pass on the main-fork page `buf` pins
    /// (PostgreSQL's `lazy_vacuum_heap_page`): frees the DEAD line pointers
    /// `offsets` (ascending; found DEAD on this page by the first pass,
    /// whose index entries every index of the table has since deleted and
    /// logged), then, the page's tuples decided again against `cutoffs`,
    /// freezes and sets the visibility-map bits as the first pass would
    /// have. The returned stats carry only the flags, `frozen` and `free`.
    ///
    /// The caller must have logged every index's deletions of these TIDs
    /// first: the `VacuumDead` record then follows them in the log, so no
    /// redo can free a slot an index still names.
    pub fn vacuum_dead_items<'a>(
        &'a self,
        buf: PinnedBuffer<'_>,
        offsets: &[OffsetNumber],
        cutoffs: VacuumCutoffs,
        vm_pin: &mut Option<PinnedBuffer<'a>>,
    ) -> Result<PageVacuumStats> {
        debug_assert_eq!(buf.tag().rel, self.rel());
        let block = buf.block();
        // Nothing moves: an exclusive lock is enough (as PostgreSQL).
        let mut g = buf.write();
        self.check_page(block, &g[..])?;
        let mut out = PageVacuumStats::default();
        if page::is_new(&g[..]) {
            return Err(crate::err!(
                DataCorrupted,
                "block {block} of relation {} lost its DEAD line pointers",
                self.rel()
            ));
        }
        if !offsets.is_empty() {
            self.log_apply(
                ForkNumber::Main,
                block,
                &mut g,
                &HeapRecord::VacuumDead {
                    offsets: offsets.to_vec(),
                },
                0,
            )?;
        }
        // The page's tuples again (a writer may have changed it since the
        // first pass): hint bits make this cheap.
        let max = page::max_offset(&g[..]);
        let mut status = Vec::with_capacity(max as usize + 1);
        status.push(None);
        for o in 1..=max {
            status.push(match page::get_item(&g[..], o) {
                Some(t) if t.len() >= tuple::HEADER_SIZE => {
                    Some(satisfies_vacuum(t, cutoffs.oldest_xmin, self.txns())?.0)
                }
                _ => None,
            });
        }
        out.was_all_visible = page::is_all_visible(&g[..]);
        let mut to_freeze = Vec::new();
        let mut counts = PageVacuumStats::default();
        let (all_visible, all_frozen) =
            Self::summarize(&g[..], cutoffs, &status, &mut counts, &mut to_freeze);
        if !to_freeze.is_empty() {
            out.frozen = to_freeze.len() as u32;
            self.log_apply(
                ForkNumber::Main,
                block,
                &mut g,
                &HeapRecord::Freeze { offsets: to_freeze },
                0,
            )?;
        }
        out.empty = max == 0;
        if all_visible && max > 0 {
            let bits = if all_frozen {
                vm::VM_ALL_VISIBLE | vm::VM_ALL_FROZEN
            } else {
                vm::VM_ALL_VISIBLE
            };
            let flag = !out.was_all_visible && self.set_all_visible_hint(&mut g)?;
            let (old_bits, _) = self.set_vm_in(
                block,
                bits,
                counts.live as u16,
                vm_pin,
                Some(&g[..]),
                None,
                flag,
            )?;
            out.newly_all_visible = old_bits & vm::VM_ALL_VISIBLE == 0;
            out.newly_all_frozen =
                bits & vm::VM_ALL_FROZEN != 0 && old_bits & vm::VM_ALL_FROZEN == 0;
            out.all_visible = true;
        }
        out.free = page::heap_free_space(&g[..]);
        self.note_free_space(block, out.free);
        Ok(out)
    }

    /// Walks the tuples left on page `p` after pruning (`status`: each
    /// line pointer's status as pruning found it): counts the live and
    /// recently dead ones into `out`, lists in `to_freeze` the live tuples
    /// to freeze under FREEZE, and returns whether the page is all-visible
    /// and (with those frozen) all-frozen.
    fn summarize(
        p: &[u8],
        cutoffs: VacuumCutoffs,
        status: &[Option<VacuumStatus>],
        out: &mut PageVacuumStats,
        to_freeze: &mut Vec<OffsetNumber>,
    ) -> (bool, bool) {
        let mut all_visible = true;
        let mut all_frozen = true;
        for o in 1..=page::max_offset(p) {
            let id = page::item_id(p, o);
            if id.flags == LP_DEAD {
                all_visible = false;
                continue;
            }
            if id.flags != LP_NORMAL {
                continue;
            }
            let Some(t) = page::get_item(p, o).filter(|t| t.len() >= tuple::HEADER_SIZE) else {
                all_visible = false;
                continue;
            };
            let mask = tuple::infomask(t);
            let frozen = mask & tuple::HEAP_XMIN_FROZEN == tuple::HEAP_XMIN_FROZEN;
            match status.get(o as usize).copied().flatten() {
                Some(VacuumStatus::Live) => {
                    out.live += 1;
                    if frozen || tuple::xmin(t) < cutoffs.oldest_xmin {
                        if !frozen {
                            if cutoffs.freeze {
                                to_freeze.push(o);
                            } else {
                                all_frozen = false;
                            }
                        }
                    } else {
                        // Committed, but some snapshot may not see it yet.
                        all_visible = false;
                    }
                }
                Some(VacuumStatus::RecentlyDead) => {
                    out.recently_dead += 1;
                    all_visible = false;
                }
                Some(VacuumStatus::InsertInProgress) | Some(VacuumStatus::DeleteInProgress) => {
                    out.live += 1;
                    all_visible = false;
                }
                // Dead but not removed (a chain member pruning kept): keep it
                // out of the all-visible claim.
                Some(VacuumStatus::Dead) | None => all_visible = false,
            }
        }
        (all_visible, all_frozen)
    }

    /// Makes durable every asynchronous commit not yet flushed, so that
    /// VACUUM may set `PD_ALL_VISIBLE` on pages that rely on them without
    /// tying the page to the log ([`HeapRelation::set_all_visible_hint`]
    /// leaves its LSN alone, so the page may reach disk first). Call after
    /// taking the horizon: a transaction older than it has finished, so its
    /// commit record is in the log by then. One flush at most, and none when
    /// no asynchronous commit is pending (PostgreSQL sets the flag with no
    /// such care, so after a crash that loses an asynchronous commit its
    /// page may claim rows of an aborted transaction visible to all).
    pub fn flush_async_commits(&self) -> Result<()> {
        let Some(wal) = self.wal() else {
            return Ok(());
        };
        if let Some(lsn) = self.txns().clog().pending_async_commit_lsn() {
            wal.flush(lsn)?;
        }
        Ok(())
    }

    /// Cuts off the empty pages at the end of the relation, looking back
    /// from the last block but not below `floor` (blocks below it are known
    /// to hold tuples). Returns the number of blocks removed (0 when the
    /// last page holds tuples, or when an insert or update is running on the
    /// relation: the cut is then left to a later VACUUM).
    ///
    /// The cut is logged and the log flushed before the file is shortened
    /// ([`HeapRelation::truncate_blocks`]).
    pub fn truncate_empty_tail(&self, floor: BlockNumber) -> Result<BlockNumber> {
        let Some(_excluded) = self.try_exclude_writers() else {
            return Ok(0);
        };
        let nblocks = self.nblocks()?;
        let mut keep = nblocks;
        while keep > floor {
            let b = keep - 1;
            let buf = self
                .pool()
                .read_buffer(self.rel(), ForkNumber::Main, b, None)?;
            let g = buf.read();
            if !page::is_new(&g[..]) && page::max_offset(&g[..]) > 0 {
                break;
            }
            keep = b;
        }
        if keep == nblocks {
            return Ok(0);
        }
        // truncate_blocks clears the VM bits of the cut blocks and logs the
        // cut before making it. A reader may read a tail block between the
        // buffer pool's discard and the file's cut and leave a valid buffer
        // past the new end; a second discard drops it (the buffer manager
        // should do this itself under a lock readers respect).
        match self.truncate_blocks(keep).and_then(|()| {
            self.pool()
                .truncate_relation(self.rel(), ForkNumber::Main, keep)
        }) {
            Ok(()) => {}
            Err(e) if e.code == SqlState::ObjectInUse => return Ok(0),
            Err(e) => return Err(e),
        }
        Ok(nblocks - keep)
    }
}
