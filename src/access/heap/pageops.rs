//! Heap operations on one locked page slice: collecting the tuples a
//! snapshot sees (with the hint bits to set), choosing where a tuple goes,
//! and preparing the header fields a change writes. The buffer-pool glue in
//! [`super::heapam`] pins and locks pages and calls these; they never touch
//! the buffer pool, so they are tested on plain pages.
//!
//! Hot loops here ([`collect_visible`], [`count_visible`]) allocate nothing:
//! they push into caller-owned vectors that are cleared and reused per page.

use super::record::XmaxSet;
use super::tuple::{
    self, HEAP_COMBOCID, HEAP_HINT_BITS, HEAP_ONLY_TUPLE, HEAP_UPDATED, HEAP_XMAX_INVALID,
};
use super::visibility::{apply_hints, satisfies_mvcc};
use crate::error::Result;
use crate::storage::page::{self, maxalign, OffsetNumber, LP_NORMAL, LP_UNUSED};
use crate::txn::{Clog, CommandId, Snapshot, Xid};

/// Hint bits to set on one tuple, with the xmax they were computed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    /// Line pointer of the tuple.
    pub offset: OffsetNumber,
    /// infomask bits to set.
    pub bits: u16,
    /// The tuple's xmax when the bits were computed.
    pub xmax: Xid,
}

/// Pushes onto `visible` the line pointers of page `p` whose tuples `snap`
/// sees, in order, and onto `hints` the hint bits to set. On an ALL_VISIBLE
/// page every NORMAL line pointer is visible without looking at tuples. The
/// caller holds at least a shared content lock.
pub fn collect_visible(
    p: &[u8],
    snap: &Snapshot,
    clog: &Clog,
    visible: &mut Vec<OffsetNumber>,
    hints: &mut Vec<Hint>,
) -> Result<()> {
    page::verify_header(p)?;
    if page::is_new(p) {
        return Ok(());
    }
    let max = page::max_offset(p);
    if page::is_all_visible(p) {
        push_normal(p, max, visible);
        return Ok(());
    }
    for o in 1..=max {
        let Some(t) = tuple_at(p, o) else { continue };
        if visible_by_hints(t, snap) {
            visible.push(o);
            continue;
        }
        let (vis, bits) = satisfies_mvcc(t, snap, clog)?;
        if vis {
            visible.push(o);
        }
        if bits != 0 {
            hints.push(Hint {
                offset: o,
                bits,
                xmax: tuple::xmax(t),
            });
        }
    }
    Ok(())
}

/// Pushes the NORMAL line pointers `1..=max` of page `p` onto `out`: the
/// whole of visibility on an ALL_VISIBLE page. Branch-free (each slot is
/// written, the count advances by the flag test), so it runs at a few
/// instructions per line pointer.
pub fn push_normal(p: &[u8], max: OffsetNumber, out: &mut Vec<OffsetNumber>) {
    let start = out.len();
    out.resize(start + max as usize, 0);
    let slots = &mut out[start..];
    let lps = &p[page::PAGE_HEADER_SIZE..page::PAGE_HEADER_SIZE + 4 * max as usize];
    let mut n = 0usize;
    for (i, lp) in lps.chunks_exact(4).enumerate() {
        let raw = u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]);
        slots[n] = i as OffsetNumber + 1;
        n += ((raw >> 15) & 3 == u32::from(LP_NORMAL)) as usize;
    }
    out.truncate(start + n);
}

/// The tuple at line pointer `o` (1..=max_offset) when it is NORMAL and at
/// least a header long: the inner loop of every scan.
#[inline(always)]
fn tuple_at(p: &[u8], o: OffsetNumber) -> Option<&[u8]> {
    let id = page::item_id(p, o);
    if id.flags != LP_NORMAL || (id.len as usize) < tuple::HEADER_SIZE {
        return None;
    }
    p.get(id.off as usize..id.off as usize + id.len as usize)
}

/// True when the hint bits alone show that `snap` sees tuple `t`: its
/// inserter committed before every transaction the snapshot considers
/// running, and it has no valid deleter. The common case of a scan of
/// settled data, decided without calling into the visibility rules.
#[inline(always)]
fn visible_by_hints(t: &[u8], snap: &Snapshot) -> bool {
    const MASK: u16 = tuple::HEAP_XMIN_COMMITTED | tuple::HEAP_XMIN_INVALID | HEAP_XMAX_INVALID;
    const WANT: u16 = tuple::HEAP_XMIN_COMMITTED | HEAP_XMAX_INVALID;
    tuple::infomask(t) & MASK == WANT && tuple::xmin(t) < snap.xmin
}

/// The number of tuples of page `p` that `snap` sees, collecting hints like
/// [`collect_visible`]. On an ALL_VISIBLE page it counts NORMAL line
/// pointers without touching tuples. A page whose header is inconsistent
/// (a checksum-valid but corrupt page) is an XX001 error, never a panic.
pub fn count_visible(p: &[u8], snap: &Snapshot, clog: &Clog, hints: &mut Vec<Hint>) -> Result<u64> {
    page::verify_header(p)?;
    if page::is_new(p) {
        return Ok(0);
    }
    let max = page::max_offset(p);
    let mut n = 0u64;
    if page::is_all_visible(p) {
        for o in 1..=max {
            n += (page::item_id(p, o).flags == LP_NORMAL) as u64;
        }
        return Ok(n);
    }
    for o in 1..=max {
        let Some(t) = tuple_at(p, o) else { continue };
        if visible_by_hints(t, snap) {
            n += 1;
            continue;
        }
        let (vis, bits) = satisfies_mvcc(t, snap, clog)?;
        n += vis as u64;
        if bits != 0 {
            hints.push(Hint {
                offset: o,
                bits,
                xmax: tuple::xmax(t),
            });
        }
    }
    Ok(n)
}

/// Sets collected `hints` on page `p` (exclusive lock held). Returns true
/// when a bit was newly set, so the buffer should be marked dirty (as a
/// hint-only change, never logged).
pub fn apply_page_hints(p: &mut [u8], hints: &[Hint]) -> bool {
    let mut changed = false;
    for h in hints {
        if let Some(t) = page::get_item_mut(p, h.offset) {
            if t.len() >= tuple::HEADER_SIZE {
                changed |= apply_hints(t, h.bits, h.xmax);
            }
        }
    }
    changed
}

/// The line pointer a new tuple of `len` bytes would get on page `p`, or
/// `None` when it does not fit (`add_item` with no fixed offset chooses the
/// same one).
pub fn choose_offset(p: &[u8], len: usize) -> Option<OffsetNumber> {
    if page::is_new(p) || page::heap_free_space(p) < maxalign(len) {
        return None;
    }
    let max = page::max_offset(p);
    if page::flags(p) & page::PD_HAS_FREE_LINES != 0 {
        if let Some(o) = (1..=max).find(|&o| page::item_id(p, o).flags == LP_UNUSED) {
            return Some(o);
        }
    }
    if max as usize >= page::MAX_HEAP_TUPLES_PER_PAGE {
        return None;
    }
    Some(max + 1)
}

/// Fills in the header of a new tuple version `t` about to be stored at
/// `(block, offset)` by transaction `xid` at command `cid`: xmin, cid, ctid
/// pointing at itself, no xmax, no hint bits; `UPDATED` when it replaces an
/// older version and `HEAP_ONLY` when that replacement is a HOT update.
pub fn prepare_new_tuple(
    t: &mut [u8],
    xid: Xid,
    cid: CommandId,
    block: u32,
    offset: OffsetNumber,
    updated: bool,
    heap_only: bool,
) {
    tuple::set_xmin(t, xid);
    tuple::set_xmax(t, 0);
    tuple::set_raw_cid(t, cid);
    tuple::set_ctid(t, block, offset);
    let mut m =
        (tuple::infomask(t) & !(HEAP_HINT_BITS | HEAP_COMBOCID | HEAP_UPDATED)) | HEAP_XMAX_INVALID;
    if updated {
        m |= HEAP_UPDATED;
    }
    tuple::set_infomask(t, m);
    let mut m2 = tuple::infomask2(t) & tuple::HEAP_NATTS_MASK;
    if heap_only {
        m2 |= HEAP_ONLY_TUPLE;
    }
    tuple::set_infomask2(t, m2);
}

/// The header change a delete (or the old half of an update) by `xid` at
/// command `cid` writes into tuple `t` at line pointer `offset`, its ctid
/// becoming `ctid`. When the transaction deletes its own tuple, both command
/// ids are kept as a combo id if they fit in 16 bits each.
pub fn xmax_set_for(
    t: &[u8],
    offset: OffsetNumber,
    xid: Xid,
    cid: CommandId,
    ctid: (u32, OffsetNumber),
) -> XmaxSet {
    let own = tuple::xmin(t) == xid;
    let cmin = tuple::raw_cid(t);
    let (raw_cid, combo) = if own && cmin < 0x10000 && cid < 0x10000 {
        (cmin | (cid << 16), true)
    } else {
        (cid, false)
    };
    XmaxSet {
        offset,
        xmax: xid,
        raw_cid,
        combo,
        ctid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::heap::record::{apply, HeapRecord};
    use crate::access::heap::tuple::{form_tuple, Attr, TupleDesc};
    use crate::storage::BLCKSZ;
    use crate::txn::XidStatus;

    fn tup(v: u32) -> Vec<u8> {
        let d = TupleDesc::new(vec![Attr::fixed(4, 4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&d, &[Some(&v.to_le_bytes())], &mut t).unwrap();
        t
    }

    fn insert(p: &mut [u8], xid: Xid, cid: u32, v: u32) -> OffsetNumber {
        let mut t = tup(v);
        let off = choose_offset(p, t.len()).unwrap();
        prepare_new_tuple(&mut t, xid, cid, 0, off, false, false);
        apply(
            &HeapRecord::Insert {
                offset: off,
                init_page: false,
                clear_all_visible: true,
                tuple: t,
            },
            p,
        )
        .unwrap();
        off
    }

    #[test]
    fn collect_count_and_hints() {
        let dir = tempfile::tempdir().unwrap();
        let clog = Clog::open(dir.path()).unwrap();
        clog.set_status(10, XidStatus::Committed).unwrap();
        clog.set_status(11, XidStatus::Aborted).unwrap();
        let mut p = vec![0u8; BLCKSZ];
        page::init(&mut p, 0);
        insert(&mut p, 10, 0, 1);
        insert(&mut p, 11, 0, 2);
        insert(&mut p, 12, 0, 3); // running
        let o4 = insert(&mut p, 12, 0, 4);
        // Xid 12 deletes its own row 4 at command 1.
        let t = page::get_item(&p, o4).unwrap();
        let set = xmax_set_for(t, o4, 12, 1, (0, o4));
        assert!(set.combo);
        apply(
            &HeapRecord::Delete {
                set,
                clear_all_visible: false,
            },
            &mut p,
        )
        .unwrap();
        let other = Snapshot {
            xmin: 12,
            xmax: 13,
            xip: vec![12],
            current_xid: 0,
            curcid: 0,
        };
        let (mut vis, mut hints) = (Vec::new(), Vec::new());
        collect_visible(&p, &other, &clog, &mut vis, &mut hints).unwrap();
        assert_eq!(vis, vec![1]);
        assert_eq!(hints.len(), 2);
        let mine = Snapshot {
            current_xid: 12,
            curcid: 1,
            ..other.clone()
        };
        vis.clear();
        collect_visible(&p, &mine, &clog, &mut vis, &mut hints).unwrap();
        assert_eq!(
            vis,
            vec![1, 3, 4],
            "row 4 deleted by this command is still seen by it"
        );
        let mine2 = mine.with_cid(2);
        let mut h2 = Vec::new();
        assert_eq!(count_visible(&p, &mine2, &clog, &mut h2).unwrap(), 2);
        assert!(apply_page_hints(&mut p, &hints));
        assert!(!apply_page_hints(&mut p, &hints));
        let t1 = page::get_item(&p, 1).unwrap();
        assert_ne!(tuple::infomask(t1) & tuple::HEAP_XMIN_COMMITTED, 0);
        let t2 = page::get_item(&p, 2).unwrap();
        assert_ne!(tuple::infomask(t2) & tuple::HEAP_XMIN_INVALID, 0);
        // All-visible pages skip the checks entirely.
        page::set_all_visible(&mut p);
        let mut h3 = Vec::new();
        assert_eq!(count_visible(&p, &other, &clog, &mut h3).unwrap(), 4);
        assert!(h3.is_empty());
        // A corrupt header is an error, not a panic.
        p[12..14].copy_from_slice(&9000u16.to_le_bytes());
        let e = count_visible(&p, &other, &clog, &mut h3).unwrap_err();
        assert_eq!(e.code, crate::SqlState::DataCorrupted);
        assert!(collect_visible(&p, &other, &clog, &mut vis, &mut h3).is_err());
    }

    #[test]
    fn offsets_reuse_unused_slots_and_stop_when_full() {
        let mut p = vec![0u8; BLCKSZ];
        assert_eq!(choose_offset(&p, 28), None, "new page");
        page::init(&mut p, 0);
        let mut n = 0;
        while choose_offset(&p, 28).is_some() {
            insert(&mut p, 3, 0, n);
            n += 1;
        }
        assert_eq!(n, ((BLCKSZ - 24) / 36) as u32);
        page::set_unused(&mut p, 5);
        page::repair_fragmentation(&mut p);
        assert_eq!(choose_offset(&p, 28), Some(5));
        assert_eq!(insert(&mut p, 3, 0, 99), 5);
    }

    #[test]
    fn new_tuple_headers() {
        let mut t = tup(1);
        let m = tuple::infomask(&t) | tuple::HEAP_XMIN_COMMITTED;
        tuple::set_infomask(&mut t, m);
        prepare_new_tuple(&mut t, 9, 4, 7, 3, true, true);
        assert_eq!(
            (
                tuple::xmin(&t),
                tuple::xmax(&t),
                tuple::raw_cid(&t),
                tuple::ctid(&t)
            ),
            (9, 0, 4, (7, 3))
        );
        assert_eq!(tuple::infomask(&t) & HEAP_HINT_BITS, HEAP_XMAX_INVALID);
        assert_ne!(tuple::infomask(&t) & HEAP_UPDATED, 0);
        assert_ne!(tuple::infomask2(&t) & HEAP_ONLY_TUPLE, 0);
        assert_eq!(tuple::natts(&t), 1);
        let s = xmax_set_for(&t, 3, 10, 0, (7, 3));
        assert_eq!(
            (s.raw_cid, s.combo),
            (0, false),
            "another transaction's tuple"
        );
        let s = xmax_set_for(&t, 3, 9, 70000, (7, 3));
        assert_eq!(
            (s.raw_cid, s.combo),
            (70000, false),
            "too large for a combo id"
        );
    }
}
