//! The parser: tokens to AST by recursive descent, with precedence climbing
//! for expressions.
//!
//! The text is lexed one statement at a time into a reused token vector
//! ([`crate::lexer::Lexer::next_statement`]); the parser walks it with one cursor and as much look-ahead as a rule needs
//! (tokens are `Copy`, so peeking is free). Each statement kind lives in its
//! own file: `query.rs` (SELECT, VALUES, set operations, FROM items),
//! `expr.rs` (expressions and data types), `dml.rs` (INSERT, UPDATE,
//! DELETE), `ddl.rs` (CREATE/DROP/TRUNCATE TABLE) and `utility.rs` (COPY,
//! VACUUM, ANALYZE, EXPLAIN, transactions, SET/SHOW/RESET, CHECKPOINT).
//!
//! Errors: the first token that fits no rule is reported as PostgreSQL does
//! (`syntax error at or near "x"`, or `at end of input`); a lexical error
//! token is reported with its own message when the parser reaches it.
//!
//! Invariant: recursion depth is bounded by [`MAX_DEPTH`] nesting levels
//! (parentheses, subqueries, prefix operators), checked in `enter`, so no
//! input overflows the stack; deeper input is a [`ParseErrorKind::TooDeep`]
//! error.

mod ddl;
mod dml;
mod expr;
mod fast;
mod literal;
mod query;
mod tokens;
mod utility;

pub(crate) use expr::prec;
pub use fast::{scan_single_insert, LiteralKind, ScannedInsert, ScannedLiteral};

use nom::branch::alt;
use nom::combinator::{cut, map, opt, value};
use nom::multi::separated_list1;
use nom::sequence::{preceded, terminated};

use crate::ast::{Ident, ObjectName, Offset, Statement};
use crate::error::{ParseError, ParseErrorKind};
use crate::keywords::{Keyword, KeywordClass};
use crate::lexer::{Lexer, Token, TokenKind};
use tokens::{col_id, col_label, kw, tok, Ctx, PError, PResult, Tokens};

/// How many nested levels (parentheses, subqueries, prefix operators) the
/// parser follows before giving up. Each level costs a few stack frames; 500
/// levels fit comfortably in a 2 MiB thread stack even in debug builds.
pub const MAX_DEPTH: usize = 500;

/// Result type of the parser's imperative rules.
pub(crate) type LResult<T> = Result<T, ParseError>;

/// A cursor over one statement's tokens, for the rules not yet written as
/// combinators (see [`legacy`] and [`Parser::run`]).
pub(crate) struct Parser<'a> {
    /// The statement's shared state.
    ctx: &'a Ctx<'a>,
    /// The text being parsed.
    src: &'a str,
    /// The statement's tokens, ending with `Eof`.
    tokens: &'a [Token],
    /// Index of the next token.
    pos: usize,
}

/// Parses every statement in `sql` (separated by semicolons; empty
/// statements are skipped).
pub fn parse(sql: &str) -> Result<Vec<Statement>, ParseError> {
    // The statement of bulk scripts, read in one pass (same tree).
    if let Some(s) = fast::single_insert(sql) {
        return Ok(vec![s]);
    }
    parse_general(sql)
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
pub(crate) fn statement(i: Tokens<'_>) -> PResult<'_, Statement> {
    alt((
        query::query_statement,
        dml::insert,
        dml::update,
        dml::delete,
        ddl::create_table,
        ddl::drop_table,
        ddl::truncate,
        utility::copy,
        utility::vacuum,
        utility::analyze,
        value(Statement::Checkpoint, kw(Keyword::Checkpoint)),
        utility::explain,
        utility::transaction,
        utility::set,
        utility::show,
        utility::reset,
    ))(i)
}

/// `object_name ::= ColId ['.' ColLabel]`
pub(crate) fn object_name(i: Tokens<'_>) -> PResult<'_, ObjectName> {
    let offset = Offset(i.first().start);
    let (i, first) = col_id(i)?;
    if i.first().kind == TokenKind::Dot
        && matches!(i.kind(1), TokenKind::Word(_) | TokenKind::QuotedIdent(_))
    {
        let (i, name) = preceded(tok(TokenKind::Dot), col_label)(i)?;
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

/// A rule not yet written as combinators, run as one: its errors are final.
pub(crate) fn legacy<'a, T>(
    f: impl Fn(&mut Parser<'a>) -> LResult<T>,
) -> impl Fn(Tokens<'a>) -> PResult<'a, T> {
    move |i: Tokens<'a>| {
        let mut p = Parser {
            ctx: i.ctx,
            src: i.ctx.src,
            tokens: i.ctx.all,
            pos: i.index(),
        };
        match f(&mut p) {
            Ok(v) => Ok((Tokens::at(i.ctx, p.pos), v)),
            Err(e) => Err(nom::Err::Failure(PError::Full(Box::new(e)))),
        }
    }
}

impl<'a> Parser<'a> {
    /// Runs a combinator rule at the cursor, moving past what it consumed.
    pub(crate) fn run<T>(
        &mut self,
        mut rule: impl FnMut(Tokens<'a>) -> PResult<'a, T>,
    ) -> LResult<T> {
        match rule(Tokens::at(self.ctx, self.pos)) {
            Ok((rest, v)) => {
                self.pos = rest.index();
                Ok(v)
            }
            Err(nom::Err::Error(e) | nom::Err::Failure(e)) => Err(self.ctx.report(e)),
            Err(nom::Err::Incomplete(_)) => Err(self.error()),
        }
    }

    // ------------------------------------------------------ token access --

    /// The next token (the `Eof` token once the input is used up).
    #[inline]
    pub(crate) fn peek(&self) -> Token {
        self.tokens[self.pos]
    }

    /// The kind of the next token.
    #[inline]
    pub(crate) fn peek_kind(&self) -> TokenKind {
        self.tokens[self.pos].kind
    }

    /// The kind of the token `n` places after the next one (`Eof` past the end).
    #[inline]
    pub(crate) fn nth_kind(&self, n: usize) -> TokenKind {
        self.tokens
            .get(self.pos + n)
            .map_or(TokenKind::Eof, |t| t.kind)
    }

    /// Consumes and returns the next token (never moves past `Eof`).
    #[inline]
    pub(crate) fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos];
        if t.kind != TokenKind::Eof {
            self.pos += 1;
        }
        t
    }

    /// Whether the next token is of `kind`.
    #[inline]
    pub(crate) fn at(&self, kind: TokenKind) -> bool {
        self.peek_kind() == kind
    }

    /// Consumes the next token if it is of `kind`.
    #[inline]
    pub(crate) fn eat(&mut self, kind: TokenKind) -> bool {
        if self.at(kind) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Consumes a token of `kind` or fails at the next token.
    #[inline]
    pub(crate) fn expect(&mut self, kind: TokenKind) -> LResult<Token> {
        if self.at(kind) {
            Ok(self.bump())
        } else {
            Err(self.error())
        }
    }

    /// Whether the next token is the keyword `kw`.
    #[inline]
    pub(crate) fn at_kw(&self, kw: Keyword) -> bool {
        self.peek_kind() == TokenKind::Word(kw)
    }

    /// Whether the token `n` places ahead is the keyword `kw`.
    #[inline]
    pub(crate) fn nth_is_kw(&self, n: usize, kw: Keyword) -> bool {
        self.nth_kind(n) == TokenKind::Word(kw)
    }

    /// Consumes the keyword `kw` if it is next.
    #[inline]
    pub(crate) fn eat_kw(&mut self, kw: Keyword) -> bool {
        self.eat(TokenKind::Word(kw))
    }

    /// Consumes the keyword `kw` or fails at the next token.
    #[inline]
    pub(crate) fn expect_kw(&mut self, kw: Keyword) -> LResult<Token> {
        self.expect(TokenKind::Word(kw))
    }

    /// The source text of `token`.
    #[inline]
    pub(crate) fn text(&self, token: Token) -> &'a str {
        &self.src[token.start..token.end]
    }

    /// The keyword of the next token, if it is an unquoted word.
    #[inline]
    pub(crate) fn peek_keyword(&self) -> Option<Keyword> {
        match self.peek_kind() {
            TokenKind::Word(kw) => Some(kw),
            _ => None,
        }
    }

    /// Whether the next token is an unquoted word equal to `word` ignoring
    /// case (for option names that are not keywords).
    pub(crate) fn at_word(&self, word: &str) -> bool {
        matches!(self.peek_kind(), TokenKind::Word(_))
            && self.text(self.peek()).eq_ignore_ascii_case(word)
    }

    // ----------------------------------------------------------- errors --

    /// The error for an unexpected next token.
    pub(crate) fn error(&self) -> ParseError {
        self.error_at(self.peek())
    }

    /// The error for `token` being unexpected.
    pub(crate) fn error_at(&self, token: Token) -> ParseError {
        match token.kind {
            TokenKind::Eof => ParseError::end_of_input(self.src.len()),
            TokenKind::Error(e) => {
                let text = self.text(token);
                ParseError::other(
                    format!("{} at or near \"{}\"", e.message(), text),
                    token.start,
                    Some(text),
                )
            }
            _ => ParseError::near(self.text(token), token.start),
        }
    }

    /// An error with a message of its own at `token`.
    pub(crate) fn error_msg(&self, token: Token, message: String) -> ParseError {
        ParseError::other(message, token.start, Some(self.text(token)))
    }

    /// Enters one nesting level; fails when too deep (see [`MAX_DEPTH`]).
    /// Every successful `enter` is paired with a `leave`.
    #[inline]
    pub(crate) fn enter(&mut self) -> LResult<()> {
        let depth = self.ctx.depth.get() + 1;
        self.ctx.depth.set(depth);
        if depth > MAX_DEPTH {
            let token = self.peek();
            return Err(ParseError {
                message: "stack depth limit exceeded".to_string(),
                offset: token.start,
                token: (token.kind != TokenKind::Eof).then(|| self.text(token).to_string()),
                kind: ParseErrorKind::TooDeep,
            });
        }
        Ok(())
    }

    /// Leaves a nesting level entered with `enter`.
    #[inline]
    pub(crate) fn leave(&mut self) {
        self.ctx.depth.set(self.ctx.depth.get() - 1);
    }

    // ------------------------------------------------------------ names --

    /// The value of an identifier token: unquoted words folded to lower
    /// case, quoted identifiers with `""` undoubled.
    pub(crate) fn ident_value(&self, token: Token) -> Ident {
        let text = self.text(token);
        match token.kind {
            TokenKind::QuotedIdent(escapes) => {
                let inner = &text[1..text.len() - 1];
                if escapes {
                    inner.replace("\"\"", "\"")
                } else {
                    inner.to_string()
                }
            }
            _ => text.to_ascii_lowercase(),
        }
    }

    /// Whether the next token can be a column, table or alias name
    /// (PostgreSQL's `ColId`).
    pub(crate) fn at_col_id(&self) -> bool {
        match self.peek_kind() {
            TokenKind::Word(kw) => kw.is_col_name(),
            TokenKind::QuotedIdent(_) => true,
            _ => false,
        }
    }

    /// Parses a column, table or alias name (`ColId`).
    pub(crate) fn parse_col_id(&mut self) -> LResult<Ident> {
        if self.at_col_id() {
            let t = self.bump();
            Ok(self.ident_value(t))
        } else {
            Err(self.error())
        }
    }

    /// Parses any word or quoted identifier, keywords included
    /// (PostgreSQL's `ColLabel`, used after `AS` and for option names).
    pub(crate) fn parse_col_label(&mut self) -> LResult<Ident> {
        match self.peek_kind() {
            TokenKind::Word(_) | TokenKind::QuotedIdent(_) => {
                let t = self.bump();
                Ok(self.ident_value(t))
            }
            _ => Err(self.error()),
        }
    }

    /// Parses `(name, ...)` of column names.
    pub(crate) fn parse_paren_col_ids(&mut self) -> LResult<Vec<Ident>> {
        self.expect(TokenKind::LParen)?;
        let mut names = vec![self.parse_col_id()?];
        while self.eat(TokenKind::Comma) {
            names.push(self.parse_col_id()?);
        }
        self.expect(TokenKind::RParen)?;
        Ok(names)
    }

    /// Parses a possibly schema-qualified name: `name` or `schema.name`.
    pub(crate) fn parse_object_name(&mut self) -> LResult<ObjectName> {
        let offset = Offset(self.peek().start);
        let first = self.parse_col_id()?;
        if self.at(TokenKind::Dot)
            && matches!(
                self.nth_kind(1),
                TokenKind::Word(_) | TokenKind::QuotedIdent(_)
            )
        {
            self.bump();
            let name = self.parse_col_label()?;
            return Ok(ObjectName {
                schema: Some(first),
                name,
                offset,
            });
        }
        Ok(ObjectName {
            schema: None,
            name: first,
            offset,
        })
    }

    /// Whether the next token may be an alias written without `AS`: any
    /// name that is not a reserved or type/function keyword, and not one of
    /// `excluded` (e.g. `SET` after `UPDATE t`).
    pub(crate) fn at_bare_alias(&self, excluded: &[Keyword]) -> bool {
        match self.peek_kind() {
            TokenKind::Word(kw) => {
                matches!(kw.class(), KeywordClass::Unreserved | KeywordClass::ColName)
                    && !excluded.contains(&kw)
            }
            TokenKind::QuotedIdent(_) => true,
            _ => false,
        }
    }
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
