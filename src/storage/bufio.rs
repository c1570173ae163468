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

use std::sync::atomic::Ordering;

use parking_lot::lock_api::RawRwLock as _;

use super::buffer::{page_lsn, PinnedBuffer};
use super::bufmgr::BufferPool;
use super::checksum::{set_page_checksum, verify_page};
use super::desc::*;
use super::mapping::{self, MappingTable};
use super::ring::{Ring, StrategyKind};
use super::stats::Counter;
use super::{relpath, BlockNumber, ForkNumber, RelFileNode, BLCKSZ};
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
        if !self.start_io(id, false) {
            return Ok(());
        }
        let mut copy = [0u8; BLCKSZ];
        // SAFETY: the caller holds the content lock: nobody writes the frame.
        copy.copy_from_slice(unsafe { std::slice::from_raw_parts(self.frame(id), BLCKSZ) });
        // Stable while the content lock is held (only `mark_dirty`, under
        // the exclusive lock, clears it).
        let checksum_ok = self.desc(id).state.load(Ordering::Acquire) & CHECKSUM_OK != 0;
        let res = (|| {
            let hook = self.wal_hook.read().clone();
            if let Some(hook) = hook {
                hook.flush(page_lsn(&copy))?;
            }
            if checksum_ok {
                // Changed only in hint bits since it was read and verified.
                debug_assert!(verify_page(&mut copy, tag.block), "stale CHECKSUM_OK");
            } else {
                set_page_checksum(&mut copy, tag.block);
            }
            self.smgr.write(tag.rel, tag.fork, tag.block, &copy)
        })();
        match res {
            Ok(()) => {
                self.terminate_io(id, true, 0);
                self.counters.count(Counter::Written);
                Ok(())
            }
            Err(e) => {
                self.terminate_io(id, false, IO_ERROR);
                Err(e)
            }
        }
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
        for id in 0..self.descs.len() as u32 {
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
        for (tag, id) in dirty {
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
        }
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
        for id in 0..self.descs.len() as u32 {
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
