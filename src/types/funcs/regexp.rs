//! The POSIX regular-expression functions `regexp_replace`, `regexp_count`,
//! `regexp_like`, `regexp_instr` and `regexp_substr`, with PostgreSQL 15's
//! arguments, flags and errors.
//!
//! Flags: `g` (every match, where allowed), `i` / `c` (case), `n` / `m`
//! (newline-sensitive: `.` stops at newlines, `^` `$` match at lines), `s`
//! (the default: `.` matches newlines), `p` and `w` (partial newline
//! sensitivity), `x` (expanded syntax), `q` (the pattern is literal text),
//! `e` and `t` (no effect here); anything else is `invalid regular
//! expression option: "z"` (22023). Positions count characters, the first
//! being 1. Patterns are PostgreSQL's ARE syntax, compiled (and cached) by
//! [`super::are`]; the matching operators, `regexp_match`,
//! `regexp_matches`, the splitting functions, the regular-expression
//! `substring` and `similar_to_escape` are in [`super::regexp_match`].

use super::are::{self, parse_flags, Compiled, Spans};
use super::{bad_arg_named, no_function, Resolved, ScalarFunc};
use crate::err;
use crate::error::{Error, Result};
use crate::types::datatype::DataType;
use crate::types::value::Value;

/// A function of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RegexpFunc {
    /// `regexp_replace(source, pattern, replacement [, start [, n]] [, flags])`.
    Replace,
    /// `regexp_count(string, pattern [, start [, flags]])`.
    Count,
    /// `regexp_like(string, pattern [, flags])`.
    Like,
    /// `regexp_instr(string, pattern [, start [, n [, endoption [, flags [, subexpr]]]]])`.
    Instr,
    /// `regexp_substr(string, pattern [, start [, n [, flags [, subexpr]]]])`.
    Substr,
    /// The operators `~`, `~*`, `!~`, `!~*`: (case-insensitive, negated).
    Op(bool, bool),
    /// `regexp_match(string, pattern [, flags])`.
    Match,
    /// `regexp_split_to_array(string, pattern [, flags])`.
    SplitToArray,
    /// `substring(string from pattern)`.
    SubstringRe,
    /// `substring(string similar pattern escape e)`.
    SubstringSimilar,
    /// `similar_to_escape(pattern [, escape])`.
    SimilarEscape,
}

fn bad_param(name: &str, v: i64) -> Error {
    err!(
        InvalidParameterValue,
        "invalid value for parameter \"{name}\": {v}"
    )
}

fn no_global(name: &str) -> Error {
    err!(
        InvalidParameterValue,
        "{name}() does not support the \"global\" option"
    )
}

/// The byte offset of character `n` (0-based) of `s`, or `None` past the end.
fn byte_of_char(s: &str, n: i64) -> Option<usize> {
    if n == 0 {
        return Some(0);
    }
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .nth(n as usize)
}

/// The 1-based character position of byte offset `b`.
fn char_pos(s: &str, b: usize) -> i32 {
    s[..b].chars().count() as i32 + 1
}

/// PostgreSQL's replacement text: `\1`..`\9`, `\&`, `\\`; any other
/// backslash is kept.
fn expand(s: &str, caps: &Spans, repl: &str, out: &mut String) {
    let mut it = repl.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.peek().copied() {
            Some(d @ '1'..='9') => {
                it.next();
                if let Some(Some((a, b))) = caps.get(d as usize - '0' as usize) {
                    out.push_str(&s[*a..*b]);
                }
            }
            Some('&') => {
                it.next();
                if let Some((a, b)) = caps[0] {
                    out.push_str(&s[a..b]);
                }
            }
            Some('\\') => {
                it.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

/// The `n`-th match (1-based) at or after byte `from`, with its groups'
/// spans when `caps`.
pub(super) fn nth_match(
    re: &Compiled,
    s: &str,
    from: usize,
    n: i64,
    caps: bool,
) -> Result<Option<Spans>> {
    let mut at = from;
    let mut k = 0;
    while at <= s.len() {
        let Some(spans) = re.find_at(s, at, caps)? else {
            return Ok(None);
        };
        k += 1;
        let Some((so, eo)) = spans[0] else {
            return Ok(None);
        };
        if k == n {
            return Ok(Some(spans));
        }
        at = if eo > so {
            eo
        } else {
            eo + s[eo..].chars().next().map_or(1, char::len_utf8)
        };
    }
    Ok(None)
}

impl RegexpFunc {
    /// Looks a name up.
    pub fn from_name(name: &str) -> Option<RegexpFunc> {
        Some(match name {
            "regexp_replace" => RegexpFunc::Replace,
            "regexp_count" => RegexpFunc::Count,
            "regexp_like" => RegexpFunc::Like,
            "regexp_instr" => RegexpFunc::Instr,
            "regexp_substr" => RegexpFunc::Substr,
            "regexp_match" => RegexpFunc::Match,
            "regexp_split_to_array" => RegexpFunc::SplitToArray,
            "similar_to_escape" => RegexpFunc::SimilarEscape,
            _ => return None,
        })
    }

    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            RegexpFunc::Replace => "regexp_replace",
            RegexpFunc::Count => "regexp_count",
            RegexpFunc::Like => "regexp_like",
            RegexpFunc::Instr => "regexp_instr",
            RegexpFunc::Substr => "regexp_substr",
            RegexpFunc::Op(false, false) => "textregexeq",
            RegexpFunc::Op(true, false) => "texticregexeq",
            RegexpFunc::Op(false, true) => "textregexne",
            RegexpFunc::Op(true, true) => "texticregexne",
            RegexpFunc::Match => "regexp_match",
            RegexpFunc::SplitToArray => "regexp_split_to_array",
            RegexpFunc::SubstringRe | RegexpFunc::SubstringSimilar => "substring",
            RegexpFunc::SimilarEscape => "similar_to_escape",
        }
    }

    /// Argument and result types, by PostgreSQL's signatures: each
    /// position is text or integer (`I`), as listed in the module doc.
    pub fn resolve(self, args: &[DataType]) -> Result<Resolved> {
        use DataType::*;
        let str_ = |t: &DataType| t.is_string() || *t == Unknown;
        let int = |t: &DataType| matches!(t, Int2 | Int4 | Int8 | Unknown);
        // The shape of each signature: 'T' text, 'I' integer.
        let shapes: &[&str] = match self {
            RegexpFunc::Replace => &["TTT", "TTTT", "TTTI", "TTTII", "TTTIIT"],
            RegexpFunc::Count => &["TT", "TTI", "TTIT"],
            RegexpFunc::Like => &["TT", "TTT"],
            RegexpFunc::Instr => &["TT", "TTI", "TTII", "TTIII", "TTIIIT", "TTIIITI"],
            RegexpFunc::Substr => &["TT", "TTI", "TTII", "TTIIT", "TTIITI"],
            RegexpFunc::Op(..) | RegexpFunc::SubstringRe => &["TT"],
            RegexpFunc::Match | RegexpFunc::SplitToArray => &["TT", "TTT"],
            RegexpFunc::SubstringSimilar => &["TTT"],
            RegexpFunc::SimilarEscape => &["T", "TT"],
        };
        let fits = |shape: &str| {
            shape.len() == args.len()
                && shape.bytes().zip(args).all(|(k, t)| match k {
                    b'T' => str_(t),
                    _ => int(t),
                })
        };
        let shape = shapes
            .iter()
            .find(|s| fits(s))
            .ok_or_else(|| no_function(self.name(), args))?;
        let arg_types = shape
            .bytes()
            .map(|k| if k == b'T' { Text } else { Int4 })
            .collect();
        let result = match self {
            RegexpFunc::Replace
            | RegexpFunc::Substr
            | RegexpFunc::SubstringRe
            | RegexpFunc::SubstringSimilar
            | RegexpFunc::SimilarEscape => Text,
            RegexpFunc::Match | RegexpFunc::SplitToArray => DataType::array_of(Text),
            RegexpFunc::Like | RegexpFunc::Op(..) => Bool,
            RegexpFunc::Count | RegexpFunc::Instr => Int4,
        };
        Ok(Resolved {
            func: ScalarFunc::Regexp(self),
            arg_types,
            result,
        })
    }

    /// Evaluates on non-NULL arguments of the resolved types.
    pub fn eval(self, args: &[Value]) -> Result<Value> {
        let bad = || bad_arg_named(self.name());
        let text = |i: usize| args.get(i).and_then(Value::as_str).ok_or_else(bad);
        let int = |i: usize, default: i64| match args.get(i) {
            None => Ok(default),
            Some(v) => v.as_i64().ok_or_else(bad),
        };
        if let Some(v) = self.eval_match(args)? {
            return Ok(v);
        }
        // The flags argument's position, per function and shape.
        let flags_at = match (self, args.len()) {
            (RegexpFunc::Replace, 4) if args[3].as_str().is_some() => Some(3),
            (RegexpFunc::Replace, 6) => Some(5),
            (RegexpFunc::Count, 4) | (RegexpFunc::Like, 3) => Some(args.len() - 1),
            (RegexpFunc::Instr, 6 | 7) => Some(5),
            (RegexpFunc::Substr, 5 | 6) => Some(4),
            _ => None,
        };
        let opts = flags_at.map(text).transpose()?.unwrap_or("");
        if self == RegexpFunc::Replace
            && flags_at == Some(3)
            && opts.starts_with(|c: char| c.is_ascii_digit())
        {
            let first = &opts[..1];
            return Err(err!(
                InvalidParameterValue,
                "invalid regular expression option: \"{first}\""
            )
            .with_hint(
                "If you meant to use regexp_replace() with a start parameter, cast the fourth argument to integer explicitly.",
            ));
        }
        let flags = parse_flags(opts)?;
        if flags.global && self != RegexpFunc::Replace {
            return Err(no_global(self.name()));
        }
        let s = text(0)?;
        let re = are::compile(text(1)?, flags)?;
        let start = match self {
            RegexpFunc::Replace if flags_at != Some(3) => int(3, 1)?,
            RegexpFunc::Count | RegexpFunc::Instr | RegexpFunc::Substr => int(2, 1)?,
            _ => 1,
        };
        if start <= 0 {
            return Err(bad_param("start", start));
        }
        let from = byte_of_char(s, start - 1);
        match self {
            RegexpFunc::Like => Ok(Value::Bool(re.is_match(s)?)),
            RegexpFunc::Count => Ok(Value::Int4(match from {
                Some(b) => {
                    let mut n = 0;
                    while nth_match(&re, s, b, n + 1, false)?.is_some() {
                        n += 1;
                    }
                    n as i32
                }
                None => 0,
            })),
            RegexpFunc::Replace => {
                let n = if args.len() >= 5 {
                    int(4, 0)?
                } else if flags.global {
                    0
                } else {
                    1
                };
                if n < 0 {
                    return Err(bad_param("n", n));
                }
                Ok(Value::text(&replace(&re, s, text(2)?, from, n)?))
            }
            RegexpFunc::Instr | RegexpFunc::Substr => {
                let n = int(3, 1)?;
                if n <= 0 {
                    return Err(bad_param("n", n));
                }
                let endoption = if self == RegexpFunc::Instr {
                    int(4, 0)?
                } else {
                    0
                };
                if !(0..=1).contains(&endoption) {
                    return Err(bad_param("endoption", endoption));
                }
                let sub_at = if self == RegexpFunc::Instr { 6 } else { 5 };
                let subexpr = int(sub_at, 0)?;
                if subexpr < 0 {
                    return Err(bad_param("subexpr", subexpr));
                }
                let caps = match from {
                    Some(b) => nth_match(&re, s, b, n, subexpr > 0)?,
                    None => None,
                };
                let m = caps
                    .as_ref()
                    .and_then(|c| c.get(subexpr as usize).copied().flatten());
                Ok(match (self, m) {
                    (RegexpFunc::Instr, None) => Value::Int4(0),
                    (RegexpFunc::Instr, Some((a, b))) => {
                        Value::Int4(char_pos(s, if endoption == 1 { b } else { a }))
                    }
                    (_, None) => Value::Null,
                    (_, Some((a, b))) => Value::text(&s[a..b]),
                })
            }
            _ => unreachable!("evaluated by eval_match"),
        }
    }
}

impl RegexpFunc {
    /// The functions of [`regexp_match`]; `None` for the others.
    fn eval_match(self, args: &[Value]) -> Result<Option<Value>> {
        use super::regexp_match as m;
        let bad = || bad_arg_named(self.name());
        let text = |i: usize| args.get(i).and_then(Value::as_str).ok_or_else(bad);
        let opt = |i: usize| args.get(i).and_then(Value::as_str);
        let array =
            |items: Vec<Value>| crate::types::array::Array::new(DataType::Text, items).into_value();
        Ok(Some(match self {
            RegexpFunc::Op(icase, negated) => {
                Value::Bool(m::matches(text(0)?, text(1)?, icase)? != negated)
            }
            RegexpFunc::Match => m::regexp_match(text(0)?, text(1)?, opt(2))?,
            RegexpFunc::SplitToArray => array(m::regexp_split(
                text(0)?,
                text(1)?,
                opt(2),
                "regexp_split_to_array",
            )?),
            RegexpFunc::SubstringRe => m::substring(text(0)?, text(1)?)?,
            RegexpFunc::SubstringSimilar => m::substring_similar(text(0)?, text(1)?, text(2)?)?,
            RegexpFunc::SimilarEscape => Value::text(&m::similar_to_escape(text(0)?, opt(1))?),
            _ => return Ok(None),
        }))
    }
}

/// Replaces the `n`-th match at or after byte `from` (every one when `n`
/// is 0).
fn replace(re: &Compiled, s: &str, repl: &str, from: Option<usize>, n: i64) -> Result<String> {
    let Some(from) = from else {
        return Ok(s.to_string());
    };
    // Captures are needed only for `\1`..`\9` in the replacement.
    let caps = repl
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && w[1].is_ascii_digit() && w[1] != b'0');
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..from]);
    let mut last = from;
    let mut at = from;
    let mut k = 0;
    while at <= s.len() {
        let Some(spans) = re.find_at(s, at, caps)? else {
            break;
        };
        let Some((so, eo)) = spans[0] else { break };
        k += 1;
        if n == 0 || k == n {
            out.push_str(&s[last..so]);
            expand(s, &spans, repl, &mut out);
            last = eo;
            if n != 0 {
                break;
            }
        }
        at = if eo > so {
            eo
        } else {
            eo + s[eo..].chars().next().map_or(1, char::len_utf8)
        };
    }
    out.push_str(&s[last..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! Expected values come from PostgreSQL 15's `strings` regression output.
    use super::*;

    fn call(f: RegexpFunc, args: &[Value]) -> Result<Value> {
        f.eval(args)
    }

    fn t(s: &str) -> Value {
        Value::text(s)
    }

    #[test]
    fn functions_match_postgres() {
        use RegexpFunc::*;
        let r = call(
            Replace,
            &[
                t("1112223333"),
                t(r"(\d{3})(\d{3})(\d{4})"),
                t(r"(\1) \2-\3"),
            ],
        );
        assert_eq!(r.unwrap(), t("(111) 222-3333"));
        let r = call(Replace, &[t("AAA"), t("^|$"), t("Z"), t("g")]);
        assert_eq!(r.unwrap(), t("ZAAAZ"));
        let fun = t("A PostgreSQL function");
        let r = call(
            Replace,
            &[
                fun.clone(),
                t("a|e|i|o|u"),
                t("X"),
                Value::Int4(1),
                Value::Int4(3),
                t("i"),
            ],
        );
        assert_eq!(r.unwrap(), t("A PostgrXSQL function"));
        let r = call(Count, &[t("123123123123"), t("123"), Value::Int4(3)]);
        assert_eq!(r.unwrap(), Value::Int4(3));
        let r = call(Like, &[t("a\nd"), t("a.d"), t("n")]);
        assert_eq!(r.unwrap(), Value::Bool(false));
        let args = [
            t("1234567890"),
            t("(123)(4(56)(78))"),
            Value::Int4(1),
            Value::Int4(1),
            Value::Int4(1),
            t("i"),
            Value::Int4(3),
        ];
        assert_eq!(call(Instr, &args).unwrap(), Value::Int4(7));
        let r = call(
            Substr,
            &[
                t("abcabcabc"),
                t("A.C"),
                Value::Int4(1),
                Value::Int4(2),
                t("i"),
            ],
        );
        assert_eq!(r.unwrap(), t("abc"));
        let e = call(Replace, &[t("AAA aaa"), t("A+"), t("Z"), t("z")]).unwrap_err();
        assert_eq!(e.message, "invalid regular expression option: \"z\"");
        let e = call(Like, &[t("abc"), t("a.c"), t("g")]).unwrap_err();
        assert_eq!(
            e.message,
            "regexp_like() does not support the \"global\" option"
        );
        let e = call(Count, &[t("1"), t("1"), Value::Int4(0)]).unwrap_err();
        assert_eq!(e.message, "invalid value for parameter \"start\": 0");
    }
}
