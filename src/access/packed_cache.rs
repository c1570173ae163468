//! A relation's packed column cache: for an all-visible heap page, the
//! values of its leading 4-byte integer columns (`int4`, `date`), one
//! `i32` slice per column in line pointer order, so a scan of a page in
//! random key order reads 4 bytes per value instead of the tuples
//! (`exec::fastpath::packed`). Built by the first scan that reads the page
//! whole; held in memory only.
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
//! is not enough it stores nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::heap::HeapRelation;
use super::vm;
use crate::storage::{BlockNumber, ForkNumber};

/// The most columns an entry holds.
pub const PACKED_MAX: usize = 4;

/// Bytes held by every relation's entries.
static USED: AtomicUsize = AtomicUsize::new(0);

/// The bound on [`USED`], bytes (`packed_cache_size`).
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_LIMIT);

/// `packed_cache_size`'s default: 1 GiB.
pub const DEFAULT_LIMIT: usize = 1 << 30;

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
#[derive(Debug, Default, Clone)]
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

#[derive(Debug, Default)]
struct Slots {
    blocks: Vec<Slot>,
    /// The generation of every block past `blocks`: bumped by an
    /// invalidation of any of them, so the vector grows only on a `put`.
    tail_gen: u64,
    /// The clock hand of eviction.
    hand: usize,
}

/// A relation's packed column cache (module doc).
#[derive(Debug, Default)]
pub struct PackedCache {
    slots: RwLock<Slots>,
}

impl PackedCache {
    /// The entry of `block`.
    #[inline]
    pub fn get(&self, block: BlockNumber) -> Lookup {
        let s = self.slots.read();
        match s.blocks.get(block as usize) {
            Some(Slot {
                page: Some(p),
                gen: _,
            }) => Lookup::Hit(p.clone()),
            Some(slot) => Lookup::Miss(slot.gen),
            None => Lookup::Miss(s.tail_gen),
        }
    }

    /// Stores `page` as `block`'s entry, read after a [`Lookup::Miss`] with
    /// generation `gen`: nothing when the block changed since, or when the
    /// memory bound leaves no room. Returns whether it was stored.
    pub fn put(&self, block: BlockNumber, gen: u64, page: Arc<PackedPage>) -> bool {
        let b = block as usize;
        let mut s = self.slots.write();
        if b >= s.blocks.len() {
            if gen != s.tail_gen {
                return false;
            }
            let g = s.tail_gen;
            s.blocks.resize(b + 1, Slot { gen: g, page: None });
        }
        if s.blocks[b].gen != gen {
            return false;
        }
        let limit = LIMIT.load(Ordering::Relaxed);
        if USED.load(Ordering::Relaxed) > limit {
            evict(&mut s, limit);
            if USED.load(Ordering::Relaxed) > limit {
                return false;
            }
        }
        s.blocks[b].page = Some(page);
        true
    }

    /// Drops `block`'s entry and bumps its generation: called after every
    /// change of the block's visibility-map entry.
    pub fn invalidate(&self, block: BlockNumber) {
        let mut s = self.slots.write();
        match s.blocks.get_mut(block as usize) {
            Some(slot) => {
                slot.gen += 1;
                slot.page = None;
            }
            None => s.tail_gen += 1,
        }
    }

    /// Blocks holding an entry (for tests and EXPLAIN).
    pub fn pages(&self) -> usize {
        self.slots
            .read()
            .blocks
            .iter()
            .filter(|s| s.page.is_some())
            .count()
    }

    /// Drops every entry (the generations stay).
    pub fn clear(&self) {
        for slot in self.slots.write().blocks.iter_mut() {
            slot.page = None;
        }
    }
}

/// Drops entries of `s` in clock order until the process-wide figure is
/// under `limit` with an eighth of it to spare, or every entry was looked
/// at once.
fn evict(s: &mut Slots, limit: usize) {
    let target = limit - limit / 8;
    let n = s.blocks.len();
    for _ in 0..n {
        if USED.load(Ordering::Relaxed) <= target {
            break;
        }
        s.hand = (s.hand + 1) % n;
        let h = s.hand;
        s.blocks[h].page = None;
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
        // Past the vector's end: a writer's bump there refuses the put.
        let Lookup::Miss(g) = c.get(100) else {
            panic!("empty")
        };
        c.invalidate(90);
        assert!(!c.put(100, g, page(3)));
        let Lookup::Miss(g) = c.get(100) else {
            panic!("empty")
        };
        assert!(c.put(100, g, page(3)));
        assert_eq!(c.pages(), 1);
        c.clear();
        assert_eq!(c.pages(), 0);
    }

    #[test]
    fn entries_are_counted_until_dropped() {
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
