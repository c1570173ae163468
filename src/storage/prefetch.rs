//! Software prefetch of the page a scan reads next, spread over the work on
//! the page it reads now.
//!
//! A sequential scan of cached pages is bound by how many cache misses the
//! CPU keeps in flight, not by the memory's bandwidth: the loop over a
//! page's tuples reaches each tuple through its line pointer, and the
//! hardware prefetcher, which works within one 4 KiB page of address space
//! and needs a few misses to find a stream, leaves most lines of each 8 KiB
//! frame as demand misses that the out-of-order window covers only a few
//! at a time. Issuing all 128 line prefetches of the next frame at once
//! (what [`super::recent`] did first) stalls on the CPU's miss buffers and
//! bought nothing measurable. One or a few prefetches per tuple, walking
//! the next frame's lines in address order while this frame is worked on,
//! keep the misses flowing: a standalone loop over 20,000,000 four-column
//! tuples went from 52 to 17 ms on one core (the sequential-read floor of
//! the same bytes is 16 ms), and over pgbench_accounts' 61-tuple pages
//! from 51 to 24 ms (floor 24.5 ms).
//!
//! Rows of two cache lines or more (pgbench_accounts' 128 bytes) are
//! another matter: the loop reads only each tuple's first line, and
//! fetching the rest of each row costs bandwidth the loop then waits for.
//! For those pages the fused scan loop does not spread the frame but asks,
//! per tuple, for the line at that tuple's offset in the next frame
//! ([`Ahead::at`]; `exec::fastpath::fixed_scan`'s `dense_loop`), which holds the
//! next page's tuple of the same number when that page is laid out alike:
//! half the lines, and `sum(aid)` over 5M cached rows went from 17.2 to
//! 10.4 ms on two threads.
//!
//! [`Ahead`] names the frame (from the relation's recent-buffer hints: no
//! pin, no lock, nothing read); [`Spread`] issues its lines a tuple at a
//! time. A prefetch never faults and reads nothing the program sees, so a
//! stale hint (the frame now holds another page) costs only wasted fetches.

/// Lines of a frame (`BLCKSZ / 64`).
pub const FRAME_LINES: usize = super::BLCKSZ / 64;

/// The frame a scan expects to read next, for prefetching only.
#[derive(Clone, Copy, Debug)]
pub struct Ahead {
    /// The frame's first byte, or null for "nothing ahead". Never
    /// dereferenced: only handed to prefetch instructions.
    frame: *const u8,
}

// SAFETY: the pointer is only ever given to prefetch instructions, which
// read nothing; sharing it between threads shares no data.
unsafe impl Send for Ahead {}
unsafe impl Sync for Ahead {}

impl Ahead {
    /// Nothing ahead: every prefetch is a no-op.
    pub const NONE: Ahead = Ahead {
        frame: std::ptr::null(),
    };

    /// The frame starting at `frame` (a buffer pool frame of `BLCKSZ`
    /// bytes).
    pub fn frame(frame: *const u8) -> Ahead {
        Ahead { frame }
    }

    /// Whether there is a frame to prefetch.
    pub fn is_some(&self) -> bool {
        !self.frame.is_null()
    }

    /// Prefetches lines `from..to` (clamped to the frame).
    #[inline(always)]
    pub fn lines(&self, from: usize, to: usize) {
        if self.frame.is_null() {
            return;
        }
        for line in from..to.min(FRAME_LINES) {
            prefetch(self.frame.wrapping_add(line * 64));
        }
    }

    /// Prefetches the line holding byte `off` of the frame (`off` below
    /// `BLCKSZ`): the same place in the next page as the one being read in
    /// this one, for pages of equal-width rows laid out alike.
    #[inline(always)]
    pub fn at(&self, off: usize) {
        if !self.frame.is_null() {
            prefetch(self.frame.wrapping_add(off));
        }
    }

    /// [`Ahead::at`] for an `Ahead` known to name a frame
    /// ([`Ahead::is_some`]): no test, for loops that made it once.
    #[inline(always)]
    pub fn at_unchecked(&self, off: usize) {
        debug_assert!(self.is_some());
        prefetch(self.frame.wrapping_add(off));
    }

    /// Prefetches the whole frame at once: for paths whose per-tuple loop
    /// does not spread it (see the module docs for why that is worse).
    pub fn all(&self) {
        self.lines(0, FRAME_LINES);
    }

    /// Lines per tuple that cover the frame over a loop of `tuples`
    /// iterations: `ceil(FRAME_LINES / tuples)`.
    pub fn per_tuple(tuples: usize) -> usize {
        FRAME_LINES.div_ceil(tuples.max(1))
    }

    /// A spreader walking the frame's lines from the first ([`Spread`]);
    /// one that issues nothing when there is no frame.
    #[inline(always)]
    pub fn spread(&self) -> Spread {
        let start = self.frame as usize;
        let end = if self.frame.is_null() {
            start
        } else {
            start + super::BLCKSZ
        };
        Spread { next: start, end }
    }
}

/// Issues the lines of an [`Ahead`] frame a few at a time over a loop:
/// each [`Spread::step`] prefetches the next `P` lines, until the frame is
/// covered. With `P` = [`Ahead::per_tuple`] (rounded up to a power of two)
/// and one step per tuple, the whole frame is on its way by the loop's end.
#[derive(Clone, Copy, Debug)]
pub struct Spread {
    /// Address of the next line to prefetch.
    next: usize,
    /// The frame's end: nothing at or past it is prefetched.
    end: usize,
}

impl Spread {
    /// Prefetches the next `P` lines (`P` divides [`FRAME_LINES`], so a
    /// step never runs past the frame's end), none once it is covered. A
    /// compare and an add besides the prefetches.
    #[inline(always)]
    pub fn step<const P: usize>(&mut self) {
        const { assert!(P > 0 && FRAME_LINES % P == 0) };
        if self.next < self.end {
            for k in 0..P {
                prefetch((self.next + 64 * k) as *const u8);
            }
            self.next += 64 * P;
        }
    }
}

impl Spread {
    /// Prefetches every line not issued yet (after a loop too short to
    /// cover the frame).
    #[inline]
    pub fn finish(&mut self) {
        while self.next < self.end {
            prefetch(self.next as *const u8);
            self.next += 64;
        }
    }
}

/// One prefetch of the line holding `p` into all cache levels (also for
/// buffer descriptors, `BufferPool::frame_hint`).
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch hint never faults and reads nothing the program
    // observes, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(p as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetches the line at `p` for writing (`PREFETCHW`: the line comes in
/// exclusive, so a following atomic on it needs no second round trip to
/// take it from another core's cache). A no-op elsewhere than x86-64; on
/// x86-64 CPUs without the instruction it decodes as a NOP.
#[inline(always)]
pub fn prefetch_write(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch hint never faults and changes nothing the program
    // observes, whatever the address.
    unsafe {
        std::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines a spreader issues, by address.
    fn issued<const P: usize>(mut s: Spread, steps: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for _ in 0..steps {
            let before = s.next;
            s.step::<P>();
            out.extend((before..s.next.min(s.end)).step_by(64));
        }
        out
    }

    #[test]
    fn spread_covers_every_line_once_and_nothing_past_the_frame() {
        let frame = 0x10000usize;
        let all: Vec<usize> = (0..FRAME_LINES).map(|l| frame + 64 * l).collect();
        for tuples in [32usize, 61, 64, 127, 128, 129, 185, 291] {
            let s = Ahead::frame(frame as *const u8).spread();
            let got = match Ahead::per_tuple(tuples) {
                1 => issued::<1>(s, tuples),
                2 => issued::<2>(s, tuples),
                3 | 4 => issued::<4>(s, tuples),
                per => unreachable!("{tuples} tuples take {per} lines each"),
            };
            assert_eq!(got, all, "{tuples} tuples cover the frame once");
        }
        // More steps than needed issue nothing more.
        let s = Ahead::frame(frame as *const u8).spread();
        assert_eq!(issued::<4>(s, 1000), all);
    }

    #[test]
    fn finish_issues_the_rest_of_the_frame_once() {
        let frame = 0x10000usize;
        let all: Vec<usize> = (0..FRAME_LINES).map(|l| frame + 64 * l).collect();
        for steps in [0usize, 1, 5, 31, 32, 40] {
            let mut s = Ahead::frame(frame as *const u8).spread();
            let mut got = issued::<4>(s, steps);
            s.next = frame + 64 * got.len();
            let before = s.next;
            s.finish();
            got.extend((before..s.next).step_by(64));
            assert_eq!(got, all, "{steps} steps, then the rest");
            assert_eq!(s.next, s.end);
        }
    }

    #[test]
    fn nothing_ahead_spreads_nothing() {
        let s = Ahead::NONE.spread();
        assert!(issued::<4>(s, 100).is_empty());
        Ahead::NONE.all();
        assert!(!Ahead::NONE.is_some());
    }
}
