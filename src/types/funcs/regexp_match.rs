//! The regular-expression matching operators `~ ~* !~ !~*` and SIMILAR
//! TO's pieces, and the functions returning matches and pieces:
//! `regexp_match`, `regexp_matches` (set-returning), `regexp_split_to_array`,
//! `regexp_split_to_table` (set-returning), `substring(s from pattern)`,
//! `substring(s similar pattern escape e)` and `similar_to_escape`, as
//! PostgreSQL 15's `regexp.c`.
//!
//! Every pattern goes through [`super::are::compile`]: PostgreSQL's
//! syntax, its errors, one compilation per distinct pattern.
//!
//! Invariant: the match lists follow PostgreSQL's `setup_regexp_matches`:
//! after an empty match the search moves on one character, and the
//! splitting functions ignore empty matches at the start and end of the
//! string and right after the previous match.

use super::are::{self, parse_flags, Flags};
use crate::err;
use crate::error::{Error, Result};
use crate::types::array::Array;
use crate::types::datatype::DataType;
use crate::types::value::Value;

/// `s ~ pattern` (`icase`: `~*`).
pub fn matches(s: &str, pattern: &str, icase: bool) -> Result<bool> {
    let flags = Flags {
        icase,
        ..Flags::default()
    };
    are::compile(pattern, flags)?.is_match(s)
}

/// The flags of `regexp_match`-style functions, with PostgreSQL's error
/// for `g` where the function takes one match only.
fn flags_of(opts: Option<&str>, func: &str, global_ok: bool) -> Result<Flags> {
    let f = parse_flags(opts.unwrap_or(""))?;
    if f.global && !global_ok {
        let mut e = err!(
            InvalidParameterValue,
            "{func}() does not support the \"global\" option"
        );
        if func == "regexp_match" {
            e = e.with_hint("Use the regexp_matches function instead.");
        }
        return Err(e);
    }
    Ok(f)
}

/// The byte ranges of the matches of `pattern` in `s`: the whole match
/// and each subexpression's (`None` where it took no part).
type MatchSpans = Vec<Vec<Option<(usize, usize)>>>;

/// The matches (every one when `flags.global`), PostgreSQL's
/// `setup_regexp_matches`; `ignore_degenerate` drops empty matches at the
/// ends and right after the previous match (the splitting functions).
fn find_matches(
    s: &str,
    pattern: &str,
    flags: Flags,
    ignore_degenerate: bool,
    caps: bool,
) -> Result<MatchSpans> {
    let re = are::compile(pattern, flags)?;
    let mut out = Vec::new();
    let mut at = 0;
    let mut prev_end = 0;
    while at <= s.len() {
        let Some(spans) = re.find_at(s, at, caps)? else {
            break;
        };
        let Some((so, eo)) = spans[0] else { break };
        if !ignore_degenerate || (so < s.len() && eo > prev_end) {
            out.push(spans);
            prev_end = eo;
            if !flags.global {
                break;
            }
        }
        at = if eo > so {
            eo
        } else {
            eo + s[eo..].chars().next().map_or(1, char::len_utf8)
        };
    }
    Ok(out)
}

/// One match as `regexp_match` returns it: the subexpressions' texts, or
/// the whole match when there are none.
fn match_array(s: &str, m: &[Option<(usize, usize)>]) -> Value {
    let text = |r: &Option<(usize, usize)>| r.map_or(Value::Null, |(a, b)| Value::text(&s[a..b]));
    let items = if m.len() > 1 {
        m[1..].iter().map(text).collect()
    } else {
        vec![text(&m[0])]
    };
    Array::new(DataType::Text, items).into_value()
}

/// `regexp_match(s, pattern [, flags])`: the first match, NULL if none.
pub fn regexp_match(s: &str, pattern: &str, opts: Option<&str>) -> Result<Value> {
    let flags = flags_of(opts, "regexp_match", false)?;
    let found = find_matches(s, pattern, flags, false, true)?;
    Ok(found.first().map_or(Value::Null, |m| match_array(s, m)))
}

/// `regexp_matches(s, pattern [, flags])`: one row per match.
pub fn regexp_matches(s: &str, pattern: &str, opts: Option<&str>) -> Result<Vec<Value>> {
    let flags = flags_of(opts, "regexp_matches", true)?;
    let found = find_matches(s, pattern, flags, false, true)?;
    Ok(found.iter().map(|m| match_array(s, m)).collect())
}

/// The pieces between the matches (`regexp_split_to_table` and
/// `regexp_split_to_array`).
pub fn regexp_split(s: &str, pattern: &str, opts: Option<&str>, func: &str) -> Result<Vec<Value>> {
    let mut flags = flags_of(opts, func, false)?;
    flags.global = true;
    let found = find_matches(s, pattern, flags, true, false)?;
    let mut out = Vec::with_capacity(found.len() + 1);
    let mut last = 0;
    for m in &found {
        if let Some((a, b)) = m[0] {
            out.push(Value::text(&s[last..a]));
            last = b;
        }
    }
    out.push(Value::text(&s[last..]));
    Ok(out)
}

/// `substring(s from pattern)`: the part matching the first parenthesized
/// subexpression if there is one, else the whole match; NULL if none.
pub fn substring(s: &str, pattern: &str) -> Result<Value> {
    let found = find_matches(s, pattern, Flags::default(), false, true)?;
    let Some(m) = found.first() else {
        return Ok(Value::Null);
    };
    let r = if m.len() > 1 { m[1] } else { m[0] };
    Ok(r.map_or(Value::Null, |(a, b)| Value::text(&s[a..b])))
}

/// Whether `name` is `regexp_matches` (`Some(false)`) or
/// `regexp_split_to_table` (`Some(true)`), the set-returning functions.
pub fn srf_of(name: &str) -> Option<bool> {
    match name {
        "regexp_matches" => Some(false),
        "regexp_split_to_table" => Some(true),
        _ => None,
    }
}

/// Whether the set-returning function takes arguments of types `tys`
/// (two or three strings, cast to text).
pub fn srf_takes(tys: &[DataType]) -> bool {
    (2..=3).contains(&tys.len()) && tys.iter().all(|t| t.is_string() || *t == DataType::Unknown)
}

/// The rows of `regexp_split_to_table` (`split`) or `regexp_matches` over
/// non-NULL text arguments.
pub fn srf_rows(split: bool, vals: &[Value]) -> Result<Vec<Vec<Value>>> {
    let text = |i: usize| vals.get(i).and_then(Value::as_str);
    let (Some(s), Some(p)) = (text(0), text(1)) else {
        return Ok(Vec::new());
    };
    let items = if split {
        regexp_split(s, p, text(2), "regexp_split_to_table")?
    } else {
        regexp_matches(s, p, text(2))?
    };
    Ok(items.into_iter().map(|v| vec![v]).collect())
}

/// `invalid escape string` (22025) with PostgreSQL's hint.
fn bad_escape() -> Error {
    err!(InvalidEscapeSequence, "invalid escape string")
        .with_hint("Escape string must be empty or one character.")
}

/// `similar_to_escape(pattern [, escape])`: a SIMILAR TO pattern as the
/// equivalent POSIX regular expression (PostgreSQL's
/// `similar_escape_internal`); `escape` is `\` when not given, none when
/// empty.
pub fn similar_to_escape(pattern: &str, escape: Option<&str>) -> Result<String> {
    let esc = match escape {
        None => Some('\\'),
        Some(e) => {
            let mut it = e.chars();
            match (it.next(), it.next()) {
                (None, _) => None,
                (Some(c), None) => Some(c),
                _ => return Err(bad_escape()),
            }
        }
    };
    let mut r = String::with_capacity(pattern.len() + 10);
    r.push_str("^(?:");
    let (mut after_escape, mut in_class, mut nquotes) = (false, false, 0);
    for c in pattern.chars() {
        if after_escape {
            if c == '"' && !in_class {
                match nquotes {
                    0 => r.push_str("){1,1}?("),
                    1 => r.push_str("){1,1}(?:"),
                    _ => {
                        return Err(err!(
                            InvalidUseOfEscapeCharacter,
                            "SQL regular expression may not contain more than two escape-double-quote separators"
                        ))
                    }
                }
                nquotes += 1;
            } else {
                r.push('\\');
                r.push(c);
            }
            after_escape = false;
        } else if Some(c) == esc {
            after_escape = true;
        } else if in_class {
            if c == '\\' {
                r.push('\\');
            }
            r.push(c);
            if c == ']' {
                in_class = false;
            }
        } else {
            match c {
                '[' => {
                    r.push('[');
                    in_class = true;
                }
                '%' => r.push_str(".*"),
                '_' => r.push('.'),
                '(' => r.push_str("(?:"),
                '\\' | '.' | '^' | '$' => {
                    r.push('\\');
                    r.push(c);
                }
                c => r.push(c),
            }
        }
    }
    r.push_str(")$");
    Ok(r)
}

/// `substring(s similar pattern escape e)` (also `substring(s from
/// pattern for e)` with text arguments).
pub fn substring_similar(s: &str, pattern: &str, escape: &str) -> Result<Value> {
    substring(s, &similar_to_escape(pattern, Some(escape))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::text(s)
    }

    #[test]
    fn similar_escape_is_postgres() {
        assert_eq!(similar_to_escape("abc%", None).unwrap(), "^(?:abc.*)$");
        assert_eq!(
            similar_to_escape("a#\"b_#\"%", Some("#")).unwrap(),
            "^(?:a){1,1}?(b.){1,1}(?:.*)$"
        );
        assert!(similar_to_escape("a", Some("##")).is_err());
    }

    #[test]
    fn match_functions() {
        let v = regexp_match("foobarbequebaz", "(bar)(beque)", None).unwrap();
        let Value::Array(a) = v else { panic!() };
        assert_eq!(a.items, vec![t("bar"), t("beque")]);
        let rows = regexp_matches("abcabc", "b", Some("g")).unwrap();
        assert_eq!(rows.len(), 2);
        let parts = regexp_split("the quick  fox", r"\s+", None, "x").unwrap();
        assert_eq!(parts, vec![t("the"), t("quick"), t("fox")]);
        let parts = regexp_split("abc", "", None, "x").unwrap();
        assert_eq!(parts, vec![t("a"), t("b"), t("c")]);
        assert_eq!(substring("Thomas", "...$").unwrap(), t("mas"));
        assert_eq!(
            substring_similar("Thomas", "%#\"o_a#\"_", "#").unwrap(),
            t("oma")
        );
        assert!(matches("abc", "B", true).unwrap());
    }
}
