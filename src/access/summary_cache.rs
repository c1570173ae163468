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
//!    (`fill_summary`, which changes a slot alone:
//!    [`SummaryCache::invalidate_summary`]) *after* its change, which drops
//!    the entry and bumps the window's generation. Recovery changes pages before any relation is opened, so
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
//! column cache ([`PackedCache`], held here so that every path that
//! changes a block's map entry drops it too); writing a missing summary
//! slot changes neither the page nor its map entry and leaves it.
//!
//! *Spans.* Above the windows, one entry per span of [`WINDOWS_PER_SPAN`]
//! windows ([`BLOCKS_PER_SPAN`] blocks, 8 MiB of heap) merges the span's
//! windows' merged summaries ([`HeapRelation::span_summary`]), under the
//! same three invariants: built only from window entries read after the
//! span's generation was taken, dropped (and its generation bumped) by
//! every invalidation of any of its blocks, stored only if the generation
//! is still the one taken. A decision on a span's merge holds for each of
//! its windows, and so for each block, as a window's does. A scan of an
//! all-visible table then costs one look-up per 1,024 pages: at 80M rows
//! (432k pages) the per-window look-ups and their 400-byte copies were
//! 1.1 ms of a `count(*) ... where` answered whole.
//!
//! The cache holds about 400 bytes per 256 KiB of heap, only for windows
//! some scan answered from summaries (and as much again per 8 MiB for the
//! spans); an entry is a pure function of the map and the slots, so
//! losing it (or the whole cache) costs a re-read.

use std::sync::Mutex;

use super::heap::HeapRelation;
use super::packed_cache::PackedCache;
use super::sumfork::{self, Slot};
use crate::storage::BlockNumber;

/// Windows a span's entry merges.
pub const WINDOWS_PER_SPAN: u32 = 32;
/// Heap blocks of a span.
pub const BLOCKS_PER_SPAN: BlockNumber = sumfork::BLOCKS_PER_PAGE * WINDOWS_PER_SPAN;

/// One window's (or span's) entry.
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

/// The window entries and the span entries, under one lock.
#[derive(Debug, Default)]
struct Entries {
    windows: Vec<Entry>,
    spans: Vec<Entry>,
}

impl Entries {
    /// The level's entry `i` looked up as covering blocks up to `end`.
    fn get(level: &[Entry], i: usize, end: BlockNumber) -> Lookup {
        match level.get(i) {
            Some(e) if e.known && e.end == end => Lookup::Hit(e.merged.as_deref().copied()),
            Some(e) => Lookup::Miss(e.gen),
            None => Lookup::Miss(0),
        }
    }

    /// Stores the level's entry `i` if its generation is still `gen`.
    fn put(level: &mut Vec<Entry>, i: usize, end: BlockNumber, gen: u64, merged: Option<Slot>) {
        if level.len() <= i {
            if gen != 0 {
                return;
            }
            level.resize_with(i + 1, Entry::default);
        }
        let e = &mut level[i];
        if e.gen == gen {
            e.end = end;
            e.known = true;
            e.merged = merged.map(Box::new);
        }
    }

    /// Drops the level's entry `i` and bumps its generation.
    fn drop_entry(level: &mut Vec<Entry>, i: usize) {
        if level.len() <= i {
            level.resize_with(i + 1, Entry::default);
        }
        let e = &mut level[i];
        e.gen += 1;
        e.known = false;
        e.merged = None;
    }
}

/// A relation's per-window cache of merged summaries (module doc).
#[derive(Debug, Default)]
pub struct SummaryCache {
    entries: Mutex<Entries>,
    /// The relation's packed column cache, dropped block by block with
    /// the summaries (`access::packed_cache`).
    packed: PackedCache,
}

impl SummaryCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Entries> {
        // An entry is only ever replaced whole: a panic elsewhere while
        // the lock was held leaves no half-written entry.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The entry of the window starting at block `first` and ending at
    /// `end` (exclusive).
    pub fn get(&self, first: BlockNumber, end: BlockNumber) -> Lookup {
        let w = sumfork::summary_block(first) as usize;
        Entries::get(&self.lock().windows, w, end)
    }

    /// Stores the window's merged summary, read after a [`Lookup::Miss`]
    /// with generation `gen`; nothing when the window changed since.
    pub fn put(&self, first: BlockNumber, end: BlockNumber, gen: u64, merged: Option<Slot>) {
        let w = sumfork::summary_block(first) as usize;
        Entries::put(&mut self.lock().windows, w, end, gen, merged);
    }

    /// The entry of the span starting at block `first` and ending at
    /// `end` (exclusive).
    pub fn get_span(&self, first: BlockNumber, end: BlockNumber) -> Lookup {
        Entries::get(&self.lock().spans, (first / BLOCKS_PER_SPAN) as usize, end)
    }

    /// Stores the span's merged summary, made from its windows' entries
    /// after a [`Lookup::Miss`] with generation `gen`; nothing when any
    /// block of the span changed since.
    pub fn put_span(&self, first: BlockNumber, end: BlockNumber, gen: u64, merged: Option<Slot>) {
        let i = (first / BLOCKS_PER_SPAN) as usize;
        Entries::put(&mut self.lock().spans, i, end, gen, merged);
    }

    /// Drops the entry of heap block `block`'s window and bumps its
    /// generation, and drops the block's packed entry: called after every
    /// change of the block's map entry.
    pub fn invalidate(&self, block: BlockNumber) {
        self.invalidate_summary(block);
        self.packed.invalidate(block);
    }

    /// Drops the entry of heap block `block`'s window and bumps its
    /// generation, leaving the block's packed entry: called after a change
    /// of the block's summary slot alone (`HeapRelation::fill_summary`),
    /// which changes neither the heap page nor its map bit.
    pub fn invalidate_summary(&self, block: BlockNumber) {
        let w = sumfork::summary_block(block) as usize;
        let mut entries = self.lock();
        Entries::drop_entry(&mut entries.windows, w);
        Entries::drop_entry(&mut entries.spans, (block / BLOCKS_PER_SPAN) as usize);
    }

    /// The relation's packed column cache, which every
    /// [`SummaryCache::invalidate`] of a block drops that block from.
    pub fn packed(&self) -> &PackedCache {
        &self.packed
    }

    /// Entries holding a merged summary (for tests).
    pub fn merged_windows(&self) -> usize {
        self.lock()
            .windows
            .iter()
            .filter(|e| e.merged.is_some())
            .count()
    }

    /// Span entries holding a merged summary (for tests).
    pub fn merged_spans(&self) -> usize {
        self.lock()
            .spans
            .iter()
            .filter(|e| e.merged.is_some())
            .count()
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

    /// The merged summary of heap blocks `first..end` (one span, which
    /// the caller makes start at a multiple of [`BLOCKS_PER_SPAN`]), from
    /// the cache or merged from its windows' entries
    /// ([`HeapRelation::window_summary`]) and cached: `None` when some
    /// window has no merged summary or their columns differ.
    pub fn span_summary(
        &self,
        first: BlockNumber,
        end: BlockNumber,
    ) -> crate::error::Result<Option<Slot>> {
        let gen = match self.summary_cache().get_span(first, end) {
            Lookup::Hit(m) => return Ok(m),
            Lookup::Miss(gen) => gen,
        };
        let mut slots = Vec::new();
        let mut merged: Option<Slot> = None;
        let mut w = first;
        while w < end {
            let w_end = end.min(w + sumfork::BLOCKS_PER_PAGE);
            let Some(m) = self.window_summary(w, w_end, &mut slots)? else {
                merged = None;
                break;
            };
            merged = match merged {
                None => Some(m),
                Some(acc) => Slot::merged(&[Some(acc), Some(m)]),
            };
            if merged.is_none() {
                break;
            }
            w = w_end;
        }
        self.summary_cache().put_span(first, end, gen, merged);
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

    /// A span's entry follows its blocks as a window's does: any block's
    /// invalidation drops it and refuses a put begun before; other spans
    /// and the window entries of other windows stay.
    #[test]
    fn a_change_to_any_block_drops_its_span() {
        let c = SummaryCache::default();
        let m = Some(slot(3, 1, 9));
        let s = BLOCKS_PER_SPAN;
        assert_eq!(c.get_span(0, s), Lookup::Miss(0));
        c.put_span(0, s, 0, m);
        c.put_span(s, 2 * s, 0, m);
        c.put(s + 32, s + 64, 0, m);
        assert_eq!(c.get_span(0, s), Lookup::Hit(m));
        assert_eq!(
            c.get_span(0, s - 1),
            Lookup::Miss(0),
            "another end is a miss"
        );
        assert_eq!(c.merged_spans(), 2);
        c.invalidate(s + 700);
        assert_eq!(c.get_span(s, 2 * s), Lookup::Miss(1), "dropped");
        assert_eq!(c.get_span(0, s), Lookup::Hit(m), "the other span stays");
        assert_eq!(
            c.get(s + 32, s + 64),
            Lookup::Hit(m),
            "another window stays"
        );
        // A slot's change drops it too; a writer that changes a block of
        // the span after this reader's get makes its put store nothing.
        c.invalidate_summary(5);
        let Lookup::Miss(g) = c.get_span(0, s) else {
            panic!("dropped by a slot's change")
        };
        c.invalidate(s - 1);
        c.put_span(0, s, g, m);
        assert_eq!(c.get_span(0, s), Lookup::Miss(g + 1));
        // Past the vector's end, racing a writer.
        c.invalidate(5 * s);
        c.put_span(5 * s, 6 * s, 0, m);
        assert_eq!(c.get_span(5 * s, 6 * s), Lookup::Miss(1));
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
