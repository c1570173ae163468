//! Inspection: a page's header, its line pointers and its tuples' headers as
//! plain values, in the spirit of PostgreSQL's `pageinspect` (`page_header`,
//! `heap_page_items`) and `pg_visibility`. The engine exposes these as SQL
//! functions; tests use them to check what is on disk.
//!
//! The functions here decode a page image (`&[u8]` of `BLCKSZ` bytes); the
//! heap access layer ([`crate::access::heap::HeapRelation::inspect_page`] and
//! [`crate::access::heap::HeapRelation::inspect_vm`]) reads the page through
//! the buffer pool under a shared content lock and calls them.

use crate::access::heap::tuple;
use crate::storage::page::{self, OffsetNumber};

/// A page header's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageHeaderInfo {
    /// Page LSN.
    pub lsn: u64,
    /// Stored checksum.
    pub checksum: u16,
    /// Raw flags.
    pub flags: u16,
    /// Flag names joined by `|` (`HAS_FREE_LINES`, `PAGE_FULL`, `ALL_VISIBLE`).
    pub flag_names: String,
    /// End of the line-pointer array.
    pub lower: u16,
    /// Start of the tuple area.
    pub upper: u16,
    /// Start of the special space.
    pub special: u16,
    /// Layout version.
    pub version: u16,
    /// Prune hint xid.
    pub prune_xid: u32,
    /// Free bytes for a new tuple ([`page::free_space`]).
    pub free_space: usize,
}

/// One line pointer and, for a NORMAL one, its tuple's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemInfo {
    /// Line pointer number (1-based).
    pub lp: OffsetNumber,
    /// Byte offset (NORMAL) or redirect target (REDIRECT).
    pub lp_off: u16,
    /// `UNUSED`, `NORMAL`, `REDIRECT` or `DEAD`.
    pub lp_flags: &'static str,
    /// Tuple length.
    pub lp_len: u16,
    /// The tuple's header, for NORMAL line pointers with a whole header.
    pub tuple: Option<TupleHeaderInfo>,
}

/// A heap tuple's header fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TupleHeaderInfo {
    /// Inserting transaction.
    pub xmin: u32,
    /// Deleting transaction (0 if none).
    pub xmax: u32,
    /// Raw command id field.
    pub cid: u32,
    /// ctid (block, offset).
    pub ctid: (u32, OffsetNumber),
    /// Number of attributes.
    pub natts: u16,
    /// Raw infomask.
    pub infomask: u16,
    /// Raw infomask2.
    pub infomask2: u16,
    /// Names of the set infomask and infomask2 flags, joined by `|`.
    pub flag_names: String,
    /// Start of attribute data.
    pub hoff: u8,
}

/// Decodes the page header of `p`.
pub fn page_header(p: &[u8]) -> PageHeaderInfo {
    let flags = page::flags(p);
    let names = [
        (page::PD_HAS_FREE_LINES, "HAS_FREE_LINES"),
        (page::PD_PAGE_FULL, "PAGE_FULL"),
        (page::PD_ALL_VISIBLE, "ALL_VISIBLE"),
    ];
    PageHeaderInfo {
        lsn: page::lsn(p),
        checksum: page::checksum(p),
        flags,
        flag_names: tuple::flag_names(flags, &names),
        lower: page::lower(p),
        upper: page::upper(p),
        special: page::special(p),
        version: page::version(p),
        prune_xid: page::prune_xid(p),
        free_space: page::free_space(p),
    }
}

/// Decodes a tuple's header, or `None` when `t` is shorter than a header.
pub fn tuple_header(t: &[u8]) -> Option<TupleHeaderInfo> {
    if t.len() < tuple::HEADER_SIZE {
        return None;
    }
    let (m, m2) = (tuple::infomask(t), tuple::infomask2(t));
    let mut names = tuple::flag_names(m, tuple::INFOMASK_NAMES);
    let n2 = tuple::flag_names(m2, tuple::INFOMASK2_NAMES);
    if !n2.is_empty() {
        if !names.is_empty() {
            names.push('|');
        }
        names.push_str(&n2);
    }
    Some(TupleHeaderInfo {
        xmin: tuple::xmin(t),
        xmax: tuple::xmax(t),
        cid: tuple::raw_cid(t),
        ctid: tuple::ctid(t),
        natts: tuple::natts(t) as u16,
        infomask: m,
        infomask2: m2,
        flag_names: names,
        hoff: t[tuple::T_HOFF],
    })
}

/// Every line pointer of `p` with its tuple header. A new page or one whose
/// header fails [`page::verify_header`] has none.
pub fn items(p: &[u8]) -> Vec<ItemInfo> {
    if page::verify_header(p).is_err() {
        return Vec::new();
    }
    (1..=page::max_offset(p))
        .map(|o| {
            let id = page::item_id(p, o);
            ItemInfo {
                lp: o,
                lp_off: id.off,
                lp_flags: id.flag_name(),
                lp_len: id.len,
                tuple: page::get_item(p, o).and_then(tuple_header),
            }
        })
        .collect()
}

/// A text dump of page `p` for tests and debugging (toydb's `dump` idea):
/// one header line, then one line per line pointer with its tuple's xmin,
/// xmax, cid, ctid and flags. Stable, so tests can compare it verbatim.
///
/// ```text
/// page lower=32 upper=8112 flags=ALL_VISIBLE prune_xid=0
///   1 NORMAL   off=8152 len=40 xmin=3 xmax=0 cid=0 ctid=(0,1) XMIN_COMMITTED|XMAX_INVALID
///   2 REDIRECT -> 4
/// ```
pub fn dump_page(p: &[u8]) -> String {
    use std::fmt::Write;
    let h = page_header(p);
    let mut out = String::new();
    let flags = if h.flag_names.is_empty() {
        "-"
    } else {
        &h.flag_names
    };
    let _ = writeln!(
        out,
        "page lower={} upper={} flags={} prune_xid={}",
        h.lower, h.upper, flags, h.prune_xid
    );
    for it in items(p) {
        let _ = match (&it.tuple, it.lp_flags) {
            (Some(t), _) => writeln!(
                out,
                "  {} {:<8} off={} len={} xmin={} xmax={} cid={} ctid=({},{}) {}",
                it.lp,
                it.lp_flags,
                it.lp_off,
                it.lp_len,
                t.xmin,
                t.xmax,
                t.cid,
                t.ctid.0,
                t.ctid.1,
                if t.flag_names.is_empty() {
                    "-"
                } else {
                    &t.flag_names
                }
            ),
            (None, "REDIRECT") => writeln!(out, "  {} REDIRECT -> {}", it.lp, it.lp_off),
            (None, f) => writeln!(out, "  {} {f}", it.lp),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::heap::tuple::{form_tuple, Attr, TupleDesc};
    use crate::storage::BLCKSZ;

    #[test]
    fn decodes_header_items_and_flags() {
        let mut p = vec![0u8; BLCKSZ];
        page::init(&mut p, 0);
        let d = TupleDesc::new(vec![Attr::fixed(4, 4), Attr::varlena(4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&d, &[Some(&[1, 0, 0, 0]), None], &mut t).unwrap();
        tuple::set_xmin(&mut t, 7);
        tuple::set_ctid(&mut t, 0, 1);
        let m = tuple::infomask(&t) | tuple::HEAP_XMIN_COMMITTED;
        tuple::set_infomask(&mut t, m);
        page::add_item(&mut p, &t, None).unwrap();
        page::add_item(&mut p, &t, None).unwrap();
        page::set_dead(&mut p, 2);
        page::set_all_visible(&mut p);
        let h = page_header(&p);
        assert_eq!(
            (h.lower, h.upper, h.flag_names.as_str()),
            (32, 8192 - 2 * 32, "ALL_VISIBLE")
        );
        let it = items(&p);
        assert_eq!(it.len(), 2);
        assert_eq!((it[0].lp_flags, it[0].lp_len), ("NORMAL", 28));
        let th = it[0].tuple.as_ref().unwrap();
        assert_eq!((th.xmin, th.xmax, th.ctid, th.natts), (7, 0, (0, 1), 2));
        assert_eq!(th.flag_names, "HASNULL|XMIN_COMMITTED|XMAX_INVALID");
        assert_eq!((it[1].lp_flags, it[1].tuple.is_none()), ("DEAD", true));
        assert!(items(&vec![0u8; BLCKSZ]).is_empty());
    }
}
