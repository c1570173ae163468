//! Victim selection: the clock sweep, with rings tried first.
//!
//! The clock hand is one shared counter; each step takes the next buffer
//! (`hand % nbuffers`). A buffer that nobody pins and whose usage count is
//! zero is the victim. A buffer nobody pins with a usage count above zero
//! has it decremented (so a page survives as many sweeps as its usage count,
//! at most `MAX_USAGE`) and the hand moves on. A
//! pinned buffer is skipped.
//!
//! Running out: as in PostgreSQL, the sweep gives up when it has stepped over
//! `nbuffers` pinned buffers in a row without decrementing any usage count,
//! and returns the error `no unpinned buffers available` rather than spinning
//! for ever.
//!
//! The victim is returned with its header lock held and a pin count of zero;
//! the caller pins it (`BufferDesc::unlock_header` with one more pin).
//! With a ring, the ring's next buffer is tried first, then for a bulk-read
//! ring the buffers earlier rings left (see [`super::ring`]).
//!
//! Runs: a thread takes the hand's steps [`RUN`] at a time and uses them
//! one by one, so the pages one thread reads in a row land in neighbouring
//! frames even while other threads read too. That is what lets a later
//! sequential scan run at memory speed: the hardware prefetcher streams
//! across frame boundaries only when the next page's frame follows this
//! one's (software prefetch alone, see `prefetch.rs`, reached 95 ms where
//! neighbouring frames took 35 for the same 20,000,000 tuples on one core).
//! Without runs, the three participants of a parallel scan reading a table
//! into the pool took turns at the hand, and only ~45% of consecutive
//! blocks ended up in consecutive frames. Steps a thread took but did not
//! use are skipped by the hand: those buffers keep their usage count one
//! revolution longer, which no caller can tell from an ordinary race.

use std::sync::atomic::{AtomicU64, Ordering};

use super::desc::{refcount, usage, BufferDesc, LOCKED, USAGE_ONE};
use super::ring::Ring;
use crate::error::{Error, Result, SqlState};

/// Steps of the hand a thread takes at a time (a parallel scan's chunk of
/// blocks, `access::heap::scan::PARALLEL_CHUNK`).
pub(crate) const RUN: u64 = 32;

thread_local! {
    /// This thread's run: the clock it belongs to (by [`ClockSweep::id`]),
    /// the next step and the end of the run.
    static THREAD_RUN: std::cell::Cell<(u64, u64, u64)> = const { std::cell::Cell::new((0, 0, 0)) };
}

/// The next clock's id: runs are keyed by it, not by the clock's address,
/// which a later pool may reuse (its hand must not be skipped by a run of
/// an earlier pool's steps: see [`ClockSweep::used`]).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The hand, alone on its cache line.
#[repr(align(64))]
struct Hand(AtomicU64);

/// The clock sweep: its hand, and an id that tells its runs from other
/// clocks'.
pub(crate) struct ClockSweep {
    /// Total steps taken; the buffer under the hand is `hand % nbuffers`.
    hand: Hand,
    /// Unique among the process's clocks (on the line after the hand's, so
    /// reading it does not contend with the hand's updates).
    id: u64,
}

impl ClockSweep {
    /// A hand at buffer 0.
    pub(crate) fn new() -> ClockSweep {
        ClockSweep {
            hand: Hand(AtomicU64::new(0)),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// A bound on the buffers the sweep has handed out: every buffer it
    /// ever returned (and so every buffer that ever held a page) is below
    /// it. The hand only grows and a run's steps are taken from it before
    /// they are used, so a caller that saw a buffer tagged or dirtied sees a
    /// hand past it (coherence of the one counter). Lets passes over the
    /// whole pool (a checkpoint's, a relation's discard) skip the
    /// descriptors of a large pool never used, which are then never touched.
    pub(crate) fn used(&self, nbuffers: usize) -> usize {
        let hand = self.hand.0.load(Ordering::Acquire);
        usize::try_from(hand).map_or(nbuffers, |h| h.min(nbuffers))
    }

    /// Chooses a victim buffer: the ring's next one when reusable, else one
    /// from the sweep (which then takes the ring's slot). Returns the buffer id
    /// and its state, with the header lock held.
    pub(crate) fn victim(
        &self,
        descs: &[BufferDesc],
        ring: Option<&mut Ring>,
    ) -> Result<(u32, u32)> {
        let Some(ring) = ring else {
            return self.sweep(descs);
        };
        if let Some(id) = ring.advance() {
            let d = &descs[id as usize];
            let s = d.lock_header();
            if refcount(s) == 0 && usage(s) <= 1 {
                ring.reused();
                return Ok((id, s));
            }
            d.unlock_header(s);
        }
        // A buffer an earlier ring left, if nobody took it up since, before
        // the sweep, whose next victims in a pool not yet full are frames
        // never touched (see `ring.rs`).
        while let Some(id) = ring.take_spare() {
            let d = &descs[id as usize];
            let s = d.lock_header();
            if refcount(s) == 0 && usage(s) <= 1 {
                ring.put(id);
                return Ok((id, s));
            }
            d.unlock_header(s);
        }
        let (id, s) = self.sweep(descs)?;
        ring.put(id);
        Ok((id, s))
    }

    /// The next step of the hand for this thread: the next of its run, or
    /// the first of a new run of [`RUN`] steps.
    fn step(&self) -> u64 {
        let me = self.id;
        THREAD_RUN.with(|run| {
            let (owner, next, end) = run.get();
            if owner == me && next < end {
                run.set((owner, next + 1, end));
                return next;
            }
            let start = self.hand.0.fetch_add(RUN, Ordering::Relaxed);
            run.set((me, start + 1, start + RUN));
            start
        })
    }

    /// Runs the clock sweep (see the module doc).
    fn sweep(&self, descs: &[BufferDesc]) -> Result<(u32, u32)> {
        let n = descs.len();
        let mut tries = n;
        loop {
            let id = (self.step() % n as u64) as u32;
            let d = &descs[id as usize];
            let mut s = d.state.load(Ordering::Relaxed);
            if refcount(s) == 0 {
                if usage(s) > 0 {
                    // Decrement without the header lock: a CAS on an unlocked
                    // state. Losing the race only means another step.
                    if s & LOCKED == 0 {
                        let _ = d.state.compare_exchange(
                            s,
                            s - USAGE_ONE,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        );
                    }
                    tries = n;
                    continue;
                }
                s = d.lock_header();
                if refcount(s) == 0 && usage(s) == 0 {
                    return Ok((id, s));
                }
                d.unlock_header(s);
            }
            tries -= 1;
            if tries == 0 {
                return Err(Error::new(
                    SqlState::InternalError,
                    "no unpinned buffers available",
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::desc::REFCOUNT_ONE;
    use super::super::ring::StrategyKind;
    use super::*;

    fn descs(n: usize) -> Vec<BufferDesc> {
        (0..n).map(|_| BufferDesc::new()).collect()
    }

    fn take(clock: &ClockSweep, d: &[BufferDesc], ring: Option<&mut Ring>) -> u32 {
        let (id, s) = clock.victim(d, ring).unwrap();
        d[id as usize].unlock_header(s);
        id
    }

    #[test]
    fn sweep_skips_pinned_and_decrements_usage() {
        let d = descs(4);
        d[0].state.store(REFCOUNT_ONE, Ordering::Relaxed);
        d[1].state.store(2 * USAGE_ONE, Ordering::Relaxed);
        let clock = ClockSweep::new();
        assert_eq!(take(&clock, &d, None), 2);
        assert_eq!(take(&clock, &d, None), 3);
        // Buffer 1 needs two more passes to reach usage 0.
        assert_eq!(usage(d[1].state.load(Ordering::Relaxed)), 1);
        assert_eq!(take(&clock, &d, None), 2);
        assert_eq!(take(&clock, &d, None), 3);
        assert_eq!(take(&clock, &d, None), 1);
    }

    #[test]
    fn used_bounds_every_buffer_handed_out() {
        let d = descs(4 * RUN as usize);
        let mut clock = ClockSweep::new();
        assert_eq!(clock.used(d.len()), 0);
        let first = take(&clock, &d, None);
        assert!((first as usize) < clock.used(d.len()));
        let ids: Vec<u32> = std::thread::scope(|s| {
            let h = s.spawn(|| take(&clock, &d, None));
            vec![take(&clock, &d, None), h.join().unwrap()]
        });
        let used = clock.used(d.len());
        assert!(
            ids.iter().all(|&id| (id as usize) < used),
            "{ids:?} below {used}"
        );
        for _ in 0..8 * RUN {
            take(&clock, &d, None);
        }
        assert_eq!(clock.used(d.len()), d.len(), "past one revolution: all");
        // A new clock in the old one's place starts its own run (a run
        // keyed by address would go on with the old hand's steps).
        clock = ClockSweep::new();
        let id = take(&clock, &d, None);
        assert!((id as usize) < clock.used(d.len()), "{id}");
    }

    #[test]
    fn all_pinned_is_an_error_not_a_hang() {
        let d = descs(3);
        for x in &d {
            x.state.store(REFCOUNT_ONE | USAGE_ONE, Ordering::Relaxed);
        }
        let e = ClockSweep::new().victim(&d, None).unwrap_err();
        assert_eq!(e.message, "no unpinned buffers available");
    }

    #[test]
    fn each_thread_sweeps_a_run_of_neighbouring_buffers() {
        let d = descs(4 * RUN as usize);
        let clock = ClockSweep::new();
        let runs: Vec<Vec<u32>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..3)
                .map(|_| s.spawn(|| (0..RUN).map(|_| take(&clock, &d, None)).collect::<Vec<_>>()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &runs {
            assert!(
                r.windows(2).all(|w| w[1] == w[0] + 1),
                "one thread's victims are neighbours: {r:?}"
            );
        }
        let mut all: Vec<u32> = runs.concat();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 3 * RUN as usize, "no buffer handed out twice");
    }

    #[test]
    fn ring_reuses_its_buffer_unless_others_use_it() {
        let d = descs(8);
        let clock = ClockSweep::new();
        let mut ring = Ring::new(StrategyKind::BulkRead, 1, 1);
        let first = take(&clock, &d, Some(&mut ring));
        d[first as usize].state.store(USAGE_ONE, Ordering::Relaxed);
        assert_eq!(take(&clock, &d, Some(&mut ring)), first, "usage 1: reused");
        d[first as usize]
            .state
            .store(2 * USAGE_ONE, Ordering::Relaxed);
        let other = take(&clock, &d, Some(&mut ring));
        assert_ne!(other, first, "usage 2: someone else uses it");
        assert_eq!(take(&clock, &d, Some(&mut ring)), other);
    }
}
