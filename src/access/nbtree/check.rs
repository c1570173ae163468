//! A structural checker, as amcheck's `bt_index_check` and
//! `bt_index_parent_check`: walks every level from the root down along the
//! right-links and verifies
//!
//! - each page is a B-tree page of the right level and kind, and its
//!   left-link names the page the walk came from (or, after a crash in the
//!   middle of a split, a page further left);
//! - keys ascend strictly within a page and lie below its high key;
//! - leaf items are full keys (columns and a heap TID), internal pages
//!   start with a minus-infinity downlink;
//! - the downlinks of a level name the pages of the level below in their
//!   right-link order, skipping only right halves of `INCOMPLETE_SPLIT`
//!   pages; every child's keys lie within its downlink's bounds, and the
//!   high key of the last page a downlink covers equals the next bound.
//!
//! Pages are copied under a shared lock one at a time; the result is exact
//! only for an index nobody is changing.

use super::btpage::{self as bp, Opaque, BTP_DELETED, BTP_HALF_DEAD, BTP_META, P_HIKEY, P_NONE};
use super::keys::decode_key;
use super::tree::BTree;
use crate::err;
use crate::error::Result;
use crate::storage::page;
use crate::storage::BlockNumber;

/// What the checker saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Pages per level, leaves first.
    pub pages_per_level: Vec<usize>,
    /// Leaf items (index entries).
    pub leaf_items: usize,
}

/// A downlink with the bounds of the keys under it (`None`: unbounded).
struct Down {
    child: BlockNumber,
    lo: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
}

struct Page {
    blk: BlockNumber,
    o: Opaque,
    bytes: Vec<u8>,
}

fn fail(tree: &BTree, msg: String) -> crate::error::Error {
    err!(DataCorrupted, "index \"{}\": {msg}", tree.rel())
}

/// Walks one level from `start`, checking each page on its own.
fn walk_level(tree: &BTree, start: BlockNumber, level: u32) -> Result<Vec<Page>> {
    let mut pages: Vec<Page> = Vec::new();
    let mut blk = start;
    while blk != P_NONE {
        let buf = tree.pin(blk)?;
        let bytes = buf.read().to_vec();
        drop(buf);
        bp::verify(&bytes, blk)?;
        let o = bp::opaque(&bytes);
        let prev = pages.last().map_or(P_NONE, |p| p.blk);
        // Only leaves are deleted; a half-dead or deleted page (linked from
        // its left until its unlinking is done) holds no data items.
        let dead_ok = level == 0 || o.flags & (BTP_DELETED | BTP_HALF_DEAD) == 0;
        if o.level != level || o.is_leaf() != (level == 0) || o.flags & BTP_META != 0 || !dead_ok {
            return Err(fail(
                tree,
                format!(
                    "block {blk} has level {} flags {:#x}, expected level {level}",
                    o.level, o.flags
                ),
            ));
        }
        // A left-link may lag behind after a crash between a split's
        // records (backward scans walk right from it), but it must name a
        // page to the left on this level.
        if o.prev != prev && !pages.iter().any(|p| p.blk == o.prev) {
            return Err(fail(
                tree,
                format!("left-link of block {blk} is {}, expected {prev}", o.prev),
            ));
        }
        if pages.len() > 1_000_000_000 / 8192 {
            return Err(fail(tree, "right-links form a cycle".into()));
        }
        if !o.is_ignorable() {
            check_page(tree, blk, &o, &bytes)?;
        } else if o.is_rightmost() || page::max_offset(&bytes) > 1 {
            return Err(fail(
                tree,
                format!("half-dead or deleted block {blk} is rightmost or has items"),
            ));
        }
        pages.push(Page { blk, o, bytes });
        blk = o.next;
    }
    Ok(pages)
}

/// Key order within one page and against its high key.
fn check_page(tree: &BTree, blk: BlockNumber, o: &Opaque, p: &[u8]) -> Result<()> {
    let first = bp::first_data(o);
    let max = page::max_offset(p);
    let hikey = match o.is_rightmost() {
        true => None,
        false => Some(bp::pivot_key(bp::item(p, P_HIKEY)?)),
    };
    if let Some(h) = hikey {
        decode_key(tree.desc(), h)?;
    }
    let mut prev: Option<&[u8]> = None;
    for off in first..=max {
        let k = bp::key_at(p, o, off)?;
        let (_, tid) = decode_key(tree.desc(), k)?;
        if o.is_leaf() && tid.is_none() {
            return Err(fail(
                tree,
                format!("leaf item ({blk},{off}) has no heap TID"),
            ));
        }
        if !o.is_leaf() && (off == first) != k.is_empty() {
            return Err(fail(
                tree,
                format!("downlink ({blk},{off}) has a wrong minus-infinity key"),
            ));
        }
        if prev.is_some_and(|pk| pk >= k) {
            return Err(fail(
                tree,
                format!("item order invariant violated at ({blk},{off})"),
            ));
        }
        if hikey.is_some_and(|h| k >= h) {
            return Err(fail(
                tree,
                format!("high key invariant violated at ({blk},{off})"),
            ));
        }
        prev = Some(k);
    }
    Ok(())
}

/// The downlinks of one internal level, with their key bounds.
fn downlinks(pages: &[Page]) -> Result<Vec<Down>> {
    let mut out = Vec::new();
    let mut page_lo: Option<Vec<u8>> = None;
    for pg in pages {
        let (p, o) = (&pg.bytes, &pg.o);
        let hikey = match o.is_rightmost() {
            true => None,
            false => Some(bp::pivot_key(bp::item(p, P_HIKEY)?).to_vec()),
        };
        let (first, max) = (bp::first_data(o), page::max_offset(p));
        for off in first..=max {
            let t = bp::item(p, off)?;
            let lo = match off == first {
                true => page_lo.clone(),
                false => Some(bp::pivot_key(t).to_vec()),
            };
            let hi = match off < max {
                true => Some(bp::pivot_key(bp::item(p, off + 1)?).to_vec()),
                false => hikey.clone(),
            };
            out.push(Down {
                child: bp::downlink(t),
                lo,
                hi,
            });
        }
        page_lo = hikey;
    }
    Ok(out)
}

/// The parent level's downlinks against the child level's pages.
fn check_children(tree: &BTree, downs: &[Down], children: &[Page]) -> Result<()> {
    let mut i = 0;
    // The lower bound carried over from a downlink to a half-dead page
    // (a crash between the two records of its first stage): its key range
    // already belongs to the next page.
    let mut carried: Option<Option<Vec<u8>>> = None;
    for (d, dl) in downs.iter().enumerate() {
        // Pages being deleted have no downlink (or a stale one, below).
        while children
            .get(i)
            .is_some_and(|c| c.o.is_ignorable() && c.blk != dl.child)
        {
            i += 1;
        }
        let Some(c) = children.get(i) else {
            return Err(fail(
                tree,
                format!(
                    "downlink to block {} has no page at the level below",
                    dl.child
                ),
            ));
        };
        if c.blk != dl.child {
            return Err(fail(
                tree,
                format!(
                    "downlink {d} points to block {}, the level below has block {}",
                    dl.child, c.blk
                ),
            ));
        }
        if c.o.is_ignorable() {
            if c.o.is_deleted() {
                return Err(fail(
                    tree,
                    format!("downlink {d} points to deleted block {}", c.blk),
                ));
            }
            carried.get_or_insert(dl.lo.clone());
            i += 1;
            continue;
        }
        let lo = match carried.take() {
            Some(lo) => lo,
            None => dl.lo.clone(),
        };
        let dl = &Down {
            child: dl.child,
            lo,
            hi: dl.hi.clone(),
        };
        // The pages this downlink covers: the child and right halves of
        // splits not yet finished.
        let mut last = i;
        while children[last].o.incomplete_split() && last + 1 < children.len() {
            last += 1;
        }
        for pg in &children[i..=last] {
            let (first, max) = (bp::first_data(&pg.o), page::max_offset(&pg.bytes));
            for off in first..=max {
                let k = bp::key_at(&pg.bytes, &pg.o, off)?;
                let k = if pg.o.is_leaf() || off > first {
                    k
                } else {
                    continue;
                };
                if dl.lo.as_deref().is_some_and(|lo| k < lo)
                    || dl.hi.as_deref().is_some_and(|hi| k >= hi)
                {
                    return Err(fail(
                        tree,
                        format!(
                            "item ({},{off}) is outside the bounds of its downlink",
                            pg.blk
                        ),
                    ));
                }
            }
        }
        let end = &children[last];
        let end_hk = match end.o.is_rightmost() {
            true => None,
            false => Some(bp::pivot_key(bp::item(&end.bytes, P_HIKEY)?)),
        };
        if end_hk != dl.hi.as_deref() {
            return Err(fail(
                tree,
                format!(
                    "high key of block {} does not match the parent's next downlink",
                    end.blk
                ),
            ));
        }
        i = last + 1;
    }
    while children.get(i).is_some_and(|c| c.o.is_ignorable()) {
        i += 1;
    }
    if i != children.len() {
        return Err(fail(
            tree,
            format!(
                "block {} at level {} has no downlink",
                children[i].blk, children[i].o.level
            ),
        ));
    }
    Ok(())
}

/// Checks the whole tree (see the module doc).
pub fn bt_index_check(tree: &BTree) -> Result<CheckReport> {
    let meta = tree.meta()?;
    let mut report = CheckReport::default();
    let mut level = meta.level;
    let mut pages = walk_level(tree, meta.root, level)?;
    if pages.len() != 1 || !pages[0].o.is_root() {
        return Err(fail(
            tree,
            format!(
                "root level has {} pages or root {} is not flagged",
                pages.len(),
                meta.root
            ),
        ));
    }
    let mut counts = vec![pages.len()];
    while level > 0 {
        let downs = downlinks(&pages)?;
        let first = downs.first().map_or(P_NONE, |d| d.child);
        level -= 1;
        let children = walk_level(tree, first, level)?;
        check_children(tree, &downs, &children)?;
        counts.push(children.len());
        pages = children;
    }
    report.leaf_items = pages
        .iter()
        .map(|p| (page::max_offset(&p.bytes) + 1 - bp::first_data(&p.o)) as usize)
        .sum();
    counts.reverse();
    report.pages_per_level = counts;
    Ok(report)
}
