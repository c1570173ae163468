//! A scan's use of the packed column cache (`access::packed_cache`): a
//! block with an entry is answered from it before the scan reads the
//! page (no pin, no page lock, no page header touched: the values of the
//! table's leading 4-byte integer columns, 4 bytes each); a block without
//! one is read, and when it is ALL_VISIBLE its values are read by the
//! fused column loop ([`super::fixed_scan::fused_page_values`]) and
//! stored for the next scan.
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
use crate::access::packed_cache::{Entry, Lookup, PackedPage, Reader, PACKED_MAX};
use crate::error::Result;
use crate::storage::prefetch::Ahead;
use crate::storage::BlockNumber;
use crate::types::DataType;

use super::fixed_scan::{fixed_layout, fused_page_values, FixedColumn, PageColumns, FUSED_MAX};

/// How many blocks ahead of a hit the scan prefetches its entry.
const PREFETCH_BLOCKS: BlockNumber = 3;

/// What the cache holds for a block ([`PackedScan::cached`]).
pub enum Cached<'p> {
    /// The page's packed columns, in this scan's layout.
    Hit(&'p PackedPage),
    /// An entry that does not serve: the fused loop declined the page, or
    /// the entry was made for another layout. The page is read.
    Declined,
    /// No entry: the page is read, and its entry built
    /// ([`PackedScan::build`]) with this generation.
    Miss(u64),
}

impl Cached<'_> {
    /// What was found, without the entry (which a caller that must read
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
    /// The packed columns the scan reads, a bit each (what it prefetches).
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
        let attrs = desc.attrs();
        let mut packed = Vec::new();
        for (i, a) in attrs.iter().enumerate() {
            if a.len < 0 || packed.len() == PACKED_MAX {
                break;
            }
            if matches!(types.get(i), Some(DataType::Int4 | DataType::Date)) {
                packed.push(i);
            }
        }
        let ptypes: Vec<DataType> = packed.iter().map(|&i| types[i]).collect();
        let layout = fixed_layout(desc, &packed, &ptypes)?;
        let mut want = [0; FUSED_MAX];
        for (k, c) in fixed.iter().enumerate() {
            want[k] = packed.iter().position(|&p| p == columns[c.out])?;
        }
        let read = want[..fixed.len()].iter().fold(0, |m, &w| m | 1 << w);
        let mut tag = attrs.len() as u64;
        for c in &layout {
            tag = tag.wrapping_mul(0x100_0000_01b3) ^ (c.off as u64 + 1);
        }
        Some(PackedScan {
            rel,
            reader: rel.packed_cache().reader(),
            layout,
            tag,
            want,
            read,
            natts: attrs.len(),
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
    /// read: an entry answers the block without reading the page at all
    /// (the cache's invariant 1: while the entry is held the page is
    /// all-visible and unchanged, so every snapshot sees exactly its
    /// tuples).
    #[inline]
    pub fn cached(&self, block: BlockNumber) -> Cached<'_> {
        match self.reader.get(block) {
            Lookup::Hit(p) if p.tag() == self.tag && p.ncols() > 0 => {
                self.hits.set(self.hits.get() + 1);
                // Scans go up block by block (a parallel one by chunks).
                self.reader
                    .prefetch(block.wrapping_add(PREFETCH_BLOCKS), p.rows(), self.read);
                Cached::Hit(p)
            }
            Lookup::Hit(_) => Cached::Declined,
            Lookup::Miss(gen) => Cached::Miss(gen),
        }
    }

    /// Reads the packed values of ALL_VISIBLE page `pg` (block `block`,
    /// whose shared lock the caller holds) and stores them with
    /// generation `gen` (taken by [`PackedScan::cached`] before the page
    /// was read); returns the page's rows, whose values
    /// [`PackedScan::built_columns`] then gives. `None` when the fused
    /// loop declines the page (remembered too, as an entry of no columns).
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
            // Declined (a NULL, a short tuple): remembered as an entry of
            // no columns, so the next scan does not try again.
            if self.rel.vm_all_visible(block)? {
                cache.put(block, gen, Entry::new(self.tag, &[], 0));
            }
            return Ok(None);
        };
        let cols: Vec<&[i32]> = self.scratch[..self.layout.len()]
            .iter()
            .map(|c| &c[..])
            .collect();
        let e = Entry::new(self.tag, &cols, n);
        // Invariant 1 of the cache: the map bit too, under the page's lock.
        if self.rel.vm_all_visible(block)? && cache.put(block, gen, e) {
            self.built += 1;
        }
        Ok(Some(n))
    }

    /// The scan's fused columns' values on `p`, in the order of its fused
    /// layout (the places past it repeat the first packed column).
    #[inline]
    pub fn columns<'p>(&self, p: &'p PackedPage) -> [&'p [i32]; FUSED_MAX] {
        std::array::from_fn(|k| p.column(self.want[k]))
    }

    /// As [`PackedScan::columns`], for the page [`PackedScan::build`] read
    /// last (`n` rows).
    #[inline]
    pub fn built_columns(&self, n: usize) -> [&[i32]; FUSED_MAX] {
        std::array::from_fn(|k| &self.scratch[self.want[k]][..n])
    }
}
