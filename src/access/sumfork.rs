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
//! set. Whoever sets the bit from clear ([`HeapRelation::set_vm_in`]) writes
//! the block's slot (the page's summary, or a zero slot when none is made)
//! in the same logged record as the bit: the `VmSet` carries the slot
//! (compactly encoded, [`pack_slot`]), and redo writes the slot before it
//! sets the bit. Clearing the bit leaves the slot, which is then unused and
//! is rewritten before the bit can be set again. So a set bit always has,
//! as its slot, the summary of the page as it was when the bit was set, and
//! the page has not changed since (any change clears the bit). A reader
//! ([`HeapRelation::read_summaries`]) reads the bit first and the slot
//! second and also requires the slot's live count to equal the map's; any
//! doubt (bit clear, zero slot, counts differ, the summary page unreadable
//! or failing its checksum, a column count or kind that is not the
//! table's now) means no summary: the page is read.
//!
//! # Crash safety without full-page images
//!
//! Summary pages are logged page by page like the map's (each change a
//! record, the page LSN set to it, so the write-ahead rule holds: a summary
//! page reaches disk only after the log up to its last change), but never
//! as full-page images. What protects them instead:
//!
//! 1. *A slot write is blind.* A record overwrites the whole 254-byte slot
//!    and nothing else; it never reads what was there. So replaying every
//!    slot record from the redo point, in log order, onto any page whose
//!    slots are each either their state at some moment or a later one
//!    gives the final state: every slot a record wrote ends with that
//!    record's last write, whatever it held before. Redo therefore applies
//!    slot records *without* the usual "page LSN at or past the record"
//!    skip, which would trust a header that a torn write may have taken
//!    from the newer half of the page.
//! 2. *A torn page is re-initialised, never patched.* A crash may tear a
//!    summary page's write (sectors of the old and the new state). Its
//!    checksum then fails (or, for one in 65,536 tears, passes: see 4).
//!    Redo reads summary pages as PostgreSQL's `RBM_ZERO_ON_ERROR` does:
//!    a page that fails its checksum or header check is zeroed and
//!    initialised, and the record's slot written into it. Every other slot
//!    of that page is then zero, which reads as "nothing known": the heap
//!    pages are scanned until a VACUUM makes their summaries again. Never
//!    a wrong summary, never an error.
//! 3. *Every torn page is seen by redo.* A page is written only when
//!    dirty, and a summary page is dirtied only by a logged slot record
//!    (or by its extension, which writes a page that is all zero but for
//!    its header, so any mix of it and the zeros before it is a valid
//!    page). The checkpoint that recovery starts from wrote every page
//!    dirtied before its redo point and fsynced it before its record; so a
//!    page whose write a crash tore was dirtied again after the redo point,
//!    by a record that redo replays, and redo reads (and so re-initialises)
//!    it before any reader can.
//! 4. *A tear the checksum misses is harmless too.* Each slot of a torn page
//!    holds bytes of its state at the checkpoint or later (the page on disk
//!    had every change before the redo point). A slot whose old and new
//!    states differ was rewritten after the redo point, so (1) replays its
//!    last write over the mix. A slot whose states are equal is right.
//! 5. *The bit never outlives its slot.* The slot travels in the record
//!    that sets the bit (or, when the map page needs its full-page image,
//!    in a `SummarySet` logged just before that image in the same insert:
//!    [`crate::wal::Wal::insert_page_change_carrying`]), so no log prefix
//!    holds the bit without the slot. A map page reaches disk only after
//!    the log up to its LSN, so a set bit on disk has its record in the
//!    log; if that record is before the redo point, its slot was on disk
//!    at the checkpoint, and a later tear of its page leaves it right (4)
//!    or zero (2). A slot is written only while its bit is clear, or
//!    while it is set by a scan filling in a missing summary of the very
//!    page the bit was set for ([`HeapRelation::fill_summary`]), so a
//!    summary page reaching disk ahead of the map cannot pair an old bit
//!    with a new slot either: the bit's clearing precedes the slot write
//!    in the log, and the page carrying the slot waits for the log.
//!
//! A page damaged at run time (not by a crash) is treated the same way by
//! the writer ([`HeapRelation::summary_page_for_write`]): re-initialised,
//! and the slots it held read as "nothing known".
//!
//! Locking: the writer holds the heap page's lock, then the map page's
//! exclusive lock, then the summary page's; readers take the map page's
//! shared lock and release it before taking the summary page's, so they
//! never hold two.

use std::sync::Arc;

use super::heap::tuple::TupleDesc;
use super::heap::HeapRelation;
use super::summary::{summarize, ColumnSummary, SummaryKind};
use super::vm;
use crate::error::{Result, SqlState};
use crate::storage::bufmgr::ReadMode;
use crate::storage::{page, BlockNumber, ForkNumber, PinnedBuffer};

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
    /// The summarised columns' offsets, when fixed (compiled once, for
    /// VACUUM's building of slots inside its pruning walk:
    /// [`super::sumbuild`]).
    pub(crate) layout: Option<super::sumbuild::Layout>,
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
        let layout = super::sumbuild::Layout::of(&desc, &kinds);
        SummarySpec {
            desc,
            kinds,
            layout,
        }
    }
}

/// One decoded slot: the summary of one all-visible heap page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slot {
    /// Live tuples on the page (a slot on disk holds a `u16`; a merge of
    /// many pages' slots may pass it).
    pub live: u32,
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

    /// The summaries of several pages as one: live tuples added, each
    /// column's summaries merged ([`ColumnSummary::merge`]). `None` unless
    /// every entry is a summary and all list the same columns (number and
    /// kind, in the same order) for the same table column count. A
    /// decision taken on the merge holds for each page: its extremes bound
    /// theirs, and its non-null count equals its live count only when each
    /// page's does.
    pub fn merged(slots: &[Option<Slot>]) -> Option<Slot> {
        let (first, rest) = slots.split_first()?;
        let mut m = (*first)?;
        for s in rest {
            let s = s.as_ref()?;
            if s.natts != m.natts || s.n != m.n {
                return None;
            }
            m.live = m.live.checked_add(s.live)?;
            for (a, b) in m.cols[..m.n as usize].iter_mut().zip(&s.cols) {
                if (a.0, a.1) != (b.0, b.1) {
                    return None;
                }
                a.2.merge(&b.2);
                if a.2 == ColumnSummary::None {
                    return None;
                }
            }
        }
        Some(m)
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
        let mut listed = [(0usize, SummaryKind::None, ColumnSummary::None); MAX_COLUMNS];
        let mut n = 0;
        for (i, (k, c)) in kinds.iter().zip(cols).enumerate() {
            if n == MAX_COLUMNS || *k == SummaryKind::None || *c == ColumnSummary::None {
                continue;
            }
            listed[n] = (i, *k, *c);
            n += 1;
        }
        Slot::encode_listed(live, natts, &listed[..n])
    }

    /// [`Slot::encode`] of the summarised columns alone: `(column number,
    /// kind, summary)` in column order, at most [`MAX_COLUMNS`] (more are
    /// left out), none of kind `None`.
    pub fn encode_listed(
        live: u16,
        natts: usize,
        cols: &[(usize, SummaryKind, ColumnSummary)],
    ) -> Vec<u8> {
        let mut out = vec![0u8; SLOT_BYTES];
        out[0] = 1;
        out[2..4].copy_from_slice(&live.to_le_bytes());
        out[4..6].copy_from_slice(&(natts as u16).to_le_bytes());
        let mut n = 0;
        for &(i, k, c) in cols.iter().take(MAX_COLUMNS) {
            let (count, min, max, sum) = match c {
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
            live: u32::from(u16::from_le_bytes([b[2], b[3]])),
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

/// Redo of a slot write onto summary page `p` (module doc, 1 and 2): a page
/// whose header is not a page's is zeroed first; the page is initialised
/// when new; the slot is written whatever the page's LSN. Returns false,
/// writing nothing, when `slot` is not [`SLOT_BYTES`] long.
pub fn redo_slot(p: &mut [u8], heap_block: u32, slot: &[u8]) -> bool {
    if slot.len() != SLOT_BYTES {
        return false;
    }
    if page::verify_header(p).is_err() {
        p.fill(0);
    }
    put_slot(p, heap_block, slot)
}

fn put_varint(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(b: &[u8], at: &mut usize, max: u128) -> Option<u128> {
    let mut v = 0u128;
    for shift in (0..128).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u128::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return (v <= max).then_some(v);
        }
    }
    None
}

fn zigzag(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

fn unzigzag(v: u128) -> i128 {
    ((v >> 1) as i128) ^ -((v & 1) as i128)
}

/// Appends slot `slot` ([`SLOT_BYTES`] long) to `out` in the log's compact
/// form: `0` for a zero slot; `1` and varints for a slot as
/// [`Slot::encode`] makes them (live, column count, then per column its
/// number, kind, count, zigzagged min, max less min, zigzagged sum: a
/// pgbench page's three integer columns take about 25 bytes, not 254);
/// `2` and the raw bytes for anything else. [`unpack_slot`] gives back the
/// same bytes.
pub fn pack_slot(slot: &[u8], out: &mut Vec<u8>) {
    let n = slot.get(1).copied().unwrap_or(0) as usize;
    let used = HEAD_BYTES + n * COLUMN_BYTES;
    if slot.len() == SLOT_BYTES && slot.iter().all(|&b| b == 0) {
        out.push(0);
        return;
    }
    if slot.len() != SLOT_BYTES
        || slot[0] != 1
        || n > MAX_COLUMNS
        || slot[6..8] != [0, 0]
        || slot[used..].iter().any(|&b| b != 0)
    {
        out.push(2);
        out.extend_from_slice(slot);
        return;
    }
    out.push(1);
    let u16_at = |at: usize| u128::from(u16::from_le_bytes([slot[at], slot[at + 1]]));
    let u64_at = |at: usize| {
        u64::from_le_bytes(
            slot[at..at + 8]
                .try_into()
                .expect("eight bytes of the slot"),
        )
    };
    put_varint(out, u16_at(2));
    put_varint(out, u16_at(4));
    out.push(n as u8);
    for j in 0..n {
        let c = HEAD_BYTES + j * COLUMN_BYTES;
        put_varint(out, u16_at(c));
        out.push(slot[c + 2]);
        put_varint(out, u16_at(c + 3));
        let (min, max) = (u64_at(c + 5), u64_at(c + 13));
        put_varint(out, zigzag(i128::from(min as i64)));
        put_varint(out, u128::from(max.wrapping_sub(min)));
        let sum = i128::from_le_bytes(slot[c + 21..c + 37].try_into().expect("sixteen bytes"));
        put_varint(out, zigzag(sum));
    }
}

/// Reads a slot written by [`pack_slot`] from `b` at `*at` (advanced past
/// it): its [`SLOT_BYTES`] bytes, or `None` when `b` does not hold one.
pub fn unpack_slot(b: &[u8], at: &mut usize) -> Option<Vec<u8>> {
    let form = *b.get(*at)?;
    *at += 1;
    let mut out = vec![0u8; SLOT_BYTES];
    match form {
        0 => {}
        2 => {
            out.copy_from_slice(b.get(*at..*at + SLOT_BYTES)?);
            *at += SLOT_BYTES;
        }
        1 => {
            let u16max = u128::from(u16::MAX);
            out[0] = 1;
            let live = get_varint(b, at, u16max)? as u16;
            let natts = get_varint(b, at, u16max)? as u16;
            let n = *b.get(*at)? as usize;
            *at += 1;
            if n > MAX_COLUMNS {
                return None;
            }
            out[1] = n as u8;
            out[2..4].copy_from_slice(&live.to_le_bytes());
            out[4..6].copy_from_slice(&natts.to_le_bytes());
            for j in 0..n {
                let c = HEAD_BYTES + j * COLUMN_BYTES;
                let attno = get_varint(b, at, u16max)? as u16;
                let kind = *b.get(*at)?;
                *at += 1;
                let count = get_varint(b, at, u16max)? as u16;
                let min = unzigzag(get_varint(b, at, u128::MAX)?);
                let min = i64::try_from(min).ok()? as u64;
                let max = min.wrapping_add(u64::try_from(get_varint(b, at, u128::MAX)?).ok()?);
                let sum = unzigzag(get_varint(b, at, u128::MAX)?);
                out[c..c + 2].copy_from_slice(&attno.to_le_bytes());
                out[c + 2] = kind;
                out[c + 3..c + 5].copy_from_slice(&count.to_le_bytes());
                out[c + 5..c + 13].copy_from_slice(&min.to_le_bytes());
                out[c + 13..c + 21].copy_from_slice(&max.to_le_bytes());
                out[c + 21..c + 37].copy_from_slice(&sum.to_le_bytes());
            }
        }
        _ => return None,
    }
    Some(out)
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

    /// Pins summary block `summary_block(block)` for writing heap block
    /// `block`'s slot, extending (and creating) the fork up to it; `None`
    /// when `zero` (a zero slot is to be written) and the fork has no such
    /// page yet: nothing stale can be there. A page that fails its checksum
    /// or header check is zeroed and initialised (module doc: its other
    /// slots read as "nothing known" from then on). The caller holds the
    /// heap page's lock and the map page's exclusive lock.
    pub(crate) fn summary_page_for_write(
        &self,
        block: BlockNumber,
        zero: bool,
    ) -> Result<Option<PinnedBuffer<'_>>> {
        let sb = summary_block(block);
        let pool = self.pool();
        let rel = self.rel();
        let have = pool.relation_exists(rel, ForkNumber::Summary)
            && pool.nblocks(rel, ForkNumber::Summary)? > sb;
        if !have {
            if zero {
                return Ok(None);
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
        let buf = match pool.read_buffer(rel, ForkNumber::Summary, sb, None) {
            Ok(b) => b,
            Err(e) if e.code == SqlState::DataCorrupted => {
                pool.read_buffer_extended(rel, ForkNumber::Summary, sb, ReadMode::ZeroPage, None)?
            }
            Err(e) => return Err(e),
        };
        {
            let mut g = buf.write();
            if page::verify_header(&g[..]).is_err() {
                g.fill(0);
                vm::init_if_new(&mut g[..]);
                g.mark_dirty();
            }
        }
        Ok(Some(buf))
    }

    /// Writes the summary slot of heap block `block`, whose page `p` the
    /// caller holds under its content lock (shared is enough), when the
    /// block's all-visible bit is set and its slot is not the page's
    /// summary: a page made all-visible without one (before summaries
    /// existed, or by a path that makes none) gets it from the first scan
    /// that reads it. Returns whether a slot was written.
    ///
    /// Why a slot may be written while the bit is set (the module doc's
    /// rule has the bit's setter write it): every change of the heap page
    /// clears the bit under the page's exclusive lock, so while the caller
    /// holds the page's lock and the map says the bit is set, the page is
    /// the one the bit was set for, and its summary is the slot's right
    /// content. The write is logged as a `SummarySet` (blind, never an
    /// image: points 1 to 4 hold as for any slot record), ordered in the
    /// log after the bit's `VmSet` and before any clearing of the bit,
    /// which waits for the heap page's lock. Lock order as the writer's:
    /// heap page, map page (shared here), summary page.
    pub fn fill_summary(&self, block: BlockNumber, p: &[u8]) -> Result<bool> {
        let Some(spec) = self.summary_spec() else {
            return Ok(false);
        };
        if !page::is_all_visible(p) {
            return Ok(false);
        }
        let pool = self.pool();
        let rel = self.rel();
        let vb = vm::vm_block(block);
        if vb >= pool.nblocks(rel, ForkNumber::VisibilityMap)? {
            return Ok(false);
        }
        let vbuf = pool.read_buffer(rel, ForkNumber::VisibilityMap, vb, None)?;
        let vg = vbuf.read();
        let (bits, count) = vm::get(&vg[..], block);
        if bits & vm::VM_ALL_VISIBLE == 0 {
            return Ok(false);
        }
        let slot = super::sumbuild::slot_of_page(&spec, p, count);
        if slot.iter().all(|&b| b == 0) {
            return Ok(false);
        }
        let Some(sbuf) = self.summary_page_for_write(block, false)? else {
            return Ok(false);
        };
        let mut sg = sbuf.write();
        if !page::is_new(&sg[..]) && get_slot(&sg[..], block) == &slot[..] {
            return Ok(false);
        }
        put_slot(&mut sg[..], block, &slot);
        sg.mark_dirty();
        self.summary_cache().invalidate_summary(block);
        if let Some(wal) = self.wal() {
            let rec = super::heap::record::HeapRecord::SummarySet {
                heap_block: block,
                slot,
            };
            let at = super::heap::record::PageRef {
                rel: rel.0,
                fork: ForkNumber::Summary as u8,
                block: summary_block(block),
            };
            let lsn = wal.insert_page_change_no_image(0, at, &rec);
            sg.set_lsn(lsn);
            drop(sg);
            drop(vg);
            wal.write_if_full()?;
        }
        Ok(true)
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
            *o = Slot::decode(get_slot(&sg[..], first + i as u32))
                .filter(|s| s.live == u32::from(c));
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
    fn packed_slots_give_back_the_same_bytes() {
        let kinds = [SummaryKind::Int4, SummaryKind::Float8, SummaryKind::Int8];
        let extremes = [
            ColumnSummary::Int {
                count: 291,
                min: i64::MIN,
                max: i64::MAX,
                sum: i128::MIN / 3,
            },
            ColumnSummary::Float {
                count: 1,
                min: f64::NEG_INFINITY,
                max: f64::NAN,
            },
            ColumnSummary::Int {
                count: 0,
                min: 0,
                max: 0,
                sum: 0,
            },
        ];
        let pgbench = [
            ColumnSummary::Int {
                count: 61,
                min: 500_001,
                max: 500_061,
                sum: 30_501_891,
            },
            ColumnSummary::None,
            ColumnSummary::Int {
                count: 61,
                min: -4,
                max: 0,
                sum: -17,
            },
        ];
        let mut junk = vec![9u8; SLOT_BYTES];
        junk[0] = 1;
        let mut slots = vec![
            vec![0u8; SLOT_BYTES],
            Slot::encode(61, 4, &kinds, &extremes),
            Slot::encode(61, 4, &kinds, &pgbench),
            Slot::encode(0, 0, &[], &[]),
            junk,
            vec![1u8; SLOT_BYTES],
        ];
        // Eight columns: the slot keeps six.
        slots.push(Slot::encode(
            3,
            8,
            &[SummaryKind::Int2; 8],
            &[extremes[0]; 8],
        ));
        for slot in &slots {
            let mut b = vec![0xee];
            pack_slot(slot, &mut b);
            b.push(0xdd);
            let mut at = 1;
            assert_eq!(unpack_slot(&b, &mut at).as_ref(), Some(slot));
            assert_eq!(at, b.len() - 1, "consumed exactly the packed slot");
            // Cut short: never a slot.
            for cut in 1..b.len() - 1 {
                let mut at = 1;
                assert_eq!(unpack_slot(&b[..cut], &mut at), None, "cut at {cut}");
            }
        }
        let mut b = Vec::new();
        pack_slot(&slots[2], &mut b);
        assert!(b.len() < 40, "a pgbench-like slot packs small: {}", b.len());
        assert_eq!(unpack_slot(&[7], &mut 0), None, "unknown form");
    }

    #[test]
    fn redo_re_initialises_a_page_that_is_not_one() {
        let slot = Slot::encode(
            2,
            1,
            &[SummaryKind::Int4],
            &[ColumnSummary::Int {
                count: 2,
                min: 1,
                max: 2,
                sum: 3,
            }],
        );
        let mut good = vec![0u8; BLCKSZ];
        assert!(put_slot(&mut good, 40, &slot));
        assert!(redo_slot(&mut good, 41, &slot));
        assert_eq!(Slot::decode(get_slot(&good, 40)).map(|s| s.live), Some(2));
        // Garbage where a header should be (what a torn page may hold once
        // its checksum is not checked): zeroed, initialised, one slot.
        let mut torn = vec![0x5au8; BLCKSZ];
        assert!(redo_slot(&mut torn, 41, &slot));
        page::verify_header(&torn).unwrap();
        assert_eq!(get_slot(&torn, 41), &slot[..]);
        for b in (32..64).filter(|&b| b != 41) {
            assert_eq!(Slot::decode(get_slot(&torn, b)), None, "block {b}");
        }
        assert!(!redo_slot(&mut torn, 41, &slot[1..]));
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
