//! The lexer: SQL text to a flat vector of [`Token`]s.
//!
//! Tokens do not own text: each is a kind plus the byte range of its source
//! text, so lexing a statement allocates exactly one vector. Values
//! (identifier folding, string unescaping) are produced by the parser when it
//! builds the AST, and only for the tokens that become AST nodes.
//!
//! The token rules follow PostgreSQL's `scan.l`:
//! - whitespace, `-- line comments` and nested `/* block comments */` separate
//!   tokens and are dropped;
//! - unquoted words are `[A-Za-z_\x80-\xff][A-Za-z0-9_$\x80-\xff]*` and carry
//!   their [`Keyword`];
//! - `"quoted identifiers"` double an embedded `"`;
//! - strings are `'standard'` (`''` for a quote; backslash escapes too
//!   when `standard_conforming_strings` is off), `E'escaped'` (backslash
//!   escapes too), `U&'unicode'` (see `unicode_literal`) or
//!   `$tag$dollar-quoted$tag$`; quoted strings separated by whitespace with
//!   a newline are one token (SQL's continuation, see `strlit`);
//! - numbers are `digits[.digits][e[+-]digits]` or `.digits[...]`; as in
//!   PostgreSQL 15, `123abc` is the number `123` followed by the word `abc`;
//! - an operator is the longest run of `+-*/<>=~!@#%^&|` and backtick/`?`, cut at
//!   a comment start, and a multi-character operator loses trailing `+`/`-`
//!   unless it contains one of `~!@#%^&|`?` (so `a=-1` is `a`, `=`, `-`, `1`).
//!
//! A lexical error (unterminated quote or comment, empty quoted identifier)
//! becomes a [`TokenKind::Error`] token that ends the vector; the parser
//! reports it when it reaches it, so earlier syntax errors win as in
//! PostgreSQL. Recognisers for numbers and words use nom.

use nom::bytes::complete::take_while;
use nom::character::complete::{char as nom_char, digit0, digit1, one_of};
use nom::combinator::{opt, recognize};
use nom::sequence::{pair, tuple};
use nom::IResult;

use crate::keywords::Keyword;
use crate::strlit;

/// One token: its kind and the byte range `start..end` of its source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Byte offset of the token's first byte.
    pub start: usize,
    /// Byte offset just past the token's last byte.
    pub end: usize,
}

/// How a string literal was quoted, which decides how its text is unescaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StringStyle {
    /// `'...'`: `''` stands for one quote.
    Standard,
    /// `E'...'`: backslash escapes as well as `''`.
    Escape,
    /// `$tag$...$tag$`: no escapes; the number is the delimiter's length.
    Dollar(usize),
    /// `U&'...'` with its escape character (`\\` unless a `UESCAPE`
    /// clause, which the token then includes, names another). The lexer
    /// has checked its escapes.
    Unicode(u8),
}

/// How a `"quoted identifier"` is written, which decides how its text is
/// read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentQuote {
    /// `"abc"`: the text between the quotes as it is.
    Plain,
    /// `"a""b"`: `""` stands for one quote.
    Doubled,
    /// `U&"..."` with its escape character (see [`StringStyle::Unicode`]).
    Unicode(u8),
}

/// A lexical error, reported when the parser reaches the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LexError {
    /// A `'` string with no closing quote.
    UnterminatedString,
    /// A `"` identifier with no closing quote.
    UnterminatedIdent,
    /// A `$tag$` string with no closing delimiter.
    UnterminatedDollar,
    /// A `/*` comment with no closing `*/`.
    UnterminatedComment,
    /// `""`: an empty quoted identifier.
    ZeroLengthIdent,
    /// A number run into letters (`123abc`, `0x10`, `1.5e`), which
    /// PostgreSQL 15 rejects rather than reading as `123 AS abc`.
    TrailingJunk,
    /// A `U&` escape that is neither `\\XXXX`, `\\+XXXXXX` nor the escape
    /// doubled; the token is empty, at the escape.
    InvalidUnicodeEscape,
    /// A `U&` escape of zero or past U+10FFFF; the token is empty, at the
    /// escape.
    InvalidUnicodeValue,
    /// A `U&` surrogate escape without its partner; the token is empty,
    /// where the partner should be.
    InvalidSurrogatePair,
    /// `UESCAPE` not followed by a simple string literal; the token is the
    /// one that follows.
    UescapeNotString,
    /// A `UESCAPE` string that is not one acceptable character; the token
    /// is that string.
    InvalidUescape,
    /// `U&'...'` while `standard_conforming_strings` is off.
    UnsafeUnicodeString,
}

impl LexError {
    /// PostgreSQL's message for this error, without the `at or near` part.
    pub fn message(self) -> &'static str {
        match self {
            LexError::UnterminatedString => "unterminated quoted string",
            LexError::UnterminatedIdent => "unterminated quoted identifier",
            LexError::UnterminatedDollar => "unterminated dollar-quoted string",
            LexError::UnterminatedComment => "unterminated /* comment",
            LexError::ZeroLengthIdent => "zero-length delimited identifier",
            LexError::TrailingJunk => "trailing junk after numeric literal",
            LexError::InvalidUnicodeEscape => "invalid Unicode escape",
            LexError::InvalidUnicodeValue => "invalid Unicode escape value",
            LexError::InvalidSurrogatePair => "invalid Unicode surrogate pair",
            LexError::UescapeNotString => "UESCAPE must be followed by a simple string literal",
            LexError::InvalidUescape => "invalid Unicode escape character",
            LexError::UnsafeUnicodeString => "unsafe use of string constant with Unicode escapes",
        }
    }

    /// Whether PostgreSQL quotes the token (`... at or near "x"`); the
    /// others point at a place inside a literal without quoting it.
    pub fn quotes_token(self) -> bool {
        !matches!(
            self,
            LexError::InvalidUnicodeEscape
                | LexError::InvalidUnicodeValue
                | LexError::InvalidSurrogatePair
                | LexError::UnsafeUnicodeString
        )
    }

    /// PostgreSQL's hint line for this error, if any.
    pub fn hint(self) -> Option<&'static str> {
        match self {
            LexError::InvalidUnicodeEscape => Some("Unicode escapes must be \\XXXX or \\+XXXXXX."),
            _ => None,
        }
    }

    /// PostgreSQL's detail line for this error, if any.
    pub fn detail(self) -> Option<&'static str> {
        match self {
            LexError::UnsafeUnicodeString => Some(
                "String constants with Unicode escapes cannot be used when standard_conforming_strings is off.",
            ),
            _ => None,
        }
    }
}

/// The kinds of token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An unquoted word with its keyword (`NoKeyword` for a plain identifier).
    Word(Keyword),
    /// A `"quoted identifier"` (or `U&"..."`), and how it is written.
    QuotedIdent(IdentQuote),
    /// A string literal; the flag says whether unescaping is needed.
    String(StringStyle, bool),
    /// A numeric literal.
    Number,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `,`
    Comma,
    /// `;`
    Semicolon,
    /// `.`
    Dot,
    /// `:`
    Colon,
    /// `::`
    DoubleColon,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `^`
    Caret,
    /// `=`
    Eq,
    /// `<>` or `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    LtEq,
    /// `>`
    Gt,
    /// `>=`
    GtEq,
    /// `||`
    Concat,
    /// Any other operator or character heapdb does not support.
    Other,
    /// A lexical error; always the last token before `Eof`.
    Error(LexError),
    /// The end of the input.
    Eof,
}

/// Whether `b` may start an unquoted identifier.
#[inline]
fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

/// Whether `b` may continue an unquoted identifier.
#[inline]
fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Whether `b` is one of PostgreSQL's operator characters.
#[inline]
fn is_op_char(b: u8) -> bool {
    matches!(
        b,
        b'+' | b'-'
            | b'*'
            | b'/'
            | b'<'
            | b'>'
            | b'='
            | b'~'
            | b'!'
            | b'@'
            | b'#'
            | b'%'
            | b'^'
            | b'&'
            | b'|'
            | b'`'
            | b'?'
    )
}

/// nom recogniser for a numeric literal (see the module docs).
fn number(input: &[u8]) -> IResult<&[u8], &[u8]> {
    let mantissa = nom::branch::alt((
        recognize(pair(digit1, opt(pair(nom_char('.'), digit0)))),
        recognize(pair(nom_char('.'), digit1)),
    ));
    let exponent = opt(tuple((one_of("eE"), opt(one_of("+-")), digit1)));
    recognize(pair(mantissa, exponent))(input)
}

/// nom recogniser for the rest of an identifier after its first byte.
fn ident_rest(input: &[u8]) -> IResult<&[u8], &[u8]> {
    take_while(is_ident_char)(input)
}

/// Returns the offset just past the whitespace and comments starting at `pos`,
/// or `Err(start)` for an unterminated block comment starting at `start`.
pub(crate) fn skip_trivia(src: &[u8], mut pos: usize) -> Result<usize, usize> {
    loop {
        match src.get(pos) {
            Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\x0b') => pos += 1,
            Some(b'-') if src.get(pos + 1) == Some(&b'-') => {
                pos = memchr::memchr(b'\n', &src[pos..]).map_or(src.len(), |i| pos + i + 1);
            }
            Some(b'/') if src.get(pos + 1) == Some(&b'*') => {
                let start = pos;
                let mut depth = 1usize;
                pos += 2;
                while depth > 0 {
                    match (src.get(pos), src.get(pos + 1)) {
                        (Some(b'*'), Some(b'/')) => {
                            depth -= 1;
                            pos += 2;
                        }
                        (Some(b'/'), Some(b'*')) => {
                            depth += 1;
                            pos += 2;
                        }
                        (Some(_), _) => pos += 1,
                        (None, _) => return Err(start),
                    }
                }
            }
            _ => return Ok(pos),
        }
    }
}

/// Returns the end of a `'...'` string body starting at `pos` (just past the
/// opening quote): the offset past the closing quote and whether `''` (or,
/// with `backslash`, a backslash escape) occurred; `None` if unterminated.
pub(crate) fn scan_quoted(src: &[u8], mut pos: usize, backslash: bool) -> Option<(usize, bool)> {
    let mut escapes = false;
    loop {
        let i = memchr::memchr2(b'\'', b'\\', &src[pos..])?;
        pos += i;
        if src[pos] == b'\\' {
            if backslash {
                escapes = true;
                pos += 2;
                if pos > src.len() {
                    return None;
                }
            } else {
                pos += 1;
            }
            continue;
        }
        if src.get(pos + 1) == Some(&b'\'') {
            escapes = true;
            pos += 2;
            continue;
        }
        return Some((pos + 1, escapes));
    }
}

/// If a dollar-quote delimiter (`$$` or `$tag$`) starts at `pos`, its length.
pub(crate) fn dollar_tag_len(src: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    if let Some(&b) = src.get(i) {
        if b != b'$' && !is_ident_start(b) {
            return None;
        }
    }
    while let Some(&b) = src.get(i) {
        if b == b'$' {
            return Some(i + 1 - pos);
        }
        if !is_ident_char(b) {
            return None;
        }
        i += 1;
    }
    None
}

/// Lexes all of `text` with `standard_conforming_strings` on. The vector
/// always ends with an `Eof` token whose range is `len..len`; a lexical
/// error token, if any, comes just before it.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::with_capacity(text.len() / 3 + 4);
    Lexer::new(text).lex_into(&mut tokens, false);
    tokens
}

/// A lexer that can hand out the tokens of a script one statement at a time
/// (see [`Lexer::next_statement`]), so parsing a long script keeps one
/// small, reused token vector instead of one for the whole text.
#[derive(Clone, Debug)]
pub struct Lexer<'a> {
    /// The text being lexed.
    text: &'a str,
    /// Byte offset of the next unread character.
    pos: usize,
    /// Whether the end of the text (or a lexical error) has been reached.
    done: bool,
    /// `standard_conforming_strings`: whether a `'...'` string takes
    /// backslashes literally (else they escape, as in `E'...'`).
    std_strings: bool,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `text`, with `standard_conforming_strings` on.
    pub fn new(text: &'a str) -> Lexer<'a> {
        Lexer {
            text,
            pos: 0,
            done: false,
            std_strings: true,
        }
    }

    /// The same lexer with `standard_conforming_strings` set to `on`.
    pub fn standard_strings(mut self, on: bool) -> Lexer<'a> {
        self.std_strings = on;
        self
    }

    /// Whether all of the text has been handed out.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Replaces `tokens` with the tokens up to and including the next
    /// semicolon (or to the end of the text), followed by an `Eof` token.
    /// That `Eof` is a stand-in for "more follows" unless [`Lexer::is_done`].
    /// No statement contains a semicolon token, so a parser never looks
    /// past one.
    pub fn next_statement(&mut self, tokens: &mut Vec<Token>) {
        tokens.clear();
        self.lex_into(tokens, true);
    }

    /// Appends tokens to `tokens` (stopping after a semicolon when
    /// `stop_at_semicolon`), then an `Eof` token at the stopping point.
    fn lex_into(&mut self, tokens: &mut Vec<Token>, stop_at_semicolon: bool) {
        let src = self.text.as_bytes();
        let mut pos = self.pos;
        loop {
            pos = match skip_trivia(src, pos) {
                Ok(p) => p,
                Err(start) => {
                    tokens.push(Token {
                        kind: TokenKind::Error(LexError::UnterminatedComment),
                        start,
                        end: src.len(),
                    });
                    pos = src.len();
                    break;
                }
            };
            if pos >= src.len() {
                break;
            }
            let token = self.token_at(pos);
            tokens.push(token);
            pos = token.end;
            if matches!(token.kind, TokenKind::Error(_)) {
                pos = src.len();
                break;
            }
            if stop_at_semicolon && token.kind == TokenKind::Semicolon {
                self.pos = pos;
                tokens.push(Token {
                    kind: TokenKind::Eof,
                    start: pos,
                    end: pos,
                });
                return;
            }
        }
        self.pos = pos;
        self.done = true;
        tokens.push(Token {
            kind: TokenKind::Eof,
            start: src.len(),
            end: src.len(),
        });
    }

    /// The text being lexed.
    pub(crate) fn text(&self) -> &'a str {
        self.text
    }

    /// Whether `standard_conforming_strings` is on.
    pub(crate) fn std_strings(&self) -> bool {
        self.std_strings
    }

    /// The token starting at `start` (not at trivia or the end). An error
    /// token's range is what its message quotes or points at.
    #[inline(always)]
    pub(crate) fn token_at(&self, start: usize) -> Token {
        let text = self.text;
        let src = text.as_bytes();
        let mut pos = start;
        let b = src[pos];
        let kind = match b {
            b'(' => single(&mut pos, TokenKind::LParen),
            b')' => single(&mut pos, TokenKind::RParen),
            b'[' => single(&mut pos, TokenKind::LBracket),
            b']' => single(&mut pos, TokenKind::RBracket),
            b',' => single(&mut pos, TokenKind::Comma),
            b';' => single(&mut pos, TokenKind::Semicolon),
            b':' => {
                if src.get(pos + 1) == Some(&b':') {
                    pos += 2;
                    TokenKind::DoubleColon
                } else {
                    single(&mut pos, TokenKind::Colon)
                }
            }
            b'\'' => {
                let style = if self.std_strings {
                    StringStyle::Standard
                } else {
                    StringStyle::Escape
                };
                strlit::lex_string(src, &mut pos, 1, style)
            }
            b'e' | b'E' if src.get(pos + 1) == Some(&b'\'') => {
                strlit::lex_string(src, &mut pos, 2, StringStyle::Escape)
            }
            b'u' | b'U'
                if src.get(pos + 1) == Some(&b'&')
                    && matches!(src.get(pos + 2), Some(b'\'' | b'"')) =>
            {
                return crate::unicode_literal::lex_unicode(self, start);
            }
            b'"' => lex_quoted_ident(src, &mut pos),
            b'$' => match dollar_tag_len(src, pos) {
                Some(tag_len) => {
                    let tag = &src[pos..pos + tag_len];
                    let body = pos + tag_len;
                    match memchr::memmem::find(&src[body..], tag) {
                        Some(i) => {
                            pos = body + i + tag_len;
                            TokenKind::String(StringStyle::Dollar(tag_len), false)
                        }
                        None => {
                            pos = src.len();
                            TokenKind::Error(LexError::UnterminatedDollar)
                        }
                    }
                }
                None => single(&mut pos, TokenKind::Other),
            },
            b'0'..=b'9' => lex_number(src, &mut pos),
            b'.' if src.get(pos + 1).is_some_and(u8::is_ascii_digit) => lex_number(src, &mut pos),
            b'.' => single(&mut pos, TokenKind::Dot),
            _ if is_ident_start(b) => {
                let (rest, _) = ident_rest(&src[pos + 1..]).expect("take_while cannot fail");
                pos = src.len() - rest.len();
                TokenKind::Word(Keyword::lookup(&text[start..pos]))
            }
            _ if is_op_char(b) => lex_operator(src, &mut pos),
            _ => {
                // Any other character is one unsupported token of one
                // character (a non-ASCII byte always starts a word).
                let len = text[pos..].chars().next().map_or(1, char::len_utf8);
                pos += len;
                TokenKind::Other
            }
        };
        Token {
            kind,
            start,
            end: pos,
        }
    }
}

/// Consumes one byte and returns `kind`.
#[inline]
fn single(pos: &mut usize, kind: TokenKind) -> TokenKind {
    *pos += 1;
    kind
}

/// Lexes a `"quoted identifier"` starting at `*pos`.
pub(crate) fn lex_quoted_ident(src: &[u8], pos: &mut usize) -> TokenKind {
    let mut i = *pos + 1;
    let mut escapes = false;
    loop {
        match memchr::memchr(b'"', &src[i..]) {
            None => {
                *pos = src.len();
                return TokenKind::Error(LexError::UnterminatedIdent);
            }
            Some(j) => {
                i += j;
                if src.get(i + 1) == Some(&b'"') {
                    escapes = true;
                    i += 2;
                    continue;
                }
                let empty = i == *pos + 1;
                *pos = i + 1;
                return if empty {
                    TokenKind::Error(LexError::ZeroLengthIdent)
                } else {
                    TokenKind::QuotedIdent(if escapes {
                        IdentQuote::Doubled
                    } else {
                        IdentQuote::Plain
                    })
                };
            }
        }
    }
}

/// Lexes a number starting at `*pos` (a digit, or `.` before a digit).
/// A number directly followed by identifier characters is one error token
/// over both (`123abc`, `1e5x`), and so is an exponent marker without
/// digits (`1.5e`, `1.5e+`), as PostgreSQL 15's scanner has them.
fn lex_number(src: &[u8], pos: &mut usize) -> TokenKind {
    let (rest, _) = number(&src[*pos..]).expect("caller checked a digit starts the number");
    let end = src.len() - rest.len();
    *pos = end;
    match src.get(end) {
        Some(b'e' | b'E')
            if matches!(src.get(end + 1), Some(b'+' | b'-'))
                && !src.get(end + 2).is_some_and(u8::is_ascii_digit) =>
        {
            *pos = end + 2;
            TokenKind::Error(LexError::TrailingJunk)
        }
        Some(&b) if is_ident_start(b) => {
            let (rest, _) = ident_rest(&src[end..]).expect("take_while cannot fail");
            *pos = src.len() - rest.len();
            TokenKind::Error(LexError::TrailingJunk)
        }
        _ => TokenKind::Number,
    }
}

/// Lexes an operator starting at `*pos` (see the module docs for the rules).
fn lex_operator(src: &[u8], pos: &mut usize) -> TokenKind {
    let start = *pos;
    let mut end = start;
    while end < src.len() && is_op_char(src[end]) {
        // A comment start ends the operator.
        if end > start && (src[end..].starts_with(b"--") || src[end..].starts_with(b"/*")) {
            break;
        }
        end += 1;
    }
    let op = &src[start..end];
    let mut len = op.len();
    if len > 1 && !op.iter().any(|b| b"~!@#^&|`?%".contains(b)) {
        while len > 1 && matches!(op[len - 1], b'+' | b'-') {
            len -= 1;
        }
    }
    *pos = start + len;
    match &op[..len] {
        b"+" => TokenKind::Plus,
        b"-" => TokenKind::Minus,
        b"*" => TokenKind::Star,
        b"/" => TokenKind::Slash,
        b"%" => TokenKind::Percent,
        b"^" => TokenKind::Caret,
        b"=" => TokenKind::Eq,
        b"<>" | b"!=" => TokenKind::NotEq,
        b"<" => TokenKind::Lt,
        b"<=" => TokenKind::LtEq,
        b">" => TokenKind::Gt,
        b">=" => TokenKind::GtEq,
        b"||" => TokenKind::Concat,
        _ => TokenKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text).into_iter().map(|t| t.kind).collect()
    }

    fn texts(text: &str) -> Vec<&str> {
        tokenize(text)
            .into_iter()
            .map(|t| &text[t.start..t.end])
            .collect()
    }

    #[test]
    fn words_numbers_and_punctuation() {
        assert_eq!(
            texts("SELECT a1, 1.5e3 FROM t;"),
            ["SELECT", "a1", ",", "1.5e3", "FROM", "t", ";", ""]
        );
        assert_eq!(
            kinds("select .5 5. 1e-3 1 e")[..6],
            [
                TokenKind::Word(Keyword::Select),
                TokenKind::Number,
                TokenKind::Number,
                TokenKind::Number,
                TokenKind::Number,
                TokenKind::Word(Keyword::NoKeyword),
            ]
        );
        // A number run into letters is one (error) token, as in PostgreSQL 15.
        assert_eq!(texts("123abc"), ["123abc", ""]);
        assert_eq!(texts("a.b.*"), ["a", ".", "b", ".", "*", ""]);
        assert_eq!(texts("x::int"), ["x", "::", "int", ""]);
    }

    #[test]
    fn operators_follow_postgres_rules() {
        assert_eq!(texts("a=-1"), ["a", "=", "-", "1", ""]);
        assert_eq!(
            texts("a<>b!=c<=d>=e||f"),
            ["a", "<>", "b", "!=", "c", "<=", "d", ">=", "e", "||", "f", ""]
        );
        assert_eq!(kinds("a @ b")[1], TokenKind::Other);
        assert_eq!(texts("a*-1"), ["a", "*", "-", "1", ""]);
        assert_eq!(texts("1--comment\n+2"), ["1", "+", "2", ""]);
    }

    #[test]
    fn strings_and_identifiers() {
        assert_eq!(
            kinds("'a''b' E'x\\'y' $$q$$ $t$ $$ $t$ \"Q\"\"x\"")[..5],
            [
                TokenKind::String(StringStyle::Standard, true),
                TokenKind::String(StringStyle::Escape, true),
                TokenKind::String(StringStyle::Dollar(2), false),
                TokenKind::String(StringStyle::Dollar(3), false),
                TokenKind::QuotedIdent(IdentQuote::Doubled),
            ]
        );
        assert_eq!(texts("'it''s' x"), ["'it''s'", "x", ""]);
    }

    #[test]
    fn comments_nest() {
        assert_eq!(texts("a /* x /* y */ z */ b -- c\nd"), ["a", "b", "d", ""]);
    }

    #[test]
    fn lexical_errors_end_the_stream() {
        assert_eq!(
            kinds("select 'abc"),
            [
                TokenKind::Word(Keyword::Select),
                TokenKind::Error(LexError::UnterminatedString),
                TokenKind::Eof
            ]
        );
        assert_eq!(
            kinds("a /* b")[1],
            TokenKind::Error(LexError::UnterminatedComment)
        );
        assert_eq!(
            kinds("\"abc")[0],
            TokenKind::Error(LexError::UnterminatedIdent)
        );
        assert_eq!(
            kinds("\"\"")[0],
            TokenKind::Error(LexError::ZeroLengthIdent)
        );
        assert_eq!(
            kinds("$a$ x")[0],
            TokenKind::Error(LexError::UnterminatedDollar)
        );
        assert_eq!(
            kinds("E'\\")[0],
            TokenKind::Error(LexError::UnterminatedString)
        );
        for junk in [
            "123abc", "0x10", "1.5e", "1.5e+", "1e5x", ".5a", "1_000", "1é",
        ] {
            assert_eq!(
                kinds(junk),
                [TokenKind::Error(LexError::TrailingJunk), TokenKind::Eof],
                "{junk}"
            );
        }
        assert_eq!(kinds("1e5 x")[0], TokenKind::Number);
        assert_eq!(kinds("1.5e-3")[0], TokenKind::Number);
    }
}
