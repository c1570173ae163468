//! Buffer counters: per thread (for per-statement figures) and per pool (the
//! database's totals).
//!
//! Every buffer access counts in two places:
//!
//! - a thread-local [`BufferUsage`]: a statement takes
//!   [`BufferUsage::current`] before and after it runs and reports the
//!   difference ([`BufferUsage::since`]), as PostgreSQL's `pgBufferUsage`
//!   feeds `EXPLAIN (BUFFERS)`. Plain `Cell`s: no atomic on the hot path.
//! - the pool's [`PoolCounters`]: relaxed atomic counters spread over
//!   cache-line-sized shards (a thread picks one shard for life), so threads
//!   hitting the buffer pool at once do not fight over one cache line.
//!
//! The counters:
//! - `shared_hit`: a pin found the page already in the pool;
//! - `shared_read`: the page had to be read from its file;
//! - `shared_dirtied`: a clean buffer became dirty (extension included);
//! - `shared_written`: a dirty buffer was written out (by eviction or flush);
//! - `evicted`: a valid buffer was reused for another page.

use std::cell::Cell;
use std::ops::{Add, Sub};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A set of buffer counters (see the module doc for their meaning).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BufferUsage {
    /// Pins that found the page in the pool.
    pub shared_hit: u64,
    /// Pages read from disk (or the OS cache) into the pool.
    pub shared_read: u64,
    /// Buffers that went from clean to dirty.
    pub shared_dirtied: u64,
    /// Dirty buffers written out.
    pub shared_written: u64,
    /// Valid buffers replaced by another page.
    pub evicted: u64,
}

impl BufferUsage {
    /// This thread's counters so far (all pools together).
    pub fn current() -> BufferUsage {
        THREAD.with(|t| BufferUsage {
            shared_hit: t.hit.get(),
            shared_read: t.read.get(),
            shared_dirtied: t.dirtied.get(),
            shared_written: t.written.get(),
            evicted: t.evicted.get(),
        })
    }

    /// Adds `self` to this thread's counters: a statement's leader credits
    /// itself with the buffer work its parallel workers did, so statement
    /// and EXPLAIN figures cover every participant.
    pub fn credit_to_thread(&self) {
        THREAD.with(|t| {
            t.hit.set(t.hit.get() + self.shared_hit);
            t.read.set(t.read.get() + self.shared_read);
            t.dirtied.set(t.dirtied.get() + self.shared_dirtied);
            t.written.set(t.written.get() + self.shared_written);
            t.evicted.set(t.evicted.get() + self.evicted);
        });
    }

    /// The counts between `earlier` and `self` (`self - earlier`).
    pub fn since(&self, earlier: &BufferUsage) -> BufferUsage {
        *self - *earlier
    }
}

impl Sub for BufferUsage {
    type Output = BufferUsage;
    fn sub(self, o: BufferUsage) -> BufferUsage {
        BufferUsage {
            shared_hit: self.shared_hit.wrapping_sub(o.shared_hit),
            shared_read: self.shared_read.wrapping_sub(o.shared_read),
            shared_dirtied: self.shared_dirtied.wrapping_sub(o.shared_dirtied),
            shared_written: self.shared_written.wrapping_sub(o.shared_written),
            evicted: self.evicted.wrapping_sub(o.evicted),
        }
    }
}

impl Add for BufferUsage {
    type Output = BufferUsage;
    fn add(self, o: BufferUsage) -> BufferUsage {
        BufferUsage {
            shared_hit: self.shared_hit + o.shared_hit,
            shared_read: self.shared_read + o.shared_read,
            shared_dirtied: self.shared_dirtied + o.shared_dirtied,
            shared_written: self.shared_written + o.shared_written,
            evicted: self.evicted + o.evicted,
        }
    }
}

/// This thread's counters, as plain cells.
struct ThreadCounters {
    /// See [`BufferUsage::shared_hit`].
    hit: Cell<u64>,
    /// See [`BufferUsage::shared_read`].
    read: Cell<u64>,
    /// See [`BufferUsage::shared_dirtied`].
    dirtied: Cell<u64>,
    /// See [`BufferUsage::shared_written`].
    written: Cell<u64>,
    /// See [`BufferUsage::evicted`].
    evicted: Cell<u64>,
    /// The pool-counter shard this thread uses.
    shard: usize,
}

/// Hands out shard numbers round-robin to threads as they first count.
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD: ThreadCounters = ThreadCounters {
        hit: Cell::new(0),
        read: Cell::new(0),
        dirtied: Cell::new(0),
        written: Cell::new(0),
        evicted: Cell::new(0),
        shard: NEXT_SHARD.fetch_add(1, Ordering::Relaxed) % SHARDS,
    };
}

/// Number of shards of the pool counters.
const SHARDS: usize = 16;

/// One shard of pool counters, alone on its cache line(s).
#[derive(Default)]
#[repr(align(64))]
struct Shard {
    /// Index = counter kind (see [`Counter`]).
    counts: [AtomicU64; 5],
}

/// The kinds of counter, as indexes into a shard.
#[derive(Clone, Copy)]
pub(crate) enum Counter {
    /// A hit.
    Hit = 0,
    /// A read.
    Read = 1,
    /// A clean-to-dirty transition.
    Dirtied = 2,
    /// A write.
    Written = 3,
    /// An eviction of a valid page.
    Evicted = 4,
}

/// A pool's (a database's) counters since it opened.
#[derive(Default)]
pub struct PoolCounters {
    /// Shards, see the module doc.
    shards: [Shard; SHARDS],
}

impl PoolCounters {
    /// Counts one event in the pool and in this thread's counters.
    #[inline]
    pub(crate) fn count(&self, what: Counter) {
        THREAD.with(|t| {
            let cell = match what {
                Counter::Hit => &t.hit,
                Counter::Read => &t.read,
                Counter::Dirtied => &t.dirtied,
                Counter::Written => &t.written,
                Counter::Evicted => &t.evicted,
            };
            cell.set(cell.get() + 1);
            self.shards[t.shard].counts[what as usize].fetch_add(1, Ordering::Relaxed);
        });
    }

    /// The totals over all threads.
    pub fn snapshot(&self) -> BufferUsage {
        let sum = |i: usize| {
            self.shards
                .iter()
                .map(|s| s.counts[i].load(Ordering::Relaxed))
                .sum()
        };
        BufferUsage {
            shared_hit: sum(Counter::Hit as usize),
            shared_read: sum(Counter::Read as usize),
            shared_dirtied: sum(Counter::Dirtied as usize),
            shared_written: sum(Counter::Written as usize),
            evicted: sum(Counter::Evicted as usize),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_and_pool_counters_agree_and_diff() {
        let pool = PoolCounters::default();
        let before = BufferUsage::current();
        pool.count(Counter::Hit);
        pool.count(Counter::Hit);
        pool.count(Counter::Read);
        pool.count(Counter::Evicted);
        let d = BufferUsage::current().since(&before);
        assert_eq!(d.shared_hit, 2);
        assert_eq!(d.shared_read, 1);
        assert_eq!(d.evicted, 1);
        assert_eq!(pool.snapshot(), d);
        std::thread::spawn(move || {
            pool.count(Counter::Written);
            assert_eq!(pool.snapshot().shared_written, 1);
            assert_eq!(BufferUsage::current().shared_written, 1);
        })
        .join()
        .unwrap();
    }
}
