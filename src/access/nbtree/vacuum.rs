//! VACUUM's index pass (PostgreSQL's `btbulkdelete`, without page
//! deletion): walks the leaves left to right along the right-links and
//! removes every item whose heap TID the callback says is dead, one
//! [`BtRecord::Delete`] per page. Emptied pages stay in the tree (page
//! deletion and recycling come later).
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
use crate::storage::page;

impl BTree {
    /// Removes the entries whose heap TID `dead` returns true for; returns
    /// how many were removed.
    pub fn bulk_delete(&self, dead: impl Fn(Tid) -> bool) -> Result<u64> {
        let mut blk = self.leftmost_at_level(0)?;
        let mut removed = 0;
        let mut offsets = Vec::new();
        loop {
            let buf = self.pin(blk)?;
            let mut g = buf.write();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            offsets.clear();
            for off in bp::first_data(&o)..=page::max_offset(&g) {
                if dead(tid_of(bp::item(&g, off)?)) {
                    offsets.push(off);
                }
            }
            if !offsets.is_empty() {
                removed += offsets.len() as u64;
                self.log_apply(
                    &mut g,
                    &BtRecord::Delete {
                        offsets: std::mem::take(&mut offsets),
                    },
                )?;
            }
            if o.is_rightmost() {
                return Ok(removed);
            }
            blk = o.next;
        }
    }
}

impl BTree {
    /// The index's size in pages (VACUUM VERBOSE's `pages: N in total`).
    pub fn num_pages(&self) -> Result<u32> {
        self.pool()
            .nblocks(self.rel(), crate::storage::ForkNumber::Main)
    }
}
