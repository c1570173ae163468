//! The summary fork: where the page summaries of [`super::summary`] are kept
//! beside the visibility map, one fixed-size slot per heap block, in the
//! relation's `_sum` fork (standard pages in the buffer pool, with an LSN and
//! a checksum, as the map's).
//!
//! Layout of a summary page:
//!
//! ```text
//!  0          24                                              8152   8192
//!  +----------+-----------------------------------------------+------+
//!  | header   | slots: 32 x 254 bytes                         | zero |
//!  +----------+-----------------------------------------------+------+
//! ```
//!
//! Heap block `b` has slot `b % 32` of summary block `b / 32`. A slot:
//!
//! ```text
//!  byte 0     1 = a summary, 0 = none (a zero slot is "nothing known")
//!  byte 1     n: summarised columns that follow (at most 6)
//!  2..4       live tuples (u16), as the map's count beside the bit
//!  4..6       the table's number of columns when the summary was made
//!  6..8       zero
//!  then n x 37 bytes: column number (u16), kind (u8, `SummaryKind`),
//!  non-null count (u16), min (i64 or f64 bits), max, sum (i128; 0 for floats)
//! ```
//!
//! # Validity (the one rule)
//!
//! A slot describes its heap page only while the page's all-visible bit is
//! set. Whoever sets the bit from clear ([`HeapRelation::set_vm_in`]) first
//! writes the block's slot (the page's summary, or a zero slot when none is
//! made) through a logged [`HeapRecord::SummarySet`], then the `VmSet`;
//! clearing the bit leaves the slot, which is then unused and is rewritten
//! before the bit can be set again. So a set bit always has, as its slot,
//! the summary of the page as it was when the bit was set, and the page has
//! not changed since (any change clears the bit). A reader
//! ([`HeapRelation::read_summaries`]) reads the bit first and the slot
//! second and also requires the slot's live count to equal the map's; any
//! doubt (bit clear, zero slot, counts differ, the summary page unreadable
//! or failing its checksum, a column count or kind that is not the
//! table's now) means no summary: the page is read.
//!
//! Crash safety: the `SummarySet` precedes the `VmSet` in the log, and a
//! map page reaches disk only after the log up to its LSN, so whenever redo
//! finds a bit set it has replayed (or finds on disk) the slot written
//! before it. Summary pages get full-page images after a checkpoint as
//! every logged page does.
//!
//! Locking: the writer holds the heap page's lock, then the map page's
//! exclusive lock, then the summary page's; readers take the map page's
//! shared lock and release it before taking the summary page's, so they
//! never hold two.

use std::sync::Arc;

use super::heap::record::HeapRecord;
use super::heap::tuple::TupleDesc;
use super::heap::HeapRelation;
use super::summary::{summarize, ColumnSummary, SummaryKind};
use super::vm;
use crate::error::Result;
use crate::storage::{page, BlockNumber, ForkNumber};

/// Heap blocks covered by one summary page.
pub const BLOCKS_PER_PAGE: u32 = 32;
/// Bytes of one slot.
pub const SLOT_BYTES: usize = 254;
/// Summarised columns a slot has room for: the first ones of a table.
pub const MAX_COLUMNS: usize = 6;

const SLOTS_AT: usize = page::PAGE_HEADER_SIZE;
const HEAD_BYTES: usize = 8;
const COLUMN_BYTES: usize = 37;
const _: () = assert!(HEAD_BYTES + MAX_COLUMNS * COLUMN_BYTES <= SLOT_BYTES);
const _: () = assert!(SLOTS_AT + BLOCKS_PER_PAGE as usize * SLOT_BYTES <= crate::storage::BLCKSZ);
// A window of slots never straddles two map pages.
const _: () = assert!(vm::HEAPBLOCKS_PER_PAGE % BLOCKS_PER_PAGE == 0);

/// The summary block that holds heap block `heap_block`'s slot.
#[inline]
pub fn summary_block(heap_block: u32) -> u32 {
    heap_block / BLOCKS_PER_PAGE
}

fn slot_at(heap_block: u32) -> usize {
    SLOTS_AT + (heap_block % BLOCKS_PER_PAGE) as usize * SLOT_BYTES
}

/// Writes heap block `heap_block`'s slot on summary page `p` (initialised
/// first when new). Returns false, writing nothing, when `slot` is not
/// [`SLOT_BYTES`] long.
pub fn put_slot(p: &mut [u8], heap_block: u32, slot: &[u8]) -> bool {
    if slot.len() != SLOT_BYTES {
        return false;
    }
    vm::init_if_new(p);
    let at = slot_at(heap_block);
    p[at..at + SLOT_BYTES].copy_from_slice(slot);
    true
}

/// Heap block `heap_block`'s slot bytes on summary page `p`.
pub fn get_slot(p: &[u8], heap_block: u32) -> &[u8] {
    let at = slot_at(heap_block);
    &p[at..at + SLOT_BYTES]
}

/// How a table's columns are summarised: its tuple layout and, per column,
/// the kind (at most [`MAX_COLUMNS`] of them other than `None`). Given to
/// the relation by whoever knows its catalog entry
/// ([`HeapRelation::set_summary_spec`]).
#[derive(Debug, Clone)]
pub struct SummarySpec {
    /// The tuples' layout.
    pub desc: TupleDesc,
    /// Each column's kind.
    pub kinds: Vec<SummaryKind>,
}

impl SummarySpec {
    /// The spec of a table whose columns have `types`, in order.
    pub fn of_types(types: &[crate::types::DataType]) -> Result<SummarySpec> {
        let desc = super::heap::tuple::desc_of_types(types)?;
        let kinds = types.iter().map(SummaryKind::of).collect();
        Ok(SummarySpec::new(desc, kinds))
    }

    /// A spec of `desc` with `kinds`, keeping only the first
    /// [`MAX_COLUMNS`] summarised columns.
    pub fn new(desc: TupleDesc, mut kinds: Vec<SummaryKind>) -> SummarySpec {
        let mut seen = 0;
        for k in kinds.iter_mut() {
            if *k != SummaryKind::None {
                seen += 1;
                if seen > MAX_COLUMNS {
                    *k = SummaryKind::None;
                }
            }
        }
        kinds.resize(desc.len(), SummaryKind::None);
        SummarySpec { desc, kinds }
    }
}

/// One decoded slot: the summary of one all-visible heap page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    /// Live tuples on the page.
    pub live: u16,
    /// The table's column count when the summary was made.
    pub natts: u16,
    /// Summarised columns: (column number, kind, summary); `n` used.
    cols: [(u16, SummaryKind, ColumnSummary); MAX_COLUMNS],
    n: u8,
}

impl Slot {
    /// The summary of column `attno`, when the slot has it as `kind`.
    #[inline]
    pub fn column(&self, attno: usize, kind: SummaryKind) -> Option<&ColumnSummary> {
        self.cols[..self.n as usize]
            .iter()
            .find(|c| c.0 as usize == attno && c.1 == kind)
            .map(|c| &c.2)
    }

    /// The slot's bytes for the summary of a page with `live` tuples of a
    /// table of `natts` columns, whose column `i` has summary `cols[i]`
    /// (columns not summarised left out).
    pub fn encode(
        live: u16,
        natts: usize,
        kinds: &[SummaryKind],
        cols: &[ColumnSummary],
    ) -> Vec<u8> {
        let mut out = vec![0u8; SLOT_BYTES];
        out[0] = 1;
        out[2..4].copy_from_slice(&live.to_le_bytes());
        out[4..6].copy_from_slice(&(natts as u16).to_le_bytes());
        let mut n = 0;
        for (i, (k, c)) in kinds.iter().zip(cols).enumerate() {
            let (count, min, max, sum) = match *c {
                ColumnSummary::None => continue,
                ColumnSummary::Int {
                    count,
                    min,
                    max,
                    sum,
                } => (count, min.to_le_bytes(), max.to_le_bytes(), sum),
                ColumnSummary::Float { count, min, max } => {
                    (count, min.to_le_bytes(), max.to_le_bytes(), 0)
                }
            };
            if n == MAX_COLUMNS || *k == SummaryKind::None {
                continue;
            }
            let at = HEAD_BYTES + n * COLUMN_BYTES;
            let b = &mut out[at..at + COLUMN_BYTES];
            b[0..2].copy_from_slice(&(i as u16).to_le_bytes());
            b[2] = k.code();
            // A page's count fits: at most MaxHeapTuplesPerPage values.
            b[3..5].copy_from_slice(&(count.min(u64::from(u16::MAX)) as u16).to_le_bytes());
            b[5..13].copy_from_slice(&min);
            b[13..21].copy_from_slice(&max);
            b[21..37].copy_from_slice(&sum.to_le_bytes());
            n += 1;
        }
        out[1] = n as u8;
        out
    }

    /// Decodes a slot written by [`Slot::encode`]; `None` for a zero slot
    /// or bytes that are not a slot.
    pub fn decode(b: &[u8]) -> Option<Slot> {
        if b.len() != SLOT_BYTES || b[0] != 1 || b[1] as usize > MAX_COLUMNS {
            return None;
        }
        let n = b[1] as usize;
        let mut cols = [(0u16, SummaryKind::None, ColumnSummary::None); MAX_COLUMNS];
        for (j, col) in cols.iter_mut().enumerate().take(n) {
            let c = &b[HEAD_BYTES + j * COLUMN_BYTES..HEAD_BYTES + (j + 1) * COLUMN_BYTES];
            let kind = SummaryKind::from_code(c[2])?;
            let count = u64::from(u16::from_le_bytes([c[3], c[4]]));
            let eight = |at: usize| -> [u8; 8] { c[at..at + 8].try_into().unwrap_or([0; 8]) };
            let summary = match kind {
                SummaryKind::None => return None,
                SummaryKind::Float4 | SummaryKind::Float8 => ColumnSummary::Float {
                    count,
                    min: f64::from_le_bytes(eight(5)),
                    max: f64::from_le_bytes(eight(13)),
                },
                _ => ColumnSummary::Int {
                    count,
                    min: i64::from_le_bytes(eight(5)),
                    max: i64::from_le_bytes(eight(13)),
                    sum: i128::from_le_bytes(c[21..37].try_into().unwrap_or([0; 16])),
                },
            };
            *col = (u16::from_le_bytes([c[0], c[1]]), kind, summary);
        }
        Some(Slot {
            live: u16::from_le_bytes([b[2], b[3]]),
            natts: u16::from_le_bytes([b[4], b[5]]),
            cols,
            n: n as u8,
        })
    }
}

/// The slot for heap page `p` (all-visible, `count` live tuples) under
/// `spec`: its summary, or a zero slot when there is no spec, nothing is
/// summarised, or the page does not summarise to `count` live tuples.
pub fn slot_for_page(spec: Option<&SummarySpec>, p: &[u8], count: u16) -> Vec<u8> {
    let zero = || vec![0u8; SLOT_BYTES];
    let Some(spec) = spec else { return zero() };
    if spec.kinds.iter().all(|k| *k == SummaryKind::None) {
        return zero();
    }
    match summarize(p, &spec.desc, &spec.kinds) {
        Ok(s) if s.live == count => Slot::encode(s.live, spec.desc.len(), &spec.kinds, &s.columns),
        _ => zero(),
    }
}

impl HeapRelation {
    /// Tells the relation how its columns are summarised from now on
    /// (`None`: not at all). Pages made all-visible later get summaries
    /// under it; existing slots carry their own column count and kinds,
    /// which readers check.
    pub fn set_summary_spec(&self, spec: Option<SummarySpec>) {
        *self
            .summary_spec
            .write()
            .expect("summary spec lock poisoned") = spec.map(Arc::new);
    }

    /// The current summary spec, if any.
    pub fn summary_spec(&self) -> Option<Arc<SummarySpec>> {
        self.summary_spec
            .read()
            .expect("summary spec lock poisoned")
            .clone()
    }

    /// Writes heap block `block`'s slot (`slot`, [`SLOT_BYTES`] long) before
    /// its all-visible bit is set; the caller holds the heap page's lock and
    /// the map page's exclusive lock. A zero slot where the fork has no
    /// page yet is not written: nothing stale can be there.
    pub(crate) fn write_summary_slot(&self, block: BlockNumber, slot: &[u8]) -> Result<()> {
        let sb = summary_block(block);
        let pool = self.pool();
        let rel = self.rel();
        let zero = slot.iter().all(|&b| b == 0);
        let have = pool.relation_exists(rel, ForkNumber::Summary)
            && pool.nblocks(rel, ForkNumber::Summary)? > sb;
        if !have {
            if zero {
                return Ok(());
            }
            let _extending = self
                .summary_extension
                .lock()
                .expect("summary extension mutex poisoned");
            if !pool.relation_exists(rel, ForkNumber::Summary) {
                pool.create_relation(rel, ForkNumber::Summary)?;
            }
            while pool.nblocks(rel, ForkNumber::Summary)? <= sb {
                let (_, buf) = pool.extend(rel, ForkNumber::Summary, None)?;
                let mut g = buf.write();
                vm::init_if_new(&mut g[..]);
                g.mark_dirty();
            }
        }
        let buf = pool.read_buffer(rel, ForkNumber::Summary, sb, None)?;
        let mut g = buf.write();
        if !page::is_new(&g[..]) && get_slot(&g[..], block) == slot {
            return Ok(());
        }
        self.log_apply(
            ForkNumber::Summary,
            sb,
            &mut g,
            &HeapRecord::SummarySet {
                heap_block: block,
                slot: slot.to_vec(),
            },
            0,
        )
    }

    /// The valid summaries of heap blocks `first..end` (within one summary
    /// page: `first / 32 == (end - 1) / 32`), into `out` (one entry per
    /// block, `None` where the page must be read): see the module doc's
    /// validity rule. A summary page that cannot be read (a checksum
    /// failure, say) gives `None` for all its blocks: it is never trusted,
    /// and the heap pages are read instead.
    pub fn read_summaries(
        &self,
        first: BlockNumber,
        end: BlockNumber,
        out: &mut Vec<Option<Slot>>,
    ) -> Result<()> {
        out.clear();
        out.resize((end - first) as usize, None);
        debug_assert!(end > first && summary_block(first) == summary_block(end - 1));
        let (pool, rel) = (self.pool(), self.rel());
        let vb = vm::vm_block(first);
        if vb >= pool.nblocks(rel, ForkNumber::VisibilityMap)? {
            return Ok(());
        }
        let mut counts = [None; BLOCKS_PER_PAGE as usize];
        {
            let vbuf = pool.read_buffer(rel, ForkNumber::VisibilityMap, vb, None)?;
            let vg = vbuf.read();
            for b in first..end {
                let (bits, c) = vm::get(&vg[..], b);
                if bits & vm::VM_ALL_VISIBLE != 0 {
                    counts[(b - first) as usize] = Some(c);
                }
            }
        }
        if counts.iter().all(Option::is_none) {
            return Ok(());
        }
        let sb = summary_block(first);
        if !pool.relation_exists(rel, ForkNumber::Summary)
            || pool.nblocks(rel, ForkNumber::Summary)? <= sb
        {
            return Ok(());
        }
        let Ok(sbuf) = pool.read_buffer(rel, ForkNumber::Summary, sb, None) else {
            return Ok(());
        };
        let sg = sbuf.read();
        if page::is_new(&sg[..]) || page::verify_header(&sg[..]).is_err() {
            return Ok(());
        }
        for (i, o) in out.iter_mut().enumerate() {
            let Some(c) = counts[i] else { continue };
            *o = Slot::decode(get_slot(&sg[..], first + i as u32)).filter(|s| s.live == c);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::BLCKSZ;

    #[test]
    fn slots_round_trip_and_neighbours_stay() {
        let kinds = [SummaryKind::Int4, SummaryKind::None, SummaryKind::Float8];
        let cols = [
            ColumnSummary::Int {
                count: 3,
                min: -5,
                max: 9,
                sum: 7,
            },
            ColumnSummary::None,
            ColumnSummary::Float {
                count: 2,
                min: -0.5,
                max: f64::NAN,
            },
        ];
        let slot = Slot::encode(4, 3, &kinds, &cols);
        let mut p = vec![0u8; BLCKSZ];
        assert!(put_slot(&mut p, 33, &slot));
        page::verify_header(&p).unwrap();
        let s = Slot::decode(get_slot(&p, 33)).unwrap();
        assert_eq!((s.live, s.natts), (4, 3));
        assert_eq!(s.column(0, SummaryKind::Int4), Some(&cols[0]));
        assert_eq!(s.column(0, SummaryKind::Int8), None, "kind checked");
        assert_eq!(s.column(1, SummaryKind::Int4), None);
        match s.column(2, SummaryKind::Float8) {
            Some(ColumnSummary::Float { count, min, max }) => {
                assert_eq!((*count, *min), (2, -0.5));
                assert!(max.is_nan());
            }
            other => panic!("{other:?}"),
        }
        for b in [32, 34, 63] {
            assert_eq!(Slot::decode(get_slot(&p, b)), None, "block {b}");
        }
        assert!(put_slot(&mut p, 33, &[0; SLOT_BYTES]));
        assert_eq!(Slot::decode(get_slot(&p, 33)), None);
        assert!(!put_slot(&mut p, 1, &[0; 3]));
    }

    #[test]
    fn spec_keeps_the_first_six_columns() {
        let desc = TupleDesc::new(vec![
            crate::access::heap::tuple::Attr { len: 4, align: 4 };
            8
        ])
        .unwrap();
        let spec = SummarySpec::new(desc, vec![SummaryKind::Int4; 8]);
        assert_eq!(
            spec.kinds
                .iter()
                .filter(|k| **k != SummaryKind::None)
                .count(),
            MAX_COLUMNS
        );
        assert_eq!(spec.kinds[6], SummaryKind::None);
    }
}
