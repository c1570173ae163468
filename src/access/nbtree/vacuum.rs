//! VACUUM's index pass (PostgreSQL's `btbulkdelete`, without page
//! deletion): walks the leaves left to right along the right-links and
//! removes every item whose heap TID the callback says is dead, one
//! [`BtRecord::Delete`] per page. Emptied pages stay in the tree (page
//! deletion and recycling come later).
//!
//! Locking: one leaf at a time, exclusively. (PostgreSQL's `btvacuumpage`
//! takes a cleanup lock; with `PinnedBuffer::cleanup_lock` here, concurrent
//! inserters left leaf items above their page's high key in a stress test,
//! so that lock waits until the cause is understood.) Scans copy a page's
//! items under the shared lock,
//! so removing items cannot lose a scan's place. As PostgreSQL notes, that
//! is enough for MVCC scans: a heap line pointer reused after this pass
//! holds a tuple the scan's snapshot cannot see. Index-only scans, which
//! trust the visibility map instead of the heap, read its bit under the
//! leaf's shared lock (`scan.rs`), so VACUUM's second heap pass (which
//! frees the line pointers and sets visibility-map bits) cannot overtake
//! an entry they hold; PostgreSQL gets the same from a leaf pin and a
//! cleanup lock here. A leaf that
//! splits during the pass moves items only to the right, where the walk has
//! not been yet.
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
