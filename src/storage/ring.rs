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
//! The kinds and their default sizes (settings: [`RingSizes`], which each
//! client passes with its request for a ring, so sessions sharing a pool
//! keep their own; a ring is never more than an eighth of the pool, as in
//! PostgreSQL):
//!
//! - [`StrategyKind::BulkRead`], 256 KiB: sequential scans of relations larger
//!   than a quarter of the pool that do not fit in its free and cold part
//!   (`BufferPool::scan_ring` decides; see "When a scan uses a ring"). The
//!   participants of a parallel scan split one such ring between them
//!   (`BufferPool::scan_ring_shared`), so the setting bounds the statement's
//!   buffers, not each thread's (PostgreSQL gives each worker a whole ring).
//! - [`StrategyKind::BulkWrite`], 16 MiB: bulk loads (COPY, multi-insert).
//! - [`StrategyKind::Vacuum`], 256 KiB: VACUUM.
//!
//! # When a scan uses a ring
//!
//! PostgreSQL scans every relation larger than a quarter of `shared_buffers`
//! through the bulk-read ring, a rule made for a server whose pool is small
//! and shared by many databases: such a table is never cached, however much
//! of the pool is free (20M pgbench rows in an 8 GB pool: `sum(aid)` read
//! through the ring every time, 450-600 ms against 82-106 ms cached).
//! Here a relation of at most a quarter of the pool is read into the pool,
//! as there; a larger one is read into the pool too when the pages it
//! would bring in (its blocks less those already cached, estimated from 64
//! sampled blocks) fit in the buffers the pool can give without evicting a
//! page in use: those that hold no page, or that nobody pins and whose
//! usage count is zero (the clock sweep's next victims; estimated from up
//! to 4,096 sampled descriptors). Only a relation that would evict pages
//! in use takes the ring, so a big scan still cannot flush a hot table.
//! The setting `bulkread_quarter_rule` ([`RingSizes::quarter_rule`])
//! restores PostgreSQL's rule, for experiments that compare ring sizes.
//!
//! # Dirty ring buffers
//!
//! Reusing a dirty buffer means writing it first, and writing it means
//! flushing the WAL up to its LSN first. For bulk reads, as PostgreSQL does,
//! a dirty ring buffer whose page LSN is beyond what the WAL reports as
//! flushed (`WalFlushHook::flushed_lsn`) is *rejected*: dropped from the ring
//! and left to the normal clock sweep, and the ring slot refilled from the
//! sweep, so a read-only scan never waits for a WAL flush. A dirty buffer
//! whose LSN needs no flush (e.g. a page whose only change is hint bits) is
//! written by the scan itself, as PostgreSQL's first scan after a load writes
//! the table.
//!
//! Bulk writes and VACUUM dirty every page they touch and pay for their own
//! writes, but they must not wait for an `fdatasync` each time a ring buffer
//! comes round (with a 32-buffer vacuum ring and full-page images that was
//! one fsync per 32 pages: 5.8 s for 49,000 pages). Two things avoid it:
//!
//! - *Flush ahead.* Every half lap ([`Ring::flush_ahead_due`]) the pool asks
//!   the WAL to flush everything logged so far in the background
//!   (`WalFlushHook::request_flush`), so the buffers dirtied in that half
//!   are usually durable in the log by the time they come round. Only while
//!   the operation logs its pages: when the last dirty buffer that came
//!   round carries an LSN from before the ring started (its changes were
//!   hint-only, as VACUUM's after a load), nothing will wait for the log and
//!   the requests stop, until a logged page comes round again (each request
//!   is an `fdatasync` by the WAL writer on the other core: 2,600 of them for
//!   one VACUUM of 82,000 pages otherwise).
//! - *Grow instead of wait.* When the buffer coming round still needs a log
//!   flush, the ring keeps it (it comes round again a lap later, by when the
//!   flush asked for has finished) and takes a fresh buffer from the clock
//!   sweep into a new slot in front of it ([`Ring::grow`]). The ring grows
//!   this way by at most [`WRITE_RING_SLACK`] bytes (and never past an eighth
//!   of the pool): that is the memory bound of a write ring, its size plus
//!   the slack. Only a ring that has used up its slack waits for the flush.
//!
//! A ring thus stays at its configured size while the log keeps up (hint-only
//! changes, WAL skipped for a table created in the same transaction, a fast
//! disk) and grows only as far as the log's flush latency needs.
//!
//! # Bulk-read rings across statements
//!
//! A ring starts empty and fills its slots from the clock sweep. In a pool
//! that is not full yet, the sweep's next victims are frames never used, so
//! every new scan's ring would touch new memory: each scan of a big table
//! grew the process by a ring, until the pool was all resident. So a
//! bulk-read ring gives its buffers back when it is dropped ([`SpareBuffers`],
//! one per pool, at most an eighth of the pool), and the next bulk-read ring
//! fills an empty slot with one of those first, if nobody pins it and its
//! usage count is at most 1 (the same test as for reusing a ring's own
//! buffer), before asking the clock sweep. A scan after a scan then uses the
//! frames the last one left, already resident; the pages in them are the
//! last scan's, the coldest in the pool.

use std::sync::Arc;

use parking_lot::Mutex;

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
    /// PostgreSQL's rule for sequential scans: a bulk-read ring for every
    /// relation larger than a quarter of the pool, however much of the pool
    /// is free (setting `bulkread_quarter_rule`); default off: such a scan
    /// uses a ring only when the relation does not fit in the pool's free
    /// and cold buffers (`BufferPool::scan_needs_ring`).
    pub quarter_rule: bool,
}

impl Default for RingSizes {
    fn default() -> RingSizes {
        RingSizes {
            bulk_read: 256 * 1024,
            bulk_write: 16 * 1024 * 1024,
            vacuum: 256 * 1024,
            quarter_rule: false,
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

    /// The most buffers a ring of `kind` may grow to in a pool of
    /// `nbuffers` (see the module doc): its size plus [`WRITE_RING_SLACK`]
    /// for bulk-write and vacuum rings, at most an eighth of the pool (and
    /// never below its size); a bulk-read ring never grows.
    pub fn max_buffers(&self, kind: StrategyKind, nbuffers: usize) -> usize {
        let len = self.buffers(kind, nbuffers);
        if kind == StrategyKind::BulkRead {
            return len;
        }
        ((self.bytes(kind) + WRITE_RING_SLACK) / BLCKSZ)
            .min(nbuffers / 8)
            .max(len)
    }
}

/// Marks an empty ring slot.
const NO_BUFFER: u32 = u32::MAX;

/// How far a bulk-write or vacuum ring may grow beyond its size while its
/// buffers wait for the WAL to be flushed (see the module doc): 16 MiB, the
/// bulk-write ring's default size, enough for the pages logged during a few
/// `fdatasync`s of this machine's disk.
pub const WRITE_RING_SLACK: usize = 16 * 1024 * 1024;

/// Buffers that bulk-read rings gave back as they were dropped, for the
/// next rings to fill their slots from (see the module doc). Shared by the
/// pool's rings; a buffer id here is only a suggestion, checked under the
/// buffer's header lock when taken.
#[derive(Debug)]
pub(crate) struct SpareBuffers {
    /// The ids, the most recently given last.
    ids: Mutex<Vec<u32>>,
    /// The most ids kept.
    cap: usize,
}

impl SpareBuffers {
    /// An empty list keeping at most `cap` ids.
    pub(crate) fn new(cap: usize) -> SpareBuffers {
        SpareBuffers {
            ids: Mutex::new(Vec::new()),
            cap,
        }
    }

    /// Adds the ids not yet present, while there is room.
    fn give(&self, ids: impl Iterator<Item = u32>) {
        let mut v = self.ids.lock();
        for id in ids {
            if v.len() >= self.cap {
                break;
            }
            if !v.contains(&id) {
                v.push(id);
            }
        }
    }

    /// The most recently given id, removed from the list.
    fn take(&self) -> Option<u32> {
        self.ids.lock().pop()
    }

    /// How many ids are kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.ids.lock().len()
    }
}

/// A ring of buffers for one operation (see the module doc). Create one with
/// `BufferPool::ring`; pass `Some(&mut ring)` to the pool's read and extend
/// calls. A ring is only meaningful for the pool that created it.
#[derive(Debug)]
pub struct Ring {
    /// What the ring is for.
    kind: StrategyKind,
    /// Buffer ids in the ring; [`NO_BUFFER`] for empty slots. Starts at the
    /// configured size; a write ring may grow up to `max_len`.
    buffers: Vec<u32>,
    /// The slot most recently handed out.
    current: usize,
    /// Whether the buffer in the current slot was reused from the ring (as
    /// opposed to freshly taken from the clock sweep): only such a buffer may
    /// be rejected.
    current_was_in_ring: bool,
    /// The most slots the ring may have (its size plus the slack, for
    /// bulk-write and vacuum rings; its size otherwise).
    max_len: usize,
    /// Slots handed out since the last flush-ahead request.
    since_flush_ahead: usize,
    /// The next [`Ring::advance`] stays on the current slot (just made
    /// empty by [`Ring::grow`]).
    hold: bool,
    /// The WAL's flushed position when the ring was made: a page coming
    /// round with an LSN at or below it was not logged by this operation.
    base_lsn: u64,
    /// Whether the last dirty buffer that came round had been logged by
    /// this operation (flush-ahead is asked only then; see the module doc).
    logging: bool,
    /// Where a bulk-read ring takes buffers from before the clock sweep,
    /// and gives its own back when dropped (see the module doc).
    spare: Option<Arc<SpareBuffers>>,
}

impl Ring {
    /// An empty ring of `kind` with `len` slots (at least one) that may grow
    /// to `max_len` slots (write rings only; see the module doc).
    pub(crate) fn new(kind: StrategyKind, len: usize, max_len: usize) -> Ring {
        let len = len.max(1);
        let max_len = if kind == StrategyKind::BulkRead {
            len
        } else {
            max_len.max(len)
        };
        Ring {
            kind,
            buffers: vec![NO_BUFFER; len],
            current: 0,
            current_was_in_ring: false,
            max_len,
            since_flush_ahead: 0,
            hold: false,
            base_lsn: 0,
            logging: true,
            spare: None,
        }
    }

    /// Makes the ring take buffers from `spare` before the clock sweep and
    /// give its own back to it when dropped (bulk-read rings; the pool does
    /// this when it makes the ring).
    pub(crate) fn set_spare(&mut self, spare: Arc<SpareBuffers>) {
        self.spare = Some(spare);
    }

    /// A buffer an earlier ring gave back, to try for the current slot
    /// before the clock sweep (the caller checks it is free to take and then
    /// [`Ring::put`]s it).
    pub(crate) fn take_spare(&self) -> Option<u32> {
        self.spare.as_ref()?.take()
    }

    /// Records the WAL's flushed position as the ring starts (the pool does
    /// this when it makes the ring): see [`Ring::note_round_lsn`].
    pub(crate) fn set_base_lsn(&mut self, lsn: u64) {
        self.base_lsn = lsn;
    }

    /// Records the page LSN of a dirty buffer coming round: whether this
    /// operation logs its pages (an LSN past the ring's base) or only
    /// dirties them without a record (hint bits, VACUUM's all-visible flag
    /// after a load), in which case asking the WAL to flush ahead would only
    /// cost fsyncs that nothing waits for.
    pub(crate) fn note_round_lsn(&mut self, lsn: u64) {
        self.logging = lsn > self.base_lsn;
    }

    /// What the ring is for.
    pub fn kind(&self) -> StrategyKind {
        self.kind
    }

    /// The number of slots (the configured size, plus any growth).
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// The most slots the ring may grow to: its memory bound in buffers.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Always false: a ring has at least one slot.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Advances to the next slot and returns its buffer, if the slot holds one.
    /// The caller then either reuses it ([`Ring::reused`]) or replaces it
    /// ([`Ring::put`]).
    pub(crate) fn advance(&mut self) -> Option<u32> {
        if std::mem::take(&mut self.hold) {
            self.current_was_in_ring = false;
            return None;
        }
        self.current = (self.current + 1) % self.buffers.len();
        self.current_was_in_ring = false;
        self.since_flush_ahead += 1;
        let id = self.buffers[self.current];
        (id != NO_BUFFER).then_some(id)
    }

    /// The buffers of the next slots after the current one, in ring order,
    /// up to `n` and up to the first empty slot (never the current one):
    /// the buffers a write ring will reuse next, which the pool writes
    /// together with the current one when they hold the following blocks
    /// (`BufferPool::flush_run`).
    pub(crate) fn upcoming(&self, n: usize) -> impl Iterator<Item = u32> + '_ {
        let len = self.buffers.len();
        (1..len.min(n + 1))
            .map(move |k| self.buffers[(self.current + k) % len])
            .take_while(|&id| id != NO_BUFFER)
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

    /// Whether it is time to ask the WAL to flush ahead (every half lap of a
    /// write ring whose pages are being logged; see the module doc). Resets
    /// the count when it says yes.
    pub(crate) fn flush_ahead_due(&mut self) -> bool {
        if self.kind == StrategyKind::BulkRead
            || !self.logging
            || self.since_flush_ahead < (self.buffers.len() / 2).max(1)
        {
            return false;
        }
        self.since_flush_ahead = 0;
        true
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

    /// For a write ring whose current buffer `id` (reused from the ring)
    /// still waits for a WAL flush: if the ring may still grow, keeps `id`
    /// in the ring in a new slot just behind the current one (so it comes
    /// round last, a whole lap later) and empties the current slot, which
    /// the next [`Ring::advance`] returns again (so the caller fills it from
    /// the clock sweep). Returns false, changing nothing, when
    /// the ring is at its bound (the caller then waits for the flush).
    pub(crate) fn grow(&mut self, id: u32) -> bool {
        if self.kind == StrategyKind::BulkRead
            || !self.current_was_in_ring
            || self.buffers[self.current] != id
            || self.buffers.len() >= self.max_len
        {
            return false;
        }
        // `id` moves one slot back (to come round at the end of the next
        // lap, after every other buffer); the current slot, now empty, is
        // refilled by the caller.
        self.buffers[self.current] = NO_BUFFER;
        self.buffers.insert(self.current, id);
        self.current += 1;
        self.current_was_in_ring = false;
        self.hold = true;
        true
    }
}

impl Drop for Ring {
    /// Gives a bulk-read ring's buffers back for the next ring.
    fn drop(&mut self) {
        if let Some(spare) = &self.spare {
            spare.give(self.buffers.iter().copied().filter(|&id| id != NO_BUFFER));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_ring_gives_its_buffers_to_the_next_one() {
        let spare = Arc::new(SpareBuffers::new(3));
        let mut r = Ring::new(StrategyKind::BulkRead, 4, 4);
        r.set_spare(Arc::clone(&spare));
        assert_eq!(r.take_spare(), None);
        for id in [5, 6] {
            r.advance();
            r.put(id);
        }
        drop(r);
        assert_eq!(spare.len(), 2, "its two buffers, not the empty slots");
        let mut next = Ring::new(StrategyKind::BulkRead, 4, 4);
        next.set_spare(Arc::clone(&spare));
        assert_eq!(next.take_spare(), Some(6));
        spare.give([7, 8, 9, 10, 7].into_iter());
        assert_eq!(spare.len(), 3, "at most the cap, no duplicates");
        assert_eq!(next.take_spare(), Some(8));
    }

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
        let mut r = Ring::new(StrategyKind::BulkRead, 2, 8);
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
        let mut w = Ring::new(StrategyKind::BulkWrite, 1, 1);
        w.advance();
        w.put(3);
        assert_eq!(w.advance(), Some(3));
        w.reused();
        assert!(!w.reject(3));
        assert!(!w.grow(3), "at its bound");
    }

    #[test]
    fn write_rings_grow_up_to_their_bound_and_keep_the_waiting_buffer() {
        let s = RingSizes::default();
        assert_eq!(s.max_buffers(StrategyKind::Vacuum, 1 << 20), 32 + 2048);
        assert_eq!(s.max_buffers(StrategyKind::Vacuum, 1024), 128);
        assert_eq!(s.max_buffers(StrategyKind::BulkRead, 1 << 20), 32);
        let mut r = Ring::new(StrategyKind::Vacuum, 3, 4);
        for id in [10, 11, 12] {
            assert_eq!(r.advance(), None);
            r.put(id);
        }
        assert_eq!(r.advance(), Some(10));
        r.reused();
        assert!(r.grow(10), "10 waits for the log: kept, slot refilled");
        assert_eq!(r.advance(), None, "the same slot, now empty");
        r.put(13);
        assert_eq!(r.len(), 4);
        // 10 comes round last: after 11, 12 and the new 13.
        assert_eq!(r.advance(), Some(11));
        assert_eq!(r.advance(), Some(12));
        assert_eq!(r.advance(), Some(10));
        r.reused();
        assert!(!r.grow(10), "at its bound: the caller waits");
        assert_eq!(r.advance(), Some(13));
        let b = Ring::new(StrategyKind::BulkRead, 2, 8);
        assert_eq!(b.max_len(), 2, "bulk-read rings never grow");
    }

    #[test]
    fn flush_ahead_every_half_lap_of_write_rings_only() {
        let mut w = Ring::new(StrategyKind::BulkWrite, 4, 4);
        let due: Vec<bool> = (0..8)
            .map(|_| {
                w.advance();
                w.flush_ahead_due()
            })
            .collect();
        assert_eq!(due, [false, true, false, true, false, true, false, true]);
        let mut r = Ring::new(StrategyKind::BulkRead, 4, 4);
        assert!((0..8).all(|_| {
            r.advance();
            !r.flush_ahead_due()
        }));
    }

    #[test]
    fn flush_ahead_stops_while_pages_come_round_unlogged() {
        let mut v = Ring::new(StrategyKind::Vacuum, 2, 2);
        v.set_base_lsn(500);
        let mut due = |lsn: Option<u64>| {
            v.advance();
            if let Some(l) = lsn {
                v.note_round_lsn(l);
            }
            v.flush_ahead_due()
        };
        assert!(due(None), "not known yet: asks");
        assert!(!due(Some(400)), "a page from before the ring: hints only");
        assert!(!due(Some(500)));
        assert!(due(Some(501)), "logged by this operation");
        assert!(due(None), "still logging");
    }
}
