//! Multi-insert: many tuples onto whole pages with one lock and one record
//! per page (COPY, `INSERT ... SELECT`), and COPY FREEZE's variant.
//!
//! ## Frozen pages (COPY FREEZE)
//! [`HeapRelation::multi_insert_frozen`] writes tuples with `xmin` frozen
//! (`HEAP_XMIN_FROZEN`: committed and invalid, the xid kept for
//! inspection). A page the load found new, or already all-visible (filled
//! by an earlier frozen batch), gets `PD_ALL_VISIBLE` and its visibility-map
//! bits all-visible + all-frozen with its live-tuple count, while its lock
//! is still held, through the same records VACUUM uses (`SetAllVisible`,
//! `VmSet`), so redo sets the same. A page that holds other tuples of the
//! transaction (an `INSERT` before the COPY) keeps them as they are and is
//! not marked. So `count(*)` right after the COPY, and VACUUM, skip those
//! pages; no VACUUM is needed after COMMIT.
//!
//! The caller guarantees what makes this safe (PostgreSQL's rule): the
//! relation file was created by the loading transaction (`CREATE TABLE` or
//! `TRUNCATE` in it), so no other session can read it before that
//! transaction commits, and its abort removes the file with every frozen
//! row in it.

use super::heapam::{HeapRelation, Tid};
use super::pageops::prepare_new_tuple;
use super::record::HeapRecord;
use super::tuple;
use crate::access::vm;
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, maxalign, LP_NORMAL};
use crate::storage::Ring;
use crate::txn::{CommandId, Xid};

/// Free bytes of a new page: everything between the header and the end.
const EMPTY_PAGE_FREE: usize = crate::storage::BLCKSZ - page::PAGE_HEADER_SIZE;

impl HeapRelation {
    /// Inserts many tuples, filling whole pages with one lock and one record
    /// per page (COPY, `INSERT ... SELECT`). `data` holds the tuples back to
    /// back, `lens` their lengths. Pages come from the free-space map first,
    /// then from extending the relation through `ring` (a bulk-write ring).
    /// The tids are appended to `tids` when given.
    pub fn multi_insert(
        &self,
        data: &[u8],
        lens: &[u16],
        xid: Xid,
        cid: CommandId,
        ring: Option<&mut Ring>,
        tids: Option<&mut Vec<Tid>>,
    ) -> Result<()> {
        self.insert_many(data, lens, (xid, cid), ring, tids, false)
    }

    /// [`HeapRelation::multi_insert`] for COPY FREEZE: the tuples are
    /// written frozen and the pages they fill all-visible and all-frozen
    /// (see the module doc). Only for a relation file created by `xid`'s
    /// transaction.
    pub fn multi_insert_frozen(
        &self,
        data: &[u8],
        lens: &[u16],
        xid: Xid,
        cid: CommandId,
        ring: Option<&mut Ring>,
    ) -> Result<()> {
        self.insert_many(data, lens, (xid, cid), ring, None, true)
    }

    fn insert_many(
        &self,
        data: &[u8],
        lens: &[u16],
        (xid, cid): (Xid, CommandId),
        mut ring: Option<&mut Ring>,
        mut tids: Option<&mut Vec<Tid>>,
        frozen: bool,
    ) -> Result<()> {
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        if total != data.len() {
            return Err(err!(
                InternalError,
                "multi-insert lengths do not add up to the data"
            ));
        }
        for &l in lens {
            Self::check_size(l as usize)?;
        }
        let _size = self.hold_size();
        let (mut next, mut at) = (0usize, 0usize);
        let (mut offsets, mut rec_lens, mut rec_data) = (Vec::new(), Vec::new(), Vec::new());
        while next < lens.len() {
            let need = maxalign(lens[next] as usize);
            let (block, buf) = self.page_for(need, None, ring.as_deref_mut())?;
            let mut g = buf.write();
            self.check_page(block, &g[..])?;
            let new = page::is_new(&g[..]);
            // Plan the page: how many of the next tuples fit, at which offsets.
            let (mut max, mut free, mut has_free_lines) = if new {
                (0u16, EMPTY_PAGE_FREE, false)
            } else {
                let p = &g[..];
                (
                    page::max_offset(p),
                    page::upper(p) as usize - page::lower(p) as usize,
                    page::flags(p) & page::PD_HAS_FREE_LINES != 0,
                )
            };
            offsets.clear();
            rec_lens.clear();
            rec_data.clear();
            let first = next;
            while next < lens.len() {
                let len = lens[next] as usize;
                let mut reuse = None;
                if has_free_lines {
                    reuse = (1..=max).find(|&o| {
                        page::item_id(&g[..], o).flags == page::LP_UNUSED && !offsets.contains(&o)
                    });
                    has_free_lines = reuse.is_some();
                }
                let lp = if reuse.is_some() {
                    0
                } else {
                    page::ITEM_ID_SIZE
                };
                if free < maxalign(len) + lp
                    || (reuse.is_none() && max as usize >= page::MAX_HEAP_TUPLES_PER_PAGE)
                {
                    break;
                }
                free -= maxalign(len) + lp;
                let off = reuse.unwrap_or_else(|| {
                    max += 1;
                    max
                });
                offsets.push(off);
                rec_lens.push(len as u16);
                let start = rec_data.len();
                rec_data.extend_from_slice(&data[at..at + len]);
                let t = &mut rec_data[start..];
                prepare_new_tuple(t, xid, cid, block, off, false, false);
                if frozen {
                    tuple::set_infomask(t, tuple::infomask(t) | tuple::HEAP_XMIN_FROZEN);
                }
                at += len;
                next += 1;
            }
            if next == first {
                self.fsm().note(
                    block,
                    if new {
                        0
                    } else {
                        page::heap_free_space(&g[..])
                    },
                );
                if new {
                    return Err(err!(InternalError, "tuple does not fit on an empty page"));
                }
                continue;
            }
            let all_visible = !new && page::is_all_visible(&g[..]);
            // Frozen tuples keep an all-visible page all-visible.
            let mark_frozen = frozen && (new || all_visible);
            let clear = all_visible && !mark_frozen;
            let rec = HeapRecord::MultiInsert {
                init_page: new,
                clear_all_visible: clear,
                offsets: std::mem::take(&mut offsets),
                lens: std::mem::take(&mut rec_lens),
                data: std::mem::take(&mut rec_data),
            };
            self.apply_heap(block, &mut g, &rec, clear, xid)?;
            if mark_frozen {
                self.log_all_visible(block, &mut g, xid)?;
                let p = &g[..];
                let live = (1..=page::max_offset(p))
                    .filter(|&o| page::item_id(p, o).flags == LP_NORMAL)
                    .count();
                let live = u16::try_from(live).expect("a page holds fewer than 65536 tuples");
                self.set_vm(block, vm::VM_ALL_VISIBLE | vm::VM_ALL_FROZEN, live)?;
            }
            self.fsm().note(block, page::heap_free_space(&g[..]));
            if let HeapRecord::MultiInsert {
                offsets: o,
                lens: l,
                data: d,
                ..
            } = rec
            {
                if let Some(tids) = tids.as_deref_mut() {
                    tids.extend(o.iter().map(|&offset| Tid { block, offset }));
                }
                (offsets, rec_lens, rec_data) = (o, l, d);
            }
        }
        Ok(())
    }
}
