//! The buffer pool's frames: one anonymous mapping of `nbuffers` 8 KiB
//! frames, and the transparent-huge-page advice for it, given per 2 MiB
//! region as the regions come into use.
//!
//! # Why huge pages, and why per region
//!
//! A scan of a cached table walks its frames at memory speed only when each
//! 2 MiB of them costs one TLB entry instead of 512: with 4 kB pages the page
//! walks were most of a cached `sum()`'s time, and `huge_pages = on` (the
//! default) is worth ~7% on the cached scans. But with the whole mapping
//! advised `MADV_HUGEPAGE` up front, the first touch of any frame in an
//! untouched region faults in the whole 2 MiB: a bulk-read ring of 256 kB in
//! a fresh pool (its buffers come from the clock sweep, so from frames never
//! used) made the process 2 MiB larger, eight times the ring.
//!
//! So the mapping starts out advised `MADV_NOHUGEPAGE` (so that a kernel in
//! THP `always` mode does not huge-page it either) and a region is advised
//! `MADV_HUGEPAGE` just before its first *pool-sized* use: a buffer taken for
//! a normal read or extension of a table's main fork, or for a ring whose
//! memory bound is at least a region ([`Frames::prepare`]; the buffer pool
//! decides which). Frames that only small rings (the 256 kB bulk-read and
//! vacuum rings) or visibility-map pages (a bare `count(*)` reads a few and
//! nothing else) have used stay in 4 kB pages, so such a ring costs its own
//! size in resident memory and no more, and a count its map pages. A region a small ring touched first and normal use reached later is
//! advised then; its faults stay 4 kB ones (the region already has a page
//! table) until the kernel's `khugepaged` collapses it in the background: at
//! most the few regions rings touched first, out of the pool's many.
//!
//! Frames are touched lazily either way (the kernel zero-fills on first
//! touch), so resident memory grows with the frames used. With
//! `huge_pages = off` no advice is given at all (the kernel's default, as
//! before). A kernel without transparent huge pages refuses the advice; the
//! pool then simply uses 4 kB pages (PostgreSQL's `huge_pages = try`).
//!
//! The regions after one that pool-sized use reached are faulted in ahead
//! of it by a thread of the pool's own (`prefault.rs`), so the zeroing of
//! fresh memory happens off the reading thread.
//!
//! Regions are aligned to 2 MiB *addresses* (a huge page must be), whatever
//! the mapping's own alignment; [`HUGE_PAGE`] is the PMD size of x86-64 and
//! of arm64 with 4 kB pages.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

use super::prefault::Prefaulter;
use super::BLCKSZ;
use crate::error::{Error, Result, SqlState};

/// The size of a transparent huge page, and of an advice region.
pub const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// The frames: one private anonymous mapping of `nbuffers * BLCKSZ` bytes.
pub(super) struct Frames {
    /// Start of the mapping.
    ptr: NonNull<u8>,
    /// Its length in bytes.
    len: usize,
    /// Whether huge pages are wanted (`huge_pages`): regions are then
    /// advised as they come into use.
    huge: bool,
    /// Per region (2 MiB of addresses overlapping the mapping, the first
    /// one starting at or before `ptr`): whether it has been advised
    /// `MADV_HUGEPAGE`.
    advised: Box<[AtomicBool]>,
    /// Populates the regions after the last one normal use reached.
    ahead: Prefaulter,
}

// SAFETY: the frames are plain bytes; access is governed by the buffer
// locking rules (content locks and I/O ownership).
unsafe impl Send for Frames {}
// SAFETY: as above.
unsafe impl Sync for Frames {}

impl Frames {
    /// Maps `nbuffers` frames (`nbuffers > 0`), none of them touched.
    pub(super) fn map(nbuffers: usize, huge_pages: bool) -> Result<Frames> {
        let oom = || {
            Error::new(SqlState::OutOfMemory, "out of memory").with_detail(format!(
                "Failed on request of size {} for the buffer pool.",
                nbuffers.saturating_mul(BLCKSZ)
            ))
        };
        let len = nbuffers.checked_mul(BLCKSZ).ok_or_else(oom)?;
        // An anonymous mapping, not `alloc_zeroed`: at 4 kB alignment that
        // allocates and then memsets the whole pool (15 s for 6 GB on a busy
        // machine, and all of it resident at once); the kernel zero-fills
        // mapped pages on first touch, so opening costs nothing and resident
        // memory grows with the frames used.
        // SAFETY: a fresh private anonymous mapping of non-zero size; no
        // existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(oom());
        }
        let ptr = NonNull::new(ptr.cast::<u8>()).ok_or_else(oom)?;
        let addr = ptr.as_ptr() as usize;
        let regions = (addr + len - 1) / HUGE_PAGE - addr / HUGE_PAGE + 1;
        if huge_pages {
            // No huge page until a region is advised (see the module doc);
            // refused by a kernel without THP, which is fine.
            // SAFETY: advice on the mapping just created; it changes no
            // memory contents.
            unsafe { libc::madvise(ptr.as_ptr().cast(), len, libc::MADV_NOHUGEPAGE) };
        }
        Ok(Frames {
            ptr,
            len,
            huge: huge_pages,
            advised: (0..regions).map(|_| AtomicBool::new(false)).collect(),
            ahead: Prefaulter::new(addr, len, regions),
        })
    }

    /// Pointer to frame `id` (`id < nbuffers`).
    #[inline]
    pub(super) fn frame(&self, id: u32) -> *mut u8 {
        debug_assert!((id as usize + 1) * BLCKSZ <= self.len);
        // SAFETY: id < nbuffers, so the offset is inside the mapping.
        unsafe { self.ptr.as_ptr().add(id as usize * BLCKSZ) }
    }

    /// The advice region frame `id` lies in (a frame never straddles two:
    /// 8 KiB divides 2 MiB and the mapping is page-aligned).
    fn region_of(&self, id: u32) -> usize {
        let base = self.ptr.as_ptr() as usize;
        (base + id as usize * BLCKSZ) / HUGE_PAGE - base / HUGE_PAGE
    }

    /// Called before frame `id` is used for a pool-sized purpose (see the
    /// module doc): advises its region `MADV_HUGEPAGE` if that has not been
    /// done yet. One relaxed load when it has.
    #[inline]
    pub(super) fn prepare(&self, id: u32) {
        if !self.huge {
            return;
        }
        let r = self.region_of(id);
        if self.advised[r].load(Ordering::Relaxed) {
            return;
        }
        self.advise(r);
    }

    /// Advises region `r` (every thread that found it unadvised does, so
    /// none touches a frame before the advice is given; it is idempotent).
    #[cold]
    fn advise(&self, r: usize) {
        let base = self.ptr.as_ptr() as usize;
        let start = (base / HUGE_PAGE + r) * HUGE_PAGE;
        let (from, to) = (start.max(base), (start + HUGE_PAGE).min(base + self.len));
        // SAFETY: advice on a page-aligned part of the mapping (`base` and
        // `len` are page multiples, region bounds are 2 MiB multiples); it
        // changes no memory contents.
        unsafe { libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE) };
        self.advised[r].store(true, Ordering::Relaxed);
        self.ahead.reached(r);
    }

    /// How many regions have been advised `MADV_HUGEPAGE` so far for use
    /// (not counting those populated ahead of it).
    pub(super) fn regions_advised(&self) -> usize {
        self.advised
            .iter()
            .filter(|a| a.load(Ordering::Relaxed))
            .count()
    }

    /// Bytes of the mapping resident in memory now (`mincore`), or `None`
    /// if the kernel does not say.
    pub(super) fn resident_bytes(&self) -> Option<usize> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        let mut vec = vec![0u8; self.len.div_ceil(page)];
        // SAFETY: `ptr..ptr + len` is our mapping (page-aligned); `vec` has
        // one byte per page of it.
        let rc = unsafe { libc::mincore(self.ptr.as_ptr().cast(), self.len, vec.as_mut_ptr()) };
        (rc == 0).then(|| vec.iter().filter(|&&b| b & 1 != 0).count() * page)
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        self.ahead.stop();
        // SAFETY: mapped in `Frames::map` with this length; no reference into
        // the frames outlives the pool.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(f: &Frames, id: u32) {
        // SAFETY: a frame of the mapping, nobody else uses it.
        unsafe { std::ptr::write_bytes(f.frame(id), 1, BLCKSZ) };
    }

    #[test]
    fn regions_are_advised_once_each_as_frames_are_prepared() {
        let per_region = (HUGE_PAGE / BLCKSZ) as u32;
        let f = Frames::map(4 * per_region as usize, true).unwrap();
        // Four regions of frames, plus one more when the mapping is not
        // 2 MiB-aligned.
        assert!((4..=5).contains(&f.advised.len()), "{}", f.advised.len());
        assert_eq!(f.regions_advised(), 0);
        f.prepare(0);
        f.prepare(1);
        assert_eq!(f.regions_advised(), 1);
        f.prepare(3 * per_region);
        assert_eq!(f.regions_advised(), 2);
        assert_eq!(f.region_of(0), 0);
        assert_eq!(f.region_of(4 * per_region - 1), f.advised.len() - 1);
        let off = Frames::map(per_region as usize, false).unwrap();
        off.prepare(0);
        assert_eq!(off.regions_advised(), 0, "huge_pages = off: no advice");
    }

    #[test]
    fn untouched_frames_are_not_resident_and_unadvised_ones_cost_their_size() {
        let per_region = (HUGE_PAGE / BLCKSZ) as u32;
        let f = Frames::map(2 * per_region as usize, true).unwrap();
        let Some(before) = f.resident_bytes() else {
            return; // no mincore here: nothing to show
        };
        assert_eq!(before, 0, "a fresh mapping has nothing resident");
        // Frames of a region never advised: 4 kB pages, only what is touched
        // (whatever the kernel's THP mode: the mapping is NOHUGEPAGE).
        for id in 0..4 {
            touch(&f, id);
        }
        assert_eq!(f.resident_bytes(), Some(4 * BLCKSZ));
    }
}
