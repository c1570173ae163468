//! Parse errors, positioned the way PostgreSQL positions them.
//!
//! A [`ParseError`] carries the byte offset of the offending token in the
//! text handed to the parser and that token's source text, so the shell can
//! print PostgreSQL's two-part report:
//!
//! ```text
//! ERROR:  syntax error at or near "FROM"
//! LINE 1: SELECT a, FROM t;
//!                   ^
//! ```
//!
//! [`line_col`] turns the byte offset into the `LINE n` number and the
//! caret's column. When the input runs out before the statement is complete
//! the message is `syntax error at end of input`, the offset is the length of
//! the input and `token` is `None`.

use std::fmt;

/// What class of failure a [`ParseError`] is; the SQL layer maps it to a
/// SQLSTATE (see each variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParseErrorKind {
    /// The text is not in the language (SQLSTATE 42601), including lexical
    /// errors such as an unterminated quoted string.
    Syntax,
    /// Nesting is deeper than the parser allows (SQLSTATE 54001, PostgreSQL's
    /// `stack depth limit exceeded`).
    TooDeep,
    /// A well-formed option or type modifier with a value PostgreSQL rejects
    /// (SQLSTATE 22023), e.g. `COPY format "xml" not recognized`.
    InvalidParameterValue,
    /// A byte sequence that is not valid UTF-8 (SQLSTATE 22021), from an
    /// `E'...'` escape such as `\xff`.
    CharacterNotInRepertoire,
    /// A form the grammar reads but PostgreSQL does not support (SQLSTATE
    /// 0A000), e.g. a multiple-column UPDATE item whose source is neither
    /// a sub-SELECT nor a ROW() expression.
    FeatureNotSupported,
    /// A malformed escape of an `E'...'` string (SQLSTATE 22025), e.g.
    /// `\u061` (too few digits).
    InvalidEscapeSequence,
}

/// A parse failure with PostgreSQL's wording and the offending position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The full message, e.g. `syntax error at or near "FROM"`.
    pub message: String,
    /// Byte offset into the parsed text of the offending token (the text's
    /// length when the error is at the end of the input).
    pub offset: usize,
    /// The offending token's source text; `None` at end of input.
    pub token: Option<String>,
    /// The class of the error.
    pub kind: ParseErrorKind,
    /// PostgreSQL's hint line, if it gives one.
    pub hint: Option<&'static str>,
    /// PostgreSQL's detail line, if it gives one.
    pub detail: Option<&'static str>,
}

impl ParseError {
    /// `syntax error at or near "<token>"` at `offset`.
    pub fn near(token: &str, offset: usize) -> ParseError {
        ParseError {
            message: format!("syntax error at or near \"{token}\""),
            offset,
            token: Some(token.to_string()),
            kind: ParseErrorKind::Syntax,
            hint: None,
            detail: None,
        }
    }

    /// `syntax error at end of input`, positioned at `offset` (the input's length).
    pub fn end_of_input(offset: usize) -> ParseError {
        ParseError {
            message: "syntax error at end of input".to_string(),
            offset,
            token: None,
            kind: ParseErrorKind::Syntax,
            hint: None,
            detail: None,
        }
    }

    /// A syntax-class error with a message of its own (e.g. `unrecognized
    /// VACUUM option "foo"`), positioned at `offset` on `token`.
    pub fn other(message: String, offset: usize, token: Option<&str>) -> ParseError {
        ParseError {
            message,
            offset,
            token: token.map(str::to_string),
            kind: ParseErrorKind::Syntax,
            hint: None,
            detail: None,
        }
    }

    /// The same error with another kind.
    pub fn with_kind(mut self, kind: ParseErrorKind) -> ParseError {
        self.kind = kind;
        self
    }

    /// The same error with a hint line (`None` keeps none).
    pub fn with_hint(mut self, hint: Option<&'static str>) -> ParseError {
        self.hint = hint;
        self
    }

    /// The same error with a detail line (`None` keeps none).
    pub fn with_detail(mut self, detail: Option<&'static str>) -> ParseError {
        self.detail = detail;
        self
    }

    /// The line (1-based) and column (1-based, in characters) of the error
    /// within `text`, which must be the text that was parsed.
    pub fn line_col(&self, text: &str) -> (usize, usize) {
        line_col(text, self.offset)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// Converts a byte `offset` into `text` to a 1-based (line, column) pair,
/// counting columns in characters. An offset past the end (or inside a
/// multi-byte character) is clamped to the nearest character boundary before it.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_lines_and_characters() {
        let text = "select 1;\nselect é, x\nfrom";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 7), (1, 8));
        assert_eq!(line_col(text, 10), (2, 1));
        // "é" is two bytes but one column.
        let x = text.find('x').expect("x is in the text");
        assert_eq!(line_col(text, x), (2, 11));
        assert_eq!(line_col(text, text.len()), (3, 5));
        assert_eq!(line_col(text, text.len() + 10), (3, 5));
    }

    #[test]
    fn messages_follow_postgres() {
        assert_eq!(
            ParseError::near("FROM", 3).to_string(),
            "syntax error at or near \"FROM\""
        );
        assert_eq!(
            ParseError::end_of_input(9).to_string(),
            "syntax error at end of input"
        );
    }
}
