//! COPY FROM's fast path: a text-format record straight to a heap tuple in
//! one pass over its bytes, with no field list, no `Value` per field and no
//! intermediate buffer.
//!
//! Each column has a plan made once per COPY ([`FastForm::new`]): integers
//! are parsed from their digits into their slot; text, varchar(n) and
//! char(n) are checked (ASCII, no NUL, within the length) and copied (char
//! padded with blanks) behind their varlena header; any other type is cut
//! out and read by its input function. The tuple is written as
//! [`tuple::form_tuple_append`] would write it for the same values: a
//! header without a null bitmap, the attributes at their alignment, zero
//! padding, `HASVARWIDTH` when the table has a varlena column.
//!
//! The fast path only ever says "yes, these bytes" or "not me": whatever it
//! does not handle exactly as the general path would — a backslash (escapes,
//! `\N`), a field equal to the NULL string, a sign or space around a
//! number, a number too long, non-ASCII bytes in a length-limited string, a
//! value too long, a wrong number of fields, a value its type rejects, a
//! row too big — makes [`FastForm::form`] return `None` with the batch
//! unchanged, and the record goes through the general path, which accepts
//! it or reports PostgreSQL's error. So the fast path cannot change what
//! is loaded or which error is raised; tests compare the two tuple for
//! tuple (`tests` below).
//!
//! It applies when the format is text and the COPY names every column of
//! the table in order (no defaults to fill in) — `COPY t FROM ...`.

use super::*;
use crate::access::heap::tuple::TupleDesc;
use crate::storage::page::{maxalign, MAX_ITEM_SIZE};

/// How one column's field becomes its stored bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `int2`, `int4`, `int8`: `-?[0-9]{1,18}` within the type's range.
    Int(u8),
    /// `text`, `varchar(n)`, `char(n)`: copied; `limit` bytes at most
    /// (ASCII then: bytes are characters); char(n) is padded to `pad`.
    Str {
        /// The length limit (varchar(n), char(n)).
        limit: Option<u32>,
        /// char(n): the stored length.
        pad: Option<u32>,
    },
    /// Any other type: its input function.
    Other,
}

/// One column of the plan.
#[derive(Debug, Clone)]
struct Col {
    kind: Kind,
    /// Storage length (-1: varlena) and alignment.
    len: i16,
    align: usize,
    /// The column's type (for [`Kind::Other`]).
    ty: DataType,
}

/// The fast path's plan for one COPY (see the module doc).
pub(super) struct FastForm {
    cols: Vec<Col>,
    delimiter: u8,
    null: Vec<u8>,
    /// Header length (no null bitmap), rounded to 8.
    hoff: usize,
    /// `infomask` of every tuple formed.
    infomask: u16,
    /// The transaction's start time, for `now`-relative input.
    now: i64,
    /// One value's stored bytes ([`Kind::Other`]).
    scratch: Vec<u8>,
}

/// Why a record left the fast path (the general path takes it).
struct NotMine;

type Step<T> = std::result::Result<T, NotMine>;

impl FastForm {
    /// The plan for loading `targets` of `table`, or `None` when the fast
    /// path does not apply (not text format, not every column in order, a
    /// domain column or a CHECK constraint).
    pub(super) fn new(
        table: &crate::catalog::TableDef,
        opts: &CopyOptions,
        targets: &[usize],
        desc: &TupleDesc,
        now: i64,
    ) -> Option<FastForm> {
        if opts.format != Format::Text
            || table.columns.is_empty()
            || targets.len() != table.columns.len()
            || targets.iter().enumerate().any(|(k, &t)| k != t)
            || desc.len() != table.columns.len()
            || table.columns.iter().any(|c| c.domain.is_some())
            || !table.checks.is_empty()
        {
            return None;
        }
        let mut cols = Vec::with_capacity(table.columns.len());
        let mut has_var = false;
        for (c, a) in table.columns.iter().zip(desc.attrs()) {
            let kind = match c.ty {
                DataType::Int2 => Kind::Int(2),
                DataType::Int4 => Kind::Int(4),
                DataType::Int8 => Kind::Int(8),
                DataType::Text | DataType::Varchar(None) => Kind::Str {
                    limit: None,
                    pad: None,
                },
                DataType::Varchar(Some(n)) => Kind::Str {
                    limit: Some(n),
                    pad: None,
                },
                DataType::Char(n) => Kind::Str {
                    limit: Some(n),
                    pad: Some(n),
                },
                _ => Kind::Other,
            };
            if matches!(kind, Kind::Int(l) if a.len != i16::from(l)) {
                return None;
            }
            has_var |= a.len < 0;
            cols.push(Col {
                kind,
                len: a.len,
                align: a.align as usize,
                ty: c.ty,
            });
        }
        let mut infomask = tuple::HEAP_XMAX_INVALID;
        if has_var {
            infomask |= tuple::HEAP_HASVARWIDTH;
        }
        Some(FastForm {
            cols,
            delimiter: opts.delimiter,
            null: opts.null.as_bytes().to_vec(),
            hoff: maxalign(tuple::HEADER_SIZE),
            infomask,
            now,
            scratch: Vec::new(),
        })
    }

    /// Appends the tuple of record `rec` to `out` and returns its length;
    /// `None` (and `out` as it was) when the record needs the general path.
    #[inline]
    pub(super) fn form(&mut self, rec: &[u8], out: &mut Vec<u8>) -> Option<usize> {
        let base = out.len();
        match self.form_inner(rec, out, base) {
            Ok(len) => Some(len),
            Err(NotMine) => {
                out.truncate(base);
                None
            }
        }
    }

    fn form_inner(&mut self, rec: &[u8], out: &mut Vec<u8>, base: usize) -> Step<usize> {
        // The tuple is at most the header, the record's bytes, and per
        // column a varlena header plus alignment: one reservation, so the
        // pushes below never reallocate.
        out.reserve(self.hoff + rec.len() + self.cols.len() * 16 + self.pad_total());
        // The header, zero but for what is set at the end.
        out.extend_from_slice(&[0u8; 24][..self.hoff]);
        let delim = self.delimiter;
        let n = self.cols.len();
        let mut p = 0usize;
        for (i, col) in self.cols.iter().enumerate() {
            let last = i + 1 == n;
            match col.kind {
                Kind::Int(width) => {
                    let (v, end) = parse_int(rec, p).ok_or(NotMine)?;
                    field_ends(rec, end, last, delim)?;
                    if rec[p..end] == self.null[..] {
                        return Err(NotMine);
                    }
                    pad_to(out, base, col.align);
                    match width {
                        2 => out.extend_from_slice(
                            &i16::try_from(v).map_err(|_| NotMine)?.to_le_bytes(),
                        ),
                        4 => out.extend_from_slice(
                            &i32::try_from(v).map_err(|_| NotMine)?.to_le_bytes(),
                        ),
                        _ => out.extend_from_slice(&v.to_le_bytes()),
                    }
                    p = end + 1;
                }
                Kind::Str { limit, pad } => {
                    let rest = &rec[p..];
                    let (hit, ascii) = scan_str(rest, delim);
                    let end = match hit {
                        None if last => rec.len(),
                        Some(i) if !last && rest[i] == delim => p + i,
                        _ => return Err(NotMine),
                    };
                    let field = &rec[p..end];
                    if field == &self.null[..] {
                        return Err(NotMine);
                    }
                    if !ascii {
                        // Beyond ASCII, characters are not bytes: only an
                        // unlimited string is taken here, once valid.
                        if limit.is_some()
                            || std::str::from_utf8(field).is_err()
                            || memchr::memchr(0, field).is_some()
                        {
                            return Err(NotMine);
                        }
                    }
                    if limit.is_some_and(|l| field.len() > l as usize) {
                        return Err(NotMine);
                    }
                    let stored = pad.map_or(field.len(), |n| n as usize);
                    varlena_header(out, base, col.align, stored);
                    out.extend_from_slice(field);
                    if stored > field.len() {
                        out.resize(out.len() + stored - field.len(), b' ');
                    }
                    p = end + 1;
                }
                Kind::Other => {
                    let end = field_end(rec, p, last, delim)?;
                    let field = &rec[p..end];
                    if field == &self.null[..] || memchr::memchr(0, field).is_some() {
                        return Err(NotMine);
                    }
                    let text = std::str::from_utf8(field).map_err(|_| NotMine)?;
                    let v = parse_value_at(text, &col.ty, self.now).map_err(|_| NotMine)?;
                    self.scratch.clear();
                    v.encode(&mut self.scratch);
                    if col.len >= 0 {
                        if self.scratch.len() != col.len as usize {
                            return Err(NotMine);
                        }
                        pad_to(out, base, col.align);
                    } else {
                        varlena_header(out, base, col.align, self.scratch.len());
                    }
                    out.extend_from_slice(&self.scratch);
                    p = end + 1;
                }
            }
        }
        let len = out.len() - base;
        if len > MAX_ITEM_SIZE {
            return Err(NotMine);
        }
        let t = &mut out[base..];
        tuple::set_infomask(t, self.infomask);
        tuple::set_infomask2(t, n as u16);
        t[tuple::T_HOFF] = self.hoff as u8;
        Ok(len)
    }

    /// The most alignment padding a tuple can need.
    fn pad_total(&self) -> usize {
        self.cols.iter().map(|c| c.align + 4).sum()
    }
}

/// Pads `out` with zeros so the tuple that starts at `base` is aligned to
/// `align` at its end.
#[inline]
fn pad_to(out: &mut Vec<u8>, base: usize, align: usize) {
    let off = out.len() - base;
    let aligned = (off + align - 1) & !(align - 1);
    out.resize(base + aligned, 0);
}

/// Writes the varlena header for `len` payload bytes: one byte below 127
/// (unaligned), else aligned and four bytes, as `form_tuple` does.
#[inline]
fn varlena_header(out: &mut Vec<u8>, base: usize, align: usize, len: usize) {
    if len < 127 {
        out.push((((len + 1) << 1) | 1) as u8);
    } else {
        pad_to(out, base, align);
        out.extend_from_slice(&(((len + 4) << 2) as u32).to_le_bytes());
    }
}

/// Whether every byte of `s` is ASCII and not NUL (then it is valid UTF-8
/// and its characters are its bytes). No early exit: the loop vectorizes.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
fn plain_ascii(s: &[u8]) -> bool {
    !s.iter()
        .fold(false, |acc, &b| acc | (b.wrapping_sub(1) >= 0x7f))
}

/// One pass over a string field: where the first delimiter or backslash
/// of `rest` is, and whether every byte before it (all of `rest` when there
/// is none) is ASCII and not NUL. SSE2 (every x86-64 has it), 16 bytes at a
/// time: an 84-byte char(84) field takes six steps, where a `memchr2` and
/// a separate ASCII check took two passes and two call overheads.
#[cfg(target_arch = "x86_64")]
#[inline]
fn scan_str(rest: &[u8], delim: u8) -> (Option<usize>, bool) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let n = rest.len();
    let mut i = 0;
    let mut bad = false;
    // SAFETY: SSE2 is part of x86-64; every load reads 16 bytes at
    // `rest[i..i + 16]`, which the loop condition keeps inside `rest`.
    unsafe {
        let vd = _mm_set1_epi8(delim as i8);
        let vb = _mm_set1_epi8(b'\\' as i8);
        let one = _mm_set1_epi8(1);
        while i + 16 <= n {
            let v = _mm_loadu_si128(rest.as_ptr().add(i) as *const __m128i);
            let hit = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, vd), _mm_cmpeq_epi8(v, vb)))
                as u32;
            // As signed bytes, NUL and every non-ASCII byte are below 1.
            let odd = _mm_movemask_epi8(_mm_cmplt_epi8(v, one)) as u32;
            if hit != 0 {
                let k = hit.trailing_zeros();
                return (Some(i + k as usize), !bad && odd & ((1u32 << k) - 1) == 0);
            }
            bad |= odd != 0;
            i += 16;
        }
    }
    for (j, &b) in rest[i..].iter().enumerate() {
        if b == delim || b == b'\\' {
            return (Some(i + j), !bad);
        }
        bad |= b.wrapping_sub(1) >= 0x7f;
    }
    (None, !bad)
}

/// [`scan_str`] without SSE2.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
fn scan_str_portable(rest: &[u8], delim: u8) -> (Option<usize>, bool) {
    let hit = memchr::memchr2(delim, b'\\', rest);
    (hit, plain_ascii(&rest[..hit.unwrap_or(rest.len())]))
}

#[cfg(not(target_arch = "x86_64"))]
use scan_str_portable as scan_str;

/// `-?[0-9]{1,18}` at `p`: the value and the position after it.
#[inline]
fn parse_int(rec: &[u8], p: usize) -> Option<(i64, usize)> {
    let mut i = p;
    let neg = rec.get(i) == Some(&b'-');
    i += usize::from(neg);
    let start = i;
    let mut v: i64 = 0;
    while let Some(&c) = rec.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v * 10 + i64::from(d);
        i += 1;
    }
    let digits = i - start;
    if digits == 0 || digits > 18 {
        return None;
    }
    Some((if neg { -v } else { v }, i))
}

/// Checks that a field ending at `end` is followed by the delimiter (or by
/// the end of the record, for the last one).
#[inline]
fn field_ends(rec: &[u8], end: usize, last: bool, delim: u8) -> Step<()> {
    let ok = if last {
        end == rec.len()
    } else {
        rec.get(end) == Some(&delim)
    };
    if ok {
        Ok(())
    } else {
        Err(NotMine)
    }
}

/// Where the field starting at `p` ends: the next delimiter (the end of
/// the record for the last field, which must hold no delimiter). A
/// backslash on the way leaves the fast path.
#[inline]
fn field_end(rec: &[u8], p: usize, last: bool, delim: u8) -> Step<usize> {
    let rest = &rec[p.min(rec.len())..];
    if p > rec.len() {
        return Err(NotMine);
    }
    match memchr::memchr2(delim, b'\\', rest) {
        None if last => Ok(rec.len()),
        Some(i) if !last && rest[i] == delim => Ok(p + i),
        _ => Err(NotMine),
    }
}

#[cfg(test)]
mod tests;
