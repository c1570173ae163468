//! The B-tree page: heapdb's slotted page ([`crate::storage::page`]: 24-byte
//! header, 4-byte line pointers, items growing down) with a 16-byte special
//! area at the end, PostgreSQL's `BTPageOpaqueData`:
//!
//! ```text
//!  BLCKSZ-16   -12      -8       -4     -2
//!  +---------+--------+--------+------+-------+
//!  | prev    | next   | level  | flags| cycle |
//!  +---------+--------+--------+------+-------+
//! ```
//!
//! `prev` / `next` are the left and right siblings on the same level
//! ([`P_NONE`] = none: block 0 is the meta page, never a sibling); `level`
//! is 0 for leaves; `flags` are the `BTP_*` bits below; `cycle` is VACUUM's
//! cycle id (kept 0 until VACUUM uses it).
//!
//! Items: on every page but the rightmost of its level, item 1 is the *high
//! key* ([`P_HIKEY`]), an upper bound on the page's keys (strict: every key
//! on the page is below it; every key on the right sibling is at least it).
//! Data items start at [`first_data`]: 2, or 1 on a rightmost page.
//!
//! A *leaf tuple* is a full key ([`super::keys`]): its columns then the heap
//! TID. A *pivot tuple* (high keys, and every item of an internal page) is a
//! 4-byte little-endian downlink (child block; [`P_NONE`] in a high key)
//! followed by a possibly truncated key. The first data item of an internal
//! page has an empty key: "minus infinity".
//!
//! The meta page (block 0, flag [`BTP_META`]) keeps [`MetaData`] right
//! after the page header, with `lower` set past it.
//!
//! Functions work on plain page slices; callers hold the content lock.

use super::keys::Tid;
use crate::err;
use crate::error::Result;
use crate::storage::page::{
    self, ItemId, OffsetNumber, ITEM_ID_SIZE, LP_DEAD, LP_NORMAL, PAGE_HEADER_SIZE,
};
use crate::storage::{BlockNumber, BLCKSZ};

/// Size of the special area.
pub const SPECIAL_SIZE: usize = 16;
/// "No block" in sibling links and high-key downlinks.
pub const P_NONE: BlockNumber = 0;
/// Offset of the high key on a non-rightmost page.
pub const P_HIKEY: OffsetNumber = 1;

/// Page is a leaf.
pub const BTP_LEAF: u16 = 1 << 0;
/// Page is the root.
pub const BTP_ROOT: u16 = 1 << 1;
/// Page has been deleted from the tree.
pub const BTP_DELETED: u16 = 1 << 2;
/// Page is the meta page.
pub const BTP_META: u16 = 1 << 3;
/// Page is half-dead (being deleted).
pub const BTP_HALF_DEAD: u16 = 1 << 4;
/// The right sibling has no downlink in the parent yet.
pub const BTP_INCOMPLETE_SPLIT: u16 = 1 << 7;

/// Identifies a B-tree meta page.
pub const BTREE_MAGIC: u32 = 0x053162;
/// The layout version written.
pub const BTREE_VERSION: u32 = 4;
const META_SIZE: usize = 24;

/// The special area's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Opaque {
    /// Left sibling.
    pub prev: BlockNumber,
    /// Right sibling.
    pub next: BlockNumber,
    /// Level: 0 for leaves.
    pub level: u32,
    /// `BTP_*` flags.
    pub flags: u16,
    /// VACUUM cycle id.
    pub cycle: u16,
}

impl Opaque {
    /// A leaf page.
    pub fn is_leaf(&self) -> bool {
        self.flags & BTP_LEAF != 0
    }
    /// The rightmost page of its level (has no high key).
    pub fn is_rightmost(&self) -> bool {
        self.next == P_NONE
    }
    /// The root.
    pub fn is_root(&self) -> bool {
        self.flags & BTP_ROOT != 0
    }
    /// The right sibling still lacks its downlink.
    pub fn incomplete_split(&self) -> bool {
        self.flags & BTP_INCOMPLETE_SPLIT != 0
    }
    /// Deleted from the tree (unlinked, or being unlinked).
    pub fn is_deleted(&self) -> bool {
        self.flags & BTP_DELETED != 0
    }
    /// Half-dead or deleted: a page being or been removed, which holds no
    /// data items and which every descent and scan passes to its right
    /// (PostgreSQL's `P_IGNORE`).
    #[inline]
    pub fn is_ignorable(&self) -> bool {
        self.flags & (BTP_DELETED | BTP_HALF_DEAD) != 0
    }
}

fn rd32(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

/// Reads the special area.
pub fn opaque(p: &[u8]) -> Opaque {
    let s = BLCKSZ - SPECIAL_SIZE;
    Opaque {
        prev: rd32(p, s),
        next: rd32(p, s + 4),
        level: rd32(p, s + 8),
        flags: u16::from_le_bytes([p[s + 12], p[s + 13]]),
        cycle: u16::from_le_bytes([p[s + 14], p[s + 15]]),
    }
}

/// Writes the special area.
pub fn set_opaque(p: &mut [u8], o: &Opaque) {
    let s = BLCKSZ - SPECIAL_SIZE;
    p[s..s + 4].copy_from_slice(&o.prev.to_le_bytes());
    p[s + 4..s + 8].copy_from_slice(&o.next.to_le_bytes());
    p[s + 8..s + 12].copy_from_slice(&o.level.to_le_bytes());
    p[s + 12..s + 14].copy_from_slice(&o.flags.to_le_bytes());
    p[s + 14..s + 16].copy_from_slice(&o.cycle.to_le_bytes());
}

/// Checks that an initialised page is a B-tree page: a sane header and a
/// special area of our size.
pub fn verify(p: &[u8], block: BlockNumber) -> Result<()> {
    page::verify_header(p)?;
    if page::is_new(p) || page::special(p) as usize != BLCKSZ - SPECIAL_SIZE {
        return Err(err!(
            DataCorrupted,
            "index block {block} is not a valid btree page"
        ));
    }
    Ok(())
}

/// Initialises an empty B-tree page.
pub fn init(p: &mut [u8], o: &Opaque) {
    page::init(p, SPECIAL_SIZE);
    set_opaque(p, o);
}

/// First data item's offset.
#[inline]
pub fn first_data(o: &Opaque) -> OffsetNumber {
    if o.is_rightmost() {
        1
    } else {
        2
    }
}

/// The bytes of item `off`, NORMAL or marked `LP_DEAD` (a leaf item whose
/// heap tuple a scan found dead to everyone; it keeps its storage).
#[inline]
pub fn item(p: &[u8], off: OffsetNumber) -> Result<&[u8]> {
    match page::get_item(p, off) {
        Some(t) => Ok(t),
        None => dead_item(p, off).ok_or_else(|| err!(DataCorrupted, "index item {off} is missing")),
    }
}

/// Item `off` if it is marked `LP_DEAD`.
fn dead_item(p: &[u8], off: OffsetNumber) -> Option<&[u8]> {
    if off == 0 || off > page::max_offset(p) {
        return None;
    }
    let id = page::item_id(p, off);
    if id.flags != LP_DEAD {
        return None;
    }
    p.get(id.off as usize..id.off as usize + id.len as usize)
}

/// Item `off` unless it is marked `LP_DEAD` (then `None`).
///
/// Called per item by index scans: the common case stays inline in the
/// scan's loop and the rare one (a dead or missing item, with its error)
/// is a call, so the compiler inlines this however the crate is split.
#[inline(always)]
pub fn live_item(p: &[u8], off: OffsetNumber) -> Result<Option<&[u8]>> {
    match page::get_item(p, off) {
        Some(t) => Ok(Some(t)),
        None => dead_or_missing(p, off),
    }
}

/// [`live_item`]'s rare case: `None` for an `LP_DEAD` item, else the error.
#[cold]
#[inline(never)]
fn dead_or_missing(p: &[u8], off: OffsetNumber) -> Result<Option<&[u8]>> {
    match dead_item(p, off) {
        Some(_) => Ok(None),
        None => Err(err!(DataCorrupted, "index item {off} is missing")),
    }
}

/// The offsets of the leaf's items marked `LP_DEAD`.
pub fn dead_offsets(p: &[u8], o: &Opaque) -> Vec<OffsetNumber> {
    (first_data(o)..=page::max_offset(p))
        .filter(|&off| page::item_id(p, off).flags == LP_DEAD)
        .collect()
}

/// Marks item `off` `LP_DEAD`, keeping its storage.
pub fn mark_dead(p: &mut [u8], off: OffsetNumber) -> Result<()> {
    if off == 0 || off > page::max_offset(p) {
        return Err(err!(DataCorrupted, "index item {off} is missing"));
    }
    let mut id = page::item_id(p, off);
    if id.flags != LP_NORMAL && id.flags != LP_DEAD {
        return Err(err!(DataCorrupted, "index item {off} is missing"));
    }
    id.flags = LP_DEAD;
    page::set_item_id(p, off, id);
    Ok(())
}

/// A pivot tuple's downlink.
#[inline]
pub fn downlink(t: &[u8]) -> BlockNumber {
    if t.len() < 4 {
        return P_NONE;
    }
    rd32(t, 0)
}

/// A pivot tuple's key.
#[inline]
pub fn pivot_key(t: &[u8]) -> &[u8] {
    t.get(4..).unwrap_or(&[])
}

/// Builds a pivot tuple.
pub fn make_pivot(child: BlockNumber, key: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + key.len());
    v.extend_from_slice(&child.to_le_bytes());
    v.extend_from_slice(key);
    v
}

/// The key of item `off`: a leaf data item's whole bytes, a pivot's key.
#[inline]
pub fn key_at<'a>(p: &'a [u8], o: &Opaque, off: OffsetNumber) -> Result<&'a [u8]> {
    let t = item(p, off)?;
    Ok(if o.is_leaf() && (off != P_HIKEY || o.is_rightmost()) {
        t
    } else {
        pivot_key(t)
    })
}

/// Bytes an item takes on the page, line pointer included.
#[inline]
pub fn item_space(len: usize) -> usize {
    page::maxalign(len) + ITEM_ID_SIZE
}

/// Room left for items (line pointers included).
#[inline]
pub fn free_space(p: &[u8]) -> usize {
    (page::upper(p) as usize).saturating_sub(page::lower(p) as usize)
}

/// Bytes the items of an empty page may use.
pub const PAGE_CAPACITY: usize = BLCKSZ - PAGE_HEADER_SIZE - SPECIAL_SIZE;

/// The largest leaf tuple accepted, a third of a page as PostgreSQL (so a
/// split always finds room for the new item and a high key on each side).
pub const MAX_TUPLE_SIZE: usize = (PAGE_CAPACITY / 3 - ITEM_ID_SIZE) & !7;

/// Inserts `item` as line pointer `off`, shifting later line pointers up
/// (PostgreSQL's `PageAddItem` without overwrite). Fails when it does not
/// fit or `off` is past the end.
pub fn insert_item(p: &mut [u8], off: OffsetNumber, item: &[u8]) -> Result<()> {
    let max = page::max_offset(p);
    if off == 0 || off > max + 1 {
        return Err(err!(DataCorrupted, "index item offset {off} out of range"));
    }
    if item_space(item.len()) > free_space(p) {
        return Err(err!(DataCorrupted, "index item does not fit on the page"));
    }
    let lower = page::lower(p) as usize;
    let upper = page::upper(p) as usize - page::maxalign(item.len());
    p[upper..upper + item.len()].copy_from_slice(item);
    let at = PAGE_HEADER_SIZE + (off as usize - 1) * ITEM_ID_SIZE;
    p.copy_within(at..lower, at + ITEM_ID_SIZE);
    let id = ItemId {
        off: upper as u16,
        flags: LP_NORMAL,
        len: item.len() as u16,
    };
    p[at..at + 4].copy_from_slice(&id.to_raw().to_le_bytes());
    p[12..14].copy_from_slice(&((lower + ITEM_ID_SIZE) as u16).to_le_bytes());
    p[14..16].copy_from_slice(&(upper as u16).to_le_bytes());
    Ok(())
}

/// Appends `item` after the page's last line pointer: [`insert_item`] at
/// `max_offset + 1` (the same bytes), without its offset search and
/// shift. The bulk build fills its pages this way, in key order.
#[inline]
pub fn append_item(p: &mut [u8], item: &[u8]) -> Result<()> {
    let lower = page::lower(p) as usize;
    let upper = page::upper(p) as usize;
    let need = page::maxalign(item.len());
    if lower + ITEM_ID_SIZE + need > upper {
        return Err(err!(DataCorrupted, "index item does not fit on the page"));
    }
    let upper = upper - need;
    p[upper..upper + item.len()].copy_from_slice(item);
    let id = ItemId {
        off: upper as u16,
        flags: LP_NORMAL,
        len: item.len() as u16,
    };
    p[lower..lower + ITEM_ID_SIZE].copy_from_slice(&id.to_raw().to_le_bytes());
    p[12..14].copy_from_slice(&((lower + ITEM_ID_SIZE) as u16).to_le_bytes());
    p[14..16].copy_from_slice(&(upper as u16).to_le_bytes());
    Ok(())
}

/// Rewrites the page to hold exactly `items` (offsets 1..) with special
/// area `o`; the LSN is kept.
pub fn rebuild(p: &mut [u8], o: &Opaque, items: &[Vec<u8>]) -> Result<()> {
    init(p, o);
    for (i, it) in items.iter().enumerate() {
        insert_item(p, (i + 1) as OffsetNumber, it)?;
    }
    Ok(())
}

/// All items of the page, in offset order.
pub fn items(p: &[u8]) -> Result<Vec<Vec<u8>>> {
    (1..=page::max_offset(p))
        .map(|o| item(p, o).map(|t| t.to_vec()))
        .collect()
}

/// The meta page's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetaData {
    /// The root block.
    pub root: BlockNumber,
    /// The root's level.
    pub level: u32,
    /// The fast root: the lowest page that is alone on its level (where
    /// searches may start); equal to the root until page deletion exists.
    pub fastroot: BlockNumber,
    /// The fast root's level.
    pub fastlevel: u32,
}

/// Writes a meta page. A meta page rewritten (a root split) keeps its
/// last cleanup's count of deleted pages; its free list starts empty.
pub fn write_meta(p: &mut [u8], m: &MetaData) {
    let was_meta = opaque(p).flags & BTP_META != 0 && rd32(p, PAGE_HEADER_SIZE) == BTREE_MAGIC;
    let delpages = if was_meta { cleanup_delpages(p) } else { 0 };
    init(
        p,
        &Opaque {
            flags: BTP_META,
            ..Opaque::default()
        },
    );
    let h = PAGE_HEADER_SIZE;
    for (i, v) in [
        BTREE_MAGIC,
        BTREE_VERSION,
        m.root,
        m.level,
        m.fastroot,
        m.fastlevel,
    ]
    .into_iter()
    .enumerate()
    {
        p[h + 4 * i..h + 4 * i + 4].copy_from_slice(&v.to_le_bytes());
    }
    p[12..14].copy_from_slice(&((h + META_SIZE) as u16).to_le_bytes());
    set_cleanup_delpages(p, delpages);
}

/// Where the meta page keeps the number of deleted pages its last cleanup
/// found not yet reusable (PostgreSQL's `btm_last_cleanup_num_delpages`):
/// past the longest free list. While it is not zero, `lower` covers it,
/// so that page images (which leave out the hole) keep it; older meta
/// pages have zeros there.
const DELPAGES_AT: usize = FREE_LIST_AT + 4 + 4 * MAX_FREE_LIST;

/// The meta page's last cleanup count of deleted, not yet reusable pages.
pub fn cleanup_delpages(p: &[u8]) -> u32 {
    rd32(p, DELPAGES_AT)
}

/// Sets the meta page's last cleanup count of deleted pages.
pub fn set_cleanup_delpages(p: &mut [u8], n: u32) {
    p[DELPAGES_AT..DELPAGES_AT + 4].copy_from_slice(&n.to_le_bytes());
    cover_delpages(p);
}

/// Moves `lower` past the deleted-page count when it is not zero.
fn cover_delpages(p: &mut [u8]) {
    if cleanup_delpages(p) != 0 && (page::lower(p) as usize) < DELPAGES_AT + 4 {
        p[12..14].copy_from_slice(&((DELPAGES_AT + 4) as u16).to_le_bytes());
    }
}

/// Where the meta page's free list starts: a `u32` count, then the blocks.
const FREE_LIST_AT: usize = PAGE_HEADER_SIZE + META_SIZE;
/// The most reusable pages the meta page lists.
pub const MAX_FREE_LIST: usize = 2000;

/// The reusable (deleted, recyclable) pages listed on the meta page. A
/// meta page written by [`write_meta`] lists none.
pub fn free_list(p: &[u8]) -> Vec<BlockNumber> {
    let n = (rd32(p, FREE_LIST_AT) as usize).min(MAX_FREE_LIST);
    (0..n).map(|i| rd32(p, FREE_LIST_AT + 4 + 4 * i)).collect()
}

/// Whether the meta page lists no reusable page (one read, no allocation).
#[inline]
pub fn free_list_is_empty(p: &[u8]) -> bool {
    rd32(p, FREE_LIST_AT) == 0
}

/// Rewrites the meta page's free list.
pub fn set_free_list(p: &mut [u8], blocks: &[BlockNumber]) -> Result<()> {
    if blocks.len() > MAX_FREE_LIST {
        return Err(err!(DataCorrupted, "index free list is too long"));
    }
    p[FREE_LIST_AT..FREE_LIST_AT + 4].copy_from_slice(&(blocks.len() as u32).to_le_bytes());
    for (i, b) in blocks.iter().enumerate() {
        let at = FREE_LIST_AT + 4 + 4 * i;
        p[at..at + 4].copy_from_slice(&b.to_le_bytes());
    }
    let lower = FREE_LIST_AT + 4 + 4 * blocks.len();
    p[12..14].copy_from_slice(&(lower as u16).to_le_bytes());
    cover_delpages(p);
    Ok(())
}

/// The next transaction id when a deleted page was deleted (PostgreSQL's
/// `safexid`), kept as its only item.
pub fn safexid(p: &[u8]) -> Result<u32> {
    let t = item(p, 1)?;
    match t.get(..4) {
        Some(b) => Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(err!(DataCorrupted, "deleted index page has no safexid")),
    }
}

/// Reads the meta page, checking its magic and version.
pub fn read_meta(p: &[u8]) -> Result<MetaData> {
    verify(p, 0)?;
    let h = PAGE_HEADER_SIZE;
    if opaque(p).flags & BTP_META == 0 || rd32(p, h) != BTREE_MAGIC {
        return Err(err!(DataCorrupted, "index is not a btree"));
    }
    if rd32(p, h + 4) != BTREE_VERSION {
        return Err(err!(
            DataCorrupted,
            "version mismatch in index: file version {}, current version {}",
            rd32(p, h + 4),
            BTREE_VERSION
        ));
    }
    Ok(MetaData {
        root: rd32(p, h + 8),
        level: rd32(p, h + 12),
        fastroot: rd32(p, h + 16),
        fastlevel: rd32(p, h + 20),
    })
}

/// Formats a heap TID as PostgreSQL prints one: `(block,offset)`.
pub fn tid_text(t: Tid) -> String {
    format!("({},{})", t.0, t.1)
}
