//! `bytea LIKE bytea [ESCAPE bytea]`, as PostgreSQL's `bytealike` /
//! `byteanlike` with `like_escape_bytea`: the pattern works on bytes, `_`
//! is any one byte, `%` any run of bytes, and the escape byte (`\` unless
//! given; none when the escape is empty) makes the next byte literal.
//!
//! Errors are PostgreSQL 15's: an escape of more than one byte is
//! `invalid escape string` (22025) and a pattern that ends with the escape
//! byte is `LIKE pattern must not end with escape character` (22025).

use crate::err;
use crate::error::Result;

/// One element of a compiled pattern.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// This byte.
    Byte(u8),
    /// `_`: any one byte.
    One,
    /// `%`: any run of bytes, empty included.
    Any,
}

/// The pattern as tokens, with `escape` the escape byte (`None` for none).
fn compile(pattern: &[u8], escape: Option<u8>) -> Result<Vec<Tok>> {
    let mut toks = Vec::with_capacity(pattern.len());
    let mut it = pattern.iter().copied();
    while let Some(b) = it.next() {
        toks.push(match b {
            _ if Some(b) == escape => match it.next() {
                Some(n) => Tok::Byte(n),
                None => {
                    return Err(err!(
                        InvalidEscapeSequence,
                        "LIKE pattern must not end with escape character"
                    ))
                }
            },
            b'_' => Tok::One,
            b'%' => Tok::Any,
            _ => Tok::Byte(b),
        });
    }
    Ok(toks)
}

/// Whether `s` matches `toks` (greedy with backtracking to the last `%`,
/// which is exact for patterns of fixed-width tokens and `%`).
fn matches(s: &[u8], toks: &[Tok]) -> bool {
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match toks.get(pi) {
            Some(Tok::Any) => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(Tok::One) => {
                si += 1;
                pi += 1;
            }
            Some(Tok::Byte(b)) if *b == s[si] => {
                si += 1;
                pi += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    toks[pi..].iter().all(|t| *t == Tok::Any)
}

/// `s LIKE pattern [ESCAPE escape]` on bytes.
pub fn bytea_like(s: &[u8], pattern: &[u8], escape: Option<&[u8]>) -> Result<bool> {
    let escape = match escape {
        None => Some(b'\\'),
        Some([]) => None,
        Some([b]) => Some(*b),
        Some(_) => {
            return Err(err!(InvalidEscapeSequence, "invalid escape string")
                .with_hint("Escape string must be empty or one character."))
        }
    };
    Ok(matches(s, &compile(pattern, escape)?))
}

#[cfg(test)]
mod tests {
    //! Expected values come from PostgreSQL 15.
    use super::*;

    #[test]
    fn bytea_like_matches_postgres() {
        let like = |s: &[u8], p: &[u8]| bytea_like(s, p, None).unwrap();
        assert!(like(b"abc", b"_b_"));
        assert!(!like(b"abc", b"_b"));
        assert!(like(b"abc", b"%c"));
        assert!(like(b"", b"%"));
        assert!(!like(b"", b"_"));
        assert!(like(b"mississippi", b"%iss%pi"));
        assert!(like(b"\xff\x00a", b"__a"));
        assert!(like(b"a_c", b"a\\__"));
        assert!(!like(b"abc", b"a\\__"));
        assert!(bytea_like(b"a_c", b"a$__", Some(b"$")).unwrap());
        assert!(!bytea_like(b"abc", b"a$__", Some(b"$")).unwrap());
        assert!(bytea_like(b"a\\c", b"a\\c", Some(b"")).unwrap());
        let e = bytea_like(b"x", b"ab\\", None).unwrap_err();
        assert_eq!(e.message, "LIKE pattern must not end with escape character");
        let e = bytea_like(b"x", b"x", Some(b"ab")).unwrap_err();
        assert_eq!(e.message, "invalid escape string");
    }
}
