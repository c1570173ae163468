//! B-tree records in the log: the [`BtLog`] the index access method writes
//! through, which records which changes need a full-page image, and their
//! redo.
//!
//! Every index page change is one [`WalRecord::Btree`](super::WalRecord)
//! record, except the first change of a page after a checkpoint's redo
//! point, which is logged as the page's full image (torn-write protection,
//! as for heap pages) unless the record rewrites the whole page anyway
//! (meta page, split halves, new root, built pages). Redo applies the same
//! [`nbtree::wal::apply`](crate::access::nbtree::wal::apply) run time used,
//! skipping a change the page's LSN shows it already has.

use crate::access::heap::record::PageRef;
use crate::access::nbtree::{wal::apply, BtLog, BtRecord};
use crate::error::Result;
use crate::storage::bufmgr::ReadMode;
use crate::storage::{page, BlockNumber, BufferPool, ForkNumber, RelFileNode};

use super::{Lsn, Wal};

/// Whether `rec` writes its page whole (its redo needs no earlier state).
pub(super) fn rewrites_page(rec: &BtRecord) -> bool {
    matches!(
        rec,
        BtRecord::Meta(_)
            | BtRecord::SplitLeft(_)
            | BtRecord::SplitRight(_)
            | BtRecord::NewRoot(_)
            | BtRecord::BuildPage(_)
    )
}

impl BtLog for Wal {
    fn log(
        &self,
        rel: RelFileNode,
        block: BlockNumber,
        rec: &BtRecord,
        page: &[u8],
    ) -> Result<u64> {
        let at = PageRef {
            rel: rel.0,
            fork: 0,
            block,
        };
        let lsn = self.insert_btree_change(0, at, page, rec);
        self.write_if_full()?;
        Ok(lsn)
    }

    /// A built page goes into the log as a plain full-page image, which
    /// costs no encoding of its items (nor compression) and whose redo is
    /// a copy.
    fn log_image(&self, rel: RelFileNode, block: BlockNumber, page: &[u8]) -> Result<u64> {
        let at = PageRef {
            rel: rel.0,
            fork: 0,
            block,
        };
        let lsn = self.insert_page_image_plain(0, at, page);
        self.write_if_full()?;
        Ok(lsn)
    }

    fn redo_point(&self) -> Option<u64> {
        Some(self.redo_lsn())
    }
}

/// Replays B-tree change `rec` ending at `end`; returns whether it was
/// applied. A change to a page that is missing (its relation dropped or
/// truncated later in the log) is reported to `missing` and skipped, as
/// heap redo does.
pub(super) fn redo(
    pool: &BufferPool,
    at: PageRef,
    rec: &BtRecord,
    end: Lsn,
    missing: &mut dyn FnMut(RelFileNode, BlockNumber),
) -> Result<bool> {
    let rel = RelFileNode(at.rel);
    let init = rewrites_page(rec);
    if !pool.relation_exists(rel, ForkNumber::Main) {
        if init {
            pool.create_relation(rel, ForkNumber::Main)?;
        } else {
            missing(rel, at.block);
            return Ok(false);
        }
    }
    let beyond = at.block >= pool.nblocks(rel, ForkNumber::Main)?;
    if beyond && !init {
        missing(rel, at.block);
        return Ok(false);
    }
    let mode = if init {
        ReadMode::ZeroPage
    } else {
        ReadMode::Normal
    };
    let buf = pool.read_buffer_extended(rel, ForkNumber::Main, at.block, mode, None)?;
    let mut g = buf.write();
    if !init && (page::is_new(&g[..]) || g.lsn() >= end) {
        if page::is_new(&g[..]) {
            missing(rel, at.block);
        }
        return Ok(false);
    }
    apply(rec, &mut g[..])?;
    g.set_lsn(end);
    g.mark_dirty();
    Ok(true)
}
