//! Opening a data directory of on-disk format 3 (before HOT chains with
//! indexes): its heap pages of tables with indexes are made what format 4
//! means, once, at open.
//!
//! Format 3 gave every version of a row its own index entries, heap-only
//! ones too, and marked a same-page update HOT (`HOT_UPDATED` on the old
//! version, `HEAP_ONLY` on the new) even when it changed an indexed
//! column. Format 4's readers walk HOT chains from the entry's tuple
//! (`access::heap::hot`) and would follow such a link into a version with
//! other key values. So, for a table with indexes, every HOT mark is
//! cleared: each version becomes a root of its own, which it already is
//! in the indexes (an entry names it), as a format-4 update that changed an
//! indexed column leaves it. The ctid links stay (READ COMMITTED's
//! re-check follows them). A REDIRECT (left by pruning before the table had
//! indexes) is named by no entry, since format 3 indexed tuples where they
//! were: it becomes UNUSED, its target a root.
//!
//! Tables without indexes keep their chains: format 4 reads them the same
//! way, and a later CREATE INDEX names chain roots.
//!
//! Crash safety: a page changed is logged whole (a full-page image) before
//! its lock is released, so redo restores it; the caller records format 4
//! in the control file only after a checkpoint has written every converted
//! page, and a crash before that converts again (a converted page has no
//! mark left, so nothing changes twice).

use super::heapam::HeapRelation;
use super::tuple;
use crate::error::Result;
use crate::storage::page::{self, LP_NORMAL, LP_REDIRECT};
use crate::storage::BlockNumber;

impl HeapRelation {
    /// Clears the HOT marks of every page of this heap (a table with
    /// indexes, written by format 3): see the module doc. Returns the
    /// number of pages changed.
    pub fn convert_from_format3(&self) -> Result<u32> {
        let mut changed = 0;
        for block in 0..self.nblocks()? {
            changed += u32::from(self.convert_page_from_format3(block)?);
        }
        Ok(changed)
    }

    fn convert_page_from_format3(&self, block: BlockNumber) -> Result<bool> {
        let buf = self.read_main(block)?;
        let mut g = buf.write();
        self.check_page(block, &g[..])?;
        if page::is_new(&g[..]) {
            return Ok(false);
        }
        let marks = tuple::HEAP_ONLY_TUPLE | tuple::HEAP_HOT_UPDATED;
        let mut changed = false;
        for o in 1..=page::max_offset(&g[..]) {
            match page::item_id(&g[..], o).flags {
                LP_REDIRECT => {
                    page::set_unused(&mut g[..], o);
                    changed = true;
                }
                LP_NORMAL => {
                    let Some(t) =
                        page::get_item_mut(&mut g[..], o).filter(|t| t.len() >= tuple::HEADER_SIZE)
                    else {
                        continue;
                    };
                    let m = tuple::infomask2(t);
                    if m & marks != 0 {
                        tuple::set_infomask2(t, m & !marks);
                        changed = true;
                    }
                }
                _ => {}
            }
        }
        if changed {
            page::truncate_unused_tail(&mut g[..]);
            self.log_page_image(block, &mut g, 0, None)?;
        }
        Ok(changed)
    }
}
