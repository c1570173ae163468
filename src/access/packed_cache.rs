//! A relation's packed column cache: for an all-visible heap page, the
//! values of its leading 4-byte integer columns (`int4`, `date`), one
//! `i32` slice per column in line pointer order, so a scan of a page in
//! random key order reads 4 bytes per value instead of the tuples
//! (`exec::fastpath::packed`). Built by the first scan that reads the page
//! whole (an entry of no columns says the page is not one the fast path
//! takes: a NULL, a short tuple); held in memory only.
//!
//! # Invariants
//!
//! 1. *An entry is the page as it is.* An entry is stored only by a reader
//!    that holds the heap page's shared lock, found `PD_ALL_VISIBLE` set on
//!    it and the block's visibility-map bit set
//!    ([`HeapRelation::vm_all_visible`]) under that lock, and read the
//!    values from it then. While the bit stays set nothing on the page
//!    changes: every insert, update and delete on an all-visible page
//!    clears the bit first ([`HeapRelation`]'s `clear_vm`).
//! 2. *Any change of the block's map bit drops the entry.* Every run-time
//!    change of a map entry goes through the relation's summary cache's
//!    invalidation ([`crate::access::summary_cache::SummaryCache::invalidate`]:
//!    `clear_vm`, `set_vm_in`, `fill_summary`), which calls
//!    [`PackedCache::invalidate`] *after* the change: the entry is dropped
//!    and the block's generation bumped.
//! 3. *No stale entry is ever stored.* A reader takes the block's generation
//!    ([`PackedCache::get`]) before it checks the bit and reads the page,
//!    and stores ([`PackedCache::put`]) only if the generation is still
//!    that one, exactly as the summary cache does
//!    (`access::summary_cache`, invariant 3).
//!
//! MVCC: an entry stands for tuples every snapshot sees (the page is
//! all-visible), and a transaction's change drops it before the
//! transaction commits, so a snapshot that sees the change finds no entry.
//! Recovery changes pages before any relation is opened; nothing here
//! reaches disk.
//!
//! Memory: the bytes held by every relation's entries are counted in one
//! process-wide figure, bounded by `packed_cache_size`
//! ([`set_limit`]; 0 turns the cache off). A `put` that would pass the
//! bound first evicts this relation's entries in clock order; when that
//! is not enough it stores nothing (so the figure passes the bound by at
//! most one page's entry).
//!
//! Layout: per block a slot behind its own lock, in chunks of 1,024
//! blocks made on first use (the first 32 GB of a heap are covered), so
//! the participants of a parallel scan, reading different blocks, never
//! share a lock.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::heap::HeapRelation;
use super::vm;
use crate::storage::{BlockNumber, ForkNumber};

/// The most columns an entry holds.
pub const PACKED_MAX: usize = 4;

/// Bytes held by every relation's entries.
static USED: AtomicUsize = AtomicUsize::new(0);

/// The bound on [`USED`], bytes (`packed_cache_size`).
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_LIMIT);

/// `packed_cache_size`'s default, bytes.
pub const DEFAULT_LIMIT: usize = (crate::settings::PACKED_CACHE_DEFAULT_KB as usize) << 10;

/// Sets the process-wide bound on the cache's memory, bytes.
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, Ordering::Relaxed);
}

/// Bytes the entries of every relation hold now.
pub fn used() -> usize {
    USED.load(Ordering::Relaxed)
}

/// One page's packed columns.
#[derive(Debug)]
pub struct PackedPage {
    /// What the columns are (the reader's layout, [`PackedPage::tag`]).
    tag: u64,
    rows: usize,
    ncols: usize,
    /// Column `k`'s values at `k * rows .. (k + 1) * rows`.
    vals: Box<[i32]>,
}

impl PackedPage {
    /// The first `rows` values of each of `cols` (at most
    /// [`PACKED_MAX`]), which columns they are named by `tag`; counted in
    /// the process-wide figure until dropped.
    pub fn new(tag: u64, cols: &[&[i32]], rows: usize) -> PackedPage {
        debug_assert!(cols.len() <= PACKED_MAX);
        let mut vals = Vec::with_capacity(cols.len() * rows);
        for c in cols {
            vals.extend_from_slice(&c[..rows]);
        }
        let p = PackedPage {
            tag,
            rows,
            ncols: cols.len(),
            vals: vals.into_boxed_slice(),
        };
        USED.fetch_add(p.bytes(), Ordering::Relaxed);
        p
    }

    /// Which columns the entry holds, as its maker named them.
    pub fn tag(&self) -> u64 {
        self.tag
    }

    /// Rows on the page.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Column `k`'s values.
    #[inline]
    pub fn column(&self, k: usize) -> &[i32] {
        &self.vals[k * self.rows..(k + 1) * self.rows]
    }

    /// Columns held.
    pub fn ncols(&self) -> usize {
        self.ncols
    }

    fn bytes(&self) -> usize {
        std::mem::size_of::<PackedPage>() + self.vals.len() * 4
    }
}

impl Drop for PackedPage {
    fn drop(&mut self) {
        USED.fetch_sub(self.bytes(), Ordering::Relaxed);
    }
}

/// One block's slot.
#[derive(Debug, Default)]
struct Slot {
    /// Bumped by every invalidation of the block.
    gen: u64,
    page: Option<Arc<PackedPage>>,
}

/// What [`PackedCache::get`] found.
#[derive(Debug)]
pub enum Lookup {
    /// The block's entry.
    Hit(Arc<PackedPage>),
    /// No entry: build it and [`PackedCache::put`] it with this generation.
    Miss(u64),
}

/// Blocks per chunk of slots (8 MB of heap).
const CHUNK: usize = 1024;

/// Chunks a relation may have: blocks past `CHUNKS * CHUNK` (32 GB of
/// heap) are never cached.
const CHUNKS: usize = 4096;

/// The slots of [`CHUNK`] neighbouring blocks, each behind its own lock:
/// the participants of a parallel scan read different blocks, so they
/// never wait on each other or share a lock's cache line (one lock for the
/// whole relation cost every page two contended atomic operations).
struct Chunk([Mutex<Slot>; CHUNK]);

/// A relation's packed column cache (module doc): a two-level table of
/// per-block slots, the chunks made on first use and kept until the
/// relation is closed.
#[derive(Default)]
pub struct PackedCache {
    chunks: OnceLock<Box<[AtomicPtr<Chunk>]>>,
    /// The clock hand of eviction (a block number).
    hand: AtomicUsize,
}

impl std::fmt::Debug for PackedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedCache").finish_non_exhaustive()
    }
}

impl PackedCache {
    fn table(&self) -> &[AtomicPtr<Chunk>] {
        self.chunks.get_or_init(|| {
            (0..CHUNKS)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect()
        })
    }

    /// The chunk of `block`, made when `make` (`None` past the table or
    /// when not made yet).
    fn chunk(&self, block: usize, make: bool) -> Option<&Chunk> {
        // A relation no scan used the cache of gets no table (writers
        // only look).
        let table = if make {
            self.table()
        } else {
            self.chunks.get()?
        };
        let cell = table.get(block / CHUNK)?;
        let p = cell.load(Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: a published chunk lives until the cache is dropped.
            return Some(unsafe { &*p });
        }
        if !make {
            return None;
        }
        let fresh = Box::into_raw(Box::new(Chunk(std::array::from_fn(|_| {
            Mutex::new(Slot::default())
        }))));
        let p = match cell.compare_exchange(
            std::ptr::null_mut(),
            fresh,
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => fresh,
            Err(theirs) => {
                // SAFETY: `fresh` was never published.
                drop(unsafe { Box::from_raw(fresh) });
                theirs
            }
        };
        // SAFETY: as above.
        Some(unsafe { &*p })
    }

    fn slot(&self, block: BlockNumber, make: bool) -> Option<&Mutex<Slot>> {
        let b = block as usize;
        self.chunk(b, make).map(|c| &c.0[b % CHUNK])
    }

    /// The entry of `block` (`Miss(u64::MAX)`, which no `put` accepts, for
    /// a block past what the cache covers).
    #[inline]
    pub fn get(&self, block: BlockNumber) -> Lookup {
        let Some(slot) = self.slot(block, true) else {
            return Lookup::Miss(u64::MAX);
        };
        let s = slot.lock();
        match &s.page {
            Some(p) => Lookup::Hit(p.clone()),
            None => Lookup::Miss(s.gen),
        }
    }

    /// Stores `page` as `block`'s entry, read after a [`Lookup::Miss`] with
    /// generation `gen`: nothing when the block changed since, or when the
    /// memory bound leaves no room. Returns whether it was stored.
    pub fn put(&self, block: BlockNumber, gen: u64, page: Arc<PackedPage>) -> bool {
        let limit = LIMIT.load(Ordering::Relaxed);
        if USED.load(Ordering::Relaxed) > limit {
            self.evict(limit, block);
            if USED.load(Ordering::Relaxed) > limit {
                return false;
            }
        }
        let Some(slot) = self.slot(block, false) else {
            return false;
        };
        let mut s = slot.lock();
        if s.gen != gen {
            return false;
        }
        s.page = Some(page);
        true
    }

    /// Drops `block`'s entry and bumps its generation: called after every
    /// change of the block's visibility-map entry. A block whose chunk
    /// does not exist has no reader that took its generation yet (a
    /// reader makes the chunk first), so there is nothing to do.
    pub fn invalidate(&self, block: BlockNumber) {
        if let Some(slot) = self.slot(block, false) {
            let mut s = slot.lock();
            s.gen += 1;
            s.page = None;
        }
    }

    /// Every made chunk, in block order.
    fn made(&self) -> impl Iterator<Item = &Chunk> {
        self.chunks.get().into_iter().flat_map(|t| {
            t.iter().filter_map(|c| {
                let p = c.load(Ordering::SeqCst);
                // SAFETY: a published chunk lives until the cache is dropped.
                (!p.is_null()).then(|| unsafe { &*p })
            })
        })
    }

    /// Blocks holding an entry (for tests).
    pub fn pages(&self) -> usize {
        self.made()
            .map(|c| c.0.iter().filter(|s| s.lock().page.is_some()).count())
            .sum()
    }

    /// Drops every entry (the generations stay).
    pub fn clear(&self) {
        for c in self.made() {
            for s in &c.0 {
                s.lock().page = None;
            }
        }
    }

    /// Drops entries in clock order, from the hand on, until the
    /// process-wide figure is under `limit` with an eighth of it to spare,
    /// or every made slot was looked at once; `block`'s is left.
    fn evict(&self, limit: usize, block: BlockNumber) {
        let target = limit - limit / 8;
        let chunks = self.table().len();
        let mut b = self.hand.load(Ordering::Relaxed) % (chunks * CHUNK);
        for _ in 0..=chunks {
            let ci = b / CHUNK;
            if let Some(c) = self.chunk(b, false) {
                for i in b % CHUNK..CHUNK {
                    if USED.load(Ordering::Relaxed) <= target {
                        self.hand.store(ci * CHUNK + i, Ordering::Relaxed);
                        return;
                    }
                    if ci * CHUNK + i != block as usize {
                        let old = c.0[i].lock().page.take();
                        drop(old);
                    }
                }
            }
            b = (ci + 1) % chunks * CHUNK;
        }
        self.hand.store(b, Ordering::Relaxed);
    }
}

impl Drop for PackedCache {
    fn drop(&mut self) {
        if let Some(t) = self.chunks.get_mut() {
            for c in t.iter_mut() {
                let p = std::mem::replace(c.get_mut(), std::ptr::null_mut());
                if !p.is_null() {
                    // SAFETY: published once, dropped once, here.
                    drop(unsafe { Box::from_raw(p) });
                }
            }
        }
    }
}

impl HeapRelation {
    /// Whether heap block `block`'s visibility-map bit says all-visible;
    /// the caller holds the heap page's lock.
    pub fn vm_all_visible(&self, block: BlockNumber) -> crate::error::Result<bool> {
        let (pool, rel) = (self.pool(), self.rel());
        let vb = vm::vm_block(block);
        if vb >= pool.nblocks(rel, ForkNumber::VisibilityMap)? {
            return Ok(false);
        }
        let vbuf = pool.read_buffer(rel, ForkNumber::VisibilityMap, vb, None)?;
        let vg = vbuf.read();
        Ok(vm::get(&vg[..], block).0 & vm::VM_ALL_VISIBLE != 0)
    }

    /// The relation's packed column cache.
    pub fn packed_cache(&self) -> &PackedCache {
        self.summary_cache().packed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(v: i32) -> Arc<PackedPage> {
        Arc::new(PackedPage::new(1, &[&[v, v + 1], &[-v, 0]], 2))
    }

    #[test]
    fn a_change_between_get_and_put_stores_nothing() {
        // Off by default; the tests of this cache turn it on.
        set_limit(1 << 30);
        let c = PackedCache::default();
        let Lookup::Miss(g) = c.get(3) else {
            panic!("empty")
        };
        assert!(c.put(3, g, page(1)));
        let Lookup::Hit(p) = c.get(3) else {
            panic!("stored")
        };
        assert_eq!(p.column(0), &[1, 2]);
        assert_eq!(p.column(1), &[-1, 0]);
        c.invalidate(3);
        let Lookup::Miss(g) = c.get(3) else {
            panic!("dropped")
        };
        c.invalidate(3);
        assert!(!c.put(3, g, page(2)), "a writer came between");
        // A block no reader looked at: no chunk, and a reader after the
        // writer sees the writer's change.
        c.invalidate(5000);
        let Lookup::Miss(g) = c.get(5000) else {
            panic!("empty")
        };
        assert!(c.put(5000, g, page(3)));
        // Past what the cache covers: never stored.
        let far = (CHUNKS * CHUNK) as BlockNumber;
        let Lookup::Miss(g) = c.get(far) else {
            panic!("empty")
        };
        assert!(!c.put(far, g, page(4)));
        assert_eq!(c.pages(), 1);
        c.clear();
        assert_eq!(c.pages(), 0);
    }

    #[test]
    fn entries_are_counted_until_dropped() {
        // Off by default; the tests of this cache turn it on.
        set_limit(1 << 30);
        let c = PackedCache::default();
        let before = used();
        let p = page(7);
        let bytes = p.bytes();
        assert!(used() >= before + bytes || used() < before, "counted");
        let Lookup::Miss(g) = c.get(0) else {
            panic!("empty")
        };
        assert!(c.put(0, g, p));
        c.invalidate(0);
        assert_eq!(c.pages(), 0);
    }
}
