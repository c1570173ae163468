//! The buffer pool's I/O paths: reading a page in, writing a dirty page out
//! (after the WAL flush hook), the I/O-in-progress protocol between threads,
//! flushing many buffers (checkpoint, shutdown, one relation) and discarding
//! a relation's buffers (drop, truncate).
//!
//! # I/O ownership
//!
//! One thread at a time does I/O on a buffer: it sets `IO_IN_PROGRESS` under
//! the header lock (`start_io`), does the read or write without any header
//! or partition lock held, then clears the flag and wakes the waiters
//! (`terminate_io`). Waiters park on the descriptor's address. A read-in owns
//! the frame's bytes (the buffer is not valid, so nobody else looks at them);
//! a write-out holds the content lock in shared mode and writes a copy of the
//! page with the checksum set in the copy.

use std::sync::atomic::{AtomicU32, Ordering};

use parking_lot::lock_api::RawRwLock as _;

use super::buffer::{page_lsn, PinnedBuffer};
use super::bufmgr::BufferPool;
use super::checksum::{set_page_checksum, verify_page};
use super::desc::*;
use super::mapping::{self, MappingTable};
use super::ring::{Ring, StrategyKind};
use super::smgr::RELSEG_SIZE;
use super::stats::{BufferUsage, Counter};
use super::{relpath, BlockNumber, ForkNumber, RelFileNode, BLCKSZ};

/// Most pages [`BufferPool::flush_run`] writes with one `pwrite` (128 kB).
const WRITE_RUN: usize = 16;

/// Most pages [`BufferPool::read_buffers`] pins and reads in one call.
pub const READ_RUN: usize = 16;
use crate::error::{Error, Result, SqlState};

impl BufferPool {
    /// Whether `ring` passes over its dirty buffer `id` instead of writing
    /// it now, because its page LSN is beyond the flushed WAL (see
    /// [`super::ring`]): a bulk-read ring rejects it (leaves it to the clock
    /// sweep); a write ring keeps it for a later lap and grows, while it may.
    /// The caller then takes another victim.
    pub(super) fn ring_passes_over(&self, ring: &mut Ring, id: u32) -> bool {
        let Some(hook) = self.wal_hook.read().clone() else {
            return false;
        };
        // Read the LSN under the shared lock: it may be changing.
        let d = self.desc(id);
        if !d.try_lock_shared() {
            return ring.kind() == StrategyKind::BulkRead && ring.reject(id);
        }
        // SAFETY: pinned and share-locked.
        let lsn = page_lsn(unsafe { std::slice::from_raw_parts(self.frame(id), BLCKSZ) });
        // SAFETY: taken just above.
        unsafe { d.content.unlock_shared() };
        if ring.kind() != StrategyKind::BulkRead {
            ring.note_round_lsn(lsn);
        }
        if lsn <= hook.flushed_lsn() {
            return false;
        }
        if ring.kind() == StrategyKind::BulkRead {
            ring.reject(id)
        } else {
            ring.grow(id)
        }
    }

    /// Asks the WAL to flush what is logged so far in the background (a
    /// write ring's flush-ahead; see [`super::ring`]).
    pub(super) fn request_wal_flush(&self) {
        if let Some(hook) = self.wal_hook.read().as_ref() {
            hook.request_flush();
        }
    }

    /// Reads a pinned, not-valid buffer's page in (unless another thread
    /// does it first) and verifies its checksum.
    pub(super) fn read_in(&self, buf: &PinnedBuffer<'_>) -> Result<()> {
        let id = buf.id;
        if !self.start_io(id, true) {
            // Another thread read it in while we waited.
            self.counters.count(Counter::Hit);
            return Ok(());
        }
        // SAFETY: we own the I/O on a not-valid buffer: nobody reads or
        // writes the frame until VALID is set.
        let page = unsafe { std::slice::from_raw_parts_mut(self.frame(id), BLCKSZ) };
        let tag = buf.tag;
        let res = self
            .smgr
            .read(tag.rel, tag.fork, tag.block, page)
            .and_then(|()| {
                if verify_page(&mut page[..], tag.block) {
                    Ok(())
                } else {
                    Err(Error::new(
                        SqlState::DataCorrupted,
                        format!(
                            "invalid page in block {} of relation {}",
                            tag.block,
                            relpath(tag.rel, tag.fork)
                        ),
                    ))
                }
            });
        match res {
            Ok(()) => {
                self.terminate_io(id, false, VALID | CHECKSUM_OK);
                self.counters.count(Counter::Read);
                Ok(())
            }
            Err(e) => {
                self.terminate_io(id, false, IO_ERROR);
                Err(e)
            }
        }
    }

    /// Pins blocks `first..first + count` of a fork in block order, pushing
    /// the pins onto `out`, and reads those not in the pool with one
    /// `preadv` per run of consecutive ones, through `strategy` (VACUUM's
    /// read side of [`BufferPool::flush_run`]: its ring reads and writes
    /// 16 pages a call instead of one). `count` is clamped to the fork's
    /// size, to the segment of `first`, to [`READ_RUN`], and is at least 1.
    /// Counts as `read_buffer` would: a hit per cached page, a read per page
    /// read. When a page fails its checksum the pins before it are returned
    /// and it is left invalid (the next pin of it reads it again and reports
    /// the error); when that is `first`, the error is returned.
    ///
    /// `hints` are the relation fork's recent-buffer hints (empty for none,
    /// see [`super::recent`]): a cached page whose hint is right is pinned
    /// through its descriptor, without the mapping table's lookup (two
    /// cache misses in a large pool: 8.6% of a VACUUM after one delete per
    /// page, `perf`), and the buffer each page ends up in is recorded.
    #[allow(clippy::too_many_arguments)]
    pub fn read_buffers<'a>(
        &'a self,
        rel: RelFileNode,
        fork: ForkNumber,
        first: BlockNumber,
        count: u32,
        hints: &[AtomicU32],
        mut strategy: Option<&mut Ring>,
        out: &mut Vec<PinnedBuffer<'a>>,
    ) -> Result<()> {
        let nblocks = self.smgr.nblocks(rel, fork)?;
        if first >= nblocks || count <= 1 {
            out.push(self.read_buffer(rel, fork, first, strategy)?);
            return Ok(());
        }
        let n = count
            .min(nblocks - first)
            .min(RELSEG_SIZE - first % RELSEG_SIZE)
            .min(READ_RUN as u32) as usize;
        let start = out.len();
        let mut needs = [false; READ_RUN];
        for (k, need) in needs.iter_mut().enumerate().take(n) {
            let tag = BufferTag {
                rel,
                fork,
                block: first + k as BlockNumber,
            };
            let hint = hints.get(tag.block as usize);
            let hit = hint.map(|h| h.load(Ordering::Relaxed)).filter(|&id| {
                (id as usize) < self.descs.len() && self.pin_if_holds(id, tag, strategy.is_some())
            });
            let (id, valid) = match hit {
                Some(id) => (id, true),
                None => match self.pin_tag(tag, strategy.as_deref_mut()) {
                    Ok(p) => {
                        if let Some(h) = hint {
                            h.store(p.0, Ordering::Relaxed);
                        }
                        p
                    }
                    Err(e) if k == 0 => return Err(e),
                    // Out of buffers part-way: read what is pinned.
                    Err(_) => break,
                },
            };
            out.push(PinnedBuffer {
                pool: self,
                id,
                tag,
            });
            *need = !valid && self.start_io(id, true);
            if !*need {
                self.counters.count(Counter::Hit);
            }
        }
        let pinned = out.len() - start;
        let mut failed = None;
        let mut k = 0;
        while k < pinned {
            if !needs[k] {
                k += 1;
                continue;
            }
            let s = k;
            while k < pinned && needs[k] {
                k += 1;
            }
            let ids: Vec<u32> = out[start + s..start + k].iter().map(|b| b.id).collect();
            let mut pages: Vec<&mut [u8]> = ids
                .iter()
                // SAFETY: we own the I/O of these not-valid buffers: nobody
                // reads or writes their frames until VALID is set.
                .map(|&id| unsafe { std::slice::from_raw_parts_mut(self.frame(id), BLCKSZ) })
                .collect();
            let block = first + s as BlockNumber;
            let res = self.smgr.read_blocks(rel, fork, block, &mut pages);
            for (j, (page, &id)) in pages.iter_mut().zip(&ids).enumerate() {
                let b = block + j as BlockNumber;
                let ok = match &res {
                    Ok(()) => verify_page(page, b),
                    Err(_) => false,
                };
                if ok {
                    self.terminate_io(id, false, VALID | CHECKSUM_OK);
                    self.counters.count(Counter::Read);
                } else {
                    self.terminate_io(id, false, IO_ERROR);
                    failed = Some(failed.unwrap_or(s + j).min(s + j));
                }
            }
        }
        if let Some(f) = failed {
            out.truncate(start + f);
            if f == 0 {
                // The ordinary path reads it again and says what is wrong.
                out.push(self.read_buffer(rel, fork, first, None)?);
            }
        }
        Ok(())
    }

    /// Claims the I/O of buffer `id`: for input if it is not valid, for
    /// output if it is dirty. Waits while another thread does I/O on it.
    /// Returns false if there is nothing to do any more.
    pub(super) fn start_io(&self, id: u32, for_input: bool) -> bool {
        let d = self.desc(id);
        let s = loop {
            let s = d.lock_header();
            if s & IO_IN_PROGRESS == 0 {
                break s;
            }
            d.unlock_header(s);
            self.wait_io(id);
        };
        let done = if for_input {
            s & VALID != 0
        } else {
            s & DIRTY == 0
        };
        if done {
            d.unlock_header(s);
            return false;
        }
        d.unlock_header(s | IO_IN_PROGRESS);
        true
    }

    /// Ends the I/O claimed by `start_io`: clears IO_IN_PROGRESS (and DIRTY if
    /// asked), sets `flags`, and wakes the waiters.
    pub(super) fn terminate_io(&self, id: u32, clear_dirty: bool, flags: u32) {
        let d = self.desc(id);
        let mut s = d.lock_header();
        s &= !(IO_IN_PROGRESS | IO_ERROR);
        if clear_dirty {
            s &= !DIRTY;
        }
        d.unlock_header(s | flags);
        // SAFETY: the key is the descriptor's address, unique to it.
        unsafe {
            parking_lot_core::unpark_all(d.park_key(), parking_lot_core::DEFAULT_UNPARK_TOKEN)
        };
    }

    /// Sleeps until buffer `id` has no I/O in progress.
    #[cold]
    pub(super) fn wait_io(&self, id: u32) {
        let d = self.desc(id);
        // SAFETY: the key is the descriptor's address; `validate` runs under
        // the parking lot's bucket lock, so a wake-up cannot be missed:
        // terminate_io clears the flag before it unparks.
        unsafe {
            parking_lot_core::park(
                d.park_key(),
                || d.state.load(Ordering::Acquire) & IO_IN_PROGRESS != 0,
                || {},
                |_, _| {},
                parking_lot_core::DEFAULT_PARK_TOKEN,
                None,
            );
        }
    }

    /// Writes a dirty buffer out. The caller holds a pin and the content lock
    /// (shared or exclusive). Calls the WAL hook with the page LSN first.
    pub(super) fn flush_buffer(&self, id: u32, tag: BufferTag) -> Result<()> {
        self.write_run(&[id], tag)
    }

    /// Writes dirty ring buffer `id` (page `tag`; pinned and share-locked by
    /// the caller, as for [`BufferPool::flush_buffer`]) together with the
    /// buffers in the next slots of `ring` while they hold the following
    /// blocks, are dirty and need no log flush: one `pwrite` of up to
    /// [`WRITE_RUN`] pages instead of one per page (VACUUM and COPY dirty
    /// consecutive blocks in ring order). Those buffers are then clean when
    /// they come round. They are pinned and share-locked here only if that
    /// is possible at once (never waiting for a content lock while holding
    /// others), and a run stops at a segment boundary.
    pub(super) fn flush_run(&self, id: u32, tag: BufferTag, ring: &Ring) -> Result<()> {
        let flushed = self
            .wal_hook
            .read()
            .as_ref()
            .map_or(u64::MAX, |h| h.flushed_lsn());
        let mut run = [id; WRITE_RUN];
        let mut n = 1;
        for next in ring.upcoming(WRITE_RUN - 1) {
            let block = tag.block + n as BlockNumber;
            if block % RELSEG_SIZE == 0 {
                break;
            }
            let d = self.desc(next);
            let s = d.lock_header();
            let want = BufferTag { block, ..tag };
            if s & (TAG_VALID | VALID | DIRTY | IO_IN_PROGRESS) != TAG_VALID | VALID | DIRTY
                || d.tag() != want
            {
                d.unlock_header(s);
                break;
            }
            d.unlock_header(s + REFCOUNT_ONE);
            if !d.try_lock_shared() {
                self.unpin(next);
                break;
            }
            // SAFETY: pinned and share-locked.
            let lsn = page_lsn(unsafe { std::slice::from_raw_parts(self.frame(next), BLCKSZ) });
            if lsn > flushed {
                // It would wait for the log: leave it to its own turn.
                // SAFETY: taken just above.
                unsafe { d.content.unlock_shared() };
                self.unpin(next);
                break;
            }
            run[n] = next;
            n += 1;
        }
        let res = self.write_run(&run[..n], tag);
        for &b in &run[1..n] {
            // SAFETY: share-locked and pinned in the loop above.
            unsafe { self.desc(b).content.unlock_shared() };
            self.unpin(b);
        }
        res
    }

    /// Writes buffers `ids`, holding consecutive blocks from `tag` on (all
    /// pinned and share-locked by the caller), with one `pwritev`: claims
    /// their I/O in order (stopping at the first that is clean by now),
    /// flushes the log up to their highest LSN and writes.
    ///
    /// A page changed since it was read needs a new checksum, so it is
    /// copied and the copy checksummed: readers may set hint bits under
    /// the share lock, and computing the checksum clears them for a moment.
    /// A page changed only in hint bits since it was read and verified
    /// (`CHECKSUM_OK`) is written straight from its frame: its stored
    /// checksum holds whatever hint bits a reader sets meanwhile, as the
    /// checksum leaves them out (`storage::checksum`). A VACUUM after a
    /// load writes every page so, and skipped copying 8 kB a page.
    fn write_run(&self, ids: &[u32], tag: BufferTag) -> Result<()> {
        let claimed = ids.iter().take_while(|&&b| self.start_io(b, false)).count();
        if claimed == 0 {
            return Ok(());
        }
        thread_local! {
            static STAGING: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let res = STAGING.with_borrow_mut(|staging| {
            staging.resize(claimed * BLCKSZ, 0);
            let mut max_lsn = 0;
            let mut as_read = [false; WRITE_RUN];
            for (k, &b) in ids[..claimed].iter().enumerate() {
                // SAFETY: the caller holds the content lock: nobody but a
                // hint-bit setter writes the frame.
                let frame = unsafe { std::slice::from_raw_parts(self.frame(b), BLCKSZ) };
                max_lsn = max_lsn.max(page_lsn(frame));
                let block = tag.block + k as BlockNumber;
                // Stable while the content lock is held (only `mark_dirty`,
                // under the exclusive lock, clears it).
                if self.desc(b).state.load(Ordering::Acquire) & CHECKSUM_OK != 0 {
                    as_read[k] = true;
                    debug_assert!(verify_page(&mut frame.to_vec(), block), "stale CHECKSUM_OK");
                } else {
                    let copy = &mut staging[k * BLCKSZ..(k + 1) * BLCKSZ];
                    copy.copy_from_slice(frame);
                    set_page_checksum(copy, block);
                }
            }
            let hook = self.wal_hook.read().clone();
            if let Some(hook) = hook {
                hook.flush(max_lsn)?;
            }
            let mut pages: [&[u8]; WRITE_RUN] = [&[]; WRITE_RUN];
            for (k, &b) in ids[..claimed].iter().enumerate() {
                pages[k] = if as_read[k] {
                    // SAFETY: as above.
                    unsafe { std::slice::from_raw_parts(self.frame(b), BLCKSZ) }
                } else {
                    &staging[k * BLCKSZ..(k + 1) * BLCKSZ]
                };
            }
            self.smgr
                .write_pages(tag.rel, tag.fork, tag.block, &pages[..claimed])
        });
        for &b in &ids[..claimed] {
            match res {
                Ok(()) => {
                    self.terminate_io(b, true, 0);
                    self.counters.count(Counter::Written);
                }
                Err(_) => self.terminate_io(b, false, IO_ERROR),
            }
        }
        res
    }

    // ----- whole-pool operations ------------------------------------------

    /// Writes every dirty buffer (in file order) and fsyncs all written files:
    /// for checkpoints and clean shutdown.
    pub fn flush_all(&self) -> Result<()> {
        self.flush_matching(|_| true)?;
        self.smgr.sync_all()
    }

    /// Writes the dirty buffers whose tag satisfies `want`, sorted by tag so
    /// the files are written sequentially.
    pub(super) fn flush_matching(&self, want: impl Fn(&BufferTag) -> bool) -> Result<()> {
        let mut dirty = Vec::new();
        // Buffers the sweep never handed out hold no page.
        for id in 0..self.clock.used(self.descs.len()) as u32 {
            let d = self.desc(id);
            if d.state.load(Ordering::Relaxed) & DIRTY == 0 {
                continue;
            }
            let s = d.lock_header();
            let tag = d.tag();
            d.unlock_header(s);
            if s & (DIRTY | VALID) == DIRTY | VALID && want(&tag) {
                dirty.push((tag, id));
            }
        }
        dirty.sort_unstable();
        // A large flush (the shutdown checkpoint after a run of random
        // updates) is written by two threads, each a contiguous half of the
        // tag order: checksumming and copying pages into the OS cache is CPU
        // work, and the disk writes behind both.
        if dirty.len() >= PARALLEL_FLUSH {
            let (low, high) = dirty.split_at(dirty.len() / 2);
            let high_res = std::thread::scope(|scope| {
                let helper = std::thread::Builder::new()
                    .name("heapdb-flush".into())
                    .spawn_scoped(scope, || {
                        let before = BufferUsage::current();
                        let res = self.flush_listed(high);
                        (res, BufferUsage::current().since(&before))
                    });
                let low_res = self.flush_listed(low);
                let high_res = match helper {
                    Ok(h) => {
                        let (res, used) = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                        // The statement's figures cover the helper's writes.
                        used.credit_to_thread();
                        res
                    }
                    Err(_) => self.flush_listed(high),
                };
                low_res.and(high_res)
            });
            return high_res;
        }
        self.flush_listed(&dirty)
    }

    /// Writes the buffers of `dirty` (tag order) that still hold their
    /// page dirty, asking the OS to write them back as it goes
    /// ([`WriteBehind`]).
    fn flush_listed(&self, dirty: &[(BufferTag, u32)]) -> Result<()> {
        let mut behind = WriteBehind::default();
        let mut start = |first: BufferTag, span| {
            self.smgr
                .writeback(first.rel, first.fork, first.block, span)
        };
        for &(tag, id) in dirty {
            let d = self.desc(id);
            let s = d.lock_header();
            if s & (DIRTY | VALID) != DIRTY | VALID || d.tag() != tag {
                d.unlock_header(s);
                continue;
            }
            d.unlock_header(s + REFCOUNT_ONE);
            d.content.lock_shared();
            let res = self.flush_buffer(id, tag);
            // SAFETY: taken just above.
            unsafe { d.content.unlock_shared() };
            self.unpin(id);
            res?;
            behind.wrote(tag, &mut start);
        }
        behind.start(&mut start);
        Ok(())
    }

    /// Forgets the buffers of `rel` (one fork, or all with `None`) from block
    /// `first` on, without writing them.
    pub(super) fn discard_buffers(
        &self,
        rel: RelFileNode,
        fork: Option<ForkNumber>,
        first: BlockNumber,
    ) -> Result<()> {
        let matches =
            |t: &BufferTag| t.rel == rel && fork.map_or(true, |f| f == t.fork) && t.block >= first;
        for id in 0..self.clock.used(self.descs.len()) as u32 {
            let d = self.desc(id);
            // Another thread may hold a pin for a moment without using the
            // page (the clock sweep inspecting a victim, a flush writing it
            // out): wait out such pins, for up to a second, before deciding
            // the relation is really in use.
            let mut waited_us = 0u64;
            loop {
                let s = d.lock_header();
                let tag = d.tag();
                d.unlock_header(s);
                if s & TAG_VALID == 0 || !matches(&tag) {
                    break;
                }
                if s & IO_IN_PROGRESS != 0 {
                    self.wait_io(id);
                    continue;
                }
                let hash = tag.hash();
                let mut map = self.mapping.write(MappingTable::partition_of(hash));
                let s = d.lock_header();
                if s & TAG_VALID == 0 || d.tag() != tag || s & IO_IN_PROGRESS != 0 {
                    d.unlock_header(s);
                    continue;
                }
                if refcount(s) != 0 {
                    d.unlock_header(s);
                    if waited_us < 1_000_000 {
                        drop(map);
                        std::thread::sleep(std::time::Duration::from_micros(50));
                        waited_us += 50;
                        continue;
                    }
                    return Err(Error::new(
                        SqlState::ObjectInUse,
                        format!(
                            "cannot drop buffers of relation {}: block {} is pinned",
                            relpath(tag.rel, tag.fork),
                            tag.block
                        ),
                    ));
                }
                mapping::remove(&mut map, hash, &tag);
                d.unlock_header(
                    s & !(TAG_VALID | VALID | DIRTY | IO_ERROR | CHECKSUM_OK | USAGE_MASK),
                );
                break;
            }
        }
        Ok(())
    }
}

/// Dirty pages from which a whole-pool flush is written by two threads
/// (16 MB).
pub(super) const PARALLEL_FLUSH: usize = 2048;

/// Pages a whole-pool flush writes before it asks the OS to start writing
/// them back (256 kB, PostgreSQL's `checkpoint_flush_after`).
const WRITE_BEHIND: u32 = 32;

/// The blocks a whole-pool flush wrote since it last asked the OS to start
/// their write-back ([`Smgr::writeback`](super::smgr::Smgr::writeback)):
/// one range of one fork, the flush going through the pages in tag order.
/// Without it the disk sat idle while the flush copied pages into the OS
/// cache, and the fsync after it then waited for all of them (a shutdown
/// after 20,000 random updates: ~15,000 pages, ~120 MB).
#[derive(Default)]
struct WriteBehind {
    /// The fork and the first block of the range, and the blocks it spans.
    range: Option<(BufferTag, u32)>,
    /// Pages written in it.
    pages: u32,
}

impl WriteBehind {
    /// Notes that page `tag` was written; first starts the write-back of
    /// the range noted so far (`start(first page, blocks spanned)`) when it
    /// holds enough pages or `tag` does not extend it.
    fn wrote(&mut self, tag: BufferTag, start: &mut dyn FnMut(BufferTag, u32)) {
        if let Some((first, _)) = self.range {
            let same = first.rel == tag.rel && first.fork == tag.fork && tag.block >= first.block;
            if !same || self.pages >= WRITE_BEHIND {
                self.start(start);
            }
        }
        match &mut self.range {
            Some((first, span)) => *span = tag.block - first.block + 1,
            None => self.range = Some((tag, 1)),
        }
        self.pages += 1;
    }

    /// Starts the write-back of the range noted so far.
    fn start(&mut self, start: &mut dyn FnMut(BufferTag, u32)) {
        if let Some((first, span)) = self.range.take() {
            start(first, span);
        }
        self.pages = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(rel: u32, block: BlockNumber) -> BufferTag {
        BufferTag {
            rel: RelFileNode(rel),
            fork: ForkNumber::Main,
            block,
        }
    }

    #[test]
    fn write_behind_covers_every_written_page_in_ranges_of_one_fork() {
        // Tag order, as the flush writes: scattered blocks of one relation,
        // then another relation's.
        let mut written: Vec<BufferTag> = (0..100).map(|i| tag(1, i * 3 + 1)).collect();
        written.extend((0..5).map(|i| tag(2, i)));
        let mut ranges = Vec::new();
        let mut wb = WriteBehind::default();
        for &t in &written {
            wb.wrote(t, &mut |first, span| ranges.push((first, span)));
        }
        wb.start(&mut |first, span| ranges.push((first, span)));
        for t in &written {
            let covered = ranges.iter().filter(|(f, span)| {
                f.rel == t.rel && f.fork == t.fork && (f.block..f.block + span).contains(&t.block)
            });
            assert_eq!(covered.count(), 1, "{t:?} in exactly one range");
        }
        // 32 pages a range, and no range spans two relations.
        assert_eq!(ranges.len(), 4 + 1, "{ranges:?}");
        assert_eq!(ranges[0], (tag(1, 1), 31 * 3 + 1));
        assert_eq!(ranges[4], (tag(2, 0), 5));
        // Nothing written, nothing started.
        let mut none = WriteBehind::default();
        none.start(&mut |_, _| panic!("no range"));
    }
}
