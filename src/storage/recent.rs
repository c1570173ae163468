//! Recent-buffer hints: pinning a page's buffer without the mapping table
//! (PostgreSQL's `ReadRecentBuffer`).
//!
//! Every [`BufferPool::read_buffer`] hashes the page's tag, takes a shared
//! partition lock and probes a hash table: two dependent cache misses (the
//! table's control bytes, then its bucket) at random places in a table sized
//! for the whole pool. A sequential scan of a cached table pays them once
//! per page; at 60 tuples per page they were ~20% of a serial `sum()`
//! (`perf`, 1M pgbench accounts).
//!
//! [`RecentBuffers`] remembers, per block of one relation fork, which buffer
//! held it last. [`BufferPool::read_buffer_recent`] pins that buffer
//! directly when its header still names the page: one atomic on a
//! descriptor, and the descriptors of consecutive blocks loaded together
//! are neighbours (the clock hands out neighbouring buffers), so the
//! hardware prefetcher has them ready.
//!
//! # Invariants
//!
//! - A hint is only a guess and is never trusted: the buffer's tag and
//!   `VALID` flag are checked under its header lock, which whoever retags a
//!   buffer holds (and retagging also requires the retagger's pin to be the
//!   only one, so once pinned here the buffer cannot change page). A stale
//!   or wrong hint costs one header lock and then the ordinary lookup.
//! - Hints are shared by every scan of the relation and written without
//!   locks (relaxed atomics); a lost or torn-in-time update only costs a
//!   lookup.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::bufmgr::{BufferPool, BufferTag, PinnedBuffer};
use super::desc::{
    refcount, usage, MAX_USAGE, REFCOUNT_MASK, REFCOUNT_ONE, TAG_VALID, USAGE_ONE, VALID,
};
use super::prefetch::Ahead;
use super::ring::Ring;
use super::stats::Counter;
use super::{BlockNumber, ForkNumber, RelFileNode};
use crate::error::Result;

/// No buffer remembered for a block.
const NONE: u32 = u32::MAX;

/// The last buffer of each block of one relation fork (see the module doc).
#[derive(Debug, Default)]
pub struct RecentBuffers {
    /// One slot per block; replaced by a longer copy when the fork grows.
    slots: RwLock<Arc<[AtomicU32]>>,
}

impl RecentBuffers {
    /// No hints yet.
    pub fn new() -> RecentBuffers {
        RecentBuffers::default()
    }

    /// The hint slots, covering at least blocks `0..nblocks`: what a scan
    /// takes once at its start and then reads and writes without locking.
    pub fn slots(&self, nblocks: BlockNumber) -> Arc<[AtomicU32]> {
        let n = nblocks as usize;
        {
            let s = self.slots.read();
            if s.len() >= n {
                return s.clone();
            }
        }
        let mut s = self.slots.write();
        if s.len() < n {
            // Grow by at least an eighth, so a table loaded in steps does
            // not copy its hints at every scan.
            let len = n.max(s.len() + s.len() / 8);
            let grown: Arc<[AtomicU32]> = (0..len)
                .map(|i| AtomicU32::new(s.get(i).map_or(NONE, |a| a.load(Ordering::Relaxed))))
                .collect();
            *s = grown;
        }
        s.clone()
    }
}

impl BufferPool {
    /// [`BufferPool::read_buffer`] that first tries the buffer `hints`
    /// remembers for `block` and records the buffer it ends up with.
    /// Same result, errors and buffer counters as `read_buffer`.
    #[inline]
    pub fn read_buffer_recent(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        hints: &[AtomicU32],
        strategy: Option<&mut Ring>,
    ) -> Result<PinnedBuffer<'_>> {
        let tag = BufferTag { rel, fork, block };
        let slot = hints.get(block as usize);
        if let Some(slot) = slot {
            let id = slot.load(Ordering::Relaxed);
            if (id as usize) < self.descs.len() && self.pin_if_holds(id, tag, strategy.is_some()) {
                self.counters.count(Counter::Hit);
                return Ok(PinnedBuffer {
                    pool: self,
                    id,
                    tag,
                });
            }
        }
        let buf = self.read_buffer(rel, fork, block, strategy)?;
        if let Some(slot) = slot {
            slot.store(buf.id, Ordering::Relaxed);
        }
        Ok(buf)
    }

    /// `block` pinned through the buffer `hints` remembers for it, when
    /// that buffer still holds the page (a hit); `None` otherwise, with
    /// nothing read. The cached path of a scan: no I/O, no allocation.
    #[inline]
    pub fn pin_recent(
        &self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        hints: &[AtomicU32],
        strategy: bool,
    ) -> Option<PinnedBuffer<'_>> {
        let tag = BufferTag { rel, fork, block };
        let id = hints.get(block as usize)?.load(Ordering::Relaxed);
        if (id as usize) < self.descs.len() && self.pin_if_holds(id, tag, strategy) {
            self.counters.count(Counter::Hit);
            return Some(PinnedBuffer {
                pool: self,
                id,
                tag,
            });
        }
        None
    }

    /// The read side of a scan that reads runs of pages: `block` pinned
    /// through the buffer `hints` remembers for it when that is right (as
    /// [`BufferPool::read_buffer_recent`]); else, when the pool lacks the
    /// page, it and up to `count - 1` blocks after it pinned together
    /// ([`BufferPool::read_buffers`]: one `preadv` per run of missing
    /// pages); else the page alone. The pins go to `out` in block order,
    /// at least one unless an error is returned; counters and errors as
    /// `read_buffer`'s.
    #[allow(clippy::too_many_arguments)]
    pub fn read_buffers_recent<'a>(
        &'a self,
        rel: RelFileNode,
        fork: ForkNumber,
        block: BlockNumber,
        count: u32,
        hints: &[AtomicU32],
        strategy: Option<&mut Ring>,
        out: &mut Vec<PinnedBuffer<'a>>,
    ) -> Result<()> {
        let slot = hints.get(block as usize);
        if let Some(buf) = self.pin_recent(rel, fork, block, hints, strategy.is_some()) {
            out.push(buf);
            return Ok(());
        }
        if count > 1 && !self.is_cached(rel, fork, block) {
            return self.read_buffers(rel, fork, block, count, hints, strategy, out);
        }
        let buf = self.read_buffer(rel, fork, block, strategy)?;
        if let Some(slot) = slot {
            slot.store(buf.id, Ordering::Relaxed);
        }
        out.push(buf);
        Ok(())
    }

    /// The frame `hints` remembers for `block`, for prefetching while a
    /// scan works on the page before it ([`Ahead`]; the hardware
    /// prefetcher follows no stream across frames). Only a hint: no pin,
    /// no lock, nothing read; a stale hint fetches some other frame's lines
    /// for nothing.
    ///
    /// The buffer's descriptor is prefetched now: pinning the next page
    /// takes its header lock, and without this the descriptor's line was a
    /// miss at every page (perf: ~55% of `HeapScan::pin`'s
    /// samples on that load and the `lock cmpxchg` after it, a 5M-row
    /// `sum(aid)`). It is prefetched for writing
    /// ([`super::prefetch::prefetch_write`]): a read prefetch brought the line
    /// in shared, often from the other core (which pinned the page last),
    /// and the `lock cmpxchg` then waited for a second transfer to own it;
    /// with `PREFETCHW` `pin`'s share of the samples halved.
    #[inline]
    pub fn frame_hint(&self, block: BlockNumber, hints: &[AtomicU32]) -> Ahead {
        let Some(slot) = hints.get(block as usize) else {
            return Ahead::NONE;
        };
        let id = slot.load(Ordering::Relaxed);
        if (id as usize) >= self.descs.len() {
            return Ahead::NONE;
        }
        super::prefetch::prefetch_write(std::ptr::from_ref(self.desc(id)).cast());
        Ahead::frame(self.frame(id))
    }

    /// Pins buffer `id` if it holds `tag`'s page, valid; with the usage
    /// count raised as [`BufferPool::pin`] raises it.
    pub(super) fn pin_if_holds(&self, id: u32, tag: BufferTag, strategy: bool) -> bool {
        let d = self.desc(id);
        let s = d.lock_header();
        let holds = s & (TAG_VALID | VALID) == TAG_VALID | VALID
            && refcount(s) < REFCOUNT_MASK
            && d.tag() == tag;
        if !holds {
            d.unlock_header(s);
            return false;
        }
        let mut n = s + REFCOUNT_ONE;
        if (strategy && usage(s) == 0) || (!strategy && usage(s) < MAX_USAGE) {
            n += USAGE_ONE;
        }
        d.unlock_header(n);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::BufferPoolConfig;

    fn pool(dir: &std::path::Path, n: usize) -> Arc<BufferPool> {
        BufferPool::open_with(
            dir,
            BufferPoolConfig {
                nbuffers: n,
                ..BufferPoolConfig::default()
            },
        )
        .expect("pool opens")
    }

    #[test]
    fn a_hint_is_used_when_right_and_replaced_when_stale() {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = pool(dir.path(), 16);
        let rel = RelFileNode(7);
        p.create_relation(rel, ForkNumber::Main).expect("create");
        let (b0, id0) = {
            let (block, buf) = p.extend(rel, ForkNumber::Main, None).expect("extend");
            (block, buf.buffer_id())
        };
        let hints = RecentBuffers::new().slots(4);
        assert!(hints.len() >= 4);
        // No hint: the lookup finds the buffer and records it.
        let buf = p
            .read_buffer_recent(rel, ForkNumber::Main, b0, &hints, None)
            .expect("read");
        assert_eq!(buf.buffer_id(), id0);
        assert_eq!(hints[b0 as usize].load(Ordering::Relaxed), id0);
        drop(buf);
        // A wrong hint (another buffer, or out of range) is not trusted.
        for wrong in [id0 + 1, 10_000, NONE] {
            hints[b0 as usize].store(wrong, Ordering::Relaxed);
            let buf = p
                .read_buffer_recent(rel, ForkNumber::Main, b0, &hints, None)
                .expect("read");
            assert_eq!(buf.buffer_id(), id0);
            assert_eq!(buf.block(), b0);
            assert_eq!(hints[b0 as usize].load(Ordering::Relaxed), id0);
        }
        // A hint pins exactly like a lookup: one pin each, dropped with it.
        let a = p
            .read_buffer_recent(rel, ForkNumber::Main, b0, &hints, None)
            .expect("read");
        let b = p
            .read_buffer(rel, ForkNumber::Main, b0, None)
            .expect("read");
        assert_eq!(a.buffer_id(), b.buffer_id());
        assert_eq!(refcount(p.desc(id0).state.load(Ordering::Relaxed)), 2);
        drop((a, b));
        assert_eq!(refcount(p.desc(id0).state.load(Ordering::Relaxed)), 0);
    }

    #[test]
    fn a_frame_hint_takes_any_hint_and_changes_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = pool(dir.path(), 16);
        let hints = RecentBuffers::new().slots(3);
        hints[0].store(5, Ordering::Relaxed);
        hints[1].store(10_000, Ordering::Relaxed);
        assert!(p.frame_hint(0, &hints).is_some());
        for block in [1, 2, 3, u32::MAX] {
            assert!(!p.frame_hint(block, &hints).is_some(), "block {block}");
        }
        p.frame_hint(0, &hints).all();
        assert!((0..16).all(|id| p.desc(id).state.load(Ordering::Relaxed) == 0));
    }

    #[test]
    fn slots_grow_and_keep_their_hints() {
        let r = RecentBuffers::new();
        let s = r.slots(10);
        s[3].store(42, Ordering::Relaxed);
        let t = r.slots(1000);
        assert!(t.len() >= 1000);
        assert_eq!(t[3].load(Ordering::Relaxed), 42);
        assert_eq!(t[500].load(Ordering::Relaxed), NONE);
        assert!(Arc::ptr_eq(&t, &r.slots(20)), "no copy when long enough");
    }
}
