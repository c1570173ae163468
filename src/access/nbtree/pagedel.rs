//! Page deletion and recycling (PostgreSQL's `_bt_pagedel`,
//! `_bt_mark_page_halfdead`, `_bt_unlink_halfdead_page` and the free pages
//! of `btvacuumcleanup`), for leaves: VACUUM's bulk delete removes every
//! empty leaf that is neither the root nor the rightmost page of its level
//! nor the rightmost child of its parent, in two stages, then lists deleted
//! pages no scan can reach any more on the meta page, where splits take
//! them for their new right halves. Internal pages are never deleted.
//!
//! 1. **Half-dead.** With the leaf exclusively locked (and empty), then its
//!    parent: the leaf gets `HALF_DEAD` ([`BtRecord::SetFlags`]), then the
//!    parent's downlink to it takes its right sibling's downlink, whose
//!    item goes ([`BtRecord::DeleteDownlink`]): the right sibling's key
//!    range takes in the leaf's. Descents and scans pass a half-dead or
//!    deleted page to its right (`Opaque::is_ignorable`), so a descent
//!    that read the old downlink still lands on the right page.
//! 2. **Unlink.** With the left sibling, the page and the right sibling
//!    locked in that order (as a split): the page becomes `DELETED` with the
//!    next transaction id, its *safexid* ([`BtRecord::MarkDeleted`]; its
//!    links stay, for scans still on it), the right sibling's left-link
//!    skips it ([`BtRecord::SetPrev`]), then the left sibling's right-link
//!    ([`BtRecord::SetNext`]).
//!
//! Every prefix of these records is a valid tree: a page that is
//! half-dead, or deleted but still linked from its left, lies on the leaf
//! level's right-link chain, where the next bulk delete finds it and
//! finishes (the parent change is made again only if the downlink is still
//! there). A half-dead page whose downlink a later parent split left as
//! the last of its page stays half-dead (harmless: it is passed over).
//!
//! **Recycling.** A deleted page may be reused once no scan or descent can
//! still be about to read it: one that copied a link to it before it was
//! unlinked. Every scan runs in a transaction whose xid or registered
//! snapshot xmin is at most the next xid at the time it started, so once
//! VACUUM's horizon (the oldest such xmin) is past the page's safexid,
//! everyone who could hold its number has finished (PostgreSQL's
//! `BTPageIsRecyclable`). [`BTree::vacuum_cleanup`] scans the file for
//! deleted pages, counts them, and writes the recyclable, fully unlinked
//! ones to the meta page's free list ([`BtRecord::FreeList`]); a split
//! takes one ([`BtRecord::TakeFree`]) and reuses it only if it is still
//! deleted under its exclusive lock, which it keeps until the new right
//! half is written. A list lost (a crash after `TakeFree`, a rewrite of
//! the meta data by a root split) leaves pages deleted, found again by
//! the next cleanup. Only VACUUM deletes pages, one VACUUM per table at a
//! time.

use super::btpage::{self as bp, BTP_HALF_DEAD, P_HIKEY, P_NONE};
use super::tree::{choose_child, past_high_key, BTree, Target, META_BLOCK};
use super::wal::BtRecord;
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::BlockNumber;

/// What [`BTree::vacuum_cleanup`] found (VACUUM VERBOSE's index line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanupStats {
    /// Pages in the file.
    pub pages: u32,
    /// Deleted pages (reusable or not yet).
    pub deleted: u32,
    /// Deleted pages now listed as reusable.
    pub reusable: u32,
}

impl BTree {
    /// Deletes the empty leaf `blk`, exclusively locked by `g` (released
    /// here), if it qualifies; returns whether it was deleted.
    pub(crate) fn delete_empty_leaf(
        &self,
        g: crate::storage::BufferWriteGuard<'_>,
        blk: BlockNumber,
        next_xid: &dyn Fn() -> u32,
    ) -> Result<bool> {
        let mut g = g;
        let o = bp::opaque(&g);
        if !o.is_leaf()
            || o.is_root()
            || o.is_rightmost()
            || o.is_ignorable()
            || o.incomplete_split()
            || bp::first_data(&o) <= page::max_offset(&g)
        {
            return Ok(false);
        }
        let rblk = o.next;
        {
            // Never merge into a page being deleted (left to right: allowed).
            let rbuf = self.pin(rblk)?;
            let rg = rbuf.read();
            if bp::opaque(&rg).is_ignorable() {
                return Ok(false);
            }
        }
        let hikey = bp::pivot_key(bp::item(&g, P_HIKEY)?).to_vec();
        let Some(mut pblk) = self.parent_by_key(&hikey)? else {
            return Ok(false);
        };
        loop {
            let pbuf = self.pin(pblk)?;
            let mut pg = pbuf.write();
            let po = bp::opaque(&pg);
            match find_downlink(&pg, &po, blk)? {
                Some(off) if off < page::max_offset(&pg) => {
                    if bp::downlink(bp::item(&pg, off + 1)?) != rblk {
                        return Ok(false);
                    }
                    let half = BtRecord::SetFlags {
                        set: BTP_HALF_DEAD,
                        clear: 0,
                    };
                    self.log_apply(&mut g, &half)?;
                    self.log_apply(&mut pg, &BtRecord::DeleteDownlink { offset: off })?;
                    break;
                }
                // The rightmost child of its parent: not deleted.
                Some(_) => return Ok(false),
                None if po.is_rightmost() => return Ok(false),
                None => pblk = po.next,
            }
        }
        drop(g);
        self.unlink(blk, next_xid)
    }

    /// The level-1 page whose key range holds `key` (a leaf's high key:
    /// the page holding its right sibling's downlink), or `None` for a
    /// one-level tree.
    fn parent_by_key(&self, key: &[u8]) -> Result<Option<BlockNumber>> {
        let meta = self.meta()?;
        if meta.level == 0 {
            return Ok(None);
        }
        let t = Target::AtOrAfter(key);
        let mut blk = meta.root;
        loop {
            let buf = self.pin(blk)?;
            let g = buf.read();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            if o.is_leaf() {
                return Err(err!(
                    DataCorrupted,
                    "index \"{}\" levels are inconsistent",
                    self.rel()
                ));
            }
            if past_high_key(&g, &o, &t)? {
                blk = o.next;
                continue;
            }
            if o.level == 1 {
                return Ok(Some(blk));
            }
            blk = bp::downlink(bp::item(&g, choose_child(&g, &o, &t)?)?);
        }
    }

    /// Finishes the deletion of a half-dead page, or the unlinking of a
    /// deleted one still linked from its left (a crash between the
    /// records); returns whether the page became deleted here.
    pub(crate) fn finish_deletion(
        &self,
        blk: BlockNumber,
        next_xid: &dyn Fn() -> u32,
    ) -> Result<bool> {
        let buf = self.pin(blk)?;
        let g = buf.write();
        let o = bp::opaque(&g);
        if !o.is_ignorable() || !o.is_leaf() {
            return Ok(false);
        }
        if !o.is_deleted() {
            // Stage 1 may have stopped before the parent's change.
            let mut pblk = self.leftmost_at_level(1)?;
            loop {
                let pbuf = self.pin(pblk)?;
                let mut pg = pbuf.write();
                let po = bp::opaque(&pg);
                match find_downlink(&pg, &po, blk)? {
                    Some(off) if off < page::max_offset(&pg) => {
                        if bp::downlink(bp::item(&pg, off + 1)?) != o.next {
                            return Ok(false);
                        }
                        self.log_apply(&mut pg, &BtRecord::DeleteDownlink { offset: off })?;
                        break;
                    }
                    Some(_) => return Ok(false),
                    None if po.is_rightmost() => break,
                    None => pblk = po.next,
                }
            }
        }
        drop(g);
        self.unlink(blk, next_xid)
    }

    /// Stage 2 (idempotent): marks the half-dead page `blk` deleted and
    /// takes it out of its level's sibling chain. Returns whether it was
    /// marked here.
    fn unlink(&self, blk: BlockNumber, next_xid: &dyn Fn() -> u32) -> Result<bool> {
        let lblk = {
            let buf = self.pin(blk)?;
            let g = buf.read();
            bp::opaque(&g).prev
        };
        // The left sibling: the page whose right-link is `blk`, found by
        // moving right from the left-link (it may have split since).
        let mut b = lblk;
        loop {
            let lbuf = match b {
                P_NONE => None,
                _ => Some(self.pin(b)?),
            };
            let mut lg = lbuf.as_ref().map(|l| l.write());
            if let Some(l) = &lg {
                let next = bp::opaque(l).next;
                if next != blk {
                    if next == P_NONE {
                        return Err(err!(
                            DataCorrupted,
                            "could not find left sibling of block {blk} in index \"{}\"",
                            self.rel()
                        ));
                    }
                    b = next;
                    continue;
                }
            }
            let tbuf = self.pin(blk)?;
            let mut tg = tbuf.write();
            let to = bp::opaque(&tg);
            if !to.is_ignorable() || to.is_rightmost() {
                return Ok(false);
            }
            let rbuf = self.pin(to.next)?;
            let mut rg = rbuf.write();
            let newly = !to.is_deleted();
            if newly {
                let rec = BtRecord::MarkDeleted {
                    safexid: next_xid(),
                };
                self.log_apply(&mut tg, &rec)?;
            }
            if bp::opaque(&rg).prev == blk {
                self.log_apply(&mut rg, &BtRecord::SetPrev { prev: b })?;
            }
            if let Some(l) = lg.as_mut() {
                self.log_apply(l, &BtRecord::SetNext { next: to.next })?;
            }
            return Ok(newly);
        }
    }

    /// VACUUM's cleanup (PostgreSQL's `btvacuumcleanup`): counts the
    /// deleted pages and lists on the meta page those whose safexid is
    /// before `oldest_xmin` and that no sibling links to any more.
    pub fn vacuum_cleanup(&self, oldest_xmin: u32) -> Result<CleanupStats> {
        let pages = self.num_pages()?;
        let mut stats = CleanupStats {
            pages,
            ..CleanupStats::default()
        };
        let mut free = Vec::new();
        for blk in 1..pages {
            let buf = self.pin(blk)?;
            let g = buf.read();
            if page::is_new(&g) {
                continue;
            }
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            if !o.is_deleted() {
                continue;
            }
            stats.deleted += 1;
            let old = bp::safexid(&g)? < oldest_xmin;
            drop(g);
            if old && free.len() < bp::MAX_FREE_LIST && self.is_unlinked(blk, o.prev, o.next)? {
                free.push(blk);
            }
        }
        stats.reusable = free.len() as u32;
        let mbuf = self.pin(META_BLOCK)?;
        let mut mg = mbuf.write();
        if bp::free_list(&mg) != free {
            self.log_apply(&mut mg, &BtRecord::FreeList { blocks: free })?;
        }
        // PostgreSQL's `btm_last_cleanup_num_delpages`: pages_deleted -
        // pages_free, written only when it changed.
        let delpages = stats.deleted - stats.reusable;
        if bp::cleanup_delpages(&mg) != delpages {
            self.log_apply(&mut mg, &BtRecord::CleanupInfo { delpages })?;
        }
        Ok(stats)
    }

    /// The deleted pages the last cleanup found not yet reusable
    /// (`bt_metap`'s `last_cleanup_num_delpages`).
    pub fn last_cleanup_num_delpages(&self) -> Result<u32> {
        let buf = self.pin(META_BLOCK)?;
        let g = buf.read();
        bp::read_meta(&g)?;
        Ok(bp::cleanup_delpages(&g))
    }

    /// Whether a VACUUM that removed nothing from the index should still
    /// run its cleanup (PostgreSQL's `_bt_vacuum_needs_cleanup`): the last
    /// cleanup left deleted pages, more than 5% of the index's `pages`,
    /// that may be reusable by now.
    pub fn cleanup_needed(&self, pages: u32) -> Result<bool> {
        let prev = self.last_cleanup_num_delpages()?;
        Ok(prev > 0 && prev > pages / 20)
    }

    /// Whether neither sibling of the deleted page `blk` links to it.
    fn is_unlinked(&self, blk: BlockNumber, prev: BlockNumber, next: BlockNumber) -> Result<bool> {
        for (sib, left) in [(prev, true), (next, false)] {
            if sib == P_NONE {
                continue;
            }
            let buf = self.pin(sib)?;
            let g = buf.read();
            let o = bp::opaque(&g);
            if (left && o.next == blk) || (!left && o.prev == blk) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The offset of the downlink to `child` on an internal page.
fn find_downlink(p: &[u8], o: &bp::Opaque, child: BlockNumber) -> Result<Option<OffsetNumber>> {
    if o.is_leaf() {
        return Ok(None);
    }
    for off in bp::first_data(o)..=page::max_offset(p) {
        if bp::downlink(bp::item(p, off)?) == child {
            return Ok(Some(off));
        }
    }
    Ok(None)
}
