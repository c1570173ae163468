//! A relation's packed column cache: for an all-visible heap page, the
//! values of each of its leading 4-byte integer columns (`int4`, `date`)
//! a scan has read, one entry per page and column holding an `i32` per
//! row in line pointer order, so a scan of a page in random key order
//! reads 4 bytes per value of the columns it needs and nothing else
//! (`exec::fastpath::packed`). A scan that misses builds the entries of
//! the columns it reads, not of every packed column: a query on one
//! column of a wide table keeps that column's values alone, a quarter of
//! the memory of four, and its reads stream through them (entries of
//! other columns, interleaved between them, would halve the bandwidth a
//! scan gets). A page the fast path does not take (a NULL, a short tuple)
//! gets the declined mark in every column's slot; held in memory only.
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
//!    `clear_vm`, `set_vm_in`), which calls [`PackedCache::invalidate`]
//!    *after* the change: the entry is unlinked and the block's generation
//!    bumped. A writer clears the bit (and so drops the entry) with its
//!    change, under the page's exclusive lock, and commits after: a reader
//!    that took the entry before the drop gets the page as it was before
//!    the change, which is what its snapshot (taken before its look-up,
//!    so before the commit) sees. So a scan answers a block from its entry
//!    without reading the page (`exec::fastpath::packed`).
//! 3. *No stale entry is ever stored.* A reader takes the block's generation
//!    ([`Reader::generation`]) before it checks the bit and reads the page,
//!    and stores ([`PackedCache::put`]) only if the generation is still
//!    that one, exactly as the summary cache does
//!    (`access::summary_cache`, invariant 3). Entries a scan finds for
//!    one block's columns were built by different scans, but while the
//!    block's generation stands all of them are the same page's (1); the
//!    look-ups of two columns can straddle a change only if the page came
//!    back all-visible in between, which needs every tuple on it visible
//!    to every snapshot the horizon keeps, the scan's own included: the
//!    page then holds exactly the tuples that snapshot sees, as it did
//!    before, in the same line pointer order (a change that prunes only
//!    removes dead line pointers; one that adds a tuple adds one the
//!    snapshot cannot see, so the page stays not all-visible).
//! 4. *An unlinked entry is freed only when no reader can hold it.* A
//!    reader looks entries up without a lock or a reference count: it
//!    holds a [`Reader`] (one per scan), which pins the cache's epoch; an
//!    entry unlinked by an invalidation, an eviction or a replacement is
//!    retired with the epoch of its unlinking and freed once the epoch is
//!    two past it, which needs every reader pinned at or before the
//!    unlinking to have finished (epoch-based reclamation, two counters of
//!    readers by the parity of their epoch). A retired entry stays counted
//!    in the memory figure until freed, so a reader held open for long (a
//!    cursor) delays the freeing but never lets the figure pass the bound.
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
//! Layout: per block a pointer per packed column to its entry, read
//! without a lock, and a generation behind its own lock (taken by writers
//! and by a reader that misses), in chunks of 1,024 blocks made on first
//! use (the first 32 GB of a heap are covered), so the participants of a
//! parallel scan, reading different blocks, never share a lock. An entry
//! is one allocation (a header and the values), so a hit costs a pointer
//! load per column and the lines of the values, which a scan prefetches
//! a few blocks ahead ([`Reader::prefetch`]).

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering::SeqCst};
use std::sync::OnceLock;

use parking_lot::Mutex;

use super::heap::HeapRelation;
use super::vm;
use crate::storage::{BlockNumber, ForkNumber};

/// The most packed columns a relation has (slots per block).
pub const PACKED_MAX: usize = 4;

/// Bytes held by every relation's entries, retired ones included.
static USED: AtomicUsize = AtomicUsize::new(0);

/// Of [`USED`], the bytes of entries unlinked and not yet freed.
static RETIRED: AtomicUsize = AtomicUsize::new(0);

/// The bound on [`USED`], bytes (`packed_cache_size`).
static LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_LIMIT);

/// `packed_cache_size`'s default, bytes.
pub const DEFAULT_LIMIT: usize = (crate::settings::PACKED_CACHE_DEFAULT_KB as usize) << 10;

/// Sets the process-wide bound on the cache's memory, bytes.
pub fn set_limit(bytes: usize) {
    LIMIT.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// Bytes the entries of every relation hold now (retired ones included).
pub fn used() -> usize {
    USED.load(SeqCst)
}

/// Words of an entry's header: the tag (two words), and the rows with 1
/// in the high half (0 for the declined mark). Three words, not four: a
/// page of 61 pgbench accounts makes an entry of 256 bytes, four cache
/// lines and the allocator's 256-byte class, where a fourth word would
/// take it to 320.
const HEADER: usize = 3;

/// The declined mark: a static header of no rows and no column, linked
/// in every column slot of a block the fast path does not take; never
/// counted, retired or freed.
static DECLINED: [i32; HEADER] = [0; HEADER];

/// The declined mark's address, as slots hold it.
fn declined_ptr() -> *mut i32 {
    DECLINED.as_ptr() as *mut i32
}

/// One page's values of one packed column as a reader sees them: a
/// header of [`HEADER`] words, then a value per row. Borrowed from an
/// [`Entry`] or, under a [`Reader`], from the cache.
#[repr(transparent)]
pub struct PackedColumn {
    words: [i32],
}

impl PackedColumn {
    fn of(words: &[i32]) -> &PackedColumn {
        // SAFETY: `PackedColumn` is a transparent wrapper of `[i32]`.
        unsafe { &*(words as *const [i32] as *const PackedColumn) }
    }

    /// Which layout of packed columns the entry was made for, as its maker
    /// named it.
    pub fn tag(&self) -> u64 {
        u64::from(self.words[0] as u32) | (u64::from(self.words[1] as u32) << 32)
    }

    /// Rows on the page.
    #[inline]
    pub fn rows(&self) -> usize {
        (self.words[2] as u32 & 0xffff) as usize
    }

    /// Whether this is the declined mark (the fast path does not take
    /// the page).
    #[inline]
    pub fn declined(&self) -> bool {
        self.words[2] as u32 >> 16 == 0
    }

    /// The values, one per row.
    #[inline]
    pub fn values(&self) -> &[i32] {
        &self.words[HEADER..]
    }
}

/// Words of the entry whose first word is at `p`.
///
/// # Safety
/// `p` is an entry's first word ([`Entry::into_raw`]) not yet freed, or
/// the declined mark.
unsafe fn words_at(p: *const i32) -> usize {
    let w = *p.add(2) as u32;
    HEADER + (w & 0xffff) as usize * (w >> 16) as usize
}

/// The entry whose first word is at `p`, borrowed.
///
/// # Safety
/// As [`words_at`], and the entry outlives `'a`.
unsafe fn column_at<'a>(p: *const i32) -> &'a PackedColumn {
    PackedColumn::of(std::slice::from_raw_parts(p, words_at(p)))
}

/// What an entry of `words` words counts for in the memory figure.
fn entry_bytes(words: usize) -> usize {
    2 * std::mem::size_of::<usize>() + words * 4
}

/// One page's values of one packed column, owned (one allocation):
/// counted in the process-wide figure until dropped.
#[derive(Debug)]
pub struct Entry(Box<[i32]>);

impl Entry {
    /// An entry of `values` (a row each, at most 65,535), made for the
    /// layout `tag`.
    pub fn new(tag: u64, values: &[i32]) -> Entry {
        assert!(values.len() <= 0xffff, "a page's rows fit 16 bits");
        let mut w = Vec::with_capacity(HEADER + values.len());
        w.extend_from_slice(&[
            tag as u32 as i32,
            (tag >> 32) as u32 as i32,
            (values.len() as u32 | 1 << 16) as i32,
        ]);
        w.extend_from_slice(values);
        let e = Entry(w.into_boxed_slice());
        USED.fetch_add(e.bytes(), SeqCst);
        e
    }

    /// The entry's column.
    pub fn column(&self) -> &PackedColumn {
        PackedColumn::of(&self.0)
    }

    fn bytes(&self) -> usize {
        entry_bytes(self.0.len())
    }

    /// The entry's first word, owning it (see [`Entry::from_raw`]).
    fn into_raw(self) -> *mut i32 {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so the box is moved out once.
        let b = unsafe { std::ptr::read(&me.0) };
        Box::into_raw(b) as *mut i32
    }

    /// The entry [`Entry::into_raw`] gave `p` for.
    ///
    /// # Safety
    /// `p` came from `into_raw` and is taken back once.
    unsafe fn from_raw(p: *mut i32) -> Entry {
        Entry(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            p,
            words_at(p),
        )))
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        USED.fetch_sub(self.bytes(), SeqCst);
    }
}

/// What [`PackedCache::put`] is given for a block.
pub enum Put {
    /// Entries of these packed columns (by position among them).
    Columns(Vec<(usize, Entry)>),
    /// The fast path does not take the page: the declined mark in every
    /// column's slot.
    Declined,
}

impl std::fmt::Debug for PackedColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedColumn")
            .field("rows", &self.rows())
            .field("declined", &self.declined())
            .finish_non_exhaustive()
    }
}

/// Blocks per chunk of slots (8 MB of heap).
const CHUNK: usize = 1024;

/// Chunks a relation may have: blocks past `CHUNKS * CHUNK` (32 GB of
/// heap) are never cached.
const CHUNKS: usize = 4096;

/// The slots of [`CHUNK`] neighbouring blocks: each block's entry of each
/// packed column (its first word, [`Entry::into_raw`]; null for none),
/// read without a lock, and its generation behind its own lock, so the
/// participants of a parallel scan, reading different blocks, never wait
/// on each other.
struct Chunk {
    pages: [Slots; CHUNK],
    gens: [Mutex<u64>; CHUNK],
}

/// A block's entry pointers, one per packed column.
pub type Slots = [AtomicPtr<i32>; PACKED_MAX];

/// An unlinked entry waiting to be freed, with the epoch of its
/// unlinking.
struct Retired(usize, *mut i32);

// SAFETY: an unlinked entry is owned by the retire list alone.
unsafe impl Send for Retired {}

/// A relation's packed column cache (module doc): a two-level table of
/// per-block slots, the chunks made on first use and kept until the
/// relation is closed, and the epochs that free unlinked entries.
#[derive(Default)]
pub struct PackedCache {
    chunks: OnceLock<Box<[AtomicPtr<Chunk>]>>,
    /// The clock hand of eviction (a block number).
    hand: AtomicUsize,
    /// The reclamation epoch (invariant 4).
    epoch: AtomicUsize,
    /// Readers pinned at an even and at an odd epoch.
    readers: [AtomicUsize; 2],
    /// Unlinked entries not yet freed.
    retired: Mutex<Vec<Retired>>,
    /// `retired.len()`, read without the lock.
    nretired: AtomicUsize,
}

impl std::fmt::Debug for PackedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackedCache").finish_non_exhaustive()
    }
}

/// A scan's hold on a relation's cache: while it lives, every entry it
/// looked up stays allocated (invariant 4). Take one per scan, not per
/// page (pinning costs two atomic operations).
pub struct Reader<'c> {
    cache: &'c PackedCache,
    epoch: usize,
}

impl Reader<'_> {
    /// `block`'s slots, a pointer per packed column, if its chunk was
    /// made (read each with [`Reader::entry`]).
    #[inline]
    pub fn slots(&self, block: BlockNumber) -> Option<&Slots> {
        let b = block as usize;
        Some(&self.cache.chunk(b, false)?.pages[b % CHUNK])
    }

    /// The entry `slot` links (the declined mark included), if any.
    #[inline]
    pub fn entry(&self, slot: &AtomicPtr<i32>) -> Option<&PackedColumn> {
        // SeqCst: a plain load on x86, and it orders the load after this
        // reader's pin for the reclamation (invariant 4).
        let p = slot.load(SeqCst);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` was linked after this reader pinned, so it is freed
        // only after the reader is dropped (invariant 4); or it is the
        // static declined mark.
        Some(unsafe { column_at(p) })
    }

    /// The entry of packed column `k` of `block` (the declined mark
    /// included), if any.
    #[inline]
    pub fn get(&self, block: BlockNumber, k: usize) -> Option<&PackedColumn> {
        self.entry(&self.slots(block)?[k])
    }

    /// `block`'s generation, taken before its page is read to build
    /// entries that [`PackedCache::put`] then stores with it (`u64::MAX`,
    /// which no `put` accepts, for a block past what the cache covers).
    pub fn generation(&self, block: BlockNumber) -> u64 {
        let b = block as usize;
        match self.cache.chunk(b, true) {
            Some(c) => *c.gens[b % CHUNK].lock(),
            None => u64::MAX,
        }
    }

    /// Asks the CPU to load, of `block`'s entries of the columns `cols` (a
    /// bit per column), the header and values, guessing each holds `rows`
    /// rows: a scan calls it a few blocks ahead of the one it reads, whose
    /// row count is the guess. Never faults, whatever the guess.
    #[inline]
    pub fn prefetch(&self, block: BlockNumber, rows: usize, cols: u32) {
        let b = block as usize;
        let Some(c) = self.cache.chunk(b, false) else {
            return;
        };
        let slots = &c.pages[b % CHUNK];
        let end = (HEADER + rows) * 4;
        for (k, slot) in slots.iter().enumerate() {
            if cols & (1 << k) == 0 {
                continue;
            }
            let p = slot.load(SeqCst);
            if p.is_null() {
                continue;
            }
            let mut at = 0;
            while at < end {
                prefetch_line((p as *const u8).wrapping_add(at));
                at += 64;
            }
        }
    }
}

/// Asks the CPU to load the cache line of `p`.
#[inline]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        self.cache.readers[self.epoch & 1].fetch_sub(1, SeqCst);
        if self.cache.nretired.load(SeqCst) > 0 {
            self.cache.collect();
        }
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
    #[inline]
    fn chunk(&self, block: usize, make: bool) -> Option<&Chunk> {
        // A relation no scan used the cache of gets no table (writers
        // only look).
        let table = if make {
            self.table()
        } else {
            self.chunks.get()?
        };
        let cell = table.get(block / CHUNK)?;
        let p = cell.load(SeqCst);
        if !p.is_null() {
            // SAFETY: a published chunk lives until the cache is dropped.
            return Some(unsafe { &*p });
        }
        if !make {
            return None;
        }
        self.make_chunk(cell)
    }

    #[cold]
    fn make_chunk<'s>(&'s self, cell: &'s AtomicPtr<Chunk>) -> Option<&'s Chunk> {
        let fresh = Box::into_raw(Box::new(Chunk {
            pages: std::array::from_fn(|_| {
                std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut()))
            }),
            gens: std::array::from_fn(|_| Mutex::new(0)),
        }));
        let p = match cell.compare_exchange(std::ptr::null_mut(), fresh, SeqCst, SeqCst) {
            Ok(_) => fresh,
            Err(theirs) => {
                // SAFETY: `fresh` was never published.
                drop(unsafe { Box::from_raw(fresh) });
                theirs
            }
        };
        // SAFETY: a published chunk lives until the cache is dropped.
        Some(unsafe { &*p })
    }

    /// Pins the cache for a scan's look-ups (invariant 4).
    pub fn reader(&self) -> Reader<'_> {
        loop {
            let e = self.epoch.load(SeqCst);
            self.readers[e & 1].fetch_add(1, SeqCst);
            if self.epoch.load(SeqCst) == e {
                return Reader {
                    cache: self,
                    epoch: e,
                };
            }
            self.readers[e & 1].fetch_sub(1, SeqCst);
        }
    }

    /// Stores `put` as `block`'s, read after taking generation `gen`
    /// ([`Reader::generation`]): nothing when the block changed since, or
    /// when the memory bound leaves no room; a column whose slot is taken
    /// keeps its entry. Returns how many slots it filled.
    pub fn put(&self, block: BlockNumber, gen: u64, put: Put) -> usize {
        let limit = LIMIT.load(SeqCst);
        if USED.load(SeqCst) > limit {
            self.evict(limit, block);
            if USED.load(SeqCst) > limit {
                return 0;
            }
        }
        let b = block as usize;
        let Some(c) = self.chunk(b, false) else {
            return 0;
        };
        let slots = &c.pages[b % CHUNK];
        let g = c.gens[b % CHUNK].lock();
        if *g != gen {
            return 0;
        }
        let null = std::ptr::null_mut();
        let mut filled = 0;
        match put {
            Put::Declined => {
                for s in slots {
                    let swapped = s.compare_exchange(null, declined_ptr(), SeqCst, SeqCst);
                    filled += usize::from(swapped.is_ok());
                }
            }
            Put::Columns(entries) => {
                for (k, e) in entries {
                    let p = e.into_raw();
                    if slots[k].compare_exchange(null, p, SeqCst, SeqCst).is_ok() {
                        filled += 1;
                    } else {
                        // SAFETY: never linked.
                        drop(unsafe { Entry::from_raw(p) });
                    }
                }
            }
        }
        filled
    }

    /// Unlinks `block`'s entries and bumps its generation: called after
    /// every change of the block's visibility-map entry. A block whose
    /// chunk does not exist has no reader that took its generation yet (a
    /// reader makes the chunk first), so there is nothing to do.
    pub fn invalidate(&self, block: BlockNumber) {
        let b = block as usize;
        if let Some(c) = self.chunk(b, false) {
            let mut g = c.gens[b % CHUNK].lock();
            *g += 1;
            let old: [*mut i32; PACKED_MAX] =
                std::array::from_fn(|k| c.pages[b % CHUNK][k].swap(std::ptr::null_mut(), SeqCst));
            drop(g);
            self.retire(&old);
        }
    }

    /// Hands unlinked entries (nulls and the declined mark skipped) to the
    /// reclamation, then frees what no reader can hold any more.
    fn retire(&self, old: &[*mut i32]) {
        let owned = |p: &&*mut i32| !p.is_null() && **p != declined_ptr();
        if !old.iter().any(|p| owned(&p)) {
            return;
        }
        {
            let mut r = self.retired.lock();
            // Read after the unlinking (invariant 4).
            let e = self.epoch.load(SeqCst);
            for &p in old.iter().filter(owned) {
                // SAFETY: unlinked and not yet freed.
                RETIRED.fetch_add(entry_bytes(unsafe { words_at(p) }), SeqCst);
                r.push(Retired(e, p));
            }
            self.nretired.store(r.len(), SeqCst);
        }
        self.collect();
    }

    /// Advances the epoch as far as the pinned readers allow and frees
    /// the entries retired two epochs back or more.
    fn collect(&self) {
        let mut r = self.retired.lock();
        for _ in 0..2 {
            let e = self.epoch.load(SeqCst);
            // No reader pinned at `e - 1` (the parity of `e + 1`) is left.
            if self.readers[(e + 1) & 1].load(SeqCst) != 0 {
                break;
            }
            let _ = self.epoch.compare_exchange(e, e + 1, SeqCst, SeqCst);
        }
        // Retired in epoch order: the freeable ones come first.
        let e = self.epoch.load(SeqCst);
        let n = r.partition_point(|&Retired(at, _)| at + 2 <= e);
        for Retired(_, p) in r.drain(..n) {
            // SAFETY: unlinked at an epoch two or more back; every reader
            // that could hold it was pinned then or before and is gone.
            let entry = unsafe { Entry::from_raw(p) };
            RETIRED.fetch_sub(entry.bytes(), SeqCst);
        }
        self.nretired.store(r.len(), SeqCst);
    }

    /// Every made chunk, in block order.
    fn made(&self) -> impl Iterator<Item = &Chunk> {
        self.chunks.get().into_iter().flat_map(|t| {
            t.iter().filter_map(|c| {
                let p = c.load(SeqCst);
                // SAFETY: a published chunk lives until the cache is dropped.
                (!p.is_null()).then(|| unsafe { &*p })
            })
        })
    }

    /// Blocks holding an entry of some column (the declined mark
    /// included).
    pub fn pages(&self) -> usize {
        self.made()
            .map(|c| {
                c.pages
                    .iter()
                    .filter(|s| s.iter().any(|p| !p.load(SeqCst).is_null()))
                    .count()
            })
            .sum()
    }

    /// Per packed column, the pages holding its entry made for the layout
    /// `tag` and the bytes those entries count for (declined marks not
    /// counted): what `\d+` shows.
    pub fn columns(&self, tag: u64) -> [(u64, u64); PACKED_MAX] {
        // Pinned, so an entry read here is not freed under the reading
        // (invariant 4).
        let _pin = self.reader();
        let mut out = [(0u64, 0u64); PACKED_MAX];
        for c in self.made() {
            for slots in &c.pages {
                for (k, s) in slots.iter().enumerate() {
                    let p = s.load(SeqCst);
                    if p.is_null() || p == declined_ptr() {
                        continue;
                    }
                    // SAFETY: linked after the pin (see above).
                    let e = unsafe { column_at(p) };
                    if e.tag() == tag {
                        out[k].0 += 1;
                        out[k].1 += entry_bytes(e.words.len()) as u64;
                    }
                }
            }
        }
        out
    }

    /// Drops every entry (the generations stay).
    pub fn clear(&self) {
        for c in self.made() {
            let old: Vec<*mut i32> = c
                .pages
                .iter()
                .flatten()
                .map(|p| p.swap(std::ptr::null_mut(), SeqCst))
                .collect();
            self.retire(&old);
        }
    }

    /// Unlinks entries in clock order, from the hand on, until the linked
    /// entries of every relation hold under `limit` with an eighth of it
    /// to spare, or every made slot was looked at once; `block`'s are left.
    /// (Entries unlinked but still held by a reader stay counted until
    /// freed, so a `put` in the same scan may still find no room.)
    fn evict(&self, limit: usize, block: BlockNumber) {
        let target = limit - limit / 8;
        let mut old = Vec::new();
        let mut unlinked = 0;
        let linked = |unlinked: usize| {
            USED.load(SeqCst)
                .saturating_sub(RETIRED.load(SeqCst) + unlinked)
        };
        let chunks = self.table().len();
        let mut b = self.hand.load(SeqCst) % (chunks * CHUNK);
        'clock: for _ in 0..=chunks {
            let ci = b / CHUNK;
            if let Some(c) = self.chunk(b, false) {
                for i in b % CHUNK..CHUNK {
                    if linked(unlinked) <= target {
                        b = ci * CHUNK + i;
                        break 'clock;
                    }
                    if ci * CHUNK + i == block as usize {
                        continue;
                    }
                    for s in &c.pages[i] {
                        let p = s.swap(std::ptr::null_mut(), SeqCst);
                        if !p.is_null() && p != declined_ptr() {
                            // SAFETY: unlinked just now, not yet retired.
                            unlinked += entry_bytes(unsafe { words_at(p) });
                            old.push(p);
                        }
                    }
                }
            }
            b = (ci + 1) % chunks * CHUNK;
        }
        self.hand.store(b, SeqCst);
        self.retire(&old);
    }
}

impl Drop for PackedCache {
    fn drop(&mut self) {
        // No reader is left (each borrows the cache).
        for Retired(_, p) in self.retired.get_mut().drain(..) {
            // SAFETY: unlinked, owned by the list alone.
            let entry = unsafe { Entry::from_raw(p) };
            RETIRED.fetch_sub(entry.bytes(), SeqCst);
        }
        if let Some(t) = self.chunks.get_mut() {
            for c in t.iter_mut() {
                let p = std::mem::replace(c.get_mut(), std::ptr::null_mut());
                if p.is_null() {
                    continue;
                }
                // SAFETY: published once, dropped once, here.
                let chunk = unsafe { Box::from_raw(p) };
                for e in chunk.pages.iter().flatten() {
                    let q = e.load(SeqCst);
                    if !q.is_null() && q != declined_ptr() {
                        // SAFETY: linked, owned by the slot alone.
                        drop(unsafe { Entry::from_raw(q) });
                    }
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
mod tests;
