//! VACUUM's index pass (PostgreSQL's `btbulkdelete`, without page
//! deletion): walks the leaves left to right along the right-links and
//! removes every item whose heap TID the callback says is dead, one
//! [`BtRecord::Delete`] per page. Emptied pages stay in the tree (page
//! deletion and recycling come later).
//!
//! Locking: one leaf at a time, exclusively. Scans copy a page's items
//! under the shared lock and keep no pin, so removing items cannot lose a
//! scan's place. As PostgreSQL notes, that is enough for MVCC scans: a heap
//! line pointer reused after this pass holds a tuple the scan's snapshot
//! cannot see. Index-only and non-MVCC scans (not yet built) need its
//! interlock: the scan keeps the leaf pinned until its TIDs are processed
//! and the bulk delete takes a cleanup lock on every leaf. A leaf that
//! splits during the pass moves items only to the right, where the walk has
//! not been yet.

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
        loop {
            let buf = self.pin(blk)?;
            let mut g = buf.write();
            bp::verify(&g, blk)?;
            let o = bp::opaque(&g);
            let mut offsets = Vec::new();
            for off in bp::first_data(&o)..=page::max_offset(&g) {
                if dead(tid_of(bp::item(&g, off)?)) {
                    offsets.push(off);
                }
            }
            if !offsets.is_empty() {
                removed += offsets.len() as u64;
                self.log_apply(&mut g, &BtRecord::Delete { offsets })?;
            }
            if o.is_rightmost() {
                return Ok(removed);
            }
            blk = o.next;
        }
    }
}
