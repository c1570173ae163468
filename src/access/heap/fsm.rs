//! The in-memory free-space map of one relation: which pages have room for
//! new tuples, found without walking the relation's pages for each insert.
//!
//! Pages are remembered with the free bytes last seen on them (only those
//! with at least [`MIN_USEFUL_FREE`]) and counted by *category*, free bytes
//! divided by [`CATEGORY_BYTES`] (PostgreSQL's FSM keeps one byte per page
//! the same way), so `find` skips the categories without pages at once: a
//! bulk load of 80,000 full pages, each left with a few dozen unusable
//! bytes, would otherwise look at them all for every new page. Within a
//! category the lowest block wins, so inserts fill the front of the
//! relation first (which lets VACUUM truncate the tail).
//!
//! Invariants: `free[b]` is page `b`'s remembered free bytes, 0 when it is
//! not remembered (never a kept value: [`MIN_USEFUL_FREE`] > 0); `count[c]`
//! is the number of remembered pages of category `c`; `low[c]` is at or
//! below every remembered page of category `c`. The map is a hint: callers
//! check the page itself and [`note`](FreeSpace::note) what they find.
//!
//! Why an array: VACUUM notes every page it visits, and a dirty VACUUM
//! changes every page's category. With a hash map of pages and an ordered
//! set per category, a note was a hash removal and insert plus a B-tree
//! removal and insert, 7-8% of a VACUUM after one delete per page (perf,
//! 5M rows). Here a note is two array stores and two counter updates. The
//! lowest page of a category is found by scanning `free` from `low[c]`,
//! which then moves up to the page found: every page the scan passes is
//! of another category, so the invariant holds, and a category's scans
//! between two notes that lower its `low` cover each page at most once.
//! The array takes 2 bytes per page of the relation (164 kB for 82,000
//! pages), about what the map and sets took per remembered page.

use crate::storage::BlockNumber;

/// Below this many free bytes a page is not worth remembering.
pub const MIN_USEFUL_FREE: usize = 64;

/// Width of a free-space category in bytes.
pub const CATEGORY_BYTES: usize = 32;

/// Number of categories (free bytes of an 8 KiB page / 32, rounded up).
const CATEGORIES: usize = crate::storage::BLCKSZ / CATEGORY_BYTES + 1;

/// The category of a page with `free` bytes.
#[inline]
fn category(free: u16) -> usize {
    free as usize / CATEGORY_BYTES
}

/// The free-space map of one relation.
#[derive(Debug)]
pub struct FreeSpace {
    /// The page inserts go to now.
    pub target: Option<BlockNumber>,
    /// Free bytes last seen on each page, 0 for a page not remembered.
    free: Vec<u16>,
    /// Remembered pages per category (`free / CATEGORY_BYTES`).
    count: Vec<u32>,
    /// Per category, a block at or below its lowest remembered page.
    low: Vec<BlockNumber>,
    /// Number of remembered pages.
    remembered: usize,
}

impl FreeSpace {
    /// An empty map whose inserts start at `target`.
    pub fn new(target: Option<BlockNumber>) -> FreeSpace {
        FreeSpace {
            target,
            free: Vec::new(),
            count: vec![0; CATEGORIES],
            low: vec![BlockNumber::MAX; CATEGORIES],
            remembered: 0,
        }
    }

    /// Records that `block` has `free` bytes (forgetting it below
    /// [`MIN_USEFUL_FREE`]; a forgotten target is no longer the target).
    pub fn note(&mut self, block: BlockNumber, free: usize) {
        let keep = free >= MIN_USEFUL_FREE;
        let new = if keep {
            free.min(u16::MAX as usize) as u16
        } else {
            0
        };
        let i = block as usize;
        if i >= self.free.len() {
            if !keep {
                if self.target == Some(block) {
                    self.target = None;
                }
                return;
            }
            self.free.resize(i + 1, 0);
        }
        let old = std::mem::replace(&mut self.free[i], new);
        if old != 0 {
            self.count[category(old)] -= 1;
            self.remembered -= 1;
        }
        if keep {
            let c = category(new);
            self.count[c] += 1;
            self.low[c] = self.low[c].min(block);
            self.remembered += 1;
        } else if self.target == Some(block) {
            self.target = None;
        }
    }

    /// Free bytes last recorded for `block`, if remembered.
    pub fn get(&self, block: BlockNumber) -> Option<usize> {
        match self.free.get(block as usize) {
            Some(&f) if f != 0 => Some(f as usize),
            _ => None,
        }
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
        let b = (first..CATEGORIES).find_map(|c| {
            if self.count[c] == 0 {
                return None;
            }
            self.lowest_in(c, exclude)
        })?;
        self.target = Some(b);
        Some(b)
    }

    /// The lowest remembered page of category `c` other than `exclude`
    /// (the category holds at least one page); moves `low[c]` up to the
    /// lowest one.
    fn lowest_in(&mut self, c: usize, exclude: Option<BlockNumber>) -> Option<BlockNumber> {
        let from = (self.low[c] as usize).min(self.free.len());
        let mut pages = self.free[from..]
            .iter()
            .enumerate()
            .filter(|&(_, &f)| f != 0 && category(f) == c)
            .map(|(k, _)| (from + k) as BlockNumber);
        let lowest = pages.next()?;
        self.low[c] = lowest;
        if Some(lowest) != exclude {
            return Some(lowest);
        }
        pages.next()
    }

    /// Forgets the pages at and past `nblocks` (the relation was truncated
    /// there); a target among them moves to the new last page.
    pub fn truncate(&mut self, nblocks: BlockNumber) {
        let keep = (nblocks as usize).min(self.free.len());
        for &f in &self.free[keep..] {
            if f != 0 {
                self.count[category(f)] -= 1;
                self.remembered -= 1;
            }
        }
        self.free.truncate(keep);
        if self.target.is_some_and(|t| t >= nblocks) {
            self.target = nblocks.checked_sub(1);
        }
    }

    /// Number of remembered pages.
    pub fn len(&self) -> usize {
        self.remembered
    }

    /// Whether no page is remembered.
    pub fn is_empty(&self) -> bool {
        self.remembered == 0
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
        assert!((10..40).all(|b| f.get(b).is_none()));
        assert_eq!(f.count.iter().sum::<u32>(), 9, "the counts forgot them too");
    }

    #[test]
    fn lower_blocks_fill_first_within_a_category() {
        let mut f = FreeSpace::new(None);
        f.note(50, 1000);
        f.note(3, 1000);
        f.note(20, 1000);
        assert_eq!(f.find(500, None), Some(3));
    }

    /// The map against a plain model (every remembered page in a sorted
    /// map; `find` as its doc says) over random notes, finds and
    /// truncations: the same answers, the same target, the same length.
    #[test]
    fn agrees_with_a_plain_model() {
        use std::collections::BTreeMap;
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..20 {
            let mut f = FreeSpace::new(None);
            let mut model: BTreeMap<BlockNumber, usize> = BTreeMap::new();
            let mut target: Option<BlockNumber> = None;
            let blocks = 1 + rnd(300) as BlockNumber;
            for _ in 0..3000 {
                match rnd(10) {
                    0..=5 => {
                        let b = rnd(u64::from(blocks)) as BlockNumber;
                        let free = match rnd(3) {
                            0 => rnd(MIN_USEFUL_FREE as u64) as usize,
                            _ => rnd(8200) as usize,
                        };
                        f.note(b, free);
                        if free >= MIN_USEFUL_FREE {
                            model.insert(b, free.min(u16::MAX as usize));
                        } else {
                            model.remove(&b);
                            if target == Some(b) {
                                target = None;
                            }
                        }
                    }
                    6..=8 => {
                        let need = 1 + rnd(8000) as usize;
                        let exclude = (rnd(2) == 0).then(|| rnd(u64::from(blocks)) as BlockNumber);
                        let held = target.filter(|&t| {
                            Some(t) != exclude && model.get(&t).map_or(true, |&v| v >= need)
                        });
                        let want = held.or_else(|| {
                            let first = need.div_ceil(CATEGORY_BYTES);
                            (first..CATEGORIES).find_map(|c| {
                                model
                                    .iter()
                                    .find(|&(&b, &v)| v / CATEGORY_BYTES == c && Some(b) != exclude)
                                    .map(|(&b, _)| b)
                            })
                        });
                        if want.is_some() {
                            target = want;
                        }
                        assert_eq!(f.find(need, exclude), want, "round {round}");
                        assert_eq!(f.target, target);
                    }
                    _ => {
                        let n = rnd(u64::from(blocks) + 5) as BlockNumber;
                        f.truncate(n);
                        model.retain(|&b, _| b < n);
                        if target.is_some_and(|t| t >= n) {
                            target = n.checked_sub(1);
                        }
                    }
                }
                assert_eq!(f.len(), model.len());
                assert_eq!(f.target, target);
            }
        }
    }
}
