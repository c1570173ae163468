//! The bodies of quoted literals as PostgreSQL's scanner (`scan.l`) and
//! parser filter (`parser.c`) read them: string continuation, `''`
//! undoubling and the Unicode escapes of `U&'...'` / `U&"..."`.
//!
//! - Continuation: a closing quote, whitespace holding at least one
//!   newline (and `--` comments, each ended by a newline), then an opening
//!   quote join two literals into one (`'a'` NEWLINE `'b'` is `'ab'`); on
//!   one line, or with a `/* */` comment between, they stay two tokens.
//! - [`lex_string`]: the lexer's reading of a quoted string with its
//!   continued segments.
//! - [`unescape_e_string`]: the backslash escapes of `E'...'` (and of
//!   `'...'` while `standard_conforming_strings` is off).
//! - [`udeescape`]: `\XXXX` and `\+XXXXXX` (with the escape character of
//!   `UESCAPE`, `\` by default) are code points, the escape written twice
//!   is itself, and UTF-16 surrogates must come as a high-low pair of
//!   escapes. Errors carry the byte offset of the offending escape in the
//!   dequoted text, which is how PostgreSQL positions them.

use crate::lexer::{scan_quoted, LexError, StringStyle, TokenKind};

/// If a string continuation starts at `pos` (just past a closing quote),
/// the offset just past the opening quote of the next segment.
#[inline]
pub(crate) fn continuation(src: &[u8], mut pos: usize) -> Option<usize> {
    let mut newline = false;
    loop {
        match src.get(pos)? {
            b' ' | b'\t' | b'\x0c' => pos += 1,
            b'\n' | b'\r' => {
                newline = true;
                pos += 1;
            }
            b'-' if src.get(pos + 1) == Some(&b'-') => {
                // A comment counts only when a newline ends it.
                pos += memchr::memchr2(b'\n', b'\r', &src[pos..])?;
            }
            b'\'' if newline => return Some(pos + 1),
            _ => return None,
        }
    }
}

/// Lexes a quoted string whose opening quote ends `prefix` bytes after
/// `*pos`, with continued segments (see [`continuation`]); with
/// the `Escape` style a backslash escapes the next character.
#[inline]
pub(crate) fn lex_string(
    src: &[u8],
    pos: &mut usize,
    prefix: usize,
    style: StringStyle,
) -> TokenKind {
    let backslash = style == StringStyle::Escape;
    let mut body = *pos + prefix;
    let mut escapes = false;
    loop {
        match scan_quoted(src, body, backslash) {
            Some((end, e)) => {
                escapes |= e;
                match continuation(src, end) {
                    Some(next) => {
                        escapes = true;
                        body = next;
                    }
                    None => {
                        *pos = end;
                        return TokenKind::String(style, escapes);
                    }
                }
            }
            None => {
                *pos = src.len();
                return TokenKind::Error(LexError::UnterminatedString);
            }
        }
    }
}

/// The value of a quoted body read from `text` just past its opening
/// quote, with `''` as one quote and continued segments joined; stops at
/// the closing quote (anything after it is ignored).
pub(crate) fn dequote(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(q) = memchr::memchr(b'\'', &b[i..]) {
        out.push_str(&text[i..i + q]);
        i += q + 1;
        if b.get(i) == Some(&b'\'') {
            out.push('\'');
            i += 1;
        } else if let Some(next) = continuation(b, i) {
            i = next;
        } else {
            return out;
        }
    }
    out.push_str(&text[i..]);
    out
}

/// The value of a `"quoted identifier"` read from `text` just past its
/// opening quote: `""` is one quote; stops at the closing quote.
pub(crate) fn undouble_ident(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(q) = memchr::memchr(b'"', &b[i..]) {
        out.push_str(&text[i..i + q]);
        i += q + 1;
        if b.get(i) != Some(&b'"') {
            return out;
        }
        out.push('"');
        i += 1;
    }
    out.push_str(&text[i..]);
    out
}

/// Why a Unicode escape is rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnicodeEscapeError {
    /// Neither `\XXXX`, `\+XXXXXX` nor the escape doubled.
    Malformed,
    /// Zero or past U+10FFFF.
    Value,
    /// A lone or unpaired UTF-16 surrogate.
    SurrogatePair,
}

/// Whether `c` may be the escape character of a `UESCAPE` clause
/// (PostgreSQL's `check_uescapechar`).
pub(crate) fn valid_uescape(c: u8) -> bool {
    !(c.is_ascii_hexdigit()
        || matches!(
            c,
            b'+' | b'\'' | b'"' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'
        ))
}

/// The code point of the `n` hex digits at `b[at..]`, if they are there.
fn hex_digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let digits = b.get(at..at + n)?;
    digits
        .iter()
        .try_fold(0u32, |v, &d| Some(v * 16 + char::from(d).to_digit(16)?))
}

/// Decodes the Unicode escapes of `s` with escape character `escape`
/// (PostgreSQL's `str_udeescape`); an error gives the byte offset in `s`
/// where PostgreSQL points its cursor.
pub(crate) fn udeescape(s: &str, escape: u8) -> Result<String, (usize, UnicodeEscapeError)> {
    use UnicodeEscapeError::*;
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut pair_first: Option<u32> = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] != escape {
            if pair_first.is_some() {
                return Err((i, SurrogatePair));
            }
            let c = s[i..].chars().next().expect("i is on a character boundary");
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        if b.get(i + 1) == Some(&escape) {
            if pair_first.is_some() {
                return Err((i, SurrogatePair));
            }
            out.push(char::from(escape));
            i += 2;
            continue;
        }
        let (code, len) = if let Some(v) = hex_digits(b, i + 1, 4) {
            (v, 5)
        } else if let Some(v) = (b.get(i + 1) == Some(&b'+'))
            .then(|| hex_digits(b, i + 2, 6))
            .flatten()
        {
            (v, 8)
        } else {
            return Err((i, Malformed));
        };
        if code == 0 || code > 0x10ffff {
            return Err((i, Value));
        }
        let is_low = (0xdc00..=0xdfff).contains(&code);
        let code = match (pair_first.take(), is_low) {
            (Some(high), true) => 0x10000 + ((high - 0xd800) << 10) + (code - 0xdc00),
            (Some(_), false) | (None, true) => return Err((i, SurrogatePair)),
            (None, false) => code,
        };
        if (0xd800..=0xdbff).contains(&code) {
            pair_first = Some(code);
        } else {
            out.push(char::from_u32(code).ok_or((i, Value))?);
        }
        i += len;
    }
    if pair_first.is_some() {
        return Err((b.len(), SurrogatePair));
    }
    Ok(out)
}

/// An `E'...'` escape PostgreSQL rejects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EscapeError {
    /// Byte offset of the escape in the body (`None`: the whole literal).
    pub(crate) at: Option<usize>,
    /// Length of the text quoted as `at or near "..."` (0: none quoted).
    pub(crate) near: usize,
    /// The message, without the `at or near` part.
    pub(crate) message: String,
    /// Whether it is SQLSTATE 22025 (else 42601, or 22021 for a byte
    /// sequence that is not UTF-8).
    pub(crate) invalid_escape: bool,
}

impl EscapeError {
    /// An error at the escape `at..at + near`, quoted in the message.
    fn near(at: usize, near: usize, message: &str) -> EscapeError {
        EscapeError {
            at: Some(at),
            near,
            message: message.to_string(),
            invalid_escape: false,
        }
    }
}

/// The hint PostgreSQL gives for a malformed `\u` / `\U` escape.
pub(crate) const E_UNICODE_HINT: &str = "Unicode escapes must be \\uXXXX or \\UXXXXXXXX.";

/// Unescapes the body of an `E'...'` string (its text between the quotes):
/// `''`, continued segments, `\b \f \n \r \t`, octal `\ooo`, hex `\xHH`,
/// `\uXXXX`, `\UXXXXXXXX` (surrogates as a high-low pair), and `\c` for
/// any other `c`. The result must be valid UTF-8 without NUL bytes, as in
/// PostgreSQL; errors are positioned as PostgreSQL's scanner positions them.
pub(crate) fn unescape_e_string(body: &str) -> Result<String, EscapeError> {
    let bytes = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\'' {
            // The lexer lets only `''` and continuations through.
            if bytes.get(i + 1) == Some(&b'\'') {
                out.push(b'\'');
                i += 2;
            } else {
                i = continuation(bytes, i + 1).unwrap_or(bytes.len());
            }
            continue;
        }
        if b != b'\\' || i + 1 >= bytes.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let c = bytes[i + 1];
        let at = i;
        i += 2;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    v = v * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' if i < bytes.len() && bytes[i].is_ascii_hexdigit() => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                    v = v * 16 + char::from(bytes[i]).to_digit(16).expect("hex digit");
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let ch = e_unicode(bytes, at, &mut i)?;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            _ => {
                // `\c` is `c`; copy a whole UTF-8 character.
                let start = i - 1;
                let ch = body[start..]
                    .chars()
                    .next()
                    .expect("a character follows the backslash");
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                i = start + ch.len_utf8();
            }
        }
    }
    let bad_byte = |b: u8| EscapeError {
        at: None,
        near: 0,
        message: format!("invalid byte sequence for encoding \"UTF8\": 0x{b:02x}"),
        invalid_escape: false,
    };
    if out.contains(&0) {
        return Err(bad_byte(0));
    }
    String::from_utf8(out).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        bad_byte(e.as_bytes()[at])
    })
}

/// The character of the `\u` / `\U` escape at `b[at..]` (`*i` just past
/// its letter), reading the low half too when it is a high surrogate; moves
/// `*i` past what it read.
fn e_unicode(b: &[u8], at: usize, i: &mut usize) -> Result<char, EscapeError> {
    // The number of hex digits of a `\u` (4) or `\U` (8) escape at `b[at..]`,
    // or the malformed-escape error (fewer digits).
    let digits = |at: usize| -> Result<(u32, usize), EscapeError> {
        let n = if b[at + 1] == b'u' { 4 } else { 8 };
        match hex_digits(b, at + 2, n) {
            Some(v) => Ok((v, n + 2)),
            None => Err(EscapeError {
                at: Some(at),
                near: 0,
                message: "invalid Unicode escape".to_string(),
                invalid_escape: true,
            }),
        }
    };
    let (code, len) = digits(at)?;
    *i = at + len;
    if (0xdc00..=0xdfff).contains(&code) {
        return Err(EscapeError::near(at, len, "invalid Unicode surrogate pair"));
    }
    let code = if (0xd800..=0xdbff).contains(&code) {
        let next = *i;
        let is_escape = b.get(next) == Some(&b'\\') && matches!(b.get(next + 1), Some(b'u' | b'U'));
        if !is_escape {
            let len = match b.get(next) {
                None => 1,
                Some(&c) => utf8_len(c),
            };
            return Err(EscapeError::near(
                next,
                len,
                "invalid Unicode surrogate pair",
            ));
        }
        let (low, len) = digits(next)?;
        if !(0xdc00..=0xdfff).contains(&low) {
            return Err(EscapeError::near(
                next,
                len,
                "invalid Unicode surrogate pair",
            ));
        }
        *i = next + len;
        0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00)
    } else {
        code
    };
    char::from_u32(code)
        .filter(|&c| c != '\0')
        .ok_or_else(|| EscapeError::near(at, len, "invalid Unicode escape value"))
}

/// The length of the UTF-8 sequence a byte starts.
fn utf8_len(first: u8) -> usize {
    match first {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    //! Expected values come from PostgreSQL 15.
    use super::UnicodeEscapeError::*;
    use super::*;

    #[test]
    fn continuation_needs_a_newline() {
        assert_eq!(continuation(b"\n'b'", 0), Some(2));
        assert_eq!(continuation(b" \t-- c\n  'b'", 0), Some(10));
        assert_eq!(continuation(b"\r\n'b'", 0), Some(3));
        assert_eq!(continuation(b" 'b'", 0), None);
        assert_eq!(continuation(b"\n/* c */ 'b'", 0), None);
        assert_eq!(continuation(b"\n-- c 'b'", 0), None);
        assert_eq!(continuation(b"\nx", 0), None);
    }

    #[test]
    fn dequote_joins_segments() {
        assert_eq!(dequote("it''s' x"), "it's");
        assert_eq!(dequote("a'\n  'b'"), "ab");
        assert_eq!(dequote("a'\n-- it's\n'b''c' UESCAPE '!'"), "ab'c");
        assert_eq!(dequote("a' 'b'"), "a");
    }

    #[test]
    fn e_string_escapes() {
        let ok = |body: &str| unescape_e_string(body).unwrap();
        assert_eq!(ok(r"a\nb\tc\\d\'e''f"), "a\nb\tc\\d'e'f");
        assert_eq!(ok(r"\101\x42\u0043\U00000044"), "ABCD");
        assert_eq!(ok(r"\xC3\xA9"), "é");
        assert_eq!(ok(r"\q\é"), "qé");
        assert_eq!(ok(r"\ud83d\ude00"), "\u{1f600}");
        assert_eq!(ok("a'\n  '\\x41"), "aA");
        let err = |body: &str| unescape_e_string(body).unwrap_err();
        assert_eq!(err(r"\xff").at, None);
        assert_eq!(err(r"\000").at, None);
        let e = err(r"ab\u12'");
        assert_eq!((e.at, e.near, e.invalid_escape), (Some(2), 0, true));
        assert_eq!(e.message, "invalid Unicode escape");
        let e = err(r"\udb99xy");
        assert_eq!((e.at, e.near), (Some(6), 1), "{}", e.message);
        let e = err(r"\udb99\U00000061");
        assert_eq!((e.at, e.near), (Some(6), 10));
        let e = err(r"\U002FFFFF");
        assert_eq!((e.at, e.near), (Some(0), 10));
        assert_eq!(e.message, "invalid Unicode escape value");
        assert_eq!(err(r"\udc00").message, "invalid Unicode surrogate pair");
    }

    #[test]
    fn unicode_escapes_match_postgres() {
        assert_eq!(udeescape(r"d\0061t\+000061", b'\\').unwrap(), "data");
        assert_eq!(udeescape(r"d!0061t\+000061", b'!').unwrap(), r"dat\+000061");
        assert_eq!(udeescape(r"a\\b", b'\\').unwrap(), r"a\b");
        assert_eq!(udeescape(r"\d83d\de00", b'\\').unwrap(), "\u{1f600}");
        assert_eq!(udeescape(r"wrong: \061", b'\\'), Err((7, Malformed)));
        assert_eq!(udeescape(r"wrong: \+0061", b'\\'), Err((7, Malformed)));
        assert_eq!(udeescape(r"wrong: \db99", b'\\'), Err((12, SurrogatePair)));
        assert_eq!(
            udeescape(r"wrong: \db99xy", b'\\'),
            Err((12, SurrogatePair))
        );
        assert_eq!(
            udeescape(r"wrong: \db99\\", b'\\'),
            Err((12, SurrogatePair))
        );
        assert_eq!(
            udeescape(r"wrong: \+00db99\+000061", b'\\'),
            Err((15, SurrogatePair))
        );
        assert_eq!(udeescape(r"wrong: \+2FFFFF", b'\\'), Err((7, Value)));
        assert_eq!(udeescape(r"\0000", b'\\'), Err((0, Value)));
        assert!(valid_uescape(b'!') && !valid_uescape(b'+') && !valid_uescape(b'a'));
    }
}
