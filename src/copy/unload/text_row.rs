//! COPY TO's fast row writer for the text format: a tuple without NULLs
//! whose output columns are integers and strings (text, varchar, char(n)),
//! in table order (all of them or some: the attributes in between, of any
//! type, are stepped over) — every row of the pgbench accounts — goes out
//! in one walk over its attributes straight into the output buffer's spare
//! capacity.
//!
//! Why it is shaped so (per row of the accounts, ~98 output bytes): the
//! general formatter pushes each piece into the `Vec` (a capacity check per
//! push), prints an integer into a scratch array and copies it, and looks
//! at a string twice (an escape check, then the copy). Here the buffer is
//! reserved once per row for the most the row can take (21 bytes per
//! output column for an integer and its delimiter, twice the strings'
//! bytes for escapes, the newline, and 16 bytes of slack for the wide
//! stores below); an integer is printed in place (below 100 from a table
//! of digit pairs, below 10^8 with all its digits computed at once in one
//! u64 and stored as 8 bytes, leading zeros shifted out); a string is
//! copied 16 bytes at a time while the same registers are checked for
//! bytes to escape (`\b \f \n \r \t \v`, `\\`, the delimiter), and only a
//! string that has one is written again, escaped, over its copy. The
//! output is byte for byte what `copy::text::write_field` and
//! `types::io::int_digits` give (unit tests below hold them together; the
//! files PostgreSQL wrote in tests/data/copy too).
//!
//! Reads never leave the attribute's bytes (a string shorter than 16 bytes
//! is copied byte by byte; a longer one's last 16 bytes are loaded from
//! its end), so a value at the very end of a page is safe; stores stay in
//! the reserved spare capacity.

use crate::access::heap::tuple::{self, TupleDesc};
use crate::err;
use crate::error::Result;

/// How one column's stored bytes become text in the fast path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Col {
    /// `int2`, 2 little-endian bytes.
    Int2,
    /// `int4`, 4 little-endian bytes.
    Int4,
    /// `int8`, 8 little-endian bytes.
    Int8,
    /// text, varchar, char(n): varlena, the stored UTF-8 is the output.
    Text,
    /// An attribute before the last output column that is not output: only
    /// stepped over (any type).
    Skip,
}

/// One attribute of the walk.
#[derive(Debug, Clone, Copy)]
struct Step {
    col: Col,
    /// Stored length, or `None` for a varlena.
    len: Option<usize>,
    align: usize,
    /// A delimiter goes before it (an output column after the first).
    delimited: bool,
}

/// The fast writer for one table's rows (see the module doc).
#[derive(Debug, Clone)]
pub(super) struct TextRow {
    /// The attributes up to the last output column, in table order.
    steps: Vec<Step>,
    /// The field delimiter.
    delimiter: u8,
    /// The reserve a row needs beyond twice its attribute bytes.
    fixed: usize,
}

impl TextRow {
    /// The writer for the output columns `cols` (table column index and
    /// kind, in ascending order of index) of a table stored as `desc`, with
    /// field delimiter `delimiter`. The caller checks the rest of the fast
    /// path's conditions: text format and integer digits needing no escape
    /// (`plain_ints`). `None` if a column's storage is not its kind's.
    pub(super) fn new(desc: &TupleDesc, cols: &[(usize, Col)], delimiter: u8) -> Option<TextRow> {
        debug_assert!(cols.windows(2).all(|w| w[0].0 < w[1].0), "ascending");
        let upto = cols.last().map_or(0, |c| c.0 + 1);
        let mut steps: Vec<Step> = desc.attrs()[..upto]
            .iter()
            .map(|a| Step {
                col: Col::Skip,
                len: usize::try_from(a.len).ok(),
                align: a.align as usize,
                delimited: false,
            })
            .collect();
        for (i, &(j, col)) in cols.iter().enumerate() {
            let stored = match col {
                Col::Int2 => Some(2),
                Col::Int4 => Some(4),
                Col::Int8 => Some(8),
                Col::Text => None,
                Col::Skip => steps[j].len,
            };
            if steps[j].len != stored {
                return None;
            }
            steps[j].col = col;
            steps[j].delimited = i > 0;
        }
        Some(TextRow {
            fixed: 21 * cols.len() + 1 + 16,
            steps,
            delimiter,
        })
    }

    /// Appends the row of tuple `t`, or returns false having appended
    /// nothing if it has a NULL or fewer attributes than the walk (the
    /// general formatter's case). The walk is [`tuple::deform`]'s, with its
    /// checks.
    #[inline]
    pub(super) fn row(&self, t: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        if tuple::infomask(t) & tuple::HEAP_HASNULL != 0 || tuple::natts(t) < self.steps.len() {
            return Ok(false);
        }
        let corrupt = || {
            err!(
                DataCorrupted,
                "heap tuple is corrupted: attribute data past its end"
            )
        };
        let data = t.get(tuple::hoff(t)..).ok_or_else(corrupt)?;
        out.reserve(self.fixed + 2 * data.len());
        let start = out.len();
        // SAFETY: `dst` points at `out`'s spare capacity, which holds at
        // least `fixed + 2 * data.len()` bytes: every store below stays
        // within the bound the module doc lists. `set_len` comes only after
        // every byte up to it was written.
        unsafe {
            let dst = out.as_mut_ptr().add(start);
            let mut w = 0usize;
            let mut off = 0usize;
            for s in &self.steps {
                if s.delimited {
                    *dst.add(w) = self.delimiter;
                    w += 1;
                }
                let Some(len) = s.len else {
                    let b = varlena_at(data, &mut off, s.align).ok_or_else(corrupt)?;
                    if s.col == Col::Text {
                        w += put_text(b, self.delimiter, dst.add(w));
                    }
                    continue;
                };
                let at = (off + s.align - 1) & !(s.align - 1);
                off = at + len;
                let b = data.get(at..off).ok_or_else(corrupt)?;
                // `new` checked that each kind has its stored length.
                w += match s.col {
                    Col::Int2 => put_i32(i32::from(i16::from_le_bytes([b[0], b[1]])), dst.add(w)),
                    Col::Int4 => put_i32(
                        i32::from_le_bytes(b.try_into().expect("4 bytes")),
                        dst.add(w),
                    ),
                    Col::Int8 => put_i64(
                        i64::from_le_bytes(b.try_into().expect("8 bytes")),
                        dst.add(w),
                    ),
                    Col::Text | Col::Skip => 0,
                };
            }
            *dst.add(w) = b'\n';
            out.set_len(start + w + 1);
        }
        Ok(true)
    }
}

/// The bytes of the (uncompressed, inline) varlena at `*off` of a tuple's
/// data `data`, past any alignment padding before a 4-byte header (a zero
/// byte: a short header is never zero), with `*off` moved past it; `None`
/// when the header or the bytes it claims do not fit.
#[inline]
pub(super) fn varlena_at<'d>(data: &'d [u8], off: &mut usize, align: usize) -> Option<&'d [u8]> {
    let mut at = *off;
    if *data.get(at)? == 0 {
        at = (at + align - 1) & !(align - 1);
    }
    let first = *data.get(at)?;
    let (hdr, total) = if first & 1 == 1 {
        (1, (first >> 1) as usize)
    } else {
        let h = data.get(at..at + 4)?;
        (
            4,
            (u32::from_le_bytes(h.try_into().expect("4 bytes")) >> 2) as usize,
        )
    };
    if total < hdr {
        return None;
    }
    let b = data.get(at + hdr..at + total)?;
    *off = at + total;
    Some(b)
}

/// `00` to `99`, for printing integers two digits at a time.
pub(super) const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The 8 decimal digits of `n` (below 10^8, with leading zeros) as values
/// 0-9, one per byte, the most significant in the lowest byte: three
/// rounds of "divide each lane by a power of ten" in one u64 (SWAR), each
/// division a multiply and shift exact for the lane's range, so a number
/// prints with no loop and no division instruction.
#[inline]
fn digits8(n: u32) -> u64 {
    let n = u64::from(n);
    // [n / 10^4, n % 10^4] in 32-bit lanes.
    let hi = n / 10_000;
    let v = hi | ((n - hi * 10_000) << 32);
    // Each lane x < 10^4: [x / 100, x % 100] in 16-bit lanes
    // (10486 / 2^20 ~ 1/100, exact below 10^4).
    let q = ((v * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let v = q | ((v - q * 100) << 16);
    // Each lane x < 100: [x / 10, x % 10] in bytes (103 / 2^10 ~ 1/10).
    let q = ((v * 103) >> 10) & 0x000f_000f_000f_000f;
    q | ((v - q * 10) << 8)
}

/// `'0'` in every byte.
const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// Writes `n` (below 10^8) at `dst` without leading zeros; returns the
/// digits written. Stores 8 bytes.
///
/// # Safety
/// 8 bytes at `dst` must be writable.
#[inline(always)]
unsafe fn put_below_1e8(n: u32, dst: *mut u8) -> usize {
    let d = digits8(n);
    // Leading zero digits are the low zero bytes; 0 keeps one.
    let z = ((d.trailing_zeros() / 8) as usize).min(7);
    let ascii = (d + ASCII_ZEROS) >> (8 * z);
    std::ptr::write_unaligned(dst as *mut u64, ascii.to_le());
    8 - z
}

/// Writes `n` in decimal at `dst`; returns the bytes written (at most 20,
/// stores at most 20).
///
/// # Safety
/// 20 bytes at `dst` must be writable.
#[inline(always)]
unsafe fn put_u64(n: u64, dst: *mut u8) -> usize {
    if n < 100 {
        // One or two digits (a branch, a key, a balance of 0): the pair's
        // last `d` bytes, from the table (2 bytes read from `2n + 2 - d`,
        // inside it for every n < 100).
        let d = 1 + usize::from(n >= 10);
        let src = DIGIT_PAIRS.as_ptr().add(2 * n as usize + 2 - d);
        std::ptr::copy_nonoverlapping(src, dst, 2);
        return d;
    }
    if n < 100_000_000 {
        return put_below_1e8(n as u32, dst);
    }
    put_wide(n, dst)
}

/// [`put_u64`] of 10^8 and above (kept out of line: the common values are
/// smaller, and the row loop stays short).
///
/// # Safety
/// 20 bytes at `dst` must be writable.
#[inline(never)]
unsafe fn put_wide(n: u64, dst: *mut u8) -> usize {
    const E8: u64 = 100_000_000;
    if n < E8 * E8 {
        let hi = n / E8;
        let d = put_below_1e8(hi as u32, dst);
        let lo = digits8((n - hi * E8) as u32) + ASCII_ZEROS;
        std::ptr::write_unaligned(dst.add(d) as *mut u64, lo.to_le());
        return d + 8;
    }
    // 17 to 20 digits: two at a time from the last.
    let d = if n >= 10_000_000_000_000_000_000 {
        20
    } else {
        17 + usize::from(n >= 100_000_000_000_000_000) + usize::from(n >= 1_000_000_000_000_000_000)
    };
    let (mut n, mut end) = (n, dst.add(d));
    while n >= 100 {
        let p = (n % 100) as usize * 2;
        n /= 100;
        end = end.sub(2);
        std::ptr::copy_nonoverlapping(DIGIT_PAIRS.as_ptr().add(p), end, 2);
    }
    if n >= 10 {
        let p = n as usize * 2;
        std::ptr::copy_nonoverlapping(DIGIT_PAIRS.as_ptr().add(p), end.sub(2), 2);
    } else {
        *end.sub(1) = b'0' + n as u8;
    }
    d
}

/// Writes `x` in decimal at `dst`; returns the bytes written (at most 20).
///
/// # Safety
/// 21 bytes at `dst` must be writable.
#[inline]
unsafe fn put_i64(x: i64, dst: *mut u8) -> usize {
    let neg = usize::from(x < 0);
    *dst = b'-';
    neg + put_u64(x.unsigned_abs(), dst.add(neg))
}

/// [`put_i64`] for 32-bit values (at most 11 bytes written, 17 stored).
///
/// # Safety
/// 17 bytes at `dst` must be writable.
#[inline]
unsafe fn put_i32(x: i32, dst: *mut u8) -> usize {
    let neg = usize::from(x < 0);
    *dst = b'-';
    neg + put_u64(u64::from(x.unsigned_abs()), dst.add(neg))
}

/// Whether `c` is escaped in text format (as `copy::text`'s check).
#[inline]
fn special(c: u8, delimiter: u8) -> bool {
    (8..=13).contains(&c) | (c == b'\\') | (c == delimiter)
}

/// Writes `v` at `dst` as text format writes a field; returns the bytes
/// written (at most `2 * v.len()`, and up to 16 bytes past `v.len()` may be
/// written over when `v` needs escapes).
///
/// # Safety
/// `max(2 * v.len(), v.len() + 16)` bytes at `dst` must be writable.
#[inline]
unsafe fn put_text(v: &[u8], delimiter: u8, dst: *mut u8) -> usize {
    let n = v.len();
    if !copy_checking(v, delimiter, dst) {
        return n;
    }
    // Written again over the copy, escaped (PostgreSQL's
    // CopyAttributeOutText).
    let mut w = 0;
    for &c in v {
        let Some(esc) = crate::copy::text::escape_letter(c, delimiter) else {
            *dst.add(w) = c;
            w += 1;
            continue;
        };
        *dst.add(w) = b'\\';
        *dst.add(w + 1) = esc;
        w += 2;
    }
    w
}

/// Copies `v` to `dst`; returns whether some byte of it needs an escape.
///
/// # Safety
/// `v.len()` bytes at `dst` must be writable.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn copy_checking(v: &[u8], delimiter: u8, dst: *mut u8) -> bool {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_setzero_si128, _mm_storeu_si128, _mm_sub_epi8,
    };
    let n = v.len();
    if n < 16 {
        let mut hit = false;
        for (i, &c) in v.iter().enumerate() {
            *dst.add(i) = c;
            hit |= special(c, delimiter);
        }
        return hit;
    }
    // SSE2 is part of x86-64. Loads read `v[i..i + 16]` with `i + 16 <= n`
    // and the last 16 bytes of `v`; stores write the same ranges of `dst`.
    let (eight, five) = (_mm_set1_epi8(8), _mm_set1_epi8(5));
    let (bs, dl) = (_mm_set1_epi8(b'\\' as i8), _mm_set1_epi8(delimiter as i8));
    let check = |x: __m128i| {
        // c - 8 <= 5 (unsigned): c is 8 ..= 13.
        let d = _mm_sub_epi8(x, eight);
        _mm_or_si128(
            _mm_cmpeq_epi8(_mm_min_epu8(d, five), d),
            _mm_or_si128(_mm_cmpeq_epi8(x, bs), _mm_cmpeq_epi8(x, dl)),
        )
    };
    let mut any = _mm_setzero_si128();
    let mut i = 0;
    while i + 16 <= n {
        let x = _mm_loadu_si128(v.as_ptr().add(i) as *const __m128i);
        _mm_storeu_si128(dst.add(i) as *mut __m128i, x);
        any = _mm_or_si128(any, check(x));
        i += 16;
    }
    if i < n {
        let x = _mm_loadu_si128(v.as_ptr().add(n - 16) as *const __m128i);
        _mm_storeu_si128(dst.add(n - 16) as *mut __m128i, x);
        any = _mm_or_si128(any, check(x));
    }
    _mm_movemask_epi8(any) != 0
}

/// Portable [`copy_checking`].
///
/// # Safety
/// `v.len()` bytes at `dst` must be writable.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
unsafe fn copy_checking(v: &[u8], delimiter: u8, dst: *mut u8) -> bool {
    std::ptr::copy_nonoverlapping(v.as_ptr(), dst, v.len());
    v.iter().fold(false, |acc, &c| acc | special(c, delimiter))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::text::write_field;
    use crate::types::io::int_digits;

    #[test]
    fn integers_print_as_int_digits_does() {
        let edges = [
            0i64,
            1,
            -1,
            9,
            10,
            99,
            100,
            101,
            -100,
            12345,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
            i64::MAX,
            i64::MIN,
            1 << 40,
        ];
        let powers = (0..19).flat_map(|e| {
            let p = 10i64.pow(e);
            [p - 1, p, p + 1, -p, 1 - p]
        });
        // Random values of every magnitude.
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        let random = std::iter::repeat_with(move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> (rng % 64)) as i64 * if rng & (1 << 62) == 0 { 1 } else { -1 }
        });
        for x in edges
            .into_iter()
            .chain(powers)
            .chain((-2000..2000).map(|i| i * 7919))
            .chain(random.take(200_000))
        {
            let mut scratch = [0; 20];
            let want = int_digits(x, &mut scratch).to_string();
            let mut buf = [0u8; 21];
            // SAFETY: 21 bytes are writable.
            let n = unsafe { put_i64(x, buf.as_mut_ptr()) };
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), want);
            if let Ok(y) = i32::try_from(x) {
                let mut buf = [0u8; 17];
                // SAFETY: 17 bytes are writable.
                let n = unsafe { put_i32(y, buf.as_mut_ptr()) };
                assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), want);
            }
        }
    }

    #[test]
    fn wide_unsigned_values_print_as_to_string_does() {
        let mut xs: Vec<u64> = (8..20)
            .flat_map(|e| {
                let p = 10u64.pow(e);
                [p - 1, p, p + 1, p * 3 + 7]
            })
            .collect();
        xs.extend([u64::MAX, u64::MAX - 1, 1 << 63, (1 << 53) + 1]);
        for x in xs {
            let mut buf = [0u8; 21];
            // SAFETY: 21 bytes are writable.
            let n = unsafe { put_u64(x, buf.as_mut_ptr()) };
            assert_eq!(std::str::from_utf8(&buf[..n]).unwrap(), x.to_string());
        }
    }

    #[test]
    fn strings_are_written_as_the_text_format_writes_them() {
        for v in crate::copy::text::sample_fields(0x2545_f491, 100, 50_000) {
            let len = v.len();
            for d in [b'\t', b',', b'|', 0x80] {
                let mut want = Vec::new();
                write_field(&v, d, &mut want);
                let mut got = vec![0xaa; 2 * len + 16];
                // SAFETY: 2 * len + 16 bytes are writable.
                let n = unsafe { put_text(&v, d, got.as_mut_ptr()) };
                assert_eq!(&got[..n], &want[..], "{v:?} delimiter {d}");
            }
        }
    }
}
