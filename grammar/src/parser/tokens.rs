//! The combinator machinery: the token input type, the error type and the
//! small token parsers every rule is built from.
//!
//! [`Tokens`] is nom's input: the unread tokens of one statement (always
//! ending with its `Eof` token, which no parser consumes) and a shared
//! [`Ctx`] holding the source text and the nesting depth. It is `Copy`, so
//! backtracking is free.
//!
//! [`PError`] is nom's error: the token a rule failed at, or a complete
//! [`ParseError`] with a message of its own. When every branch of an `alt`
//! fails, the error at the furthest token wins, as PostgreSQL reports the
//! first token its grammar cannot shift. Rules are LL(1): once a rule's
//! leading token has matched, the rest is under `cut`, so a later failure
//! is reported where it happens and never backtracked over.
//!
//! Invariant: nesting ([`nested`]) is bounded by [`super::MAX_DEPTH`]; the
//! depth counter is restored whether the nested rule succeeds or fails.

use std::cell::Cell;

use nom::combinator::cut;
use nom::error::ErrorKind;
use nom::multi::fold_many0;
use nom::{IResult, InputLength};

use crate::ast::Ident;
use crate::error::{ParseError, ParseErrorKind};
use crate::keywords::{Keyword, KeywordClass};
use crate::lexer::{IdentQuote, LexError, Token, TokenKind};

use super::MAX_DEPTH;

/// What every rule of one statement shares: the text, the statement's
/// tokens and the nesting depth.
pub(crate) struct Ctx<'a> {
    /// The whole text being parsed (offsets are into it).
    pub(crate) src: &'a str,
    /// All tokens of the statement, ending with `Eof`.
    pub(crate) all: &'a [Token],
    /// Current nesting depth (see [`nested`]).
    pub(crate) depth: Cell<usize>,
}

impl<'a> Ctx<'a> {
    /// The context of a statement's tokens `all` in `src`.
    pub(crate) fn new(src: &'a str, all: &'a [Token]) -> Ctx<'a> {
        Ctx {
            src,
            all,
            depth: Cell::new(0),
        }
    }

    /// The source text of `token`.
    #[inline]
    pub(crate) fn text(&self, token: Token) -> &'a str {
        &self.src[token.start..token.end]
    }

    /// The error for `token` being unexpected.
    pub(crate) fn error_at(&self, token: Token) -> ParseError {
        match token.kind {
            TokenKind::Eof => ParseError::end_of_input(self.src.len()),
            TokenKind::Error(e) => {
                let text = self.text(token);
                let message = if !e.quotes_token() {
                    e.message().to_string()
                } else if token.start >= self.src.len() {
                    format!("{} at end of input", e.message())
                } else {
                    format!("{} at or near \"{}\"", e.message(), text)
                };
                let kind = if e == LexError::UnsafeUnicodeString {
                    ParseErrorKind::FeatureNotSupported
                } else {
                    ParseErrorKind::Syntax
                };
                let at_end = token.start >= self.src.len();
                ParseError::other(message, token.start, (!at_end).then_some(text))
                    .with_kind(kind)
                    .with_hint(e.hint())
                    .with_detail(e.detail())
            }
            _ => ParseError::near(self.text(token), token.start),
        }
    }

    /// An error with a message of its own at `token`.
    pub(crate) fn error_msg(&self, token: Token, message: String) -> ParseError {
        ParseError::other(message, token.start, Some(self.text(token)))
    }

    /// The final form of a rule's error.
    pub(crate) fn report(&self, e: PError) -> ParseError {
        match e {
            PError::At(t) => self.error_at(t),
            PError::Full(e) => *e,
        }
    }
}

/// nom's input: the unread tokens of a statement. Never empty: the last
/// token is `Eof`, which no parser consumes.
#[derive(Clone, Copy)]
pub(crate) struct Tokens<'a> {
    /// The unread tokens.
    pub(crate) toks: &'a [Token],
    /// The statement's shared state.
    pub(crate) ctx: &'a Ctx<'a>,
}

impl<'a> Tokens<'a> {
    /// The tokens of `ctx` from the `pos`th on.
    pub(crate) fn at(ctx: &'a Ctx<'a>, pos: usize) -> Tokens<'a> {
        Tokens {
            toks: &ctx.all[pos..],
            ctx,
        }
    }

    /// The next token (`Eof` at the end).
    #[inline]
    pub(crate) fn first(&self) -> Token {
        self.toks[0]
    }

    /// The kind of the token `n` places ahead (`Eof` past the end).
    #[inline]
    pub(crate) fn kind(&self, n: usize) -> TokenKind {
        self.toks.get(n).map_or(TokenKind::Eof, |t| t.kind)
    }

    /// The keyword of the next token, if it is an unquoted word.
    #[inline]
    pub(crate) fn keyword(&self) -> Option<Keyword> {
        match self.toks[0].kind {
            TokenKind::Word(kw) => Some(kw),
            _ => None,
        }
    }

    /// Whether the token `n` places ahead is the keyword `kw`.
    #[inline]
    pub(crate) fn is_kw(&self, n: usize, kw: Keyword) -> bool {
        self.kind(n) == TokenKind::Word(kw)
    }

    /// The input after the next `n` tokens.
    #[inline]
    pub(crate) fn skip(self, n: usize) -> Tokens<'a> {
        Tokens {
            toks: &self.toks[n..],
            ctx: self.ctx,
        }
    }

    /// The index of the next token in the statement.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.ctx.all.len() - self.toks.len()
    }

    /// The token just before the next one (the first token at the start).
    pub(crate) fn prev(&self) -> Token {
        self.ctx.all[self.index().saturating_sub(1)]
    }

    /// The source text of `token`.
    #[inline]
    pub(crate) fn text(&self, token: Token) -> &'a str {
        self.ctx.text(token)
    }

    /// A recoverable failure at the next token.
    #[inline]
    pub(crate) fn fail<T>(&self) -> PResult<'a, T> {
        Err(nom::Err::Error(PError::At(self.toks[0])))
    }

    /// A fatal failure with a message of its own.
    pub(crate) fn fatal<T>(&self, e: ParseError) -> PResult<'a, T> {
        Err(nom::Err::Failure(PError::Full(Box::new(e))))
    }
}

impl InputLength for Tokens<'_> {
    #[inline]
    fn input_len(&self) -> usize {
        self.toks.len()
    }
}

/// nom's error: where a rule failed.
#[derive(Debug)]
pub(crate) enum PError {
    /// Syntax error at this token.
    At(Token),
    /// A complete error with a message of its own.
    Full(Box<ParseError>),
}

impl<'a> nom::error::ParseError<Tokens<'a>> for PError {
    fn from_error_kind(input: Tokens<'a>, _kind: ErrorKind) -> Self {
        PError::At(input.first())
    }

    fn append(_input: Tokens<'a>, _kind: ErrorKind, other: Self) -> Self {
        other
    }

    /// Keeps the failure at the furthest token.
    fn or(self, other: Self) -> Self {
        match (&self, &other) {
            (PError::At(a), PError::At(b)) if a.start > b.start => self,
            (PError::Full(_), _) => self,
            _ => other,
        }
    }
}

/// The result of a rule.
pub(crate) type PResult<'a, T> = IResult<Tokens<'a>, T, PError>;

// ------------------------------------------------------- token parsers --

/// The parser of one token of a given kind (see [`tok`] and [`kw`]): a
/// plain struct rather than a closure, so it always inlines.
#[derive(Clone, Copy)]
pub(crate) struct Tok(TokenKind);

impl<'a> nom::Parser<Tokens<'a>, Token, PError> for Tok {
    #[inline(always)]
    fn parse(&mut self, i: Tokens<'a>) -> PResult<'a, Token> {
        let t = i.first();
        if t.kind == self.0 {
            Ok((i.skip(1), t))
        } else {
            Err(nom::Err::Error(PError::At(t)))
        }
    }
}

/// Any token of `kind` (punctuation, operators, literals).
#[inline(always)]
pub(crate) fn tok(kind: TokenKind) -> Tok {
    Tok(kind)
}

/// The keyword `kw`.
#[inline(always)]
pub(crate) fn kw(kw: Keyword) -> Tok {
    Tok(TokenKind::Word(kw))
}

/// One of the keywords `kws`, as its keyword.
#[inline]
pub(crate) fn kw_of<'a>(kws: &'static [Keyword]) -> impl Fn(Tokens<'a>) -> PResult<'a, Keyword> {
    move |i: Tokens<'a>| match i.keyword() {
        Some(k) if kws.contains(&k) => Ok((i.skip(1), k)),
        _ => i.fail(),
    }
}

/// An unquoted word equal to `word` ignoring case (option names that are
/// not keywords).
pub(crate) fn word<'a>(word: &'static str) -> impl Fn(Tokens<'a>) -> PResult<'a, Token> {
    move |i: Tokens<'a>| {
        let t = i.first();
        if matches!(t.kind, TokenKind::Word(_)) && i.text(t).eq_ignore_ascii_case(word) {
            Ok((i.skip(1), t))
        } else {
            i.fail()
        }
    }
}

/// `f {',' f}`, collected into a vector of `capacity` (nom's
/// `separated_list1` with the vector sized by the caller, for the rows of
/// `VALUES`, whose length is known ahead). Every item after a comma is under
/// `cut`.
#[inline]
pub(crate) fn comma_list1_sized<'a, T>(
    capacity: usize,
    mut f: impl FnMut(Tokens<'a>) -> PResult<'a, T>,
) -> impl FnMut(Tokens<'a>) -> PResult<'a, Vec<T>> {
    move |i: Tokens<'a>| {
        let (mut i, first) = f(i)?;
        let mut items = Vec::with_capacity(capacity);
        items.push(first);
        while i.first().kind == TokenKind::Comma {
            let (rest, item) = cut(&mut f)(i.skip(1))?;
            items.push(item);
            i = rest;
        }
        Ok((i, items))
    }
}

/// `{f}`: nom's `many0` without its up-front allocation (built on
/// `fold_many0`), since most such lists (column constraints, `CASE`
/// branches after the first, legacy COPY options) are short or empty.
#[inline]
pub(crate) fn many0<'a, T>(
    f: impl FnMut(Tokens<'a>) -> PResult<'a, T>,
) -> impl FnMut(Tokens<'a>) -> PResult<'a, Vec<T>> {
    fold_many0(f, Vec::new, |mut items, item| {
        items.push(item);
        items
    })
}

/// Runs `f` one nesting level deeper, failing with PostgreSQL's `stack
/// depth limit exceeded` past [`MAX_DEPTH`].
#[inline]
pub(crate) fn nested<'a, T>(
    mut f: impl FnMut(Tokens<'a>) -> PResult<'a, T>,
) -> impl FnMut(Tokens<'a>) -> PResult<'a, T> {
    move |i: Tokens<'a>| {
        enter(i)?;
        let r = f(i);
        i.ctx.depth.set(i.ctx.depth.get() - 1);
        r
    }
}

/// Enters one nesting level (the caller leaves it by restoring the depth).
#[inline(always)]
pub(crate) fn enter(i: Tokens<'_>) -> Result<(), nom::Err<PError>> {
    let depth = i.ctx.depth.get() + 1;
    if depth > MAX_DEPTH {
        return Err(too_deep(i));
    }
    i.ctx.depth.set(depth);
    Ok(())
}

/// PostgreSQL's `stack depth limit exceeded`, at the next token.
#[cold]
#[inline(never)]
fn too_deep(i: Tokens<'_>) -> nom::Err<PError> {
    let t = i.first();
    nom::Err::Failure(PError::Full(Box::new(ParseError {
        message: "stack depth limit exceeded".to_string(),
        offset: t.start,
        token: (t.kind != TokenKind::Eof).then(|| i.text(t).to_string()),
        kind: ParseErrorKind::TooDeep,
        hint: None,
        detail: None,
    })))
}

// --------------------------------------------------------------- names --

/// The value of an identifier token: unquoted words folded to lower case,
/// quoted identifiers with `""` undoubled.
pub(crate) fn ident_value(i: Tokens<'_>, token: Token) -> Ident {
    let text = i.text(token);
    match token.kind {
        TokenKind::QuotedIdent(IdentQuote::Plain) => text[1..text.len() - 1].to_string(),
        TokenKind::QuotedIdent(IdentQuote::Doubled) => crate::strlit::undouble_ident(&text[1..]),
        TokenKind::QuotedIdent(IdentQuote::Unicode(escape)) => {
            // The lexer has checked the escapes.
            let body = crate::strlit::undouble_ident(&text[3..]);
            crate::strlit::udeescape(&body, escape).unwrap_or(body)
        }
        _ => text.to_ascii_lowercase(),
    }
}

/// Whether `kind` can be a column, table or alias name (`ColId`).
#[inline]
pub(crate) fn is_col_id(kind: TokenKind) -> bool {
    match kind {
        TokenKind::Word(kw) => kw.is_col_name(),
        TokenKind::QuotedIdent(_) => true,
        _ => false,
    }
}

/// Whether `kind` may be an alias written without `AS`: any name that is
/// not a reserved or type/function keyword, and not one of `excluded`.
pub(crate) fn is_bare_alias(kind: TokenKind, excluded: &[Keyword]) -> bool {
    match kind {
        TokenKind::Word(kw) => {
            matches!(kw.class(), KeywordClass::Unreserved | KeywordClass::ColName)
                && !excluded.contains(&kw)
        }
        TokenKind::QuotedIdent(_) => true,
        _ => false,
    }
}

/// `ColId ::= identifier | unreserved_keyword | col_name_keyword`
pub(crate) fn col_id(i: Tokens<'_>) -> PResult<'_, Ident> {
    let t = i.first();
    if is_col_id(t.kind) {
        Ok((i.skip(1), ident_value(i, t)))
    } else {
        i.fail()
    }
}

/// `ColLabel ::= identifier | keyword`
pub(crate) fn col_label(i: Tokens<'_>) -> PResult<'_, Ident> {
    let t = i.first();
    match t.kind {
        TokenKind::Word(_) | TokenKind::QuotedIdent(_) => Ok((i.skip(1), ident_value(i, t))),
        _ => i.fail(),
    }
}
