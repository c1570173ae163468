//! `boolean` input, and the length rules of `varchar(n)` and `char(n)`.
//!
//! Lengths count characters, not bytes. Storing a longer string into
//! `varchar(n)` / `char(n)` fails with `value too long for type character
//! varying(n)` (22001) unless every character past `n` is a space, in
//! which case the string is cut (SQL's rule); an explicit cast
//! (`'abcd'::varchar(3)`) cuts silently. `char(n)` pads with spaces to `n`
//! characters, and its comparisons ignore trailing spaces
//! ([`bpchar_trim`]).

use crate::err;
use crate::error::Result;

/// Parses boolean text as PostgreSQL's `parse_bool`: surrounding whitespace
/// ignored, case-insensitive `true`/`false`/`yes`/`no`/`on`/`off` and any
/// unambiguous prefix of them (`t`, `ye`, `of`), `1`, `0`.
pub fn parse_bool(text: &str) -> Result<bool> {
    let s = text
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| s.len() >= min && word.starts_with(s.as_str());
    let v = if prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || s == "1" {
        Some(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || s == "0" {
        Some(false)
    } else {
        None
    };
    v.ok_or_else(|| {
        err!(
            InvalidTextRepresentation,
            "invalid input syntax for type boolean: \"{text}\""
        )
    })
}

/// Number of characters in `s`.
pub fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// Byte offset just past the first `n` characters of `s` (or `s.len()`).
fn byte_offset_of_char(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Applies `varchar(n)` (`padded == false`) or `char(n)` (`padded == true`)
/// to `s`: cut or fail when too long (see the module doc), pad `char(n)`.
/// Returns `None` when `s` can be stored unchanged.
pub fn apply_length(s: &str, n: u32, padded: bool, explicit: bool) -> Result<Option<String>> {
    if n == 0 {
        // `Char(0)`: bpchar without a length, which neither pads nor cuts.
        return Ok(None);
    }
    let n = n as usize;
    // Fast path: byte length bounds the character count.
    if s.len() <= n && !padded {
        return Ok(None);
    }
    let cut = byte_offset_of_char(s, n);
    if cut < s.len() {
        if !explicit && !s[cut..].bytes().all(|b| b == b' ') {
            let ty = if padded {
                "character"
            } else {
                "character varying"
            };
            return Err(err!(
                StringDataRightTruncation,
                "value too long for type {ty}({n})"
            ));
        }
        return Ok(Some(s[..cut].to_string()));
    }
    if padded {
        let len = char_len(s);
        if len < n {
            let mut out = String::with_capacity(s.len() + n - len);
            out.push_str(s);
            out.extend(std::iter::repeat(' ').take(n - len));
            return Ok(Some(out));
        }
    }
    Ok(None)
}

/// A `char(n)` value without its trailing spaces, as `bpchar` comparison,
/// hashing, `length()` and casts to text see it.
///
/// Byte by byte rather than `trim_end_matches(' ')`, which decodes each
/// char from the end: a blank-padded `char(84)` took ~170 instructions per
/// call, and sorting ANALYZE's 30,000-value sample calls it ~900,000 times.
/// A space byte is never part of a multi-byte UTF-8 sequence, so the cut is
/// on a char boundary.
pub fn bpchar_trim(s: &str) -> &str {
    let b = s.as_bytes();
    let mut n = b.len();
    while n >= 8 && b[n - 8..n] == *b"        " {
        n -= 8;
    }
    while n > 0 && b[n - 1] == b' ' {
        n -= 1;
    }
    &s[..n]
}

#[cfg(test)]
mod tests {
    //! Expected messages come from PostgreSQL 15 on this machine.

    #[test]
    fn bpchar_trim_cuts_trailing_spaces_only() {
        for s in [
            "",
            " ",
            "a",
            "a ",
            " a",
            "a b  ",
            "é ",
            "é",
            "      \u{3000} ",
            "\tx\t ",
            &"x".repeat(20),
            &format!("ab{}", " ".repeat(84)),
            &" ".repeat(84),
            &format!("日本{}", " ".repeat(9)),
        ] {
            assert_eq!(super::bpchar_trim(s), s.trim_end_matches(' '), "{s:?}");
        }
    }
    use super::*;

    #[test]
    fn booleans_as_postgres() {
        for t in ["t", "TRUE", " tr", "y", "yes", "on", "1"] {
            assert!(parse_bool(t).unwrap(), "{t}");
        }
        for f in ["f", "false", "n", "no", "of", "off", "0"] {
            assert!(!parse_bool(f).unwrap(), "{f}");
        }
        for bad in ["abc", "o", "", "2", "truee"] {
            let e = parse_bool(bad).unwrap_err();
            assert_eq!(
                e.message,
                format!("invalid input syntax for type boolean: \"{bad}\"")
            );
        }
    }

    #[test]
    fn lengths_count_characters() {
        assert_eq!(apply_length("héé", 3, false, false).unwrap(), None);
        let e = apply_length("abcd", 3, false, false).unwrap_err();
        assert_eq!(e.message, "value too long for type character varying(3)");
        assert_eq!(e.code.code(), "22001");
        assert_eq!(
            apply_length("abc  ", 3, false, false).unwrap().as_deref(),
            Some("abc")
        );
        assert_eq!(
            apply_length("abcd", 3, false, true).unwrap().as_deref(),
            Some("abc")
        );
        assert_eq!(
            apply_length("ab", 4, true, false).unwrap().as_deref(),
            Some("ab  ")
        );
        let e = apply_length("abcd", 3, true, false).unwrap_err();
        assert_eq!(e.message, "value too long for type character(3)");
        assert_eq!(bpchar_trim("ab  "), "ab");
    }
}
