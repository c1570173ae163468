//! Opportunistic pruning (PostgreSQL's `heap_page_prune_opt`): a reader
//! or an update that finds a page nearly full of versions dead to everyone
//! prunes it on the way, so that the next UPDATE of a row there finds room
//! on the page and stays heap-only.
//!
//! The page is pruned when all of these hold, cheapest first:
//! - its `prune_xid` is set (some version on it was deleted or updated)
//!   and older than the oldest xmin still needed;
//! - its free space is under `max(fill factor's share, BLCKSZ / 10)`
//!   (PostgreSQL's `minfree`): a page with room needs no pruning yet;
//! - deleted or updated versions fill at least a tenth of it
//!   ([`worth_pruning`]): a pruning costs about as much as several index
//!   insertions (the page walked, compacted and logged), so one that frees
//!   a version or two costs more than the heap-only updates it allows save;
//! - a *conditional* cleanup lock is free now (nobody else pins the page):
//!   nobody waits for one.
//!
//! Pruning here is VACUUM's first pass on one page ([`PruneMode`]): the
//! same record, the same crash behaviour.

use super::heapam::HeapRelation;
use super::prune::{PruneMode, PruneScratch};
use super::tuple;
use crate::error::Result;
use crate::storage::page::{self, maxalign};
use crate::storage::{PinnedBuffer, BLCKSZ};
use crate::txn::Xid;

/// Whether page `p` holds enough deleted or updated versions (at least a
/// tenth of the page) for a pruning to pay (see the module doc). A walk of
/// the line pointers and headers, under the caller's lock.
pub(super) fn worth_pruning(p: &[u8]) -> bool {
    let mut bytes = 0usize;
    for o in 1..=page::max_offset(p) {
        let Some(t) = page::get_item(p, o) else {
            continue;
        };
        if t.len() >= tuple::HEADER_SIZE
            && tuple::infomask(t) & tuple::HEAP_XMAX_INVALID == 0
            && tuple::xmax(t) != 0
        {
            bytes += maxalign(t.len());
        }
    }
    bytes >= BLCKSZ / 10
}

/// The page's `prune_xid` when a reader should consider pruning page `p`
/// of a heap whose inserts keep `reserve` bytes free: some version was
/// deleted or updated, and the free space is under PostgreSQL's
/// `minfree`. Two header reads: what every index fetch pays.
#[inline]
pub(super) fn reader_may_prune(p: &[u8], reserve: usize) -> Option<Xid> {
    let px = page::prune_xid(p);
    (px != 0 && page::heap_free_space(p) < reserve.max(BLCKSZ / 10)).then_some(px)
}

impl HeapRelation {
    /// Prunes page `buf` (pinned once by the caller, not locked) whose
    /// `prune_xid` was `px` when `px` is older than the oldest xmin, the
    /// page is [`worth_pruning`] and a cleanup lock is free now. True when
    /// space was freed.
    pub(super) fn prune_opt(
        &self,
        buf: &PinnedBuffer<'_>,
        px: Xid,
        mode: PruneMode,
    ) -> Result<bool> {
        let oldest = self.txns().oldest_xmin();
        if px >= oldest {
            return Ok(false);
        }
        let Some(mut c) = buf.try_cleanup_lock() else {
            return Ok(false);
        };
        if !worth_pruning(&c[..]) {
            return Ok(false);
        }
        let block = buf.block();
        let stats = self.prune_locked(block, &mut c, oldest, mode, &mut PruneScratch::default())?;
        Ok(stats.freed > 0)
    }
}
