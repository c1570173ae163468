//! `bytea`: byte strings, with PostgreSQL 15's text forms (`byteain` /
//! `byteaout`) and its `encode` / `decode` formats (`hex`, `escape`,
//! `base64`).
//!
//! Input is the hex form (`\x` then pairs of hex digits, whitespace
//! allowed between pairs) or the escape form (bytes as they are, `\\` for a
//! backslash, `\ooo` for any byte in octal). Output follows the per-thread
//! `bytea_output` setting ([`set_output_hex`], applied by the session like
//! `extra_float_digits`): `hex` (the default) prints `\x` and lower-case
//! hex; `escape` prints printable ASCII as it is, a backslash doubled and
//! every other byte as `\ooo`. Messages and SQLSTATEs are PostgreSQL's
//! (`invalid hexadecimal digit: "g"`, 22023; `invalid input syntax for type
//! bytea`, 22P02). Nothing here allocates more than its result.

use crate::err;
use crate::error::Result;
use std::fmt::Write;

thread_local! {
    /// This thread's `bytea_output` (`true` for `hex`).
    static OUTPUT_HEX: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Sets whether this thread prints bytea as `hex` (else `escape`).
pub fn set_output_hex(hex: bool) {
    OUTPUT_HEX.with(|c| c.set(hex));
}

/// Whether this thread prints bytea as `hex`.
pub fn output_hex() -> bool {
    OUTPUT_HEX.with(std::cell::Cell::get)
}

/// The value of one hex digit.
fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The character starting at byte `i` of `s`, for messages.
fn char_at(s: &str, i: usize) -> &str {
    let len = s[i..].chars().next().map_or(1, char::len_utf8);
    &s[i..i + len]
}

/// PostgreSQL's `hex_decode`: pairs of hex digits, whitespace skipped
/// between pairs.
pub fn hex_decode(s: &str) -> Result<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 2);
    let mut i = 0;
    while i < b.len() {
        if matches!(b[i], b' ' | b'\n' | b'\t' | b'\r') {
            i += 1;
            continue;
        }
        let bad = |at: usize| {
            err!(
                InvalidParameterValue,
                "invalid hexadecimal digit: \"{}\"",
                char_at(s, at)
            )
        };
        let hi = hex_value(b[i]).ok_or_else(|| bad(i))?;
        let Some(&lo_c) = b.get(i + 1) else {
            return Err(err!(
                InvalidParameterValue,
                "invalid hexadecimal data: odd number of digits"
            ));
        };
        let lo = hex_value(lo_c).ok_or_else(|| bad(i + 1))?;
        out.push(hi << 4 | lo);
        i += 2;
    }
    Ok(out)
}

/// The escape form's decoding (`byteain` without `\x`, and
/// `decode(..., 'escape')`).
fn escape_decode(s: &str) -> Result<Vec<u8>> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let octal = |c: u8, max: u8| (b'0'..=max).contains(&c);
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if i + 3 < b.len()
            && octal(b[i + 1], b'3')
            && octal(b[i + 2], b'7')
            && octal(b[i + 3], b'7')
        {
            out.push((b[i + 1] - b'0') << 6 | (b[i + 2] - b'0') << 3 | (b[i + 3] - b'0'));
            i += 4;
        } else if b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else {
            return Err(err!(
                InvalidTextRepresentation,
                "invalid input syntax for type bytea"
            ));
        }
    }
    Ok(out)
}

/// `byteain`: the hex form when the text starts with `\x`, else the escape
/// form.
pub fn parse_bytea(text: &str) -> Result<Vec<u8>> {
    match text.strip_prefix("\\x") {
        Some(hex) => hex_decode(hex),
        None => escape_decode(text),
    }
}

/// Lower-case hex digits of `b`.
fn hex_encode(b: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(b.len() * 2);
    for &x in b {
        out.push(DIGITS[(x >> 4) as usize] as char);
        out.push(DIGITS[(x & 15) as usize] as char);
    }
}

/// `byteaout`: `\x` and hex, or the escape form, per `bytea_output`.
pub fn write_bytea(b: &[u8], out: &mut String) {
    if output_hex() {
        out.push_str("\\x");
        hex_encode(b, out);
        return;
    }
    for &x in b {
        if x == b'\\' {
            out.push_str("\\\\");
        } else if !(0x20..=0x7e).contains(&x) {
            let _ = write!(out, "\\{:03o}", x);
        } else {
            out.push(x as char);
        }
    }
}

/// `encode(bytes, 'escape')`: NUL and bytes with the high bit set in octal,
/// a backslash doubled, everything else as it is.
fn escape_encode(b: &[u8], out: &mut String) {
    for &x in b {
        if x == 0 || x >= 0x80 {
            let _ = write!(out, "\\{:03o}", x);
        } else if x == b'\\' {
            out.push_str("\\\\");
        } else {
            out.push(x as char);
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `encode(bytes, 'base64')`: lines of 76 characters joined by newlines.
fn base64_encode(b: &[u8], out: &mut String) {
    let mut line = 0;
    for chunk in b.chunks(3) {
        if line >= 76 {
            out.push('\n');
            line = 0;
        }
        let n = chunk.len();
        let v = (chunk[0] as u32) << 16
            | (chunk.get(1).copied().unwrap_or(0) as u32) << 8
            | chunk.get(2).copied().unwrap_or(0) as u32;
        for k in 0..4 {
            if k <= n {
                out.push(B64[((v >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
        line += 4;
    }
}

/// `decode(text, 'base64')`: whitespace ignored, `=` padding only at the
/// end, PostgreSQL's messages for anything else.
fn base64_decode(s: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut buf, mut pos, mut end) = (0u32, 0u32, 0u32);
    for (i, c) in s.bytes().enumerate() {
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        let v = if c == b'=' {
            if end == 0 {
                end = match pos {
                    2 => 1,
                    3 => 2,
                    _ => {
                        return Err(err!(
                            InvalidParameterValue,
                            "unexpected \"=\" while decoding base64 sequence"
                        ))
                    }
                };
            }
            0
        } else {
            let v = B64.iter().position(|&x| x == c).ok_or_else(|| {
                err!(
                    InvalidParameterValue,
                    "invalid symbol \"{}\" found while decoding base64 sequence",
                    char_at(s, i)
                )
            })? as u32;
            if end != 0 {
                return Err(err!(
                    InvalidParameterValue,
                    "invalid symbol \"{}\" found while decoding base64 sequence",
                    char_at(s, i)
                ));
            }
            v
        };
        buf = buf << 6 | v;
        pos += 1;
        if pos == 4 {
            out.push((buf >> 16) as u8);
            if end == 0 || end > 1 {
                out.push((buf >> 8) as u8);
            }
            if end == 0 || end > 2 {
                out.push(buf as u8);
            }
            buf = 0;
            pos = 0;
        }
    }
    if pos != 0 {
        return Err(err!(InvalidParameterValue, "invalid base64 end sequence")
            .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted."));
    }
    Ok(out)
}

fn unrecognized_encoding(name: &str) -> crate::error::Error {
    err!(InvalidParameterValue, "unrecognized encoding: \"{name}\"")
}

/// `encode(bytes, format)`.
pub fn encode(b: &[u8], format: &str) -> Result<String> {
    let mut out = String::new();
    match format.to_ascii_lowercase().as_str() {
        "hex" => hex_encode(b, &mut out),
        "escape" => escape_encode(b, &mut out),
        "base64" => base64_encode(b, &mut out),
        _ => return Err(unrecognized_encoding(format)),
    }
    Ok(out)
}

/// `decode(text, format)`.
pub fn decode(s: &str, format: &str) -> Result<Vec<u8>> {
    match format.to_ascii_lowercase().as_str() {
        "hex" => hex_decode(s),
        "escape" => escape_decode(s),
        "base64" => base64_decode(s),
        _ => Err(unrecognized_encoding(format)),
    }
}

/// `substring(bytes from start [for count])`, as `bytea_substr`.
pub fn substring(b: &[u8], start: i64, count: Option<i64>) -> Result<Vec<u8>> {
    let end = match count {
        Some(c) if c < 0 => {
            return Err(err!(
                SubstringError,
                "negative substring length not allowed"
            ))
        }
        Some(c) => start.saturating_add(c),
        None => i64::MAX,
    };
    let from = start.max(1);
    if end <= from || from > b.len() as i64 {
        return Ok(Vec::new());
    }
    let to = (end - 1).min(b.len() as i64);
    Ok(b[(from - 1) as usize..to as usize].to_vec())
}

/// `position(needle in haystack)` over bytes: 1-based, 0 when absent.
pub fn position(needle: &[u8], haystack: &[u8]) -> i32 {
    if needle.is_empty() {
        return 1;
    }
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .map_or(0, |i| i as i32 + 1)
}

/// Checks a byte or bit index against `0..len-1` as `byteaGetByte` does.
fn check_index(n: i64, len: usize) -> Result<usize> {
    if n < 0 || n >= len as i64 {
        return Err(err!(
            ArraySubscriptError,
            "index {n} out of valid range, 0..{}",
            len as i64 - 1
        ));
    }
    Ok(n as usize)
}

/// `get_byte(bytes, n)`.
pub fn get_byte(b: &[u8], n: i64) -> Result<i32> {
    Ok(b[check_index(n, b.len())?] as i32)
}

/// `set_byte(bytes, n, value)`: the low 8 bits of `value`.
pub fn set_byte(b: &[u8], n: i64, value: i64) -> Result<Vec<u8>> {
    let i = check_index(n, b.len())?;
    let mut v = b.to_vec();
    v[i] = value as u8;
    Ok(v)
}

/// `get_bit(bytes, n)`: bit `n % 8` (from the least significant) of byte
/// `n / 8`.
pub fn get_bit(b: &[u8], n: i64) -> Result<i32> {
    let i = check_index(n, b.len() * 8)?;
    Ok((b[i / 8] >> (i % 8) & 1) as i32)
}

/// `set_bit(bytes, n, value)`: value must be 0 or 1.
pub fn set_bit(b: &[u8], n: i64, value: i64) -> Result<Vec<u8>> {
    let i = check_index(n, b.len() * 8)?;
    if value != 0 && value != 1 {
        return Err(err!(InvalidParameterValue, "new bit must be 0 or 1"));
    }
    let mut v = b.to_vec();
    v[i / 8] = (v[i / 8] & !(1 << (i % 8))) | (value as u8) << (i % 8);
    Ok(v)
}

/// `md5(...)`: the digest as 32 lower-case hex digits.
pub fn md5_hex(b: &[u8]) -> String {
    use md5::{Digest, Md5};
    let mut out = String::with_capacity(32);
    hex_encode(&Md5::digest(b), &mut out);
    out
}

#[cfg(test)]
mod tests {
    //! Expected values come from PostgreSQL 15 on this machine.
    use super::*;

    fn show(b: &[u8]) -> String {
        let mut s = String::new();
        write_bytea(b, &mut s);
        s
    }

    #[test]
    fn input_and_output_match_postgres() {
        assert_eq!(parse_bytea("\\x DE ad").unwrap(), [0xde, 0xad]);
        assert_eq!(parse_bytea("a\\\\b\\001").unwrap(), b"a\\b\x01");
        assert_eq!(
            parse_bytea("\\xabc").unwrap_err().message,
            "invalid hexadecimal data: odd number of digits"
        );
        let e = parse_bytea("\\x1g").unwrap_err();
        assert_eq!(e.message, "invalid hexadecimal digit: \"g\"");
        assert_eq!(e.code.code(), "22023");
        let e = parse_bytea("a\\9").unwrap_err();
        assert_eq!(e.message, "invalid input syntax for type bytea");
        assert_eq!(e.code.code(), "22P02");
        assert_eq!(show(b"\x01ab\\"), "\\x0161625c");
        set_output_hex(false);
        let s = show(b"\x01ab\\\xff");
        set_output_hex(true);
        assert_eq!(s, "\\001ab\\\\\\377");
    }

    #[test]
    fn encode_and_decode_round_trip() {
        let data: Vec<u8> = (0..=255u8).collect();
        for f in ["hex", "escape", "base64"] {
            let text = encode(&data, f).unwrap();
            assert_eq!(decode(&text, f).unwrap(), data, "{f}");
        }
        assert_eq!(encode(b"\x01\x02\x03", "base64").unwrap(), "AQID");
        assert_eq!(encode(b"ab", "base64").unwrap(), "YWI=");
        assert_eq!(decode("YWI=", "base64").unwrap(), b"ab");
        assert_eq!(
            decode("YW", "base64").unwrap_err().message,
            "invalid base64 end sequence"
        );
        assert_eq!(
            encode(b"", "nope").unwrap_err().message,
            "unrecognized encoding: \"nope\""
        );
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
    }

    #[test]
    fn bytes_and_bits_by_index() {
        assert_eq!(get_byte(b"ab", 1).unwrap(), 98);
        assert_eq!(
            get_byte(b"ab", 2).unwrap_err().message,
            "index 2 out of valid range, 0..1"
        );
        assert_eq!(set_byte(b"ab", 0, 0x141).unwrap(), b"Ab");
        assert_eq!(get_bit(b"\x02", 1).unwrap(), 1);
        assert_eq!(set_bit(b"\x00", 7, 1).unwrap(), [0x80]);
        assert_eq!(substring(b"abcdef", 0, Some(3)).unwrap(), b"ab");
        assert_eq!(substring(b"abcdef", 5, None).unwrap(), b"ef");
        assert_eq!(position(b"cd", b"abcd"), 3);
    }
}
