//! Buffer descriptors: the per-frame header of the buffer pool.
//!
//! Like PostgreSQL's `BufferDesc`, a descriptor packs its pin count, usage
//! count and flags into one 32-bit atomic `state`, so the hot operations (pin,
//! unpin, the clock sweep's usage-count decrement) are a single
//! compare-and-swap:
//!
//! ```text
//!  31..29  28           27        26              25         24     23     22      21..18  17..0
//!  unused  CHECKSUM_OK  IO_ERROR  IO_IN_PROGRESS  TAG_VALID  VALID  DIRTY  LOCKED  usage   pin count
//! ```
//!
//! # Locking rules
//!
//! - `LOCKED` is the *header lock*, a spin lock held for a few instructions.
//!   While it is held, the holder may change any field and releases it by
//!   storing the whole new state ([`BufferDesc::unlock_header`]). Everyone else
//!   changes `state` only by compare-and-swap of an *unlocked* value, so a
//!   header-lock holder never loses an update. Nothing else is acquired while
//!   holding a header lock.
//! - The `tag` (which page the frame holds) is written only with the header
//!   lock held by a thread that owns the only pin. It may be read with the
//!   header lock held, or by anyone holding a pin (a pinned buffer is never
//!   retagged).
//! - The `content` lock (shared/exclusive) guards the frame's bytes; it may
//!   only be taken while holding a pin.
//! - `IO_IN_PROGRESS` marks the one thread reading the page in or writing it
//!   out; others wait for it to clear (parked on the descriptor's address).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering};

use parking_lot::lock_api::RawRwLock as _;

use super::{BlockNumber, ForkNumber, RelFileNode};

/// One pin.
pub(crate) const REFCOUNT_ONE: u32 = 1;
/// Pin-count bits.
pub(crate) const REFCOUNT_MASK: u32 = (1 << 18) - 1;
/// Shift of the usage count.
const USAGE_SHIFT: u32 = 18;
/// One unit of usage count.
pub(crate) const USAGE_ONE: u32 = 1 << USAGE_SHIFT;
/// Usage-count bits.
pub(crate) const USAGE_MASK: u32 = 0xF << USAGE_SHIFT;
/// The largest usage count, as PostgreSQL's `BM_MAX_USAGE_COUNT`.
pub(crate) const MAX_USAGE: u32 = 5;
/// The header spin lock.
pub(crate) const LOCKED: u32 = 1 << 22;
/// The page differs from its on-disk copy.
pub(crate) const DIRTY: u32 = 1 << 23;
/// The frame holds the page named by the tag.
pub(crate) const VALID: u32 = 1 << 24;
/// The tag names a page and the mapping table points here.
pub(crate) const TAG_VALID: u32 = 1 << 25;
/// A thread is reading or writing the page.
pub(crate) const IO_IN_PROGRESS: u32 = 1 << 26;
/// The last I/O on the buffer failed.
pub(crate) const IO_ERROR: u32 = 1 << 27;
/// The checksum bytes in the frame are right for its contents: the page was
/// read and verified, and changed since only in bits the checksum leaves
/// out (hint bits: `mark_dirty_hint`). A write then needs no new checksum.
/// Set by a read-in; cleared by `mark_dirty` (every real change) and when
/// the buffer is retagged or discarded.
pub(crate) const CHECKSUM_OK: u32 = 1 << 28;

/// The pin count in a state word.
#[inline]
pub(crate) fn refcount(state: u32) -> u32 {
    state & REFCOUNT_MASK
}

/// The usage count in a state word.
#[inline]
pub(crate) fn usage(state: u32) -> u32 {
    (state & USAGE_MASK) >> USAGE_SHIFT
}

/// Which page a buffer holds: relation, fork and block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferTag {
    /// The relation.
    pub rel: RelFileNode,
    /// The fork of the relation.
    pub fork: ForkNumber,
    /// The block within the fork.
    pub block: BlockNumber,
}

impl BufferTag {
    /// A 64-bit hash of the tag (a multiply-xorshift mix; cheap, and its high
    /// and middle bits are both well mixed, which the mapping table needs).
    #[inline]
    pub(crate) fn hash(&self) -> u64 {
        let k = ((self.rel.0 as u64) << 32 | self.block as u64) ^ ((self.fork as u64) << 61);
        let mut h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^ (h >> 32)
    }
}

/// The header of one buffer frame (see the module doc).
#[repr(align(64))]
pub(crate) struct BufferDesc {
    /// Pin count, usage count and flags.
    pub(crate) state: AtomicU32,
    /// The page in the frame; see the locking rules for who may touch it.
    tag: UnsafeCell<BufferTag>,
    /// The content lock over the frame's bytes.
    pub(crate) content: parking_lot::RawRwLock,
}

// SAFETY: `tag` is only accessed under the rules in the module doc (header
// lock, or a pin that prevents retagging); everything else is atomic.
unsafe impl Sync for BufferDesc {}
// SAFETY: as above; the descriptor holds no thread-affine data.
unsafe impl Send for BufferDesc {}

impl BufferDesc {
    /// An empty descriptor: no page, no pins (the pool's come from
    /// [`BufferDesc::new_slice`], zero bytes that are this value).
    #[cfg(test)]
    pub(crate) fn new() -> BufferDesc {
        BufferDesc {
            state: AtomicU32::new(0),
            tag: UnsafeCell::new(BufferTag {
                rel: RelFileNode(0),
                fork: ForkNumber::Main,
                block: 0,
            }),
            content: parking_lot::RawRwLock::INIT,
        }
    }

    /// `n` empty descriptors in zeroed memory: each field of an empty
    /// descriptor is zero (`empty_descriptors_are_zero_bytes`), so none is
    /// written and the allocator's fresh pages are touched only as
    /// descriptors are used (a 6 GB pool has 48 MiB of them, one cache line
    /// each; see `ClockSweep::used`).
    pub(crate) fn new_slice(n: usize) -> Box<[BufferDesc]> {
        let layout = std::alloc::Layout::array::<BufferDesc>(n).expect("a pool's descriptors fit");
        if layout.size() == 0 {
            return Box::new([]);
        }
        // SAFETY: the layout has a non-zero size; every field of a
        // descriptor (atomics, a tag of integers and a fork whose
        // discriminant 0 is `Main`, parking_lot's lock state word) is valid
        // as zero bytes, and zero fields are `BufferDesc::new()` (tested), so
        // the slice holds `n` initialised empty descriptors; the box frees
        // it with the same layout.
        unsafe {
            let p = std::alloc::alloc_zeroed(layout).cast::<BufferDesc>();
            if p.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n))
        }
    }

    /// Takes the header lock; returns the state (with `LOCKED` set).
    #[inline]
    pub(crate) fn lock_header(&self) -> u32 {
        loop {
            let s = self.state.fetch_or(LOCKED, Ordering::Acquire);
            if s & LOCKED == 0 {
                return s | LOCKED;
            }
            self.wait_unlocked();
        }
    }

    /// Releases the header lock, installing `state` (its `LOCKED` bit ignored).
    #[inline]
    pub(crate) fn unlock_header(&self, state: u32) {
        self.state.store(state & !LOCKED, Ordering::Release);
    }

    /// Waits until the header lock is free; returns the state seen then.
    /// Spins briefly, then yields (with 2 cores, the holder may be preempted).
    #[cold]
    pub(crate) fn wait_unlocked(&self) -> u32 {
        let mut spins = 0u32;
        loop {
            let s = self.state.load(Ordering::Relaxed);
            if s & LOCKED == 0 {
                return s;
            }
            spins += 1;
            if spins < 100 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// The tag. The caller holds the header lock or a pin.
    #[inline]
    pub(crate) fn tag(&self) -> BufferTag {
        // SAFETY: per the locking rules, no one writes the tag while the
        // caller holds the header lock or a pin.
        unsafe { *self.tag.get() }
    }

    /// Sets the tag. The caller holds the header lock and the only pin.
    #[inline]
    pub(crate) fn set_tag(&self, tag: BufferTag) {
        // SAFETY: the caller excludes all readers (header lock + only pin).
        unsafe { *self.tag.get() = tag }
    }

    /// Takes the content lock in shared mode if free of writers.
    pub(crate) fn try_lock_shared(&self) -> bool {
        self.content.try_lock_shared()
    }

    /// The key this descriptor's I/O waiters park on.
    pub(crate) fn park_key(&self) -> usize {
        &self.state as *const AtomicU32 as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_fields_do_not_overlap() {
        let flags = [LOCKED, DIRTY, VALID, TAG_VALID, IO_IN_PROGRESS, IO_ERROR];
        let mut all = REFCOUNT_MASK | USAGE_MASK;
        for f in flags {
            assert_eq!(all & f, 0);
            all |= f;
        }
        const { assert!(MAX_USAGE <= USAGE_MASK >> USAGE_SHIFT) };
        let s = (3 * USAGE_ONE + 7 * REFCOUNT_ONE) | VALID;
        assert_eq!((usage(s), refcount(s)), (3, 7));
    }

    #[test]
    fn header_lock_excludes_and_keeps_state() {
        let d = BufferDesc::new();
        let s = d.lock_header();
        assert_ne!(s & LOCKED, 0);
        d.unlock_header(s | DIRTY);
        assert_eq!(d.state.load(Ordering::Relaxed), DIRTY);
    }

    #[test]
    fn empty_descriptors_are_zero_bytes() {
        // Each field of an empty descriptor is zero: the state, the tag's
        // integers and fork (`Main` is 0), and the lock's state word.
        let d = BufferDesc::new();
        assert_eq!(d.state.load(Ordering::Relaxed), 0);
        assert_eq!(ForkNumber::Main as u8, 0);
        let t = d.tag();
        assert_eq!((t.rel.0, t.fork, t.block), (0, ForkNumber::Main, 0));
        // SAFETY: both are one machine word (checked by `transmute`).
        let lock_word: usize = unsafe { std::mem::transmute(parking_lot::RawRwLock::INIT) };
        assert_eq!(lock_word, 0);
        let zeroed = BufferDesc::new_slice(3);
        for z in zeroed.iter() {
            assert_eq!(z.state.load(Ordering::Relaxed), 0);
            assert!(z.content.try_lock_exclusive());
            // SAFETY: taken just above.
            unsafe { z.content.unlock_exclusive() };
            let s = z.lock_header();
            assert_eq!(z.tag(), d.tag());
            z.unlock_header(s);
        }
    }

    #[test]
    fn tag_hashes_differ_by_fork_and_block() {
        let t = |fork, block| BufferTag {
            rel: RelFileNode(1),
            fork,
            block,
        };
        assert_ne!(
            t(ForkNumber::Main, 0).hash(),
            t(ForkNumber::VisibilityMap, 0).hash()
        );
        assert_ne!(t(ForkNumber::Main, 0).hash(), t(ForkNumber::Main, 1).hash());
    }
}
