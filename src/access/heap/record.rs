//! Page-change records: every change to a heap or visibility-map page is
//! first expressed as a [`HeapRecord`] value and then made by the one
//! function [`apply`]. At run time the access methods build a record and
//! apply it to the locked buffer; the write-ahead log serialises the same
//! value ([`HeapRecord::encode`]) and crash recovery decodes and applies it
//! again ([`HeapRecord::decode`]), so run time and redo cannot diverge.
//!
//! A record describes the change to exactly one page and carries everything
//! redo needs: the full tuple bytes (with their final header), the target
//! line pointer numbers, the xmax and command id written. The page it applies
//! to is named separately by a [`PageRef`] (relation, fork, block), which the
//! log stores beside the record. An update that moves the tuple to another
//! page is two records: [`HeapRecord::UpdateOld`] on the old page and
//! [`HeapRecord::UpdateNew`] on the new one; a same-page (HOT) update is the
//! single [`HeapRecord::HotUpdate`].
//!
//! Hint bits are never logged: they can be recomputed from the commit log.
//!
//! Invariant: applying a record to the page state it was built against gives
//! the same bytes as at run time (apart from hint bits that were set in
//! between); [`apply`] fails with XX001 rather than panicking when the page
//! does not have the expected shape.

use crate::access::heap::tuple;
use crate::access::vm;
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber};
use crate::txn::Xid;

/// Names the page a record applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PageRef {
    /// The relation's file node number (`base/<n>`).
    pub rel: u32,
    /// 0 for the main fork, 1 for the visibility map.
    pub fork: u8,
    /// Block number within the fork.
    pub block: u32,
}

/// The fields a delete or the old half of an update writes into a tuple
/// header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XmaxSet {
    /// Line pointer of the tuple.
    pub offset: OffsetNumber,
    /// The deleting transaction.
    pub xmax: u32,
    /// The raw command id field (cmax, or cmin|cmax<<16 with `combo`).
    pub raw_cid: u32,
    /// Whether `raw_cid` is a combo command id.
    pub combo: bool,
    /// The new ctid (the tuple's own tid for a delete).
    pub ctid: (u32, OffsetNumber),
}

/// One change to one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeapRecord {
    /// Add one tuple at line pointer `offset`.
    Insert {
        /// Line pointer the tuple goes to.
        offset: OffsetNumber,
        /// Initialise the page first (it was new or empty).
        init_page: bool,
        /// Clear `PD_ALL_VISIBLE` (the VM bit is cleared by a `VmClear`).
        clear_all_visible: bool,
        /// The complete tuple, header included.
        tuple: Vec<u8>,
    },
    /// Add several tuples to one page (multi-insert, COPY).
    MultiInsert {
        /// Initialise the page first.
        init_page: bool,
        /// Clear `PD_ALL_VISIBLE`.
        clear_all_visible: bool,
        /// Line pointer of each tuple, in order.
        offsets: Vec<OffsetNumber>,
        /// Byte length of each tuple, in order.
        lens: Vec<u16>,
        /// The tuples, concatenated.
        data: Vec<u8>,
    },
    /// Mark a tuple deleted.
    Delete {
        /// What is written into the tuple header.
        set: XmaxSet,
        /// Clear `PD_ALL_VISIBLE`.
        clear_all_visible: bool,
    },
    /// The old half of an update whose new version is on another page.
    UpdateOld {
        /// What is written into the old tuple's header (ctid = new tid).
        set: XmaxSet,
        /// Clear `PD_ALL_VISIBLE`.
        clear_all_visible: bool,
    },
    /// The new half of an update whose old version is on another page.
    UpdateNew {
        /// Line pointer of the new version.
        offset: OffsetNumber,
        /// Initialise the page first.
        init_page: bool,
        /// Clear `PD_ALL_VISIBLE`.
        clear_all_visible: bool,
        /// The complete new version.
        tuple: Vec<u8>,
    },
    /// An update within one page; with `hot` the new version is heap-only.
    HotUpdate {
        /// What is written into the old tuple's header.
        set: XmaxSet,
        /// Line pointer of the new version.
        new_offset: OffsetNumber,
        /// Mark the old version HOT_UPDATED (the new one carries HEAP_ONLY).
        hot: bool,
        /// Clear `PD_ALL_VISIBLE`.
        clear_all_visible: bool,
        /// The complete new version.
        tuple: Vec<u8>,
    },
    /// Pruning: redirect, kill and free line pointers, then compact.
    Prune {
        /// (from, to): `from` becomes a redirect to `to`.
        redirected: Vec<(OffsetNumber, OffsetNumber)>,
        /// Line pointers that become DEAD.
        dead: Vec<OffsetNumber>,
        /// Line pointers that become UNUSED.
        unused: Vec<OffsetNumber>,
        /// The page's prune hint afterwards (PostgreSQL's
        /// `prstate.new_prune_xid`): the oldest xmax of the deleted or
        /// updated versions pruning had to keep, 0 when none.
        prune_xid: Xid,
    },
    /// Compact the page's free space without changing line pointers.
    Defragment,
    /// Set `PD_ALL_VISIBLE` on a heap page.
    SetAllVisible,
    /// Clear `PD_ALL_VISIBLE` on a heap page.
    ClearAllVisible,
    /// Set VM bits and the live-tuple count of a heap block (on the VM
    /// page). It may carry two changes to other pages, which redo makes
    /// first, in this order: the heap page's `PD_ALL_VISIBLE` (set at run
    /// time as a hint, without a record of its own: PostgreSQL's
    /// `xl_heap_visible` does the same) and the block's summary slot
    /// (`access::sumfork`: the slot is durable exactly when the bit is).
    /// [`apply`] makes the map change only; the carried ones are
    /// [`SetAllVisible`](HeapRecord::SetAllVisible) on the heap page and
    /// [`crate::access::sumfork::redo_slot`] on the summary page.
    VmSet {
        /// The heap block described.
        heap_block: u32,
        /// `VM_ALL_VISIBLE` and/or `VM_ALL_FROZEN`.
        bits: u8,
        /// Live tuples on the heap page.
        count: u16,
        /// Redo sets the heap page's `PD_ALL_VISIBLE` first.
        heap_all_visible: bool,
        /// The block's summary slot ([`crate::access::sumfork::SLOT_BYTES`];
        /// all zero: no summary), written before the bits; `None`: the slot
        /// is not written.
        slot: Option<Vec<u8>>,
    },
    /// Clear the VM bits of a heap block (on the VM page).
    VmClear {
        /// The heap block described.
        heap_block: u32,
    },
    /// Set the summary slot of a heap block (on the summary fork's page,
    /// `access::sumfork`), alone: what a `VmSet` carries when the map page
    /// is logged as a full-page image instead, logged just before that
    /// image. Never logged as an image itself; redo writes it blindly.
    SummarySet {
        /// The heap block described.
        heap_block: u32,
        /// The slot's bytes ([`crate::access::sumfork::SLOT_BYTES`]; all
        /// zero: no summary).
        slot: Vec<u8>,
    },
    /// VACUUM FREEZE: mark the inserters of these tuples frozen
    /// (`HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID`, PostgreSQL's
    /// `HEAP_XMIN_FROZEN`): visible to every snapshot whatever its xmin.
    Freeze {
        /// Line pointers of the tuples to freeze.
        offsets: Vec<OffsetNumber>,
    },
    /// VACUUM's second heap pass (PostgreSQL's `XLOG_HEAP2_VACUUM`): DEAD
    /// line pointers whose index entries are gone become UNUSED. Logged
    /// after every index's bulk delete, so redo can never free a slot an
    /// index still names; a line pointer that is not DEAD is an error.
    VacuumDead {
        /// The DEAD line pointers to free, ascending.
        offsets: Vec<OffsetNumber>,
    },
}

fn corrupt(what: &str) -> crate::error::Error {
    err!(DataCorrupted, "could not apply heap record: {what}")
}

fn init_if(p: &mut [u8], init: bool) {
    if init || page::is_new(p) {
        page::init(p, 0);
    }
}

fn put_tuple(p: &mut [u8], offset: OffsetNumber, t: &[u8]) -> Result<()> {
    match page::add_item(p, t, Some(offset)) {
        Some(_) => Ok(()),
        None => Err(corrupt(&format!(
            "no room for a tuple at line pointer {offset}"
        ))),
    }
}

fn set_xmax(p: &mut [u8], s: &XmaxSet) -> Result<()> {
    let t = page::get_item_mut(p, s.offset)
        .ok_or_else(|| corrupt(&format!("line pointer {} is not a tuple", s.offset)))?;
    if t.len() < tuple::HEADER_SIZE {
        return Err(corrupt("tuple shorter than its header"));
    }
    tuple::set_xmax(t, s.xmax);
    tuple::set_raw_cid(t, s.raw_cid);
    let mut m = tuple::infomask(t) & !(tuple::HEAP_XMAX_COMMITTED | tuple::HEAP_XMAX_INVALID);
    if s.combo {
        m |= tuple::HEAP_COMBOCID;
    } else {
        m &= !tuple::HEAP_COMBOCID;
    }
    tuple::set_infomask(t, m);
    // A new delete or update replaces any earlier (aborted) update's HOT
    // link; a HOT update sets the flag again after this.
    tuple::set_infomask2(t, tuple::infomask2(t) & !tuple::HEAP_HOT_UPDATED);
    tuple::set_ctid(t, s.ctid.0, s.ctid.1);
    // Remember the oldest xid that may make something prunable here.
    let px = page::prune_xid(p);
    if px == 0 || s.xmax < px {
        page::set_prune_xid(p, s.xmax);
    }
    Ok(())
}

fn clear_av(p: &mut [u8], clear: bool) {
    if clear {
        page::clear_all_visible(p);
    }
}

/// Applies `rec` to `p` (the page named by the record's [`PageRef`]). The
/// caller holds the page's exclusive content lock; at run time it goes
/// through `HeapRelation::log_apply`, which logs the record, sets the page
/// LSN and marks the buffer dirty (redo does the same in `wal::recovery`).
pub fn apply(rec: &HeapRecord, p: &mut [u8]) -> Result<()> {
    page::verify_header(p)?;
    match rec {
        HeapRecord::Insert {
            offset,
            init_page,
            clear_all_visible,
            tuple,
        }
        | HeapRecord::UpdateNew {
            offset,
            init_page,
            clear_all_visible,
            tuple,
        } => {
            init_if(p, *init_page);
            clear_av(p, *clear_all_visible);
            put_tuple(p, *offset, tuple)
        }
        HeapRecord::MultiInsert {
            init_page,
            clear_all_visible,
            offsets,
            lens,
            data,
        } => {
            init_if(p, *init_page);
            clear_av(p, *clear_all_visible);
            if offsets.len() != lens.len() {
                return Err(corrupt("multi-insert offsets and lengths differ"));
            }
            let mut at = 0usize;
            for (&o, &l) in offsets.iter().zip(lens) {
                let t = data
                    .get(at..at + l as usize)
                    .ok_or_else(|| corrupt("multi-insert data too short"))?;
                put_tuple(p, o, t)?;
                at += l as usize;
            }
            Ok(())
        }
        HeapRecord::Delete {
            set,
            clear_all_visible,
        }
        | HeapRecord::UpdateOld {
            set,
            clear_all_visible,
        } => {
            clear_av(p, *clear_all_visible);
            set_xmax(p, set)
        }
        HeapRecord::HotUpdate {
            set,
            new_offset,
            hot,
            clear_all_visible,
            tuple,
        } => {
            clear_av(p, *clear_all_visible);
            set_xmax(p, set)?;
            if *hot {
                let t = page::get_item_mut(p, set.offset).expect("set_xmax checked the tuple");
                tuple::set_infomask2(t, tuple::infomask2(t) | tuple::HEAP_HOT_UPDATED);
            }
            put_tuple(p, *new_offset, tuple)
        }
        HeapRecord::Prune {
            redirected,
            dead,
            unused,
            prune_xid,
        } => apply_prune(p, redirected, dead, unused, *prune_xid),
        HeapRecord::Defragment => {
            page::repair_fragmentation(p);
            Ok(())
        }
        HeapRecord::SetAllVisible => {
            if page::is_new(p) {
                return Err(corrupt("all-visible flag on an uninitialised page"));
            }
            page::set_all_visible(p);
            Ok(())
        }
        HeapRecord::ClearAllVisible => {
            if !page::is_new(p) {
                page::clear_all_visible(p);
            }
            Ok(())
        }
        HeapRecord::VmSet {
            heap_block,
            bits,
            count,
            ..
        } => {
            vm::set(p, *heap_block, *bits, *count);
            Ok(())
        }
        HeapRecord::VmClear { heap_block } => {
            vm::clear(p, *heap_block);
            Ok(())
        }
        HeapRecord::SummarySet { heap_block, slot } => {
            if crate::access::sumfork::redo_slot(p, *heap_block, slot) {
                Ok(())
            } else {
                Err(corrupt("summary slot of the wrong length"))
            }
        }
        HeapRecord::Freeze { offsets } => {
            for &o in offsets {
                let t = page::get_item_mut(p, o)
                    .filter(|t| t.len() >= tuple::HEADER_SIZE)
                    .ok_or_else(|| corrupt(&format!("line pointer {o} is not a tuple")))?;
                tuple::set_infomask(t, tuple::infomask(t) | tuple::HEAP_XMIN_FROZEN);
            }
            Ok(())
        }
        HeapRecord::VacuumDead { offsets } => apply_vacuum_dead(p, offsets),
    }
}

/// Redo of [`HeapRecord::Prune`]: line pointers redirected, made DEAD or
/// unused, then the page compacted.
fn apply_prune(
    p: &mut [u8],
    redirected: &[(OffsetNumber, OffsetNumber)],
    dead: &[OffsetNumber],
    unused: &[OffsetNumber],
    prune_xid: Xid,
) -> Result<()> {
    let max = page::max_offset(p);
    let check = |o: OffsetNumber| {
        if o == 0 || o > max {
            Err(corrupt(&format!("line pointer {o} out of range")))
        } else {
            Ok(())
        }
    };
    for &(from, to) in redirected {
        check(from)?;
        check(to)?;
        page::set_redirect(p, from, to);
    }
    for &o in dead {
        check(o)?;
        page::set_dead(p, o);
    }
    for &o in unused {
        check(o)?;
        page::set_unused(p, o);
    }
    page::set_prune_xid(p, prune_xid);
    page::repair_fragmentation(p);
    Ok(())
}

/// Redo of [`HeapRecord::VacuumDead`]: the DEAD line pointers (and only
/// those) become unused, trailing unused ones are trimmed.
fn apply_vacuum_dead(p: &mut [u8], offsets: &[OffsetNumber]) -> Result<()> {
    let max = page::max_offset(p);
    if let Some(&o) = offsets
        .iter()
        .find(|&&o| o == 0 || o > max || page::item_id(p, o).flags != page::LP_DEAD)
    {
        return Err(corrupt(&format!("line pointer {o} is not DEAD")));
    }
    for &o in offsets {
        page::set_unused(p, o);
    }
    page::truncate_unused_tail(p);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::heap::tuple::{form_tuple, Attr, TupleDesc};
    use crate::storage::BLCKSZ;

    fn tup(v: u32) -> Vec<u8> {
        let d = TupleDesc::new(vec![Attr::fixed(4, 4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&d, &[Some(&v.to_le_bytes())], &mut t).unwrap();
        tuple::set_xmin(&mut t, 10);
        t
    }

    fn all_records() -> Vec<HeapRecord> {
        let set = XmaxSet {
            offset: 1,
            xmax: 11,
            raw_cid: 3,
            combo: false,
            ctid: (0, 1),
        };
        vec![
            HeapRecord::Insert {
                offset: 1,
                init_page: true,
                clear_all_visible: false,
                tuple: tup(1),
            },
            HeapRecord::MultiInsert {
                init_page: false,
                clear_all_visible: true,
                offsets: vec![2, 3],
                lens: vec![28, 28],
                data: [tup(2), tup(3)].concat(),
            },
            HeapRecord::Delete {
                set,
                clear_all_visible: true,
            },
            HeapRecord::HotUpdate {
                set: XmaxSet {
                    offset: 2,
                    ctid: (0, 4),
                    combo: true,
                    raw_cid: 0x0002_0001,
                    ..set
                },
                new_offset: 4,
                hot: true,
                clear_all_visible: false,
                tuple: tup(22),
            },
            HeapRecord::UpdateOld {
                set: XmaxSet {
                    offset: 3,
                    ctid: (9, 1),
                    ..set
                },
                clear_all_visible: false,
            },
            HeapRecord::UpdateNew {
                offset: 5,
                init_page: false,
                clear_all_visible: true,
                tuple: tup(33),
            },
            HeapRecord::SetAllVisible,
            HeapRecord::ClearAllVisible,
            HeapRecord::Prune {
                redirected: vec![(2, 4)],
                dead: vec![1],
                unused: vec![3],
                prune_xid: 0,
            },
            HeapRecord::Prune {
                redirected: vec![],
                dead: vec![],
                unused: vec![5],
                prune_xid: 77,
            },
            HeapRecord::Defragment,
            HeapRecord::Freeze { offsets: vec![4] },
        ]
    }

    #[test]
    fn encode_decode_round_trip() {
        let mut recs = all_records();
        recs.push(HeapRecord::VmSet {
            heap_block: 7000,
            bits: 3,
            count: 17,
            heap_all_visible: false,
            slot: None,
        });
        let kinds = [
            crate::access::summary::SummaryKind::Int4,
            crate::access::summary::SummaryKind::Int8,
        ];
        let cols = [
            crate::access::summary::ColumnSummary::Int {
                count: 61,
                min: -5,
                max: i64::MAX,
                sum: -(1i128 << 100),
            },
            crate::access::summary::ColumnSummary::Int {
                count: 1,
                min: i64::MIN,
                max: 0,
                sum: 7,
            },
        ];
        for (flag, slot) in [
            (
                true,
                Some(crate::access::sumfork::Slot::encode(61, 4, &kinds, &cols)),
            ),
            (false, Some(vec![0; crate::access::sumfork::SLOT_BYTES])),
            (true, Some(vec![3; crate::access::sumfork::SLOT_BYTES])),
            (true, None),
        ] {
            recs.push(HeapRecord::VmSet {
                heap_block: 70,
                bits: 1,
                count: 61,
                heap_all_visible: flag,
                slot,
            });
        }
        recs.push(HeapRecord::VmClear { heap_block: 7000 });
        recs.push(HeapRecord::SummarySet {
            heap_block: 70,
            slot: vec![7; crate::access::sumfork::SLOT_BYTES],
        });
        recs.push(HeapRecord::VacuumDead {
            offsets: vec![1, 5],
        });
        for r in recs {
            let mut b = Vec::new();
            r.encode(&mut b);
            assert_eq!(HeapRecord::decode(&b).unwrap(), r);
            assert!(HeapRecord::decode(&b[..b.len() - 1]).is_err() || b.len() == 1);
        }
        assert!(HeapRecord::decode(&[99]).is_err());
        assert!(HeapRecord::decode(&[]).is_err());
    }

    #[test]
    fn applying_the_sequence_gives_the_expected_page() {
        let mut p = vec![0u8; BLCKSZ];
        let recs = all_records();
        for r in &recs[..6] {
            apply(r, &mut p).unwrap();
        }
        // Replay on a second page through encode/decode gives identical bytes.
        let mut q = vec![0u8; BLCKSZ];
        for r in &recs[..6] {
            let mut b = Vec::new();
            r.encode(&mut b);
            apply(&HeapRecord::decode(&b).unwrap(), &mut q).unwrap();
        }
        assert_eq!(p, q);
        let t1 = page::get_item(&p, 1).unwrap();
        assert_eq!(
            (tuple::xmax(t1), tuple::raw_cid(t1), tuple::ctid(t1)),
            (11, 3, (0, 1))
        );
        assert_eq!(tuple::infomask(t1) & tuple::HEAP_XMAX_INVALID, 0);
        let t2 = page::get_item(&p, 2).unwrap();
        assert_ne!(tuple::infomask2(t2) & tuple::HEAP_HOT_UPDATED, 0);
        assert_ne!(tuple::infomask(t2) & tuple::HEAP_COMBOCID, 0);
        assert_eq!(tuple::ctid(page::get_item(&p, 3).unwrap()), (9, 1));
        assert_eq!(page::max_offset(&p), 5);
        assert_eq!(page::prune_xid(&p), 11);
        apply(&HeapRecord::SetAllVisible, &mut p).unwrap();
        assert!(page::is_all_visible(&p));
        apply(
            &HeapRecord::Insert {
                offset: 6,
                init_page: false,
                clear_all_visible: true,
                tuple: tup(6),
            },
            &mut p,
        )
        .unwrap();
        assert!(!page::is_all_visible(&p));
        apply(&recs[8], &mut p).unwrap();
        assert_eq!(page::item_id(&p, 1).flags, page::LP_DEAD);
        assert_eq!(page::item_id(&p, 2).flags, page::LP_REDIRECT);
        assert_eq!(page::item_id(&p, 3).flags, page::LP_UNUSED);
        assert_eq!(page::get_item(&p, 4).unwrap(), &tup(22)[..]);
    }

    #[test]
    fn vacuum_dead_frees_only_dead_line_pointers_and_trims_the_tail() {
        let mut p = vec![0u8; BLCKSZ];
        for (o, init) in [(1u16, true), (2, false), (3, false)] {
            let rec = HeapRecord::Insert {
                offset: o,
                init_page: init,
                clear_all_visible: false,
                tuple: tup(u32::from(o)),
            };
            apply(&rec, &mut p).unwrap();
        }
        let prune = HeapRecord::Prune {
            redirected: vec![],
            dead: vec![1, 3],
            unused: vec![],
            prune_xid: 0,
        };
        apply(&prune, &mut p).unwrap();
        // A NORMAL line pointer is refused, and nothing changes.
        let before = p.clone();
        let bad = HeapRecord::VacuumDead {
            offsets: vec![1, 2],
        };
        assert_eq!(
            apply(&bad, &mut p).unwrap_err().code,
            crate::SqlState::DataCorrupted
        );
        assert_eq!(p, before);
        apply(
            &HeapRecord::VacuumDead {
                offsets: vec![1, 3],
            },
            &mut p,
        )
        .unwrap();
        assert_eq!(page::item_id(&p, 1).flags, page::LP_UNUSED);
        assert_eq!(
            page::max_offset(&p),
            2,
            "the trailing line pointer is trimmed"
        );
        assert_eq!(page::get_item(&p, 2).unwrap(), &tup(2)[..]);
        // The freed slot is reused by the next insert.
        assert_eq!(page::add_item(&mut p, &tup(9), None), Some(1));
        // Freeing a line pointer that is no longer DEAD is refused.
        let again = HeapRecord::VacuumDead { offsets: vec![1] };
        assert!(apply(&again, &mut p).is_err());
    }

    #[test]
    fn mismatched_pages_are_errors_not_panics() {
        let mut p = vec![0u8; BLCKSZ];
        let del = HeapRecord::Delete {
            set: XmaxSet {
                offset: 3,
                xmax: 1,
                raw_cid: 0,
                combo: false,
                ctid: (0, 3),
            },
            clear_all_visible: false,
        };
        assert_eq!(
            apply(&del, &mut p).unwrap_err().code,
            crate::SqlState::DataCorrupted
        );
        apply(
            &HeapRecord::Insert {
                offset: 1,
                init_page: true,
                clear_all_visible: false,
                tuple: tup(1),
            },
            &mut p,
        )
        .unwrap();
        let dup = HeapRecord::Insert {
            offset: 1,
            init_page: false,
            clear_all_visible: false,
            tuple: tup(1),
        };
        assert!(apply(&dup, &mut p).is_err());
        assert!(apply(
            &HeapRecord::Prune {
                redirected: vec![],
                dead: vec![9],
                unused: vec![],
                prune_xid: 0,
            },
            &mut p
        )
        .is_err());
    }

    #[test]
    fn vm_records_apply_to_vm_pages() {
        let mut p = vec![0u8; BLCKSZ];
        apply(
            &HeapRecord::VmSet {
                heap_block: 3620,
                bits: vm::VM_ALL_VISIBLE,
                count: 9,
                heap_all_visible: true,
                slot: Some(vec![1; crate::access::sumfork::SLOT_BYTES]),
            },
            &mut p,
        )
        .unwrap();
        assert_eq!(vm::get(&p, 3620), (vm::VM_ALL_VISIBLE, 9));
        apply(&HeapRecord::VmClear { heap_block: 3620 }, &mut p).unwrap();
        assert_eq!(vm::get(&p, 3620), (0, 0));
    }
}
