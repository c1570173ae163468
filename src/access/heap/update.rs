//! The heap's UPDATE (PostgreSQL's `heap_update`): the HOT decision and
//! opportunistic pruning (`heap_page_prune_opt`) when the old page lacks
//! room.
//!
//! - The new version goes on the old page when it fits. It is heap-only
//!   (the old version `HOT_UPDATED`, the new `HEAP_ONLY`, one `HotUpdate`
//!   record) when the caller's [`HotRule`] allows it: no index, or no
//!   indexed column changed. Otherwise it is a root of its own on the same
//!   page, and the caller makes its index entries.
//! - When the old page is full and may hold dead versions, the update lets
//!   go of the page and tries once to prune it (`heap::prune_opt`: its
//!   `prune_xid` older than the oldest xmin, deleted or updated versions
//!   filling a tenth of it, a cleanup lock free now); if that freed space
//!   the update starts again, so that repeated updates of the same rows
//!   stay on their page.
//! - Otherwise the new version goes to another page: both pages locked in
//!   block order, the old tuple checked again.

use super::heapam::{HeapRelation, Tid};
use super::hot::HotRule;
use super::pageops::{choose_offset, prepare_new_tuple, xmax_set_for};
use super::prune::PruneMode;
use super::record::HeapRecord;
use super::visibility::{satisfies_update, TmResult};
use crate::error::Result;
use crate::storage::page::{self, maxalign};
use crate::storage::PinnedBuffer;
use crate::txn::{CommandId, Xid};

/// Where an update put the new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewVersion {
    /// Its tuple id.
    pub tid: Tid,
    /// Heap-only (HOT): reached through its chain's root, it needs no
    /// index entries.
    pub heap_only: bool,
}

impl HeapRelation {
    /// Replaces the tuple at `tid` with `data` (a formed tuple) as
    /// transaction `xid` at command `cid`, for a table without indexes
    /// ([`HotRule::NoIndexes`]): see [`update_with`](Self::update_with).
    pub fn update(
        &self,
        tid: Tid,
        data: &[u8],
        xid: Xid,
        cid: CommandId,
    ) -> Result<(TmResult, Option<Tid>)> {
        let (res, new) = self.update_with(tid, data, xid, cid, HotRule::NoIndexes)?;
        Ok((res, new.map(|n| n.tid)))
    }

    /// Replaces the tuple at `tid` with `data` (a formed tuple) as
    /// transaction `xid` at command `cid`. The new version goes on the same
    /// page when it fits (heap-only when `rule` allows), else on another
    /// page; the old version's xmax and ctid point at it. Returns the check
    /// result and, when it is [`TmResult::Ok`], where the new version went.
    pub fn update_with(
        &self,
        tid: Tid,
        data: &[u8],
        xid: Xid,
        cid: CommandId,
        rule: HotRule<'_>,
    ) -> Result<(TmResult, Option<NewVersion>)> {
        Self::check_size(data.len())?;
        let _size = self.hold_size();
        let mut tried_prune = false;
        loop {
            let old_buf = self.read_main(tid.block)?;
            let mut g = old_buf.write();
            self.check_page(tid.block, &g[..])?;
            let Some(t) = page::get_item(&g[..], tid.offset) else {
                return Ok((TmResult::Invisible, None));
            };
            let seen_xmax = super::tuple::xmax(t);
            let (res, hints) = satisfies_update(t, tid.pair(), xid, cid, self.txns())?;
            Self::set_hints(&mut g, tid.offset, hints, seen_xmax);
            if res != TmResult::Ok {
                return Ok((res, None));
            }
            if let Some(off) = choose_offset(&g[..], data.len()) {
                // Same page: one record changes both versions.
                let t = page::get_item(&g[..], tid.offset).expect("checked above");
                let hot = rule.allows(t, data)?;
                let set = xmax_set_for(t, tid.offset, xid, cid, (tid.block, off));
                let mut nt = data.to_vec();
                prepare_new_tuple(&mut nt, xid, cid, tid.block, off, true, hot);
                let clear = page::is_all_visible(&g[..]);
                let rec = HeapRecord::HotUpdate {
                    set,
                    new_offset: off,
                    hot,
                    clear_all_visible: clear,
                    tuple: nt,
                };
                self.apply_heap(tid.block, &mut g, &rec, clear, xid)?;
                self.fsm().note(tid.block, page::heap_free_space(&g[..]));
                let tid = Tid {
                    block: tid.block,
                    offset: off,
                };
                return Ok((
                    TmResult::Ok,
                    Some(NewVersion {
                        tid,
                        heap_only: hot,
                    }),
                ));
            }
            self.fsm().note(tid.block, page::heap_free_space(&g[..]));
            let px = page::prune_xid(&g[..]);
            drop(g);
            if !tried_prune && px != 0 {
                tried_prune = true;
                let mode = if rule.indexed() {
                    PruneMode::RootsIndexed
                } else {
                    PruneMode::NoIndexes
                };
                if self.prune_opt(&old_buf, px, mode)? {
                    continue;
                }
            }
            if let Some(done) = self.update_elsewhere(tid, old_buf, data, xid, cid)? {
                return Ok(done);
            }
        }
    }

    /// The update's new version on another page than the old one's (its
    /// pinned buffer `old_buf`): `None` when the page chosen turned out to
    /// be full (the caller starts again).
    fn update_elsewhere(
        &self,
        tid: Tid,
        old_buf: PinnedBuffer<'_>,
        data: &[u8],
        xid: Xid,
        cid: CommandId,
    ) -> Result<Option<(TmResult, Option<NewVersion>)>> {
        // Another page keeps the fill factor's share free, as an insert
        // does.
        let reserve = self.fill_reserve();
        let need = maxalign(data.len()) + reserve;
        // Lock both in block order, then check again.
        let (nb, new_buf) = self.page_for(need, Some(tid.block), None)?;
        let (mut go, mut gn) = if nb < tid.block {
            let gn = new_buf.write();
            (old_buf.write(), gn)
        } else {
            let go = old_buf.write();
            (go, new_buf.write())
        };
        self.check_page(nb, &gn[..])?;
        let Some(t) = page::get_item(&go[..], tid.offset) else {
            return Ok(Some((TmResult::Invisible, None)));
        };
        let (res, _) = satisfies_update(t, tid.pair(), xid, cid, self.txns())?;
        if res != TmResult::Ok {
            return Ok(Some((res, None)));
        }
        let new = page::is_new(&gn[..]);
        let off = if new {
            Some(1)
        } else {
            choose_offset(&gn[..], data.len() + reserve)
        };
        let Some(off) = off else {
            self.fsm().note(nb, page::heap_free_space(&gn[..]));
            return Ok(None);
        };
        let set = xmax_set_for(t, tid.offset, xid, cid, (nb, off));
        let mut nt = data.to_vec();
        prepare_new_tuple(&mut nt, xid, cid, nb, off, true, false);
        let clear_new = !new && page::is_all_visible(&gn[..]);
        let rec_new = HeapRecord::UpdateNew {
            offset: off,
            init_page: new,
            clear_all_visible: clear_new,
            tuple: nt,
        };
        self.apply_heap(nb, &mut gn, &rec_new, clear_new, xid)?;
        let clear_old = page::is_all_visible(&go[..]);
        self.apply_heap(
            tid.block,
            &mut go,
            &HeapRecord::UpdateOld {
                set,
                clear_all_visible: clear_old,
            },
            clear_old,
            xid,
        )?;
        self.fsm().note(nb, page::heap_free_space(&gn[..]));
        let tid = Tid {
            block: nb,
            offset: off,
        };
        Ok(Some((
            TmResult::Ok,
            Some(NewVersion {
                tid,
                heap_only: false,
            }),
        )))
    }
}
