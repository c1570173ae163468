//! A scan's use of the packed column cache (`access::packed_cache`): a
//! block with an entry for every column the scan reads is answered from
//! them before the scan reads the page (no pin, no page lock, no page
//! header touched: 4 bytes a value); any other block is read, and when
//! it is ALL_VISIBLE its values are read by the fused column loop
//! ([`super::fixed_scan::fused_page_values`]) and the entries of the
//! columns the scan reads stored for the next scan.
//!
//! Applies when every column the scan reads is one of the *packed columns*:
//! the table's first [`PACKED_MAX`] `int4`/`date` columns that only
//! fixed-width attributes precede ([`PackedScan::new`]). Every scan of a
//! table computes the same packed columns, so their entries serve each
//! other; an entry made for another layout (after ALTER TABLE) carries
//! another tag and is not used.
//!
//! Must agree with the fused loop on the same page: the same values, in
//! line pointer order, and the page declined exactly when the fused loop
//! declines it (a page with a NULL, a short tuple, a bad pointer). An entry
//! is made only from a page the fused loop accepted, and stands for that
//! page until its visibility-map bit changes (the cache's invariants).

use std::cell::Cell;

use crate::access::heap::tuple::TupleDesc;
use crate::access::heap::HeapRelation;
use crate::access::packed_cache::{Entry, Put, Reader, PACKED_MAX};
use crate::error::Result;
use crate::storage::prefetch::Ahead;
use crate::storage::BlockNumber;
use crate::types::DataType;

use super::fixed_scan::{fixed_layout, fused_page_values, FixedColumn, PageColumns, FUSED_MAX};

/// How many blocks ahead of a hit the scan prefetches its entry.
const PREFETCH_BLOCKS: BlockNumber = 3;

/// A block's values of the scan's fused columns, from the cache.
#[derive(Clone, Copy)]
pub struct Hit<'p> {
    /// The fused column `k`'s values (the places past the fused layout
    /// repeat the first).
    pub cols: [&'p [i32]; FUSED_MAX],
    /// Rows on the page.
    pub rows: usize,
}

/// What the cache holds for a block ([`PackedScan::cached`]).
pub enum Cached<'p> {
    /// An entry of every column the scan reads, in this scan's layout.
    Hit(Hit<'p>),
    /// A mark that does not serve: the fused loop declined the page, or
    /// an entry was made for another layout. The page is read.
    Declined,
    /// Some column has no entry: the page is read, and the entries built
    /// ([`PackedScan::build`]) with this generation.
    Miss(u64),
}

impl Cached<'_> {
    /// What was found, without the entries (which a caller that must read
    /// the page anyway looks up again).
    pub fn looked(&self) -> Looked {
        match self {
            Cached::Hit(_) => Looked::Hit,
            Cached::Declined => Looked::Declined,
            Cached::Miss(g) => Looked::Miss(*g),
        }
    }
}

/// [`Cached`] without the entry.
#[derive(Clone, Copy)]
pub enum Looked {
    /// An entry in this scan's layout.
    Hit,
    /// An entry that does not serve.
    Declined,
    /// No entry, at this generation.
    Miss(u64),
}

/// A table's packed columns: the first [`PACKED_MAX`] `int4`/`date`
/// columns that only fixed-width attributes precede.
pub struct PackedLayout {
    /// The packed columns, by attribute number from 0.
    pub columns: Vec<usize>,
    /// Their layout in a tuple (`out` = position among them).
    pub layout: Vec<FixedColumn>,
    /// The layout's name in entries ([`crate::access::packed_cache::PackedColumn::tag`]).
    pub tag: u64,
}

impl PackedLayout {
    /// The packed columns of a table of attribute types `types`, stored
    /// as `desc`; `None` when it has none.
    pub fn of(desc: &TupleDesc, types: &[DataType]) -> Option<PackedLayout> {
        let attrs = desc.attrs();
        let mut columns = Vec::new();
        for (i, a) in attrs.iter().enumerate() {
            if a.len < 0 || columns.len() == PACKED_MAX {
                break;
            }
            if matches!(types.get(i), Some(DataType::Int4 | DataType::Date)) {
                columns.push(i);
            }
        }
        let ptypes: Vec<DataType> = columns.iter().map(|&i| types[i]).collect();
        let layout = fixed_layout(desc, &columns, &ptypes)?;
        let mut tag = attrs.len() as u64;
        for c in &layout {
            tag = tag.wrapping_mul(0x100_0000_01b3) ^ (c.off as u64 + 1);
        }
        Some(PackedLayout {
            columns,
            layout,
            tag,
        })
    }
}

/// One scan's packed columns and what it took from the cache.
pub struct PackedScan<'r> {
    rel: &'r HeapRelation,
    /// The scan's hold on the cache: entries looked up stay allocated
    /// while it lives (the cache's invariant 4).
    reader: Reader<'r>,
    /// The packed columns' layout (`out` = position among them).
    layout: Vec<FixedColumn>,
    /// The layout's name in entries ([`PackedPage::tag`]).
    tag: u64,
    /// For the scan's fused column `k`: its position among the packed ones.
    want: [usize; FUSED_MAX],
    /// The scan's fused columns (at least one).
    nfused: usize,
    /// The packed columns the scan reads, a bit each (what it looks up,
    /// prefetches and builds).
    read: u32,
    natts: usize,
    scratch: Box<PageColumns>,
    /// Pages answered from an entry.
    hits: Cell<u64>,
    /// Entries this scan made.
    pub built: u64,
}

impl<'r> PackedScan<'r> {
    /// The packed use of a scan of `rel` (a table of attribute types
    /// `types`, stored as `desc`) reading the table columns `columns`
    /// through the fused layout `fixed`; `None` when some read column is
    /// not a packed one.
    pub fn new(
        rel: &'r HeapRelation,
        desc: &TupleDesc,
        types: &[DataType],
        columns: &[usize],
        fixed: &[FixedColumn],
    ) -> Option<PackedScan<'r>> {
        let PackedLayout {
            columns: packed,
            layout,
            tag,
        } = PackedLayout::of(desc, types)?;
        let mut want = [0; FUSED_MAX];
        for (k, c) in fixed.iter().enumerate() {
            want[k] = packed.iter().position(|&p| p == columns[c.out])?;
        }
        // The places past the fused layout repeat its first column.
        let first = want[0];
        want[fixed.len()..].fill(first);
        let read = want.iter().fold(0, |m, &w| m | 1 << w);
        Some(PackedScan {
            rel,
            reader: rel.packed_cache().reader(),
            layout,
            tag,
            want,
            nfused: fixed.len(),
            read,
            natts: desc.attrs().len(),
            scratch: Box::new([[0; super::fixed_scan::MAX_TUPLES]; FUSED_MAX]),
            hits: Cell::new(0),
            built: 0,
        })
    }

    /// Pages answered from an entry so far.
    pub fn hits(&self) -> u64 {
        self.hits.get()
    }

    /// What the cache holds for `block`, looked up before the block is
    /// read: entries of every column the scan reads answer the block
    /// without reading the page at all (the cache's invariants 1 and 3:
    /// while an entry is held it is the all-visible page's, so every
    /// snapshot sees exactly its tuples).
    #[inline]
    pub fn cached(&self, block: BlockNumber) -> Cached<'_> {
        let Some(slots) = self.reader.slots(block) else {
            return Cached::Miss(self.reader.generation(block));
        };
        let mut cols: [&[i32]; FUSED_MAX] = [&[]; FUSED_MAX];
        let mut rows = usize::MAX;
        for (k, col) in cols[..self.nfused].iter_mut().enumerate() {
            let e = match self.reader.entry(&slots[self.want[k]]) {
                None => return Cached::Miss(self.reader.generation(block)),
                Some(e) if e.declined() || e.tag() != self.tag => return Cached::Declined,
                Some(e) => e,
            };
            // Entries of one block agree on its rows (the cache's
            // invariant 3); a disagreement would be a bug, and reading
            // the page is always right.
            if rows != usize::MAX && e.rows() != rows {
                return Cached::Declined;
            }
            rows = e.rows();
            *col = e.values();
        }
        // The places past the fused layout repeat its first column.
        let first = cols[0];
        cols[self.nfused..].fill(first);
        self.hits.set(self.hits.get() + 1);
        // Scans go up block by block (a parallel one by chunks).
        self.reader
            .prefetch(block.wrapping_add(PREFETCH_BLOCKS), rows, self.read);
        Cached::Hit(Hit { cols, rows })
    }

    /// Reads the packed values of ALL_VISIBLE page `pg` (block `block`,
    /// whose shared lock the caller holds) and stores the entries of the
    /// columns the scan reads with generation `gen` (taken by
    /// [`PackedScan::cached`] before the page was read); returns the
    /// page's rows, whose values [`PackedScan::built_columns`] then gives.
    /// `None` when the fused loop declines the page (remembered too, as
    /// the declined mark).
    pub fn build(
        &mut self,
        block: BlockNumber,
        gen: u64,
        pg: &[u8],
        ahead: Ahead,
    ) -> Result<Option<usize>> {
        let cache = self.rel.packed_cache();
        let Some(n) = fused_page_values(pg, self.natts, &self.layout, &mut self.scratch, ahead)
        else {
            // Declined (a NULL, a short tuple): remembered, so the next
            // scan does not try again.
            if self.rel.vm_all_visible(block)? {
                cache.put(block, gen, Put::Declined);
            }
            return Ok(None);
        };
        // Invariant 1 of the cache: the map bit too, under the page's lock.
        if self.rel.vm_all_visible(block)? {
            let entries = (0..self.layout.len())
                .filter(|&k| self.read & (1 << k) != 0)
                .map(|k| (k, Entry::new(self.tag, &self.scratch[k][..n])))
                .collect();
            if cache.put(block, gen, Put::Columns(entries)) > 0 {
                self.built += 1;
            }
        }
        Ok(Some(n))
    }

    /// As [`Hit::cols`], for the page [`PackedScan::build`] read last (`n`
    /// rows).
    #[inline]
    pub fn built_columns(&self, n: usize) -> [&[i32]; FUSED_MAX] {
        std::array::from_fn(|k| &self.scratch[self.want[k]][..n])
    }
}
