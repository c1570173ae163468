//! The in-memory free-space map of one relation: which pages have room for
//! new tuples, found in time independent of the relation's size.
//!
//! Pages are remembered with the free bytes last seen on them (only those
//! with at least [`MIN_USEFUL_FREE`]) and indexed by *category*, free bytes
//! divided by [`CATEGORY_BYTES`] (PostgreSQL's FSM keeps one byte per page
//! the same way), so `find` looks at no more than one set per category
//! instead of walking every page: a bulk load of 80,000 full pages, each
//! left with a few dozen unusable bytes, would otherwise scan them all for
//! every new page. Within a category the lowest block wins, so inserts fill
//! the front of the relation first (which lets VACUUM truncate the tail).
//!
//! Invariants: `free` and `by_category` hold the same pages; a page is in
//! the category of its `free` entry. The map is a hint: callers check the
//! page itself and [`note`](FreeSpace::note) what they find.

use std::collections::BTreeSet;

// foldhash (hashbrown's default) rather than SipHash: VACUUM notes every
// page it visits.
use hashbrown::HashMap;

use crate::storage::BlockNumber;

/// Below this many free bytes a page is not worth remembering.
pub const MIN_USEFUL_FREE: usize = 64;

/// Width of a free-space category in bytes.
pub const CATEGORY_BYTES: usize = 32;

/// Number of categories (free bytes of an 8 KiB page / 32, rounded up).
const CATEGORIES: usize = crate::storage::BLCKSZ / CATEGORY_BYTES + 1;

/// The free-space map of one relation.
#[derive(Debug)]
pub struct FreeSpace {
    /// The page inserts go to now.
    pub target: Option<BlockNumber>,
    /// Free bytes last seen on each remembered page.
    free: HashMap<BlockNumber, u16>,
    /// Remembered pages by category (`free / CATEGORY_BYTES`).
    by_category: Vec<BTreeSet<BlockNumber>>,
}

impl FreeSpace {
    /// An empty map whose inserts start at `target`.
    pub fn new(target: Option<BlockNumber>) -> FreeSpace {
        FreeSpace {
            target,
            free: HashMap::new(),
            by_category: vec![BTreeSet::new(); CATEGORIES],
        }
    }

    /// Records that `block` has `free` bytes (forgetting it below
    /// [`MIN_USEFUL_FREE`]; a forgotten target is no longer the target).
    pub fn note(&mut self, block: BlockNumber, free: usize) {
        let keep = free >= MIN_USEFUL_FREE;
        let new = free.min(u16::MAX as usize) as u16;
        if keep && self.free.get(&block) == Some(&new) {
            return; // already known (a VACUUM of an unchanged page)
        }
        if let Some(old) = self.free.remove(&block) {
            self.by_category[old as usize / CATEGORY_BYTES].remove(&block);
        }
        if keep {
            self.free.insert(block, new);
            self.by_category[new as usize / CATEGORY_BYTES].insert(block);
        } else if self.target == Some(block) {
            self.target = None;
        }
    }

    /// Free bytes last recorded for `block`, if remembered.
    pub fn get(&self, block: BlockNumber) -> Option<usize> {
        self.free.get(&block).map(|&f| f as usize)
    }

    /// A page that may have `need` bytes, other than `exclude`: the target
    /// when it may, else the lowest-numbered page of the smallest category
    /// that surely has room. Becomes the target.
    pub fn find(&mut self, need: usize, exclude: Option<BlockNumber>) -> Option<BlockNumber> {
        if let Some(t) = self.target {
            if Some(t) != exclude && self.get(t).map_or(true, |f| f >= need) {
                return Some(t);
            }
        }
        let first = need.div_ceil(CATEGORY_BYTES);
        let b = self
            .by_category
            .get(first..)?
            .iter()
            .find_map(|set| set.iter().copied().find(|&b| Some(b) != exclude))?;
        self.target = Some(b);
        Some(b)
    }

    /// Forgets the pages at and past `nblocks` (the relation was truncated
    /// there); a target among them moves to the new last page.
    pub fn truncate(&mut self, nblocks: BlockNumber) {
        let gone: Vec<BlockNumber> = self
            .free
            .keys()
            .copied()
            .filter(|&b| b >= nblocks)
            .collect();
        for b in gone {
            if let Some(f) = self.free.remove(&b) {
                self.by_category[f as usize / CATEGORY_BYTES].remove(&b);
            }
        }
        if self.target.is_some_and(|t| t >= nblocks) {
            self.target = nblocks.checked_sub(1);
        }
    }

    /// Number of remembered pages.
    pub fn len(&self) -> usize {
        self.free.len()
    }

    /// Whether no page is remembered.
    pub fn is_empty(&self) -> bool {
        self.free.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_page_with_room_and_skips_full_ones() {
        let mut f = FreeSpace::new(None);
        for b in 0..10_000 {
            f.note(b, 76); // full pages with unusable crumbs
        }
        f.note(7_000, 4000);
        f.note(9_000, 200);
        // The tightest category that surely has room goes first.
        assert_eq!(f.find(120, None), Some(9_000));
        // The target sticks while it may have room.
        assert_eq!(f.find(120, None), Some(9_000));
        f.note(9_000, 10);
        assert_eq!(f.target, None, "a full target is dropped");
        assert_eq!(f.find(120, None), Some(7_000));
        assert_eq!(f.find(120, Some(7_000)), None, "nothing else has room");
        assert_eq!(f.find(8_000, None), None);
        assert_eq!(f.len(), 9_999, "page 9000 was forgotten");
    }

    #[test]
    fn a_category_always_has_the_room_it_promises() {
        let mut f = FreeSpace::new(None);
        for (b, free) in [(1, 95), (2, 96), (3, 127), (4, 64)] {
            f.note(b, free);
        }
        // 96 bytes: page 1 (95) must not be offered; pages 2 and 3 may.
        let got = f.find(96, None).unwrap();
        assert!(got == 2 || got == 3, "{got}");
        assert!(f.get(got).unwrap() >= 96);
        let mut f = FreeSpace::new(None);
        f.note(5, 95);
        assert_eq!(f.find(96, None), None);
        assert_eq!(f.find(64, None), Some(5));
    }

    #[test]
    fn truncation_forgets_the_tail() {
        let mut f = FreeSpace::new(Some(30));
        for b in 0..40 {
            f.note(b, 1000);
        }
        f.truncate(10);
        assert_eq!(f.len(), 10);
        assert_eq!(f.target, Some(9));
        f.note(9, 0);
        assert_eq!(f.find(500, None), Some(0));
        assert!(f.by_category.iter().flatten().all(|&b| b < 10));
    }

    #[test]
    fn lower_blocks_fill_first_within_a_category() {
        let mut f = FreeSpace::new(None);
        f.note(50, 1000);
        f.note(3, 1000);
        f.note(20, 1000);
        assert_eq!(f.find(500, None), Some(3));
    }
}
