//! The scan's column-major fast path: fixed-width columns of NULL-free
//! tuples copied straight from the page into typed vectors.
//!
//! When every column a scan reads is fixed-width (`int2/4/8`, `float8`,
//! `date`, `timestamp`) and only fixed-width attributes precede it, its
//! offset from the tuple's data start is the same in every tuple without
//! NULLs ([`FixedColumn`], [`fixed_layout`]). For a page whose visible tuples
//! all lack NULLs (and carry every attribute the scan needs) the scan then
//! fills each column vector without a per-tuple deform or a per-value type
//! dispatch. Any other page takes the general per-tuple path in
//! [`crate::exec::scan`].
//!
//! Two shapes:
//! - [`fused_all_normal`]: an ALL_VISIBLE page whose columns are all 4 bytes
//!   wide (`int4`, `date`: the benchmark shapes). One pass over the line
//!   pointer array checks each tuple and writes its values, with no list of
//!   data starts in between; the checks of all tuples fold into one flag
//!   tested once per page, so the loop has no data-dependent branch. When
//!   every line pointer is NORMAL (a vacuumed page: checked first, in a
//!   pass the compiler vectorizes) the copy loop also drops the per-pointer
//!   state test and the moving row position: 58 → 42 instructions per row
//!   of a serial `sum(aid)` (callgrind), 13 of them left in the loop itself.
//! - [`fixed_starts`] / [`all_normal_starts`] then [`push_fixed`]: any width,
//!   any page; the data starts are recorded first, then each column is
//!   filled in one loop over them.
//!
//! Safety of the reads: every index into the page is clamped into it (or
//! proved in bounds by an earlier clamp) so a corrupt line pointer can only
//! produce a rejected page, never a read outside the frame; the folded
//! conditions reject every tuple a clamp changed.

use crate::access::heap::tuple::{self, TupleDesc};
use crate::storage::prefetch::Ahead;
use crate::storage::{page, BLCKSZ};
use crate::types::DataType;

use crate::exec::vector::{Data, Vector};

/// Where a column of the column-major fast path lives in every tuple
/// without NULLs.
#[derive(Debug, Clone, Copy)]
pub struct FixedColumn {
    /// The output column (builder) it fills.
    pub out: usize,
    /// Byte offset from the tuple's data start (`hoff`).
    pub off: usize,
    /// Width in bytes: 2, 4 or 8.
    pub len: usize,
}

/// The fast-path layout of `columns` of a table with attributes `desc`, or
/// `None` when some column is not fixed-width or follows a varlena.
pub fn fixed_layout(
    desc: &TupleDesc,
    columns: &[usize],
    types: &[DataType],
) -> Option<Vec<FixedColumn>> {
    let mut offsets = Vec::with_capacity(desc.len());
    let mut off = 0usize;
    for a in desc.attrs() {
        if a.len < 0 {
            break;
        }
        let al = a.align as usize;
        off = (off + al - 1) & !(al - 1);
        offsets.push((off, a.len as usize));
        off += a.len as usize;
    }
    columns
        .iter()
        .enumerate()
        .map(|(k, &c)| {
            let (off, len) = *offsets.get(c)?;
            let fits = matches!(
                (types[k], len),
                (DataType::Int2, 2)
                    | (DataType::Int4 | DataType::Date, 4)
                    | (
                        DataType::Int8
                            | DataType::Timestamp(_)
                            | DataType::TimestampTz(_)
                            | DataType::Float8,
                        8
                    )
            );
            fits.then_some(FixedColumn { out: k, off, len })
        })
        .collect()
}

/// Bytes of tuple data the columns need: the end of the last one.
pub fn data_needed(fixed: &[FixedColumn]) -> usize {
    fixed.iter().map(|c| c.off + c.len).max().unwrap_or(0)
}

/// `t_hoff` of a tuple without a null bitmap: the header, MAXALIGNed.
const NO_NULL_HOFF: usize = (tuple::HEADER_SIZE + 7) & !7;

/// The largest number of columns [`fused_all_normal`] takes.
pub const FUSED_MAX: usize = 4;

/// Whether [`fused_all_normal`] can fill `fixed`'s columns: all 4 bytes
/// wide, at most [`FUSED_MAX`].
pub fn fusable(fixed: &[FixedColumn]) -> bool {
    !fixed.is_empty() && fixed.len() <= FUSED_MAX && fixed.iter().all(|c| c.len == 4)
}

/// Fills the 4-byte columns `fixed` (see [`fusable`]) of `builders` with
/// the values of every NORMAL tuple of the ALL_VISIBLE page `pg`, in line
/// pointer order, when every such tuple has exactly `natts` attributes (the
/// table's), no NULL and the columns' bytes; returns how many rows it added. `None`
/// (with the builders as they were) when some tuple fails that: the caller
/// takes the general path for the page.
///
/// The hot loop of `sum`/`GROUP BY`/join scans over vacuumed tables. Per
/// line pointer it does one 4-byte read of the pointer, one 8-byte read of
/// the header word holding `t_infomask2`, `t_infomask` and `t_hoff`, and one
/// read per column, written at the next row position whether the pointer
/// is NORMAL or not (the position only advances for NORMAL ones): no
/// branch depends on the data, and no list of data starts is built.
pub fn fused_all_normal(
    pg: &[u8],
    natts: usize,
    fixed: &[FixedColumn],
    builders: &mut [Vector],
    ahead: Ahead,
) -> Option<usize> {
    debug_assert!(fusable(fixed));
    let pg: &[u8; BLCKSZ] = pg.try_into().ok()?;
    let max = page::max_offset(pg) as usize;
    let need = data_needed(fixed);
    // Take the value vectors out of the builders for the loop.
    let mut outs: [Vec<i32>; FUSED_MAX] = Default::default();
    let mut offs = [0usize; FUSED_MAX];
    for (k, c) in fixed.iter().enumerate() {
        let Data::I32(v) = &mut builders[c.out].data else {
            unreachable!("a 4-byte fixed column is an int4 or date vector");
        };
        outs[k] = std::mem::take(v);
        offs[k] = c.off;
    }
    let n = match fixed.len() {
        1 => fused_loop::<1>(pg, max, natts, need, &offs, &mut outs, ahead),
        2 => fused_loop::<2>(pg, max, natts, need, &offs, &mut outs, ahead),
        3 => fused_loop::<3>(pg, max, natts, need, &offs, &mut outs, ahead),
        _ => fused_loop::<4>(pg, max, natts, need, &offs, &mut outs, ahead),
    };
    for (k, c) in fixed.iter().enumerate() {
        let v = &mut builders[c.out];
        v.data = Data::I32(std::mem::take(&mut outs[k]));
        if let (Some(n), Some(nulls)) = (n, &mut v.nulls) {
            nulls.resize(nulls.len() + n, false);
        }
    }
    n
}

/// The bits of the header word at bytes 16..24 of a tuple (ctid offset,
/// `t_infomask2`, `t_infomask`, `t_hoff`) that [`fused_loop`] checks: the
/// attribute count, `HEAP_HASNULL` and `t_hoff` (hint bits are left out: they
/// may change under a shared lock, and do not matter here).
const MASK: u64 =
    (tuple::HEAP_NATTS_MASK as u64) << 16 | (tuple::HEAP_HASNULL as u64) << 32 | 0xff << 48;

/// [`fused_loop`] for a page whose line pointers `1..=max` are all NORMAL
/// with lengths of at least `min_len` that end inside the page (the usual
/// vacuumed page): one pass over the pointer array checks that, then the
/// copy loop needs neither the per-pointer state test nor a moving row
/// position — about a third of the instructions per tuple. Writes
/// `dst[k][0..max]` and returns `Some(max)`, or `None` (nothing written
/// that counts: the caller's general loop overwrites it) when some pointer
/// or some tuple's header word fails.
///
/// Prefetch of the next frame (`ahead`): `P` of its lines per tuple in
/// address order ([`crate::storage::prefetch::Spread`]); with `PREDICT` (rows
/// of two lines or more) on a page whose tuples are evenly spaced
/// ([`evenly_spaced`]), its pointer array at once and then, per tuple, the
/// line(s) at this tuple's offset and length in the next frame, which hold
/// the next page's tuple of the same number when that page is laid out
/// alike (a table of equal-width rows): the lines the next loop reads, and
/// not the rest of each row. On pgbench_accounts (128-byte rows, the
/// columns in the first line) that halves the lines fetched: `sum(aid)`
/// over 5M cached rows 17.2 -> 10.4 ms on two threads, sum_group 17.5 ->
/// 11.7 ms, hash_join 19.8 -> 14.2 ms (medians, alternating runs). A next
/// page laid out otherwise only loses its prefetch: it is read as without
/// one.
#[inline(always)]
fn dense_loop<const N: usize, const P: usize, const PREDICT: bool>(
    pg: &[u8; BLCKSZ],
    max: usize,
    min_len: usize,
    expect: u64,
    offs: &[usize; N],
    dst: &[*mut i32; N],
    ahead: Ahead,
) -> Option<usize> {
    let lps = &pg[page::PAGE_HEADER_SIZE..page::PAGE_HEADER_SIZE + 4 * max];
    if !pointers_dense(lps, min_len as u32) {
        return None;
    }
    let predict = PREDICT && ahead.is_some() && evenly_spaced(lps);
    // The loop is instantiated once per way of prefetching, so no row
    // tests which one applies (a test per row of whether to predict and
    // whether there is a frame cost ~4 of the loop's ~28 instructions).
    let bad = if predict {
        ahead.lines(0, (page::PAGE_HEADER_SIZE + 4 * max).div_ceil(64));
        // The first and the last line of what this loop reads of the
        // tuple (one line for most rows; for a fixed prefix past 128
        // bytes the lines between go without a prefetch: asking for
        // each column's line cost the two-column filter ~2%).
        let tail = min_len - 1;
        dense_rows(pg, lps, min_len, expect, offs, dst, |h| {
            ahead.at_unchecked(h);
            ahead.at_unchecked(h + tail);
        })
    } else if ahead.is_some() {
        let mut spread = ahead.spread();
        dense_rows(pg, lps, min_len, expect, offs, dst, |_| spread.step::<P>())
    } else {
        dense_rows(pg, lps, min_len, expect, offs, dst, |_| {})
    };
    (bad == 0).then_some(max)
}

/// [`dense_loop`]'s row loop over the (all NORMAL, checked) pointers
/// `lps`: copies each tuple's columns to `dst[k][i]`, calls `pre(h)` with
/// the tuple's offset for the prefetch, and returns the fold of the header
/// word checks (0 when every tuple passes).
#[inline(always)]
fn dense_rows<const N: usize>(
    pg: &[u8; BLCKSZ],
    lps: &[u8],
    min_len: usize,
    expect: u64,
    offs: &[usize; N],
    dst: &[*mut i32; N],
    mut pre: impl FnMut(usize),
) -> u64 {
    // Each offset has `off + min_len <= BLCKSZ` (checked by the caller; the
    // shared content lock keeps the pointer array as it was). The clamp
    // restates it where the compiler can see it, so a read can never leave
    // the page.
    let last = BLCKSZ - min_len;
    let src = pg.as_ptr();
    // Each column's bytes in the tuple at offset 0 (pointer arithmetic only:
    // no read happens before the tuple's offset is added).
    let cols: [*const u8; N] = std::array::from_fn(|k| src.wrapping_add(NO_NULL_HOFF + offs[k]));
    let mut bad = 0u64;
    for (i, c) in lps.chunks_exact(4).enumerate() {
        let raw = u32::from_le_bytes(c.try_into().expect("4 bytes"));
        let h = ((raw & 0x7fff) as usize).min(last);
        pre(h);
        // SAFETY: `h + T_CTID_OFF + 8 <= h + NO_NULL_HOFF <= h + min_len <=
        // BLCKSZ`, and `offs[k] + 4 <= need`, so every read is inside the
        // page; `i < max` and each destination holds `max` values.
        unsafe {
            let w = (src.add(h + tuple::T_CTID_OFF) as *const [u8; 8]).read();
            bad |= (u64::from_le_bytes(w) & MASK) ^ expect;
            for k in 0..N {
                let v = (cols[k].add(h) as *const [u8; 4]).read();
                *dst[k].add(i) = i32::from_le_bytes(v);
            }
        }
    }
    bad
}

/// Whether the tuples of the line pointers `lps` lie at a constant stride
/// (each the same distance below the one before it, as heapdb places rows
/// of one width), judged by the first two and the last: what makes this
/// page's offsets a good guess at the next page's.
#[inline(always)]
fn evenly_spaced(lps: &[u8]) -> bool {
    let off = |i: usize| -> isize {
        let c = &lps[4 * i..4 * i + 4];
        (u32::from_le_bytes(c.try_into().expect("4 bytes")) & 0x7fff) as isize
    };
    let n = lps.len() / 4;
    if n < 2 {
        return n == 1;
    }
    let stride = off(0) - off(1);
    stride > 0 && off(0) - (n as isize - 1) * stride == off(n - 1)
}

/// Whether every line pointer of `lps` is NORMAL with a length of at least
/// `min_len` that ends inside the page: [`dense_loop`]'s first pass. A
/// non-short-circuit `|` over the whole array, which the compiler
/// vectorizes when it is inlined (as an out-of-line `fold`, once the fused
/// loop had more callers, it cost ~7 instructions a tuple instead of ~4).
#[inline(always)]
fn pointers_dense(lps: &[u8], min_len: u32) -> bool {
    let mut bad = 0u32;
    for c in lps.chunks_exact(4) {
        let raw = u32::from_le_bytes(c.try_into().expect("4 bytes"));
        let (off, len) = (raw & 0x7fff, raw >> 17);
        bad |= ((raw >> 15) & 3 ^ u32::from(page::LP_NORMAL))
            | u32::from(len < min_len)
            | u32::from(off + len > BLCKSZ as u32);
    }
    bad == 0
}

/// [`fused_all_normal`]'s loop for `N` columns (a constant, so the column
/// loop unrolls). Appends to `outs[..N]`; on a rejected page leaves them
/// as they were and returns `None`.
#[inline(always)]
fn fused_loop<const N: usize>(
    pg: &[u8; BLCKSZ],
    max: usize,
    natts: usize,
    need: usize,
    offs: &[usize; FUSED_MAX],
    outs: &mut [Vec<i32>; FUSED_MAX],
    ahead: Ahead,
) -> Option<usize> {
    // Line pointers end inside the page (max_offset is bounded by the
    // page's `lower`), but clamp anyway: a corrupt count yields reads of
    // whatever lies in the page, which the checks then reject.
    let max = max.min((BLCKSZ - page::PAGE_HEADER_SIZE) / 4);
    let base: [usize; N] = std::array::from_fn(|k| outs[k].len());
    for (k, out) in outs.iter_mut().take(N).enumerate() {
        out.resize(base[k] + max, 0);
    }
    let dst: [*mut i32; N] = std::array::from_fn(|k| {
        // SAFETY: `base[k] <= len`; the pointer stays inside the vector.
        unsafe { outs[k].as_mut_ptr().add(base[k]) }
    });
    let offs: [usize; N] = std::array::from_fn(|k| offs[k]);
    // SAFETY: each destination holds `max` values past `base[k]`.
    let n = unsafe { fused_core::<N>(pg, max, natts, need, &offs, &dst, ahead) };
    for (k, out) in outs.iter_mut().take(N).enumerate() {
        out.truncate(base[k] + n.unwrap_or(0));
    }
    n
}

/// The column loop of [`fused_loop`] and [`fused_page_values`]: writes the
/// values of the page's NORMAL tuples, in line pointer order, to
/// `dst[k][0..n]` and returns `Some(n)`, or `None` (what it wrote counts
/// for nothing) when some tuple fails the checks.
///
/// # Safety
///
/// Each `dst[k]` must be valid for writes of `max` values, and `max` at
/// most `(BLCKSZ - PAGE_HEADER_SIZE) / 4`.
#[inline(always)]
unsafe fn fused_core<const N: usize>(
    pg: &[u8; BLCKSZ],
    max: usize,
    natts: usize,
    need: usize,
    offs: &[usize; N],
    dst: &[*mut i32; N],
    ahead: Ahead,
) -> Option<usize> {
    use tuple::T_CTID_OFF;
    debug_assert!(max <= (BLCKSZ - page::PAGE_HEADER_SIZE) / 4);
    // The header word at bytes 16..24 (ctid offset, infomask2, infomask,
    // hoff) of a tuple of this table without NULLs: all its attributes, no
    // null bitmap, the data at `NO_NULL_HOFF`.
    let expect = (natts as u64) << 16 | (NO_NULL_HOFF as u64) << 48;
    let min_len = NO_NULL_HOFF + need;
    // Every accepted tuple has `off + min_len <= off + len <= BLCKSZ`, so
    // this clamp changes only the offsets of rejected ones.
    let last = BLCKSZ - min_len;
    let src = pg.as_ptr();
    // The next frame's lines, a few per tuple (`storage::prefetch`), or for
    // rows of two lines and more those at this page's tuple offsets
    // (`dense_loop`); a page of fewer than 32 tuples takes them all at once.
    let spread_used = Ahead::per_tuple(max) <= 4;
    let (next, per) = match Ahead::per_tuple(max) {
        per @ 1..=4 => (ahead, per),
        _ => {
            ahead.all();
            (Ahead::NONE, 1)
        }
    };
    let dense = match per {
        1 => dense_loop::<N, 1, false>(pg, max, min_len, expect, offs, dst, next),
        2 => dense_loop::<N, 2, false>(pg, max, min_len, expect, offs, dst, next),
        _ => dense_loop::<N, 4, true>(pg, max, min_len, expect, offs, dst, next),
    };
    if dense.is_some() {
        return dense;
    }
    // The general loop is for pages with non-NORMAL pointers (the dense
    // one rejected them before any prefetch): the next frame at once.
    if spread_used {
        ahead.all();
    }
    let (mut n, mut bad) = (0usize, 0usize);
    for i in 0..max {
        let at = page::PAGE_HEADER_SIZE + 4 * i;
        let raw = u32::from_le_bytes(pg[at..at + 4].try_into().expect("4 bytes"));
        let normal = ((raw >> 15) & 3 == u32::from(page::LP_NORMAL)) as usize;
        let (off, len) = ((raw & 0x7fff) as usize, (raw >> 17) as usize);
        let h = off.min(last);
        let w = u64::from_le_bytes(
            pg[h + T_CTID_OFF..h + T_CTID_OFF + 8]
                .try_into()
                .expect("8 bytes"),
        );
        // Non-short-circuit `|`: one flag per tuple, no branches.
        bad |= normal
            & ((w & MASK != expect) as usize
                | (len < min_len) as usize
                | (off + len > BLCKSZ) as usize);
        for k in 0..N {
            // SAFETY: `h + NO_NULL_HOFF + need <= BLCKSZ` and `offs[k] + 4 <=
            // need` (`data_needed`), so the 4 bytes lie inside the page;
            // `n <= i < max`, and the caller lets `dst[k]` take `max` values.
            unsafe {
                let v = (src.add(h + NO_NULL_HOFF + offs[k]) as *const [u8; 4]).read();
                *dst[k].add(n) = i32::from_le_bytes(v);
            }
        }
        n += normal;
    }
    (bad == 0).then_some(n)
}

/// The most tuples a page holds (PostgreSQL's `MaxHeapTuplesPerPage`:
/// `(BLCKSZ - header) / (MAXALIGN(tuple header) + line pointer)`).
pub const MAX_TUPLES: usize = (BLCKSZ - page::PAGE_HEADER_SIZE) / (NO_NULL_HOFF + 4);

/// One page's values of up to [`FUSED_MAX`] 4-byte columns.
pub type PageColumns = [[i32; MAX_TUPLES]; FUSED_MAX];

/// [`fused_all_normal`] into `cols[k]` (column `fixed[k]`) instead of the
/// builders: the values of one ALL_VISIBLE page for a computation on the
/// page itself. `None` when the page fails the checks, or has more line
/// pointers than [`MAX_TUPLES`] (only pages with unused ones can).
pub fn fused_page_values(
    pg: &[u8],
    natts: usize,
    fixed: &[FixedColumn],
    cols: &mut PageColumns,
    ahead: Ahead,
) -> Option<usize> {
    debug_assert!(fusable(fixed));
    let pg: &[u8; BLCKSZ] = pg.try_into().ok()?;
    let max = page::max_offset(pg) as usize;
    if max > MAX_TUPLES {
        return None;
    }
    let need = data_needed(fixed);
    let mut offs = [0usize; FUSED_MAX];
    for (k, c) in fixed.iter().enumerate() {
        offs[k] = c.off;
    }
    let [c0, c1, c2, c3] = cols;
    let p = [
        c0.as_mut_ptr(),
        c1.as_mut_ptr(),
        c2.as_mut_ptr(),
        c3.as_mut_ptr(),
    ];
    // SAFETY: every array holds MAX_TUPLES >= max values.
    unsafe {
        match fixed.len() {
            1 => fused_core::<1>(pg, max, natts, need, &[offs[0]], &[p[0]], ahead),
            2 => fused_core::<2>(
                pg,
                max,
                natts,
                need,
                &[offs[0], offs[1]],
                &[p[0], p[1]],
                ahead,
            ),
            3 => fused_core::<3>(
                pg,
                max,
                natts,
                need,
                &[offs[0], offs[1], offs[2]],
                &[p[0], p[1], p[2]],
                ahead,
            ),
            _ => fused_core::<4>(pg, max, natts, need, &offs, &p, ahead),
        }
    }
}

/// Appends the values of one fixed-width column at `col.off` past each of
/// the tuple data starts `starts` of page `pg` (all in bounds, checked by
/// the caller): the column-major inner loop.
pub fn push_fixed(v: &mut Vector, pg: &[u8], starts: &[usize], col: FixedColumn) {
    // `at` clamps into the page so that the compiler can drop the bounds
    // checks; `fixed_starts` guarantees the clamp never changes an offset.
    let pg: &[u8; BLCKSZ] = pg.try_into().expect("a page is BLCKSZ bytes");
    let at = |s: usize, w: usize| (s + col.off).min(BLCKSZ - w);
    fn rd<const W: usize>(pg: &[u8; BLCKSZ], i: usize) -> [u8; W] {
        pg[i..i + W].try_into().expect("W bytes")
    }
    match (&mut v.data, col.len) {
        (Data::I32(x), 4) => x.extend(
            starts
                .iter()
                .map(|&s| i32::from_le_bytes(rd::<4>(pg, at(s, 4)))),
        ),
        (Data::I64(x), 8) => x.extend(
            starts
                .iter()
                .map(|&s| i64::from_le_bytes(rd::<8>(pg, at(s, 8)))),
        ),
        (Data::F64(x), 8) => x.extend(
            starts
                .iter()
                .map(|&s| f64::from_le_bytes(rd::<8>(pg, at(s, 8)))),
        ),
        (Data::I16(x), 2) => x.extend(
            starts
                .iter()
                .map(|&s| i16::from_le_bytes(rd::<2>(pg, at(s, 2)))),
        ),
        _ => unreachable!("fixed_layout admits only these forms"),
    }
    if let Some(n) = &mut v.nulls {
        n.resize(n.len() + starts.len(), false);
    }
}

/// The data starts (page offsets) of the tuples at `visible` when every one
/// of them has at least `natts` attributes, no NULL and `need` bytes of
/// data; `false` (with `starts` partly filled) otherwise. Every start
/// returned satisfies `start + need <= BLCKSZ`, which [`push_fixed`] relies
/// on. The loop is branch-free apart from the bounds checks: each tuple's
/// conditions are folded into one flag checked once per page.
pub fn fixed_starts(
    pg: &[u8],
    visible: &[u16],
    natts: usize,
    need: usize,
    starts: &mut Vec<usize>,
) -> bool {
    use tuple::{HEADER_SIZE, T_HOFF, T_INFOMASK, T_INFOMASK2};
    let Ok(pg) = <&[u8; BLCKSZ]>::try_from(pg) else {
        return false;
    };
    // Every index below is clamped into the page, which lets the compiler
    // drop the bounds checks; a clamp that changes an index can only happen
    // on a tuple the folded conditions reject.
    let u16_at = |i: usize| {
        let i = i.min(BLCKSZ - 2);
        u16::from_le_bytes(pg[i..i + 2].try_into().expect("2 bytes"))
    };
    starts.clear();
    starts.resize(visible.len(), 0);
    let mut bad = 0usize;
    for (slot, &o) in starts.iter_mut().zip(visible) {
        let at = (page::PAGE_HEADER_SIZE + (o as usize).wrapping_sub(1) * 4).min(BLCKSZ - 4);
        let raw = u32::from_le_bytes(pg[at..at + 4].try_into().expect("4 bytes"));
        let (off, len) = ((raw & 0x7fff) as usize, (raw >> 17) as usize);
        let h = off.min(BLCKSZ - HEADER_SIZE);
        let hoff = pg[(h + T_HOFF).min(BLCKSZ - 1)] as usize;
        let im = u16_at(h + T_INFOMASK);
        let im2 = u16_at(h + T_INFOMASK2);
        // Non-short-circuit `|`: one flag per tuple, no branches.
        bad |= (len < HEADER_SIZE) as usize
            | (hoff < HEADER_SIZE) as usize
            | (off + len > BLCKSZ) as usize
            | (im & tuple::HEAP_HASNULL) as usize
            | ((im2 & tuple::HEAP_NATTS_MASK) < natts as u16) as usize
            | (hoff + need > len) as usize;
        *slot = h + hoff;
    }
    bad == 0
}

/// [`fixed_starts`] for an ALL_VISIBLE page: the data starts of all its
/// NORMAL tuples, read straight off the line pointer array (no list of
/// visible offsets in between). Same guarantees and result.
pub fn all_normal_starts(pg: &[u8], natts: usize, need: usize, starts: &mut Vec<usize>) -> bool {
    use tuple::{HEADER_SIZE, T_HOFF, T_INFOMASK, T_INFOMASK2};
    let Ok(pg) = <&[u8; BLCKSZ]>::try_from(pg) else {
        return false;
    };
    let u16_at = |i: usize| {
        let i = i.min(BLCKSZ - 2);
        u16::from_le_bytes(pg[i..i + 2].try_into().expect("2 bytes"))
    };
    let max = page::max_offset(pg) as usize;
    starts.clear();
    starts.resize(max, 0);
    let (mut n, mut bad) = (0usize, 0usize);
    for i in 0..max {
        let at = (page::PAGE_HEADER_SIZE + 4 * i).min(BLCKSZ - 4);
        let raw = u32::from_le_bytes(pg[at..at + 4].try_into().expect("4 bytes"));
        let normal = ((raw >> 15) & 3 == u32::from(page::LP_NORMAL)) as usize;
        let (off, len) = ((raw & 0x7fff) as usize, (raw >> 17) as usize);
        let h = off.min(BLCKSZ - HEADER_SIZE);
        let hoff = pg[(h + T_HOFF).min(BLCKSZ - 1)] as usize;
        let im = u16_at(h + T_INFOMASK);
        let im2 = u16_at(h + T_INFOMASK2);
        bad |= normal
            & ((len < HEADER_SIZE) as usize
                | (hoff < HEADER_SIZE) as usize
                | (off + len > BLCKSZ) as usize
                | (im & tuple::HEAP_HASNULL) as usize
                | ((im2 & tuple::HEAP_NATTS_MASK) < natts as u16) as usize
                | (hoff + need > len) as usize);
        starts[n] = h + hoff;
        n += normal;
    }
    starts.truncate(n);
    bad == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::heap::tuple::{form_tuple, Attr};

    /// `(a int4, b int8, c int4, t text)`: fixed prefix a, b, c.
    fn desc() -> TupleDesc {
        TupleDesc::new(vec![
            Attr::fixed(4, 4),
            Attr::fixed(8, 8),
            Attr::fixed(4, 4),
            Attr::varlena(4),
        ])
        .expect("a valid descriptor")
    }

    /// A page holding one tuple per row (`None`: a NULL in column c).
    fn page_of(rows: &[(i32, Option<i32>)]) -> Vec<u8> {
        page_of_widths(rows, |_| 5)
    }

    /// [`page_of`] with row `i`'s text `text_len(i)` bytes long.
    fn page_of_widths(rows: &[(i32, Option<i32>)], text_len: impl Fn(usize) -> usize) -> Vec<u8> {
        let d = desc();
        let mut pg = vec![0u8; BLCKSZ];
        page::init(&mut pg, 0);
        let mut t = Vec::new();
        for (i, &(a, c)) in rows.iter().enumerate() {
            let (ab, bb, cb) = (
                a.to_le_bytes(),
                (a as i64 * 10).to_le_bytes(),
                c.map(i32::to_le_bytes),
            );
            // A short varlena: a 1-byte header holding `(len + 1) << 1 | 1`.
            let len = text_len(i);
            let mut text = vec![((len as u8 + 1) << 1) | 1];
            text.extend(std::iter::repeat_n(b'x', len));
            let vals = [
                Some(&ab[..]),
                Some(&bb[..]),
                cb.as_ref().map(|x| &x[..]),
                Some(&text[..]),
            ];
            form_tuple(&d, &vals, &mut t).expect("tuple forms");
            page::add_item(&mut pg, &t, None).expect("room on the page");
        }
        pg
    }

    fn int4_builders(n: usize) -> Vec<Vector> {
        (0..n).map(|_| Vector::new(DataType::Int4)).collect()
    }

    fn ints(v: &Vector) -> Vec<i32> {
        match &v.data {
            Data::I32(x) => x.clone(),
            other => panic!("not int4: {other:?}"),
        }
    }

    /// Columns c then a (out of table order), through both paths.
    /// The columns a path produced, or `None` when it rejected the page.
    type Columns = Option<Vec<Vec<i32>>>;

    fn both_paths(pg: &[u8]) -> (Columns, Columns) {
        let d = desc();
        let types = [DataType::Int4, DataType::Int4];
        let fixed = fixed_layout(&d, &[2, 0], &types).expect("fixed prefix");
        assert!(fusable(&fixed));
        let mut fused = int4_builders(2);
        // A row already in the builders stays in front.
        for b in &mut fused {
            b.push(&crate::types::Value::Int4(-1));
        }
        let f =
            fused_all_normal(pg, d.len(), &fixed, &mut fused, Ahead::frame(pg.as_ptr())).map(|n| {
                assert_eq!(fused[0].len(), n + 1);
                fused.iter().map(ints).collect()
            });
        if f.is_none() {
            assert!(
                fused.iter().all(|b| ints(b) == vec![-1]),
                "rejected page left no rows"
            );
        }
        let mut general = int4_builders(2);
        for b in &mut general {
            b.push(&crate::types::Value::Int4(-1));
        }
        let mut starts = Vec::new();
        let g = all_normal_starts(pg, 3, data_needed(&fixed), &mut starts).then(|| {
            for &c in &fixed {
                push_fixed(&mut general[c.out], pg, &starts, c);
            }
            general.iter().map(ints).collect()
        });
        (f, g)
    }

    #[test]
    fn fused_matches_the_two_pass_path_and_skips_non_normal_pointers() {
        let rows: Vec<(i32, Option<i32>)> = (1..=40).map(|i| (i, Some(i * 3))).collect();
        let mut pg = page_of(&rows);
        page::set_dead(&mut pg, 5);
        page::set_unused(&mut pg, 17);
        let (f, g) = both_paths(&pg);
        let f = f.expect("a NULL-free page takes the fused path");
        assert_eq!(Some(&f), g.as_ref());
        let kept: Vec<i32> = (1..=40).filter(|i| *i != 5 && *i != 17).collect();
        let mut a = vec![-1];
        a.extend(&kept);
        let mut c = vec![-1];
        c.extend(kept.iter().map(|i| i * 3));
        assert_eq!(f, vec![c, a]);
    }

    /// Seeded random pages (row counts, values, NULLs, dead and unused
    /// pointers): the fused path takes every NULL-free page and gives the
    /// general two-pass path's columns, and rejects a page with a NULL.
    #[test]
    fn random_pages_fuse_as_the_general_path_reads_them() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..300 {
            let n = 1 + next(120) as usize;
            let with_nulls = next(4) == 0;
            let rows: Vec<(i32, Option<i32>)> = (0..n)
                .map(|_| {
                    let a = next(u32::MAX as u64) as u32 as i32;
                    let c = (!with_nulls || next(8) != 0).then(|| next(2001) as i32 - 1000);
                    (a, c)
                })
                .collect();
            let mut pg = page_of(&rows);
            for _ in 0..next(4) {
                let off = 1 + next(n as u64) as u16;
                if next(2) == 0 {
                    page::set_dead(&mut pg, off);
                } else {
                    page::set_unused(&mut pg, off);
                }
            }
            let has_null = rows.iter().any(|r| r.1.is_none());
            let (f, g) = both_paths(&pg);
            match f {
                Some(f) => assert_eq!(Some(f), g, "rows {rows:?}"),
                None => assert!(has_null, "a NULL-free page was rejected: {rows:?}"),
            }
        }
    }

    /// Line pointer bytes for tuples at `offs` (length 40, NORMAL).
    fn pointers(offs: &[u32]) -> Vec<u8> {
        offs.iter()
            .flat_map(|&o| (o | u32::from(page::LP_NORMAL) << 15 | 40 << 17).to_le_bytes())
            .collect()
    }

    #[test]
    fn evenly_spaced_pages_are_told_from_others() {
        assert!(evenly_spaced(&pointers(&[8152, 8112, 8072, 8032])));
        assert!(evenly_spaced(&pointers(&[8152])));
        assert!(!evenly_spaced(&pointers(&[])));
        // One row wider than the rest, anywhere between the first two and
        // the last, shifts the last offset.
        assert!(!evenly_spaced(&pointers(&[8152, 8112, 8064, 8024])));
        // Rows placed upwards (not how heapdb fills a page) and equal
        // offsets are not taken for a stride.
        assert!(!evenly_spaced(&pointers(&[1000, 1040, 1080])));
        assert!(!evenly_spaced(&pointers(&[1000, 1000])));
    }

    #[test]
    fn the_predicting_prefetch_reads_what_the_plain_loop_reads() {
        // Wide rows (61 to a page, as pgbench_accounts'), a next frame laid
        // out alike and one laid out otherwise: prefetching is invisible,
        // so all three give the same values.
        let d = desc();
        let expect = (d.len() as u64) << 16 | (NO_NULL_HOFF as u64) << 48;
        let wide: Vec<(i32, Option<i32>)> = (1..=61).map(|i| (i, Some(-i))).collect();
        let pg = page_of(&wide);
        let pg: &[u8; BLCKSZ] = pg[..].try_into().unwrap();
        let other = page_of(&wide[..7]);
        let run = |ahead: Ahead| {
            let mut out = vec![0i32; 61];
            let n = dense_loop::<1, 4, true>(
                pg,
                61,
                NO_NULL_HOFF + 20,
                expect,
                &[0],
                &[out.as_mut_ptr()],
                ahead,
            );
            (n, out)
        };
        let plain = run(Ahead::NONE);
        assert_eq!(plain.0, Some(61));
        assert_eq!(plain.1, (1..=61).collect::<Vec<_>>());
        assert_eq!(run(Ahead::frame(pg.as_ptr())), plain);
        assert_eq!(run(Ahead::frame(other.as_ptr())), plain);
        // A page of rows of varying width spreads the next frame instead,
        // and gives the same values with a frame ahead or without.
        let uneven = page_of_widths(&wide, |i| if i == 9 { 13 } else { 5 });
        let uneven: &[u8; BLCKSZ] = uneven[..].try_into().unwrap();
        let max = page::max_offset(uneven) as usize;
        assert!(!evenly_spaced(
            &uneven[page::PAGE_HEADER_SIZE..page::PAGE_HEADER_SIZE + 4 * max]
        ));
        let run = |ahead: Ahead| {
            let mut out = vec![0i32; max];
            let n = dense_loop::<1, 4, true>(
                uneven,
                max,
                NO_NULL_HOFF + 20,
                expect,
                &[0],
                &[out.as_mut_ptr()],
                ahead,
            );
            (n, out)
        };
        let plain = run(Ahead::NONE);
        assert_eq!(plain.0, Some(max));
        assert_eq!(plain.1, (1..=max as i32).collect::<Vec<_>>());
        assert_eq!(run(Ahead::frame(pg.as_ptr())), plain);
    }

    #[test]
    fn a_page_of_only_normal_pointers_takes_the_dense_loop() {
        let rows: Vec<(i32, Option<i32>)> = (1..=40).map(|i| (-i, Some(i << 20))).collect();
        let pg = page_of(&rows);
        let (f, g) = both_paths(&pg);
        let f = f.expect("fused");
        assert_eq!(Some(&f), g.as_ref());
        assert_eq!(f[1][1..], (1..=40).map(|i| -i).collect::<Vec<_>>());
        assert_eq!(f[0][40], 40 << 20);
        // The dense loop itself: every pointer NORMAL and in range.
        let pg: &[u8; BLCKSZ] = pg[..].try_into().unwrap();
        let d = desc();
        let expect = (d.len() as u64) << 16 | (NO_NULL_HOFF as u64) << 48;
        let mut out = vec![0i32; 40];
        let dense = |pg: &[u8; BLCKSZ], out: &mut Vec<i32>| {
            dense_loop::<1, 1, false>(
                pg,
                40,
                NO_NULL_HOFF + 20,
                expect,
                &[16],
                &[out.as_mut_ptr()],
                Ahead::NONE,
            )
        };
        assert_eq!(dense(pg, &mut out), Some(40));
        assert_eq!(out[..3], [1 << 20, 2 << 20, 3 << 20]);
        // One UNUSED pointer, or one tuple's header word off: not dense.
        let mut unused = *pg;
        page::set_unused(&mut unused, 7);
        assert_eq!(dense(&unused, &mut out), None);
        let mut hasnull = *pg;
        let off = (page::item_id(&hasnull, 9).to_raw() & 0x7fff) as usize;
        hasnull[off + tuple::T_INFOMASK] |= tuple::HEAP_HASNULL as u8;
        assert_eq!(dense(&hasnull, &mut out), None);
    }

    #[test]
    fn page_values_match_the_builders_path() {
        let rows: Vec<(i32, Option<i32>)> = (1..=40).map(|i| (i * 11, Some(-i))).collect();
        let mut pg = page_of(&rows);
        page::set_dead(&mut pg, 9);
        let d = desc();
        let fixed = fixed_layout(&d, &[2, 0], &[DataType::Int4, DataType::Int4]).expect("fixed");
        let mut cols: PageColumns = [[0; MAX_TUPLES]; FUSED_MAX];
        let n = fused_page_values(&pg, d.len(), &fixed, &mut cols, Ahead::NONE).expect("fused");
        let (f, _) = both_paths(&pg);
        let f = f.expect("fused");
        assert_eq!(n, 39);
        assert_eq!(cols[0][..n], f[0][1..]);
        assert_eq!(cols[1][..n], f[1][1..]);
        // A NULL anywhere rejects the page here too.
        let pg = page_of(&[(1, Some(2)), (3, None)]);
        assert!(fused_page_values(&pg, d.len(), &fixed, &mut cols, Ahead::NONE).is_none());
    }

    #[test]
    fn a_null_or_a_corrupt_pointer_rejects_the_page() {
        let (f, g) = both_paths(&page_of(&[(1, Some(2)), (3, None), (5, Some(6))]));
        assert!(f.is_none() && g.is_none());
        // A NORMAL pointer whose length is too short for the columns.
        let mut pg = page_of(&[(1, Some(2)), (3, Some(4))]);
        let id = page::item_id(&pg, 2);
        let raw = (id.to_raw() & 0x1ffff) | (20 << 17);
        page::set_item_id(&mut pg, 2, page::ItemId::from_raw(raw));
        assert!(both_paths(&pg).0.is_none());
        // One pointing past the page end.
        let mut pg = page_of(&[(1, Some(2))]);
        let raw = (page::item_id(&pg, 1).to_raw() & !0x7fff) | 8180;
        page::set_item_id(&mut pg, 1, page::ItemId::from_raw(raw));
        assert!(both_paths(&pg).0.is_none());
        // A tuple with a different number of attributes.
        let mut pg = page_of(&[(1, Some(2))]);
        let off = (page::item_id(&pg, 1).to_raw() & 0x7fff) as usize;
        pg[off + tuple::T_INFOMASK2] = 2;
        assert!(both_paths(&pg).0.is_none());
    }

    #[test]
    fn only_four_byte_columns_of_a_fixed_prefix_fuse() {
        let d = desc();
        let f = fixed_layout(&d, &[1], &[DataType::Int8]).expect("int8 is fixed");
        assert!(!fusable(&f));
        assert!(fixed_layout(&d, &[3], &[DataType::Text]).is_none());
        let f = fixed_layout(&d, &[0, 2, 0, 2, 0], &[DataType::Int4; 5]).expect("fixed");
        assert!(!fusable(&f), "more than FUSED_MAX columns");
    }
}
