//! B-tree page-change records. Every change to an index page is expressed as
//! a [`BtRecord`] and made by the one function [`apply`]: at run time the
//! tree builds the record and applies it to the locked page, the log keeps
//! the same value ([`BtRecord::encode`]) and redo decodes and applies it
//! again, so run time and redo cannot diverge. A record changes exactly one
//! page; the page it applies to travels beside it (relation, block).
//!
//! Multi-page operations are sequences of records, logged in an order whose
//! every prefix is a valid tree (see the README beside this file): a split
//! logs the new right page ([`BtRecord::SplitRight`]), then the left page
//! ([`BtRecord::SplitLeft`], flag `INCOMPLETE_SPLIT`), then the old right
//! sibling's left-link ([`BtRecord::SetPrev`]); the downlink goes into the
//! parent later ([`BtRecord::InsertInner`], or a split of the parent) and
//! only then is the flag cleared ([`BtRecord::SetFlags`]).
//!
//! Encoding: a tag byte, then the fields little-endian; byte strings and
//! vectors with a `u16` count. [`BtRecord::decode`] rejects unknown tags,
//! truncation and trailing bytes with XX001, never a panic.

use super::btpage::{self, MetaData, Opaque};
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::{BlockNumber, RelFileNode};

/// A whole page's contents: its special area and items in offset order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageImage {
    /// The special area.
    pub opaque: Opaque,
    /// The items, offset 1 first.
    pub items: Vec<Vec<u8>>,
}

/// One change to one index page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BtRecord {
    /// (Re)write the meta page.
    Meta(MetaData),
    /// Insert a leaf tuple at `offset` (later items shift up).
    InsertLeaf {
        /// Line pointer the tuple takes.
        offset: OffsetNumber,
        /// The leaf tuple.
        tuple: Vec<u8>,
    },
    /// Insert a pivot tuple (a downlink) into an internal page.
    InsertInner {
        /// Line pointer the tuple takes.
        offset: OffsetNumber,
        /// The pivot tuple.
        tuple: Vec<u8>,
    },
    /// The left half of a split: the page rewritten with its new high key,
    /// the new right-link and `INCOMPLETE_SPLIT`.
    SplitLeft(PageImage),
    /// The right half of a split: a new page.
    SplitRight(PageImage),
    /// A new root above a split old root.
    NewRoot(PageImage),
    /// A page written whole by a sorted build.
    BuildPage(PageImage),
    /// Set and clear special-area flags.
    SetFlags {
        /// Flags to set.
        set: u16,
        /// Flags to clear.
        clear: u16,
    },
    /// Point the left-link at a new left sibling (after its split).
    SetPrev {
        /// The new left sibling.
        prev: BlockNumber,
    },
    /// Remove leaf items (VACUUM's bulk delete), offsets ascending.
    Delete {
        /// Offsets of the items to remove.
        offsets: Vec<OffsetNumber>,
    },
    /// Page deletion, first stage, on the parent: the downlink at `offset`
    /// (to the page being deleted) takes the downlink of the next item (its
    /// right sibling), whose item is removed, so the right sibling's key
    /// range takes in the deleted page's.
    DeleteDownlink {
        /// Offset of the deleted page's downlink.
        offset: OffsetNumber,
    },
    /// Page deletion, second stage, on the half-dead page: `DELETED`
    /// replaces `HALF_DEAD`, the items are replaced by the safexid, the
    /// sibling links are kept (scans still on the page follow them).
    MarkDeleted {
        /// The next transaction id when the page was deleted.
        safexid: u32,
    },
    /// Point the right-link past a deleted page.
    SetNext {
        /// The new right sibling.
        next: BlockNumber,
    },
    /// Rewrite the meta page's list of reusable pages.
    FreeList {
        /// The reusable pages.
        blocks: Vec<BlockNumber>,
    },
    /// Record on the meta page the deleted pages a cleanup found not yet
    /// reusable (PostgreSQL's `_bt_set_cleanup_info`).
    CleanupInfo {
        /// Deleted pages not on the free list.
        delpages: u32,
    },
    /// Take a page off the meta page's list (it is being reused).
    TakeFree {
        /// The page taken.
        block: BlockNumber,
    },
    /// Mark leaf items `LP_DEAD`: their heap tuples are dead to everyone
    /// (a scan found them so). Logged, unlike PostgreSQL's hint, because
    /// line pointers are inside the page checksum.
    MarkDead {
        /// Offsets of the items.
        offsets: Vec<OffsetNumber>,
    },
}

/// Where records go: the write-ahead log once the index is wired in, a
/// recorder in tests. Returns the LSN to stamp on the page (0 for none).
/// `page` is the page after the change, for a full-page image.
pub trait BtLog: Send + Sync {
    /// Logs `rec`, which was just applied to `block` of `rel`.
    fn log(&self, rel: RelFileNode, block: BlockNumber, rec: &BtRecord, page: &[u8])
        -> Result<u64>;

    /// Logs `page`, block `block` of `rel`, just written whole by a sorted
    /// build, as itself: redo puts the image back (PostgreSQL's
    /// `log_newpage`). By default it is logged as the
    /// [`BtRecord::BuildPage`] of its items, which redoes to the same page.
    fn log_image(&self, rel: RelFileNode, block: BlockNumber, page: &[u8]) -> Result<u64> {
        let img = PageImage {
            opaque: btpage::opaque(page),
            items: btpage::items(page)?,
        };
        self.log(rel, block, &BtRecord::BuildPage(img), page)
    }

    /// The redo point of the log's latest checkpoint (a checkpoint began
    /// when it changes), if the log knows it: a sorted build that wrote
    /// its pages around the buffer pool fsyncs them itself when it is
    /// unknown or changed during the build (`buildout.rs`).
    fn redo_point(&self) -> Option<u64> {
        None
    }
}

fn corrupt(what: &str) -> crate::error::Error {
    err!(DataCorrupted, "btree redo: {what}")
}

/// Applies `rec` to page `p` (run time and redo alike).
pub fn apply(rec: &BtRecord, p: &mut [u8]) -> Result<()> {
    match rec {
        BtRecord::Meta(m) => btpage::write_meta(p, m),
        BtRecord::InsertLeaf { offset, tuple } | BtRecord::InsertInner { offset, tuple } => {
            if page::is_new(p) {
                return Err(corrupt("insert into an uninitialised page"));
            }
            btpage::insert_item(p, *offset, tuple)?;
        }
        BtRecord::SplitLeft(img)
        | BtRecord::SplitRight(img)
        | BtRecord::NewRoot(img)
        | BtRecord::BuildPage(img) => btpage::rebuild(p, &img.opaque, &img.items)?,
        BtRecord::SetFlags { set, clear } => {
            if page::is_new(p) {
                return Err(corrupt("flags of an uninitialised page"));
            }
            let mut o = btpage::opaque(p);
            o.flags = (o.flags | set) & !clear;
            btpage::set_opaque(p, &o);
        }
        BtRecord::SetPrev { prev } => {
            if page::is_new(p) {
                return Err(corrupt("left-link of an uninitialised page"));
            }
            let mut o = btpage::opaque(p);
            o.prev = *prev;
            btpage::set_opaque(p, &o);
        }
        BtRecord::Delete { offsets } => {
            if page::is_new(p) {
                return Err(corrupt("delete on an uninitialised page"));
            }
            let o = btpage::opaque(p);
            let mut keep = Vec::new();
            let mut del = offsets.iter().peekable();
            for off in 1..=page::max_offset(p) {
                if del.peek() == Some(&&off) {
                    del.next();
                    continue;
                }
                keep.push(btpage::item(p, off)?.to_vec());
            }
            if del.next().is_some() {
                return Err(corrupt("delete of a missing item"));
            }
            btpage::rebuild(p, &o, &keep)?;
        }
        BtRecord::DeleteDownlink { offset } => delete_downlink(p, *offset)?,
        BtRecord::MarkDeleted { safexid } => {
            if page::is_new(p) {
                return Err(corrupt("deletion of an uninitialised page"));
            }
            let mut o = btpage::opaque(p);
            o.flags = (o.flags & !btpage::BTP_HALF_DEAD) | btpage::BTP_DELETED;
            btpage::rebuild(p, &o, &[safexid.to_le_bytes().to_vec()])?;
        }
        BtRecord::SetNext { next } => {
            if page::is_new(p) {
                return Err(corrupt("right-link of an uninitialised page"));
            }
            let mut o = btpage::opaque(p);
            o.next = *next;
            btpage::set_opaque(p, &o);
        }
        BtRecord::FreeList { blocks } => {
            btpage::read_meta(p)?;
            btpage::set_free_list(p, blocks)?;
        }
        BtRecord::MarkDead { offsets } => {
            if page::is_new(p) {
                return Err(corrupt("marking items of an uninitialised page"));
            }
            for &off in offsets {
                btpage::mark_dead(p, off)?;
            }
        }
        BtRecord::CleanupInfo { delpages } => {
            btpage::read_meta(p)?;
            btpage::set_cleanup_delpages(p, *delpages);
        }
        BtRecord::TakeFree { block } => {
            btpage::read_meta(p)?;
            let mut list = btpage::free_list(p);
            list.retain(|b| b != block);
            btpage::set_free_list(p, &list)?;
        }
    }
    Ok(())
}

/// [`BtRecord::DeleteDownlink`]'s change.
fn delete_downlink(p: &mut [u8], offset: OffsetNumber) -> Result<()> {
    if page::is_new(p) {
        return Err(corrupt("downlink removal on an uninitialised page"));
    }
    let o = btpage::opaque(p);
    if o.is_leaf() || offset < btpage::first_data(&o) || offset >= page::max_offset(p) {
        return Err(corrupt("downlink removal at a wrong offset"));
    }
    let right = btpage::downlink(btpage::item(p, offset + 1)?);
    let mut items = btpage::items(p)?;
    let at = offset as usize - 1;
    let key = btpage::pivot_key(&items[at]).to_vec();
    items[at] = btpage::make_pivot(right, &key);
    items.remove(at + 1);
    btpage::rebuild(p, &o, &items)
}

const T_META: u8 = 1;
const T_INSERT_LEAF: u8 = 2;
const T_INSERT_INNER: u8 = 3;
const T_SPLIT_LEFT: u8 = 4;
const T_SPLIT_RIGHT: u8 = 5;
const T_NEW_ROOT: u8 = 6;
const T_BUILD_PAGE: u8 = 7;
const T_SET_FLAGS: u8 = 8;
const T_SET_PREV: u8 = 9;
const T_DELETE: u8 = 10;
const T_DELETE_DOWNLINK: u8 = 11;
const T_MARK_DELETED: u8 = 12;
const T_SET_NEXT: u8 = 13;
const T_FREE_LIST: u8 = 14;
const T_TAKE_FREE: u8 = 15;
const T_MARK_DEAD: u8 = 16;
const T_CLEANUP_INFO: u8 = 17;

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u16).to_le_bytes());
    out.extend_from_slice(b);
}

fn put_image(out: &mut Vec<u8>, img: &PageImage) {
    let o = &img.opaque;
    for v in [o.prev, o.next, o.level] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&o.flags.to_le_bytes());
    out.extend_from_slice(&o.cycle.to_le_bytes());
    out.extend_from_slice(&(img.items.len() as u16).to_le_bytes());
    for it in &img.items {
        put_bytes(out, it);
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let s = self
            .b
            .get(self.at..self.at + n)
            .ok_or_else(|| corrupt("record is truncated"))?;
        self.at += n;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16> {
        let s = self.take(2)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&mut self) -> Result<u32> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn bytes(&mut self) -> Result<Vec<u8>> {
        let n = self.u16()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn image(&mut self) -> Result<PageImage> {
        let opaque = Opaque {
            prev: self.u32()?,
            next: self.u32()?,
            level: self.u32()?,
            flags: self.u16()?,
            cycle: self.u16()?,
        };
        let n = self.u16()? as usize;
        let items = (0..n).map(|_| self.bytes()).collect::<Result<_>>()?;
        Ok(PageImage { opaque, items })
    }
}

impl BtRecord {
    /// The record's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            BtRecord::Meta(m) => {
                out.push(T_META);
                for v in [m.root, m.level, m.fastroot, m.fastlevel] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            BtRecord::InsertLeaf { offset, tuple } | BtRecord::InsertInner { offset, tuple } => {
                let leaf = matches!(self, BtRecord::InsertLeaf { .. });
                out.push(if leaf { T_INSERT_LEAF } else { T_INSERT_INNER });
                out.extend_from_slice(&offset.to_le_bytes());
                put_bytes(&mut out, tuple);
            }
            BtRecord::SplitLeft(i) => {
                out.push(T_SPLIT_LEFT);
                put_image(&mut out, i)
            }
            BtRecord::SplitRight(i) => {
                out.push(T_SPLIT_RIGHT);
                put_image(&mut out, i)
            }
            BtRecord::NewRoot(i) => {
                out.push(T_NEW_ROOT);
                put_image(&mut out, i)
            }
            BtRecord::BuildPage(i) => {
                out.push(T_BUILD_PAGE);
                put_image(&mut out, i)
            }
            BtRecord::SetFlags { set, clear } => {
                out.push(T_SET_FLAGS);
                out.extend_from_slice(&set.to_le_bytes());
                out.extend_from_slice(&clear.to_le_bytes());
            }
            BtRecord::SetPrev { prev } => {
                out.push(T_SET_PREV);
                out.extend_from_slice(&prev.to_le_bytes());
            }
            BtRecord::Delete { offsets } => {
                out.push(T_DELETE);
                out.extend_from_slice(&(offsets.len() as u16).to_le_bytes());
                for o in offsets {
                    out.extend_from_slice(&o.to_le_bytes());
                }
            }
            BtRecord::DeleteDownlink { offset } => {
                out.push(T_DELETE_DOWNLINK);
                out.extend_from_slice(&offset.to_le_bytes());
            }
            BtRecord::MarkDeleted { safexid } => {
                out.push(T_MARK_DELETED);
                out.extend_from_slice(&safexid.to_le_bytes());
            }
            BtRecord::SetNext { next } => {
                out.push(T_SET_NEXT);
                out.extend_from_slice(&next.to_le_bytes());
            }
            BtRecord::FreeList { blocks } => {
                out.push(T_FREE_LIST);
                out.extend_from_slice(&(blocks.len() as u16).to_le_bytes());
                for b in blocks {
                    out.extend_from_slice(&b.to_le_bytes());
                }
            }
            BtRecord::CleanupInfo { delpages } => {
                out.push(T_CLEANUP_INFO);
                out.extend_from_slice(&delpages.to_le_bytes());
            }
            BtRecord::TakeFree { block } => {
                out.push(T_TAKE_FREE);
                out.extend_from_slice(&block.to_le_bytes());
            }
            BtRecord::MarkDead { offsets } => {
                out.push(T_MARK_DEAD);
                out.extend_from_slice(&(offsets.len() as u16).to_le_bytes());
                for o in offsets {
                    out.extend_from_slice(&o.to_le_bytes());
                }
            }
        }
        out
    }

    /// Decodes [`BtRecord::encode`]'s bytes.
    pub fn decode(b: &[u8]) -> Result<BtRecord> {
        let mut r = Reader { b, at: 1 };
        let tag = *b.first().ok_or_else(|| corrupt("empty record"))?;
        let rec = match tag {
            T_META => BtRecord::Meta(MetaData {
                root: r.u32()?,
                level: r.u32()?,
                fastroot: r.u32()?,
                fastlevel: r.u32()?,
            }),
            T_INSERT_LEAF => BtRecord::InsertLeaf {
                offset: r.u16()?,
                tuple: r.bytes()?,
            },
            T_INSERT_INNER => BtRecord::InsertInner {
                offset: r.u16()?,
                tuple: r.bytes()?,
            },
            T_SPLIT_LEFT => BtRecord::SplitLeft(r.image()?),
            T_SPLIT_RIGHT => BtRecord::SplitRight(r.image()?),
            T_NEW_ROOT => BtRecord::NewRoot(r.image()?),
            T_BUILD_PAGE => BtRecord::BuildPage(r.image()?),
            T_SET_FLAGS => BtRecord::SetFlags {
                set: r.u16()?,
                clear: r.u16()?,
            },
            T_SET_PREV => BtRecord::SetPrev { prev: r.u32()? },
            T_DELETE => {
                let n = r.u16()? as usize;
                BtRecord::Delete {
                    offsets: (0..n).map(|_| r.u16()).collect::<Result<_>>()?,
                }
            }
            T_DELETE_DOWNLINK => BtRecord::DeleteDownlink { offset: r.u16()? },
            T_MARK_DELETED => BtRecord::MarkDeleted { safexid: r.u32()? },
            T_SET_NEXT => BtRecord::SetNext { next: r.u32()? },
            T_FREE_LIST => {
                let n = r.u16()? as usize;
                BtRecord::FreeList {
                    blocks: (0..n).map(|_| r.u32()).collect::<Result<_>>()?,
                }
            }
            T_TAKE_FREE => BtRecord::TakeFree { block: r.u32()? },
            T_CLEANUP_INFO => BtRecord::CleanupInfo { delpages: r.u32()? },
            T_MARK_DEAD => {
                let n = r.u16()? as usize;
                BtRecord::MarkDead {
                    offsets: (0..n).map(|_| r.u16()).collect::<Result<_>>()?,
                }
            }
            t => return Err(corrupt(&format!("unknown record type {t}"))),
        };
        if r.at != b.len() {
            return Err(corrupt("trailing bytes after record"));
        }
        Ok(rec)
    }
}

#[cfg(test)]
#[path = "wal_tests.rs"]
mod tests;
