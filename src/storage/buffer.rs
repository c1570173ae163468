//! Pins and content locks: the handles the rest of heapdb holds.
//!
//! A [`PinnedBuffer`] is one pin on a buffer (RAII: dropping it unpins). Its
//! content lock is taken through it: [`PinnedBuffer::read`] gives a
//! [`BufferReadGuard`] (shared), [`PinnedBuffer::write`] a
//! [`BufferWriteGuard`] (exclusive); both deref to the page's `BLCKSZ` bytes
//! and cannot outlive the pin. The conditional forms (`try_read`,
//! `try_write`, `try_cleanup_lock`) never wait.
//!
//! # Rules for callers
//!
//! - Change page bytes only under a [`BufferWriteGuard`], and call
//!   [`BufferWriteGuard::mark_dirty`] (or `mark_dirty_hint` for hint bits)
//!   before dropping it.
//! - Read tuples under a pin alone (after dropping the shared lock) only if
//!   whoever rearranges the page takes a cleanup lock
//!   ([`PinnedBuffer::try_cleanup_lock`] / [`PinnedBuffer::cleanup_lock`]).
//! - Never wait for a content lock while holding another buffer's lock in an
//!   order another thread could reverse (lock pages in block order).

use std::sync::atomic::Ordering;

use parking_lot::lock_api::RawRwLock as _;

use super::bufmgr::BufferPool;
use super::desc::*;
use super::stats::Counter;
use super::{BlockNumber, BLCKSZ};

pub use super::desc::BufferTag;

/// The LSN in a page header (bytes 0..8, little-endian).
#[inline]
pub fn page_lsn(page: &[u8]) -> u64 {
    u64::from_le_bytes(page[0..8].try_into().expect("page has a header"))
}

/// A pin on a buffer: while it lives, the buffer keeps its page. Dropping it
/// unpins. Take the content lock with [`PinnedBuffer::read`] or
/// [`PinnedBuffer::write`] to look at or change the page.
pub struct PinnedBuffer<'a> {
    /// The pool.
    pub(super) pool: &'a BufferPool,
    /// The buffer id.
    pub(super) id: u32,
    /// The page it holds (fixed while pinned).
    pub(super) tag: BufferTag,
}

impl<'a> PinnedBuffer<'a> {
    /// The block number of the page.
    pub fn block(&self) -> BlockNumber {
        self.tag.block
    }

    /// The page's frame, for prefetching it while another page is worked
    /// on ([`super::prefetch::Ahead`]): no lock is taken and nothing is read.
    pub fn ahead(&self) -> super::prefetch::Ahead {
        super::prefetch::Ahead::frame(self.pool.frame(self.id))
    }

    /// Relation, fork and block of the page.
    pub fn tag(&self) -> BufferTag {
        self.tag
    }

    /// The buffer's id in the pool (for inspection and debugging).
    pub fn buffer_id(&self) -> u32 {
        self.id
    }

    /// The pool the buffer belongs to.
    pub fn pool(&self) -> &'a BufferPool {
        self.pool
    }

    /// Takes the content lock in shared mode (waits for a writer).
    #[inline]
    pub fn read(&self) -> BufferReadGuard<'_> {
        self.pool.desc(self.id).content.lock_shared();
        BufferReadGuard { buf: self }
    }

    /// Takes the content lock in shared mode if no writer holds it.
    pub fn try_read(&self) -> Option<BufferReadGuard<'_>> {
        self.pool
            .desc(self.id)
            .content
            .try_lock_shared()
            .then(|| BufferReadGuard { buf: self })
    }

    /// Takes the content lock in exclusive mode (waits for all holders).
    #[inline]
    pub fn write(&self) -> BufferWriteGuard<'_> {
        self.pool.desc(self.id).content.lock_exclusive();
        BufferWriteGuard { buf: self }
    }

    /// Takes the content lock in exclusive mode if nobody holds it (the
    /// hint-bit path; see the module doc).
    pub fn try_write(&self) -> Option<BufferWriteGuard<'_>> {
        self.pool
            .desc(self.id)
            .content
            .try_lock_exclusive()
            .then(|| BufferWriteGuard { buf: self })
    }

    /// Takes a cleanup lock if available now: the exclusive content lock while
    /// this is the buffer's only pin. Under it the page may be rearranged
    /// (pruned, compacted): no one else can be reading tuples under a pin.
    pub fn try_cleanup_lock(&self) -> Option<BufferWriteGuard<'_>> {
        let guard = self.try_write()?;
        let s = self.pool.desc(self.id).state.load(Ordering::Acquire);
        (refcount(s) == 1).then_some(guard)
    }

    /// Waits for a cleanup lock: the exclusive content lock while this is the
    /// buffer's only pin (VACUUM's `LockBufferForCleanup`). Other pins are
    /// short-lived, so this polls: it takes the lock, and while someone else
    /// still pins the buffer, releases it and sleeps briefly (backing off up
    /// to 1 ms). The caller must not hold a second pin on the buffer itself,
    /// or this never returns.
    pub fn cleanup_lock(&self) -> BufferWriteGuard<'_> {
        let mut sleep_us = 1;
        loop {
            let guard = self.write();
            let s = self.pool.desc(self.id).state.load(Ordering::Acquire);
            if refcount(s) == 1 {
                return guard;
            }
            drop(guard);
            std::thread::sleep(std::time::Duration::from_micros(sleep_us));
            sleep_us = (sleep_us * 2).min(1000);
        }
    }
}

impl Clone for PinnedBuffer<'_> {
    /// Another pin on the same buffer.
    fn clone(&self) -> Self {
        self.pool.pin(self.id, true);
        PinnedBuffer {
            pool: self.pool,
            id: self.id,
            tag: self.tag,
        }
    }
}

impl Drop for PinnedBuffer<'_> {
    #[inline]
    fn drop(&mut self) {
        self.pool.unpin(self.id);
    }
}

impl std::fmt::Debug for PinnedBuffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("id", &self.id)
            .field("tag", &self.tag)
            .finish()
    }
}

/// The shared content lock of a pinned buffer; derefs to the page bytes.
pub struct BufferReadGuard<'b> {
    /// The pinned buffer.
    buf: &'b PinnedBuffer<'b>,
}

impl BufferReadGuard<'_> {
    /// The page LSN.
    pub fn lsn(&self) -> u64 {
        page_lsn(self)
    }

    /// The block number of the page.
    pub fn block(&self) -> BlockNumber {
        self.buf.tag.block
    }

    /// The page as a fixed-size array.
    pub fn page(&self) -> &[u8; BLCKSZ] {
        // SAFETY: the frame is BLCKSZ bytes; share-locked and pinned.
        unsafe { &*(self.buf.pool.frame(self.buf.id) as *const [u8; BLCKSZ]) }
    }
}

impl std::ops::Deref for BufferReadGuard<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.page()
    }
}

impl Drop for BufferReadGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: this guard holds the shared lock.
        unsafe { self.buf.pool.desc(self.buf.id).content.unlock_shared() }
    }
}

/// The exclusive content lock of a pinned buffer; derefs (mutably) to the
/// page bytes. Call [`BufferWriteGuard::mark_dirty`] after changing them.
pub struct BufferWriteGuard<'b> {
    /// The pinned buffer.
    buf: &'b PinnedBuffer<'b>,
}

impl BufferWriteGuard<'_> {
    /// Marks the buffer dirty: the page will be written before its frame is
    /// reused. Counts in `shared_dirtied` when the buffer was clean.
    #[inline]
    pub fn mark_dirty(&self) {
        self.set_dirty(CHECKSUM_OK);
    }

    /// Sets DIRTY and clears the state bits `clear` (the frame's checksum
    /// is stale after a real change: `CHECKSUM_OK`).
    #[inline]
    fn set_dirty(&self, clear: u32) {
        let pool = self.buf.pool;
        let d = pool.desc(self.buf.id);
        let mut s = d.state.load(Ordering::Relaxed);
        if s & (DIRTY | clear) == DIRTY {
            return;
        }
        loop {
            if s & LOCKED != 0 {
                s = d.wait_unlocked();
                continue;
            }
            match d.state.compare_exchange_weak(
                s,
                (s | DIRTY) & !clear,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if s & DIRTY == 0 {
            pool.counters.count(Counter::Dirtied);
        }
    }

    /// Marks the buffer dirty for a change that needs no WAL record (hint
    /// bits), whatever the page's LSN: the page checksum leaves hint bits
    /// out ([`super::checksum`]), so a torn write of a page whose only
    /// changes since its last logged state are hints is still a valid page,
    /// and the hints reach disk like any change (as in PostgreSQL without
    /// `data_checksums`). The page's LSN is not touched, so the next real
    /// change still logs a full-page image when it is the first since a
    /// checkpoint. Counts in `shared_dirtied` when the buffer was clean.
    /// The checksum bytes the page was read with stay right, so its write
    /// computes none.
    ///
    /// (Until format version 2 hints were in the checksum and a page unchanged
    /// since the last checkpoint kept its hints in memory only.)
    #[inline]
    pub fn mark_dirty_hint(&self) {
        self.set_dirty(0);
    }

    /// The page LSN.
    pub fn lsn(&self) -> u64 {
        page_lsn(self)
    }

    /// Sets the page LSN (bytes 0..8): the WAL position of the record that
    /// describes the latest change. A real change, so the checksum the page
    /// was read with no longer holds (already so after `mark_dirty`, which
    /// every logged change calls first; this keeps a caller that sets an
    /// LSN some other way from writing a stale checksum).
    pub fn set_lsn(&mut self, lsn: u64) {
        self[0..8].copy_from_slice(&lsn.to_le_bytes());
        self.clear_checksum_ok();
    }

    /// Clears `CHECKSUM_OK` (see `desc.rs`) if set.
    #[inline]
    fn clear_checksum_ok(&self) {
        let d = self.buf.pool.desc(self.buf.id);
        let mut s = d.state.load(Ordering::Relaxed);
        while s & CHECKSUM_OK != 0 {
            if s & LOCKED != 0 {
                s = d.wait_unlocked();
                continue;
            }
            match d.state.compare_exchange_weak(
                s,
                s & !CHECKSUM_OK,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
    }

    /// The block number of the page.
    pub fn block(&self) -> BlockNumber {
        self.buf.tag.block
    }

    /// The page as a fixed-size array.
    pub fn page(&self) -> &[u8; BLCKSZ] {
        // SAFETY: the frame is BLCKSZ bytes; exclusively locked and pinned.
        unsafe { &*(self.buf.pool.frame(self.buf.id) as *const [u8; BLCKSZ]) }
    }

    /// The page as a mutable fixed-size array.
    pub fn page_mut(&mut self) -> &mut [u8; BLCKSZ] {
        // SAFETY: as `page`, and `&mut self` makes this the only reference.
        unsafe { &mut *(self.buf.pool.frame(self.buf.id) as *mut [u8; BLCKSZ]) }
    }
}

impl std::ops::Deref for BufferWriteGuard<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.page()
    }
}

impl std::ops::DerefMut for BufferWriteGuard<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        self.page_mut()
    }
}

impl Drop for BufferWriteGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: this guard holds the exclusive lock.
        unsafe { self.buf.pool.desc(self.buf.id).content.unlock_exclusive() }
    }
}
