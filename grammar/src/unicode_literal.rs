//! Lexing `U&'...'` strings and `U&"..."` identifiers with their optional
//! `UESCAPE 'c'` clause, as PostgreSQL's scanner and its `base_yylex`
//! filter do.
//!
//! The whole construct is one token (the `UESCAPE` clause included), whose
//! kind carries the escape character, so the parser reads the value with
//! no look-ahead of its own. Every escape is checked here, so a bad one
//! is a lexical error at the place PostgreSQL points to:
//! - `UESCAPE` followed by anything but a simple string literal (`'...'`,
//!   `E'...'`, `$$...$$`), quoting that token;
//! - a `UESCAPE` string that is not one character, or is a hex digit,
//!   `+`, a quote or whitespace, quoting the string;
//! - a malformed escape, a bad code point or a broken surrogate pair, at
//!   the escape (its offset in the dequoted text plus three, for `U&'`).
//!
//! With `standard_conforming_strings` off a `U&'...'` string is an error
//! at its start; `U&"..."` identifiers are always accepted.

use crate::keywords::Keyword;
use crate::lexer::{
    lex_quoted_ident, skip_trivia, IdentQuote, LexError, Lexer, StringStyle, Token, TokenKind,
};
use crate::strlit::{self, lex_string, UnicodeEscapeError};

/// An error token of `kind` over `start..end`.
fn error(kind: LexError, start: usize, end: usize) -> Token {
    Token {
        kind: TokenKind::Error(kind),
        start,
        end,
    }
}

/// Lexes the `U&'...'` or `U&"..."` construct starting at `start`.
#[cold]
#[inline(never)]
pub(crate) fn lex_unicode(lexer: &Lexer<'_>, start: usize) -> Token {
    let text = lexer.text();
    let src = text.as_bytes();
    let string = src[start + 2] == b'\'';
    if string && !lexer.std_strings() {
        return error(LexError::UnsafeUnicodeString, start, start);
    }
    let mut end = start + 2;
    let body = if string {
        match lex_string(src, &mut end, 1, StringStyle::Standard) {
            TokenKind::Error(e) => return error(e, start, end),
            _ => strlit::dequote(&text[start + 3..]),
        }
    } else {
        match lex_quoted_ident(src, &mut end) {
            TokenKind::Error(e) => return error(e, start, end),
            _ => strlit::undouble_ident(&text[start + 3..]),
        }
    };
    let (escape, end) = match uescape(lexer, end) {
        Ok(Some((escape, clause_end))) => (escape, clause_end),
        Ok(None) => (b'\\', end),
        Err(token) => return token,
    };
    if let Err((at, e)) = strlit::udeescape(&body, escape) {
        let kind = match e {
            UnicodeEscapeError::Malformed => LexError::InvalidUnicodeEscape,
            UnicodeEscapeError::Value => LexError::InvalidUnicodeValue,
            UnicodeEscapeError::SurrogatePair => LexError::InvalidSurrogatePair,
        };
        let at = start + 3 + at;
        return error(kind, at, at);
    }
    let kind = if string {
        TokenKind::String(StringStyle::Unicode(escape), true)
    } else {
        TokenKind::QuotedIdent(IdentQuote::Unicode(escape))
    };
    Token { kind, start, end }
}

/// Reads an optional `UESCAPE 'c'` clause after a literal ending at
/// `pos`: the escape character and the clause's end, `None` when there is
/// no clause, or the error token.
fn uescape(lexer: &Lexer<'_>, pos: usize) -> Result<Option<(u8, usize)>, Token> {
    let text = lexer.text();
    let src = text.as_bytes();
    let Ok(word) = skip_trivia(src, pos) else {
        // The unterminated comment is reported as the next token.
        return Ok(None);
    };
    let word_end = word + "uescape".len();
    let is_uescape = src
        .get(word..word_end)
        .is_some_and(|w| w.eq_ignore_ascii_case(b"uescape"))
        && !src
            .get(word_end)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80);
    if !is_uescape {
        return Ok(None);
    }
    debug_assert_eq!(Keyword::lookup("uescape"), Keyword::Uescape);
    let at = match skip_trivia(src, word_end) {
        Ok(at) => at,
        Err(comment) => return Err(error(LexError::UnterminatedComment, comment, src.len())),
    };
    if at >= src.len() {
        return Err(error(LexError::UescapeNotString, at, at));
    }
    let token = third_token(lexer, at);
    let value = match token.kind {
        TokenKind::Error(_) => return Err(token),
        TokenKind::String(StringStyle::Standard, _) => strlit::dequote(&text[at + 1..]),
        TokenKind::String(StringStyle::Escape, _) => {
            let open = if src[at] == b'\'' { 1 } else { 2 };
            match strlit::unescape_e_string(&text[at + open..token.end - 1]) {
                Ok(v) => v,
                // PostgreSQL's scanner reports a bad escape in this string
                // as such; here it is simply not a valid escape character.
                Err(_) => return Err(error(LexError::InvalidUescape, at, token.end)),
            }
        }
        TokenKind::String(StringStyle::Dollar(tag), _) => {
            text[at + tag..token.end - tag].to_string()
        }
        _ => return Err(error(LexError::UescapeNotString, at, token.end)),
    };
    match value.as_bytes() {
        [c] if strlit::valid_uescape(*c) => Ok(Some((*c, token.end))),
        _ => Err(error(LexError::InvalidUescape, at, token.end)),
    }
}

/// The token after `UESCAPE`; another `U&` construct there is read without
/// a clause of its own (it is not a simple string literal either way).
fn third_token(lexer: &Lexer<'_>, at: usize) -> Token {
    let src = lexer.text().as_bytes();
    let unicode = matches!(src[at], b'u' | b'U')
        && src.get(at + 1) == Some(&b'&')
        && matches!(src.get(at + 2), Some(b'\'' | b'"'));
    if !unicode {
        return lexer.token_at(at);
    }
    let mut end = at + 2;
    let kind = if src[at + 2] == b'\'' {
        lex_string(src, &mut end, 1, StringStyle::Standard)
    } else {
        lex_quoted_ident(src, &mut end)
    };
    match kind {
        TokenKind::Error(_) => Token {
            kind,
            start: at,
            end,
        },
        _ => Token {
            kind: TokenKind::Other,
            start: at,
            end,
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::lexer::{tokenize, IdentQuote, LexError, StringStyle, TokenKind};

    fn first(text: &str) -> (TokenKind, &str) {
        let t = tokenize(text)[0];
        (t.kind, &text[t.start..t.end])
    }

    #[test]
    fn the_uescape_clause_is_part_of_the_token() {
        let s = "U&'d!0061t' UESCAPE '!' AS x";
        let string = TokenKind::String(StringStyle::Unicode(b'!'), true);
        assert_eq!(first(s), (string, "U&'d!0061t' UESCAPE '!'"));
        let s = "u&\"a\\0041\" x";
        let ident = TokenKind::QuotedIdent(IdentQuote::Unicode(b'\\'));
        assert_eq!(first(s), (ident, "u&\"a\\0041\""));
        // `uescapes` is another word.
        let s = "U&'a' uescapes";
        assert_eq!(first(s).1, "U&'a'");
        // A continued literal, then the clause.
        let s = "U&'a'\n'b' uescape '!'";
        assert_eq!(first(s).1, s);
    }

    #[test]
    fn errors_point_where_postgres_points() {
        let err = |text: &str| match first(text) {
            (TokenKind::Error(e), at) => (e, at.to_string()),
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            err("U&'a' UESCAPE +"),
            (LexError::UescapeNotString, "+".into())
        );
        assert_eq!(
            err("U&'a' UESCAPE 'ab' x"),
            (LexError::InvalidUescape, "'ab'".into())
        );
        assert_eq!(
            err("U&'a' UESCAPE ''"),
            (LexError::InvalidUescape, "''".into())
        );
        assert_eq!(
            err("U&'\\db99'"),
            (LexError::InvalidSurrogatePair, String::new())
        );
        assert_eq!(err("U&'a"), (LexError::UnterminatedString, "U&'a".into()));
        assert_eq!(err("U&\"\""), (LexError::ZeroLengthIdent, "U&\"\"".into()));
        let t = tokenize("select U&'x\\061'")[1];
        assert_eq!(
            (t.start, t.kind),
            (11, TokenKind::Error(LexError::InvalidUnicodeEscape))
        );
    }

    #[test]
    fn unicode_strings_are_refused_without_standard_strings() {
        let mut tokens = Vec::new();
        let mut lexer = crate::lexer::Lexer::new("select U&'a', U&\"b\"").standard_strings(false);
        lexer.next_statement(&mut tokens);
        assert_eq!(
            tokens[1].kind,
            TokenKind::Error(LexError::UnsafeUnicodeString)
        );
        assert_eq!(tokens[1].start, 7);
    }
}
