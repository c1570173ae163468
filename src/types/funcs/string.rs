//! String functions over `&str` (lengths and positions count characters)
//! and LIKE / ILIKE matching, with PostgreSQL's edge cases: `substring`
//! clamps a start before 1, `left('hello', -2)` drops from the end,
//! `lpad('hello', 3)` cuts, `repeat('ab', -1)` is empty.

use crate::err;
use crate::error::Result;

/// `substring(s from start [for count])`.
pub fn substring(s: &str, start: i64, count: Option<i64>) -> Result<String> {
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
    if end <= from {
        return Ok(String::new());
    }
    Ok(s.chars()
        .skip((from - 1) as usize)
        .take(usize::try_from(end - from).unwrap_or(usize::MAX))
        .collect())
}

/// `position(needle in haystack)`: 1-based character position, 0 when absent.
pub fn position(needle: &str, haystack: &str) -> i32 {
    match haystack.find(needle) {
        Some(byte) => haystack[..byte].chars().count() as i32 + 1,
        None => 0,
    }
}

/// Which end(s) `trim` works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrimSide {
    /// `btrim` / `trim(both ...)`.
    Both,
    /// `ltrim` / `trim(leading ...)`.
    Leading,
    /// `rtrim` / `trim(trailing ...)`.
    Trailing,
}

/// Removes the characters in `chars` (default: space) from `side` of `s`.
pub fn trim<'a>(s: &'a str, chars: &str, side: TrimSide) -> &'a str {
    let set = |c: char| chars.contains(c);
    match side {
        TrimSide::Both => s.trim_matches(set),
        TrimSide::Leading => s.trim_start_matches(set),
        TrimSide::Trailing => s.trim_end_matches(set),
    }
}

/// `left(s, n)`: the first `n` characters, or all but the last `-n`.
pub fn left(s: &str, n: i64) -> String {
    let len = s.chars().count() as i64;
    let take = if n >= 0 { n.min(len) } else { (len + n).max(0) };
    s.chars().take(take as usize).collect()
}

/// `right(s, n)`: the last `n` characters, or all but the first `-n`.
pub fn right(s: &str, n: i64) -> String {
    let len = s.chars().count() as i64;
    let skip = if n >= 0 {
        (len - n).max(0)
    } else {
        (-n).min(len)
    };
    s.chars().skip(skip as usize).collect()
}

/// `lpad` (`left == true`) / `rpad`: pad with `fill` repeated to `len`
/// characters, or cut to `len`.
pub fn pad(s: &str, len: i64, fill: &str, left: bool) -> String {
    let len = len.max(0) as usize;
    let n = s.chars().count();
    if n >= len || fill.is_empty() {
        return s.chars().take(len).collect();
    }
    let padding: String = fill.chars().cycle().take(len - n).collect();
    if left {
        padding + s
    } else {
        let mut out = s.to_string();
        out.push_str(&padding);
        out
    }
}

/// `repeat(s, n)`; `n <= 0` gives the empty string.
pub fn repeat(s: &str, n: i64) -> Result<String> {
    if n <= 0 {
        return Ok(String::new());
    }
    if (s.len() as u128) * (n as u128) > 1 << 30 {
        return Err(err!(ProgramLimitExceeded, "requested length too large"));
    }
    Ok(s.repeat(n as usize))
}

/// `initcap(s)`: upper-case the first letter of each alphanumeric run,
/// lower-case the rest.
pub fn initcap(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    for c in s.chars() {
        if in_word {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        in_word = c.is_alphanumeric();
    }
    out
}

/// `split_part(s, delimiter, n)` (1-based; negative counts from the end).
pub fn split_part(s: &str, delim: &str, n: i64) -> Result<String> {
    if n == 0 {
        return Err(err!(
            InvalidParameterValue,
            "field position must not be zero"
        ));
    }
    if delim.is_empty() {
        return Ok(if n == 1 || n == -1 {
            s.to_string()
        } else {
            String::new()
        });
    }
    let parts: Vec<&str> = s.split(delim).collect();
    let idx = if n > 0 { n - 1 } else { parts.len() as i64 + n };
    Ok(usize::try_from(idx)
        .ok()
        .and_then(|i| parts.get(i))
        .map_or(String::new(), |p| p.to_string()))
}

/// One element of a compiled LIKE pattern.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A literal character.
    Char(char),
    /// `_`: any one character.
    One,
    /// `%`: any run of characters.
    Any,
}

/// A compiled LIKE / ILIKE pattern: compile once per statement, then
/// [`LikePattern::matches`] per row without allocating.
#[derive(Debug, Clone)]
pub struct LikePattern {
    toks: Vec<Tok>,
    case_insensitive: bool,
}

impl LikePattern {
    /// Compiles `pattern` with escape character `escape` (`None`: the
    /// default `\`; for `ESCAPE ''` use [`LikePattern::new_no_escape`]).
    pub fn new(pattern: &str, escape: Option<char>, case_insensitive: bool) -> Result<LikePattern> {
        Self::build(pattern, Some(escape.unwrap_or('\\')), case_insensitive)
    }

    /// Compiles a pattern with `ESCAPE ''` (no escape character).
    pub fn new_no_escape(pattern: &str, case_insensitive: bool) -> Result<LikePattern> {
        Self::build(pattern, None, case_insensitive)
    }

    fn build(pattern: &str, escape: Option<char>, ci: bool) -> Result<LikePattern> {
        let mut toks = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            if Some(c) == escape {
                match chars.next() {
                    Some(n) => toks.push(Tok::Char(fold(n, ci))),
                    None => {
                        return Err(err!(
                            InvalidEscapeSequence,
                            "LIKE pattern must not end with escape character"
                        ))
                    }
                }
            } else if c == '%' {
                if toks.last() != Some(&Tok::Any) {
                    toks.push(Tok::Any);
                }
            } else if c == '_' {
                toks.push(Tok::One);
            } else {
                toks.push(Tok::Char(fold(c, ci)));
            }
        }
        Ok(LikePattern {
            toks,
            case_insensitive: ci,
        })
    }

    /// Whether `s` matches the whole pattern. Walks byte offsets of `s`
    /// so that no per-row buffer is allocated.
    pub fn matches(&self, s: &str) -> bool {
        let ci = self.case_insensitive;
        let char_at = |i: usize| s[i..].chars().next().expect("offset on a char boundary");
        // Iterative wildcard matching with one backtrack point (the last `%`).
        let (mut t, mut p) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < s.len() {
            let c = char_at(t);
            match self.toks.get(p) {
                Some(Tok::Char(x)) if *x == fold(c, ci) => {
                    t += c.len_utf8();
                    p += 1;
                }
                Some(Tok::One) => {
                    t += c.len_utf8();
                    p += 1;
                }
                Some(Tok::Any) => {
                    star = Some((p, t));
                    p += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        let next = st + char_at(st).len_utf8();
                        p = sp + 1;
                        t = next;
                        star = Some((sp, next));
                    }
                    None => return false,
                },
            }
        }
        self.toks[p..].iter().all(|t| *t == Tok::Any)
    }
}

fn fold(c: char, ci: bool) -> char {
    if ci {
        c.to_lowercase().next().unwrap_or(c)
    } else {
        c
    }
}

/// One-shot `s LIKE pattern` (default escape `\`).
pub fn like(s: &str, pattern: &str, case_insensitive: bool) -> Result<bool> {
    Ok(LikePattern::new(pattern, None, case_insensitive)?.matches(s))
}

#[cfg(test)]
mod tests {
    //! Expected results come from PostgreSQL 15 on this machine.
    use super::*;

    #[test]
    fn string_functions_match_postgres() {
        assert_eq!(substring("hello", 2, Some(3)).unwrap(), "ell");
        assert_eq!(substring("hello", 0, Some(2)).unwrap(), "h");
        assert_eq!(substring("hello", -1, None).unwrap(), "hello");
        assert_eq!(substring("héllo", 2, Some(1)).unwrap(), "é");
        assert_eq!(
            substring("x", 1, Some(-1)).unwrap_err().message,
            "negative substring length not allowed"
        );
        assert_eq!(position("l", "hello"), 3);
        assert_eq!(position("lo", "héllo"), 4);
        assert_eq!(position("z", "hello"), 0);
        assert_eq!(trim("  x  ", " ", TrimSide::Both), "x");
        assert_eq!(trim("xxaxx", "x", TrimSide::Both), "a");
        assert_eq!(trim("xyy", "y", TrimSide::Trailing), "x");
        assert_eq!(left("hello", 2), "he");
        assert_eq!(left("hello", -2), "hel");
        assert_eq!(right("hello", 2), "lo");
        assert_eq!(right("hello", -2), "llo");
        assert_eq!(pad("hi", 5, " ", true), "   hi");
        assert_eq!(pad("hi", 5, "xy", true), "xyxhi");
        assert_eq!(pad("hello", 3, " ", true), "hel");
        assert_eq!(pad("hi", 5, "xy", false), "hixyx");
        assert_eq!(repeat("ab", 3).unwrap(), "ababab");
        assert_eq!(repeat("ab", -1).unwrap(), "");
        assert_eq!(initcap("hello world"), "Hello World");
        assert_eq!(split_part("a,b,c", ",", 2).unwrap(), "b");
        assert_eq!(split_part("a,b,c", ",", -1).unwrap(), "c");
        assert_eq!(split_part("a,b,c", ",", 5).unwrap(), "");
    }

    #[test]
    fn like_patterns() {
        assert!(like("hello", "h%o", false).unwrap());
        assert!(like("hello", "h_llo", false).unwrap());
        assert!(!like("hello", "h_lo", false).unwrap());
        assert!(like("hello", "%", false).unwrap());
        assert!(like("", "%", false).unwrap());
        assert!(!like("", "_", false).unwrap());
        assert!(like("a%b", "a\\%b", false).unwrap());
        assert!(!like("axb", "a\\%b", false).unwrap());
        assert!(like("HeLLo", "hel%", true).unwrap());
        assert!(!like("HeLLo", "hel%", false).unwrap());
        assert!(like("abcabc", "%abc", false).unwrap());
        assert!(like("mississippi", "%iss%pi", false).unwrap());
        let p = LikePattern::new("a!%%", Some('!'), false).unwrap();
        assert!(p.matches("a%bc"));
        assert!(!p.matches("abc"));
        let e = like("x", "ab\\", false).unwrap_err();
        assert_eq!(e.message, "LIKE pattern must not end with escape character");
        assert_eq!(e.code.code(), "22025");
    }
}
