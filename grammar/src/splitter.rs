//! The script splitter: text to statements, the way psql reads a script.
//!
//! A statement ends at a semicolon outside quotes (`'...'`, `E'...'`,
//! `"..."`, `$tag$...$tag$`), comments (`-- ...`, nested `/* ... */`) and
//! parentheses. Whitespace and comments before a statement are dropped, so a
//! piece's text starts at its first token (error offsets from the parser are
//! relative to it) and its `start_line` is that token's line.
//!
//! Backslash meta-commands: a line whose first character outside any
//! statement (after whitespace) is `\` is returned as a [`PieceKind::Meta`]
//! piece holding that line (without its newline), so the shell sees
//! `\timing`, `\d t` or `\q` in script order. A backslash inside a statement
//! is SQL text (psql would also act on `select 1 \g`; heapdb's shell expects
//! meta-commands on lines of their own).
//!
//! `COPY ... FROM STDIN` data: after the shell runs such a statement it calls
//! [`Splitter::take_copy_data`], which returns the following lines up to a
//! line `\.` (or the end of the text) and resumes splitting after it.
//!
//! [`is_incomplete`] tells a shell whether its buffered input ends inside a
//! statement (no final semicolon yet), a quote, a comment or a dollar quote:
//! then it shows the continuation prompt and reads another line.

use std::ops::Range;

use crate::lexer::{dollar_tag_len, skip_trivia};

/// What a piece of a script is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieceKind {
    /// SQL text for the parser.
    Sql,
    /// A backslash meta-command line for the shell.
    Meta,
}

/// One statement (or meta-command line) of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The statement's text, from its first token to just before its
    /// semicolon (trailing whitespace trimmed); for a meta-command, the line.
    pub text: &'a str,
    /// Where `text` lies in the script.
    pub range: Range<usize>,
    /// 1-based line of the first character of `text`.
    pub start_line: usize,
    /// 1-based line of the statement's last character (its semicolon, or the
    /// end of the text if unterminated).
    pub end_line: usize,
    /// SQL or meta-command.
    pub kind: PieceKind,
    /// Whether an SQL piece ended with a semicolon (meta-commands: always).
    /// An unterminated piece is the script's last: a statement without a
    /// final semicolon, or one that ends inside a quote or comment.
    pub terminated: bool,
}

/// Splits `text` into statements and meta-command lines (see the module docs).
pub fn split_statements(text: &str) -> Vec<Piece<'_>> {
    Splitter::new(text).collect()
}

/// Whether `text` ends inside an unfinished statement, quote, comment or
/// dollar quote: a shell should read more input before running it.
pub fn is_incomplete(text: &str) -> bool {
    Splitter::new(text).last().is_some_and(|p| !p.terminated)
}

/// An iterator over the pieces of a script that the caller can steer (see
/// [`Splitter::take_copy_data`]).
#[derive(Clone, Debug)]
pub struct Splitter<'a> {
    /// The script.
    text: &'a str,
    /// Byte offset of the next unread character.
    pos: usize,
    /// 1-based line number at `pos`.
    line: usize,
}

impl<'a> Splitter<'a> {
    /// A splitter at the start of `text`.
    pub fn new(text: &'a str) -> Splitter<'a> {
        Splitter {
            text,
            pos: 0,
            line: 1,
        }
    }

    /// Byte offset of the next unread character.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Moves the cursor to `pos` (clamped to the text, counted lines kept
    /// right).
    fn advance_to(&mut self, pos: usize) {
        let pos = pos.min(self.text.len());
        if pos > self.pos {
            self.line += count_newlines(&self.text.as_bytes()[self.pos..pos]);
        }
        self.pos = pos;
    }

    /// Takes the data lines of a `COPY ... FROM STDIN` that has just been
    /// returned: the rest of the current line is skipped, then lines are
    /// returned up to (not including) a line that is exactly `\.`, which is
    /// consumed. Without such a line, the data runs to the end of the text.
    pub fn take_copy_data(&mut self) -> &'a str {
        let bytes = self.text.as_bytes();
        // Skip to the start of the next line.
        let next_line =
            memchr::memchr(b'\n', &bytes[self.pos..]).map_or(bytes.len(), |i| self.pos + i + 1);
        self.advance_to(next_line);
        let start = self.pos;
        let mut line_start = start;
        while line_start < bytes.len() {
            let line_end =
                memchr::memchr(b'\n', &bytes[line_start..]).map_or(bytes.len(), |i| line_start + i);
            let line = &self.text[line_start..line_end];
            if line.trim_end_matches('\r') == "\\." {
                let after = (line_end + 1).min(bytes.len());
                self.advance_to(after);
                return &self.text[start..line_start];
            }
            line_start = line_end + 1;
        }
        self.advance_to(bytes.len());
        &self.text[start..]
    }
}

impl<'a> Iterator for Splitter<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        let bytes = self.text.as_bytes();
        // Skip whitespace, comments and empty statements.
        loop {
            match skip_trivia(bytes, self.pos) {
                Ok(p) => self.advance_to(p),
                Err(comment_start) => {
                    // An unterminated comment: the rest is an unfinished piece.
                    self.advance_to(comment_start);
                    let start_line = self.line;
                    let range = comment_start..bytes.len();
                    self.advance_to(bytes.len());
                    return Some(Piece {
                        text: &self.text[range.clone()],
                        range,
                        start_line,
                        end_line: self.line,
                        kind: PieceKind::Sql,
                        terminated: false,
                    });
                }
            }
            if bytes.get(self.pos) == Some(&b';') {
                self.advance_to(self.pos + 1);
                continue;
            }
            break;
        }
        if self.pos >= bytes.len() {
            return None;
        }
        let start = self.pos;
        let start_line = self.line;
        if bytes[start] == b'\\' {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
            let text = self.text[start..end].trim_end_matches('\r');
            let range = start..start + text.len();
            self.advance_to(end);
            return Some(Piece {
                text,
                range,
                start_line,
                end_line: start_line,
                kind: PieceKind::Meta,
                terminated: true,
            });
        }
        let (end, terminated) = scan_statement(bytes, start);
        let text = self.text[start..end].trim_end();
        let range = start..start + text.len();
        // The statement's last character: its semicolon, or the text's end.
        self.advance_to(end);
        let end_line = self.line;
        if terminated {
            self.advance_to(end + 1);
        }
        Some(Piece {
            text,
            range,
            start_line,
            end_line,
            kind: PieceKind::Sql,
            terminated,
        })
    }
}

fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Scans a statement starting at `start`: returns the offset of its
/// terminating semicolon and `true`, or the text's length and `false` when
/// the text ends first (inside the statement, a quote or a comment).
fn scan_statement(bytes: &[u8], start: usize) -> (usize, bool) {
    let len = bytes.len();
    let mut i = start;
    let mut paren_depth = 0usize;
    // Whether the previous byte continues an identifier or number (so `E'`
    // and `$tag$` cannot start here).
    let mut in_word = false;
    while i < len {
        let b = bytes[i];
        match b {
            b';' if paren_depth == 0 => return (i, true),
            b'\'' => {
                let escape = !not_e_string(bytes, i, start);
                match crate::lexer::scan_quoted(bytes, i + 1, escape) {
                    Some((end, _)) => i = end,
                    None => return (len, false),
                }
                in_word = false;
                continue;
            }
            b'"' => {
                // `""` inside is a doubled quote: scanning on finds the pair.
                match memchr::memchr(b'"', &bytes[i + 1..]) {
                    Some(j) => i = i + 1 + j + 1,
                    None => return (len, false),
                }
                in_word = false;
                continue;
            }
            b'$' if !in_word => {
                if let Some(tag_len) = dollar_tag_len(bytes, i) {
                    let tag = &bytes[i..i + tag_len];
                    let body = i + tag_len;
                    match memchr::memmem::find(&bytes[body..], tag) {
                        Some(j) => i = body + j + tag_len,
                        None => return (len, false),
                    }
                    in_word = false;
                    continue;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                i = memchr::memchr(b'\n', &bytes[i..]).map_or(len, |j| i + j);
                in_word = false;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => match skip_trivia(bytes, i) {
                Ok(end) => {
                    i = end;
                    in_word = false;
                    continue;
                }
                Err(_) => return (len, false),
            },
            b'(' => paren_depth += 1,
            b')' => paren_depth = paren_depth.saturating_sub(1),
            _ => {}
        }
        in_word = b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
        i += 1;
    }
    (len, false)
}

/// Whether the quote at `quote` opens an `E'...'` string: it follows an `e`
/// or `E` that starts a word.
fn not_e_string(bytes: &[u8], quote: usize, start: usize) -> bool {
    if quote == start || !matches!(bytes[quote - 1], b'e' | b'E') {
        return true;
    }
    let before = quote - 1;
    // The `E` must not itself continue a word (`somee'x'` is no E-string).
    before > start && {
        let b = bytes[before - 1];
        b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<&str> {
        split_statements(script)
            .into_iter()
            .map(|p| p.text)
            .collect()
    }

    #[test]
    fn splits_on_top_level_semicolons() {
        assert_eq!(
            texts("select 1; select 2 ;\n\n;select 3"),
            ["select 1", "select 2", "select 3"]
        );
        assert_eq!(
            texts("select ';', \"a;b\", $$x;y$$, $t$ $$; $t$, E'\\';' ; x"),
            ["select ';', \"a;b\", $$x;y$$, $t$ $$; $t$, E'\\';'", "x"]
        );
        assert_eq!(texts("select (1;2); x"), ["select (1;2)", "x"]);
        assert_eq!(
            texts("select 1 -- ;\n; /* ; /* ; */ */ x"),
            ["select 1 -- ;", "x"]
        );
        assert_eq!(texts("a$b$; c"), ["a$b$", "c"]);
        assert_eq!(texts("somee'x;'; y"), ["somee'x;'", "y"]);
    }

    #[test]
    fn lines_and_ranges() {
        let script = "-- header\nselect 1;\n\nselect\n  2;\nselect 3";
        let pieces = split_statements(script);
        assert_eq!(pieces.len(), 3);
        assert_eq!((pieces[0].start_line, pieces[0].end_line), (2, 2));
        assert_eq!((pieces[1].start_line, pieces[1].end_line), (4, 5));
        assert_eq!((pieces[2].start_line, pieces[2].end_line), (6, 6));
        assert!(pieces[1].terminated && !pieces[2].terminated);
        assert_eq!(&script[pieces[1].range.clone()], "select\n  2");
    }

    #[test]
    fn meta_commands_are_their_own_pieces() {
        let pieces = split_statements("\\timing on\nselect 1;\n  \\d t\r\nselect 2;");
        let kinds: Vec<_> = pieces
            .iter()
            .map(|p| (p.kind, p.text, p.start_line))
            .collect();
        assert_eq!(
            kinds,
            [
                (PieceKind::Meta, "\\timing on", 1),
                (PieceKind::Sql, "select 1", 2),
                (PieceKind::Meta, "\\d t", 3),
                (PieceKind::Sql, "select 2", 4),
            ]
        );
    }

    #[test]
    fn copy_data_is_skipped_on_request() {
        let script = "copy t from stdin;\n1\ta\n2\tb\n\\.\nselect 1;";
        let mut s = Splitter::new(script);
        assert_eq!(s.next().map(|p| p.text), Some("copy t from stdin"));
        assert_eq!(s.take_copy_data(), "1\ta\n2\tb\n");
        let p = s.next().expect("a statement follows the data");
        assert_eq!((p.text, p.start_line), ("select 1", 5));
        assert!(s.next().is_none());
        let mut s = Splitter::new("copy t from stdin;\n1\n");
        s.next();
        assert_eq!(s.take_copy_data(), "1\n");
        assert!(s.next().is_none());
    }

    #[test]
    fn incomplete_input() {
        for text in [
            "select 1",
            "select 1; select",
            "select 'abc;",
            "select \"a",
            "select $$ ;",
            "select 1 /* ; ",
            "/* x",
            "select (1;",
            "select E'\\';",
        ] {
            assert!(is_incomplete(text), "{text:?} should be incomplete");
        }
        for text in [
            "",
            "  \n",
            "select 1;",
            "select 1; -- more",
            "select 1; /* c */",
            "\\q",
            "select 1;\n\\x",
        ] {
            assert!(!is_incomplete(text), "{text:?} should be complete");
        }
    }
}
