//! Read-ahead of a sorted list of blocks (ANALYZE's sample): which requests
//! to announce to the OS when ([`ReadAhead`]), and a helper thread that
//! announces them while the reader works ([`announce`]).
//!
//! # What is announced
//!
//! `depth` (`maintenance_io_concurrency`) *stretches* are kept announced
//! ahead of the reader, each at most [`COMBINE_BLOCKS`] blocks (128 kB,
//! PostgreSQL 17's `io_combine_limit`) holding one or more listed blocks.
//! Within a stretch each run of consecutive listed blocks is one
//! `posix_fadvise(WILLNEED)` request, and the blocks between runs are not
//! asked for: a dense sample (the default 30,000 blocks of an 82,000-page
//! table, one in 2.7) then reads 240 MB instead of the table's 640 MB. One
//! 8 kB request per block a few ahead (PostgreSQL 15's `PrefetchBuffer`)
//! was slower than no prefetch at all for such a sample, in PostgreSQL too;
//! whole-stretch requests read every byte, as the kernel's own read-ahead
//! does.
//!
//! # Who announces
//!
//! Issuing a WILLNEED request is not free: the kernel allocates the page
//! cache pages and builds the I/O in the caller's thread (per byte about
//! three times the CPU of the kernel's own read-ahead, measured with
//! tools/read_probe.rs; WILLNEED's `force_page_cache_ra` seems to allocate
//! small folios where read-ahead allocates large ones): about 110 ms of
//! system time for the 30,000-block sample, on top of a warm ANALYZE's
//! ~110 ms of CPU. So the requests are issued by
//! a helper thread ([`announce`]) that follows the reader's position, and
//! the reader only publishes its position (an atomic store per block, a
//! wake-up per half window of stretches). On a machine with a spare core
//! the reader's CPU and the kernel's submission work overlap.
//!
//! When the reader meets a block the helper has not announced yet (it was
//! descheduled, or its request waited for the device's queue), the reader
//! asks for that block's run itself before reading it: the miss would
//! otherwise start the kernel's own read-ahead around it (150 MB more read
//! for the default 5M-row sample, when 3% of its blocks were met early).
//!
//! The blocks read, and so the sample, never depend on timing; the
//! requests do a little: a request skips blocks the pool already holds
//! (the reader may have passed them while the helper was descheduled), and
//! in lockstep the requests are exactly those of the single-threaded order
//! (the unit tests below). Measured (5M pgbench rows, cold, load ~6): at
//! the default depth 10 the helper had announced 97-98% of the blocks
//! before the reader got to them; at depth 64 fewer (its WILLNEEDs block
//! once the device queue of 256 requests is full), at depth 1 ~87%.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Result;
use crate::storage::BlockNumber;

/// Most blocks one read-ahead request covers: 128 kB.
pub const COMBINE_BLOCKS: BlockNumber = 16;

/// Read-ahead over a sorted list of blocks (see the module doc): before
/// block `i` of the list is read, [`ReadAhead::advance`] keeps `depth`
/// stretches announced that cover blocks from `i` on, each stretch at most
/// [`COMBINE_BLOCKS`] blocks holding one or more of the list's blocks, and
/// announced as one request per run of consecutive listed blocks in it.
#[derive(Debug)]
pub struct ReadAhead {
    /// Requests to keep in flight (`maintenance_io_concurrency`).
    depth: usize,
    /// The first list index not announced yet.
    next: usize,
    /// For each stretch in flight, the last list index it covers.
    ends: VecDeque<usize>,
}

impl ReadAhead {
    /// Read-ahead keeping `depth` stretches in flight (0: none).
    pub fn new(depth: usize) -> ReadAhead {
        ReadAhead {
            depth,
            next: 0,
            ends: VecDeque::with_capacity(depth),
        }
    }

    /// Called before reading `blocks[i]`: forgets the stretches whose blocks
    /// are all read and announces new ones until `depth` are in flight, each
    /// as one call of `issue(first block, count)` per run of consecutive
    /// blocks of the list in it, which returns the requests it made.
    /// Returns the sum.
    pub fn advance(
        &mut self,
        blocks: &[BlockNumber],
        i: usize,
        mut issue: impl FnMut(BlockNumber, u32) -> Result<u32>,
    ) -> Result<u64> {
        while self.ends.front().is_some_and(|&e| e < i) {
            self.ends.pop_front();
        }
        self.next = self.next.max(i);
        let mut issued = 0;
        while self.ends.len() < self.depth && self.next < blocks.len() {
            let first = blocks[self.next];
            let mut last = self.next;
            while last + 1 < blocks.len() && blocks[last + 1] < first + COMBINE_BLOCKS {
                last += 1;
            }
            // One request per run of consecutive sampled blocks: the blocks
            // in between are not read (a whole-stretch request read 2.7x
            // the bytes of a dense sample).
            let mut k = self.next;
            while k <= last {
                let run = k;
                while k < last && blocks[k + 1] == blocks[k] + 1 {
                    k += 1;
                }
                issued += u64::from(issue(blocks[run], blocks[k] - blocks[run] + 1)?);
                k += 1;
            }
            self.ends.push_back(last);
            self.next = last + 1;
        }
        Ok(issued)
    }

    /// The list index at which a helper thread should top the window up
    /// again: once the reader has passed the older half of the stretches
    /// in flight (the oldest one when only one or two are), so each
    /// wake-up issues about `depth / 2` stretches rather than one. `None`
    /// when every block is announced (or read-ahead is off).
    pub fn wake_at(&self, len: usize) -> Option<usize> {
        if self.next >= len || self.depth == 0 {
            return None;
        }
        let k = self.ends.len().div_ceil(2);
        Some(if k == 0 { 0 } else { self.ends[k - 1] + 1 })
    }
}

/// Marks the reader finished (no more blocks).
const DONE: usize = usize::MAX;

/// The reader's position, shared with the [`announce`] thread.
///
/// The announcer parks itself until the reader reaches the index it
/// published (`wake_at`); the reader's [`ReadProgress::reading`] is an atomic
/// store and load per block and an `unpark` when that index is reached (a
/// futex wake only if the announcer is parked). No lock: a first version
/// with a mutex and condition variable spent ~15% of a warm ANALYZE in
/// contended locking and context switches, waking once per stretch.
#[derive(Debug)]
pub struct ReadProgress {
    /// The list index the reader reads next, or [`DONE`].
    at: AtomicUsize,
    /// The announcer parks until `at` reaches this index.
    wake_at: AtomicUsize,
    /// The first list index not announced yet (the announcer's progress).
    announced: AtomicUsize,
    /// The announcer's thread, once it runs.
    announcer: std::sync::OnceLock<std::thread::Thread>,
}

impl Default for ReadProgress {
    fn default() -> ReadProgress {
        ReadProgress {
            at: AtomicUsize::new(0),
            wake_at: AtomicUsize::new(usize::MAX),
            announced: AtomicUsize::new(0),
            announcer: std::sync::OnceLock::new(),
        }
    }
}

impl ReadProgress {
    /// The reader is about to read list index `i`: wakes the announcer when
    /// it waits for that index. Returns whether the block is announced
    /// (false: the announcer is behind, the read waits for the disk).
    pub fn reading(&self, i: usize) -> bool {
        self.at.store(i, Ordering::SeqCst);
        if i >= self.wake_at.load(Ordering::SeqCst) {
            self.wake();
        }
        i < self.announced.load(Ordering::Relaxed)
    }

    /// The reader is done (or failed): the announcer stops.
    pub fn finish(&self) {
        self.at.store(DONE, Ordering::SeqCst);
        self.wake();
    }

    fn wake(&self) {
        if let Some(t) = self.announcer.get() {
            t.unpark();
        }
    }

    /// Waits until the reader is at `index` or beyond (or done); returns
    /// its position, `None` when it is done. Called by the announcer only.
    fn wait_for(&self, index: usize) -> Option<usize> {
        self.announcer.get_or_init(std::thread::current);
        // Publish the index before looking at the position: a reader that
        // stores a position past it after this look sees the index and
        // unparks (both SeqCst), and an unpark before the park makes the
        // park return at once.
        self.wake_at.store(index, Ordering::SeqCst);
        loop {
            match self.at.load(Ordering::SeqCst) {
                DONE => return None,
                at if at >= index => {
                    self.wake_at.store(usize::MAX, Ordering::SeqCst);
                    return Some(at);
                }
                _ => std::thread::park(),
            }
        }
    }
}

/// Calls [`ReadProgress::finish`] when dropped: the reader's loop ends the
/// announcer on every way out, errors included.
pub struct FinishOnDrop<'a>(pub &'a ReadProgress);

impl Drop for FinishOnDrop<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// The helper thread's loop: announces `blocks` ahead of the reader whose
/// position `progress` publishes, as a [`ReadAhead`] of `depth` would
/// before each read, until the reader finishes or every block is
/// announced. An error from `issue` (advice only) ends the announcing.
/// Returns the number of requests issued.
pub fn announce(
    blocks: &[BlockNumber],
    depth: usize,
    progress: &ReadProgress,
    mut issue: impl FnMut(BlockNumber, u32) -> Result<u32>,
) -> u64 {
    let mut ahead = ReadAhead::new(depth);
    let mut issued = 0;
    let mut at = 0;
    loop {
        match ahead.advance(blocks, at, &mut issue) {
            Ok(n) => issued += n,
            Err(_) => return issued,
        }
        progress.announced.store(ahead.next, Ordering::Relaxed);
        let Some(wake) = ahead.wake_at(blocks.len()) else {
            return issued;
        };
        match progress.wait_for(wake) {
            Some(now) => at = now,
            None => return issued,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The requests a read of `blocks` issues, as (list index at which they
    /// were issued, first block, count).
    fn requests(depth: usize, blocks: &[BlockNumber]) -> Vec<(usize, BlockNumber, u32)> {
        let mut ra = ReadAhead::new(depth);
        let mut out = Vec::new();
        for i in 0..blocks.len() {
            ra.advance(blocks, i, |b, n| {
                out.push((i, b, n));
                Ok(1)
            })
            .unwrap();
        }
        out
    }

    #[test]
    fn dense_samples_are_read_ahead_by_128_kb_stretch_sampled_blocks_only() {
        // Runs of 2 listed blocks 4 apart: 0-1, 4-5, ... (a stretch of 16
        // blocks holds 4 runs, 8 listed blocks).
        let blocks: Vec<BlockNumber> = (0..100).map(|k| (k / 2) * 4 + k % 2).collect();
        let r = requests(2, &blocks);
        // The first two stretches are announced at once, run by run.
        assert_eq!(r[0], (0, 0, 2));
        assert_eq!(r[1], (0, 4, 2));
        assert!(r.iter().all(|&(_, _, n)| n == 2), "runs, never gaps");
        let first_lap = r.iter().filter(|&&(i, _, _)| i == 0).count();
        assert_eq!(first_lap, 8, "two stretches of 4 runs");
        assert_eq!(
            r[first_lap],
            (8, 32, 2),
            "the third stretch once the first is read"
        );
        assert_eq!(r.len(), 50, "every run once");
        for b in &blocks {
            let n = r
                .iter()
                .filter(|&&(_, first, count)| (first..first + count).contains(b))
                .count();
            assert_eq!(n, 1, "block {b} announced once");
        }
    }

    #[test]
    fn sparse_samples_get_one_request_per_block_depth_ahead() {
        let blocks: Vec<BlockNumber> = (0..50).map(|k| k * 100).collect();
        let r = requests(10, &blocks);
        assert_eq!(r.len(), 50);
        assert!(r.iter().all(|&(_, _, n)| n == 1));
        assert_eq!(r.iter().filter(|&&(i, _, _)| i == 0).count(), 10);
        // Later, one new request per block read, always 10 ahead.
        assert_eq!(r[10], (1, 1000, 1));
        assert!(requests(0, &blocks).is_empty(), "0 turns read-ahead off");
    }

    #[test]
    fn wake_at_is_where_the_older_half_of_the_window_is_read() {
        let blocks: Vec<BlockNumber> = (0..100).map(|k| k * 5).collect();
        let mut ra = ReadAhead::new(3);
        assert_eq!(ra.wake_at(blocks.len()), Some(0), "nothing announced yet");
        ra.advance(&blocks, 0, |_, _| Ok(1)).unwrap();
        // Stretches of 16 blocks hold listed blocks 0,5,10,15 (indexes
        // 0..=3), then 4..=7, 8..=11: wake once the first two are read.
        assert_eq!(ra.wake_at(blocks.len()), Some(8));
        // Reading index 3 retires nothing: no new request.
        assert_eq!(ra.advance(&blocks, 3, |_, _| Ok(1)).unwrap(), 0);
        assert_eq!(ra.advance(&blocks, 4, |_, _| Ok(1)).unwrap(), 4);
        let mut done = ReadAhead::new(200);
        done.advance(&blocks, 0, |_, _| Ok(1)).unwrap();
        assert_eq!(done.wake_at(blocks.len()), None, "all announced");
    }

    fn cases() -> Vec<(usize, Vec<BlockNumber>)> {
        vec![
            (10, (0..3000).map(|k| k * 3 + k % 2).collect()),
            (2, (0..500).map(|k| k * 100).collect()),
            (64, (0..2000).collect()),
            (1, vec![7]),
            (4, Vec::new()),
        ]
    }

    /// Runs the announcer beside a reader of `blocks`; with `lockstep` the
    /// reader waits at each block until the announcer is idle. Returns the
    /// requests with the reader's position when each was issued.
    fn announced(
        depth: usize,
        blocks: &[BlockNumber],
        lockstep: bool,
    ) -> Vec<(BlockNumber, u32, usize)> {
        let progress = ReadProgress::default();
        let got = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                announce(blocks, depth, &progress, |b, n| {
                    let at = progress.at.load(Ordering::SeqCst);
                    got.lock().unwrap().push((b, n, at));
                    Ok(1)
                })
            });
            let finish = FinishOnDrop(&progress);
            for i in 0..blocks.len() {
                progress.reading(i);
                // Lockstep: wait until the announcer parks for a later index.
                while lockstep && !h.is_finished() {
                    let w = progress.wake_at.load(Ordering::SeqCst);
                    if w != usize::MAX && w > i {
                        break;
                    }
                    std::thread::yield_now();
                }
            }
            drop(finish);
            let issued = h.join().unwrap();
            assert_eq!(issued as usize, got.lock().unwrap().len());
        });
        got.into_inner().unwrap()
    }

    /// In lockstep the helper thread issues exactly the requests of the
    /// single-threaded order, each no earlier than that order would (at
    /// most `depth` stretches in flight) and before the reader reaches its
    /// first block (never late).
    #[test]
    fn the_announcer_thread_issues_what_the_reader_would() {
        for (depth, blocks) in cases() {
            let want = requests(depth, &blocks);
            let got = announced(depth, &blocks, true);
            let pairs: Vec<(BlockNumber, u32)> = got.iter().map(|&(b, n, _)| (b, n)).collect();
            let want_pairs: Vec<(BlockNumber, u32)> =
                want.iter().map(|&(_, b, n)| (b, n)).collect();
            assert_eq!(pairs, want_pairs, "depth {depth}");
            for (k, &(b, _, at)) in got.iter().enumerate() {
                let index = blocks.binary_search(&b).expect("a listed block");
                assert!(at >= want[k].0, "request {k} early: at {at}, {:?}", want[k]);
                assert!(
                    at <= index,
                    "request {k} late: at {at}, block index {index}"
                );
            }
        }
    }

    #[test]
    fn the_announcer_wakes_once_per_half_window() {
        let blocks: Vec<BlockNumber> = (0..1000).map(|k| k * 40).collect();
        let mut ra = ReadAhead::new(10);
        ra.advance(&blocks, 0, |_, _| Ok(1)).unwrap();
        // One block per stretch: the 5th stretch (index 4) read, then wake.
        assert_eq!(ra.wake_at(blocks.len()), Some(5));
        assert_eq!(ra.advance(&blocks, 5, |_, _| Ok(1)).unwrap(), 5);
    }

    /// Free-running (the reader may outrun the helper): every request is a
    /// run of listed blocks within one 128 kB stretch, ascending, none
    /// twice.
    #[test]
    fn a_free_running_announcer_asks_for_listed_blocks_once_in_order() {
        for _ in 0..20 {
            for (depth, blocks) in cases() {
                let got = announced(depth, &blocks, false);
                let listed: std::collections::HashSet<BlockNumber> =
                    blocks.iter().copied().collect();
                let mut last = None;
                for &(b, n, _) in &got {
                    assert!((1..=COMBINE_BLOCKS).contains(&n));
                    assert!((b..b + n).all(|x| listed.contains(&x)), "{b}+{n}");
                    assert!(last.map_or(true, |l| b > l), "ascending, no repeats");
                    last = Some(b + n - 1);
                }
            }
        }
    }
}
