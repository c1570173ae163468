//! A direct reading of the most common statement of a bulk script:
//! `INSERT INTO name VALUES (literal, ...);`.
//!
//! A script of 100,000 single-row INSERTs spends most of its parsing in the
//! general machinery (a token vector, keyword lookups, the expression
//! grammar, an AST of boxes) for a statement whose shape is fixed. When the
//! text is exactly that shape — an unquoted, non-keyword table name, one
//! row of unsigned integers or decimals (`42`, `4.5`), plain strings
//! (`'it''s'`, no backslash), `NULL`, `TRUE` or `FALSE`, separated by
//! whitespace, with at most one trailing `;` — [`single_insert`] builds the
//! same tree the parser would (offsets included) in one pass. Anything
//! else, including comments, signs, exponents, quoted names, column lists
//! and several statements, returns `None` and goes through the parser, so
//! this never changes what is accepted or what an error says. A test
//! compares both on generated statements.
//!
//! [`scan_single_insert`] is the same reading without building a tree: it
//! records where the table name and each literal are in the text, into a
//! vector the caller reuses, so a session can bind the literals straight
//! from the statement's bytes (no `String` per literal, no boxes to build
//! and drop). [`single_insert`] builds its tree from that scan, so both
//! accept exactly the same statements.

use crate::ast::{Expr, ExprKind, Insert, Literal, ObjectName, Offset, Query, SetExpr, Statement};
use crate::keywords::Keyword;

/// What a literal of a scanned INSERT is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralKind {
    /// An unsigned integer or decimal (`42`, `4.5`): its text is the digits.
    Number,
    /// A plain string: its text is what lies between the quotes, with a
    /// quote inside still written twice when `doubled` (see
    /// [`ScannedLiteral::string_value`]).
    String {
        /// The text holds `''` for each quote of the value.
        doubled: bool,
    },
    /// `NULL`.
    Null,
    /// `TRUE` or `FALSE`.
    Boolean(bool),
}

/// One literal of a scanned INSERT, by position in the statement's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScannedLiteral {
    /// What it is.
    pub kind: LiteralKind,
    /// Byte offset of its first character (the opening quote of a string),
    /// the offset the parser gives its expression.
    pub offset: usize,
    /// Byte range of its text (see [`LiteralKind`]); empty for NULL and
    /// booleans.
    pub text: (usize, usize),
}

impl ScannedLiteral {
    /// The literal's text in `sql`, the statement it was scanned from.
    pub fn text<'a>(&self, sql: &'a str) -> &'a str {
        &sql[self.text.0..self.text.1]
    }

    /// A string literal's value (quotes undoubled; borrowed unless some
    /// were doubled).
    pub fn string_value<'a>(&self, sql: &'a str) -> std::borrow::Cow<'a, str> {
        let t = self.text(sql);
        match self.kind {
            LiteralKind::String { doubled: true } => t.replace("''", "'").into(),
            _ => t.into(),
        }
    }
}

/// Where the table of a scanned INSERT is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScannedInsert {
    /// Byte range of the table name (an unquoted identifier, not a keyword).
    pub table: (usize, usize),
}

impl ScannedInsert {
    /// The table name as written (fold it to lower case for the catalog).
    pub fn table_name<'a>(&self, sql: &'a str) -> &'a str {
        &sql[self.table.0..self.table.1]
    }
}

/// Reads `sql` when it is a single-row INSERT of literals in the shape of
/// the module doc: the table name's position, and each literal pushed to
/// `lits` (cleared first). `None` (with `lits` in no particular state) for
/// anything else.
pub fn scan_single_insert(sql: &str, lits: &mut Vec<ScannedLiteral>) -> Option<ScannedInsert> {
    lits.clear();
    let b = sql.as_bytes();
    let mut pos = skip_space(b, 0);
    pos = keyword(b, pos, b"insert")?;
    pos = keyword(b, skip_space(b, pos), b"into")?;
    pos = skip_space(b, pos);
    let name_start = pos;
    if !b
        .get(pos)
        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
    {
        return None;
    }
    while b
        .get(pos)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        pos += 1;
    }
    if Keyword::lookup(&sql[name_start..pos]) != Keyword::NoKeyword {
        return None;
    }
    let table = (name_start, pos);
    pos = keyword(b, skip_space(b, pos), b"values")?;
    pos = skip_space(b, pos);
    if b.get(pos) != Some(&b'(') {
        return None;
    }
    pos += 1;
    // Indexing below is bounded by `n` checks; `b.get` where one byte of
    // look-ahead may run past the end. This loop is most of the work of a
    // bulk script's statement, so it is written byte by byte.
    let n = b.len();
    loop {
        pos = skip_space(b, pos);
        if pos >= n {
            return None;
        }
        let start = pos;
        let (kind, text) = match b[pos] {
            b'\'' => {
                let (end, doubled) = string(b, pos)?;
                pos = end;
                (LiteralKind::String { doubled }, (start + 1, end - 1))
            }
            b'0'..=b'9' => {
                pos = digits_end(b, pos + 1);
                if pos < n && b[pos] == b'.' {
                    if !(pos + 1 < n && b[pos + 1].is_ascii_digit()) {
                        return None;
                    }
                    pos = digits_end(b, pos + 2);
                }
                (LiteralKind::Number, (start, pos))
            }
            _ => {
                let kind = match word_at(b, pos)? {
                    4 if b[pos..pos + 4].eq_ignore_ascii_case(b"null") => LiteralKind::Null,
                    4 if b[pos..pos + 4].eq_ignore_ascii_case(b"true") => {
                        LiteralKind::Boolean(true)
                    }
                    5 if b[pos..pos + 5].eq_ignore_ascii_case(b"false") => {
                        LiteralKind::Boolean(false)
                    }
                    _ => return None,
                };
                pos += match kind {
                    LiteralKind::Boolean(false) => 5,
                    _ => 4,
                };
                (kind, (pos, pos))
            }
        };
        lits.push(ScannedLiteral {
            kind,
            offset: start,
            text,
        });
        // Only spaces and tabs after a literal: a newline after a string
        // could start a continuation of it (`'a'` NEWLINE `'b'`).
        while pos < n && matches!(b[pos], b' ' | b'\t') {
            pos += 1;
        }
        match b.get(pos)? {
            b',' => pos += 1,
            b')' => {
                pos += 1;
                break;
            }
            _ => return None,
        }
    }
    pos = skip_space(b, pos);
    if b.get(pos) == Some(&b';') {
        pos = skip_space(b, pos + 1);
    }
    (pos == b.len()).then_some(ScannedInsert { table })
}

/// The tree of `sql` when it is a single-row INSERT of literals in the
/// shape described in the module doc, else `None`.
pub(crate) fn single_insert(sql: &str) -> Option<Statement> {
    let mut lits = Vec::with_capacity(32);
    let scan = scan_single_insert(sql, &mut lits)?;
    let row = lits
        .iter()
        .map(|l| Expr {
            kind: ExprKind::Literal(match l.kind {
                LiteralKind::Number => Literal::Number(l.text(sql).to_string()),
                LiteralKind::String { .. } => Literal::String(l.string_value(sql).into_owned()),
                LiteralKind::Null => Literal::Null,
                LiteralKind::Boolean(v) => Literal::Boolean(v),
            }),
            offset: Offset(l.offset),
        })
        .collect();
    Some(Statement::Insert(Box::new(Insert {
        table: ObjectName {
            schema: None,
            name: scan.table_name(sql).to_ascii_lowercase(),
            offset: Offset(scan.table.0),
        },
        columns: Vec::new(),
        source: Some(Box::new(Query::simple(SetExpr::Values(vec![row])))),
        returning: Vec::new(),
    })))
}

/// The end of the run of ASCII digits starting at `pos`.
fn digits_end(b: &[u8], mut pos: usize) -> usize {
    while pos < b.len() && b[pos].is_ascii_digit() {
        pos += 1;
    }
    pos
}

/// The length of the word (letters, digits, `_`) at `pos`, if one starts
/// there.
fn word_at(b: &[u8], pos: usize) -> Option<usize> {
    let len = b[pos..]
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(b.len() - pos);
    (len > 0).then_some(len)
}

fn skip_space(b: &[u8], mut pos: usize) -> usize {
    while b.get(pos).is_some_and(u8::is_ascii_whitespace) {
        pos += 1;
    }
    pos
}

/// The end of keyword `kw` (lower case) at `pos`, when the word there is
/// exactly it.
fn keyword(b: &[u8], pos: usize, kw: &[u8]) -> Option<usize> {
    let end = pos + kw.len();
    let word = b.get(pos..end)?;
    let ends = !b
        .get(end)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'$');
    (word.eq_ignore_ascii_case(kw) && ends).then_some(end)
}

/// A plain string literal starting at the quote at `pos`: the position
/// after its closing quote, and whether a quote inside was doubled. `None`
/// for a backslash or NUL inside, or no closing quote.
fn string(b: &[u8], pos: usize) -> Option<(usize, bool)> {
    let mut i = pos + 1;
    let mut doubled = false;
    loop {
        i += memchr::memchr3(b'\'', b'\\', 0, &b[i..])?;
        if b[i] != b'\'' {
            return None;
        }
        if b.get(i + 1) == Some(&b'\'') {
            doubled = true;
            i += 2;
        } else {
            return Some((i + 1, doubled));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse_general;

    /// Every statement built from the pieces below: the direct reading,
    /// when it answers, equals the parser's tree including offsets; it
    /// answers for the plain shapes.
    #[test]
    fn single_insert_reads_as_the_parser_does() {
        let heads = [
            "INSERT INTO t VALUES ",
            "insert into fehistory_1 values",
            "  Insert\tInto T1\nValues\n",
            "INSERT INTO values VALUES ",
            "INSERT INTO \"T\" VALUES ",
            "INSERT INTO s.t VALUES ",
            "INSERT INTO t (a) VALUES ",
            "INSERT INTO t$x VALUES ",
            "INSERT INTO _x VALUES",
            "INSERTINTO t VALUES ",
        ];
        let lits = [
            "0",
            "42",
            "007",
            "4.5",
            "1.",
            ".5",
            "1e3",
            "-1",
            "+2",
            "'a'",
            "''",
            "'it''s'",
            "'a\\b'",
            "'é'",
            "NULL",
            "null",
            "True",
            "FALSE",
            "nullx",
            "12abc",
            "'a'\n'b'",
            "'a' 'b'",
            "E'x'",
            "NULL::int",
            "1 + 2",
            "DEFAULT",
            "'Thu Jan 07 15:15:00 1999 EST'",
            "'x'y",
            "1.5.3",
            "  9  ",
            "\t'q'\t",
        ];
        let tails = [
            "",
            ";",
            " ; ",
            ";;",
            "; select 1",
            " -- c",
            "/*c*/",
            ";\n",
            ", (1)",
            " RETURNING *",
        ];
        let mut fast = 0;
        let mut total = 0;
        for (h, head) in heads.iter().enumerate() {
            for (i, a) in lits.iter().enumerate() {
                for (j, b) in lits.iter().enumerate() {
                    if (i + j + h) % 3 != 0 && i != j {
                        continue;
                    }
                    let tail = tails[(i * 7 + j + h) % tails.len()];
                    let sql = format!("{head}({a},{b}){tail}");
                    total += 1;
                    if let Some(s) = single_insert(&sql) {
                        fast += 1;
                        let general =
                            parse_general(&sql).unwrap_or_else(|e| panic!("{sql:?}: {e:?}"));
                        assert_eq!(general.len(), 1, "{sql:?}");
                        assert_eq!(format!("{s:?}"), format!("{:?}", general[0]), "{sql:?}");
                    }
                }
            }
        }
        assert!(fast >= 100, "{fast} of {total} read directly");
        let s =
            "INSERT INTO fehistory_1 values (64,14,'D',NULL,'Thu Jan 07 15:15:00 1999 EST',4.5);";
        assert!(single_insert(s).is_some());
    }
}
