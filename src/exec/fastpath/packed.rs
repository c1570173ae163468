//! A scan's use of the packed column cache (`access::packed_cache`): on an
//! ALL_VISIBLE page, the values of the table's leading 4-byte integer
//! columns from the page's entry instead of the tuples, or, on a miss, read
//! from the page by the fused column loop
//! ([`super::fixed_scan::fused_page_values`]) and stored for the next scan.
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

use std::sync::Arc;

use crate::access::heap::tuple::TupleDesc;
use crate::access::heap::HeapRelation;
use crate::access::packed_cache::{Lookup, PackedPage, PACKED_MAX};
use crate::error::Result;
use crate::storage::prefetch::Ahead;
use crate::storage::BlockNumber;
use crate::types::DataType;

use super::fixed_scan::{fixed_layout, fused_page_values, FixedColumn, PageColumns, FUSED_MAX};

/// One scan's packed columns and what it took from the cache.
pub struct PackedScan<'r> {
    rel: &'r HeapRelation,
    /// The packed columns' layout (`out` = position among them).
    layout: Vec<FixedColumn>,
    /// The layout's name in entries ([`PackedPage::tag`]).
    tag: u64,
    /// For the scan's fused column `k`: its position among the packed ones.
    want: [usize; FUSED_MAX],
    natts: usize,
    scratch: Box<PageColumns>,
    /// Pages answered from an entry.
    pub hits: u64,
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
        let mut tag = attrs.len() as u64;
        for c in &layout {
            tag = tag.wrapping_mul(0x100_0000_01b3) ^ (c.off as u64 + 1);
        }
        Some(PackedScan {
            rel,
            layout,
            tag,
            want,
            natts: attrs.len(),
            scratch: Box::new([[0; super::fixed_scan::MAX_TUPLES]; FUSED_MAX]),
            hits: 0,
            built: 0,
        })
    }

    /// The packed values of ALL_VISIBLE page `pg` (block `block`, whose
    /// shared lock the caller holds): its entry, or read from the page and
    /// stored. `None` when the fused loop declines the page (remembered
    /// too, as an entry of no columns).
    pub fn page(
        &mut self,
        block: BlockNumber,
        pg: &[u8],
        ahead: Ahead,
    ) -> Result<Option<Arc<PackedPage>>> {
        let cache = self.rel.packed_cache();
        let gen = match cache.get(block) {
            Lookup::Hit(p) if p.tag() == self.tag && p.ncols() > 0 => {
                self.hits += 1;
                return Ok(Some(p));
            }
            Lookup::Hit(_) => return Ok(None),
            Lookup::Miss(gen) => gen,
        };
        let Some(n) = fused_page_values(pg, self.natts, &self.layout, &mut self.scratch, ahead)
        else {
            // Declined (a NULL, a short tuple): remembered as an entry of
            // no columns, so the next scan does not try again.
            let none = Arc::new(PackedPage::new(self.tag, &[], 0));
            if self.rel.vm_all_visible(block)? {
                cache.put(block, gen, none);
            }
            return Ok(None);
        };
        let cols: Vec<&[i32]> = self.scratch[..self.layout.len()]
            .iter()
            .map(|c| &c[..])
            .collect();
        let p = Arc::new(PackedPage::new(self.tag, &cols, n));
        // Invariant 1 of the cache: the map bit too, under the page's lock.
        if self.rel.vm_all_visible(block)? && cache.put(block, gen, p.clone()) {
            self.built += 1;
        }
        Ok(Some(p))
    }

    /// The scan's fused columns' values on `p`, in the order of its fused
    /// layout (the places past it repeat the first packed column).
    #[inline]
    pub fn columns<'p>(&self, p: &'p PackedPage) -> [&'p [i32]; FUSED_MAX] {
        std::array::from_fn(|k| p.column(self.want[k]))
    }
}
