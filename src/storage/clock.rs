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

use std::sync::atomic::{AtomicU64, Ordering};

use super::desc::{refcount, usage, BufferDesc, LOCKED, USAGE_ONE};
use super::ring::Ring;
use crate::error::{Error, Result, SqlState};

/// The clock hand, alone on its cache line.
#[repr(align(64))]
pub(crate) struct ClockSweep {
    /// Total steps taken; the buffer under the hand is `hand % nbuffers`.
    hand: AtomicU64,
}

impl ClockSweep {
    /// A hand at buffer 0.
    pub(crate) fn new() -> ClockSweep {
        ClockSweep {
            hand: AtomicU64::new(0),
        }
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

    /// Runs the clock sweep (see the module doc).
    fn sweep(&self, descs: &[BufferDesc]) -> Result<(u32, u32)> {
        let n = descs.len();
        let mut tries = n;
        loop {
            let id = (self.hand.fetch_add(1, Ordering::Relaxed) % n as u64) as u32;
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
    fn all_pinned_is_an_error_not_a_hang() {
        let d = descs(3);
        for x in &d {
            x.state.store(REFCOUNT_ONE | USAGE_ONE, Ordering::Relaxed);
        }
        let e = ClockSweep::new().victim(&d, None).unwrap_err();
        assert_eq!(e.message, "no unpinned buffers available");
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
