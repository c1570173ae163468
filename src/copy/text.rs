//! PostgreSQL's text format: fields separated by the delimiter (tab by
//! default), `\N` for NULL, backslash escapes (`\b \f \n \r \t \v \\`,
//! octal `\ooo`, hex `\xhh`, any other escaped byte stands for itself).
//! NULL is recognised on the raw field, before de-escaping.

use super::{CopyOptions, Field};

/// Whether [`split_plain`] may split `line`: text format with no
/// backslash in it (so no escapes, and no `\N`).
pub fn is_plain(line: &[u8]) -> bool {
    memchr::memchr(b'\\', line).is_none()
}

/// Splits a line without backslashes ([`is_plain`]): each field is a range
/// of the line itself, nothing is copied. Gives what [`split`] gives (with
/// the line as its buffer): the null string is compared with the raw field.
pub fn split_plain(line: &[u8], opts: &CopyOptions, fields: &mut Vec<Field>) {
    fields.clear();
    let null = opts.null.as_bytes();
    let mut push = |s: usize, e: usize| {
        fields.push(if &line[s..e] == null {
            None
        } else {
            Some((s, e))
        })
    };
    let mut start = 0;
    for i in memchr::memchr_iter(opts.delimiter, line) {
        push(start, i);
        start = i + 1;
    }
    push(start, line.len());
}

/// Splits `line` into fields: their de-escaped bytes go to `buf` (cleared
/// first), their ranges (or NULL) to `fields` (cleared first).
pub fn split(line: &[u8], opts: &CopyOptions, buf: &mut Vec<u8>, fields: &mut Vec<Field>) {
    buf.clear();
    fields.clear();
    let null = opts.null.as_bytes();
    let mut i = 0;
    loop {
        let raw_start = i;
        let start = buf.len();
        while i < line.len() {
            let c = line[i];
            if c == opts.delimiter {
                break;
            }
            if c != b'\\' || i + 1 >= line.len() {
                buf.push(c);
                i += 1;
                continue;
            }
            let e = line[i + 1];
            i += 2;
            match e {
                b'0'..=b'7' => {
                    let mut v = u32::from(e - b'0');
                    let mut k = 0;
                    while k < 2 && i < line.len() && (b'0'..=b'7').contains(&line[i]) {
                        v = v * 8 + u32::from(line[i] - b'0');
                        i += 1;
                        k += 1;
                    }
                    buf.push((v & 0xff) as u8);
                }
                b'x' if i < line.len() && line[i].is_ascii_hexdigit() => {
                    let mut v = hex(line[i]);
                    i += 1;
                    if i < line.len() && line[i].is_ascii_hexdigit() {
                        v = v * 16 + hex(line[i]);
                        i += 1;
                    }
                    buf.push(v);
                }
                b'b' => buf.push(8),
                b'f' => buf.push(12),
                b'n' => buf.push(b'\n'),
                b'r' => buf.push(b'\r'),
                b't' => buf.push(b'\t'),
                b'v' => buf.push(11),
                other => buf.push(other),
            }
        }
        if &line[raw_start..i] == null {
            buf.truncate(start);
            fields.push(None);
        } else {
            fields.push(Some((start, buf.len())));
        }
        if i >= line.len() {
            return;
        }
        i += 1; // the delimiter
    }
}

fn hex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

/// Whether `c` is escaped in text format: a control character among
/// backspace .. carriage return, a backslash or the delimiter.
#[inline]
fn special(c: u8, delimiter: u8) -> bool {
    (8..=13).contains(&c) | (c == b'\\') | (c == delimiter)
}

/// Whether some byte of `value` needs an escape ([`special`]), looked at
/// without branching per byte.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline]
fn needs_escape_portable(value: &[u8], delimiter: u8) -> bool {
    value
        .iter()
        .fold(false, |acc, &c| acc | special(c, delimiter))
}

/// [`needs_escape_portable`] 16 bytes at a time with SSE2 (part of every
/// x86-64): a char(84) value is five steps and a few bytes.
#[cfg(target_arch = "x86_64")]
#[inline]
fn needs_escape(value: &[u8], delimiter: u8) -> bool {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_sub_epi8,
    };
    let n = value.len();
    let mut i = 0;
    // SAFETY: SSE2 is part of x86-64; each load reads `value[i..i + 16]`,
    // inside `value` by the loop condition.
    unsafe {
        let (eight, five) = (_mm_set1_epi8(8), _mm_set1_epi8(5));
        let (bs, dl) = (_mm_set1_epi8(b'\\' as i8), _mm_set1_epi8(delimiter as i8));
        let mut any = _mm_set1_epi8(0);
        while i + 16 <= n {
            let v = _mm_loadu_si128(value.as_ptr().add(i) as *const __m128i);
            // c - 8 <= 5 (unsigned): c is 8 ..= 13.
            let x = _mm_sub_epi8(v, eight);
            let ctl = _mm_cmpeq_epi8(_mm_min_epu8(x, five), x);
            let hit = _mm_or_si128(
                ctl,
                _mm_or_si128(_mm_cmpeq_epi8(v, bs), _mm_cmpeq_epi8(v, dl)),
            );
            any = _mm_or_si128(any, hit);
            i += 16;
        }
        if _mm_movemask_epi8(any) != 0 {
            return true;
        }
    }
    value[i..].iter().any(|&c| special(c, delimiter))
}

#[cfg(not(target_arch = "x86_64"))]
use needs_escape_portable as needs_escape;

/// The letter after the backslash that writes byte `c` in text format
/// (PostgreSQL's CopyAttributeOutText), or `None` when `c` goes out as is.
#[inline]
pub fn escape_letter(c: u8, delimiter: u8) -> Option<u8> {
    Some(match c {
        8 => b'b',
        12 => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        11 => b'v',
        b'\\' => b'\\',
        _ if c == delimiter => c,
        _ => return None,
    })
}

/// Appends `value` escaped as PostgreSQL's `CopyAttributeOutText` does.
pub fn write_field(value: &[u8], delimiter: u8, out: &mut Vec<u8>) {
    // Most values need no escape: look at every byte without branching,
    // then copy the value whole.
    if !needs_escape(value, delimiter) {
        out.extend_from_slice(value);
        return;
    }
    let mut start = 0;
    for (i, &c) in value.iter().enumerate() {
        let Some(esc) = escape_letter(c, delimiter) else {
            continue;
        };
        out.extend_from_slice(&value[start..i]);
        out.push(b'\\');
        out.push(esc);
        start = i + 1;
    }
    out.extend_from_slice(&value[start..]);
}

/// `count` pseudo-random field values (from `seed`) of up to `max_len`
/// bytes: two in three mostly printable ASCII with a rare byte of any value,
/// the rest any bytes. For the escape tests of both text writers.
#[cfg(test)]
pub(crate) fn sample_fields(seed: u64, max_len: u64, count: usize) -> Vec<Vec<u8>> {
    let mut rng = seed;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    (0..count)
        .map(|_| {
            let len = (next() % max_len) as usize;
            let plain = next() % 3 != 0;
            (0..len)
                .map(|_| {
                    if plain && next() % 64 != 0 {
                        b' ' + (next() % 90) as u8
                    } else {
                        (next() % 256) as u8
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_escape_check_agrees_with_the_portable_one() {
        for v in sample_fields(0x9e37_79b9, 60, 50_000) {
            for d in [b'\t', b',', b'|', 0x80] {
                assert_eq!(
                    needs_escape(&v, d),
                    needs_escape_portable(&v, d),
                    "{v:?} {d}"
                );
            }
        }
    }
}
