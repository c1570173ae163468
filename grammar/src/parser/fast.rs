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
//! this never changes what is accepted or what an error says. Tests
//! compare both on enumerated and on random statements (plain shapes and
//! near misses).
//!
//! The rules are nom combinators over the statement's bytes, each with its
//! EBNF line, dispatched on the first byte of a literal; their error type
//! is `()`, since a failure only means "not this shape" and nothing is
//! reported from here. Strings are searched with memchr.
//!
//! [`scan_single_insert`] is the same reading without building a tree: it
//! records where the table name and each literal are in the text, into a
//! vector the caller reuses, so a session can bind the literals straight
//! from the statement's bytes (no `String` per literal, no boxes to build
//! and drop). [`single_insert`] builds its tree from that scan, so both
//! accept exactly the same statements.

use nom::bytes::complete::{tag, tag_no_case, take_while, take_while1};
use nom::character::complete::{char, digit1, satisfy};
use nom::combinator::{consumed, eof, fail, map, not, opt, recognize, verify};
use nom::multi::{fold_many0, many0_count};
use nom::sequence::{delimited, pair, preceded, terminated, tuple};
use nom::{IResult, Offset as _};

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
///
/// `fast_insert ::= insert_head literal {',' literal} ')' space [';' space]`
pub fn scan_single_insert(sql: &str, lits: &mut Vec<ScannedLiteral>) -> Option<ScannedInsert> {
    lits.clear();
    let b = sql.as_bytes();
    let (rest, name) = insert_head(b).ok()?;
    let table = span(b, name);
    if Keyword::lookup(&sql[table.0..table.1]) != Keyword::NoKeyword {
        return None;
    }
    let (rest, first) = item(b)(rest).ok()?;
    lits.push(first);
    let (rest, ()) = fold_many0(
        preceded(char(','), item(b)),
        || (),
        |(), lit| lits.push(lit),
    )(rest)
    .ok()?;
    let (_, _) = tuple((char(')'), space, opt(char(';')), space, eof))(rest).ok()?;
    Some(ScannedInsert { table })
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
        column_offsets: Vec::new(),
        source: Some(Box::new(Query::simple(SetExpr::Values(vec![row])))),
        returning: Vec::new(),
        alias: None,
        on_conflict: None,
    })))
}

/// nom's input here: the statement's bytes. The error carries nothing:
/// any failure means "not this shape", and the general parser decides.
type In<'a> = &'a [u8];

/// The result of a rule of this file.
type Res<'a, T> = IResult<In<'a>, T, ()>;

/// The byte range of `part`, a piece of `whole`.
#[inline]
fn span(whole: In<'_>, part: In<'_>) -> (usize, usize) {
    let start = whole.offset(part);
    (start, start + part.len())
}

/// Whether `c` continues a word (letters, digits, `_`).
#[inline]
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `space ::= {' ' | '\t' | '\n' | '\r' | '\f'}`
#[inline]
fn space(i: In<'_>) -> Res<'_, In<'_>> {
    take_while(|c: u8| c.is_ascii_whitespace())(i)
}

/// `blank ::= {' ' | '\t'}`: what may follow a literal before its `,` or
/// `)` (a newline after a string could continue it: `'a'` NEWLINE `'b'`).
#[inline]
fn blank(i: In<'_>) -> Res<'_, In<'_>> {
    take_while(|c: u8| c == b' ' || c == b'\t')(i)
}

/// The keyword `word` (lower case) in any case, not followed by a word
/// character or `$`.
fn keyword<'a>(word: &'static str) -> impl FnMut(In<'a>) -> Res<'a, In<'a>> {
    terminated(
        tag_no_case(word),
        not(satisfy(|c| {
            c.is_ascii_alphanumeric() || c == '_' || c == '$'
        })),
    )
}

/// `table_name ::= (letter | '_') {letter | digit | '_'}` (the caller
/// rejects keywords).
fn table_name(i: In<'_>) -> Res<'_, In<'_>> {
    verify(take_while1(is_word), |name: &[u8]| {
        !name[0].is_ascii_digit()
    })(i)
}

/// `insert_head ::= space 'INSERT' space 'INTO' space table_name space 'VALUES' space '('`,
/// as the table name.
fn insert_head(i: In<'_>) -> Res<'_, In<'_>> {
    delimited(
        tuple((space, keyword("insert"), space, keyword("into"), space)),
        table_name,
        tuple((space, keyword("values"), space, char('('))),
    )(i)
}

/// `item ::= space literal blank`, read as a [`ScannedLiteral`] at its
/// place in `whole`.
#[inline]
fn item<'a>(whole: In<'a>) -> impl FnMut(In<'a>) -> Res<'a, ScannedLiteral> {
    move |i| {
        let (i, _) = space(i)?;
        let offset = whole.len() - i.len();
        // Dispatched on the first byte (as nom 8's `dispatch!`).
        let (i, (kind, text)) = match i.first() {
            Some(b'\'') => string(i)?,
            Some(b'0'..=b'9') => number(i)?,
            _ => word_literal(i)?,
        };
        let (i, _) = blank(i)?;
        let literal = ScannedLiteral {
            kind,
            offset,
            text: span(whole, text),
        };
        Ok((i, literal))
    }
}

/// `string ::= "'" chunk {"''" chunk} "'"`, where a chunk holds no quote,
/// backslash or NUL: its kind and the text between the quotes.
#[inline]
fn string(i: In<'_>) -> Res<'_, (LiteralKind, In<'_>)> {
    map(
        delimited(
            char('\''),
            consumed(pair(chunk, many0_count(preceded(tag("''"), chunk)))),
            char('\''),
        ),
        |(text, (_, quotes))| {
            (
                LiteralKind::String {
                    doubled: quotes > 0,
                },
                text,
            )
        },
    )(i)
}

/// The text up to the next quote, backslash or NUL (found by memchr3; a
/// string holding either of the last two is left to the parser: the quote
/// that must come next is not there). nom's `take_till` with memchr's
/// search in place of its byte loop.
#[inline]
fn chunk(i: In<'_>) -> Res<'_, In<'_>> {
    let end = memchr::memchr3(b'\'', b'\\', 0, i).unwrap_or(i.len());
    Ok((&i[end..], &i[..end]))
}

/// `number ::= digit {digit} ['.' digit {digit}]`
#[inline]
fn number(i: In<'_>) -> Res<'_, (LiteralKind, In<'_>)> {
    map(
        recognize(pair(digit1, opt(pair(char('.'), digit1)))),
        |text| (LiteralKind::Number, text),
    )(i)
}

/// `'NULL' | 'TRUE' | 'FALSE'` as a whole word; its text is the empty
/// range at its end.
#[inline]
fn word_literal(i: In<'_>) -> Res<'_, (LiteralKind, In<'_>)> {
    let (rest, word) = take_while1(is_word)(i)?;
    let kind = match word.len() {
        4 if word.eq_ignore_ascii_case(b"null") => LiteralKind::Null,
        4 if word.eq_ignore_ascii_case(b"true") => LiteralKind::Boolean(true),
        5 if word.eq_ignore_ascii_case(b"false") => LiteralKind::Boolean(false),
        _ => return fail(i),
    };
    Ok((rest, (kind, &rest[..0])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse_general;
    use proptest::prelude::*;

    /// Pieces of INSERT statements: each list starts with the plain shapes
    /// the direct reading takes (as many as the number beside it), then
    /// near misses it must leave to the parser.
    const SPACE: (usize, &[&str]) = (
        4,
        &[
            " ", "  ", "\n", "\t", "", "\r\n", "\x0c", "\x0b", "/*c*/", "--c\n",
        ],
    );
    const INSERT: (usize, &[&str]) = (
        3,
        &[
            "INSERT",
            "insert",
            "Insert",
            "INSERT$",
            "INSERTX",
            "INSERT\u{e9}",
            "INSER",
        ],
    );
    const INTO: (usize, &[&str]) = (3, &["INTO", "into", "iNtO", "INTO_", "INT0"]);
    const NAMES: (usize, &[&str]) = (
        5,
        &[
            "t",
            "T1",
            "_x",
            "fehistory_1",
            "a_long_table_name_of_thirty_two_",
            "values",
            "select",
            "table",
            "t$x",
            "\"T\"",
            "s.t",
            "1t",
            "t\u{e9}",
        ],
    );
    const VALUES: (usize, &[&str]) = (
        3,
        &["VALUES", "values", "Values", "VALUESX", "VALUE", "VALUES$"],
    );
    const OPEN: (usize, &[&str]) = (4, &["(", "( ", "(\n", "(\t", "((", "[", ""]);
    const LITS: (usize, &[&str]) = (
        21,
        &[
            "0",
            "42",
            "007",
            "4.5",
            "0.0",
            "00.5",
            "'a'",
            "''",
            "'it''s'",
            "'a, '",
            "'\u{e9}'",
            "'Thu Jan 07 15:15:00 1999 EST'",
            "NULL",
            "null",
            "Null",
            "True",
            "FALSE",
            "  9  ",
            "\t'q'\t",
            "\n1",
            "1.",
            ".5",
            "1e3",
            "-1",
            "+2",
            "1.5.3",
            "12abc",
            "9 9",
            "'a\\b'",
            "'\0'",
            "'x",
            "'a'\n'b'",
            "'a' 'b'",
            "E'x'",
            "'x'y",
            "$$x$$",
            "NULLX",
            "null1",
            "null$",
            "tru",
            "DEFAULT",
            "NULL::int",
            "1 + 2",
            "(1)",
            "",
            "1\n",
            "1\r",
        ],
    );
    const SEPARATORS: (usize, &[&str]) = (5, &[",", ", ", " ,", ",\n", "\t,\t", ",,", "\n,", ""]);
    const CLOSE: (usize, &[&str]) = (4, &[")", " )", "\t)", "\n)", "", "))", "),"]);
    const TAILS: (usize, &[&str]) = (
        5,
        &[
            "",
            ";",
            " ; ",
            ";\n",
            "\n",
            ";;",
            "; select 1",
            " -- c",
            "/*c*/",
            ", (1)",
            " RETURNING *",
            "\x0b",
            "x",
        ],
    );

    /// A piece of `list` chosen by `pick`: a plain one seven times in eight.
    fn choose((plain, list): (usize, &[&'static str]), pick: usize) -> &'static str {
        if pick % 8 != 0 {
            list[(pick / 8) % plain]
        } else {
            list[(pick / 8) % list.len()]
        }
    }

    /// A statement from the pieces, chosen by `picks`, `lits` and `seps`.
    fn build(picks: &[usize], lits: &[usize], seps: &[usize]) -> String {
        let mut sql = String::new();
        let head = [
            SPACE, INSERT, SPACE, INTO, SPACE, NAMES, SPACE, VALUES, SPACE, OPEN,
        ];
        for (k, list) in head.into_iter().enumerate() {
            sql.push_str(choose(list, picks[k]));
        }
        for (n, l) in lits.iter().enumerate() {
            if n > 0 {
                sql.push_str(choose(SEPARATORS, seps[n]));
            }
            sql.push_str(choose(LITS, *l));
        }
        sql.push_str(choose(CLOSE, picks[10]));
        sql.push_str(choose(TAILS, picks[11]));
        sql
    }

    /// The plain shapes only: what the direct reading must take.
    fn build_plain(picks: &[usize], lits: &[usize], seps: &[usize]) -> String {
        const PLAIN_LITS: &[&str] = &[
            "0", "42", "4.5", "'a'", "''", "'it''s'", "'\u{e9}'", "NULL", "true", "FALSE",
        ];
        let head = [
            "INSERT INTO t VALUES (",
            "insert into fehistory_1 values(",
            "  Insert\tInto T1\nValues\n(",
        ][picks[0] % 3];
        let mut sql = head.to_string();
        for (n, l) in lits.iter().enumerate() {
            if n > 0 {
                sql.push_str([",", ", ", " ,\n"][seps[n] % 3]);
            }
            sql.push_str(PLAIN_LITS[l % PLAIN_LITS.len()]);
        }
        sql.push_str([")", " )"][picks[1] % 2]);
        sql.push_str(["", ";", " ; \n"][picks[2] % 3]);
        sql
    }

    /// When the direct reading answers, its tree equals the parser's.
    fn check_against_parser(sql: &str) -> Result<bool, TestCaseError> {
        let Some(fast) = single_insert(sql) else {
            return Ok(false);
        };
        let general = parse_general(sql);
        prop_assert!(general.is_ok(), "{sql:?}: {general:?}");
        let general = general.unwrap_or_default();
        prop_assert_eq!(general.len(), 1, "{:?}", sql);
        prop_assert_eq!(
            format!("{fast:?}"),
            format!("{:?}", general[0]),
            "{:?}",
            sql
        );
        Ok(true)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, failure_persistence: None, ..ProptestConfig::default() })]

        /// Random INSERT statements, plain or near misses: the direct
        /// reading, when it answers, builds the parser's tree.
        #[test]
        fn random_inserts_read_as_the_parser_does(
            picks in proptest::collection::vec(0usize..1024, 12),
            lits in proptest::collection::vec(0usize..1024, 1..6),
            seps in proptest::collection::vec(0usize..1024, 6),
        ) {
            let sql = build(&picks, &lits, &seps);
            check_against_parser(&sql)?;
        }

        /// Plain single-row INSERTs are all read directly, as the parser
        /// reads them.
        #[test]
        fn plain_inserts_are_read_directly(
            picks in proptest::collection::vec(0usize..64, 3),
            lits in proptest::collection::vec(0usize..64, 1..30),
            seps in proptest::collection::vec(0usize..64, 30),
        ) {
            let sql = build_plain(&picks, &lits, &seps);
            prop_assert!(check_against_parser(&sql)?, "not read directly: {:?}", sql);
        }
    }

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
