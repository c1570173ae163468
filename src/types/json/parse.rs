//! The JSON lexer and recursive-descent parser, PostgreSQL's `jsonapi.c`:
//! one pass over the text yielding a [`Node`] tree whose nodes remember
//! their byte span in the input (so `json` operators can hand back the
//! original text of a member, spacing and all).
//!
//! Errors are PostgreSQL 15's, token for token: the message `invalid input
//! syntax for type json` (22P02) with a DETAIL naming the offending token
//! (`Token "x" is invalid.`, `Expected ":", but found ","`, `The input
//! string ended unexpectedly.`) and a CONTEXT quoting the input up to the
//! end of that token (`JSON data, line 1: {"a":1, x...`), at most about 50
//! bytes of it. [`Mode::Jsonb`] also checks what only de-escaping finds, as
//! PostgreSQL's `jsonb_in` does: `\u0000` (22P05) and unpaired surrogates.

use crate::err;
use crate::error::{Error, Result};

/// How strictly strings are checked (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `json` input: escapes are checked for form only.
    Json,
    /// `jsonb` input: escapes must also make valid text.
    Jsonb,
}

/// One parsed JSON value and the bytes `span` it came from.
#[derive(Debug, Clone)]
pub struct Node {
    /// Start and end (exclusive) byte offsets in the input.
    pub span: (usize, usize),
    /// What it is.
    pub kind: Kind,
}

/// The kinds of JSON value. Numbers keep only their span: the caller
/// reads the text when it needs the value.
#[derive(Debug, Clone)]
pub enum Kind {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A number (its text is `input[span]`).
    Number,
    /// A string, de-escaped.
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// An object's members in input order, duplicates kept.
    Object(Vec<(String, Node)>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    ObjectStart,
    ObjectEnd,
    ArrayStart,
    ArrayEnd,
    Comma,
    Colon,
    String,
    Number,
    True,
    False,
    Null,
    End,
}

/// The parse contexts of `report_parse_error`.
#[derive(Clone, Copy)]
enum Ctx {
    End,
    Value,
    Str,
    ArrayNext,
    ObjectStart,
    ObjectLabel,
    ObjectNext,
}

struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    mode: Mode,
    pos: usize,
    line: usize,
    line_start: usize,
    tok: Tok,
    start: usize,
    end: usize,
    /// Whether the current token is the end of input (for the context's
    /// "..." suffix).
    at_end: bool,
    strval: String,
}

fn is_alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

impl<'a> Lexer<'a> {
    fn error(&self, detail: String) -> Error {
        err!(
            InvalidTextRepresentation,
            "invalid input syntax for type json"
        )
        .with_detail(detail)
        .with_context(self.context())
    }

    fn token_text(&self) -> &str {
        let s = self.start.min(self.end);
        self.text.get(s..self.end).unwrap_or("")
    }

    fn invalid(&self) -> Error {
        self.error(format!("Token \"{}\" is invalid.", self.token_text()))
    }

    /// PostgreSQL's `report_json_context`.
    fn context(&self) -> String {
        let end = self.end.min(self.src.len());
        let line_start = self.line_start.min(end);
        let mut start = line_start;
        while end - start >= 50 {
            start += 1;
            while start < end && !self.text.is_char_boundary(start) {
                start += 1;
            }
        }
        if start - line_start <= 3 {
            start = line_start;
        }
        let prefix = if start > line_start { "..." } else { "" };
        let suffix = if !self.at_end
            && end < self.src.len()
            && self.src[end] != b'\n'
            && self.src[end] != b'\r'
        {
            "..."
        } else {
            ""
        };
        format!(
            "JSON data, line {}: {prefix}{}{suffix}",
            self.line,
            self.text.get(start..end).unwrap_or("")
        )
    }

    fn char_end(&self, at: usize) -> usize {
        let mut e = (at + 1).min(self.src.len());
        while e < self.src.len() && !self.text.is_char_boundary(e) {
            e += 1;
        }
        e
    }

    /// Lexes the next token (PostgreSQL's `json_lex`).
    fn next(&mut self) -> Result<()> {
        let src = self.src;
        let mut s = self.pos;
        while s < src.len() && matches!(src[s], b' ' | b'\t' | b'\n' | b'\r') {
            if src[s] == b'\n' {
                self.line += 1;
                self.line_start = s + 1;
            }
            s += 1;
        }
        self.start = s;
        if s >= src.len() {
            self.tok = Tok::End;
            self.end = s;
            self.pos = s;
            self.at_end = true;
            return Ok(());
        }
        let single = match src[s] {
            b'{' => Some(Tok::ObjectStart),
            b'}' => Some(Tok::ObjectEnd),
            b'[' => Some(Tok::ArrayStart),
            b']' => Some(Tok::ArrayEnd),
            b',' => Some(Tok::Comma),
            b':' => Some(Tok::Colon),
            _ => None,
        };
        if let Some(t) = single {
            self.tok = t;
            self.end = s + 1;
            self.pos = s + 1;
            return Ok(());
        }
        match src[s] {
            b'"' => {
                self.lex_string(s)?;
                self.tok = Tok::String;
            }
            b'-' => {
                self.lex_number(s + 1)?;
                self.tok = Tok::Number;
            }
            b'0'..=b'9' => {
                self.lex_number(s)?;
                self.tok = Tok::Number;
            }
            _ => {
                let mut p = s;
                while p < src.len() && is_alnum(src[p]) {
                    p += 1;
                }
                if p == s {
                    self.end = self.char_end(s);
                    return Err(self.invalid());
                }
                self.end = p;
                self.tok = match &src[s..p] {
                    b"true" => Tok::True,
                    b"false" => Tok::False,
                    b"null" => Tok::Null,
                    _ => return Err(self.invalid()),
                };
            }
        }
        self.pos = self.end;
        Ok(())
    }

    /// PostgreSQL's `json_lex_number`: `s` is just past any minus sign.
    fn lex_number(&mut self, mut s: usize) -> Result<()> {
        let src = self.src;
        let digit = |i: usize| i < src.len() && src[i].is_ascii_digit();
        let mut error = false;
        if s < src.len() && src[s] == b'0' {
            s += 1;
        } else if s < src.len() && (b'1'..=b'9').contains(&src[s]) {
            while digit(s) {
                s += 1;
            }
        } else {
            error = true;
        }
        if s < src.len() && src[s] == b'.' {
            s += 1;
            if !digit(s) {
                error = true;
            } else {
                while digit(s) {
                    s += 1;
                }
            }
        }
        if s < src.len() && matches!(src[s], b'e' | b'E') {
            s += 1;
            if s < src.len() && matches!(src[s], b'+' | b'-') {
                s += 1;
            }
            if !digit(s) {
                error = true;
            } else {
                while digit(s) {
                    s += 1;
                }
            }
        }
        while s < src.len() && is_alnum(src[s]) {
            s += 1;
            error = true;
        }
        self.end = s;
        if error {
            return Err(self.invalid());
        }
        Ok(())
    }

    /// PostgreSQL's `json_lex_string`; `start` is the opening quote. The
    /// de-escaped text goes to `strval`.
    fn lex_string(&mut self, start: usize) -> Result<()> {
        let src = self.src;
        let jsonb = self.mode == Mode::Jsonb;
        self.strval.clear();
        let mut hi: Option<u32> = None;
        let mut s = start;
        // Runs of plain characters are copied whole.
        let mut run = start + 1;
        loop {
            s += 1;
            if s >= src.len() {
                self.end = src.len();
                return Err(self.invalid());
            }
            let b = src[s];
            if b == b'"' {
                break;
            }
            if b < 32 {
                self.end = s;
                return Err(self.error(format!("Character with value 0x{b:02x} must be escaped.")));
            }
            if b != b'\\' {
                if hi.is_some() && jsonb {
                    return Err(self.fail_at_char_end(s, LOW_SURROGATE));
                }
                continue;
            }
            self.strval.push_str(&self.text[run..s]);
            s += 1;
            if s >= src.len() {
                self.end = src.len();
                return Err(self.invalid());
            }
            if src[s] == b'u' {
                let mut ch: u32 = 0;
                for _ in 0..4 {
                    s += 1;
                    if s >= src.len() {
                        self.end = src.len();
                        return Err(self.invalid());
                    }
                    match (src[s] as char).to_digit(16) {
                        Some(d) => ch = ch * 16 + d,
                        None => {
                            return Err(self.fail_at_char_end(
                                s,
                                "\"\\u\" must be followed by four hexadecimal digits.",
                            ))
                        }
                    }
                }
                run = s + 1;
                if (0xD800..0xDC00).contains(&ch) {
                    if hi.is_some() && jsonb {
                        return Err(self.fail_at_char_end(
                            s,
                            "Unicode high surrogate must not follow a high surrogate.",
                        ));
                    }
                    hi = Some(ch);
                    continue;
                }
                let c = if (0xDC00..0xE000).contains(&ch) {
                    match hi.take() {
                        Some(h) => 0x10000 + ((h - 0xD800) << 10) + (ch - 0xDC00),
                        None if jsonb => return Err(self.fail_at_char_end(s, LOW_SURROGATE)),
                        None => 0xFFFD,
                    }
                } else {
                    if hi.is_some() && jsonb {
                        return Err(self.fail_at_char_end(s, LOW_SURROGATE));
                    }
                    hi = None;
                    ch
                };
                if c == 0 && jsonb {
                    self.end = self.char_end(s);
                    return Err(err!(
                        UntranslatableCharacter,
                        "unsupported Unicode escape sequence"
                    )
                    .with_detail("\\u0000 cannot be converted to text.")
                    .with_context(self.context()));
                }
                self.strval.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                continue;
            }
            if hi.is_some() && jsonb {
                return Err(self.fail_at_char_end(s, LOW_SURROGATE));
            }
            hi = None;
            let c = match src[s] {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                _ => {
                    self.start = s;
                    self.end = self.char_end(s);
                    return Err(self.error(format!(
                        "Escape sequence \"\\{}\" is invalid.",
                        self.token_text()
                    )));
                }
            };
            self.strval.push(c);
            run = s + 1;
        }
        if hi.is_some() && jsonb {
            return Err(self.fail_at_char_end(s, LOW_SURROGATE));
        }
        self.strval.push_str(&self.text[run..s]);
        self.end = s + 1;
        Ok(())
    }

    fn fail_at_char_end(&mut self, s: usize, detail: &str) -> Error {
        self.end = self.char_end(s);
        self.error(detail.to_string())
    }

    fn found(&self) -> String {
        self.token_text().to_string()
    }

    /// PostgreSQL's `report_parse_error`.
    fn parse_error(&self, ctx: Ctx) -> Error {
        if self.tok == Tok::End {
            return self.error("The input string ended unexpectedly.".into());
        }
        let t = self.found();
        self.error(match ctx {
            Ctx::End => format!("Expected end of input, but found \"{t}\"."),
            Ctx::Value => format!("Expected JSON value, but found \"{t}\"."),
            Ctx::Str => format!("Expected string, but found \"{t}\"."),
            Ctx::ArrayNext => format!("Expected \",\" or \"]\", but found \"{t}\"."),
            Ctx::ObjectStart => format!("Expected string or \"}}\", but found \"{t}\"."),
            Ctx::ObjectLabel => format!("Expected \":\", but found \"{t}\"."),
            Ctx::ObjectNext => format!("Expected \",\" or \"}}\", but found \"{t}\"."),
        })
    }

    fn expect(&mut self, ctx: Ctx, tok: Tok) -> Result<()> {
        if self.tok == tok {
            self.next()
        } else {
            Err(self.parse_error(ctx))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node> {
        if depth > MAX_DEPTH {
            return Err(err!(
                StatementTooComplex,
                "stack depth limit exceeded"
            )
            .with_hint("Increase the configuration parameter \"max_stack_depth\" (currently 2048kB), after ensuring the platform's stack depth limit is adequate."));
        }
        match self.tok {
            Tok::ObjectStart => self.object(depth),
            Tok::ArrayStart => self.array(depth),
            _ => self.scalar(),
        }
    }

    fn scalar(&mut self) -> Result<Node> {
        let span = (self.start, self.end);
        let kind = match self.tok {
            Tok::Null => Kind::Null,
            Tok::True => Kind::Bool(true),
            Tok::False => Kind::Bool(false),
            Tok::Number => Kind::Number,
            Tok::String => Kind::String(std::mem::take(&mut self.strval)),
            _ => return Err(self.parse_error(Ctx::Value)),
        };
        self.next()?;
        Ok(Node { span, kind })
    }

    fn array(&mut self, depth: usize) -> Result<Node> {
        let start = self.start;
        self.next()?;
        let mut items = Vec::new();
        if self.tok != Tok::ArrayEnd {
            items.push(self.value(depth + 1)?);
            while self.tok == Tok::Comma {
                self.next()?;
                items.push(self.value(depth + 1)?);
            }
        }
        let end = self.end;
        self.expect(Ctx::ArrayNext, Tok::ArrayEnd)?;
        Ok(Node {
            span: (start, end),
            kind: Kind::Array(items),
        })
    }

    fn object(&mut self, depth: usize) -> Result<Node> {
        let start = self.start;
        self.next()?;
        let mut members = Vec::new();
        match self.tok {
            Tok::String => {
                members.push(self.field(depth)?);
                while self.tok == Tok::Comma {
                    self.next()?;
                    members.push(self.field(depth)?);
                }
            }
            Tok::ObjectEnd => {}
            _ => return Err(self.parse_error(Ctx::ObjectStart)),
        }
        let end = self.end;
        self.expect(Ctx::ObjectNext, Tok::ObjectEnd)?;
        Ok(Node {
            span: (start, end),
            kind: Kind::Object(members),
        })
    }

    fn field(&mut self, depth: usize) -> Result<(String, Node)> {
        if self.tok != Tok::String {
            return Err(self.parse_error(Ctx::Str));
        }
        let key = std::mem::take(&mut self.strval);
        self.next()?;
        self.expect(Ctx::ObjectLabel, Tok::Colon)?;
        Ok((key, self.value(depth + 1)?))
    }
}

const LOW_SURROGATE: &str = "Unicode low surrogate must follow a high surrogate.";

/// Nesting deeper than this fails as PostgreSQL's stack check would.
const MAX_DEPTH: usize = 6000;

/// Parses `text` as one JSON value (see the module doc).
pub fn parse(text: &str, mode: Mode) -> Result<Node> {
    let mut lx = Lexer {
        src: text.as_bytes(),
        text,
        mode,
        pos: 0,
        line: 1,
        line_start: 0,
        tok: Tok::End,
        start: 0,
        end: 0,
        at_end: false,
        strval: String::new(),
    };
    lx.next()?;
    let node = lx.value(0)?;
    lx.expect(Ctx::End, Tok::End)?;
    Ok(node)
}

#[cfg(test)]
mod tests {
    //! Details and contexts are PostgreSQL 15's for the same input.
    use super::*;

    fn fails(text: &str, mode: Mode) -> (String, String) {
        let e = parse(text, mode).unwrap_err();
        (e.detail.unwrap_or_default(), e.context.unwrap_or_default())
    }

    #[test]
    fn errors_name_the_token_and_quote_the_input() {
        let (d, c) = fails("{\"a\":1, x}", Mode::Json);
        assert_eq!(d, "Token \"x\" is invalid.");
        assert_eq!(c, "JSON data, line 1: {\"a\":1, x...");
        let (d, c) = fails("[1,2,", Mode::Jsonb);
        assert_eq!(d, "The input string ended unexpectedly.");
        assert_eq!(c, "JSON data, line 1: [1,2,");
        let (d, c) = fails("\"\\ud800\"", Mode::Jsonb);
        assert_eq!(d, "Unicode low surrogate must follow a high surrogate.");
        assert_eq!(c, "JSON data, line 1: \"\\ud800\"");
        assert!(parse("\"\\ud800\"", Mode::Json).is_ok());
        let long = format!("{{\"{}\": tru, \"b\":2}}", "a".repeat(64));
        let (d, c) = fails(&long, Mode::Json);
        assert_eq!(d, "Token \"tru\" is invalid.");
        assert_eq!(
            c,
            "JSON data, line 1: ...aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": tru..."
        );
    }

    #[test]
    fn spans_cover_the_source_text() {
        let text = "{\"a\": [1,  2], \"b\": \"x\\ty\"}";
        let n = parse(text, Mode::Json).unwrap();
        let Kind::Object(m) = n.kind else {
            panic!("object")
        };
        assert_eq!(&text[m[0].1.span.0..m[0].1.span.1], "[1,  2]");
        assert!(matches!(&m[1].1.kind, Kind::String(s) if s == "x\ty"));
    }
}
