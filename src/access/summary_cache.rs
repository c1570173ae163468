//! A relation's in-memory cache of its page summaries, one entry per
//! window of [`sumfork::BLOCKS_PER_PAGE`] heap blocks (one summary page):
//! the summaries of the window's blocks merged into one [`Slot`]
//! ([`Slot::merged`]), present only when every block of the window had a
//! valid summary (`sumfork`'s validity rule) of the same columns. A scan
//! that answers from summaries decides a whole window from it with one
//! look-up, without pinning the map or the summary page and without
//! decoding 32 slots (`exec::fastpath::summaries`).
//!
//! # Invariants
//!
//! 1. *An entry is the merge of valid summaries.* It is built only from
//!    [`HeapRelation::read_summaries`], which reads the map's bits and the
//!    slots under their pages' locks and keeps a slot only while its bit
//!    is set and its live count is the map's.
//! 2. *Any change to the window's map entries or slots drops the entry.*
//!    Every run-time change of a map entry or a summary slot goes through
//!    [`HeapRelation::clear_vm`] (every insert, update and delete on an
//!    all-visible page, VACUUM's repair of a wrong bit, tail truncation),
//!    `HeapRelation::set_vm_in` (VACUUM, COPY FREEZE) or
//!    [`HeapRelation::fill_summary`]; each calls [`SummaryCache::invalidate`]
//!    *after* its change, which drops the entry and bumps the window's
//!    generation. Recovery changes pages before any relation is opened, so
//!    a cache never outlives a change it did not see.
//! 3. *No stale entry is ever stored.* A reader takes the window's
//!    generation ([`SummaryCache::get`]) before it reads the map and slots,
//!    and stores ([`SummaryCache::put`]) only if the generation is still
//!    that one. A writer whose change the reader did not see changed the
//!    map or slot after the reader's read (buffer locks order them), so its
//!    bump follows the reader's `get`: either the `put` finds a new
//!    generation and stores nothing, or it stored first and the bump drops
//!    the entry.
//!
//! MVCC: as for the slots themselves. A transaction's change clears the
//! page's bit, and so drops the entry, before the transaction commits; a
//! snapshot that sees the commit was taken after the drop and finds no
//! entry (or a later one, made after VACUUM set the bit again for a page
//! whose tuples every running snapshot sees).
//!
//! The same invalidation drops the block's entry of the relation's packed
//! column cache ([`PackedCache`], held here so that every path that drops
//! a summary drops it too).
//!
//! The cache holds about 400 bytes per 256 KiB of heap, only for windows
//! some scan answered from summaries; an entry is a pure function of the
//! map and the slots, so losing it (or the whole cache) costs a re-read.

use std::sync::Mutex;

use super::heap::HeapRelation;
use super::packed_cache::PackedCache;
use super::sumfork::{self, Slot};
use crate::storage::BlockNumber;

/// One window's entry.
#[derive(Debug, Clone, Default)]
struct Entry {
    /// Bumped by every invalidation of the window.
    gen: u64,
    /// The blocks the entry covers end here (the last window of a table
    /// grows as the table does).
    end: BlockNumber,
    /// Whether `merged` was filled in (an entry may know the window has
    /// no merged summary).
    known: bool,
    /// The merged summary of the window's blocks, `None` when some block
    /// had no valid summary or the blocks' columns differ.
    merged: Option<Box<Slot>>,
}

/// What [`SummaryCache::get`] found.
// Returned by value once per window of 32 pages; boxing the slot would
// allocate on every look-up of the hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The window's entry: its merged summary, if any.
    Hit(Option<Slot>),
    /// No entry: build it and [`SummaryCache::put`] it with this
    /// generation.
    Miss(u64),
}

/// A relation's per-window cache of merged summaries (module doc).
#[derive(Debug, Default)]
pub struct SummaryCache {
    windows: Mutex<Vec<Entry>>,
    /// The relation's packed column cache, dropped block by block with
    /// the summaries (`access::packed_cache`).
    packed: PackedCache,
}

impl SummaryCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        // An entry is only ever replaced whole: a panic elsewhere while
        // the lock was held leaves no half-written entry.
        self.windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The entry of the window starting at block `first` and ending at
    /// `end` (exclusive).
    pub fn get(&self, first: BlockNumber, end: BlockNumber) -> Lookup {
        let w = sumfork::summary_block(first) as usize;
        let windows = self.lock();
        match windows.get(w) {
            Some(e) if e.known && e.end == end => Lookup::Hit(e.merged.as_deref().copied()),
            Some(e) => Lookup::Miss(e.gen),
            None => Lookup::Miss(0),
        }
    }

    /// Stores the window's merged summary, read after a [`Lookup::Miss`]
    /// with generation `gen`; nothing when the window changed since.
    pub fn put(&self, first: BlockNumber, end: BlockNumber, gen: u64, merged: Option<Slot>) {
        let w = sumfork::summary_block(first) as usize;
        let mut windows = self.lock();
        if windows.len() <= w {
            if gen != 0 {
                return;
            }
            windows.resize_with(w + 1, Entry::default);
        }
        let e = &mut windows[w];
        if e.gen == gen {
            e.end = end;
            e.known = true;
            e.merged = merged.map(Box::new);
        }
    }

    /// Drops the entry of heap block `block`'s window and bumps its
    /// generation: called after every change of the block's map entry or
    /// slot.
    pub fn invalidate(&self, block: BlockNumber) {
        let w = sumfork::summary_block(block) as usize;
        {
            let mut windows = self.lock();
            if windows.len() <= w {
                windows.resize_with(w + 1, Entry::default);
            }
            let e = &mut windows[w];
            e.gen += 1;
            e.known = false;
            e.merged = None;
        }
        self.packed.invalidate(block);
    }

    /// The relation's packed column cache, which every
    /// [`SummaryCache::invalidate`] of a block drops that block from.
    pub fn packed(&self) -> &PackedCache {
        &self.packed
    }

    /// Entries holding a merged summary (for tests).
    pub fn merged_windows(&self) -> usize {
        self.lock().iter().filter(|e| e.merged.is_some()).count()
    }
}

impl HeapRelation {
    /// The merged summary of heap blocks `first..end` (one window), from
    /// the cache or read and cached; `slots` gets the blocks' own valid
    /// summaries when they were read here (and is left empty on a hit).
    pub fn window_summary(
        &self,
        first: BlockNumber,
        end: BlockNumber,
        slots: &mut Vec<Option<Slot>>,
    ) -> crate::error::Result<Option<Slot>> {
        slots.clear();
        let gen = match self.summary_cache().get(first, end) {
            Lookup::Hit(m) => return Ok(m),
            Lookup::Miss(gen) => gen,
        };
        self.read_summaries(first, end, slots)?;
        let merged = Slot::merged(slots);
        self.summary_cache().put(first, end, gen, merged);
        Ok(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::summary::{ColumnSummary, SummaryKind};

    fn slot(live: u16, min: i64, max: i64) -> Slot {
        let c = ColumnSummary::Int {
            count: u64::from(live),
            min,
            max,
            sum: i128::from(min + max),
        };
        Slot::decode(&Slot::encode(live, 2, &[SummaryKind::Int4], &[c])).expect("a slot")
    }

    #[test]
    fn a_change_between_get_and_put_stores_nothing() {
        let c = SummaryCache::default();
        let m = Some(slot(3, 1, 9));
        assert_eq!(c.get(0, 32), Lookup::Miss(0));
        c.put(0, 32, 0, m);
        assert_eq!(c.get(0, 32), Lookup::Hit(m));
        assert_eq!(c.get(0, 31), Lookup::Miss(0), "another end is a miss");
        c.invalidate(5);
        let Lookup::Miss(g) = c.get(0, 32) else {
            panic!("dropped")
        };
        assert_eq!(g, 1);
        // A writer changes the window after this reader's get: the put is
        // refused, the entry stays unknown.
        c.invalidate(31);
        c.put(0, 32, g, m);
        assert_eq!(c.get(0, 32), Lookup::Miss(2));
        // A reader of a window past the vector's end, racing a writer.
        c.invalidate(100);
        c.put(96, 128, 0, m);
        assert_eq!(c.get(96, 128), Lookup::Miss(1));
        c.put(96, 128, 1, None);
        assert_eq!(c.get(96, 128), Lookup::Hit(None));
        // A window past the end, no writer: stored.
        c.put(320, 330, 0, m);
        assert_eq!(c.get(320, 330), Lookup::Hit(m));
        assert_eq!(c.merged_windows(), 1);
    }

    #[test]
    fn merged_slots_answer_for_every_block() {
        let a = slot(3, 1, 9);
        let b = slot(2, -4, 5);
        let m = Slot::merged(&[Some(a), Some(b)]).expect("same columns");
        assert_eq!(m.live, 5);
        assert_eq!(
            m.column(0, SummaryKind::Int4),
            Some(&ColumnSummary::Int {
                count: 5,
                min: -4,
                max: 9,
                sum: 11
            })
        );
        assert_eq!(Slot::merged(&[Some(a), None]), None, "a block unknown");
        assert_eq!(Slot::merged(&[]), None);
        let other = Slot::decode(&Slot::encode(
            1,
            2,
            &[SummaryKind::None, SummaryKind::Int4],
            &[ColumnSummary::None, ColumnSummary::empty(SummaryKind::Int4)],
        ))
        .expect("a slot");
        assert_eq!(
            Slot::merged(&[Some(a), Some(other)]),
            None,
            "columns differ"
        );
    }
}
