//! The parser: tokens to AST by nom combinators, with precedence climbing
//! for expressions.
//!
//! The text is lexed one statement at a time into a reused token vector
//! ([`crate::lexer::Lexer::next_statement`]); the rules are nom parsers
//! over that slice ([`tokens::Tokens`], with the token parsers and the error
//! type in `tokens.rs`), each a small function whose doc comment is its
//! EBNF line from `sql.ebnf`. Each statement family lives in its own file:
//! `query.rs` (SELECT, VALUES, set operations, FROM items, ORDER BY),
//! `expr.rs` (expressions), `literal.rs` (strings and data types), `dml.rs`
//! (INSERT, UPDATE, DELETE), `ddl.rs` (CREATE/DROP/TRUNCATE TABLE) and
//! `utility.rs` (COPY, VACUUM, ANALYZE, EXPLAIN, transactions,
//! SET/SHOW/RESET). `fast.rs` reads the one-row INSERT of bulk scripts
//! straight from the text, without tokens.
//!
//! Errors: the rules are LL(1) with `cut` after a rule's leading token, and
//! where all alternatives fail the furthest failure wins, so the reported
//! token is where PostgreSQL's parser stops (`syntax error at or near "x"`,
//! or `at end of input`; `tests/error_positions.rs` compares with
//! PostgreSQL 15); a lexical error token is reported with its own message
//! when the parser reaches it.
//!
//! Invariant: recursion depth is bounded by [`MAX_DEPTH`] nesting levels
//! (parentheses, subqueries, calls, CASE, prefix operators, operators
//! applied), counted in [`tokens::enter`] / [`tokens::nested`], so no input
//! overflows the stack; deeper input is a
//! [`ParseErrorKind::TooDeep`](crate::ParseErrorKind::TooDeep) error.

mod alter_column;
mod alter_function;
mod comment;
mod cursor;
mod ddl;
mod dml;
mod do_block;
mod expr;
mod fast;
mod function;
mod index;
mod keys;
mod literal;
mod operator;
mod prepare;
mod query;
mod sequence;
mod tokens;
mod typedef;
mod utility;
mod view;
mod window;

pub(crate) use expr::prec;
pub use fast::{scan_single_insert, LiteralKind, ScannedInsert, ScannedLiteral};

use nom::combinator::{cut, map, opt, value};
use nom::multi::separated_list1;
use nom::sequence::{preceded, terminated};

use crate::ast::{Ident, ObjectName, Offset, Statement};
use crate::error::ParseError;
use crate::keywords::Keyword;
use crate::lexer::{Lexer, StringStyle, TokenKind};
use tokens::{col_id, col_label, kw, tok, word, Ctx, PError, PResult, Tokens};

/// How many nested levels (parentheses, subqueries, calls, prefix operators)
/// the parser follows before giving up. Each level costs a few stack frames;
/// 500 levels fit in a 2 MiB thread stack even in debug builds (the
/// recursive paths call their rules directly, not through wrapping
/// combinators, to keep those frames few).
pub const MAX_DEPTH: usize = 500;

/// Parses every statement in `sql` (separated by semicolons; empty
/// statements are skipped).
pub fn parse(sql: &str) -> Result<Vec<Statement>, ParseError> {
    // The statement of bulk scripts, read in one pass (same tree).
    if let Some(s) = fast::single_insert(sql) {
        return Ok(vec![s]);
    }
    parse_general(sql)
}

/// The settings that change how text is read (PostgreSQL's
/// `standard_conforming_strings` and `escape_string_warning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// `'...'` takes backslashes literally (off: as in `E'...'`).
    pub standard_conforming_strings: bool,
    /// With `standard_conforming_strings` off, a backslash escape in a
    /// `'...'` literal draws a [`ParseWarning`].
    pub escape_string_warning: bool,
}

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        ParseOptions {
            standard_conforming_strings: true,
            escape_string_warning: true,
        }
    }
}

/// A WARNING of PostgreSQL's scanner: `nonstandard use of \\ in a string
/// literal` and its kin (SQLSTATE 22P06), once per literal, at its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseWarning {
    /// The message.
    pub message: &'static str,
    /// PostgreSQL's hint line.
    pub hint: &'static str,
    /// Byte offset of the literal.
    pub offset: usize,
}

/// [`parse`] under `options`, with the warnings the literals draw.
pub fn parse_with(
    sql: &str,
    options: ParseOptions,
) -> Result<(Vec<Statement>, Vec<ParseWarning>), ParseError> {
    if options.standard_conforming_strings {
        return Ok((parse(sql)?, Vec::new()));
    }
    let mut tokens = Vec::with_capacity((sql.len() / 3 + 4).min(1 << 14));
    let mut lexer = Lexer::new(sql).standard_strings(false);
    let mut statements = Vec::new();
    let mut warnings = Vec::new();
    while !lexer.is_done() {
        lexer.next_statement(&mut tokens);
        if options.escape_string_warning {
            warnings.extend(tokens.iter().filter_map(|t| escape_warning(sql, *t)));
        }
        let ctx = Ctx::new(sql, &tokens);
        if let Some(s) = run_rule(&ctx, piece)? {
            statements.push(s);
        }
    }
    Ok((statements, warnings))
}

/// The warning a `'...'` literal read with backslash escapes draws: by its
/// first escape, as PostgreSQL's `check_string_escape_warning`.
fn escape_warning(sql: &str, t: crate::lexer::Token) -> Option<ParseWarning> {
    if !matches!(t.kind, TokenKind::String(StringStyle::Escape, true))
        || !sql[t.start..].starts_with('\'')
    {
        return None;
    }
    let text = &sql.as_bytes()[t.start..t.end];
    let at = memchr::memchr(b'\\', text)?;
    let (message, hint) = match text.get(at + 1) {
        Some(b'\'') => (
            "nonstandard use of \\' in a string literal",
            "Use '' to write quotes in strings, or use the escape string syntax (E'...').",
        ),
        Some(b'\\') => (
            "nonstandard use of \\\\ in a string literal",
            "Use the escape string syntax for backslashes, e.g., E'\\\\'.",
        ),
        _ => (
            "nonstandard use of escape in a string literal",
            "Use the escape string syntax for escapes, e.g., E'\\r\\n'.",
        ),
    };
    Some(ParseWarning {
        message,
        hint,
        offset: t.start,
    })
}

/// One piece of a script as the lexer hands it out (up to a semicolon):
/// `piece ::= [statement] (';' | end)`.
fn piece(i: Tokens<'_>) -> PResult<'_, Option<Statement>> {
    if matches!(i.first().kind, TokenKind::Semicolon | TokenKind::Eof) {
        return Ok((i, None));
    }
    map(terminated(statement, statement_end), Some)(i)
}

/// The end of a statement: a semicolon, or the end of the input.
fn statement_end(i: Tokens<'_>) -> PResult<'_, ()> {
    match i.first().kind {
        TokenKind::Semicolon => Ok((i.skip(1), ())),
        TokenKind::Eof => Ok((i, ())),
        _ => i.fail(),
    }
}

/// Runs `rule` on a whole statement's tokens.
fn run_rule<'a, T>(
    ctx: &'a Ctx<'a>,
    mut rule: impl FnMut(Tokens<'a>) -> PResult<'a, T>,
) -> Result<T, ParseError> {
    match rule(Tokens::at(ctx, 0)) {
        Ok((_, v)) => Ok(v),
        Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(ctx.report(e)),
        Err(nom::Err::Incomplete(_)) => Err(ctx.error_at(ctx.all[0])),
    }
}

/// [`parse`] without the direct reading of single-row INSERTs.
pub(crate) fn parse_general(sql: &str) -> Result<Vec<Statement>, ParseError> {
    // About one token per three bytes of typical SQL: one allocation for a
    // statement, reused for every statement of a script.
    let mut tokens = Vec::with_capacity((sql.len() / 3 + 4).min(1 << 14));
    let mut lexer = Lexer::new(sql);
    let mut statements = Vec::new();
    while !lexer.is_done() {
        lexer.next_statement(&mut tokens);
        let ctx = Ctx::new(sql, &tokens);
        if let Some(s) = run_rule(&ctx, piece)? {
            statements.push(s);
        }
    }
    Ok(statements)
}

/// Parses exactly one statement (a trailing semicolon is allowed). Empty
/// input is `syntax error at end of input`; a second statement is a syntax
/// error at its first token.
pub fn parse_one(sql: &str) -> Result<Statement, ParseError> {
    let mut tokens = Vec::with_capacity((sql.len() / 3 + 4).min(1 << 14));
    let mut lexer = Lexer::new(sql);
    let mut found = None;
    while !lexer.is_done() {
        lexer.next_statement(&mut tokens);
        let ctx = Ctx::new(sql, &tokens);
        let first = tokens[0];
        if found.is_some() && !matches!(first.kind, TokenKind::Semicolon | TokenKind::Eof) {
            return Err(ctx.error_at(first));
        }
        if let Some(s) = run_rule(&ctx, piece)? {
            found = Some(s);
        }
    }
    found.ok_or_else(|| ParseError::end_of_input(sql.len()))
}

/// `statement ::= query | insert | update | delete | create_table | drop_table
///   | truncate | copy | vacuum | analyze | explain | transaction | set | show
///   | reset | 'CHECKPOINT'`
///
/// Dispatched on the leading token, which names the statement family (as
/// nom 8's `dispatch!`): one comparison instead of trying each rule in turn.
pub(crate) fn statement(i: Tokens<'_>) -> PResult<'_, Statement> {
    let TokenKind::Word(lead) = i.first().kind else {
        return match i.first().kind {
            TokenKind::LParen => query::query_statement(i),
            _ => i.fail(),
        };
    };
    match lead {
        Keyword::Select | Keyword::Values | Keyword::With | Keyword::Table => {
            query::query_statement(i)
        }
        Keyword::Insert => dml::insert(i),
        Keyword::Update => dml::update(i),
        Keyword::Delete => dml::delete(i),
        Keyword::Create if function::is_create_function(i) => function::create_function(i),
        Keyword::Create if function::is_domain(i) => function::create_domain(i),
        Keyword::Drop if function::is_drop_function(i) => function::drop_function(i),
        Keyword::Drop if function::is_domain(i) => function::drop_domain(i),
        Keyword::Create if operator::is_operator(i) => operator::create_operator(i),
        Keyword::Drop if operator::is_operator(i) => operator::drop_operator(i),
        Keyword::Create if typedef::is_define_type(i) => typedef::define_type(i),
        Keyword::Drop if typedef::is_drop_type(i) => typedef::drop_type(i),
        Keyword::Create if i.is_kw(1, Keyword::Cast) => typedef::create_cast(i),
        Keyword::Drop if i.is_kw(1, Keyword::Cast) => typedef::drop_cast(i),
        Keyword::Create if view::is_create_view(i) => view::create_view(i),
        Keyword::Create if sequence::is_sequence(i) => sequence::create_sequence(i),
        Keyword::Drop if sequence::is_sequence(i) => sequence::drop_sequence(i),
        Keyword::Alter if sequence::is_sequence(i) => sequence::alter_sequence(i),
        Keyword::Create if i.is_kw(1, Keyword::Index) || i.is_kw(1, Keyword::Unique) => {
            index::create_index(i)
        }
        Keyword::Create => ddl::create_table(i),
        Keyword::Drop if view::is_drop_view(i) => view::drop_view(i),
        Keyword::Drop if i.is_kw(1, Keyword::Index) => index::drop_index(i),
        Keyword::Drop => ddl::drop_table(i),
        Keyword::Alter if function::is_domain(i) => function::alter_domain(i),
        Keyword::Alter if alter_function::is_alter_function(i) => alter_function::alter_function(i),
        Keyword::Alter => keys::alter_table(i),
        Keyword::Reindex => keys::reindex(i),
        Keyword::Truncate => ddl::truncate(i),
        Keyword::Copy => utility::copy(i),
        Keyword::Vacuum => utility::vacuum(i),
        Keyword::Analyze | Keyword::Analyse => utility::analyze(i),
        Keyword::Checkpoint => value(Statement::Checkpoint, kw(Keyword::Checkpoint))(i),
        Keyword::Explain => utility::explain(i),
        Keyword::Begin
        | Keyword::Start
        | Keyword::Commit
        | Keyword::End
        | Keyword::Rollback
        | Keyword::Abort => utility::transaction(i),
        Keyword::Set => utility::set(i),
        Keyword::Show => utility::show(i),
        Keyword::Reset => utility::reset(i),
        Keyword::Do => do_block::do_block(i),
        Keyword::Fetch => cursor::fetch(i),
        _ if comment::is_comment(i) => comment::comment(i),
        _ if word("declare")(i).is_ok() => cursor::declare(i),
        _ if word("move")(i).is_ok() => cursor::fetch(i),
        _ if word("close")(i).is_ok() => cursor::close(i),
        _ if word("prepare")(i).is_ok() => prepare::prepare(i),
        _ if word("execute")(i).is_ok() => prepare::execute(i),
        _ if word("deallocate")(i).is_ok() => prepare::deallocate(i),
        _ => i.fail(),
    }
}

/// `object_name ::= ColId ['.' ColLabel]`
pub(crate) fn object_name(i: Tokens<'_>) -> PResult<'_, ObjectName> {
    let offset = Offset(i.first().start);
    let (i, first) = col_id(i)?;
    // `name.*` is left to the select list.
    if i.first().kind == TokenKind::Dot && i.kind(1) != TokenKind::Star {
        let (i, name) = preceded(tok(TokenKind::Dot), cut(col_label))(i)?;
        return Ok((
            i,
            ObjectName {
                schema: Some(first),
                name,
                offset,
            },
        ));
    }
    Ok((
        i,
        ObjectName {
            schema: None,
            name: first,
            offset,
        },
    ))
}

/// `col_list ::= ColId {',' ColId}`
pub(crate) fn col_list(i: Tokens<'_>) -> PResult<'_, Vec<Ident>> {
    separated_list1(tok(TokenKind::Comma), cut(col_id))(i)
}

/// `paren_col_list ::= '(' ColId {',' ColId} ')'`
pub(crate) fn paren_col_list(i: Tokens<'_>) -> PResult<'_, Vec<Ident>> {
    preceded(
        tok(TokenKind::LParen),
        cut(terminated(col_list, tok(TokenKind::RParen))),
    )(i)
}

/// `[paren_col_list]`: an optional column list, empty when absent.
pub(crate) fn opt_paren_col_list(i: Tokens<'_>) -> PResult<'_, Vec<Ident>> {
    map(opt(paren_col_list), Option::unwrap_or_default)(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_and_semicolons() {
        assert_eq!(parse("").expect("empty parses"), vec![]);
        assert_eq!(parse(" ;; -- c\n").expect("only separators"), vec![]);
        assert_eq!(parse("commit; rollback").expect("two").len(), 2);
        let e = parse_one("").unwrap_err();
        assert_eq!(e.message, "syntax error at end of input");
        let e = parse_one("commit; commit").unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.offset),
            ("syntax error at or near \"commit\"", 8)
        );
    }

    #[test]
    fn statements_need_separators() {
        let e = parse("commit commit").unwrap_err();
        assert_eq!(e.offset, 7);
        assert_eq!(e.token.as_deref(), Some("commit"));
    }

    #[test]
    fn lexical_errors_are_reported_with_their_text() {
        let e = parse("select 'abc").unwrap_err();
        assert_eq!(e.message, "unterminated quoted string at or near \"'abc\"");
        assert_eq!(e.offset, 7);
        // An earlier syntax error wins over a later lexical one.
        let e = parse("select from from 'abc").unwrap_err();
        assert_eq!(e.message, "syntax error at or near \"from\"");
    }
}
