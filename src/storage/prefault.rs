//! Faulting in the buffer pool's frames ahead of their first use, on a
//! thread of its own.
//!
//! # Why
//!
//! A fresh process reads every page it touches into frames it has never
//! touched, and the kernel zero-fills memory at its first touch: for a page
//! copied in by `pread`, inside the reading thread's system call. In a piped
//! run of 20,000 point lookups (a fresh shell reading ~14,000 pages from
//! the OS cache) that zeroing (`clear_page`) was 18% of the process's CPU
//! time on a quiet machine and over half of it on a busy one, all of it on
//! the statement's thread. The clock sweep hands out a fresh pool's frames
//! in order, so the regions about to be used are known: when normal use
//! reaches a region ([`super::frames::Frames::prepare`] advises it), this
//! thread advises and populates the next [`AHEAD`] regions
//! (`MADV_POPULATE_WRITE`), and the reading thread then finds their memory
//! mapped. The zeroing moves to another core, which a piped script of
//! keyed statements leaves idle.
//!
//! # Invariants
//!
//! - The thread never writes a frame's bytes: `MADV_POPULATE_WRITE` maps
//!   pages as a write would, without writing, so a frame another thread
//!   already uses is unaffected.
//! - It acts only on regions past one that normal use reached, at most
//!   [`AHEAD`] of them: resident memory grows by at most `AHEAD` regions
//!   beyond what is used. Small rings and visibility-map pages never start
//!   it (they do not advise, see `frames.rs`), so a ring's memory bound is
//!   unchanged.
//! - The pool stops and joins the thread before it unmaps the frames.
//! - A kernel without `MADV_POPULATE_WRITE` (before Linux 5.14) refuses it
//!   and the thread ends: frames are then faulted in by their first use.

use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use super::frames::HUGE_PAGE;

/// Regions (2 MiB each) populated ahead of the last one normal use reached.
pub(super) const AHEAD: usize = 4;

/// The thread that populates regions ahead of use, started at the first
/// request.
pub(super) struct Prefaulter {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

/// What the requesting threads and the prefaulting thread share.
struct Shared {
    /// Start address of the frames' mapping.
    base: usize,
    /// Its length in bytes.
    len: usize,
    /// Regions overlapping the mapping.
    regions: usize,
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    /// The next region to populate.
    next: usize,
    /// Regions below this one are to be populated.
    wanted: usize,
    /// The pool is going away.
    stop: bool,
    /// The thread has ended (refused by the kernel, or could not start).
    ended: bool,
}

impl Prefaulter {
    /// A prefaulter for the mapping `base..base + len` (page-aligned) of
    /// `regions` advice regions; no thread runs yet.
    pub(super) fn new(base: usize, len: usize, regions: usize) -> Prefaulter {
        Prefaulter {
            shared: Arc::new(Shared {
                base,
                len,
                regions,
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
            }),
            thread: Mutex::new(None),
        }
    }

    /// Normal use has reached region `r`: populates the [`AHEAD`] regions
    /// after it (those not yet populated), starting the thread if need be.
    #[cold]
    pub(super) fn reached(&self, r: usize) {
        let sh = &self.shared;
        {
            let mut s = sh.state.lock();
            if s.ended || s.stop {
                return;
            }
            s.next = s.next.max(r + 1);
            let wanted = (r + 1 + AHEAD).min(sh.regions);
            if wanted <= s.wanted || s.next >= wanted {
                return;
            }
            s.wanted = wanted;
        }
        let mut thread = self.thread.lock();
        if thread.is_none() {
            let mine = self.shared.clone();
            match std::thread::Builder::new()
                .name("heapdb-prefault".into())
                .spawn(move || mine.run())
            {
                Ok(h) => *thread = Some(h),
                Err(_) => {
                    sh.state.lock().ended = true;
                    return;
                }
            }
        }
        drop(thread);
        sh.wake.notify_one();
    }

    /// Stops the thread and waits for it (before the frames are unmapped).
    pub(super) fn stop(&self) {
        self.shared.state.lock().stop = true;
        self.shared.wake.notify_one();
        if let Some(h) = self.thread.lock().take() {
            let _ = h.join();
        }
    }
}

impl Shared {
    /// The thread: populates each wanted region in turn until stopped.
    fn run(&self) {
        loop {
            let r = {
                let mut s = self.state.lock();
                loop {
                    if s.stop {
                        return;
                    }
                    if s.next < s.wanted {
                        let r = s.next;
                        s.next += 1;
                        break r;
                    }
                    self.wake.wait(&mut s);
                }
            };
            if !self.populate(r) {
                self.state.lock().ended = true;
                return;
            }
        }
    }

    /// Advises region `r` `MADV_HUGEPAGE` and maps its memory writable;
    /// false if the kernel refuses the population.
    fn populate(&self, r: usize) -> bool {
        let start = (self.base / HUGE_PAGE + r) * HUGE_PAGE;
        let (from, to) = (
            start.max(self.base),
            (start + HUGE_PAGE).min(self.base + self.len),
        );
        if from >= to {
            return true;
        }
        // SAFETY: advice on a page-aligned part of the mapping, which the
        // pool keeps mapped until it has joined this thread; neither advice
        // changes any memory contents.
        unsafe {
            libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            libc::madvise(
                from as *mut libc::c_void,
                to - from,
                libc::MADV_POPULATE_WRITE,
            ) == 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::frames::Frames;
    use super::super::BLCKSZ;
    use super::*;

    #[test]
    fn regions_ahead_of_use_become_resident_without_changing_frames() {
        let per_region = (HUGE_PAGE / BLCKSZ) as u32;
        let f = Frames::map(12 * per_region as usize, true).unwrap();
        if f.resident_bytes().is_none() {
            return; // no mincore here: nothing to show
        }
        // A frame of region 2 in use before the thread reaches it.
        let probe = 2 * per_region + 3;
        // SAFETY: a frame of the mapping that nothing else uses.
        unsafe { std::ptr::write_bytes(f.frame(probe), 0xA5, BLCKSZ) };
        f.prepare(0);
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(f.frame(0), 1, BLCKSZ) };
        let want = AHEAD * HUGE_PAGE;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while f.resident_bytes().unwrap() < want && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let resident = f.resident_bytes().unwrap();
        if resident < want {
            return; // a kernel that refuses MADV_POPULATE_WRITE
        }
        // Region 0 (used), its 4 successors, and at most the partial region
        // an unaligned mapping starts with.
        assert!(
            resident <= (AHEAD + 2) * HUGE_PAGE,
            "{resident} bytes resident"
        );
        // SAFETY: frames of the mapping, read after the thread populated them.
        let bytes = unsafe { std::slice::from_raw_parts(f.frame(probe), BLCKSZ) };
        assert!(
            bytes.iter().all(|&b| b == 0xA5),
            "a used frame kept its bytes"
        );
        // SAFETY: as above.
        let untouched = unsafe { std::slice::from_raw_parts(f.frame(per_region + 1), BLCKSZ) };
        assert!(
            untouched.iter().all(|&b| b == 0),
            "populated frames are zero"
        );
        assert_eq!(f.regions_advised(), 1, "only use counts as advice");
    }
}
