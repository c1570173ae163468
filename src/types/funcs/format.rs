//! `format(fmt, args...)`, `quote_ident`, `quote_literal` and
//! `quote_nullable`, ported from PostgreSQL's `varlena.c` (`text_format`)
//! and `ruleutils.c` (`quote_identifier`): `%s`, `%I`, `%L`, `%%`,
//! argument positions `n$`, the `-` flag, and widths (`10`, `*`, `*n$`),
//! with PostgreSQL's errors.

use super::super::io::format_value;
use super::super::value::Value;
use crate::err;
use crate::error::{Error, Result};
use heapdb_grammar::keywords::{Keyword, KeywordClass};

/// The hint every malformed specifier carries.
const HINT: &str = "For a single \"%\" use \"%%\".";

fn unterminated() -> Error {
    err!(
        InvalidParameterValue,
        "unterminated format() type specifier"
    )
    .with_hint(HINT)
}

fn too_few() -> Error {
    err!(InvalidParameterValue, "too few arguments for format()")
}

fn arg_zero() -> Error {
    err!(
        InvalidParameterValue,
        "format specifies argument 0, but arguments are numbered from 1"
    )
}

/// `quote_identifier`: quoted unless a lower-case name that is not a
/// reserved-ish keyword.
pub fn quote_identifier(s: &str) -> String {
    let b = s.as_bytes();
    let simple = !b.is_empty()
        && (b[0].is_ascii_lowercase() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_');
    // Unreserved keywords need no quotes (nor does a word that is none).
    let safe = simple && Keyword::lookup(s).class() == KeywordClass::Unreserved;
    if safe {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "\"\""))
    }
}

/// `quote_literal_cstr`: single quotes doubled; with a backslash, an
/// `E'...'` string with backslashes doubled.
pub fn quote_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// A format string being read, character by character.
struct Cursor<'a> {
    chars: Vec<char>,
    pos: usize,
    _s: std::marker::PhantomData<&'a ()>,
}

impl Cursor<'_> {
    fn cur(&self) -> char {
        self.chars[self.pos]
    }
    /// `ADVANCE_PARSE_POINTER`: the next character, or the unterminated
    /// error at the end.
    fn advance(&mut self) -> Result<()> {
        self.pos += 1;
        if self.pos >= self.chars.len() {
            return Err(unterminated());
        }
        Ok(())
    }
    /// `text_format_parse_digits`.
    fn digits(&mut self) -> Result<Option<i64>> {
        let mut n: Option<i64> = None;
        while self.cur().is_ascii_digit() {
            let d = i64::from(self.cur() as u8 - b'0');
            let v = n.unwrap_or(0) * 10 + d;
            if v > i64::from(i32::MAX) {
                return Err(err!(NumericValueOutOfRange, "number is out of range"));
            }
            n = Some(v);
            self.advance()?;
        }
        Ok(n)
    }
}

/// One parsed specifier (`text_format_parse_format`).
struct Spec {
    argpos: Option<i64>,
    /// `None`: no `*`; `Some(None)`: `*` (next argument); `Some(Some(n))`: `*n$`.
    widthpos: Option<Option<i64>>,
    minus: bool,
    width: i64,
}

fn parse_spec(c: &mut Cursor<'_>) -> Result<Spec> {
    let mut spec = Spec {
        argpos: None,
        widthpos: None,
        minus: false,
        width: 0,
    };
    if let Some(n) = c.digits()? {
        if c.cur() != '$' {
            spec.width = n;
            return Ok(spec);
        }
        if n == 0 {
            return Err(arg_zero());
        }
        spec.argpos = Some(n);
        c.advance()?;
    }
    while c.cur() == '-' {
        spec.minus = true;
        c.advance()?;
    }
    if c.cur() == '*' {
        c.advance()?;
        match c.digits()? {
            Some(n) => {
                if c.cur() != '$' {
                    return Err(err!(
                        InvalidParameterValue,
                        "width argument position must be ended by \"$\""
                    ));
                }
                if n == 0 {
                    return Err(arg_zero());
                }
                spec.widthpos = Some(Some(n));
                c.advance()?;
            }
            None => spec.widthpos = Some(None),
        }
    } else if let Some(n) = c.digits()? {
        spec.width = n;
    }
    Ok(spec)
}

/// `text_format_append_string`: pads to `width` characters (negative
/// width, or the `-` flag, aligns left).
fn append_padded(out: &mut String, s: &str, minus: bool, width: i64) -> Result<()> {
    if width == 0 {
        out.push_str(s);
        return Ok(());
    }
    let left = width < 0 || minus;
    if width <= i64::from(i32::MIN) {
        return Err(err!(ProgramLimitExceeded, "number is out of range"));
    }
    let width = width.unsigned_abs() as usize;
    let len = s.chars().count();
    let pad = " ".repeat(width.saturating_sub(len));
    if left {
        out.push_str(s);
        out.push_str(&pad);
    } else {
        out.push_str(&pad);
        out.push_str(s);
    }
    Ok(())
}

/// The integer a width argument gives (NULL is 0).
fn width_of(v: &Value) -> Result<i64> {
    if v.is_null() {
        return Ok(0);
    }
    if let Some(i) = v.as_i64() {
        return i32::try_from(i)
            .map(i64::from)
            .map_err(|_| err!(NumericValueOutOfRange, "integer out of range"));
    }
    let mut s = String::new();
    format_value(v, &mut s);
    s.trim().parse::<i32>().map(i64::from).map_err(|_| {
        err!(
            InvalidTextRepresentation,
            "invalid input syntax for type integer: \"{s}\""
        )
    })
}

/// `format(fmt, args...)`: `args[0]` is the format; NULL format is NULL.
pub fn format(args: &[Value]) -> Result<Value> {
    let Some(fmt) = args.first().and_then(Value::as_str) else {
        return Ok(Value::Null);
    };
    let mut c = Cursor {
        chars: fmt.chars().collect(),
        pos: 0,
        _s: std::marker::PhantomData,
    };
    let mut out = String::new();
    let mut arg: usize = 1;
    while c.pos < c.chars.len() {
        if c.cur() != '%' {
            out.push(c.cur());
            c.pos += 1;
            continue;
        }
        c.advance()?;
        if c.cur() == '%' {
            out.push('%');
            c.pos += 1;
            continue;
        }
        let spec = parse_spec(&mut c)?;
        let conv = c.cur();
        if !matches!(conv, 's' | 'I' | 'L') {
            return Err(err!(
                InvalidParameterValue,
                "unrecognized format() type specifier \"{conv}\""
            )
            .with_hint(HINT));
        }
        let mut width = spec.width;
        if let Some(wp) = spec.widthpos {
            if let Some(n) = wp {
                arg = n as usize;
            }
            let v = args.get(arg).ok_or_else(too_few)?;
            width = width_of(v)?;
            arg += 1;
        }
        if let Some(n) = spec.argpos {
            arg = n as usize;
        }
        let v = args.get(arg).ok_or_else(too_few)?;
        arg += 1;
        let text = if v.is_null() {
            match conv {
                's' => String::new(),
                'L' => "NULL".to_string(),
                _ => {
                    return Err(err!(
                        NullValueNotAllowed,
                        "null values cannot be formatted as an SQL identifier"
                    ))
                }
            }
        } else {
            let mut s = String::new();
            format_value(v, &mut s);
            match conv {
                'I' => quote_identifier(&s),
                'L' => quote_literal(&s),
                _ => s,
            }
        };
        append_padded(&mut out, &text, spec.minus, width)?;
        c.pos += 1;
    }
    Ok(Value::text(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(args: &[&str]) -> std::result::Result<String, String> {
        let vals: Vec<Value> = args.iter().map(|s| Value::text(s)).collect();
        match format(&vals) {
            Ok(v) => Ok(v.as_str().unwrap_or("").to_string()),
            Err(e) => Err(e.message),
        }
    }

    #[test]
    fn formats_as_postgresql() {
        assert_eq!(
            f(&["Hello %s %1$s %s", "World", "Hello again"]).unwrap(),
            "Hello World World Hello again"
        );
        assert_eq!(
            f(&["%-10s|%10s|", "a", "b"]).unwrap(),
            "a         |         b|"
        );
        assert_eq!(
            f(&["INSERT INTO %I VALUES(%L)", "my tab", "O'Reilly\\"]).unwrap(),
            "INSERT INTO \"my tab\" VALUES(E'O''Reilly\\\\')"
        );
        assert_eq!(f(&["%*s|", "5", "x"]).unwrap(), "    x|");
        assert_eq!(
            f(&["%s %s", "a"]).unwrap_err(),
            "too few arguments for format()"
        );
        assert_eq!(
            f(&["%0$s", "a"]).unwrap_err(),
            "format specifies argument 0, but arguments are numbered from 1"
        );
        assert_eq!(
            f(&["%1", "a"]).unwrap_err(),
            "unterminated format() type specifier"
        );
        assert_eq!(
            f(&["%x", "a"]).unwrap_err(),
            "unrecognized format() type specifier \"x\""
        );
        assert_eq!(quote_identifier("select"), "\"select\"");
        assert_eq!(quote_identifier("abc_1"), "abc_1");
    }
}
