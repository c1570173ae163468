//! The slotted page: the 8 KiB layout every heap and visibility-map page uses.
//!
//! ```text
//!  0        8    10    12    14    16      18      20        24
//!  +--------+----+-----+-----+-----+-------+-------+---------+----------------+
//!  | lsn    |csum|flags|lower|upper|special|version|prune_xid| line pointers  |
//!  +--------+----+-----+-----+-----+-------+-------+---------+----------------+
//!  | lp 1 | lp 2 | ... | lp n |  -> lower          free space         upper <- |
//!  +----------------------------------------------------------+---------------+
//!  |                           ... tuple n | ... | tuple 2 | tuple 1 | special |
//!  +---------------------------------------------------------------------------+
//! ```
//!
//! All fields are little-endian. Line pointers are 4 bytes each and grow up
//! from offset 24; `lower` is the end of the line-pointer array. Tuples grow
//! down from `special` and start at 8-byte aligned offsets; `upper` is the
//! start of the lowest tuple. Free space is `upper - lower`.
//!
//! A line pointer packs `offset:15 | flags:2 | length:15` into a `u32`
//! (PostgreSQL's `ItemIdData`). Its flags say what the slot holds:
//! [`LP_UNUSED`] (free for reuse), [`LP_NORMAL`] (a tuple at `offset` of
//! `length` bytes), [`LP_REDIRECT`] (the head of a HOT chain moved: `offset`
//! is the line pointer number the chain continues at) and [`LP_DEAD`] (the
//! tuple is gone, the slot is kept until indexes could not point at it).
//! Line pointers are numbered from 1 (an [`OffsetNumber`]); a tuple id is a
//! block number and such an offset, so a line pointer never moves while a
//! tuple may be relocated within its page by [`repair_fragmentation`].
//!
//! A page of all zero bytes is a valid *new* page: never initialised, it has
//! `upper == 0` and [`is_new`] is true. The checksum (bytes 8..10) belongs to
//! the buffer manager, which computes it before writing and verifies it after
//! reading; nothing in this module reads or writes those bytes.
//!
//! Functions here work on plain `&[u8]` / `&mut [u8]` slices of [`BLCKSZ`]
//! bytes so they can be used on buffer-pool frames, WAL full-page images and
//! test pages alike. They trust the header of an initialised page only after
//! [`verify_header`]; callers that read pages from disk check it once per read
//! and every accessor still bounds-checks its slice (a corrupt page gives an
//! error or a panic-free `None`, never memory unsafety).
//!
//! Locking: none here. Callers hold the buffer's content lock (shared to read,
//! exclusive to change) as the buffer manager's rules say.

use crate::err;
use crate::error::Result;
use crate::storage::BLCKSZ;

/// A line pointer number within a page, starting at 1.
pub type OffsetNumber = u16;

/// Size of the page header in bytes.
pub const PAGE_HEADER_SIZE: usize = 24;
/// Size of one line pointer in bytes.
pub const ITEM_ID_SIZE: usize = 4;
/// Alignment of tuples on the page (PostgreSQL's `MAXALIGN`).
pub const MAXALIGN: usize = 8;
/// The page layout version written by [`init`].
pub const PAGE_LAYOUT_VERSION: u16 = 1;

/// Header flag: some line pointers are [`LP_UNUSED`] and can be reused.
pub const PD_HAS_FREE_LINES: u16 = 0x0001;
/// Header flag: the last update did not find enough room (pruning hint).
pub const PD_PAGE_FULL: u16 = 0x0002;
/// Header flag: every tuple on the page is visible to every snapshot.
pub const PD_ALL_VISIBLE: u16 = 0x0004;

/// Line pointer flag: unused, free for reuse.
pub const LP_UNUSED: u8 = 0;
/// Line pointer flag: points at a tuple.
pub const LP_NORMAL: u8 = 1;
/// Line pointer flag: HOT redirect to another line pointer of this page.
pub const LP_REDIRECT: u8 = 2;
/// Line pointer flag: dead, no storage.
pub const LP_DEAD: u8 = 3;

/// The largest tuple that fits on an empty page with one line pointer
/// (rounded down to [`MAXALIGN`], since tuples start aligned).
pub const MAX_ITEM_SIZE: usize = (BLCKSZ - PAGE_HEADER_SIZE - ITEM_ID_SIZE) & !(MAXALIGN - 1);

/// Rounds `n` up to a multiple of [`MAXALIGN`].
#[inline]
pub const fn maxalign(n: usize) -> usize {
    (n + MAXALIGN - 1) & !(MAXALIGN - 1)
}

/// One decoded line pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemId {
    /// Byte offset of the tuple (NORMAL) or the redirect target (REDIRECT).
    pub off: u16,
    /// One of [`LP_UNUSED`], [`LP_NORMAL`], [`LP_REDIRECT`], [`LP_DEAD`].
    pub flags: u8,
    /// Length of the tuple in bytes (NORMAL), otherwise 0.
    pub len: u16,
}

impl ItemId {
    /// Unpacks the on-page `u32`.
    #[inline]
    pub fn from_raw(raw: u32) -> ItemId {
        ItemId {
            off: (raw & 0x7fff) as u16,
            flags: ((raw >> 15) & 0x3) as u8,
            len: (raw >> 17) as u16,
        }
    }

    /// Packs into the on-page `u32`.
    #[inline]
    pub fn to_raw(self) -> u32 {
        (self.off as u32 & 0x7fff) | ((self.flags as u32 & 0x3) << 15) | ((self.len as u32) << 17)
    }

    /// True for a line pointer that points at a tuple.
    #[inline]
    pub fn is_normal(self) -> bool {
        self.flags == LP_NORMAL
    }

    /// The flag's name as the inspection API prints it.
    pub fn flag_name(self) -> &'static str {
        match self.flags {
            LP_UNUSED => "UNUSED",
            LP_NORMAL => "NORMAL",
            LP_REDIRECT => "REDIRECT",
            _ => "DEAD",
        }
    }
}

#[inline]
fn rd16(p: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([p[at], p[at + 1]])
}

#[inline]
fn wr16(p: &mut [u8], at: usize, v: u16) {
    p[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

/// The page LSN (bytes 0..8).
#[inline]
pub fn lsn(p: &[u8]) -> u64 {
    u64::from_le_bytes(p[0..8].try_into().expect("8-byte slice"))
}
/// Sets the page LSN.
#[inline]
pub fn set_lsn(p: &mut [u8], lsn: u64) {
    p[0..8].copy_from_slice(&lsn.to_le_bytes());
}
/// The stored checksum (bytes 8..10); read-only here, owned by the buffer manager.
#[inline]
pub fn checksum(p: &[u8]) -> u16 {
    rd16(p, 8)
}
/// The header flags (`PD_*`).
#[inline]
pub fn flags(p: &[u8]) -> u16 {
    rd16(p, 10)
}
/// Replaces the header flags.
#[inline]
pub fn set_flags(p: &mut [u8], f: u16) {
    wr16(p, 10, f)
}
/// End of the line-pointer array.
#[inline]
pub fn lower(p: &[u8]) -> u16 {
    rd16(p, 12)
}
/// Start of the tuple area.
#[inline]
pub fn upper(p: &[u8]) -> u16 {
    rd16(p, 14)
}
/// Start of the special area (== BLCKSZ when there is none).
#[inline]
pub fn special(p: &[u8]) -> u16 {
    rd16(p, 16)
}
/// Layout version.
#[inline]
pub fn version(p: &[u8]) -> u16 {
    rd16(p, 18)
}
/// Oldest xid that may be prunable on this page, 0 if none.
#[inline]
pub fn prune_xid(p: &[u8]) -> u32 {
    u32::from_le_bytes(p[20..24].try_into().expect("4-byte slice"))
}
/// Sets the prune hint xid.
#[inline]
pub fn set_prune_xid(p: &mut [u8], xid: u32) {
    p[20..24].copy_from_slice(&xid.to_le_bytes());
}
fn set_lower(p: &mut [u8], v: u16) {
    wr16(p, 12, v)
}
fn set_upper(p: &mut [u8], v: u16) {
    wr16(p, 14, v)
}

/// True when the page's ALL_VISIBLE flag is set.
#[inline]
pub fn is_all_visible(p: &[u8]) -> bool {
    flags(p) & PD_ALL_VISIBLE != 0
}
/// Sets the ALL_VISIBLE flag.
pub fn set_all_visible(p: &mut [u8]) {
    set_flags(p, flags(p) | PD_ALL_VISIBLE)
}
/// Clears the ALL_VISIBLE flag.
pub fn clear_all_visible(p: &mut [u8]) {
    set_flags(p, flags(p) & !PD_ALL_VISIBLE)
}

/// True for a never-initialised (all-zero header) page.
#[inline]
pub fn is_new(p: &[u8]) -> bool {
    upper(p) == 0
}

/// Initialises an empty page with `special_size` bytes of special space.
/// The LSN and checksum bytes are left as they are.
pub fn init(p: &mut [u8], special_size: usize) {
    assert_eq!(p.len(), BLCKSZ, "a page is BLCKSZ bytes");
    let special = BLCKSZ - maxalign(special_size);
    p[10..].fill(0);
    set_lower(p, PAGE_HEADER_SIZE as u16);
    set_upper(p, special as u16);
    wr16(p, 16, special as u16);
    wr16(p, 18, PAGE_LAYOUT_VERSION);
}

/// Checks that an initialised page's header is self-consistent, so that the
/// accessors below cannot be led out of bounds by a corrupt page. A new
/// (all-zero) page passes.
pub fn verify_header(p: &[u8]) -> Result<()> {
    if p.len() != BLCKSZ {
        return Err(err!(
            DataCorrupted,
            "page has {} bytes, expected {}",
            p.len(),
            BLCKSZ
        ));
    }
    if is_new(p) {
        return Ok(());
    }
    let (lo, up, sp) = (lower(p) as usize, upper(p) as usize, special(p) as usize);
    if lo < PAGE_HEADER_SIZE
        || (lo - PAGE_HEADER_SIZE) % ITEM_ID_SIZE != 0
        || lo > up
        || up > sp
        || sp > BLCKSZ
        || version(p) != PAGE_LAYOUT_VERSION
    {
        return Err(err!(
            DataCorrupted,
            "page header is corrupted: lower = {lo}, upper = {up}, special = {sp}"
        ));
    }
    Ok(())
}

/// Number of line pointers (the highest [`OffsetNumber`] in use).
#[inline]
pub fn max_offset(p: &[u8]) -> OffsetNumber {
    let lo = lower(p) as usize;
    if lo <= PAGE_HEADER_SIZE {
        return 0;
    }
    ((lo - PAGE_HEADER_SIZE) / ITEM_ID_SIZE) as OffsetNumber
}

/// The line pointer at `off` (1-based). Panics when `off` is out of range;
/// see [`max_offset`].
#[inline]
pub fn item_id(p: &[u8], off: OffsetNumber) -> ItemId {
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * ITEM_ID_SIZE;
    ItemId::from_raw(u32::from_le_bytes(
        p[at..at + 4].try_into().expect("4-byte slice"),
    ))
}

/// Overwrites the line pointer at `off`.
#[inline]
pub fn set_item_id(p: &mut [u8], off: OffsetNumber, id: ItemId) {
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * ITEM_ID_SIZE;
    p[at..at + 4].copy_from_slice(&id.to_raw().to_le_bytes());
}

/// The line pointer at `off` when it is in range of both the header's
/// `lower` and the page (so a corrupt header cannot cause a panic).
#[inline]
fn checked_item_id(p: &[u8], off: OffsetNumber) -> Option<ItemId> {
    if off == 0 || off > max_offset(p) {
        return None;
    }
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * ITEM_ID_SIZE;
    let raw = p.get(at..at + ITEM_ID_SIZE)?;
    Some(ItemId::from_raw(u32::from_le_bytes(
        raw.try_into().expect("4-byte slice"),
    )))
}

/// The bytes of the tuple at `off`, or `None` when the line pointer is out of
/// range, not NORMAL, or points outside the page.
#[inline]
pub fn get_item(p: &[u8], off: OffsetNumber) -> Option<&[u8]> {
    let id = checked_item_id(p, off)?;
    if id.flags != LP_NORMAL {
        return None;
    }
    p.get(id.off as usize..id.off as usize + id.len as usize)
}

/// Mutable variant of [`get_item`].
#[inline]
pub fn get_item_mut(p: &mut [u8], off: OffsetNumber) -> Option<&mut [u8]> {
    let id = checked_item_id(p, off)?;
    if id.flags != LP_NORMAL {
        return None;
    }
    p.get_mut(id.off as usize..id.off as usize + id.len as usize)
}

/// Free bytes between the line pointers and the tuples, less the room for
/// one new line pointer (what an insert of a new tuple can use), as
/// PostgreSQL's `PageGetFreeSpace`.
#[inline]
pub fn free_space(p: &[u8]) -> usize {
    if is_new(p) {
        return 0;
    }
    let space = upper(p) as usize - lower(p) as usize;
    space.saturating_sub(ITEM_ID_SIZE)
}

/// Like [`free_space`], but 0 when no line pointer can be added or reused
/// (PostgreSQL caps heap pages at `MaxHeapTuplesPerPage` line pointers).
pub fn heap_free_space(p: &[u8]) -> usize {
    let space = free_space(p);
    let max = max_offset(p);
    // PD_HAS_FREE_LINES is a hint that may be stale (the last UNUSED line
    // pointer was reused since): at the cap, look for a real one, or an
    // insert would be sent here again and again and never fit.
    if max as usize >= MAX_HEAP_TUPLES_PER_PAGE
        && (flags(p) & PD_HAS_FREE_LINES == 0
            || !(1..=max).any(|o| item_id(p, o).flags == LP_UNUSED))
    {
        return 0;
    }
    space
}

/// The most line pointers a heap page may hold: room for the smallest tuple
/// (a 24-byte header, no attributes) plus its line pointer in each.
pub const MAX_HEAP_TUPLES_PER_PAGE: usize = (BLCKSZ - PAGE_HEADER_SIZE) / (24 + ITEM_ID_SIZE);

/// Adds `item` to the page and returns its offset number, or `None` when it
/// does not fit. With `at = Some(n)` the item goes exactly at line pointer `n`
/// (which must be UNUSED or the next new one; redo uses this). Otherwise the
/// first UNUSED line pointer is reused when the page says it has one, else a
/// new one is appended.
pub fn add_item(p: &mut [u8], item: &[u8], at: Option<OffsetNumber>) -> Option<OffsetNumber> {
    if is_new(p) || item.len() > MAX_ITEM_SIZE {
        return None;
    }
    let max = max_offset(p);
    let off = match at {
        Some(n) => {
            if n == 0 || n > max + 1 || (n <= max && item_id(p, n).flags != LP_UNUSED) {
                return None;
            }
            n
        }
        None => {
            let mut found = None;
            if flags(p) & PD_HAS_FREE_LINES != 0 {
                found = (1..=max).find(|&o| item_id(p, o).flags == LP_UNUSED);
                if found.is_none() {
                    // The hint was stale; clear it so the next insert does not scan.
                    set_flags(p, flags(p) & !PD_HAS_FREE_LINES);
                }
            }
            match found {
                Some(o) => o,
                None => {
                    if max as usize >= MAX_HEAP_TUPLES_PER_PAGE {
                        return None;
                    }
                    max + 1
                }
            }
        }
    };
    let new_lower = if off > max {
        lower(p) as usize + ITEM_ID_SIZE
    } else {
        lower(p) as usize
    };
    let aligned = maxalign(item.len());
    let up = upper(p) as usize;
    if up < aligned || up - aligned < new_lower {
        return None;
    }
    let new_upper = up - aligned;
    p[new_upper..new_upper + item.len()].copy_from_slice(item);
    set_lower(p, new_lower as u16);
    set_upper(p, new_upper as u16);
    set_item_id(
        p,
        off,
        ItemId {
            off: new_upper as u16,
            flags: LP_NORMAL,
            len: item.len() as u16,
        },
    );
    Some(off)
}

/// Marks line pointer `off` UNUSED (its storage is reclaimed by the next
/// [`repair_fragmentation`]) and notes that the page has a free line pointer.
/// Trailing UNUSED line pointers are trimmed away at once.
pub fn set_unused(p: &mut [u8], off: OffsetNumber) {
    set_item_id(
        p,
        off,
        ItemId {
            off: 0,
            flags: LP_UNUSED,
            len: 0,
        },
    );
    set_flags(p, flags(p) | PD_HAS_FREE_LINES);
}

/// Removes the trailing UNUSED line pointers (PostgreSQL's
/// `PageTruncateLinePointerArray`) and recomputes `PD_HAS_FREE_LINES`;
/// no tuple moves, so an exclusive lock is enough.
pub fn truncate_unused_tail(p: &mut [u8]) {
    if is_new(p) {
        return;
    }
    let max = max_offset(p);
    let mut new_max = max;
    while new_max > 0 && item_id(p, new_max).flags == LP_UNUSED {
        new_max -= 1;
    }
    if new_max == max {
        return;
    }
    set_lower(
        p,
        (PAGE_HEADER_SIZE + new_max as usize * ITEM_ID_SIZE) as u16,
    );
    let has_free = (1..=new_max).any(|o| item_id(p, o).flags == LP_UNUSED);
    let f = flags(p) & !PD_HAS_FREE_LINES;
    set_flags(p, if has_free { f | PD_HAS_FREE_LINES } else { f });
}

/// Marks line pointer `off` DEAD (no storage; kept for index references).
pub fn set_dead(p: &mut [u8], off: OffsetNumber) {
    set_item_id(
        p,
        off,
        ItemId {
            off: 0,
            flags: LP_DEAD,
            len: 0,
        },
    );
}

/// Turns line pointer `off` into a redirect to line pointer `to`.
pub fn set_redirect(p: &mut [u8], off: OffsetNumber, to: OffsetNumber) {
    set_item_id(
        p,
        off,
        ItemId {
            off: to,
            flags: LP_REDIRECT,
            len: 0,
        },
    );
}

/// Compacts the tuple storage: moves every NORMAL tuple so that they are
/// contiguous at the end of the page, keeping every line pointer's number
/// (tuple ids stay valid). Trailing UNUSED line pointers are removed and
/// `PD_HAS_FREE_LINES` is recomputed. The caller holds a cleanup lock
/// (exclusive, no other pins), since tuples move.
pub fn repair_fragmentation(p: &mut [u8]) {
    if is_new(p) {
        return;
    }
    let max = max_offset(p);
    // Collect (offset number, old start, len) of the NORMAL items, highest
    // start first, so that copying down the page never overwrites an item
    // not yet moved. A fixed array avoids an allocation.
    let mut items = [(0u16, 0u16, 0u16); MAX_HEAP_TUPLES_PER_PAGE + 1];
    let mut n = 0;
    let mut has_free = false;
    for o in 1..=max {
        let id = item_id(p, o);
        match id.flags {
            LP_NORMAL if n < items.len() => {
                items[n] = (o, id.off, id.len);
                n += 1;
            }
            LP_UNUSED => has_free = true,
            _ => {}
        }
    }
    let items = &mut items[..n];
    items.sort_unstable_by_key(|it| std::cmp::Reverse(it.1));
    let mut up = special(p) as usize;
    // Items that lie back to back (each ends, aligned, where the one
    // above starts: every row of a bulk-loaded page) move by the same
    // distance, so a run of them is one copy: a page after one delete is a
    // single move of some 7 kB instead of 60 small ones. `run` is the
    // source span of the pending run (`lo..hi`, moving to end at `to`).
    let mut run: Option<(usize, usize, usize)> = None;
    for &(o, start, len) in items.iter() {
        let aligned = maxalign(len as usize);
        up -= aligned;
        let start = start as usize;
        run = match run {
            Some((lo, hi, to)) if start + aligned == lo => Some((start, hi, to)),
            pending => {
                if let Some((lo, hi, to)) = pending {
                    if to != hi {
                        p.copy_within(lo..hi, to - (hi - lo));
                    }
                }
                Some((start, start + len as usize, up + len as usize))
            }
        };
        set_item_id(
            p,
            o,
            ItemId {
                off: up as u16,
                flags: LP_NORMAL,
                len,
            },
        );
    }
    if let Some((lo, hi, to)) = run {
        if to != hi {
            p.copy_within(lo..hi, to - (hi - lo));
        }
    }
    // Trim trailing unused line pointers.
    let mut new_max = max;
    while new_max > 0 && item_id(p, new_max).flags == LP_UNUSED {
        new_max -= 1;
    }
    if new_max < max {
        has_free = (1..=new_max).any(|o| item_id(p, o).flags == LP_UNUSED);
    }
    set_lower(
        p,
        (PAGE_HEADER_SIZE + new_max as usize * ITEM_ID_SIZE) as u16,
    );
    set_upper(p, up as u16);
    let f = flags(p) & !(PD_HAS_FREE_LINES | PD_PAGE_FULL);
    set_flags(p, if has_free { f | PD_HAS_FREE_LINES } else { f });
    // Zero the freed gap so stale tuple bytes do not linger in the file.
    let lo = lower(p) as usize;
    p[lo..up].fill(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_line_pointer_array_with_a_stale_free_lines_hint_has_no_room() {
        let mut p = vec![0u8; BLCKSZ];
        init(&mut p, 0);
        for _ in 0..MAX_HEAP_TUPLES_PER_PAGE {
            add_item(&mut p, &[0u8; 24], None).expect("room for the smallest tuples");
        }
        set_unused(&mut p, 3);
        repair_fragmentation(&mut p);
        assert!(
            heap_free_space(&p) > 0,
            "an UNUSED line pointer can be reused"
        );
        add_item(&mut p, &[0u8; 24], Some(3)).expect("slot 3 is free");
        // The flag may still say there are free line pointers.
        let f = flags(&p) | PD_HAS_FREE_LINES;
        set_flags(&mut p, f);
        assert_eq!(heap_free_space(&p), 0);
    }

    fn page() -> Vec<u8> {
        let mut p = vec![0u8; BLCKSZ];
        init(&mut p, 0);
        p
    }

    #[test]
    fn new_page_is_valid_and_has_no_room() {
        let p = vec![0u8; BLCKSZ];
        assert!(is_new(&p));
        verify_header(&p).unwrap();
        assert_eq!(free_space(&p), 0);
        let mut p = p;
        assert_eq!(add_item(&mut p, b"x", None), None);
    }

    #[test]
    fn init_sets_header() {
        let p = page();
        assert_eq!(lower(&p), 24);
        assert_eq!(upper(&p), BLCKSZ as u16);
        assert_eq!(special(&p), BLCKSZ as u16);
        assert_eq!(version(&p), PAGE_LAYOUT_VERSION);
        assert_eq!(free_space(&p), BLCKSZ - 24 - 4);
        verify_header(&p).unwrap();
        let mut q = vec![0u8; BLCKSZ];
        init(&mut q, 10);
        assert_eq!(special(&q), (BLCKSZ - 16) as u16);
    }

    #[test]
    fn item_id_round_trips() {
        for (off, flags, len) in [(0, 0, 0), (8191, 1, 8168), (5, 2, 0), (32767, 3, 32767)] {
            let id = ItemId { off, flags, len };
            assert_eq!(ItemId::from_raw(id.to_raw()), id);
        }
    }

    #[test]
    fn fill_until_full_then_read_back() {
        let mut p = page();
        let mut n = 0u16;
        loop {
            let item = [n as u8; 37];
            match add_item(&mut p, &item, None) {
                Some(o) => {
                    n += 1;
                    assert_eq!(o, n);
                }
                None => break,
            }
        }
        // 37 bytes align to 40, plus 4 per line pointer: 8168 / 44 = 185.
        assert_eq!(n, 185);
        assert!(free_space(&p) < 40);
        for o in 1..=n {
            let it = get_item(&p, o).unwrap();
            assert_eq!(it.len(), 37);
            assert!(it.iter().all(|&b| b == (o - 1) as u8));
            assert_eq!(item_id(&p, o).off as usize % MAXALIGN, 0);
        }
        verify_header(&p).unwrap();
    }

    #[test]
    fn remove_reuse_and_compact_keep_offsets_stable() {
        let mut p = page();
        for i in 0..100u8 {
            add_item(&mut p, &[i; 50], None).unwrap();
        }
        let before = free_space(&p);
        for o in (2..=100).step_by(2) {
            set_unused(&mut p, o);
        }
        assert_eq!(get_item(&p, 2), None);
        // Space is not reclaimed until compaction.
        assert_eq!(free_space(&p), before);
        repair_fragmentation(&mut p);
        // 50 items of 56 bytes freed, and the trailing line pointer 100 trimmed.
        assert_eq!(free_space(&p), before + 50 * 56 + 4);
        assert_eq!(max_offset(&p), 99);
        for o in (1..=99).step_by(2) {
            let it = get_item(&p, o).unwrap();
            assert!(it.iter().all(|&b| b == (o - 1) as u8), "item {o}");
        }
        assert_ne!(flags(&p) & PD_HAS_FREE_LINES, 0);
        // An insert now reuses the first free line pointer.
        assert_eq!(add_item(&mut p, b"reused", None), Some(2));
        assert_eq!(get_item(&p, 2), Some(&b"reused"[..]));
        verify_header(&p).unwrap();
    }

    #[test]
    fn add_at_specific_offset_and_refuse_taken_ones() {
        let mut p = page();
        assert_eq!(
            add_item(&mut p, b"a", Some(2)),
            None,
            "gap in line pointers"
        );
        assert_eq!(add_item(&mut p, b"a", Some(1)), Some(1));
        assert_eq!(add_item(&mut p, b"b", Some(1)), None, "slot taken");
        assert_eq!(add_item(&mut p, b"b", Some(2)), Some(2));
        set_unused(&mut p, 1);
        assert_eq!(add_item(&mut p, b"c", Some(1)), Some(1));
        assert_eq!(get_item(&p, 1), Some(&b"c"[..]));
    }

    #[test]
    fn dead_and_redirect_items_have_no_storage_and_survive_compaction() {
        let mut p = page();
        for i in 0..4u8 {
            add_item(&mut p, &[i; 100], None).unwrap();
        }
        set_redirect(&mut p, 1, 3);
        set_dead(&mut p, 2);
        repair_fragmentation(&mut p);
        assert_eq!(item_id(&p, 1).flags, LP_REDIRECT);
        assert_eq!(item_id(&p, 1).off, 3);
        assert_eq!(item_id(&p, 2).flags, LP_DEAD);
        assert_eq!(get_item(&p, 3).unwrap(), &[2u8; 100][..]);
        assert_eq!(get_item(&p, 4).unwrap(), &[3u8; 100][..]);
        assert_eq!(free_space(&p), BLCKSZ - 24 - 16 - 2 * 104 - 4);
    }

    /// Compaction as it was before runs were coalesced: one move per item.
    fn compact_one_by_one(p: &mut [u8]) {
        let max = max_offset(p);
        let mut items: Vec<(u16, u16, u16)> = (1..=max)
            .filter(|&o| item_id(p, o).flags == LP_NORMAL)
            .map(|o| (o, item_id(p, o).off, item_id(p, o).len))
            .collect();
        items.sort_unstable_by_key(|it| std::cmp::Reverse(it.1));
        let mut up = special(p) as usize;
        for (o, start, len) in items {
            up -= maxalign(len as usize);
            p.copy_within(start as usize..start as usize + len as usize, up);
            set_item_id(
                p,
                o,
                ItemId {
                    off: up as u16,
                    flags: LP_NORMAL,
                    len,
                },
            );
        }
    }

    #[test]
    fn compaction_in_runs_moves_every_item_as_one_by_one_moves_do() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..300 {
            let mut p = page();
            // Items of one width (a bulk load) or of mixed widths.
            let fixed = round % 2 == 0;
            let mut k = 0u8;
            loop {
                let len = if fixed { 121 } else { 24 + next(200) as usize };
                let item: Vec<u8> = (0..len).map(|i| k.wrapping_add(i as u8)).collect();
                if add_item(&mut p, &item, None).is_none() {
                    break;
                }
                k = k.wrapping_add(1);
            }
            // Free some (none, one, many), reuse a few of the freed slots.
            let max = max_offset(&p);
            for _ in 0..next(u64::from(max) / 2 + 1) {
                set_unused(&mut p, 1 + next(u64::from(max)) as u16);
            }
            if next(2) == 0 {
                repair_fragmentation(&mut p);
                for _ in 0..next(4) {
                    let _ = add_item(&mut p, &[7u8; 40], None);
                }
                for _ in 0..next(4) {
                    let m = max_offset(&p);
                    if m > 0 {
                        set_unused(&mut p, 1 + next(u64::from(m)) as u16);
                    }
                }
            }
            let mut want = p.clone();
            compact_one_by_one(&mut want);
            repair_fragmentation(&mut p);
            for o in 1..=max_offset(&p) {
                assert_eq!(item_id(&p, o), item_id(&want, o), "round {round}, item {o}");
                if item_id(&p, o).flags == LP_NORMAL {
                    assert_eq!(
                        get_item(&p, o),
                        get_item(&want, o),
                        "round {round}, item {o}"
                    );
                }
            }
            let lowest = (1..=max_offset(&want))
                .filter(|&o| item_id(&want, o).flags == LP_NORMAL)
                .map(|o| item_id(&want, o).off as usize)
                .min()
                .unwrap_or(special(&want) as usize);
            assert_eq!(upper(&p) as usize, lowest, "round {round}");
        }
    }

    #[test]
    fn corrupt_headers_are_rejected() {
        let mut p = page();
        wr16(&mut p, 12, 9000);
        assert!(verify_header(&p).is_err());
        assert_eq!(get_item(&p, 2000), None, "no panic past the page end");
        assert_eq!(get_item_mut(&mut p, 2000), None);
        let mut p = page();
        wr16(&mut p, 12, 25);
        assert!(verify_header(&p).is_err());
    }

    #[test]
    fn too_large_item_is_refused() {
        let mut p = page();
        assert_eq!(add_item(&mut p, &vec![1u8; MAX_ITEM_SIZE + 1], None), None);
        assert_eq!(add_item(&mut p, &vec![1u8; MAX_ITEM_SIZE], None), Some(1));
        assert_eq!(free_space(&p), 0);
    }
}
