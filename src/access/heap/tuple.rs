//! The heap tuple: a 23-byte header, an optional null bitmap, then the
//! attributes at their alignment.
//!
//! ```text
//!  0     4     8    12          16        18          20         22    23
//!  +-----+-----+-----+-----------+---------+-----------+----------+-----+--------+-----..
//!  |xmin |xmax | cid |ctid block |ctid off |infomask2  | infomask |hoff |nulls.. | attrs
//!  +-----+-----+-----+-----------+---------+-----------+----------+-----+--------+-----..
//! ```
//!
//! `infomask2` holds the number of attributes (low 11 bits) and the HOT flags;
//! `infomask` holds `HAS_NULL`, `HAS_VARWIDTH` and the hint bits
//! (`XMIN_COMMITTED`, `XMIN_INVALID`, `XMAX_COMMITTED`, `XMAX_INVALID`), plus
//! `UPDATED` on a tuple that is a newer version and `COMBOCID` when `cid`
//! holds both the inserting and the deleting command id. The null bitmap
//! (present only with `HAS_NULL`) has one bit per attribute, set when the value
//! is *not* null. `hoff`, the start of the attribute data, is rounded up to 8.
//!
//! Tuples start 8-byte aligned on the page, so an attribute aligned relative
//! to the tuple start is aligned in memory too. Fixed-width attributes
//! (1, 2, 4, 8 or 16 bytes) are stored little-endian at their alignment. A
//! varlena (length -1) is stored with a 1-byte header `(total << 1) | 1`
//! unaligned when the whole value fits in 127 bytes, otherwise aligned with a
//! 4-byte header `total << 2` (PostgreSQL's short and long varlena headers).
//! Pad bytes are always zero, which is how a reader tells a short header (never
//! zero: its low bit is set) from padding before an aligned long one.
//!
//! Columns are described by a [`TupleDesc`] independent of SQL types: each
//! attribute is only a length and an alignment. [`form_tuple`] builds a tuple
//! into a reused buffer; [`deform`] walks a tuple only as far as the last
//! attribute asked for, using cached fixed offsets when no null and no varlena
//! comes before (PostgreSQL's `attcacheoff`), and allocates nothing.

use crate::err;
use crate::error::{Error, Result};
use crate::storage::page::{maxalign, OffsetNumber};

/// Size of the fixed part of the tuple header.
pub const HEADER_SIZE: usize = 23;

/// Offset of `xmin`.
pub const T_XMIN: usize = 0;
/// Offset of `xmax`.
pub const T_XMAX: usize = 4;
/// Offset of `cid`.
pub const T_CID: usize = 8;
/// Offset of the ctid block number.
pub const T_CTID_BLOCK: usize = 12;
/// Offset of the ctid offset number.
pub const T_CTID_OFF: usize = 16;
/// Offset of `infomask2`.
pub const T_INFOMASK2: usize = 18;
/// Offset of `infomask`.
pub const T_INFOMASK: usize = 20;
/// Offset of `hoff`.
pub const T_HOFF: usize = 22;

/// infomask: some attribute is null (the bitmap is present).
pub const HEAP_HASNULL: u16 = 0x0001;
/// infomask: some attribute is a varlena.
pub const HEAP_HASVARWIDTH: u16 = 0x0002;
/// infomask: `cid` holds both cmin (low 16 bits) and cmax (high 16 bits).
pub const HEAP_COMBOCID: u16 = 0x0020;
/// infomask: the inserting transaction committed (hint).
pub const HEAP_XMIN_COMMITTED: u16 = 0x0100;
/// infomask: the inserting transaction aborted (hint).
pub const HEAP_XMIN_INVALID: u16 = 0x0200;
/// infomask: both xmin hints: frozen, visible to everyone.
pub const HEAP_XMIN_FROZEN: u16 = HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID;
/// infomask: the deleting transaction committed (hint).
pub const HEAP_XMAX_COMMITTED: u16 = 0x0400;
/// infomask: xmax is not a valid deleter (zero or aborted) (hint).
pub const HEAP_XMAX_INVALID: u16 = 0x0800;
/// infomask: this tuple is the new version made by an UPDATE.
pub const HEAP_UPDATED: u16 = 0x2000;
/// infomask: all four hint bits.
pub const HEAP_HINT_BITS: u16 =
    HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID | HEAP_XMAX_COMMITTED | HEAP_XMAX_INVALID;

// The page checksum leaves the hint bits out (so hint-only changes need no
// full-page image); it finds them by these numbers, which must not drift.
const _: () = {
    use crate::storage::checksum;
    assert!(checksum::TUPLE_INFOMASK_OFFSET == T_INFOMASK);
    assert!(checksum::TUPLE_HEADER_SIZE == HEADER_SIZE);
    assert!(checksum::HINT_INFOMASK_BITS == HEAP_HINT_BITS);
    assert!(checksum::HINT_PAGE_FLAGS == crate::storage::page::PD_ALL_VISIBLE);
};

/// infomask2: mask of the number of attributes.
pub const HEAP_NATTS_MASK: u16 = 0x07ff;
/// infomask2: this tuple was updated and the new version is heap-only (HOT).
pub const HEAP_HOT_UPDATED: u16 = 0x4000;
/// infomask2: this tuple is a heap-only version (no index points at it).
pub const HEAP_ONLY_TUPLE: u16 = 0x8000;

/// The most attributes a tuple can have (PostgreSQL's `MaxHeapAttributeNumber`).
pub const MAX_ATTRS: usize = 1600;

/// Names of the infomask bits, for the inspection API.
pub const INFOMASK_NAMES: &[(u16, &str)] = &[
    (HEAP_HASNULL, "HASNULL"),
    (HEAP_HASVARWIDTH, "HASVARWIDTH"),
    (HEAP_COMBOCID, "COMBOCID"),
    (HEAP_XMIN_COMMITTED, "XMIN_COMMITTED"),
    (HEAP_XMIN_INVALID, "XMIN_INVALID"),
    (HEAP_XMAX_COMMITTED, "XMAX_COMMITTED"),
    (HEAP_XMAX_INVALID, "XMAX_INVALID"),
    (HEAP_UPDATED, "UPDATED"),
];

/// Names of the infomask2 flag bits, for the inspection API.
pub const INFOMASK2_NAMES: &[(u16, &str)] = &[
    (HEAP_HOT_UPDATED, "HOT_UPDATED"),
    (HEAP_ONLY_TUPLE, "HEAP_ONLY"),
];

#[inline]
fn rd32(t: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(t[at..at + 4].try_into().expect("4-byte slice"))
}
#[inline]
fn rd16(t: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([t[at], t[at + 1]])
}
#[inline]
fn wr32(t: &mut [u8], at: usize, v: u32) {
    t[at..at + 4].copy_from_slice(&v.to_le_bytes())
}
#[inline]
fn wr16(t: &mut [u8], at: usize, v: u16) {
    t[at..at + 2].copy_from_slice(&v.to_le_bytes())
}

/// Inserting transaction id.
#[inline]
pub fn xmin(t: &[u8]) -> u32 {
    rd32(t, T_XMIN)
}
/// Sets the inserting transaction id.
#[inline]
pub fn set_xmin(t: &mut [u8], x: u32) {
    wr32(t, T_XMIN, x)
}
/// Deleting (or updating) transaction id, 0 when none.
#[inline]
pub fn xmax(t: &[u8]) -> u32 {
    rd32(t, T_XMAX)
}
/// Sets the deleting transaction id.
#[inline]
pub fn set_xmax(t: &mut [u8], x: u32) {
    wr32(t, T_XMAX, x)
}
/// The raw command id field (cmin, cmax, or both with `HEAP_COMBOCID`).
#[inline]
pub fn raw_cid(t: &[u8]) -> u32 {
    rd32(t, T_CID)
}
/// Sets the raw command id field.
#[inline]
pub fn set_raw_cid(t: &mut [u8], c: u32) {
    wr32(t, T_CID, c)
}
/// The tuple id of this tuple or of its newer version.
#[inline]
pub fn ctid(t: &[u8]) -> (u32, OffsetNumber) {
    (rd32(t, T_CTID_BLOCK), rd16(t, T_CTID_OFF))
}
/// Sets the ctid.
#[inline]
pub fn set_ctid(t: &mut [u8], block: u32, off: OffsetNumber) {
    wr32(t, T_CTID_BLOCK, block);
    wr16(t, T_CTID_OFF, off);
}
/// The infomask bits.
#[inline]
pub fn infomask(t: &[u8]) -> u16 {
    rd16(t, T_INFOMASK)
}
/// Replaces the infomask bits.
#[inline]
pub fn set_infomask(t: &mut [u8], m: u16) {
    wr16(t, T_INFOMASK, m)
}
/// The infomask2 field (attribute count and HOT flags).
#[inline]
pub fn infomask2(t: &[u8]) -> u16 {
    rd16(t, T_INFOMASK2)
}
/// Replaces the infomask2 field.
#[inline]
pub fn set_infomask2(t: &mut [u8], m: u16) {
    wr16(t, T_INFOMASK2, m)
}
/// Number of attributes stored in the tuple.
#[inline]
pub fn natts(t: &[u8]) -> usize {
    (infomask2(t) & HEAP_NATTS_MASK) as usize
}
/// Start of the attribute data.
#[inline]
pub fn hoff(t: &[u8]) -> usize {
    t[T_HOFF] as usize
}

/// Names of the set bits of `mask` per `names`, joined by `|`.
pub fn flag_names(mask: u16, names: &[(u16, &str)]) -> String {
    let mut s = String::new();
    for &(bit, name) in names {
        if mask & bit == bit {
            if !s.is_empty() {
                s.push('|');
            }
            s.push_str(name);
        }
    }
    s
}

/// One attribute's storage: length and alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    /// Byte length: 1, 2, 4, 8, 12 or 16 for fixed-width values, -1 for varlena.
    pub len: i16,
    /// Alignment in bytes: 1, 2, 4 or 8.
    pub align: u8,
}

impl Attr {
    /// A fixed-width attribute of `len` bytes aligned to `align`.
    pub const fn fixed(len: i16, align: u8) -> Attr {
        Attr { len, align }
    }
    /// A varlena attribute whose long form aligns to `align`.
    pub const fn varlena(align: u8) -> Attr {
        Attr { len: -1, align }
    }
}

/// The storage description of a tuple's attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TupleDesc {
    /// The attributes, in order.
    attrs: Vec<Attr>,
    /// Offset of each attribute from `hoff` when no null or varlena precedes
    /// it (and the tuple has no nulls), else -1.
    cacheoff: Vec<i32>,
}

impl TupleDesc {
    /// Attribute `i`'s offset from `hoff` in a tuple without nulls, when
    /// every attribute up to it is fixed-width (PostgreSQL's `attcacheoff`).
    pub fn fixed_offset(&self, i: usize) -> Option<usize> {
        self.cacheoff.get(i).and_then(|&c| usize::try_from(c).ok())
    }

    /// Describes a tuple of `attrs`. Fails on lengths or alignments outside
    /// the supported set, or too many attributes.
    pub fn new(attrs: Vec<Attr>) -> Result<TupleDesc> {
        if attrs.len() > MAX_ATTRS {
            return Err(err!(
                ProgramLimitExceeded,
                "tables can have at most {MAX_ATTRS} columns"
            ));
        }
        let mut cacheoff = Vec::with_capacity(attrs.len());
        let mut off: i32 = 0;
        for a in &attrs {
            if !matches!(a.len, -1 | 1 | 2 | 4 | 8 | 12 | 16) || !matches!(a.align, 1 | 2 | 4 | 8) {
                return Err(Error::internal(format!(
                    "unsupported attribute storage: length {}, alignment {}",
                    a.len, a.align
                )));
            }
            if off < 0 || a.len < 0 {
                cacheoff.push(-1);
                off = -1;
            } else {
                let al = align_to(off as usize, a.align) as i32;
                cacheoff.push(al);
                off = al + a.len as i32;
            }
        }
        Ok(TupleDesc { attrs, cacheoff })
    }

    /// The attributes.
    pub fn attrs(&self) -> &[Attr] {
        &self.attrs
    }

    /// Number of attributes.
    pub fn len(&self) -> usize {
        self.attrs.len()
    }

    /// True when there are no attributes.
    pub fn is_empty(&self) -> bool {
        self.attrs.is_empty()
    }
}

#[inline]
pub(crate) fn align_to(off: usize, align: u8) -> usize {
    let a = align as usize;
    (off + a - 1) & !(a - 1)
}

/// Header size including the null bitmap, rounded to 8.
#[inline]
pub(crate) fn header_len(natts: usize, has_null: bool) -> usize {
    if has_null {
        maxalign(HEADER_SIZE + natts.div_ceil(8))
    } else {
        maxalign(HEADER_SIZE)
    }
}

/// The number of bytes [`form_tuple`] will produce for `values`.
pub fn tuple_len(desc: &TupleDesc, values: &[Option<&[u8]>]) -> usize {
    let has_null = values.iter().any(|v| v.is_none());
    let mut off = header_len(values.len(), has_null);
    for (a, v) in desc.attrs.iter().zip(values) {
        let Some(v) = v else { continue };
        off = data_end(off, *a, v.len());
    }
    off
}

#[inline]
fn data_end(off: usize, a: Attr, vlen: usize) -> usize {
    if a.len >= 0 {
        align_to(off, a.align) + a.len as usize
    } else if vlen < 127 {
        off + 1 + vlen
    } else {
        align_to(off, a.align) + 4 + vlen
    }
}

/// Builds a tuple of `values` (one per attribute of `desc`; fixed-width values
/// as their little-endian bytes, varlenas as payload bytes without header)
/// into `out`, which is cleared first and reused (no allocation once it has
/// grown). The header's xmin, xmax, cid and ctid are zero, infomask has
/// `HASNULL`/`HASVARWIDTH` as needed and `XMAX_INVALID`.
pub fn form_tuple(desc: &TupleDesc, values: &[Option<&[u8]>], out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    form_tuple_append(desc, values, out).map(|_| ())
}

/// Like [`form_tuple`], but appends the tuple to `out` (a batch of tuples
/// for [`multi_insert`](crate::access::heap::HeapRelation::multi_insert))
/// and returns its length. On error `out` is left as it was.
///
/// The length is computed first and the buffer grown once, then the bytes
/// are written in place: no per-attribute growth checks on this hot path.
pub fn form_tuple_append(
    desc: &TupleDesc,
    values: &[Option<&[u8]>],
    out: &mut Vec<u8>,
) -> Result<usize> {
    form_tuple_append_with(desc, values.len(), |i| values[i], out)
}

/// Like [`form_tuple_append`] with the values given by ranges of one buffer
/// (`base[s..e]`, `None` for NULL): a loader that encodes a row's values
/// into one reused buffer forms its tuple without a slice vector per row.
pub fn form_tuple_append_ranges(
    desc: &TupleDesc,
    base: &[u8],
    ranges: &[Option<(usize, usize)>],
    out: &mut Vec<u8>,
) -> Result<usize> {
    form_tuple_append_with(
        desc,
        ranges.len(),
        |i| ranges[i].map(|(s, e)| &base[s..e]),
        out,
    )
}

fn form_tuple_append_with<'v>(
    desc: &TupleDesc,
    nvalues: usize,
    value: impl Fn(usize) -> Option<&'v [u8]>,
    out: &mut Vec<u8>,
) -> Result<usize> {
    if nvalues != desc.attrs.len() {
        return Err(Error::internal(format!(
            "tuple has {} values for {} attributes",
            nvalues,
            desc.attrs.len()
        )));
    }
    let has_null = (0..nvalues).any(|i| value(i).is_none());
    let hoff = header_len(nvalues, has_null);
    let mut len = hoff;
    let mut has_var = false;
    for (i, a) in desc.attrs.iter().enumerate() {
        let Some(v) = value(i) else { continue };
        if a.len >= 0 {
            if v.len() != a.len as usize {
                return Err(Error::internal(format!(
                    "value of attribute {} has {} bytes, expected {}",
                    i + 1,
                    v.len(),
                    a.len
                )));
            }
        } else {
            has_var = true;
            if v.len() > (1 << 29) {
                return Err(err!(
                    ProgramLimitExceeded,
                    "invalid memory alloc request size {}",
                    v.len()
                ));
            }
        }
        len = data_end(len, *a, v.len());
    }
    let base = out.len();
    out.resize(base + len, 0);
    let t = &mut out[base..];
    let mut off = hoff;
    for (i, a) in desc.attrs.iter().enumerate() {
        let Some(v) = value(i) else { continue };
        if has_null {
            t[HEADER_SIZE + i / 8] |= 1 << (i % 8);
        }
        match a.len {
            // Fixed widths copied as constants-sized moves (no memcpy call).
            4 => {
                off = align_to(off, a.align);
                t[off..off + 4].copy_from_slice(&v[..4]);
                off += 4;
                continue;
            }
            8 => {
                off = align_to(off, a.align);
                t[off..off + 8].copy_from_slice(&v[..8]);
                off += 8;
                continue;
            }
            l if l >= 0 => off = align_to(off, a.align),
            _ if v.len() < 127 => {
                t[off] = (((v.len() + 1) << 1) | 1) as u8;
                off += 1;
            }
            _ => {
                off = align_to(off, a.align);
                t[off..off + 4].copy_from_slice(&(((v.len() + 4) << 2) as u32).to_le_bytes());
                off += 4;
            }
        }
        t[off..off + v.len()].copy_from_slice(v);
        off += v.len();
    }
    debug_assert_eq!(off, len);
    let mut mask = HEAP_XMAX_INVALID;
    if has_null {
        mask |= HEAP_HASNULL;
    }
    if has_var {
        mask |= HEAP_HASVARWIDTH;
    }
    set_infomask(t, mask);
    set_infomask2(t, nvalues as u16);
    t[T_HOFF] = hoff as u8;
    Ok(len)
}

/// True when attribute `i` (0-based) of a tuple with a null bitmap is null.
#[inline]
fn att_is_null(t: &[u8], i: usize) -> bool {
    t[HEADER_SIZE + i / 8] & (1 << (i % 8)) == 0
}

/// Fills `out[..upto]` with the values of the first `upto` attributes of
/// tuple `t` (slices into `t`; varlenas without their header; `None` for
/// nulls and for attributes the tuple does not have, e.g. added after it was
/// written). Walks the tuple only up to attribute `upto`; uses the cached
/// fixed offsets while no null and no varlena precedes. Allocates nothing.
///
/// Fails (XX001) when the tuple's bytes do not fit its description.
pub fn deform<'t>(
    t: &'t [u8],
    desc: &TupleDesc,
    upto: usize,
    out: &mut [Option<&'t [u8]>],
) -> Result<()> {
    let upto = upto.min(desc.attrs.len()).min(out.len());
    let stored = natts(t).min(upto);
    let hoff = hoff(t);
    let has_null = infomask(t) & HEAP_HASNULL != 0;
    let corrupt = || {
        err!(
            DataCorrupted,
            "heap tuple is corrupted: attribute data past its end"
        )
    };
    if hoff > t.len() || (has_null && HEADER_SIZE + stored.div_ceil(8) > hoff) {
        return Err(corrupt());
    }
    let data = &t[hoff..];
    let mut off = 0usize;
    let mut slow = has_null;
    #[allow(clippy::needless_range_loop)] // i indexes attrs, cacheoff, the bitmap and out
    for i in 0..stored {
        let a = desc.attrs[i];
        if has_null && att_is_null(t, i) {
            out[i] = None;
            continue;
        }
        if !slow {
            // Fast path: every attribute so far was fixed-width and present.
            let c = desc.cacheoff[i];
            if c >= 0 {
                let start = c as usize;
                let end = start + a.len as usize;
                out[i] = Some(data.get(start..end).ok_or_else(corrupt)?);
                off = end;
                continue;
            }
            slow = true;
        }
        if a.len >= 0 {
            let start = align_to(off, a.align);
            let end = start + a.len as usize;
            out[i] = Some(data.get(start..end).ok_or_else(corrupt)?);
            off = end;
        } else {
            // A zero byte is padding before an aligned 4-byte header; a
            // short header is never zero.
            let first = *data.get(off).ok_or_else(corrupt)?;
            if first == 0 {
                off = align_to(off, a.align);
            }
            let first = *data.get(off).ok_or_else(corrupt)?;
            let (hdr, total) = if first & 1 == 1 {
                (1, (first >> 1) as usize)
            } else {
                let w = data.get(off..off + 4).ok_or_else(corrupt)?;
                (
                    4,
                    (u32::from_le_bytes(w.try_into().expect("4 bytes")) >> 2) as usize,
                )
            };
            if total < hdr {
                return Err(corrupt());
            }
            out[i] = Some(data.get(off + hdr..off + total).ok_or_else(corrupt)?);
            off += total;
        }
    }
    for o in out.iter_mut().take(upto).skip(stored) {
        *o = None;
    }
    Ok(())
}

/// The storage description of tuples whose columns have `types`, in order.
pub fn desc_of_types<'a>(
    types: impl IntoIterator<Item = &'a crate::types::DataType>,
) -> crate::error::Result<TupleDesc> {
    TupleDesc::new(
        types
            .into_iter()
            .map(|ty| Attr {
                len: ty.attlen(),
                align: ty.attalign() as u8,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(desc: &TupleDesc, values: &[Option<&[u8]>]) -> Vec<u8> {
        let mut buf = Vec::new();
        form_tuple(desc, values, &mut buf).unwrap();
        assert_eq!(buf.len(), tuple_len(desc, values));
        let mut out = vec![None; values.len()];
        deform(&buf, desc, values.len(), &mut out).unwrap();
        assert_eq!(&out[..], values);
        // Partial deform gives the same prefix.
        for upto in 0..values.len() {
            let mut part = vec![Some(&b"junk"[..]); values.len()];
            deform(&buf, desc, upto, &mut part).unwrap();
            assert_eq!(&part[..upto], &values[..upto]);
            assert!(part[upto..].iter().all(|v| *v == Some(&b"junk"[..])));
        }
        buf
    }

    #[test]
    fn every_length_alignment_combination_with_and_without_nulls() {
        let lens: [i16; 6] = [1, 2, 4, 8, 16, -1];
        let aligns = [1u8, 2, 4, 8];
        let payloads: Vec<Vec<u8>> = (0..=16u8)
            .map(|n| (0..n).map(|b| b ^ 0x5a).collect())
            .collect();
        let long: Vec<u8> = (0..300).map(|i| i as u8).collect();
        for &l1 in &lens {
            for &a1 in &aligns {
                for &l2 in &lens {
                    for &a2 in &aligns {
                        // A 1-byte lead attribute pushes the others off alignment.
                        let desc = TupleDesc::new(vec![
                            Attr::fixed(1, 1),
                            Attr { len: l1, align: a1 },
                            Attr { len: l2, align: a2 },
                            Attr::fixed(4, 4),
                        ])
                        .unwrap();
                        let v = |l: i16, long_one: bool| -> &[u8] {
                            if l < 0 {
                                if long_one {
                                    &long
                                } else {
                                    &payloads[5]
                                }
                            } else {
                                &payloads[l as usize]
                            }
                        };
                        for long_one in [false, true] {
                            let vals = [
                                Some(&[7u8][..]),
                                Some(v(l1, long_one)),
                                Some(v(l2, !long_one)),
                                Some(&[1, 2, 3, 4][..]),
                            ];
                            let t = roundtrip(&desc, &vals);
                            assert_eq!(infomask(&t) & HEAP_HASNULL, 0);
                            assert_eq!(hoff(&t), 24);
                            for mask in 1..16u32 {
                                let mut vals2 = vals;
                                for (i, val) in vals2.iter_mut().enumerate() {
                                    if mask & (1 << i) != 0 {
                                        *val = None;
                                    }
                                }
                                let t = roundtrip(&desc, &vals2);
                                assert_ne!(infomask(&t) & HEAP_HASNULL, 0);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fixed_values_are_aligned_relative_to_the_tuple() {
        let desc = TupleDesc::new(vec![
            Attr::fixed(1, 1),
            Attr::fixed(8, 8),
            Attr::fixed(2, 2),
        ])
        .unwrap();
        let mut t = Vec::new();
        form_tuple(&desc, &[Some(&[1]), Some(&[2; 8]), Some(&[3, 3])], &mut t).unwrap();
        // header 24, a at 24, b aligned to 32, c at 40.
        assert_eq!(t.len(), 42);
        assert_eq!(&t[32..40], &[2; 8]);
        assert_eq!(natts(&t), 3);
        assert_ne!(infomask(&t) & HEAP_XMAX_INVALID, 0);
    }

    #[test]
    fn varlena_headers_short_and_long() {
        let desc = TupleDesc::new(vec![Attr::fixed(1, 1), Attr::varlena(4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&desc, &[Some(&[9]), Some(b"hello")], &mut t).unwrap();
        assert_eq!(
            t[25],
            ((5 + 1) << 1 | 1) as u8,
            "short header right after the 1-byte column"
        );
        assert_ne!(infomask(&t) & HEAP_HASVARWIDTH, 0);
        let big = vec![b'x'; 126];
        form_tuple(&desc, &[Some(&[9]), Some(&big)], &mut t).unwrap();
        assert_eq!(t[25], ((126 + 1) << 1 | 1) as u8);
        let big = vec![b'x'; 127];
        form_tuple(&desc, &[Some(&[9]), Some(&big)], &mut t).unwrap();
        assert_eq!(
            &t[25..28],
            &[0, 0, 0],
            "padding before the aligned long header"
        );
        assert_eq!(
            u32::from_le_bytes(t[28..32].try_into().unwrap()),
            (131 << 2) as u32
        );
        let mut out = [None, None];
        deform(&t, &desc, 2, &mut out).unwrap();
        assert_eq!(out[1], Some(&big[..]));
    }

    #[test]
    fn empty_varlena_and_missing_trailing_attributes() {
        let old = TupleDesc::new(vec![Attr::fixed(4, 4)]).unwrap();
        let new = TupleDesc::new(vec![Attr::fixed(4, 4), Attr::varlena(4)]).unwrap();
        let mut t = Vec::new();
        form_tuple(&old, &[Some(&[1, 0, 0, 0])], &mut t).unwrap();
        let mut out = [None, Some(&b"x"[..])];
        deform(&t, &new, 2, &mut out).unwrap();
        assert_eq!(out, [Some(&[1u8, 0, 0, 0][..]), None]);
        roundtrip(&new, &[Some(&[1, 0, 0, 0]), Some(b"")]);
    }

    #[test]
    fn bad_values_and_corrupt_tuples_are_errors() {
        let desc = TupleDesc::new(vec![Attr::fixed(4, 4), Attr::varlena(4)]).unwrap();
        let mut t = Vec::new();
        assert!(form_tuple(&desc, &[Some(&[1, 2]), None], &mut t).is_err());
        assert!(form_tuple(&desc, &[None], &mut t).is_err());
        assert!(TupleDesc::new(vec![Attr { len: 3, align: 1 }]).is_err());
        form_tuple(&desc, &[Some(&[1, 2, 3, 4]), Some(b"abcdef")], &mut t).unwrap();
        let mut out = [None, None];
        let cut = &t[..t.len() - 2];
        assert_eq!(
            deform(cut, &desc, 2, &mut out).unwrap_err().code,
            crate::SqlState::DataCorrupted
        );
    }

    #[test]
    fn append_builds_batches_and_leaves_the_buffer_on_error() {
        let desc = TupleDesc::new(vec![Attr::fixed(2, 2), Attr::varlena(4)]).unwrap();
        let mut batch = Vec::new();
        let mut one = Vec::new();
        let mut lens = Vec::new();
        for v in [&b"a"[..], &[7u8; 200][..], b""] {
            lens.push(form_tuple_append(&desc, &[Some(&[1, 2]), Some(v)], &mut batch).unwrap());
        }
        assert!(form_tuple_append(&desc, &[Some(&[1]), None], &mut batch).is_err());
        assert_eq!(batch.len(), lens.iter().sum::<usize>());
        form_tuple(&desc, &[Some(&[1, 2]), Some(&[7u8; 200])], &mut one).unwrap();
        assert_eq!(&batch[lens[0]..lens[0] + lens[1]], &one[..]);
    }

    #[test]
    fn flag_names_join() {
        assert_eq!(
            flag_names(HEAP_XMIN_COMMITTED | HEAP_XMAX_INVALID, INFOMASK_NAMES),
            "XMIN_COMMITTED|XMAX_INVALID"
        );
        assert_eq!(flag_names(0, INFOMASK_NAMES), "");
    }
}
