//! `overlay(s placing t from n [for m])` for `text` and `bytea`, also
//! callable as `overlay(s, t, n [, m])`.
//!
//! As PostgreSQL's `textoverlay` / `byteaoverlay`: the result is the first
//! `n - 1` characters (bytes) of `s`, then `t`, then `s` from position
//! `n + m` on. `m` defaults to the length of `t` and may be negative (the
//! tail then starts before `n`, at position 1 at the earliest). `n` must be
//! at least 1 (`negative substring length not allowed`, 22011) and `n + m`
//! must fit in an `integer` (`integer out of range`, 22003).

use crate::err;
use crate::error::Result;

/// The positions (0-based, clamped to `len`) where the head of `s` ends
/// and its tail starts, for a start `from` and a replaced length `count`.
fn cut_points(len: usize, from: i64, count: i64) -> Result<(usize, usize)> {
    if from <= 0 {
        return Err(err!(
            SubstringError,
            "negative substring length not allowed"
        ));
    }
    let tail_from = i32::try_from(from)
        .ok()
        .zip(i32::try_from(count).ok())
        .and_then(|(a, b)| a.checked_add(b))
        .ok_or_else(|| err!(NumericValueOutOfRange, "integer out of range"))?;
    let head = usize::try_from(from - 1).unwrap_or(usize::MAX).min(len);
    let tail = usize::try_from(i64::from(tail_from.max(1)) - 1)
        .unwrap_or(0)
        .min(len);
    Ok((head, tail))
}

/// `overlay(s placing t from from [for count])` on text (positions count
/// characters).
pub fn overlay_text(s: &str, t: &str, from: i64, count: Option<i64>) -> Result<String> {
    let count = count.unwrap_or_else(|| t.chars().count() as i64);
    let chars = s.chars().count();
    let (head, tail) = cut_points(chars, from, count)?;
    // Byte offset of the character at index `k` (or the end).
    let at = |k: usize| s.char_indices().nth(k).map_or(s.len(), |(b, _)| b);
    let mut out = String::with_capacity(s.len() + t.len());
    out.push_str(&s[..at(head)]);
    out.push_str(t);
    out.push_str(&s[at(tail)..]);
    Ok(out)
}

/// `overlay(s placing t from from [for count])` on bytea.
pub fn overlay_bytes(s: &[u8], t: &[u8], from: i64, count: Option<i64>) -> Result<Vec<u8>> {
    let count = count.unwrap_or(t.len() as i64);
    let (head, tail) = cut_points(s.len(), from, count)?;
    let mut out = Vec::with_capacity(s.len() + t.len());
    out.extend_from_slice(&s[..head]);
    out.extend_from_slice(t);
    out.extend_from_slice(&s[tail..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! Expected values come from PostgreSQL 15.
    use super::*;

    #[test]
    fn text_overlay_matches_postgres() {
        let o = |s, t, n, m| overlay_text(s, t, n, m).unwrap();
        assert_eq!(o("abcdef", "45", 4, None), "abc45f");
        assert_eq!(o("yabadoo", "daba", 5, None), "yabadaba");
        assert_eq!(o("yabadoo", "daba", 5, Some(0)), "yabadabadoo");
        assert_eq!(o("babosa", "ubb", 2, Some(4)), "bubba");
        assert_eq!(o("abcdef", "X", 3, Some(-1)), "abXbcdef");
        assert_eq!(o("abcdef", "X", 3, Some(-5)), "abXabcdef");
        assert_eq!(o("abcdef", "X", 10, Some(2)), "abcdefX");
        assert_eq!(o("héllo", "É", 2, None), "hÉllo");
        let e = overlay_text("abc", "X", 0, None).unwrap_err();
        assert_eq!(e.message, "negative substring length not allowed");
        let e = overlay_text("abc", "X", i32::MAX as i64, Some(1)).unwrap_err();
        assert_eq!(e.message, "integer out of range");
    }

    #[test]
    fn bytea_overlay_matches_postgres() {
        let o = |s: &[u8], t: &[u8], n, m| overlay_bytes(s, t, n, m).unwrap();
        assert_eq!(o(b"Th\0omas", b"Th\x01omas", 2, None), b"TTh\x01omas");
        assert_eq!(o(b"Th\0omas", b"\x02\x03", 8, None), b"Th\0omas\x02\x03");
        assert_eq!(o(b"Th\0omas", b"\x02\x03", 5, Some(3)), b"Th\0o\x02\x03");
        assert_eq!(o(b"abcdef", b"X", 3, Some(-1)), b"abXbcdef");
        assert!(overlay_bytes(b"abc", b"X", -1, None).is_err());
    }
}
