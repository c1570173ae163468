//! VACUUM's index pass (PostgreSQL's `btbulkdelete`): walks the leaves
//! left to right along the right-links and removes every item whose heap
//! TID the callback says is dead, one [`BtRecord::Delete`] per page; with
//! [`BTree::bulk_delete_pages`] it then deletes each leaf left empty and
//! finishes deletions a crash interrupted (`pagedel.rs`). The walk follows
//! links, not block numbers, so splits into recycled (lower) blocks during
//! the pass cannot hide items from it.
//!
//! Locking: one leaf at a time, with a plain exclusive lock, not
//! PostgreSQL's cleanup lock (exclusive and the only pin). The cleanup lock
//! is PostgreSQL's interlock with scans that keep a leaf *pinned* while
//! they use the TIDs they copied from it (non-MVCC and index-only scans):
//! VACUUM cannot pass the leaf, and so cannot free the heap slots, while
//! such a scan is there. No heapdb scan reads a leaf under a pin alone or
//! keeps a pin after copying a page, so the pin would interlock nothing:
//! MVCC scans need none (a heap line pointer reused after this pass holds
//! a tuple the scan's snapshot cannot see), and index-only scans read the
//! visibility-map bit under the leaf's shared lock (`scan.rs`), so
//! VACUUM's second heap pass (which frees the line pointers and sets the
//! bits) cannot overtake an entry they hold. Should a scan ever keep a
//! leaf pinned past its lock (marking entries dead, non-MVCC scans), this
//! must become `PinnedBuffer::cleanup_lock`. (A stress test that failed
//! with the cleanup lock here, "high key invariant violated", failed as
//! often with the exclusive lock once it ran long enough: the cause was
//! the descent's rule for a key equal to a pivot, see `tree.rs`.) Scans
//! copy a page's items under the shared lock, so removing items cannot
//! lose a scan's place. A leaf that splits during the pass moves items
//! only to the right, where the walk has not been yet.
//!
//! Crash safety: each page's deletions are one `Delete` record, logged as
//! the page's full image when it is the page's first change after a
//! checkpoint (`wal::btree`), and redone by the same `apply`. VACUUM logs
//! the heap's `VacuumDead` only after every index's deletions, so the log
//! order alone keeps redo from freeing a heap slot an index still names.

use super::btpage::{self as bp};
use super::keys::{tid_of, Tid};
use super::tree::BTree;
use super::wal::BtRecord;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::BlockNumber;

/// What a bulk delete did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BulkDeleteStats {
    /// Entries removed.
    pub tuples_removed: u64,
    /// Leaves deleted (see `pagedel.rs`).
    pub pages_deleted: u32,
}

impl BTree {
    /// Removes the entries whose heap TID `dead` returns true for; returns
    /// how many were removed. Empty pages stay.
    pub fn bulk_delete(&self, dead: impl Fn(Tid) -> bool) -> Result<u64> {
        Ok(self.bulk_delete_inner(&dead, None)?.tuples_removed)
    }

    /// As [`BTree::bulk_delete`], and deletes the leaves left empty (and
    /// finishes deletions a crash interrupted); `next_xid` gives the
    /// transaction manager's next xid, each deleted page's safexid.
    pub fn bulk_delete_pages(
        &self,
        dead: impl Fn(Tid) -> bool,
        next_xid: &dyn Fn() -> u32,
    ) -> Result<BulkDeleteStats> {
        self.bulk_delete_inner(&dead, Some(next_xid))
    }

    fn bulk_delete_inner(
        &self,
        dead: &dyn Fn(Tid) -> bool,
        next_xid: Option<&dyn Fn() -> u32>,
    ) -> Result<BulkDeleteStats> {
        let mut blk = self.leftmost_at_level(0)?;
        let mut stats = BulkDeleteStats::default();
        let mut offsets = Vec::new();
        loop {
            let buf = self.pin(blk)?;
            let mut g = buf.write();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            if o.is_ignorable() {
                drop(g);
                if let Some(nx) = next_xid {
                    stats.pages_deleted += u32::from(self.finish_deletion(blk, nx)?);
                }
            } else {
                offsets.clear();
                for off in bp::first_data(&o)..=page::max_offset(&g) {
                    if dead(tid_of(bp::item(&g, off)?)) {
                        offsets.push(off);
                    }
                }
                if !offsets.is_empty() {
                    stats.tuples_removed += offsets.len() as u64;
                    self.log_apply(
                        &mut g,
                        &BtRecord::Delete {
                            offsets: std::mem::take(&mut offsets),
                        },
                    )?;
                }
                if let Some(nx) = next_xid {
                    stats.pages_deleted += u32::from(self.delete_empty_leaf(g, blk, nx)?);
                }
            }
            if o.is_rightmost() {
                return Ok(stats);
            }
            blk = o.next;
        }
    }
}

impl BTree {
    /// Marks `LP_DEAD` the items `(offset, bytes)` of leaf `blk` that a scan
    /// copied when the page's LSN was `lsn` and whose heap tuples it found
    /// dead to every transaction (PostgreSQL's `_bt_killitems` when the leaf
    /// pin was dropped: nothing is marked if the page changed since, as an
    /// item could then be another entry; a page never logged, LSN 0, is
    /// never marked). One logged [`BtRecord::MarkDead`]: line pointers are
    /// inside the page checksum, so the change cannot be a bare hint.
    pub fn kill_items(
        &self,
        blk: BlockNumber,
        lsn: u64,
        items: &[(OffsetNumber, &[u8])],
    ) -> Result<()> {
        if lsn == 0 || self.log.is_none() {
            return Ok(());
        }
        let buf = self.pin(blk)?;
        let mut g = buf.write();
        if g.lsn() != lsn || page::is_new(&g) {
            return Ok(());
        }
        let o = bp::opaque(&g);
        if !o.is_leaf() || o.is_ignorable() {
            return Ok(());
        }
        let mut offsets = Vec::with_capacity(items.len());
        for &(off, key) in items {
            if off >= bp::first_data(&o)
                && off <= page::max_offset(&g)
                && bp::live_item(&g, off)? == Some(key)
            {
                offsets.push(off);
            }
        }
        if offsets.is_empty() {
            return Ok(());
        }
        offsets.sort_unstable();
        offsets.dedup();
        self.log_apply(&mut g, &BtRecord::MarkDead { offsets })
    }

    /// The index's size in pages (VACUUM VERBOSE's `pages: N in total`).
    pub fn num_pages(&self) -> Result<u32> {
        self.pool()
            .nblocks(self.rel(), crate::storage::ForkNumber::Main)
    }
}
