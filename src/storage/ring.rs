//! Access strategies: small rings of buffers that big one-pass operations
//! recycle, so they do not flush the rest of the pool (PostgreSQL's
//! `freelist.c` strategies).
//!
//! A [`Ring`] belongs to one scan or load (it is `&mut`, never shared). When
//! the operation needs a buffer for a page that is not cached, the pool first
//! offers the ring's next slot: the buffer there is reused if nobody pins it
//! and its usage count is at most 1 (only this ring touched it). Otherwise
//! (an empty slot, or a buffer someone else started using) the pool takes a
//! victim from the normal clock sweep and puts it into that slot. Pages
//! pinned through a ring get a usage count of at most 1, so they are the
//! first the clock sweep takes, too.
//!
//! The kinds and their default sizes (settings: [`RingSizes`], changeable at
//! run time with `BufferPool::set_ring_sizes`; a ring is never more than an
//! eighth of the pool, as in PostgreSQL):
//!
//! - [`StrategyKind::BulkRead`], 256 KiB: sequential scans of relations larger
//!   than a quarter of the pool (`BufferPool::scan_ring` decides).
//! - [`StrategyKind::BulkWrite`], 16 MiB: bulk loads (COPY, multi-insert).
//! - [`StrategyKind::Vacuum`], 256 KiB: VACUUM.
//!
//! # Dirty ring buffers
//!
//! Reusing a dirty buffer means writing it first, and writing it means
//! flushing the WAL up to its LSN first. For bulk writes and vacuum that is
//! the point of the ring (the operation pays for its own writes). For bulk
//! reads, as PostgreSQL does, a dirty ring buffer whose page LSN is beyond
//! what the WAL reports as flushed (`WalFlushHook::flushed_lsn`) is *rejected*: dropped from the ring and
//! left to the normal clock sweep, and the ring slot refilled from the sweep,
//! so a read-only scan never waits for a WAL flush. A dirty buffer whose LSN
//! needs no flush (e.g. a page whose only change is hint bits) is written by
//! the scan itself, as PostgreSQL's first scan after a load writes the table.

use super::BLCKSZ;

/// The purpose of a ring, which sets its size and its dirty-buffer policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    /// Large sequential scans.
    BulkRead,
    /// Bulk loads.
    BulkWrite,
    /// VACUUM.
    Vacuum,
}

/// Ring sizes in bytes, per kind (a setting; see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingSizes {
    /// Size of a [`StrategyKind::BulkRead`] ring; default 256 KiB.
    pub bulk_read: usize,
    /// Size of a [`StrategyKind::BulkWrite`] ring; default 16 MiB.
    pub bulk_write: usize,
    /// Size of a [`StrategyKind::Vacuum`] ring; default 256 KiB.
    pub vacuum: usize,
}

impl Default for RingSizes {
    fn default() -> RingSizes {
        RingSizes {
            bulk_read: 256 * 1024,
            bulk_write: 16 * 1024 * 1024,
            vacuum: 256 * 1024,
        }
    }
}

impl RingSizes {
    /// The size in bytes of a ring of `kind`.
    pub fn bytes(&self, kind: StrategyKind) -> usize {
        match kind {
            StrategyKind::BulkRead => self.bulk_read,
            StrategyKind::BulkWrite => self.bulk_write,
            StrategyKind::Vacuum => self.vacuum,
        }
    }

    /// The number of buffers in a ring of `kind` in a pool of `nbuffers`:
    /// the size in pages, at most an eighth of the pool, at least one.
    pub fn buffers(&self, kind: StrategyKind, nbuffers: usize) -> usize {
        (self.bytes(kind) / BLCKSZ).min(nbuffers / 8).max(1)
    }
}

/// Marks an empty ring slot.
const NO_BUFFER: u32 = u32::MAX;

/// A ring of buffers for one operation (see the module doc). Create one with
/// `BufferPool::ring`; pass `Some(&mut ring)` to the pool's read and extend
/// calls. A ring is only meaningful for the pool that created it.
#[derive(Debug)]
pub struct Ring {
    /// What the ring is for.
    kind: StrategyKind,
    /// Buffer ids in the ring; [`NO_BUFFER`] for empty slots.
    buffers: Box<[u32]>,
    /// The slot most recently handed out.
    current: usize,
    /// Whether the buffer in the current slot was reused from the ring (as
    /// opposed to freshly taken from the clock sweep): only such a buffer may
    /// be rejected.
    current_was_in_ring: bool,
}

impl Ring {
    /// An empty ring of `kind` with `len` slots (at least one).
    pub(crate) fn new(kind: StrategyKind, len: usize) -> Ring {
        Ring {
            kind,
            buffers: vec![NO_BUFFER; len.max(1)].into_boxed_slice(),
            current: 0,
            current_was_in_ring: false,
        }
    }

    /// What the ring is for.
    pub fn kind(&self) -> StrategyKind {
        self.kind
    }

    /// The number of slots.
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// Always false: a ring has at least one slot.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Advances to the next slot and returns its buffer, if the slot holds one.
    /// The caller then either reuses it ([`Ring::reused`]) or replaces it
    /// ([`Ring::put`]).
    pub(crate) fn advance(&mut self) -> Option<u32> {
        self.current = (self.current + 1) % self.buffers.len();
        self.current_was_in_ring = false;
        let id = self.buffers[self.current];
        (id != NO_BUFFER).then_some(id)
    }

    /// Records that the current slot's buffer is being reused.
    pub(crate) fn reused(&mut self) {
        self.current_was_in_ring = true;
    }

    /// Puts buffer `id` (from the clock sweep) into the current slot.
    pub(crate) fn put(&mut self, id: u32) {
        self.buffers[self.current] = id;
        self.current_was_in_ring = false;
    }

    /// Whether the bulk-read policy rejects reusing dirty buffer `id` (see the
    /// module doc); if so the slot is emptied so it is refilled next time.
    /// Only a buffer that came from the ring itself is ever rejected.
    pub(crate) fn reject(&mut self, id: u32) -> bool {
        if self.kind != StrategyKind::BulkRead
            || !self.current_was_in_ring
            || self.buffers[self.current] != id
        {
            return false;
        }
        self.buffers[self.current] = NO_BUFFER;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_capped_at_an_eighth_of_the_pool() {
        let s = RingSizes::default();
        assert_eq!(s.buffers(StrategyKind::BulkRead, 16384), 32);
        assert_eq!(s.buffers(StrategyKind::BulkWrite, 16384), 2048);
        assert_eq!(s.buffers(StrategyKind::BulkWrite, 1024), 128);
        assert_eq!(s.buffers(StrategyKind::Vacuum, 16), 2);
        assert_eq!(s.buffers(StrategyKind::Vacuum, 4), 1);
    }

    #[test]
    fn ring_cycles_and_rejects_only_its_own_bulk_read_buffers() {
        let mut r = Ring::new(StrategyKind::BulkRead, 2);
        assert_eq!(r.advance(), None);
        r.put(10);
        assert!(!r.reject(10), "fresh from the sweep: not rejected");
        assert_eq!(r.advance(), None);
        r.put(11);
        assert_eq!(r.advance(), Some(10));
        r.reused();
        assert!(r.reject(10));
        assert_eq!(r.advance(), Some(11));
        assert_eq!(r.advance(), None, "rejected slot is empty");
        let mut w = Ring::new(StrategyKind::BulkWrite, 1);
        w.advance();
        w.put(3);
        assert_eq!(w.advance(), Some(3));
        w.reused();
        assert!(!w.reject(3));
    }
}
