//! The TID bitmap a Bitmap Heap Scan reads the heap by (PostgreSQL's
//! `tidbitmap.c`).
//!
//! Tuple ids are kept per heap page: an *exact* page has one bit per line
//! pointer; a *lossy* page is only known to hold matches somewhere, and is
//! kept as one bit of a chunk of [`PAGES_PER_CHUNK`] pages. The bitmap holds
//! at most `max_entries` entries (exact pages plus chunks), worked out from
//! `work_mem` as PostgreSQL's `tbm_calculate_entries` does; past that,
//! exact pages are turned lossy ([`TidBitmap::lossify`]) until half the
//! budget is free. An exact page may also be marked *recheck*: the tuples
//! listed must be tested against the index conditions again (an
//! intersection with a lossy page).
//!
//! Invariants: a page is never both exact and lossy (adding a tuple to a
//! lossy page does nothing; making a page lossy drops its exact entry);
//! [`TidBitmap::pages`] returns every page once, in block order.

use hashbrown::HashMap;

use crate::storage::page::MAX_HEAP_TUPLES_PER_PAGE;
use crate::storage::BlockNumber;

/// Words of one exact page's offsets (bit `o` for line pointer `o`).
const PAGE_WORDS: usize = (MAX_HEAP_TUPLES_PER_PAGE + 1).div_ceil(64);
/// Heap pages one lossy chunk covers (PostgreSQL's `PAGES_PER_CHUNK`).
pub const PAGES_PER_CHUNK: BlockNumber = 256;
const CHUNK_WORDS: usize = (PAGES_PER_CHUNK as usize).div_ceil(64);
/// Bytes PostgreSQL counts per hash table entry: the entry (48) and two
/// pointers.
const ENTRY_BYTES: usize = 48 + 8 + 8;

/// One exact page's line pointers.
#[derive(Debug, Clone, Copy, Default)]
struct PageBits {
    words: [u64; PAGE_WORDS],
    recheck: bool,
}

impl PageBits {
    fn is_empty(&self) -> bool {
        self.words.iter().all(|w| *w == 0)
    }
}

/// A set of tuple ids, exact or lossy per page.
#[derive(Debug, Clone)]
pub struct TidBitmap {
    exact: HashMap<BlockNumber, PageBits>,
    /// Lossy pages: chunk number -> one bit per page of the chunk.
    lossy: HashMap<BlockNumber, [u64; CHUNK_WORDS]>,
    max_entries: usize,
}

/// One page of a bitmap, as the heap visit reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageTids {
    /// These line pointers (ascending); `recheck`: test the index
    /// conditions on them.
    Exact {
        /// The line pointers: bit `o` for offset `o`.
        words: [u64; PAGE_WORDS],
        /// Test them against the index conditions.
        recheck: bool,
    },
    /// Any tuple of the page may match: test each.
    Lossy,
}

/// The entries a bitmap may hold within `work_mem` bytes (PostgreSQL's
/// `tbm_calculate_entries`).
pub fn max_entries(work_mem: usize) -> usize {
    (work_mem / ENTRY_BYTES).clamp(16, i32::MAX as usize - 1)
}

impl TidBitmap {
    /// An empty bitmap holding at most `max_entries` entries before it
    /// turns pages lossy.
    pub fn new(max_entries: usize) -> TidBitmap {
        TidBitmap {
            exact: HashMap::new(),
            lossy: HashMap::new(),
            max_entries: max_entries.max(16),
        }
    }

    fn entries(&self) -> usize {
        self.exact.len() + self.lossy.len()
    }

    /// Whether no tuple id is in the bitmap.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.lossy.is_empty()
    }

    fn is_lossy(&self, block: BlockNumber) -> bool {
        let (chunk, bit) = (block / PAGES_PER_CHUNK, block % PAGES_PER_CHUNK);
        self.lossy
            .get(&chunk)
            .is_some_and(|w| w[bit as usize / 64] >> (bit % 64) & 1 != 0)
    }

    /// Adds tuple (`block`, `offset`).
    pub fn add(&mut self, block: BlockNumber, offset: u16) {
        self.add_page(block, offset, false);
    }

    fn add_page(&mut self, block: BlockNumber, offset: u16, recheck: bool) {
        if !self.lossy.is_empty() && self.is_lossy(block) {
            return;
        }
        let o = offset as usize;
        if o >= PAGE_WORDS * 64 {
            return;
        }
        let e = self.exact.entry(block).or_default();
        e.words[o / 64] |= 1 << (o % 64);
        e.recheck |= recheck;
        if self.entries() > self.max_entries {
            self.lossify();
        }
    }

    /// Marks `block` lossy, dropping its exact entry.
    fn mark_lossy(&mut self, block: BlockNumber) {
        self.exact.remove(&block);
        let (chunk, bit) = (block / PAGES_PER_CHUNK, block % PAGES_PER_CHUNK);
        let w = self.lossy.entry(chunk).or_default();
        w[bit as usize / 64] |= 1 << (bit % 64);
    }

    /// Turns exact pages lossy, in block order, until at most half the
    /// budget is used; when that cannot be reached, the budget doubles past
    /// the current size (PostgreSQL's `tbm_lossify`: the bitmap must not
    /// lossify again at every tuple).
    fn lossify(&mut self) {
        let mut blocks: Vec<BlockNumber> = self.exact.keys().copied().collect();
        blocks.sort_unstable();
        for b in blocks {
            self.mark_lossy(b);
            if self.entries() <= self.max_entries / 2 {
                break;
            }
        }
        if self.entries() > self.max_entries / 2 {
            self.max_entries = self.entries().saturating_mul(2);
        }
    }

    /// Adds every tuple id of `other` (PostgreSQL's `tbm_union`).
    pub fn union(&mut self, other: &TidBitmap) {
        for (&chunk, w) in &other.lossy {
            for_each_bit(w, |bit| {
                self.mark_lossy(chunk * PAGES_PER_CHUNK + bit as u32)
            });
        }
        for (&block, bits) in &other.exact {
            if self.is_lossy(block) {
                continue;
            }
            let e = self.exact.entry(block).or_default();
            for (a, b) in e.words.iter_mut().zip(&bits.words) {
                *a |= *b;
            }
            e.recheck |= bits.recheck;
        }
        if self.entries() > self.max_entries {
            self.lossify();
        }
    }

    /// Keeps only the tuple ids also in `other` (PostgreSQL's
    /// `tbm_intersect`): an exact page against a lossy one stays exact,
    /// marked for recheck; a lossy page stays lossy where `other` has the
    /// page at all.
    pub fn intersect(&mut self, other: &TidBitmap) {
        self.exact.retain(|block, bits| {
            if other.is_lossy(*block) {
                bits.recheck = true;
                return true;
            }
            let Some(o) = other.exact.get(block) else {
                return false;
            };
            for (a, b) in bits.words.iter_mut().zip(&o.words) {
                *a &= *b;
            }
            bits.recheck |= o.recheck;
            !bits.is_empty()
        });
        let mut chunks = std::mem::take(&mut self.lossy);
        for (&chunk, w) in chunks.iter_mut() {
            for_each_bit(&w.clone(), |bit| {
                let block = chunk * PAGES_PER_CHUNK + bit as u32;
                if !other.is_lossy(block) && !other.exact.contains_key(&block) {
                    w[bit / 64] &= !(1 << (bit % 64));
                }
            });
        }
        chunks.retain(|_, w| w.iter().any(|x| *x != 0));
        self.lossy = chunks;
    }

    /// Every page, in block order.
    pub fn pages(&self) -> Vec<(BlockNumber, PageTids)> {
        let mut out: Vec<(BlockNumber, PageTids)> =
            Vec::with_capacity(self.exact.len() + self.lossy.len());
        for (&block, bits) in &self.exact {
            out.push((
                block,
                PageTids::Exact {
                    words: bits.words,
                    recheck: bits.recheck,
                },
            ));
        }
        for (&chunk, w) in &self.lossy {
            for_each_bit(w, |bit| {
                out.push((chunk * PAGES_PER_CHUNK + bit as u32, PageTids::Lossy))
            });
        }
        out.sort_unstable_by_key(|(b, _)| *b);
        out
    }
}

impl PageTids {
    /// The exact page's line pointers, ascending, onto `out`; nothing for
    /// a lossy page.
    pub fn offsets_into(&self, out: &mut Vec<u16>) {
        if let PageTids::Exact { words, .. } = self {
            for_each_bit(words, |o| out.push(o as u16));
        }
    }

    /// How many line pointers an exact page lists (0 for a lossy one).
    pub fn count(&self) -> usize {
        match self {
            PageTids::Exact { words, .. } => words.iter().map(|w| w.count_ones() as usize).sum(),
            PageTids::Lossy => 0,
        }
    }
}

/// Calls `f` with the position of every set bit of `words`, ascending.
fn for_each_bit(words: &[u64], mut f: impl FnMut(usize)) {
    for (i, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            let t = w.trailing_zeros() as usize;
            f(i * 64 + t);
            w &= w - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pages as (block, offsets or `None` for lossy, recheck).
    fn tids(b: &TidBitmap) -> Vec<(BlockNumber, Option<Vec<u16>>, bool)> {
        b.pages()
            .into_iter()
            .map(|(blk, p)| {
                let mut o = Vec::new();
                p.offsets_into(&mut o);
                match p {
                    PageTids::Exact { recheck, .. } => (blk, Some(o), recheck),
                    PageTids::Lossy => (blk, None, false),
                }
            })
            .collect()
    }

    #[test]
    fn exact_pages_come_out_in_block_order_with_sorted_offsets() {
        let mut b = TidBitmap::new(1000);
        for (blk, off) in [(7, 3), (2, 9), (7, 1), (2, 2), (100, 291)] {
            b.add(blk, off);
        }
        assert_eq!(
            tids(&b),
            vec![
                (2, Some(vec![2, 9]), false),
                (7, Some(vec![1, 3]), false),
                (100, Some(vec![291]), false)
            ]
        );
        assert_eq!(b.pages()[0].1.count(), 2);
    }

    #[test]
    fn past_the_budget_pages_turn_lossy_and_stay_lossy() {
        let mut b = TidBitmap::new(16);
        for blk in 0..40 {
            b.add(blk, 1);
        }
        let pages = tids(&b);
        assert_eq!(pages.len(), 40, "every page is still there");
        let lossy = pages.iter().filter(|p| p.1.is_none()).count();
        assert!(
            lossy > 0 && b.entries() <= 16,
            "{lossy} lossy, {} entries",
            b.entries()
        );
        // Adding to a lossy page keeps it lossy.
        b.add(0, 5);
        assert_eq!(tids(&b)[0], (0, None, false));
    }

    #[test]
    fn union_and_intersection_follow_postgres_rules() {
        let mut a = TidBitmap::new(1000);
        let mut c = TidBitmap::new(1000);
        a.add(1, 1);
        a.add(1, 2);
        a.add(2, 1);
        c.add(1, 2);
        c.add(3, 1);
        let mut u = a.clone();
        u.union(&c);
        assert_eq!(u.pages().len(), 3);
        let mut i = a.clone();
        i.intersect(&c);
        assert_eq!(tids(&i), vec![(1, Some(vec![2]), false)]);
        // Exact against lossy: kept, to be rechecked.
        let mut l = TidBitmap::new(1000);
        l.mark_lossy(2);
        let mut j = a.clone();
        j.intersect(&l);
        assert_eq!(tids(&j), vec![(2, Some(vec![1]), true)]);
        // Lossy against exact: lossy where the other has the page.
        let mut k = l.clone();
        k.mark_lossy(9);
        k.intersect(&a);
        assert_eq!(tids(&k), vec![(2, None, false)]);
        // A union with a lossy page makes it lossy.
        let mut v = a.clone();
        v.union(&l);
        assert_eq!(
            tids(&v),
            vec![(1, Some(vec![1, 2]), false), (2, None, false)]
        );
    }
}
